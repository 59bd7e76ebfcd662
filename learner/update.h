/* update.h - the trainer state and one policy update from a batch of trajectories (the
 * PPO / GRPO actor update), through the policy's per-token backward.
 *
 * PPO update (verl dp_actor.update_policy, one process): for each of `ppo_epochs` passes,
 * the rows are split into `mini_batches` consecutive mini-batches; for each mini-batch
 *   1. forward every step with the current parameters (pv_policy_forward_items over the
 *      mini-batch's steps: a language model scores a trajectory's consecutive steps in one
 *      sequence): log_prob, entropy per action token (and the reference policy's log_prob
 *      when KL is on);
 *   2. pv_actor_loss_f64 gives the loss and dL/dlog_prob, dL/dentropy per token;
 *   3. forward + backward again (pv_policy_backward_items), accumulating dL/dθ into `grad`;
 *   4. pv_adam_step (global-norm clip, AdamW), policy version + 1.
 * Rollout/training mismatch (verl's rollout_probs_diff): in step 1, the tokens of steps
 * acted with the very version the learner holds are compared with their behaviour log-probs;
 * both come from the same code, so the difference is rounding (~1e-6: decode and training
 * run different BLAS calls), and anything larger is a bug.
 * Behaviour cloning uses the same trainer (bc.h).
 */
#ifndef PV_LEARNER_UPDATE_H
#define PV_LEARNER_UPDATE_H

#include <stddef.h>

#include "common/err.h"
#include "common/policy/policy.h"
#include "learner/adam.h"
#include "learner/batch.h"
#include "learner/policy_loss.h"

typedef struct pv_update_opts {
    pv_actor_loss_opts_t loss;
    unsigned ppo_epochs;   /* passes over the batch (verl ppo_epochs, default 1) */
    unsigned mini_batches; /* updates per pass (train_batch_size / ppo_mini_batch_size) */
} pv_update_opts_t;

/* The policy-lag histogram of an update (issue 16, item 3): every trained token, each time a
 * mini-batch's loss is computed on it (so ppo_epochs passes count it that many times), falls
 * in the bucket of lag = the learner's policy version at that mini-batch - the behaviour
 * version of its step (0 when the step is newer, which the intake rules out); for each
 * bucket the tokens and how many of them the PPO clip was active on
 * (pv_pg_token_clipped_f64: pg_clipfrac's rule). Buckets 0, 1, 2, 3, 4-7, 8-15, 16+. A clip
 * fraction that grows with the lag says the stale tokens are the ones PPO cuts off: the
 * off-policy part of the batch trains less (learner.max_policy_lag bounds it). */
#define PV_LAG_BUCKETS 7
typedef struct pv_lag_hist {
    uint64_t tokens[PV_LAG_BUCKETS];
    uint64_t clipped[PV_LAG_BUCKETS];
} pv_lag_hist_t;

/* The bucket of a lag, and its name ("0", ..., "4-7", "16+"). */
unsigned pv_lag_bucket(uint64_t lag);
const char *pv_lag_bucket_name(unsigned bucket);

/* a += b. */
void pv_lag_hist_add(pv_lag_hist_t *a, const pv_lag_hist_t *b);

typedef struct pv_update_stats {
    double loss, pg_loss, entropy, kl;  /* last mini-batch */
    double pg_clipfrac, ppo_kl;         /* last mini-batch */
    double grad_norm;                   /* last step, before clipping */
    size_t n_updates;                   /* Adam steps taken */
    size_t n_skipped;                   /* steps skipped for a non-finite gradient */
    double mismatch_mean, mismatch_max; /* |training - behaviour log-prob| over mismatch_tokens
                                           tokens acted with the learner's current version */
    size_t mismatch_tokens;
    pv_lag_hist_t lag; /* the policy-lag histogram of the update, every mini-batch */
} pv_update_stats_t;

