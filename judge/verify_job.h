/* verify_job.h - prover-verifier's work on one VERIFY_JOB, without sockets (DESIGN.md
 * section 1, step 2).
 *
 * A job carries one saved environment state s_t (pv_env_save bytes), the history
 * o_0, a_0, ..., o_t that led to it (the policy's context), the task, k and a seed. The
 * verifier restores the state and samples k continuations with the current policy
 * (common/traj/rollout.h, pv_rollout_from_state), each played to the end of the episode or the
 * step limit (max_steps counted from the start of the episode, so t steps are spent
 * already), and reports how many ended in success, with the cost (environment steps and
 * policy tokens) counted apart from rollouts. With a pool of environments and a policy that
 * batches (the transformer), the continuations are sampled n_envs at a time in lockstep
 * (pv_rollout_from_state_n), each from its own stream seeded with a draw of the job's; one
 * after the other, they all draw from the job's stream.
 *
 */
#ifndef PV_JUDGE_VERIFY_JOB_H
#define PV_JUDGE_VERIFY_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/env/env.h"
#include "common/err.h"
#include "common/policy/policy.h"
#include "common/wire/wire.h"
#include "common/traj/rollout.h"

/* The continuation start of `job` (history, task text and state borrowed from it);
 * *t receives the state's step index. Errors: PV_ERR_DATA (an even or empty history, an
 * empty state, k = 0: a malformed job, detail in `em`). */
pv_err_t pv_vjob_start(const pv_wire_verify_job_t *job, pv_rollout_start_t *start, size_t *t,
                       pv_errmsg_t *em);

/* What a verifier needs to run jobs (all borrowed). */
typedef struct pv_vjob_ctx {
    const pv_env_model_t *model;
    pv_env_t *env;
    const pv_policy_t *policy;
    pv_policy_work_t *work;
    pv_arena_t *arena; /* reset per continuation (per lockstep batch of them) */
    pv_arena_t *keep;  /* the continuations a job wants back (want_continuations), and their
                          wire form; reset by the caller per job (NULL: never sent back) */
    uint32_t verifier_id;
    pv_env_t *const *envs; /* (n_envs) a pool (rollout.h pv_env_pool_t) for sampling n_envs
                              continuations at once; n_envs < 2: one after the other on env */
    size_t n_envs;
} pv_vjob_ctx_t;

/* Run `job`: check it is for this environment family, build the view, sample job->k
 * continuations with a pv_rng_t seeded from job->seed, and fill the VERIFY_RESULT (k,
 * successes, reward_sum = the continuations' rewards (pv_rollout_from_state: WebShop's graded
 * score, = successes in ALFWorld and SearchQA), env_steps, policy_tokens, the policy version used,
 * verifier_id, wall_ms). With job->want_continuations (and ctx->keep) the k continuations
 * themselves go into out->continuations (each the steps from the restored state on), in
 * ctx->keep. Errors: PV_ERR_INVAL (another environment family: detail in `em`),
 * PV_ERR_DATA (a bad job), the environment's (a state that does not load: PV_ERR_TRUNCATED,
 * PV_ERR_VERSION, PV_ERR_INVAL, PV_ERR_DATA) and the policy's. */
pv_err_t pv_vjob_run(const pv_vjob_ctx_t *ctx, const pv_wire_verify_job_t *job,
                     pv_wire_verify_result_t *out, pv_errmsg_t *em);

#endif
