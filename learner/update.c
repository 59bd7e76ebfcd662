/* update.c - trainer state and the PPO actor update; see update.h. */
#include "learner/update.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"

pv_err_t pv_trainer_init(pv_trainer_t *t, pv_policy_t *policy, const pv_policy_t *ref,
                         pv_adam_t *adam, pv_errmsg_t *em)
{
    memset(t, 0, sizeof *t);
    if (!policy || !adam || pv_adam_n(adam) != pv_policy_n_params(policy) ||
        (ref && pv_policy_n_params(ref) != pv_policy_n_params(policy)))
        return pv_errf(em, PV_ERR_INVAL, "trainer: policy, reference and optimiser disagree");
    t->policy = policy;
    t->ref = ref;
    t->adam = adam;
    t->grad = calloc(pv_policy_n_params(policy), sizeof *t->grad);
    t->logp = calloc(pv_policy_spec(policy)->max_cands, sizeof *t->logp);
    if (!t->grad || !t->logp || pv_policy_work_new(policy, &t->work) != PV_OK) {
        pv_trainer_fini(t);
        return pv_errf(em, PV_ERR_NOMEM, "trainer: no memory");
    }
    return PV_OK;
}

void pv_trainer_fini(pv_trainer_t *t)
{
    pv_policy_work_destroy(&t->work);
    free(t->grad);
    free(t->logp);
    free(t->items);
    free(t->tok);
    memset(t, 0, sizeof *t);
}

pv_err_t pv_trainer_freeze_reference(pv_trainer_t *t, pv_policy_t **out, pv_errmsg_t *em)
{
    pv_policy_spec_t ps = *pv_policy_spec(t->policy);
    pv_err_t err = pv_policy_new(&ps, out, em);
    if (err != PV_OK)
        return err;
    memcpy(pv_policy_params(*out), pv_policy_params_const(t->policy),
           pv_policy_n_params(t->policy) * sizeof(float));
    pv_policy_set_version(*out, pv_policy_version(t->policy));
    t->ref = *out;
    return PV_OK;
}

static pv_policy_ctx_t s_ctx(const pv_traj_t *tr, size_t s)
{
    return (pv_policy_ctx_t){.task_text = tr->task_text,
                             .history = tr->texts,
                             .n_history = 2 * (tr->first_step + s) + 1};
}

/* The error of a pass over rows [r0, r1), with the policy's detail. */
static pv_err_t s_wrap(pv_errmsg_t *em, pv_err_t rc, const char *pass, size_t r0, size_t r1)
{
    char detail[PV_ERRMSG_MAX];
    snprintf(detail, sizeof detail, "%s", em->text[0] ? em->text : pv_strerror(rc));
    return pv_errf(em, rc, "update: %s of rows [%zu, %zu): %s", pass, r0, r1, detail);
}

/* The items of rows [r0, r1) (every step, in row order) into t->items, and room for their
 * tokens; *n_items and *n_tok receive the counts. */
static pv_err_t s_items(pv_trainer_t *t, const pv_traj_t *trajs, size_t r0, size_t r1,
                        size_t *n_items, size_t *n_tok, pv_errmsg_t *em)
{
    size_t ni = 0, nt = 0;
    for (size_t i = r0; i < r1; i++)
        for (size_t s = 0; s < trajs[i].n_steps; s++, ni++)
            nt += pv_step_n_tokens(&trajs[i].steps[s]);
    if (pv_grow((void **)&t->items, &t->cap_items, ni ? ni : 1, sizeof *t->items) != PV_OK)
        return pv_errf(em, PV_ERR_NOMEM, "update: no memory for %zu steps", ni);
    if (nt > t->cap_tok) {
        float *b = realloc(t->tok, 4 * nt * sizeof *b);
        if (!b)
            return pv_errf(em, PV_ERR_NOMEM, "update: no memory for %zu tokens", nt);
        t->tok = b;
        t->cap_tok = nt;
    }
    ni = 0;
    for (size_t i = r0; i < r1; i++)
        for (size_t s = 0; s < trajs[i].n_steps; s++) {
            const pv_step_rec_t *st = &trajs[i].steps[s];
            t->items[ni++] = (pv_policy_item_t){.ctx = s_ctx(&trajs[i], s),
                                                .cands = st->cands,
                                                .n_cands = st->n_cands,
                                                .tokens = pv_step_tokens(st),
                                                .n_tokens = pv_step_n_tokens(st)};
        }
    *n_items = ni;
    *n_tok = nt;
    return PV_OK;
}

