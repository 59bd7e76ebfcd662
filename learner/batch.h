/* batch.h - trajectories as the learner sees them, and the verl-convention batch built
 * from them.
 *
 * A trajectory keeps its texts once: texts = {o_0, a_0, o_1, a_1, ..., o_T} (observations and
 * action texts, oldest first), and step t's context history is texts[0 .. 2t] (2t + 1
 * entries, ending with o_t) - exactly pv_policy_ctx_t's convention. Each step records the
 * candidates it was offered, the token the policy emitted (bow_mlp: the candidate index),
 * its behaviour log-prob and the policy version that acted. Memory is owned by whoever built
 * the trajectory (rollout.c uses one arena per batch).
 *
 * Batch layout (verl's convention, advantage.h): one row per trajectory, one column per
 * token; with one token per step, column t is step t. response_mask marks real steps,
 * token_level_rewards carries the outcome at the last step, index is the group id.
 */
#ifndef PV_LEARNER_BATCH_H
#define PV_LEARNER_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "learner/advantage.h"
#include "learner/prover_credit.h"

typedef struct pv_step_rec {
    const char *const *cands; /* (n_cands) admissible actions offered */
    size_t n_cands;
    uint32_t token;          /* emitted token (candidate index) */
    float behav_logprob;     /* log-prob under the behaviour policy */
    uint64_t policy_version; /* version that acted */
} pv_step_rec_t;

typedef struct pv_traj {
    const char *task_text;
    const char **texts;   /* (2 n_steps + 1) o_0, a_0, ..., o_T */
    pv_step_rec_t *steps; /* (n_steps) */
    size_t n_steps;
    double reward; /* outcome R */
    bool won;
    int64_t group; /* group id (same task) */
    /* Environment state keys (pv_env_state_key), state_keys[t] before step t, t = 0 ..
     * n_steps; NULL when not recorded (rollout.h records them). */
    uint64_t *state_keys;
    /* Optional saved environment states (rollout.h): states[t] (state_len[t] bytes) is the
     * state before step t, t = 0 .. n_steps; NULL when not recorded. */
    uint8_t **states;
    size_t *state_len;
} pv_traj_t;

/* Dense (rows = n_trajs, L = longest trajectory) matrices for the estimators and the loss.
 * All arrays are owned by the batch (pv_batch_free). */
typedef struct pv_batch {
    size_t rows, L;
    double *token_level_rewards; /* (rows, L) outcome at the last step */
    double *response_mask;       /* (rows, L) */
    double *old_log_prob;        /* (rows, L) behaviour log-probs */
    double *advantages;          /* (rows, L) */
    int64_t *index;              /* (rows) group ids */
} pv_batch_t;

/* Build the matrices of `n` trajectories. Errors: PV_ERR_INVAL (no trajectory, or every
 * trajectory empty), PV_ERR_NOMEM. */
pv_err_t pv_batch_build(const pv_traj_t *trajs, size_t n, pv_batch_t *out, pv_errmsg_t *em);
void pv_batch_free(pv_batch_t *b);

/* Fill b->advantages with estimator `est` (epsilon as GRPO's), then apply ProVer segments
 * (token coordinates; may be NULL / 0). GiGPO needs the trajectories' anchors and goes
 * through pv_batch_gigpo (learner/gigpo_batch.h) instead. Errors: the estimator's (gigpo is
 * refused here) and pv_prover_apply's. */
pv_err_t pv_batch_advantages(pv_batch_t *b, pv_adv_estimator_t est, double epsilon,
                             const pv_prover_opts_t *prover, const pv_verified_seg_t *segs,
                             size_t n_segs, pv_errmsg_t *em);

#endif
