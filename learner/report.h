/* report.h - what the learner tells the user: one JSONL metrics line per iteration and per
 * evaluation (run.out_dir/metrics.jsonl), a one-line progress report on the log, and at the
 * end run.out_dir/summary.json and summary.txt (the human summary).
 *
 * Metrics keys (the plotting and evaluation tools read them by name):
 *   kind "train": iteration, policy_version, wall_s, groups, trajectories, success_rate,
 *     mean_reward, episode_len, rollout_env_steps, verify_env_steps, cum_rollout_env_steps,
 *     cum_verify_env_steps, total_env_steps (rollouts + verification, including the steps of
 *     dropped groups), cum_rollout_tokens, cum_verify_tokens, total_tokens (tokens the policy
 *     generated so far: the accepted groups' action tokens and the verifiers' continuations';
 *     prover-eval's equal-tokens axis), proposals, segments_verified, segments_positive,
 * delta_mean, delta_min, delta_max, acceptance_rate (share of verified segments with delta > 0: the
 *     judge's health; the paper reports 0.195 for random segments, 0.585-0.724 for LLM
 *     judges), acceptance_rate_noise (the share expected by noise alone,
 *     pv_prover_delta_stats), segment_turns (mean actions per verified segment), delta_se
 *     (mean standard error of delta), reused_groups and reused_rows (continuation groups and
 *     trajectories trained on, prover.reuse_continuations), policy_lag_mean, policy_lag_max,
 * dropped_stale, dropped_duplicate, malformed (run totals), env_steps_per_s, loss, pg_loss, kl,
 *     entropy, clip_frac, grad_norm, policy_lag_hist ({bucket: {tokens, clipped, clip_frac}} for
 *     the lag buckets "0", "1", "2", "3", "4-7", "8-15", "16+" with tokens: the update's trained
 *     tokens by learner version - behaviour version, and the PPO clip fraction of each;
 *     update.h pv_lag_hist_t), invalid_action_rate (share of the batch's steps whose
 *     action the environment refused, "Nothing happens.": verl-agent's invalid actions),
 *     action_tokens (tokens of the batch's actions), logprob_mismatch and
 *     logprob_mismatch_max (mean and largest |training - behaviour log-prob| over the
 *     mismatch_tokens tokens acted with the learner's current version: verl's rollout/training
 *     mismatch, ~1e-6 when both come from the same code; null when no token had that version),
 *     judge_precision (pivotal / labelled proposals of the
 *     batch by the oracle, prover.measure_precision; null when none was labelled),
 *     precision_samples, acceptance_by_judge ({judge: {verified, positive, acceptance_rate,
 *     acceptance_rate_noise, segment_turns}} of the batch, split by the judge that proposed:
 *     "llm" and "contrast-fallback" under prover.judge = llm), gigpo_step_group_size (GiGPO: step
 * rows per anchor-state group, verl-agent's "Avg size of step-level group"; null for other
 * estimators), gigpo_grouped_share (GiGPO: share of steps whose anchor state another step of the
 *     group shares, i.e. with a step advantage; null otherwise; both also for PGPO's anchor
 *     groups), spopp_tasks and spopp_baseline (SPO++: tasks with a value, mean baseline of
 *     the batch's rows; null for other estimators), vict_rows_proof, vict_rows_no_proof,
 *     vict_rows_untraced, vict_rows_failed (VICT: rows whose advantage went along their proof,
 *     rows that had none, rows without atom traces, failures kept whole), vict_proof_share (proof
 * steps / steps of the rows redistributed), vict_trace_dropped (trace entries the environment left
 * out; all null for other estimators), triage_turns_llm and triage_turns_model_free (TRIAGE: the
 * batch's turns whose role came from the judge's model, algorithm.triage_labels = llm, and the
 * turns given the model-free label: every turn with triage_labels = env, the fallback with llm),
 * triage_roles ({decisive, exploration, no_progress, regression}: the roles given), all null for
 * other estimators, and triage_labelled_groups, triage_bad_labels (the batch's groups that came
 * with the model's roles, role entries dropped as not fitting their trajectory); kind "eval":
 * iteration, policy_version, wall_s, success_rate (greedy, held-out tasks), success_rate_sampled
 * (the same tasks, actions sampled at learner.eval_temperature), eval_tasks, eval_split ("test", or
 * "train" for learner.eval_split = train), total_env_steps, cum_rollout_env_steps,
 * cum_verify_env_steps, cum_rollout_tokens, cum_verify_tokens, total_tokens.
 */
