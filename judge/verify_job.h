/* verify_job.h - prover-verifier's work on one VERIFY_JOB, without sockets (DESIGN.md
 * section 1, step 2; the distributed form of learner/verify.h).
 *
 * A job carries one saved environment state s_t (pv_env_save bytes), the history
 * o_0, a_0, ..., o_t that led to it (the policy's context), the task, k and a seed. The
 * verifier restores the state and samples k continuations with the current policy
 * (learner/rollout.h, pv_rollout_continue), each played to the end of the episode or the
 * step limit (max_steps counted from the start of the episode, so t steps are spent
 * already), and reports how many ended in success, with the cost (environment steps and
 * policy tokens) counted apart from rollouts.
 *
 * The trajectory view. pv_rollout_continue() plays on from state t of a recorded
 * trajectory; the verifier has no trajectory, only the job. The view is a pv_traj_t with
 * texts = the history (2t + 1 entries), t zeroed step records (the continuation copies
 * them and never reads them), states[t] = the job's state and n_steps = t + 1: "the episode
 * goes on after step t" (the true length is not the verifier's business; with n_steps = t
 * pv_rollout_continue would report the recorded outcome instead of playing).
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
#include "learner/batch.h"

/* Build the view of `job` (see above) in `arena`; *t receives the state's step index.
 * Strings and the state bytes are borrowed from the job. Errors: PV_ERR_DATA (an even or
 * empty history, an empty state, k = 0), PV_ERR_NOMEM. */
pv_err_t pv_vjob_view(const pv_wire_verify_job_t *job, pv_arena_t *arena, pv_traj_t *view,
                      size_t *t, pv_errmsg_t *em);

/* What a verifier needs to run jobs (all borrowed). */
typedef struct pv_vjob_ctx {
    const pv_env_model_t *model;
    pv_env_t *env;
    const pv_policy_t *policy;
    pv_policy_work_t *work;
    pv_arena_t *view_arena; /* reset per job */
    pv_arena_t *arena;      /* reset per continuation */
    uint32_t verifier_id;
} pv_vjob_ctx_t;

/* Run `job`: check it is for this environment family, build the view, sample job->k
 * continuations with a pv_rng_t seeded from job->seed, and fill the VERIFY_RESULT (k,
 * successes, reward_sum = the continuations' rewards (pv_rollout_continue: WebShop's graded
 * score, = successes in ALFWorld and SearchQA), env_steps, policy_tokens, the policy version used,
 * verifier_id, wall_ms). Errors: PV_ERR_INVAL (another environment family: detail in `em`),
 * PV_ERR_DATA (a bad job), the environment's (a state that does not load: PV_ERR_TRUNCATED,
 * PV_ERR_VERSION, PV_ERR_INVAL, PV_ERR_DATA) and the policy's. */
pv_err_t pv_vjob_run(const pv_vjob_ctx_t *ctx, const pv_wire_verify_job_t *job,
                     pv_wire_verify_result_t *out, pv_errmsg_t *em);

#endif
