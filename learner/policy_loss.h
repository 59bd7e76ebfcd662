/* policy_loss.h - PPO clipped policy loss, loss aggregation and the full actor loss, in
 * verl's tensor convention (rows, L) with a response mask (see advantage.h).
 *
 * Sources: volcengine/verl verl/trainer/ppo/core_algos.py compute_policy_loss_vanilla and
 * agg_loss (with its global-batch arguments), the actor update in
 * verl/workers/actor/dp_actor.py (policy_loss = pg_loss - entropy_coeff * agg(entropy) +
 * kl_loss_coef * agg(kl)). PPO: Schulman et al. 2017 (arXiv:1707.06347); dual clip: Ye et al.
 * 2020 (arXiv:1912.09729); decoupled clip_ratio_low/high: DAPO (arXiv:2503.14476).
 *
 * Every function returns the loss and, when asked, its gradient with respect to each
 * (row, token) input so the policy can back-propagate: the learner never needs autograd.
 * Gradients follow torch's conventions (clamp passes inside [lo, hi] inclusive; max/min
 * split the gradient in half on exact ties).
 */
#ifndef PV_LEARNER_POLICY_LOSS_H
#define PV_LEARNER_POLICY_LOSS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "learner/kl.h"

typedef enum pv_loss_agg {
    PV_AGG_TOKEN_MEAN = 0,          /* "token-mean" */
    PV_AGG_SEQ_MEAN_TOKEN_SUM,      /* "seq-mean-token-sum" */
    PV_AGG_SEQ_MEAN_TOKEN_MEAN,     /* "seq-mean-token-mean" */
    PV_AGG_SEQ_MEAN_TOKEN_SUM_NORM, /* "seq-mean-token-sum-norm" */
} pv_loss_agg_t;

/* How to aggregate a (rows, L) loss matrix into a scalar (verl agg_loss):
 *   token-mean               sum(loss * mask) / batch_num_tokens * dp_size
 *   seq-mean-token-sum       sum over non-empty rows of sum_t(loss * mask)
 *                            / global_batch_size * dp_size
 *   seq-mean-token-mean      sum over non-empty rows of sum_t(loss * mask) / (n_row + 1e-8)
 *                            / global_batch_size * dp_size
 *   seq-mean-token-sum-norm  sum over rows of sum_t(loss * mask) / loss_scale_factor
 * batch_num_tokens <= 0 means this batch's mask sum, global_batch_size <= 0 the number of
 * rows with at least one token, loss_scale_factor <= 0 means L, dp_size 0 means 1. An empty
 * batch (no token) aggregates to 0 (verl would give NaN). */
typedef struct pv_agg_opts {
    pv_loss_agg_t mode;
    int dp_size;
    double batch_num_tokens;
    double global_batch_size;
    double loss_scale_factor;
} pv_agg_opts_t;

/* Parse "token-mean" | "seq-mean-token-sum" | "seq-mean-token-mean" |
 * "seq-mean-token-sum-norm". Errors: PV_ERR_INVAL. */
pv_err_t pv_loss_agg_parse(const char *name, pv_loss_agg_t *out, pv_errmsg_t *em);
const char *pv_loss_agg_name(pv_loss_agg_t mode);

/* Aggregate loss_mat (rows, L) under mask (rows, L). `weight_out` (rows, L), when not NULL,
 * receives d(result)/d(loss_mat). */
double pv_agg_loss_f64(const pv_agg_opts_t *opts, size_t rows, size_t L, const double *loss_mat,
                       const double *mask, double *weight_out);
float pv_agg_loss_f32(const pv_agg_opts_t *opts, size_t rows, size_t L, const float *loss_mat,
                      const float *mask, float *weight_out);

/* PPO clip options (verl actor config). clip_ratio_low / high < 0 mean "use clip_ratio"
 * (verl's None). clip_ratio_c is the dual-clip bound, must be > 1 (verl default 3). */
typedef struct pv_pg_opts {
    double clip_ratio;      /* 0.2 */
    double clip_ratio_low;  /* < 0: clip_ratio */
    double clip_ratio_high; /* < 0: clip_ratio */
    double clip_ratio_c;    /* 3.0 */
    pv_agg_opts_t agg;
} pv_pg_opts_t;

/* verl's defaults: clip 0.2 both sides, c = 3, token-mean. */
pv_pg_opts_t pv_pg_opts_default(void);

