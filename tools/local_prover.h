/* local_prover.h - prover-train-local's in-process pipeline: one actor, the judge, the
 * verifiers and the learner in one process, through the roles' own code minus the sockets.
 *
 * Per iteration, learner.batch_groups groups travel the distributed pipeline's path:
 *   actor     actor 0 of 1 (actor/actor_group.h: tasks 0, 1, 2, ... of the training split,
 *             G = actor.group_size episodes each, sampled at actor.temperature from a stream
 *             seeded by run.seed and the group's number; pv_local_set_threads plays several
 *             groups at once), the group
 *             as ROLLOUT_GROUP bytes, with saved states only when the judge works on it;
 *   judge     when the run plan needs one (common/run_plan.h): the bytes decoded, the judge's
 *             state machine (judge/judge_group.h: every judge, per-group proposal seeds, the
 *             verification budget, missing states counted), each VERIFY_JOB run by the
 *             verifier's pv_vjob_run (judge/verify_job.h: per-job seeds) with the current
 *             policy, the results recorded, the CREDITED_GROUP encoded;
 *   learner   the learner's intake (learner/intake.h) takes the CREDITED_GROUP (or the
 *             ROLLOUT_GROUP itself without a judge), then the one advantage entry point
 *             (learner/batch_adv.h) and the PPO update (learner/update.h).
 * Nothing is timed (no deadline ever expires: every job has its result), so a run is
 * deterministic from run.seed; the same groups, judged by prover-judge and prover-verifier
 * processes holding the same weights, are credited identically (tests/tools/test_local_prover.c).
 */
#ifndef PV_TOOLS_LOCAL_PROVER_H
#define PV_TOOLS_LOCAL_PROVER_H

#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"
#include "common/traj/traj.h"
#include "common/wire/wire.h"
#include "judge/judge_group.h"
#include "learner/batch_adv.h"
#include "learner/health.h"
#include "learner/intake.h"
#include "learner/train_cfg.h"
#include "learner/update.h"

typedef struct pv_local pv_local_t;

typedef struct pv_local_stats {
    double success;         /* share of won rollouts in the iteration */
    double mean_len;        /* mean trajectory length (steps) */
    double invalid_rate;    /* share of steps the environment refused ("Nothing happens.") */
    uint64_t action_tokens; /* tokens of the actions played */
    uint64_t groups, mixed; /* groups played; with a success and a failure */
    uint64_t proposals;     /* segments the judge proposed */
    uint64_t verified;      /* segments with both sides verified */
    uint64_t positive;      /* ... with delta > 0 */
    double mean_delta;      /* over verified segments */
    double noise_positive;  /* expected positives by noise alone (pv_prover_delta_stats) */
    uint64_t turns;         /* actions in the verified segments */
    uint64_t precision_samples, precision_hits; /* prover.measure_precision: the oracle's labels */
    size_t n_credited;                          /* token advantages ProVer changed */
    uint64_t reused_rows;      /* continuations trained on (prover.reuse_continuations) */
    pv_cost_t rollout, verify; /* this iteration's costs */
    pv_adv_stats_t adv;        /* the estimator's counts (VICT's rows along a proof, ...) */
    pv_update_stats_t update;
    double play_s, update_s; /* wall time: playing, judging and verifying; the update */
} pv_local_stats_t;

/* The in-process pipeline for `cfg` (copied), training trainer->policy with trainer->adam
 * (borrowed: the same policy acts, verifies and learns). `model` and `env` are borrowed
 * too (one instance serves actor, judge and verifier in turn). Errors: PV_ERR_CONFIG naming
 * a key (pv_train_cfg_from_config), PV_ERR_NOMEM. */
pv_err_t pv_local_new(const pv_config_t *cfg, const pv_env_model_t *model, pv_env_t *env,
                      pv_trainer_t *trainer, pv_local_t **out, pv_errmsg_t *em);
void pv_local_destroy(pv_local_t **L);

/* Play up to n groups of an iteration at once (1 = one after another, the default; at most
 * 16; 1 with the llm judge), each on its own thread with its own environment instance,
 * policy scratch and sampling stream, judged and verified there; the intake takes them in
 * their order. A group's sampling is seeded from run.seed and its number, so the groups,
 * their credit and the update are the same for every n. Errors: PV_ERR_NOMEM. */
pv_err_t pv_local_set_threads(pv_local_t *L, unsigned n, pv_errmsg_t *em);

/* The options it runs with (plan, optimiser, update, advantages, behaviour cloning). */
const pv_train_cfg_t *pv_local_train_cfg(const pv_local_t *L);

/* The learner's intake of the pipeline (borrowed): after pv_local_iteration, the batch's and
 * the run's counters (pv_intake_stats, pv_intake_totals) and acceptance by judge
 * (pv_intake_judges), what learner/report.h writes into metrics.jsonl and the summary. */
const pv_intake_t *pv_local_intake(const pv_local_t *L);

/* The LLM judge's cost so far (prover.judge = llm or TRIAGE's llm labels: requests, tokens,
 * latency, repairs, fallbacks by reason; judge/llm_judge.h's pv_llm_stats_t as the judge
 * role reports it to the broker) into *out, for the summary (learner/report.h llm_cost).
 * Returns false, *out untouched, when the run has no LLM judge; also false when memory for
 * the fallback names ran out (rare; then the summary simply has no llm_judge object). */
bool pv_local_llm_cost(const pv_local_t *L, pv_health_llm_t *out);

/* The judge and its verifiers in this process: one encoded ROLLOUT_GROUP in, what the
 * learner's intake takes out: the CREDITED_GROUP when the plan needs a judge (copied into
 * `out`), else the group's bytes unchanged. `st` (may be NULL) gets the judge's counts.
 * Errors: PV_ERR_DATA (a group the judge refuses), the verifier's and the encoder's. */
pv_err_t pv_local_judge(pv_local_t *L, const uint8_t *group, size_t len, pv_wire_buf_t *out,
                        pv_jg_stats_t *st, pv_errmsg_t *em);

/* One iteration (see above): learner.batch_groups groups, then one PPO update. */
pv_err_t pv_local_iteration(pv_local_t *L, pv_local_stats_t *st, pv_errmsg_t *em);

#endif