#ifndef PV_LEARNER_REPORT_H
#define PV_LEARNER_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/metrics.h"
#include "learner/triage_adv.h"
#include "learner/vict.h"
#include "common/traj/episodes.h"
#include "learner/batch_adv.h"
#include "learner/health.h"
#include "learner/intake.h"
#include "learner/update.h"

/* One held-out evaluation over learner.eval_tasks test tasks: success rates in [0, 1], the
 * score (mean final reward x 100, WebShop's standard number; NaN when not known, e.g. read
 * back from an older metrics.jsonl) and the greedy success per task type. */
typedef struct pv_eval_result {
    double greedy;  /* argmax action at every step */
    double sampled; /* actions sampled from the policy (temperature 1), as in training */
    double score, score_sampled;
    uint32_t n_types; /* greedy episodes per pv_env_task_type (ALFWorld's six) */
    pv_eval_type_t types[PV_EVAL_MAX_TYPES];
    bool seen_kinds; /* the greedy pass's split was the train split (learner.eval_split =
                      * train: new games of the training task kinds); the eval line's
                      * "eval_split": "train", else "test" */
} pv_eval_result_t;

/* The evaluation result of a greedy and a sampled pass over the same tasks. */
void pv_report_eval_result(const pv_eval_detail_t *greedy, const pv_eval_detail_t *sampled,
                           pv_eval_result_t *out);

/* Cumulative counters of a run. */
typedef struct pv_run_totals {
    uint64_t rollout_env_steps; /* accepted and dropped groups */
    uint64_t verify_env_steps;
    /* tokens the policy generated: the accepted groups' action tokens (a dropped group's are
     * not known to the learner) and the verifiers' continuations' (one per action for a
     * policy without tokens) */
    uint64_t rollout_tokens, verify_tokens;
    double wall_s;
    pv_eval_result_t eval_first, eval_last; /* held-out success; greedy < 0 until measured */
    double train_first, train_last; /* mean training success of the first / last 10 iterations */
    double train_recent[10];        /* training success of iteration i (0-based) at [i % 10] */
    uint64_t train_n;               /* iterations whose training success went into train_recent */
    uint64_t iterations;
    uint64_t iterations_planned; /* run.iterations */
    /* how the run ended: "completed" (run.iterations reached), "time_limit" (run.time_limit_s),
     * "failed" (a stall, a lost role: `reason` says which); NULL = "completed" */
    const char *outcome;
    char reason[1024]; /* why it failed or stopped early; "" when completed */
    /* GiGPO, the last batch (learner/gigpo_batch.h's pv_gigpo_stats_t): step rows, anchor-state
     * groups, steps in a group of two or more; all 0 for other estimators */
    size_t gigpo_steps, gigpo_step_groups, gigpo_grouped_steps;
    /* SPO++, the last batch (learner/spopp.h's pv_spopp_stats_t); tasks 0 for others */
    size_t spopp_tasks;
    double spopp_baseline;
    /* VICT, the last batch (learner/vict.h's pv_vict_stats_t); all 0 for other estimators */
    pv_vict_stats_t vict;
    /* TRIAGE, the last batch (learner/triage_adv.h's pv_triage_stats_t) and this process's
     * iterations summed (a resumed run's start again); all 0 for other estimators */
    pv_triage_stats_t triage, triage_run;
    const pv_health_t *health; /* the broker's books (learner/health.h), or NULL */
    /* the LLM judge's cost when not in health's books (prover-train-local's own judge), or
     * NULL */
    const pv_health_llm_t *llm_cost;
    /* acceptance split by the judge that proposed (learner/intake.h pv_intake_judges): of the
     * batch (the train line) and of the run (the summary); NULL / 0 = none */
    const pv_judge_tally_t *judges_batch, *judges_run;
    size_t n_judges_batch, n_judges_run;
    pv_lag_hist_t lag_hist; /* the updates' policy-lag histograms summed (update.h; this
                               process's iterations: a resumed run's starts again) */
    const char *run_name;   /* pv_config_run_name, first on the progress line; NULL: none */
    bool quiet; /* write the metrics lines without logging them (prover-train-local prints
                   its own progress lines) */
} pv_run_totals_t;

