/* policy_loss.c - PPO loss, aggregation, actor loss; see policy_loss.h for the sources. */
#include "learner/policy_loss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const s_agg_names[] = {
    [PV_AGG_TOKEN_MEAN] = "token-mean",
    [PV_AGG_SEQ_MEAN_TOKEN_SUM] = "seq-mean-token-sum",
    [PV_AGG_SEQ_MEAN_TOKEN_MEAN] = "seq-mean-token-mean",
    [PV_AGG_SEQ_MEAN_TOKEN_SUM_NORM] = "seq-mean-token-sum-norm",
};
#define S_N_AGG (sizeof s_agg_names / sizeof s_agg_names[0])

pv_err_t pv_loss_agg_parse(const char *name, pv_loss_agg_t *out, pv_errmsg_t *em)
{
    for (size_t i = 0; name && i < S_N_AGG; i++)
        if (strcmp(name, s_agg_names[i]) == 0) {
            *out = (pv_loss_agg_t)i;
            return PV_OK;
        }
    return pv_errf(em, PV_ERR_INVAL,
                   "unknown loss_agg_mode '%s' (known: token-mean, seq-mean-token-sum, "
                   "seq-mean-token-mean, seq-mean-token-sum-norm)",
                   name ? name : "(null)");
}

const char *pv_loss_agg_name(pv_loss_agg_t mode)
{
    return (unsigned)mode < S_N_AGG ? s_agg_names[mode] : "unknown";
}

pv_pg_opts_t pv_pg_opts_default(void)
{
    pv_pg_opts_t o = {.clip_ratio = 0.2,
                      .clip_ratio_low = 0.2,
                      .clip_ratio_high = 0.2,
                      .clip_ratio_c = 3.0,
                      .agg = {.mode = PV_AGG_TOKEN_MEAN, .dp_size = 1}};
    return o;
}

#define PV_TMPL "learner/pl_tmpl.h"
#include "learner/instantiate.h"

/* One token through the loss's own rule: d(token loss)/d(log_prob), and whether clipped. */
static double s_token_f64(const pv_pg_opts_t *opts, double old_log_prob, double log_prob,
                          double advantage, int *clipped)
{
    double lo = opts->clip_ratio_low >= 0 ? opts->clip_ratio_low : opts->clip_ratio;
    double hi = opts->clip_ratio_high >= 0 ? opts->clip_ratio_high : opts->clip_ratio;
    double dloss, neg_kl;
    int clipped_lower;
    s_pg_token_f64(old_log_prob, log_prob, advantage, lo, hi, opts->clip_ratio_c, &dloss, clipped,
                   &clipped_lower, &neg_kl);
    return dloss;
}

bool pv_pg_token_clipped_f64(const pv_pg_opts_t *opts, double old_log_prob, double log_prob,
                             double advantage)
{
    int clipped;
    s_token_f64(opts, old_log_prob, log_prob, advantage, &clipped);
    return clipped != 0;
}

double pv_pg_token_dloss_f64(const pv_pg_opts_t *opts, double old_log_prob, double log_prob,
                             double advantage)
{
    int clipped;
    return s_token_f64(opts, old_log_prob, log_prob, advantage, &clipped);
}

pv_err_t pv_actor_loss_f64(const pv_actor_loss_opts_t *opts, size_t rows, size_t L,
                           const double *old_log_prob, const double *log_prob,
                           const double *advantages, const double *response_mask,
                           const double *entropy, const double *ref_log_prob,
                           pv_actor_loss_out_t *out, double *grad_log_prob, double *grad_entropy,
                           pv_errmsg_t *em)
{
    if (opts->entropy_coeff != 0 && !entropy)
        return pv_errf(em, PV_ERR_INVAL, "actor loss: entropy_coeff set but no entropy given");
    if (opts->use_kl && !ref_log_prob)
        return pv_errf(em, PV_ERR_INVAL, "actor loss: use_kl set but no reference log-probs");
    memset(out, 0, sizeof *out);
    pv_err_t rc = pv_policy_loss_f64(&opts->pg, rows, L, old_log_prob, log_prob, advantages,
                                     response_mask, &out->pg_loss, &out->pg, grad_log_prob, em);
    if (rc != PV_OK)
        return rc;
    out->loss = out->pg_loss;
    size_t n = rows * L;
    double *w = NULL;
    if (entropy || opts->use_kl) {
        w = malloc(3 * n * sizeof *w);
        if (!w)
            return pv_errf(em, PV_ERR_NOMEM, "actor loss: no memory for %zu tokens", n);
    }
    if (grad_entropy)
        memset(grad_entropy, 0, n * sizeof *grad_entropy);
    if (entropy) /* reported whenever given, as verl logs actor/entropy without the bonus */
        out->entropy = pv_agg_loss_f64(&opts->pg.agg, rows, L, entropy, response_mask, w);
    if (opts->entropy_coeff != 0) {
        out->loss -= opts->entropy_coeff * out->entropy;
        if (grad_entropy)
            for (size_t k = 0; k < n; k++)
                grad_entropy[k] = -opts->entropy_coeff * w[k];
    }
    if (opts->use_kl) {
        double *kl = w + n, *dkl = w + 2 * n;
        pv_kl_f64(opts->kl, n, log_prob, ref_log_prob, kl, dkl);
        out->kl = pv_agg_loss_f64(&opts->pg.agg, rows, L, kl, response_mask, w);
        out->loss += opts->kl_coef * out->kl;
        if (grad_log_prob)
            for (size_t k = 0; k < n; k++)
                grad_log_prob[k] += opts->kl_coef * w[k] * dkl[k];
    }
    free(w);
    return PV_OK;
}
