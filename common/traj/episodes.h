/* episodes.h - whole episodes outside training rollouts: held-out evaluation (greedy or
 * sampled) and expert demonstrations (behaviour cloning). The learner and prover-train-local
 * use them; the RNG of a sampled evaluation is the caller's argument, so an evaluation never
 * shifts a training stream.
 *
 * Tasks. Task `id` of a split has seed pv_rng_mix(task_seed, id) (task_seed = run.seed in
 * every role), so every process that names a task plays the same game.
 */
#ifndef PV_TRAJ_EPISODES_H
#define PV_TRAJ_EPISODES_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/env/env.h"
#include "common/err.h"
#include "common/policy/policy.h"
#include "common/rng.h"
#include "common/traj/rollout.h"

/* What episodes are played with (all borrowed). */
typedef struct pv_episodes {
    const pv_env_model_t *model;
    pv_env_t *env;             /* one instance, reused */
    const pv_policy_t *policy; /* NULL for expert demonstrations */
    pv_policy_work_t *work;
    pv_arena_t *arena; /* reset by each call that fills it */
    uint64_t task_seed;
} pv_episodes_t;

/* Task `id` of `split`: seed pv_rng_mix(task_seed, id). */
pv_task_t pv_episode_task(uint64_t task_seed, pv_env_split_t split, uint64_t id);

/* Play `n` expert episodes on training tasks first_task .. first_task + n - 1, modulo the
 * split's size when it is finite; a task the expert has no plan for (PV_ERR_NOTFOUND: e.g. no
 * admissible WebShop search finds the goal product) or whose expert action is not among the
 * admissible ones (no demonstration a candidate-scoring policy can follow) is skipped and
 * counted in cost->skipped,
 * and the next one played instead (the
 * environment's expert solver chooses; token = the expert action's index in the admissible
 * list; group = the episode's index). *out (n trajectories) and everything they point to
 * live in e->arena, which is reset first. Errors: the environment's; PV_ERR_NOTFOUND when
 * more than max(n, 100) tasks had to be skipped; PV_ERR_NOMEM (arena). */
pv_err_t pv_episodes_expert(const pv_episodes_t *e, uint64_t first_task, size_t n, pv_traj_t **out,
                            pv_cost_t *cost, pv_errmsg_t *em);

/* Per task type of a held-out evaluation (pv_env_task_type of each task). */
#define PV_EVAL_MAX_TYPES 16
typedef struct pv_eval_type {
    char name[48]; /* the environment's name of the type */
    uint32_t n, wins;
} pv_eval_type_t;

/* What an evaluation measured: the benchmarks' standard numbers are success = wins / n,
 * WebShop's score = 100 * reward_sum / n (mean final reward x 100, as WebShop and the
 * papers that use it report it), ALFWorld's success per task type. Types beyond
 * PV_EVAL_MAX_TYPES are counted in `untyped` with the tasks of no type. */
typedef struct pv_eval_detail {
    pv_env_split_t split; /* the split the tasks came from */
    size_t n, wins;
    double reward_sum; /* sum over episodes of the episode's total reward */
    uint32_t n_types;
    pv_eval_type_t types[PV_EVAL_MAX_TYPES]; /* in order of first appearance */
    size_t untyped;
} pv_eval_detail_t;

/* Evaluate e->policy on tasks first_task .. first_task + n - 1 of `split` into *out (a finite
 * split's tasks past its end are left out: out->n says how many were played): greedy
 * (argmax) when rng is NULL, else sampled with `rng`. Saved states are never recorded.
 * e->arena is reset per episode. Errors: the rollout's. */
pv_err_t pv_episodes_eval_detail(const pv_episodes_t *e, pv_env_split_t split, uint64_t first_task,
                                 size_t n, pv_rng_t *rng, const pv_rollout_opts_t *ro,
                                 pv_eval_detail_t *out, pv_cost_t *cost, pv_errmsg_t *em);

/* Success rate of e->policy on tasks first_task .. first_task + n - 1 of `split`: greedy
 * (argmax) when rng is NULL, else sampled with `rng` (pv_episodes_eval_detail's wins / n).
 * Errors: the rollout's. */
pv_err_t pv_episodes_eval(const pv_episodes_t *e, pv_env_split_t split, uint64_t first_task,
                          size_t n, pv_rng_t *rng, const pv_rollout_opts_t *ro, double *success,
                          pv_cost_t *cost, pv_errmsg_t *em);

/* learner.eval_split's value ("test" or "train", as the config's choices allow) as a split:
 * "train" is PV_SPLIT_TRAIN, anything else PV_SPLIT_TEST. */
pv_env_split_t pv_episodes_eval_split(const char *name);

/* First task id of the "seen" held-out evaluation (learner.eval_split = train): new games of
 * the train split's task triples, at ids no training stream reaches (actors' task ids are
 * below 2^62, expert demonstrations' below 2^20). ALFWorld's eval_in_distribution, where
 * the test split is its eval_out_of_distribution. */
#define PV_EPISODES_SEEN_FIRST (UINT64_C(1) << 63)

/* Most lanes a held-out evaluation plays on (threads, each with its own instances). */
#define PV_EPISODES_MAX_LANES 16

/* The held-out evaluation the learner and prover-train-local report: tasks 0 .. n - 1 of
 * the test split (split PV_SPLIT_TEST; a finite split's tasks past its end are left out), or
 * tasks PV_EPISODES_SEEN_FIRST + 0 .. n - 1 of the train split (PV_SPLIT_TRAIN: unseen games
 * of seen task kinds; an unbounded, generated split only), played greedy into *greedy, then
 * sampled into *sampled, task `id`'s episode with its own stream seeded
 * (pv_rng_mix(seed, id), "eval"), so every evaluation of a run samples the same random
 * numbers for a task (common random numbers between before and after) and the numbers do not
 * depend on the lane count (bit for bit when the policy's scratch keeps nothing between
 * episodes, as bow_mlp's; the transformer's KV cache reuses a prefix another episode
 * computed, which can move the last bits of a log-prob and, rarely, a choice). The sampled pass
 * runs at softmax temperature `temperature` (learner.eval_temperature; 0 = the policy's own, the
 * rollout temperature): `policy` must be e->policy, its temperature is set for that pass and put
 * back before returning, on error too.
 *
 * Lanes: e[0 .. n_lanes - 1] (1 <= n_lanes <= PV_EPISODES_MAX_LANES) share model, policy and
 * task_seed and each has its own env, work and arena; lane l plays tasks l, l + n_lanes, ...
 * in its own thread (lane 0 in the caller's), and the details are summed in task order (the
 * order of first appearance of a type is the tasks'). Saved states are never recorded; each
 * lane's arena is reset per episode. Errors: the rollouts' (the lowest failing lane's);
 * PV_ERR_INVAL (temperature < 0 or not finite; n_lanes out of range; PV_SPLIT_TRAIN of an
 * environment whose train split is finite, since training plays all of it); PV_ERR_NOMEM. */
pv_err_t pv_episodes_eval_heldout(const pv_episodes_t *e, size_t n_lanes, pv_policy_t *policy,
                                  pv_env_split_t split, size_t n, const pv_rollout_opts_t *ro,
                                  uint64_t seed, float temperature, pv_eval_detail_t *greedy,
                                  pv_eval_detail_t *sampled, pv_cost_t *cost, pv_errmsg_t *em);

#endif
