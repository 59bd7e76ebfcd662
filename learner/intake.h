/* intake.h - the learner's side of the "learn" service: credited groups in, a training
 * batch out.
 *
 * Each CREDITED_GROUP payload (a wire envelope from the judge) is decoded and checked,
 * then either accepted into the current batch or refused with a counted reason:
 *   MALFORMED  not a CREDITED_GROUP, or a step the policy could not have taken
 *              (common/traj/traj_wire.h's checks), or step versions that do not add up:
 *              the group's policy_version must be the oldest of its steps' versions, and no
 *              step may carry a version newer than the learner's;
 *   DUPLICATE  a group already counted (delivery is at least once; the id is the pair
 *              (actor_id, group_id), remembered for the whole run);
 *   STALE      its oldest step is more than max_policy_lag versions behind the learner
 *              (the steps' versions decide, not the header the actor wrote)
 *              (DESIGN.md section 2: groups older than that are dropped and counted).
 * Accepted groups become rows of pv_traj_t (texts in the intake's arena: the payload may be
 * freed right after pv_intake_add returns) and their verified segments become
 * pv_verified_seg_t in batch row coordinates. A segment whose coordinates do not fit its
 * trajectory is dropped and counted (bad_segments), the rest of the group is kept.
 * TRIAGE roles the judge's model gave (the CREDITED_GROUP's triage_labels,
 * algorithm.triage_labels = llm) become the trajectories' judge_roles (common/traj/traj.h); an
 * entry that does not fit its trajectory is dropped and counted (bad_labels).
 * Continuation groups (prover.reuse_continuations) become rows too, after the group's: each
 * continuation a trajectory with first_step = t whose texts start with its source
 * trajectory's history, the K of one state one batch group (GRPO within it).
 */
#ifndef PV_LEARNER_INTAKE_H
#define PV_LEARNER_INTAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "learner/batch.h"
#include "learner/prover_credit.h"

typedef enum pv_intake_verdict {
    PV_INTAKE_ACCEPTED = 0,
    PV_INTAKE_MALFORMED,
    PV_INTAKE_DUPLICATE,
    PV_INTAKE_STALE,
} pv_intake_verdict_t;

/* Counters of the current batch (reset by pv_intake_reset) - see pv_intake_totals() for
 * the run's. */
typedef struct pv_intake_stats {
    uint64_t groups, trajectories, steps, won;
    uint64_t refused;       /* steps whose action the environment did not accept ("Nothing
                               happens."): verl-agent's invalid actions */
    uint64_t action_tokens; /* tokens of the accepted groups' actions */
    uint64_t malformed, duplicates, stale, bad_segments;
    uint64_t proposals;                     /* segments the judge proposed */
    uint64_t segments;                      /* segments received */
    uint64_t verified;                      /* ... of which both sides were verified */
    uint64_t positive;                      /* ... of which delta > 0 */
    double delta_sum, delta_min, delta_max; /* over verified segments */
    uint64_t turns_sum;                     /* actions in the verified segments */
    double delta_se_sum;                    /* standard errors of their deltas */
    double noise_pos_sum;                   /* their chances to be positive by noise alone
                                               (learner/prover_credit.h pv_prover_delta_stats) */
    uint64_t verify_env_steps, verify_tokens;
    uint64_t precision_samples, precision_hits; /* the judge's proposals labelled by the oracle,
                                                   and the pivotal ones (judge/precision.h) */
    uint64_t lag_sum, lag_max; /* learner version - step version, over accepted steps */
    double reward_sum;
    uint64_t dropped_steps; /* environment steps of stale and duplicate groups (spent, unused) */
    uint64_t reused_groups, reused_rows, reused_steps; /* prover.reuse_continuations: the
                                                          verifiers' continuations trained on
                                                          (not in trajectories/won/steps) */
    uint64_t bad_continuations; /* continuation groups that did not fit their trajectory */
    uint64_t labelled_groups;   /* algorithm.triage_labels = llm: groups that came with the
                                   judge model's TRIAGE roles */
    uint64_t labelled_trajs;    /* ... their trajectories with roles */
    uint64_t bad_labels;        /* role entries that did not fit their trajectory (dropped:
                                   the model-free labels for it) */
} pv_intake_stats_t;

/* Every counter of pv_intake_stats_t with how two runs' values merge: X(name, kind), kind
 * SUM_U / SUM_D (uint64_t / double, added), MIN_D / MAX_D (double, over verified segments:
 * the smaller / larger), MAX_U (uint64_t, the larger). For the text form a checkpoint
 * carries (pv_intake_stats_format) and the merge of a resumed run (pv_intake_resume). */
