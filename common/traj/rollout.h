/* rollout.h - playing episodes with the policy in one process: the actor's and the
 * verifier's inner loops (and prover-train-local's, which drives both in one process).
 *
 * A rollout plays one task on an environment instance with the policy (sampling with an RNG,
 * or greedy), recording a pv_traj_t (traj.h) whose texts, candidate lists, state keys
 * (pv_env_state_key or pv_env_task_key, for the judge) and, optionally, saved environment
 * states (pv_env_save before every step and after the last) are copied into a caller's
 * arena: the environment's own buffers are only valid until its next step.
 * A continuation restores a saved state (pv_env_load) and plays on to the end of the
 * episode: ProVer's verifier samples K of them from s_t0 and s_t1 of a segment
 * (pv_rollout_from_state; pv_rollout_continue is the same from a recorded trajectory).
 */
#ifndef PV_TRAJ_ROLLOUT_H
#define PV_TRAJ_ROLLOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/env/env.h"
#include "common/err.h"
#include "common/policy/policy.h"
#include "common/traj/traj.h"

typedef struct pv_rollout_opts {
    uint32_t max_steps; /* 0 = the environment's limit */
    bool save_states;   /* record pv_env_save states for verification */
    bool task_keys;     /* state_keys[] hold pv_env_task_key (what the contrast judge compares
                         * with prover.contrast_key = task), else pv_env_state_key */
} pv_rollout_opts_t;

/* Play `task` from reset to the end (or max_steps). rng NULL = greedy. The trajectory's
 * reward is the sum of the environment's rewards, won its final `won`, group = `group`.
 * Errors: the environment's and the policy's (with context in `em`), PV_ERR_NOMEM (arena). */
pv_err_t pv_rollout_episode(const pv_env_model_t *model, pv_env_t *env, const pv_task_t *task,
                            const pv_policy_t *p, pv_policy_work_t *work, pv_rng_t *rng,
                            const pv_rollout_opts_t *opts, int64_t group, pv_arena_t *arena,
                            pv_traj_t *out, pv_cost_t *cost, pv_errmsg_t *em);

/* The most episodes (or continuations) one call plays at once. */
#define PV_ROLLOUT_MAX_BATCH PV_POLICY_MAX_BATCH

/* Play n episodes of `task` at once, episode i on its own environment envs[i] (distinct
 * instances of `model`) with its own stream rngs[i] (rngs NULL, or rngs[i] NULL: greedy),
 * into out[i] as pv_rollout_episode would. The episodes advance in lockstep: each round
 * makes the decision of every episode still running, with one pv_policy_act_batch when the
 * policy batches (the language model's G conversations share each decode step; their KV
 * slots persist across the rounds), else one pv_policy_act after the other, and then steps
 * each environment. With n = 1 this is pv_rollout_episode. 1 <= n <= PV_ROLLOUT_MAX_BATCH.
 * Errors: pv_rollout_episode's (the first episode's that fails ends the call; the others'
 * trajectories are then incomplete), PV_ERR_INVAL (n out of range). */
pv_err_t pv_rollout_episodes(const pv_env_model_t *model, pv_env_t *const *envs, size_t n,
                             const pv_task_t *task, const pv_policy_t *p, pv_policy_work_t *work,
                             pv_rng_t *const *rngs, const pv_rollout_opts_t *opts, int64_t group,
                             pv_arena_t *arena, pv_traj_t *out, pv_cost_t *cost, pv_errmsg_t *em);

/* Environments for playing episodes at once: envs[0] is borrowed (the caller's instance),
 * envs[1 .. n) are instances of the same model owned by the pool. */
typedef struct pv_env_pool {
    pv_env_t **envs;
    size_t n;
} pv_env_pool_t;

/* The pool for `batch` episodes at once with `policy`: n = batch when the policy batches
 * (pv_policy_batches) and batch >= 2, else 1 (only `first`: nothing is gained playing a
 * non-batching policy's episodes in lockstep). batch is capped at PV_ROLLOUT_MAX_BATCH.
 * Errors: PV_ERR_NOMEM (the pool is then empty). */
pv_err_t pv_env_pool_init(pv_env_pool_t *pool, const pv_env_model_t *model, pv_env_t *first,
                          const pv_policy_t *policy, size_t batch);
/* Destroy the instances the pool owns; zeroes it. NULL-safe, and safe on a zeroed pool. */
void pv_env_pool_free(pv_env_pool_t *pool);