/* What a resumed run takes over from the run that wrote its checkpoint, read back from that
 * run's metrics.jsonl, so its counters, curves and summary continue instead of restarting
 * at zero. Only lines of iterations 1 .. step count (a crashed run may have gone further
 * than its last checkpoint). */
typedef struct pv_run_history {
    uint64_t rollout_env_steps, verify_env_steps; /* cum_* of the last train line */
    uint64_t rollout_tokens, verify_tokens;       /* cum_*_tokens of the last train line */
    double wall_s;                                /* its wall_s */
    pv_eval_result_t eval_first, eval_last;       /* greedy < 0 when there was none */
    int64_t eval_last_iteration;                  /* -1 when there was none */
    double train_first; /* mean success_rate of the first 10 train lines; < 0: none */
    double recent[10];  /* success_rate of train line i (0-based) at recent[i % 10] */
    uint64_t n_train;   /* train lines read */
    uint64_t bad_lines; /* lines that were not JSON objects (skipped) */
} pv_run_history_t;

/* The mean of train_recent over its last min(train_n, 10) iterations (train_n > 0). */
double pv_report_train_mean(const pv_run_totals_t *run);

/* After the update of iteration `iteration`: take into *run the iteration count, the
 * environment steps and generated tokens of the intake's run totals (rollouts with the
 * dropped groups', verification; a resumed run's caller adds its earlier legs'), the
 * update's policy-lag histogram, the batch's training success into train_recent with
 * train_last and (over the first 10 iterations) train_first, and the judges' acceptance of
 * the batch and of the run. wall_s stays the caller's. */
void pv_report_take_iteration(pv_run_totals_t *run, const pv_intake_t *in, uint64_t iteration,
                              const pv_lag_hist_t *lag);

/* Take the estimator's counts of the batch just built (pv_batch_advantages' *as) into *run:
 * the last batch's GiGPO, SPO++, VICT and TRIAGE statistics, and TRIAGE's summed over the
 * run (run->triage_run). */
void pv_report_adv_stats(pv_run_totals_t *run, const pv_adv_stats_t *as);

/* Read `metrics_path` up to iteration `step` into *h. An eval line without
 * success_rate_sampled (written before it existed) gives sampled = -1.
 * Errors: PV_ERR_IO (the file cannot be read; *h is then empty), PV_ERR_NOMEM. */
pv_err_t pv_report_history(const char *metrics_path, uint64_t step, pv_run_history_t *h,
                           pv_errmsg_t *em);

/* Write the "train" line of one iteration and log its progress line (unless run->quiet). */
pv_err_t pv_report_iteration(pv_metrics_t *m, uint64_t iteration, uint64_t iterations,
                             uint64_t version, const pv_intake_stats_t *batch,
                             const pv_intake_stats_t *totals, const pv_update_stats_t *up,
                             const pv_run_totals_t *run);

/* Write the "eval" line (success_rate = r->greedy, success_rate_sampled = r->sampled) and
 * log it (unless run->quiet). Errors: the metrics writer's. */
pv_err_t pv_report_eval(pv_metrics_t *m, uint64_t iteration, uint64_t version,
                        const pv_eval_result_t *r, uint64_t n_tasks, const pv_run_totals_t *run);

/* Write dir/summary.json (how the run ended: outcome, reason, iterations of
 * iterations_planned; the run's totals, among them judge_precision and precision_samples over
 * the whole run, proposals, segments_verified and segments_unverified (proposals without a
 * verified delta: over prover.verify_budget, past prover.verify_timeout_ms, failed, or not
 * fitting their trajectory; summary.txt says so on a line of its own when there are any), and
 * the train line's triage_* keys over this process's iterations (run->triage_run) with the
 * intake totals' labelled groups and bad labels; summary.txt gets a "triage labels" line when
 * TRIAGE labelled a turn) and the human summary dir/summary.txt; *text receives that summary
 * (malloc'd: the caller prints and frees it; NULL when it could not be built). `cfg_env`,
 * `estimator`, `judge` name the run. Errors: PV_ERR_IO (naming the file), PV_ERR_NOMEM. */
pv_err_t pv_report_summary(const char *dir, const char *cfg_env, const char *estimator,
                           const char *judge, const pv_intake_stats_t *totals,
                           const pv_run_totals_t *run, char **text, pv_errmsg_t *em);

#endif
