/* llm_role.h - what the judge role and prover-train-local's in-process judge share about
 * prover.judge = llm (judge/llm_judge.h): the group they ask the model about, the judge a
 * result is credited to, and the cost report.
 *
 * The cost goes to the broker as RUN_STATUS with source "judge" (broker/run_status.h): the
 * broker serves it in prover-stats and /metrics, and the learner writes it into
 * metrics.jsonl ("llm_judge" lines) and summary.json ("llm_judge"), so a run's results say
 * what its judge cost.
 */
#ifndef PV_JUDGE_LLM_ROLE_H
#define PV_JUDGE_LLM_ROLE_H

#include "common/arena.h"
#include "common/err.h"
#include "common/wire/wire.h"
#include "judge/judge_group.h"
#include "judge/llm_judge.h"

/* The question for group g, opened with g->awaiting (pv_jgroup_open under prover.judge =
 * llm, or algorithm.triage_labels = llm: then label_turns with g->roles): its id, goal,
 * trajectories and the proposer's views (borrowed from g: keep g unchanged until the result is
 * taken), the run's proposal options for the contrast fallback, the fallback's seed
 * pv_judge_seed(o->run_seed, group_id), and `deadline_ms` (pv_mono_ms time; 0 =
 * judge.group_timeout_ms from submission). */
pv_llm_group_t pv_jgroup_llm_group(const pv_jgroup_t *g, const pv_jg_opts_t *o,
                                   uint64_t deadline_ms);

/* The CREDITED_GROUP judge of a labelling group (algorithm.triage_labels = llm) whose model
 * gave no labels (any fallback): its turns get the learner's model-free labels. */
#define PV_JUDGE_LABELS_FALLBACK_NAME "model-free-fallback"

/* The CREDITED_GROUP judge of a finished labelling group: "llm" for the model's labels,
 * PV_JUDGE_LABELS_FALLBACK_NAME after a fallback. */
const char *pv_llm_labels_judge(const pv_llm_result_t *r);

/* The CREDITED_GROUP judge of a finished group: "llm" for the model's segment,
 * PV_JUDGE_FALLBACK_NAME ("contrast-fallback") when it fell back for any reason. */
const char *pv_llm_result_judge(const pv_llm_result_t *r);

/* The RUN_STATUS of `st` (cumulative since the judge started): groups, answered, requests,
 * prompt and completion tokens, latency p50/p99 (ms, last 1024 requests), repairs, tool
 * calls, and fallbacks by reason (pv_llm_fallback_name: every reason but NONE, zeros
 * included). `run` (borrowed, may be NULL) names the run. Arrays come from `arena`.
 * Errors: PV_ERR_NOMEM. */
pv_err_t pv_llm_status(const pv_llm_stats_t *st, const char *run, pv_arena_t *arena,
                       pv_wire_run_status_t *out);

#endif
