/* pl_tmpl.h - loss aggregation and PPO loss per floating type, included by policy_loss.c
 * (T, PV_SFX defined). */

T PV_SFX(pv_agg_loss)(const pv_agg_opts_t *opts, size_t rows, size_t L, const T *loss_mat,
                      const T *mask, T *weight_out)
{
    T dp = (T)(opts->dp_size > 0 ? opts->dp_size : 1);
    T loss = 0, denom = 0;
    switch (opts->mode) {
    case PV_AGG_TOKEN_MEAN: {
        T sum = 0, n = 0;
        for (size_t k = 0; k < rows * L; k++) {
            sum += loss_mat[k] * mask[k];
            n += mask[k];
        }
        denom = opts->batch_num_tokens > 0 ? (T)opts->batch_num_tokens : n;
        loss = denom > 0 ? sum / denom * dp : 0;
        if (weight_out)
            for (size_t k = 0; k < rows * L; k++)
                weight_out[k] = denom > 0 ? mask[k] / denom * dp : 0;
        return loss;
    }
    case PV_AGG_SEQ_MEAN_TOKEN_SUM:
    case PV_AGG_SEQ_MEAN_TOKEN_MEAN: {
        bool tmean = opts->mode == PV_AGG_SEQ_MEAN_TOKEN_MEAN;
        T sum = 0, nseq = 0;
        for (size_t i = 0; i < rows; i++) {
            T s = 0, n = 0;
            for (size_t t = 0; t < L; t++) {
                s += loss_mat[i * L + t] * mask[i * L + t];
                n += mask[i * L + t];
            }
            if (n > 0) {
                sum += tmean ? s / (n + (T)1e-8) : s;
                nseq += 1;
            }
        }
        denom = opts->global_batch_size > 0 ? (T)opts->global_batch_size : nseq;
        loss = denom > 0 ? sum / denom * dp : 0;
        if (weight_out)
            for (size_t i = 0; i < rows; i++) {
                T n = 0;
                for (size_t t = 0; t < L; t++)
                    n += mask[i * L + t];
                T w = denom > 0 && n > 0 ? dp / denom / (tmean ? n + (T)1e-8 : (T)1) : 0;
                for (size_t t = 0; t < L; t++)
                    weight_out[i * L + t] = mask[i * L + t] * w;
            }
        return loss;
    }
    default: { /* PV_AGG_SEQ_MEAN_TOKEN_SUM_NORM */
        T sum = 0;
        for (size_t k = 0; k < rows * L; k++)
            sum += loss_mat[k] * mask[k];
        denom = opts->loss_scale_factor > 0 ? (T)opts->loss_scale_factor : (T)L;
        if (weight_out)
            for (size_t k = 0; k < rows * L; k++)
                weight_out[k] = mask[k] / denom;
        return sum / denom;
    }
    }
}

/* Per-token PPO loss and its derivative with respect to log_prob (see policy_loss.h). */
static T PV_SFX(s_pg_token)(T old_lp, T lp, T A, T lo, T hi, T c, T *dloss, int *clipped,
                            int *clipped_lower, T *neg_kl_out)
{
    T nk = lp - old_lp, dnk = 1;
    if (nk < (T)-20 || nk > (T)20) {
        nk = nk < 0 ? (T)-20 : (T)20;
        dnk = 0;
    }
    T ratio = (T)exp((double)nk);
    T dratio = ratio * dnk;
    T cr = ratio, dcr = dratio;
    if (ratio < (T)1 - lo || ratio > (T)1 + hi) {
        cr = ratio < (T)1 - lo ? (T)1 - lo : (T)1 + hi;
        dcr = 0;
    }
    T l1 = -A * ratio, dl1 = -A * dratio;
    T l2 = -A * cr, dl2 = -A * dcr;
    T c1 = l1 > l2 ? l1 : l2;
    T dc1 = l1 > l2 ? dl1 : l1 < l2 ? dl2 : (dl1 + dl2) / 2;
    T l3 = -A * c;
    *clipped = l2 > l1;
    *clipped_lower = (c1 > l3) && A < 0;
    *neg_kl_out = nk;
    if (A < 0) {
        T c2 = l3 < c1 ? l3 : c1;
        *dloss = l3 < c1 ? 0 : l3 > c1 ? dc1 : dc1 / 2;
        return c2;
    }
    *dloss = dc1;
    return c1;
}

pv_err_t PV_SFX(pv_policy_loss)(const pv_pg_opts_t *opts, size_t rows, size_t L, const T *old_lp,
                                const T *lp, const T *adv, const T *mask, T *pg_loss,
                                pv_pg_metrics_t *metrics, T *grad_lp, pv_errmsg_t *em)
{
    if (!rows || !L || !old_lp || !lp || !adv || !mask || !pg_loss)
        return pv_errf(em, PV_ERR_INVAL, "policy loss: empty batch or NULL array");
    if (!(opts->clip_ratio_c > 1.0))
        return pv_errf(em, PV_ERR_INVAL, "policy loss: clip_ratio_c must be > 1, got %g",
                       opts->clip_ratio_c);
    T lo = (T)(opts->clip_ratio_low >= 0 ? opts->clip_ratio_low : opts->clip_ratio);
    T hi = (T)(opts->clip_ratio_high >= 0 ? opts->clip_ratio_high : opts->clip_ratio);
    size_t n = rows * L;
    T *tok = malloc(2 * n * sizeof(T));
    if (!tok)
        return pv_errf(em, PV_ERR_NOMEM, "policy loss: no memory for %zu tokens", n);
    T *dtok = tok + n;
    T msum = 0, cf = 0, cfl = 0, kl = 0;
    for (size_t k = 0; k < n; k++) {
        int clipped, clipped_lower;
        T nk;
        tok[k] = PV_SFX(s_pg_token)(old_lp[k], lp[k], adv[k], lo, hi, (T)opts->clip_ratio_c,
                                    &dtok[k], &clipped, &clipped_lower, &nk);
        msum += mask[k];
        cf += (T)clipped * mask[k];
        cfl += (T)clipped_lower * mask[k];
        kl += -nk * mask[k];
    }
    if (metrics) {
        metrics->pg_clipfrac = (double)(cf / (msum + (T)1e-8));
        metrics->ppo_kl = (double)(kl / (msum + (T)1e-8));
        metrics->pg_clipfrac_lower = (double)(cfl / (msum + (T)1e-8));
    }
    *pg_loss = PV_SFX(pv_agg_loss)(&opts->agg, rows, L, tok, mask, grad_lp);
    if (grad_lp)
        for (size_t k = 0; k < n; k++)
            grad_lp[k] *= dtok[k];
    free(tok);
    return PV_OK;
}