/* The trainer's reusable state: a policy, its optimiser, a work and a gradient buffer. */
typedef struct pv_trainer {
    pv_policy_t *policy;    /* borrowed */
    const pv_policy_t *ref; /* reference policy for KL, or NULL (borrowed) */
    pv_adam_t *adam;        /* borrowed */
    pv_policy_work_t *work; /* owned */
    float *grad;            /* owned (n_params) */
    float *logp;            /* owned (max_cands) scratch */
    /* owned scratch of the batched forward and backward */
    pv_policy_item_t *items;
    size_t cap_items;
    float *tok; /* (4, cap_tok): log-probs, entropies, reference log-probs, gradients */
    size_t cap_tok;
    double mm_sum, mm_max; /* mismatch of the update in progress */
    size_t mm_n;
    pv_lag_hist_t lag;  /* policy-lag histogram of the update in progress */
    bool bc_full_vocab; /* behaviour cloning (bc.h) under decode=constrain scores the expert's
                           tokens over the whole vocabulary, not the candidates' mask */
    bool two_pass;      /* tests: the forward, the loss, then the backward (with its own
                           forward) even when the policy has the fused pass */
} pv_trainer_t;

/* Set up a trainer around `policy` and `adam` (same n_params). Errors: PV_ERR_INVAL,
 * PV_ERR_NOMEM. */
pv_err_t pv_trainer_init(pv_trainer_t *t, pv_policy_t *policy, const pv_policy_t *ref,
                         pv_adam_t *adam, pv_errmsg_t *em);
void pv_trainer_fini(pv_trainer_t *t);

/* learner.use_kl_loss: a frozen copy of t->policy as it is now (same spec, parameters copied)
 * becomes t->ref, the reference of the KL term (verl keeps the initial actor, here the policy
 * after init_checkpoint / behaviour cloning / a resume, as its reference). The copy goes to
 * *out, owned by the caller, who destroys it after the trainer. Errors: pv_policy_new's. */
pv_err_t pv_trainer_freeze_reference(pv_trainer_t *t, pv_policy_t **out, pv_errmsg_t *em);

/* The actor loss of rows [r0, r1) of the batch under the current parameters (out) and its
 * gradient ADDED into t->grad: steps 1-3 above, without the optimiser step (a distributed
 * learner all-reduces t->grad before stepping). A policy with the fused pass
 * (pv_policy_train_items: the language model) computes each token's gradient from its
 * log-prob right after the forward (the aggregation's weights depend on the mask only, the
 * PPO, KL and entropy terms on the token alone), then the backward: one forward fewer, the
 * same gradient bit for bit; the loss and its metrics are computed from the log-probs
 * afterwards. The rows' trained tokens are added to
 * t->lag (pv_update_ppo clears it first). Errors: the policy's and the loss's,
 * PV_ERR_INVAL (bad row range, KL without a reference policy). */
pv_err_t pv_update_loss_grad(pv_trainer_t *t, const pv_traj_t *trajs, const pv_batch_t *b,
                             size_t r0, size_t r1, const pv_actor_loss_opts_t *loss,
                             pv_actor_loss_out_t *out, pv_errmsg_t *em);

/* PPO update from `trajs` with advantages already in `b` (pv_batch_build + pv_batch_advantages
 * on the same trajectories). Bumps the policy version once per Adam step. Errors: the
 * policy's and the loss's; PV_ERR_INVAL when b does not match trajs. */
pv_err_t pv_update_ppo(pv_trainer_t *t, const pv_traj_t *trajs, const pv_batch_t *b,
                       const pv_update_opts_t *opts, pv_update_stats_t *stats, pv_errmsg_t *em);

/* A run must stop when its update goes non-finite (issue 15): PV_ERR_RANGE, with a message
 * naming `iteration`, the loss and the gradient norm, when `stats` has a non-finite loss,
 * policy loss or gradient norm, or an Adam step skipped for a non-finite gradient; else
 * PV_OK. The skipped step left the parameters as they were, so the last checkpoint and the
 * published versions are still finite. */
pv_err_t pv_update_check_finite(const pv_update_stats_t *stats, uint64_t iteration,
                                pv_errmsg_t *em);

#endif