/* How many episodes at once for actor.batch = `batch` (0 = all) and `n` to play. */
size_t pv_rollout_batch(int64_t batch, size_t n);

/* The next batch of episodes (or continuations) first, first + 1, ... of `total` that a pool
 * of n_envs environments plays with policy p: returns how many (1 unless n_envs >= 2 and p
 * batches), and their streams in rp (room for PV_ROLLOUT_MAX_BATCH): when p plays in
 * lockstep each episode has its own stream in r, seeded with a draw of `parent` (and its
 * index), else the one episode draws from `parent` itself; parent NULL: greedy (rp NULL). */
size_t pv_rollout_next_batch(const pv_policy_t *p, size_t n_envs, size_t first, size_t total,
                             pv_rng_t *parent, pv_rng_t *r, pv_rng_t **rp);

/* Where a continuation starts: the saved state s_t and the context that led to it. All
 * borrowed for the call. */
typedef struct pv_rollout_start {
    const uint8_t *state; /* pv_env_save bytes of the state before step t */
    size_t state_len;
    const char *task_text;
    const char *const *history; /* (n_history) o_0, a_0, ..., o_t: n_history = 2t + 1 */
    size_t n_history;
} pv_rollout_start_t;

/* The verifier's primitive: restore start->state and play on with the policy until the
 * episode ends or the step budget runs out (opts->max_steps, or the environment's limit,
 * counted from the start of the episode: t steps are spent already). The policy sees the
 * history followed by the new steps. *won receives the outcome; *reward (NULL = not wanted)
 * the rewards collected from step t on, which is the episode's outcome reward in our
 * environments since they pay only at the end (WebShop's graded score on buying; 1 or 0 in
 * ALFWorld and SearchQA). Texts go to `arena` (reset by the caller between continuations).
 * `out` (NULL = not wanted) receives the continuation as a trajectory with first_step = t:
 * texts = the history then the new steps, steps = the new steps only, in `arena`.
 * Errors: PV_ERR_INVAL (an even or empty history, no state), the environment's (a state
 * that does not load: PV_ERR_TRUNCATED, PV_ERR_VERSION, PV_ERR_INVAL, PV_ERR_DATA), the
 * policy's, PV_ERR_NOMEM (arena). */
pv_err_t pv_rollout_from_state(const pv_env_model_t *model, pv_env_t *env,
                               const pv_rollout_start_t *start, const pv_policy_t *p,
                               pv_policy_work_t *work, pv_rng_t *rng, const pv_rollout_opts_t *opts,
                               pv_arena_t *arena, bool *won, double *reward, pv_cost_t *cost,
                               pv_traj_t *out, pv_errmsg_t *em);

/* n continuations from one start at once (a verification job's K samples), continuation i
 * on envs[i] with rngs[i] (as pv_rollout_episodes: in lockstep, batched when the policy
 * batches): won[i], reward[i] (reward NULL = not wanted) and out[i] (out NULL = not wanted)
 * as pv_rollout_from_state gives them for one; all n continuations' texts live in `arena`
 * together. With n = 1 this is pv_rollout_from_state. Errors: pv_rollout_from_state's,
 * PV_ERR_INVAL (n out of range). */
pv_err_t pv_rollout_from_state_n(const pv_env_model_t *model, pv_env_t *const *envs, size_t n,
                                 const pv_rollout_start_t *start, const pv_policy_t *p,
                                 pv_policy_work_t *work, pv_rng_t *const *rngs,
                                 const pv_rollout_opts_t *opts, pv_arena_t *arena, bool *won,
                                 double *reward, pv_cost_t *cost, pv_traj_t *out, pv_errmsg_t *em);

/* pv_rollout_from_state from state t of a recorded trajectory (which must have saved
 * states); at t = n_steps (the end of the episode) *won and *reward are the recorded
 * trajectory's and nothing is played. Errors: PV_ERR_STATE (no saved state t), PV_ERR_RANGE
 * (t > n_steps), pv_rollout_from_state's. */
pv_err_t pv_rollout_continue(const pv_env_model_t *model, pv_env_t *env, const pv_traj_t *traj,
                             size_t t, const pv_policy_t *p, pv_policy_work_t *work, pv_rng_t *rng,
                             const pv_rollout_opts_t *opts, pv_arena_t *arena, bool *won,
                             double *reward, pv_cost_t *cost, pv_errmsg_t *em);

#endif