#define PV_INTAKE_STATS_FIELDS(X)                                                                  \
    X(groups, SUM_U)                                                                               \
    X(trajectories, SUM_U)                                                                         \
    X(steps, SUM_U)                                                                                \
    X(won, SUM_U)                                                                                  \
    X(refused, SUM_U)                                                                              \
    X(action_tokens, SUM_U)                                                                        \
    X(malformed, SUM_U)                                                                            \
    X(duplicates, SUM_U)                                                                           \
    X(stale, SUM_U)                                                                                \
    X(bad_segments, SUM_U)                                                                         \
    X(proposals, SUM_U)                                                                            \
    X(segments, SUM_U)                                                                             \
    X(verified, SUM_U)                                                                             \
    X(positive, SUM_U)                                                                             \
    X(delta_sum, SUM_D)                                                                            \
    X(delta_min, MIN_D)                                                                            \
    X(delta_max, MAX_D)                                                                            \
    X(turns_sum, SUM_U)                                                                            \
    X(delta_se_sum, SUM_D)                                                                         \
    X(noise_pos_sum, SUM_D)                                                                        \
    X(verify_env_steps, SUM_U)                                                                     \
    X(verify_tokens, SUM_U)                                                                        \
    X(precision_samples, SUM_U)                                                                    \
    X(precision_hits, SUM_U)                                                                       \
    X(lag_sum, SUM_U)                                                                              \
    X(lag_max, MAX_U)                                                                              \
    X(reward_sum, SUM_D)                                                                           \
    X(dropped_steps, SUM_U)                                                                        \
    X(reused_groups, SUM_U)                                                                        \
    X(reused_rows, SUM_U)                                                                          \
    X(reused_steps, SUM_U)                                                                         \
    X(bad_continuations, SUM_U)                                                                    \
    X(labelled_groups, SUM_U)                                                                      \
    X(labelled_trajs, SUM_U)                                                                       \
    X(bad_labels, SUM_U)

/* Write `s` as text, "name=value" separated by spaces in PV_INTAKE_STATS_FIELDS order
 * (integers in decimal, doubles in C99 hex float, so they read back exactly), into buf
 * (cap bytes). Errors: PV_ERR_LIMIT (cap too small; PV_INTAKE_STATS_TEXT_MAX always fits). */
#define PV_INTAKE_STATS_TEXT_MAX 2048
pv_err_t pv_intake_stats_format(const pv_intake_stats_t *s, char *buf, size_t cap);

/* Read the text pv_intake_stats_format wrote into *out. Counters the text does not name
 * are zero (delta_min 1, delta_max -1: none verified); names it has that are not counters
 * are ignored (a later version's). Errors: PV_ERR_DATA (a token that is not name=value
 * with a number of the field's type), naming it. */
pv_err_t pv_intake_stats_parse(const char *text, pv_intake_stats_t *out, pv_errmsg_t *em);

/* The verified segments of the accepted groups split by the judge that proposed them (the
 * CREDITED_GROUP's `judge`: "contrast", "llm", "contrast-fallback" when the llm judge fell
 * back for that group, ...), so an acceptance rate is the judge's that earned it. At most
 * PV_INTAKE_JUDGES_MAX names; later ones add up under "other". */
#define PV_INTAKE_JUDGES_MAX 8
typedef struct pv_judge_tally {
    char judge[65];
    uint64_t groups;      /* accepted groups it judged */
    uint64_t verified;    /* their verified segments */
    uint64_t positive;    /* ... with delta > 0 */
    uint64_t turns_sum;   /* actions in those segments */
    double noise_pos_sum; /* their chances to be positive by noise alone */
} pv_judge_tally_t;

typedef struct pv_intake pv_intake_t;

/* The per-judge split of the current batch (total false) or of the run (total true; a
 * resumed run's split covers this leg only: checkpoints do not carry it). *n gets the
 * number of judges, in the order first seen. Valid until the next pv_intake_add. */
const pv_judge_tally_t *pv_intake_judges(const pv_intake_t *in, bool total, size_t *n);

/* An intake for batches of at most `max_groups` groups. Errors: PV_ERR_NOMEM. */
pv_err_t pv_intake_new(size_t max_groups, pv_intake_t **out);
void pv_intake_destroy(pv_intake_t **in);

/* What the steps' tokens must be (common/traj/traj_wire.h): PV_TRAJ_CANDIDATE_TOKENS, the
 * default (the candidate scorer), or the learner's language model's vocabulary size
 * (pv_policy_token_space); a group whose tokens do not fit is MALFORMED. */
void pv_intake_set_token_space(pv_intake_t *in, uint32_t token_space);

/* Start a new batch: forget the rows and segments (not the duplicate memory). */
void pv_intake_reset(pv_intake_t *in);

/* Offer one payload. `version` is the learner's current policy version. *verdict says what
 * happened; PV_OK is returned for every verdict (refusals are counted, not errors).
 * Errors: PV_ERR_FULL (the batch already holds max_groups: nothing counted), PV_ERR_NOMEM.
 * `em` gets the reason of a MALFORMED verdict. */
pv_err_t pv_intake_add(pv_intake_t *in, const uint8_t *payload, size_t len, uint64_t version,
                       uint64_t max_lag, pv_intake_verdict_t *verdict, pv_errmsg_t *em);

/* Groups in the current batch. */
size_t pv_intake_groups(const pv_intake_t *in);

/* The batch: trajectories (rows) and verified segments in row coordinates. Valid until
 * the next pv_intake_reset. */
const pv_traj_t *pv_intake_trajs(const pv_intake_t *in, size_t *n);
const pv_verified_seg_t *pv_intake_segments(const pv_intake_t *in, size_t *n);

/* Counters of the current batch and of the whole run (with pv_intake_resume, of every leg
 * of it). */
const pv_intake_stats_t *pv_intake_stats(const pv_intake_t *in);
const pv_intake_stats_t *pv_intake_totals(const pv_intake_t *in);

/* A resumed run: merge `before`, the totals of the legs before this one (from the
 * checkpoint), into the run totals, so that every counter covers the whole run (issue 15,
 * item 7). Call before the first group. */
void pv_intake_resume(pv_intake_t *in, const pv_intake_stats_t *before);

#endif