/* The token log-probs, entropies and reference log-probs of rows [r0, r1) (t->tok, in item
 * order) into (rows, L) matrices (row-major over the whole batch); the mismatch of the tokens
 * acted with the current version goes into t->mm_*. */
static void s_take_rows(pv_trainer_t *t, const pv_traj_t *trajs, const pv_batch_t *b, size_t r0,
                        size_t r1, double *lp, double *ent, double *ref_lp)
{
    size_t L = b->L;
    const float *l = t->tok, *e = l + t->cap_tok, *rl = e + t->cap_tok;
    uint64_t version = pv_policy_version(t->policy);
    size_t at = 0;
    for (size_t i = r0; i < r1; i++)
        for (size_t s = 0, c = 0; s < trajs[i].n_steps; s++) {
            const pv_step_rec_t *st = &trajs[i].steps[s];
            const float *blp = pv_step_logprobs(st);
            for (size_t k = 0; k < pv_step_n_tokens(st); k++, c++, at++) {
                lp[i * L + c] = l[at];
                ent[i * L + c] = e[at];
                if (ref_lp)
                    ref_lp[i * L + c] = rl[at];
                if (st->policy_version == version) {
                    double d = fabs((double)l[at] - (double)blp[k]);
                    t->mm_sum += d;
                    t->mm_max = d > t->mm_max ? d : t->mm_max;
                    t->mm_n++;
                }
            }
        }
}

/* Forward every step of rows [r0, r1) (the reference policy's only, for KL, when ref_only)
 * into t->tok, then s_take_rows. */
static pv_err_t s_forward_rows(pv_trainer_t *t, const pv_traj_t *trajs, const pv_batch_t *b,
                               size_t r0, size_t r1, double *lp, double *ent, double *ref_lp,
                               pv_errmsg_t *em)
{
    size_t ni, nt;
    pv_err_t rc = s_items(t, trajs, r0, r1, &ni, &nt, em);
    float *l = t->tok, *e = l + t->cap_tok, *rl = e + t->cap_tok;
    if (rc == PV_OK)
        rc = pv_policy_forward_items(t->policy, t->items, ni, t->work, l, e, em);
    if (rc == PV_OK && ref_lp)
        rc = pv_policy_forward_items(t->ref, t->items, ni, t->work, rl, NULL, em);
    if (rc != PV_OK)
        return s_wrap(em, rc, "forward", r0, r1);
    s_take_rows(t, trajs, b, r0, r1, lp, ent, ref_lp);
    return PV_OK;
}

/* Forward + backward every step of rows [r0, r1) with the given per-token gradients. */
static pv_err_t s_backward_rows(pv_trainer_t *t, const pv_traj_t *trajs, const pv_batch_t *b,
                                size_t r0, size_t r1, const double *dlp, const double *dent,
                                pv_errmsg_t *em)
{
    size_t ni, nt, L = b->L;
    pv_err_t rc = s_items(t, trajs, r0, r1, &ni, &nt, em);
    if (rc != PV_OK)
        return rc;
    float *g = t->tok + 3 * t->cap_tok, *ge = t->tok + 2 * t->cap_tok;
    size_t at = 0;
    for (size_t i = r0; i < r1; i++)
        for (size_t c = 0; c < pv_batch_col(b, i, trajs[i].n_steps); c++, at++) {
            g[at] = (float)dlp[i * L + c];
            ge[at] = (float)dent[i * L + c];
        }
    rc = pv_policy_backward_items(t->policy, t->items, ni, t->work, g, ge, t->grad, NULL, em);
    if (rc != PV_OK)
        return s_wrap(em, rc, "backward", r0, r1);
    return PV_OK;
}

