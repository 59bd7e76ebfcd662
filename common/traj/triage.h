/* triage.h - TRIAGE's role labels for action segments, model-free: from the environment's
 * state changes instead of a language model (issue 17, item 4). The learner's estimator
 * `triage` (learner/triage_adv.h) labels with state keys alone; a judge with saved states can
 * add the expert's plan lengths.
 *
 * Source: the TRIAGE abstract (role-typed judge, arXiv 2606.32017; ../shared/METHODS.md): a
 * judge labels each segment with a role that maps to a fixed process reward - Decisive 1.0,
 * Exploration 0.5, No-progress -0.1, Regression -0.5 - added with weight lambda (0.2 on
 * ALFWorld and WebShop, 0.4 on SearchQA). How the paper's judge decides a role is not known
 * here; the rules below are ours, from what the environment can tell without a model.
 *
 * A segment is one action turn (action t: state t -> state t + 1). Rules, first match wins:
 *   1. the environment refused the action (refused[t])               -> No-progress
 *   2. with the expert's plan lengths (expert_len, the environment's planner):
 *        the plan gets shorter                                       -> Decisive
 *        it gets longer, the goal becomes unreachable, or unreachable
 *        within the episode's remaining steps (the oracle judge's rule,
 *        pv_judge_oracle_label in judge/proposer.h)                    -> Regression
 *      without them: the last action of a successful trajectory      -> Decisive
 *   3. the state after the action was already visited in this trajectory (state_keys[t + 1]
 *      equals state_keys[u] for some u <= t: an unchanged state or a loop) -> No-progress
 *   4. otherwise (a state new to the trajectory, the plan unchanged)   -> Exploration
 * Without expert_len nothing is labelled Regression (state keys alone cannot tell a step
 * back from a step aside).
 */
#ifndef PV_JUDGE_TRIAGE_H
#define PV_JUDGE_TRIAGE_H

#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>

#include "common/err.h"

typedef enum pv_triage_role {
    PV_TRIAGE_DECISIVE = 0,
    PV_TRIAGE_EXPLORATION,
    PV_TRIAGE_NO_PROGRESS,
    PV_TRIAGE_REGRESSION,
} pv_triage_role_t;

/* No role: a turn a judge did not label (the wire's turn_roles, learner/triage_adv.h gives
 * it the model-free label). Stored in uint8_t role arrays. */
#define PV_TRIAGE_ROLE_NONE 0xffu

/* The role's fixed process reward: 1.0, 0.5, -0.1, -0.5 (TRIAGE's table); 0 for an unknown
 * value. */
double pv_triage_reward(pv_triage_role_t role);

/* "decisive", "exploration", "no_progress", "regression"; "unknown" otherwise. */
const char *pv_triage_role_name(pv_triage_role_t role);

/* One trajectory as the labeller sees it. Arrays are borrowed. */
typedef struct pv_triage_traj {
    bool success;
    uint32_t n_steps;           /* actions taken */
    const uint64_t *state_keys; /* (n_steps + 1): the state before each action, then the last */
    const int32_t *expert_len;  /* (n_steps + 1) or NULL: expert plan length, -1 unreachable */
    const bool *refused;        /* (n_steps) or NULL: the environment refused action t */
} pv_triage_traj_t;

/* Label the n_steps actions of `traj` (rules above) into roles (n_steps). `max_steps` is
 * the episode step limit (for "unreachable in time"; 0 = no limit). Needs traj->state_keys.
 * Errors: PV_ERR_INVAL (NULL traj, roles or state_keys). */
pv_err_t pv_triage_label(const pv_triage_traj_t *traj, uint32_t max_steps, pv_triage_role_t *roles);

/* TRIAGE's process reward of each action: out[t] = lambda * pv_triage_reward(roles[t]),
 * t < n (the amount added to the advantage of action t's tokens). */
void pv_triage_credit(const pv_triage_role_t *roles, size_t n, double lambda, double *out);

#endif
