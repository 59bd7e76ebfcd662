/* triage_adv.h - TRIAGE as an estimator of the pipeline: GRPO plus role-typed process rewards
 * from model-free labels (common/traj/triage.h).
 *
 * Source: the TRIAGE abstract (arXiv 2606.32017; ../shared/METHODS.md): a judge labels each
 * segment Decisive / Exploration / No-progress / Regression, mapped to the process rewards
 * 1.0 / 0.5 / -0.1 / -0.5 and added with weight lambda (0.2 on ALFWorld and WebShop, 0.4 on
 * SearchQA). Our reading, the paper's full text not being available:
 *     A[i, t] = A_GRPO[i, t] + lambda * reward(role(i, t))        for every real step t,
 * A_GRPO verl's GRPO outcome advantage (std-normalised within the group, epsilon 1e-6), one
 * segment = one action turn, the roles from pv_triage_label with the trajectory's state keys
 * and refused flags and no expert plan lengths (the learner has no saved states): a
 * refused action or a state already visited is No-progress, a state new to the trajectory
 * Exploration, a success's last action Decisive, and nothing Regression. The process reward
 * is added after GRPO's normalisation (the abstract says "added"), so it is in advantage units.
 * With algorithm.triage_labels = llm the judge's model labels the turns instead
 * (judge/llm_label.h): a step with a judge role (pv_traj_t.judge_roles[t] < 4) takes it in
 * place of the model-free one, every other step (a group or trajectory the model did not
 * label, a turn it gave no known role) keeps the model-free label; the formula is the same.
 */
#ifndef PV_LEARNER_TRIAGE_ADV_H
#define PV_LEARNER_TRIAGE_ADV_H

#include <stddef.h>

#include "common/err.h"
#include "common/traj/traj.h"
#include "learner/batch.h"

typedef struct pv_triage_opts {
    double lambda;  /* algorithm.triage_lambda, default 0.2 */
    double epsilon; /* GRPO's std epsilon, 1e-6 */
} pv_triage_opts_t;

/* Counts of the roles given in one batch, indexed by pv_triage_role_t. */
typedef struct pv_triage_stats {
    size_t roles[4];
    size_t judged;     /* turns whose role came from a judge (pv_traj_t.judge_roles) */
    size_t model_free; /* turns given the model-free label (no judge role: the fallback) */
} pv_triage_stats_t;

/* lambda 0.2, epsilon 1e-6. */
pv_triage_opts_t pv_triage_opts_default(void);

/* Fill b->advantages (rows, L) for the batch pv_batch_build() made from trajs[0 .. n) with
 * the formula above. `st` may be NULL. Errors: PV_ERR_INVAL (n != b->rows, a trajectory
 * longer than b->L or without state keys), GRPO's errors (pv_adv_outcome_f64). */
pv_err_t pv_batch_triage(pv_batch_t *b, const pv_traj_t *trajs, size_t n, const pv_triage_opts_t *o,
                         pv_triage_stats_t *st, pv_errmsg_t *em);

#endif