/* Adam step on t->grad (then zeroed); bumps the policy version. */
static void s_apply(pv_trainer_t *t, pv_update_stats_t *stats)
{
    double norm = 0;
    if (pv_adam_step(t->adam, pv_policy_params(t->policy), t->grad, &norm) == PV_OK) {
        stats->n_updates++;
        pv_policy_set_version(t->policy, pv_policy_version(t->policy) + 1);
    } else {
        stats->n_skipped++;
    }
    stats->grad_norm = norm;
    memset(t->grad, 0, pv_policy_n_params(t->policy) * sizeof *t->grad);
}

unsigned pv_lag_bucket(uint64_t lag)
{
    return lag < 4 ? (unsigned)lag : lag < 8 ? 4u : lag < 16 ? 5u : 6u;
}

const char *pv_lag_bucket_name(unsigned bucket)
{
    static const char *const names[PV_LAG_BUCKETS] = {"0", "1", "2", "3", "4-7", "8-15", "16+"};
    return bucket < PV_LAG_BUCKETS ? names[bucket] : "?";
}

void pv_lag_hist_add(pv_lag_hist_t *a, const pv_lag_hist_t *b)
{
    for (unsigned k = 0; k < PV_LAG_BUCKETS; k++) {
        a->tokens[k] += b->tokens[k];
        a->clipped[k] += b->clipped[k];
    }
}

/* The trained tokens of rows [r0, r1) into t->lag: lag against the current version, clipped
 * by the loss's own rule (lp: this mini-batch's log-probs, (rows, L) over the whole batch). */
static void s_count_lag(pv_trainer_t *t, const pv_traj_t *trajs, const pv_batch_t *b, size_t r0,
                        size_t r1, const pv_pg_opts_t *pg, const double *lp)
{
    uint64_t version = pv_policy_version(t->policy);
    for (size_t i = r0; i < r1; i++)
        for (size_t s = 0; s < trajs[i].n_steps; s++) {
            uint64_t v = trajs[i].steps[s].policy_version;
            unsigned k = pv_lag_bucket(version > v ? version - v : 0);
            for (size_t c = pv_batch_col(b, i, s); c < pv_batch_col(b, i, s + 1); c++) {
                size_t cell = i * b->L + c;
                if (b->response_mask[cell] == 0)
                    continue;
                t->lag.tokens[k]++;
                t->lag.clipped[k] += pv_pg_token_clipped_f64(pg, b->old_log_prob[cell], lp[cell],
                                                             b->advantages[cell]);
            }
        }
}

/* The fused pass's per-token gradient (pv_policy_token_grad_fn): the two-pass loss's
 * dlp = w * dloss/dlp (+ kl_coef * w * dkl/dlp) and dent = -entropy_coeff * w, evaluated in
 * the same order, so the floats match bit for bit. */
typedef struct s_fused {
    const pv_actor_loss_opts_t *loss;
    const double *old, *adv, *w, *ref; /* (rows, L) over the whole batch */
    const size_t *cell;                /* token (item order) -> cell */
} s_fused_t;

static void s_token_grad(void *user, size_t o, float lp, float ent, float *dlp, float *dent)
{
    const s_fused_t *f = user;
    size_t k = f->cell[o];
    double l = (double)lp;
    double g = f->w[k] * pv_pg_token_dloss_f64(&f->loss->pg, f->old[k], l, f->adv[k]);
    if (f->loss->use_kl) {
        double kl, dkl;
        pv_kl_f64(f->loss->kl, 1, &l, &f->ref[k], &kl, &dkl);
        g += f->loss->kl_coef * f->w[k] * dkl;
    }
    *dlp = (float)g;
    *dent = f->loss->entropy_coeff != 0 ? (float)(-f->loss->entropy_coeff * f->w[k]) : 0.0f;
    (void)ent;
}

