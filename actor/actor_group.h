/* actor_group.h - prover-actor's pieces without sockets: which task to play next, one group
 * of G trajectories, and the group as ROLLOUT_GROUP bytes (DESIGN.md section 2).
 *
 * Tasks. Actor i of A plays the training split's positions i, i + A, i + 2A, ..., so actors
 * never duplicate each other's tasks. Generated tasks (an unbounded split) are the positions
 * themselves. A finite split (a benchmark's files) is visited pass after pass (position p is
 * pass p / N, place p mod N); with shuffle (env.shuffle_tasks) each pass visits
 * the N tasks in its own seeded order, pv_rng_permute(place, N, key) with a key of (run.seed,
 * pass), as verl's data.shuffle reshuffles each epoch, so an update's groups are not a run
 * of neighbouring file entries (WebShop's synthetic goals list every option combination of
 * one product in a row); without it, in file order. The task seed is pv_rng_mix(run.seed,
 * task_id), as in prover-train-local.
 * Groups. The G trajectories of a group play the same task with the same policy object,
 * one after the other from the actor's stream, or, with a pool of n_envs >= 2 environments
 * (a policy that batches: the transformer), n_envs at a time in lockstep
 * (pv_rollout_episodes), episode i of the group from its own stream seeded with a draw of
 * the actor's. Before each episode (each lockstep batch) a caller hook may replace the
 * weights (new versions are applied between episodes only, never inside one: every step is
 * stamped with the version that chose it). With save_states (the prover estimator) every state is
 * saved so the judge can send it to verifiers.
 */
#ifndef PV_ACTOR_GROUP_H
#define PV_ACTOR_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wire/wire.h"
#include "common/traj/rollout.h"
#include "common/traj/traj_wire.h"

typedef struct pv_actor_sched {
    uint32_t index;    /* this actor among `count` */
    uint32_t count;    /* actors in the run (>= 1) */
    uint64_t n_tasks;  /* tasks in the training split; UINT64_MAX = generated */
    uint64_t run_seed; /* run.seed */
    bool shuffle;      /* env.shuffle_tasks: a finite split in a seeded order per pass */
} pv_actor_sched_t;

/* The task of this actor's group number n (n = 0, 1, ...). */
pv_task_t pv_actor_task(const pv_actor_sched_t *s, uint64_t n);

/* Called before every episode; a non-OK return abandons the group with that error
 * (PV_ERR_INTERRUPTED to stop). */
typedef pv_err_t (*pv_actor_hook_fn)(void *user);

typedef struct pv_actor_ctx {
    const pv_env_model_t *model;
    pv_env_t *env;
    const pv_policy_t *policy; /* its parameters may change inside `between` only */
    pv_policy_work_t *work;
    pv_rng_t *rng;         /* sampling; NULL = greedy (actor.temperature = 0) */
    pv_arena_t *arena;     /* the group's trajectories; reset by pv_actor_play_group */
    bool save_states;      /* record saved states (algorithm.adv_estimator = prover) */
    bool task_keys;        /* record task keys, not state keys (prover with contrast_key = task) */
    uint32_t max_steps;    /* 0 = the environment's limit */
    pv_env_t *const *envs; /* (n_envs) a pool (rollout.h pv_env_pool_t) for playing n_envs
                              episodes at once; n_envs < 2: one after the other on env */
    size_t n_envs;
    pv_actor_hook_fn between;
    void *user;
} pv_actor_ctx_t;

/* Reset ctx->arena and play G episodes of `task` into trajs[0 .. G) (caller-owned array;
 * their memory lives in the arena). Costs add to `cost`. Errors: the hook's, the
 * environment's and the policy's (with context in `em`), PV_ERR_NOMEM (arena). */
pv_err_t pv_actor_play_group(const pv_actor_ctx_t *ctx, const pv_task_t *task, uint32_t G,
                             int64_t group, pv_traj_t *trajs, pv_cost_t *cost, pv_errmsg_t *em);

/* Encode G trajectories as a ROLLOUT_GROUP envelope into `out` (reused), with the saved
 * states when with_states. Wire arrays go to `arena` (not reset here). Errors: those of
 * pv_traj_group_to_wire and pv_wire_encode (PV_ERR_LIMIT for a group beyond the schema's
 * bounds), with detail in `em`. */
pv_err_t pv_actor_encode_group(const pv_traj_t *trajs, size_t G, const pv_group_meta_t *meta,
                               bool with_states, pv_arena_t *arena, pv_wire_buf_t *out,
                               pv_errmsg_t *em);

#endif