/* Metrics of compute_policy_loss_vanilla, each a masked mean with verl's +1e-8 denominator. */
typedef struct pv_pg_metrics {
    double pg_clipfrac;       /* actor/pg_clipfrac: share of tokens where the clip is active */
    double ppo_kl;            /* actor/ppo_kl: mean of old_log_prob - log_prob (clamped) */
    double pg_clipfrac_lower; /* actor/pg_clipfrac_lower: share hit by the dual clip */
} pv_pg_metrics_t;

/* compute_policy_loss_vanilla: ratio = exp(clamp(log_prob - old_log_prob, -20, 20)),
 * per token l = max(-A r, -A clip(r, 1 - low, 1 + high)), and for A < 0 min(l, -A c);
 * aggregated with opts->agg. grad_log_prob (rows, L) receives d(pg_loss)/d(log_prob) when
 * not NULL. Errors: PV_ERR_INVAL (clip_ratio_c <= 1, empty batch, NULL inputs). */
pv_err_t pv_policy_loss_f64(const pv_pg_opts_t *opts, size_t rows, size_t L,
                            const double *old_log_prob, const double *log_prob,
                            const double *advantages, const double *response_mask, double *pg_loss,
                            pv_pg_metrics_t *metrics, double *grad_log_prob, pv_errmsg_t *em);
pv_err_t pv_policy_loss_f32(const pv_pg_opts_t *opts, size_t rows, size_t L,
                            const float *old_log_prob, const float *log_prob,
                            const float *advantages, const float *response_mask, float *pg_loss,
                            pv_pg_metrics_t *metrics, float *grad_log_prob, pv_errmsg_t *em);

/* Is the PPO clip active for one token (what pg_clipfrac counts: the clipped term
 * -A clip(r, 1 - low, 1 + high) exceeds the unclipped -A r, r from the clamped log-ratio)?
 * The very per-token rule of pv_policy_loss_f64 (pl_tmpl.h's s_pg_token), for metrics that
 * split the clip fraction, e.g. by policy lag (update.h). */
bool pv_pg_token_clipped_f64(const pv_pg_opts_t *opts, double old_log_prob, double log_prob,
                             double advantage);

/* d(token loss)/d(log_prob) of one token: the per-token factor pv_policy_loss_f64 multiplies
 * the aggregation's weight by (pl_tmpl.h's s_pg_token), for a caller that computes a token's
 * gradient as soon as its log-prob is known (update.c's fused pass). */
double pv_pg_token_dloss_f64(const pv_pg_opts_t *opts, double old_log_prob, double log_prob,
                             double advantage);

/* The whole actor loss of one mini-batch (verl dp_actor.update_policy):
 *   loss = pg_loss - entropy_coeff * agg(entropy) + kl_coef * agg(kl(log_prob, ref_log_prob))
 * with the same aggregation for all three. entropy may be NULL when entropy_coeff == 0,
 * ref_log_prob may be NULL when use_kl is false. */
typedef struct pv_actor_loss_opts {
    pv_pg_opts_t pg;
    double entropy_coeff; /* verl default 0 */
    bool use_kl;          /* use_kl_loss */
    pv_kl_spec_t kl;      /* kl_loss_type (verl default low_var_kl) */
    double kl_coef;       /* kl_loss_coef (verl default 0.001) */
} pv_actor_loss_opts_t;

typedef struct pv_actor_loss_out {
    double loss;    /* the optimised scalar */
    double pg_loss; /* PPO part */
    double entropy; /* agg(entropy) whenever entropy is given (the bonus or not); 0 without */
    double kl;      /* agg(kl), 0 without KL */
    pv_pg_metrics_t pg;
} pv_actor_loss_out_t;

/* Computes the loss and d(loss)/d(log_prob), d(loss)/d(entropy) per token (either gradient
 * array may be NULL). Errors as pv_policy_loss_f64. */
pv_err_t pv_actor_loss_f64(const pv_actor_loss_opts_t *opts, size_t rows, size_t L,
                           const double *old_log_prob, const double *log_prob,
                           const double *advantages, const double *response_mask,
                           const double *entropy, const double *ref_log_prob,
                           pv_actor_loss_out_t *out, double *grad_log_prob, double *grad_entropy,
                           pv_errmsg_t *em);

#endif