/* Rows [r0, r1) through the fused pass: the reference forward first (KL), the aggregation's
 * weights from the mask, then pv_policy_train_items; lp, ent (and ref) receive the
 * matrices the two-pass form fills. PV_ERR_UNSUPPORTED: the policy has no fused pass. */
static pv_err_t s_fused_rows(pv_trainer_t *t, const pv_traj_t *trajs, const pv_batch_t *b,
                             size_t r0, size_t r1, const pv_actor_loss_opts_t *loss, double *lp,
                             double *ent, double *ref, double *w, pv_errmsg_t *em)
{
    size_t ni, nt, L = b->L, off = r0 * L;
    pv_err_t rc = s_items(t, trajs, r0, r1, &ni, &nt, em);
    if (rc != PV_OK)
        return rc;
    size_t *cell = malloc((nt ? nt : 1) * sizeof *cell);
    if (!cell)
        return pv_errf(em, PV_ERR_NOMEM, "update: no memory for %zu tokens", nt);
    for (size_t i = r0, at = 0; i < r1; i++)
        for (size_t c = 0; c < pv_batch_col(b, i, trajs[i].n_steps); c++)
            cell[at++] = i * L + c;
    float *l = t->tok, *e = l + t->cap_tok, *rl = e + t->cap_tok;
    if (loss->use_kl &&
        (rc = pv_policy_forward_items(t->ref, t->items, ni, t->work, rl, NULL, em)) != PV_OK) {
        free(cell);
        return s_wrap(em, rc, "reference forward", r0, r1);
    }
    if (loss->use_kl) /* the reference log-probs the token gradients read */
        for (size_t at = 0; at < nt; at++)
            ref[cell[at]] = rl[at];
    pv_agg_loss_f64(&loss->pg.agg, r1 - r0, L, b->response_mask + off, b->response_mask + off,
                    w + off);
    s_fused_t f = {.loss = loss,
                   .old = b->old_log_prob,
                   .adv = b->advantages,
                   .w = w,
                   .ref = ref,
                   .cell = cell};
    rc = pv_policy_train_items(t->policy, t->items, ni, t->work, s_token_grad, &f, t->grad, l, e,
                               em);
    free(cell);
    if (rc == PV_ERR_UNSUPPORTED)
        return rc;
    if (rc != PV_OK)
        return s_wrap(em, rc, "training pass", r0, r1);
    s_take_rows(t, trajs, b, r0, r1, lp, ent, loss->use_kl ? ref : NULL);
    return PV_OK;
}

pv_err_t pv_update_loss_grad(pv_trainer_t *t, const pv_traj_t *trajs, const pv_batch_t *b,
                             size_t r0, size_t r1, const pv_actor_loss_opts_t *loss,
                             pv_actor_loss_out_t *out, pv_errmsg_t *em)
{
    size_t L = b->L, cells = b->rows * L, off = r0 * L;
    if (r0 >= r1 || r1 > b->rows)
        return pv_errf(em, PV_ERR_INVAL, "update: rows [%zu, %zu) outside the batch of %zu", r0, r1,
                       b->rows);
    if (loss->use_kl && !t->ref)
        return pv_errf(em, PV_ERR_INVAL, "update: KL requested without a reference policy");
    double *buf = calloc(5 * cells, sizeof *buf);
    if (!buf)
        return pv_errf(em, PV_ERR_NOMEM, "update: no memory for %zu tokens", cells);
    double *lp = buf, *ent = lp + cells, *ref = ent + cells, *dlp = ref + cells,
           *dent = dlp + cells;
    pv_errmsg_t local = {{0}};
    if (!em)
        em = &local;
    pv_err_t rc = t->two_pass ? PV_ERR_UNSUPPORTED
                              : s_fused_rows(t, trajs, b, r0, r1, loss, lp, ent, ref, dlp, em);
    if (rc == PV_OK) { /* the gradient is in; the loss and its metrics from the log-probs */
        rc = pv_actor_loss_f64(loss, r1 - r0, L, b->old_log_prob + off, lp + off,
                               b->advantages + off, b->response_mask + off, ent + off, ref + off,
                               out, NULL, NULL, em);
        if (rc == PV_OK)
            s_count_lag(t, trajs, b, r0, r1, &loss->pg, lp);
        free(buf);
        return rc;
    }
    if (rc != PV_ERR_UNSUPPORTED) {
        free(buf);
        return rc;
    }
    rc = s_forward_rows(t, trajs, b, r0, r1, lp, ent, loss->use_kl ? ref : NULL, em);
    if (rc == PV_OK)
        rc = pv_actor_loss_f64(loss, r1 - r0, L, b->old_log_prob + off, lp + off,
                               b->advantages + off, b->response_mask + off, ent + off, ref + off,
                               out, dlp + off, dent + off, em);
    if (rc == PV_OK) {
        s_count_lag(t, trajs, b, r0, r1, &loss->pg, lp);
        rc = s_backward_rows(t, trajs, b, r0, r1, dlp, dent, em);
    }
    free(buf);
    return rc;
}

pv_err_t pv_update_ppo(pv_trainer_t *t, const pv_traj_t *trajs, const pv_batch_t *b,
                       const pv_update_opts_t *opts, pv_update_stats_t *stats, pv_errmsg_t *em)
{
    memset(stats, 0, sizeof *stats);
    t->mm_sum = t->mm_max = 0.0;
    t->mm_n = 0;
    memset(&t->lag, 0, sizeof t->lag);
    size_t rows = b->rows;
    unsigned epochs = opts->ppo_epochs ? opts->ppo_epochs : 1;
    size_t mbs = opts->mini_batches ? opts->mini_batches : 1;
    mbs = mbs > rows ? rows : mbs;
    pv_err_t rc = PV_OK;
    memset(t->grad, 0, pv_policy_n_params(t->policy) * sizeof *t->grad);
    for (unsigned ep = 0; rc == PV_OK && ep < epochs; ep++)
        for (size_t mb = 0; rc == PV_OK && mb < mbs; mb++) {
            pv_actor_loss_out_t lo;
            rc = pv_update_loss_grad(t, trajs, b, rows * mb / mbs, rows * (mb + 1) / mbs,
                                     &opts->loss, &lo, em);
            if (rc == PV_OK) {
                s_apply(t, stats);
                stats->loss = lo.loss, stats->pg_loss = lo.pg_loss;
                stats->entropy = lo.entropy, stats->kl = lo.kl;
                stats->pg_clipfrac = lo.pg.pg_clipfrac, stats->ppo_kl = lo.pg.ppo_kl;
            }
        }
    stats->mismatch_tokens = t->mm_n;
    stats->mismatch_mean = t->mm_n ? t->mm_sum / (double)t->mm_n : 0.0;
    stats->mismatch_max = t->mm_max;
    stats->lag = t->lag;
    return rc;
}

pv_err_t pv_update_check_finite(const pv_update_stats_t *stats, uint64_t iteration, pv_errmsg_t *em)
{
    if (stats->n_skipped == 0 && isfinite(stats->loss) && isfinite(stats->pg_loss) &&
        isfinite(stats->grad_norm))
        return PV_OK;
    return pv_errf(em, PV_ERR_RANGE,
                   "the update of iteration %" PRIu64 " is not finite (loss %g, gradient norm %g, "
                   "%zu of %zu Adam steps skipped): the policy has diverged or the batch holds "
                   "non-finite numbers; stopping (lower learner.lr, or resume from an earlier "
                   "checkpoint)",
                   iteration, stats->loss, stats->grad_norm, stats->n_skipped,
                   stats->n_skipped + stats->n_updates);
}
