/* report.c - see report.h. */
#include "learner/report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/traj/triage.h"

static double s_div(double a, double b)
{
    return b > 0 ? a / b : 0.0;
}

/* Proposals that came back without a verified delta (proposals - verified, never below 0). */
static uint64_t s_unverified(const pv_intake_stats_t *t)
{
    return t->proposals > t->verified ? t->proposals - t->verified : 0;
}

/* judge_precision (NaN when nothing was labelled) and precision_samples of `s`. */
static void s_set_precision(json_t *o, const pv_intake_stats_t *s)
{
    pv_metrics_set_real(
        o, "judge_precision",
        s->precision_samples ? (double)s->precision_hits / (double)s->precision_samples : NAN);
    json_object_set_new(o, "precision_samples", json_integer((json_int_t)s->precision_samples));
}

typedef struct s_history_ctx {
    pv_run_history_t *h;
    uint64_t step;
    double first_sum;
} s_history_ctx_t;

static pv_err_t s_history_line(const json_t *o, size_t lineno, const char *why, void *ctx_)
{
    (void)lineno, (void)why;
    s_history_ctx_t *ctx = ctx_;
    pv_run_history_t *h = ctx->h;
    if (!o) {
        h->bad_lines++;
        return PV_OK;
    }
    const char *kind = json_string_value(json_object_get(o, "kind"));
    double it = pv_metrics_num(o, "iteration", -1);
    if (!kind || it < 0 || it > (double)ctx->step)
        return PV_OK;
    if (strcmp(kind, "train") == 0) {
        double sr = pv_metrics_num(o, "success_rate", 0);
        h->rollout_env_steps = (uint64_t)pv_metrics_num(o, "cum_rollout_env_steps", 0);
        h->verify_env_steps = (uint64_t)pv_metrics_num(o, "cum_verify_env_steps", 0);
        h->rollout_tokens = (uint64_t)pv_metrics_num(o, "cum_rollout_tokens", 0);
        h->verify_tokens = (uint64_t)pv_metrics_num(o, "cum_verify_tokens", 0);
        h->wall_s = pv_metrics_num(o, "wall_s", h->wall_s);
        if (h->n_train < 10) {
            ctx->first_sum += sr;
            h->train_first = ctx->first_sum / (double)(h->n_train + 1);
        }
        h->recent[h->n_train++ % 10] = sr;
    } else if (strcmp(kind, "eval") == 0) {
        pv_eval_result_t r = {.greedy = pv_metrics_num(o, "success_rate", 0),
                              .sampled = pv_metrics_num(o, "success_rate_sampled", -1),
                              .score = pv_metrics_num(o, "score", NAN),
                              .score_sampled = pv_metrics_num(o, "score_sampled", NAN)};
        if (h->eval_first.greedy < 0)
            h->eval_first = r;
        h->eval_last = r;
        h->eval_last_iteration = (int64_t)it;
    }
    return PV_OK;
}

pv_err_t pv_report_history(const char *metrics_path, uint64_t step, pv_run_history_t *h,
                           pv_errmsg_t *em)
{
    static const pv_run_history_t none = {.eval_first = {.greedy = -1, .sampled = -1},
                                          .eval_last = {.greedy = -1, .sampled = -1},
                                          .eval_last_iteration = -1,
                                          .train_first = -1};
    *h = none;
    s_history_ctx_t ctx = {.h = h, .step = step};
    pv_err_t rc = pv_metrics_read(metrics_path, s_history_line, &ctx, em);
    if (rc != PV_OK)
        *h = none;
    return rc;
}

/* The judge's health (proposer.h, prover_credit.h): acceptance_rate = the share of verified
 * segments with a positive delta, acceptance_rate_noise = the share expected by noise alone,
 * segment_turns and delta_se means; null without verified segments. */
static void s_set_acceptance(json_t *o, const pv_intake_stats_t *b)
{
    double n = (double)b->verified;
    pv_metrics_set_real(o, "acceptance_rate", n > 0 ? (double)b->positive / n : NAN);
    pv_metrics_set_real(o, "acceptance_rate_noise", n > 0 ? b->noise_pos_sum / n : NAN);
    pv_metrics_set_real(o, "segment_turns", n > 0 ? (double)b->turns_sum / n : NAN);
    pv_metrics_set_real(o, "delta_se", n > 0 ? b->delta_se_sum / n : NAN);
}

/* {judge: {verified, positive, acceptance_rate, acceptance_rate_noise, segment_turns}} of
 * the judges with a verified segment (rates null without one). */
static json_t *s_judges_json(const pv_judge_tally_t *j, size_t n)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < n; i++) {
        double v = (double)j[i].verified;
        json_t *x = json_object();
        json_object_set_new(x, "groups", json_integer((json_int_t)j[i].groups));
        json_object_set_new(x, "verified", json_integer((json_int_t)j[i].verified));
        json_object_set_new(x, "positive", json_integer((json_int_t)j[i].positive));
        pv_metrics_set_real(x, "acceptance_rate", v > 0 ? (double)j[i].positive / v : NAN);
        pv_metrics_set_real(x, "acceptance_rate_noise", v > 0 ? j[i].noise_pos_sum / v : NAN);
        pv_metrics_set_real(x, "segment_turns", v > 0 ? (double)j[i].turns_sum / v : NAN);
        json_object_set_new(o, j[i].judge, x);
    }
    return o;
}

/* {bucket: {tokens, clipped, clip_frac}} of the buckets that hold tokens. */
static json_t *s_lag_json(const pv_lag_hist_t *h)
{
    json_t *o = json_object();
    for (unsigned k = 0; o && k < PV_LAG_BUCKETS; k++) {
        if (!h->tokens[k])
            continue;
        json_t *x = json_object();
        json_object_set_new(x, "tokens", json_integer((json_int_t)h->tokens[k]));
        json_object_set_new(x, "clipped", json_integer((json_int_t)h->clipped[k]));
        pv_metrics_set_real(x, "clip_frac", (double)h->clipped[k] / (double)h->tokens[k]);
        json_object_set_new(o, pv_lag_bucket_name(k), x);
    }
    return o;
}

/* TRIAGE's counts (null for other estimators: no turn was labelled). */
static void s_set_triage(json_t *o, const pv_triage_stats_t *tr, const pv_intake_stats_t *in)
{
    bool any = tr->judged + tr->model_free > 0;
    json_object_set_new(o, "triage_turns_llm",
                        any ? json_integer((json_int_t)tr->judged) : json_null());
    json_object_set_new(o, "triage_turns_model_free",
                        any ? json_integer((json_int_t)tr->model_free) : json_null());
    json_t *roles = any ? json_object() : json_null();
    for (unsigned r = 0; any && r < 4; r++)
        json_object_set_new(roles, pv_triage_role_name((pv_triage_role_t)r),
                            json_integer((json_int_t)tr->roles[r]));
    json_object_set_new(o, "triage_roles", roles);
    json_object_set_new(o, "triage_labelled_groups", json_integer((json_int_t)in->labelled_groups));
    json_object_set_new(o, "triage_bad_labels", json_integer((json_int_t)in->bad_labels));
}

/* The run's cumulative environment steps and generated tokens, rollouts and verification
 * (the budget axes of prover-eval), on a train or eval line. */
static void s_set_totals(json_t *o, const pv_run_totals_t *run)
{
    json_object_set_new(o, "cum_rollout_env_steps",
                        json_integer((json_int_t)run->rollout_env_steps));
    json_object_set_new(o, "cum_verify_env_steps", json_integer((json_int_t)run->verify_env_steps));
    json_object_set_new(o, "total_env_steps",
                        json_integer((json_int_t)(run->rollout_env_steps + run->verify_env_steps)));
    json_object_set_new(o, "cum_rollout_tokens", json_integer((json_int_t)run->rollout_tokens));
    json_object_set_new(o, "cum_verify_tokens", json_integer((json_int_t)run->verify_tokens));
    json_object_set_new(o, "total_tokens",
                        json_integer((json_int_t)(run->rollout_tokens + run->verify_tokens)));
}

double pv_report_train_mean(const pv_run_totals_t *run)
{
    size_t n = run->train_n < 10 ? (size_t)run->train_n : 10;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += run->train_recent[i];
    return n ? sum / (double)n : 0.0;
}

void pv_report_take_iteration(pv_run_totals_t *run, const pv_intake_t *in, uint64_t iteration,
                              const pv_lag_hist_t *lag)
{
    const pv_intake_stats_t *b = pv_intake_stats(in), *t = pv_intake_totals(in);
    run->iterations = iteration;
    run->rollout_env_steps = t->steps + t->dropped_steps;
    run->verify_env_steps = t->verify_env_steps;
    run->rollout_tokens = t->action_tokens;
    run->verify_tokens = t->verify_tokens;
    pv_lag_hist_add(&run->lag_hist, lag);
    /* the summary's training success: means over the first and the last 10 iterations (one
     * batch is too noisy to quote) */
    run->train_recent[run->train_n++ % 10] = s_div((double)b->won, (double)b->trajectories);
    run->train_last = pv_report_train_mean(run);
    if (run->train_n <= 10)
        run->train_first = run->train_last;
    run->judges_batch = pv_intake_judges(in, false, &run->n_judges_batch);
    run->judges_run = pv_intake_judges(in, true, &run->n_judges_run);
}

void pv_report_adv_stats(pv_run_totals_t *run, const pv_adv_stats_t *as)
{
    run->gigpo_step_groups = as->gigpo.step_groups;
    run->gigpo_steps = as->gigpo.steps;
    run->gigpo_grouped_steps = as->gigpo.grouped_steps;
    run->spopp_tasks = as->spopp.tasks;
    run->spopp_baseline = as->spopp.mean_baseline;
    run->vict = as->vict;
    run->triage = as->triage;
    run->triage_run.judged += as->triage.judged;
    run->triage_run.model_free += as->triage.model_free;
    for (unsigned r = 0; r < 4; r++)
        run->triage_run.roles[r] += as->triage.roles[r];
}

pv_err_t pv_report_iteration(pv_metrics_t *m, uint64_t iteration, uint64_t iterations,
                             uint64_t version, const pv_intake_stats_t *b,
                             const pv_intake_stats_t *t, const pv_update_stats_t *up,
                             const pv_run_totals_t *run)
{
    double success = s_div((double)b->won, (double)b->trajectories);
    double lag_mean = s_div((double)b->lag_sum, (double)b->steps);
    uint64_t total = run->rollout_env_steps + run->verify_env_steps;
    double rate = s_div((double)total, run->wall_s);
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string("train"));
    json_object_set_new(o, "iteration", json_integer((json_int_t)iteration));
    json_object_set_new(o, "policy_version", json_integer((json_int_t)version));
    pv_metrics_set_real(o, "wall_s", run->wall_s);
    json_object_set_new(o, "groups", json_integer((json_int_t)b->groups));
    json_object_set_new(o, "trajectories", json_integer((json_int_t)b->trajectories));
    pv_metrics_set_real(o, "success_rate", success);
    pv_metrics_set_real(o, "mean_reward", s_div(b->reward_sum, (double)b->trajectories));
    pv_metrics_set_real(o, "episode_len", s_div((double)b->steps, (double)b->trajectories));
    json_object_set_new(o, "rollout_env_steps",
                        json_integer((json_int_t)(b->steps + b->dropped_steps)));
    json_object_set_new(o, "verify_env_steps", json_integer((json_int_t)b->verify_env_steps));
    s_set_totals(o, run);
    json_object_set_new(o, "proposals", json_integer((json_int_t)b->proposals));
    json_object_set_new(o, "segments_verified", json_integer((json_int_t)b->verified));
    json_object_set_new(o, "segments_positive", json_integer((json_int_t)b->positive));
    pv_metrics_set_real(o, "delta_mean", b->verified ? b->delta_sum / (double)b->verified : NAN);
    pv_metrics_set_real(o, "delta_min", b->verified ? b->delta_min : NAN);
    pv_metrics_set_real(o, "delta_max", b->verified ? b->delta_max : NAN);
    s_set_acceptance(o, b);
    json_object_set_new(o, "acceptance_by_judge",
                        s_judges_json(run->judges_batch, run->n_judges_batch));
    json_object_set_new(o, "reused_groups", json_integer((json_int_t)b->reused_groups));
    json_object_set_new(o, "reused_rows", json_integer((json_int_t)b->reused_rows));
    pv_metrics_set_real(o, "policy_lag_mean", lag_mean);
    json_object_set_new(o, "policy_lag_max", json_integer((json_int_t)b->lag_max));
    json_object_set_new(o, "dropped_stale", json_integer((json_int_t)t->stale));
    json_object_set_new(o, "dropped_duplicate", json_integer((json_int_t)t->duplicates));
    json_object_set_new(o, "malformed", json_integer((json_int_t)t->malformed));
    pv_metrics_set_real(o, "env_steps_per_s", rate);
    pv_metrics_set_real(o, "loss", up->loss);
    pv_metrics_set_real(o, "pg_loss", up->pg_loss);
    pv_metrics_set_real(o, "kl", up->kl);
    pv_metrics_set_real(o, "entropy", up->entropy);
    pv_metrics_set_real(o, "clip_frac", up->pg_clipfrac);
    json_object_set_new(o, "policy_lag_hist", s_lag_json(&up->lag));
    pv_metrics_set_real(o, "grad_norm", up->grad_norm);
    pv_metrics_set_real(o, "invalid_action_rate", s_div((double)b->refused, (double)b->steps));
    json_object_set_new(o, "action_tokens", json_integer((json_int_t)b->action_tokens));
    pv_metrics_set_real(o, "logprob_mismatch", up->mismatch_tokens ? up->mismatch_mean : NAN);
    pv_metrics_set_real(o, "logprob_mismatch_max", up->mismatch_tokens ? up->mismatch_max : NAN);
    json_object_set_new(o, "mismatch_tokens", json_integer((json_int_t)up->mismatch_tokens));
    s_set_precision(o, b);
    bool gigpo = run->gigpo_step_groups > 0;
    pv_metrics_set_real(o, "gigpo_step_group_size",
                        gigpo ? (double)run->gigpo_steps / (double)run->gigpo_step_groups : NAN);
    pv_metrics_set_real(o, "gigpo_grouped_share",
                        gigpo ? (double)run->gigpo_grouped_steps / (double)run->gigpo_steps : NAN);
    pv_metrics_set_real(o, "spopp_tasks", run->spopp_tasks ? (double)run->spopp_tasks : NAN);
    pv_metrics_set_real(o, "spopp_baseline", run->spopp_tasks ? run->spopp_baseline : NAN);
    const pv_vict_stats_t *v = &run->vict;
    bool vict = v->rows_proof + v->rows_no_proof + v->rows_untraced + v->rows_failed > 0;
    const struct {
        const char *key;
        size_t n;
    } vk[] = {{"vict_rows_proof", v->rows_proof},
              {"vict_rows_no_proof", v->rows_no_proof},
              {"vict_rows_untraced", v->rows_untraced},
              {"vict_rows_failed", v->rows_failed},
              {"vict_trace_dropped", v->dropped}};
    for (size_t k = 0; k < sizeof vk / sizeof vk[0]; k++)
        pv_metrics_set_real(o, vk[k].key, vict ? (double)vk[k].n : NAN);
    pv_metrics_set_real(o, "vict_proof_share",
                        v->steps ? (double)v->proof_steps / (double)v->steps : NAN);
    s_set_triage(o, &run->triage, b);
    pv_err_t err = pv_metrics_write(m, o);
    json_decref(o);
    if (run->quiet)
        return err;
    char delta[64] = "-";
    if (b->verified)
        snprintf(delta, sizeof delta, "%+.2f, accepted %.0f%%, run %.0f%%",
                 b->delta_sum / (double)b->verified,
                 100.0 * (double)b->positive / (double)b->verified,
                 100.0 * s_div((double)t->positive, (double)t->verified));
    PV_LOG_INFO(
        "%s%siter %llu/%llu | success %.2f | reward %.2f | len %.1f | steps: rollout %llu "
        "verify %llu (%.0f%%) | segments %llu/%llu (+%llu, mean delta %s) | lag %.1f "
        "| %.0f steps/s | v%llu",
        run->run_name ? run->run_name : "", run->run_name ? " " : "", (unsigned long long)iteration,
        (unsigned long long)iterations, success, s_div(b->reward_sum, (double)b->trajectories),
        s_div((double)b->steps, (double)b->trajectories),
        (unsigned long long)run->rollout_env_steps, (unsigned long long)run->verify_env_steps,
        100.0 * s_div((double)run->verify_env_steps, (double)total),
        (unsigned long long)b->verified, (unsigned long long)b->proposals,
        (unsigned long long)b->positive, delta, lag_mean, rate, (unsigned long long)version);
    return err;
}

void pv_report_eval_result(const pv_eval_detail_t *greedy, const pv_eval_detail_t *sampled,
                           pv_eval_result_t *out)
{
    memset(out, 0, sizeof *out);
    double ng = (double)greedy->n, ns = (double)sampled->n;
    out->greedy = greedy->n ? (double)greedy->wins / ng : 0.0;
    out->sampled = sampled->n ? (double)sampled->wins / ns : 0.0;
    out->score = greedy->n ? 100.0 * greedy->reward_sum / ng : NAN;
    out->score_sampled = sampled->n ? 100.0 * sampled->reward_sum / ns : NAN;
    out->seen_kinds = greedy->split == PV_SPLIT_TRAIN;
    out->n_types = greedy->n_types;
    memcpy(out->types, greedy->types, sizeof out->types);
}

/* {type: {"n": episodes, "success": rate}} of the greedy evaluation (new reference). */
static json_t *s_types_json(const pv_eval_result_t *r)
{
    json_t *o = json_object();
    for (uint32_t i = 0; i < r->n_types; i++) {
        const pv_eval_type_t *t = &r->types[i];
        json_t *x = json_object();
        json_object_set_new(x, "n", json_integer((json_int_t)t->n));
        pv_metrics_set_real(x, "success", t->n ? (double)t->wins / (double)t->n : NAN);
        json_object_set_new(o, t->name, x);
    }
    return o;
}

pv_err_t pv_report_eval(pv_metrics_t *m, uint64_t iteration, uint64_t version,
                        const pv_eval_result_t *r, uint64_t n_tasks, const pv_run_totals_t *run)
{
    json_t *o = json_object();
    json_object_set_new(o, "kind", json_string("eval"));
    json_object_set_new(o, "iteration", json_integer((json_int_t)iteration));
    json_object_set_new(o, "policy_version", json_integer((json_int_t)version));
    pv_metrics_set_real(o, "wall_s", run->wall_s);
    pv_metrics_set_real(o, "success_rate", r->greedy);
    pv_metrics_set_real(o, "success_rate_sampled", r->sampled);
    pv_metrics_set_real(o, "score", r->score);
    pv_metrics_set_real(o, "score_sampled", r->score_sampled);
    if (r->n_types)
        json_object_set_new(o, "success_by_type", s_types_json(r));
    json_object_set_new(o, "eval_tasks", json_integer((json_int_t)n_tasks));
    json_object_set_new(o, "eval_split", json_string(r->seen_kinds ? "train" : "test"));
    s_set_totals(o, run);
    pv_err_t err = pv_metrics_write(m, o);
    json_decref(o);
    if (run->quiet)
        return err;
    PV_LOG_INFO("eval at iteration %llu: held-out success greedy %.3f, sampled %.3f; score "
                "%.1f, sampled %.1f on %llu tasks (v%llu)",
                (unsigned long long)iteration, r->greedy, r->sampled, r->score, r->score_sampled,
                (unsigned long long)n_tasks, (unsigned long long)version);
    return err;
}

/* The LLM judge's cost: the run's own (prover-train-local), else the broker's last report. */
static const pv_health_llm_t *s_llm_cost(const pv_run_totals_t *run)
{
    if (run->llm_cost)
        return run->llm_cost;
    return run->health && run->health->has_llm ? &run->health->llm : NULL;
}

pv_err_t pv_report_summary(const char *dir, const char *cfg_env, const char *estimator,
                           const char *judge, const pv_intake_stats_t *t,
                           const pv_run_totals_t *run, char **text_out, pv_errmsg_t *em)
{
    char path[4096];
    *text_out = NULL;
    snprintf(path, sizeof path, "%s/summary.json", dir);
    uint64_t total = run->rollout_env_steps + run->verify_env_steps;
    json_t *o = json_object();
    json_object_set_new(o, "env", json_string(cfg_env));
    json_object_set_new(o, "adv_estimator", json_string(estimator));
    json_object_set_new(o, "judge", json_string(judge));
    const char *outcome = run->outcome ? run->outcome : "completed";
    json_object_set_new(o, "outcome", json_string(outcome));
    json_object_set_new(o, "reason", json_string(run->reason));
    json_object_set_new(o, "iterations", json_integer((json_int_t)run->iterations));
    json_object_set_new(o, "iterations_planned", json_integer((json_int_t)run->iterations_planned));
    bool evaluated = run->eval_first.greedy >= 0;
    pv_metrics_set_real(o, "eval_success_before", evaluated ? run->eval_first.greedy : NAN);
    pv_metrics_set_real(o, "eval_success_after", evaluated ? run->eval_last.greedy : NAN);
    pv_metrics_set_real(o, "eval_sampled_success_before",
                        evaluated ? run->eval_first.sampled : NAN);
    pv_metrics_set_real(o, "eval_sampled_success_after", evaluated ? run->eval_last.sampled : NAN);
    pv_metrics_set_real(o, "eval_score_before", evaluated ? run->eval_first.score : NAN);
    pv_metrics_set_real(o, "eval_score_after", evaluated ? run->eval_last.score : NAN);
    pv_metrics_set_real(o, "eval_sampled_score_before",
                        evaluated ? run->eval_first.score_sampled : NAN);
    pv_metrics_set_real(o, "eval_sampled_score_after",
                        evaluated ? run->eval_last.score_sampled : NAN);
    if (evaluated && run->eval_last.n_types)
        json_object_set_new(o, "eval_success_by_type_after", s_types_json(&run->eval_last));
    pv_metrics_set_real(o, "train_success_first", run->train_first >= 0 ? run->train_first : NAN);
    pv_metrics_set_real(o, "train_success_last", run->train_last >= 0 ? run->train_last : NAN);
    json_object_set_new(o, "rollout_env_steps", json_integer((json_int_t)run->rollout_env_steps));
    json_object_set_new(o, "verify_env_steps", json_integer((json_int_t)run->verify_env_steps));
    pv_metrics_set_real(o, "verify_share", s_div((double)run->verify_env_steps, (double)total));
    json_object_set_new(o, "policy_lag_hist", s_lag_json(&run->lag_hist));
    json_object_set_new(o, "groups", json_integer((json_int_t)t->groups));
    json_object_set_new(o, "proposals", json_integer((json_int_t)t->proposals));
    json_object_set_new(o, "segments_verified", json_integer((json_int_t)t->verified));
    json_object_set_new(o, "segments_unverified", json_integer((json_int_t)s_unverified(t)));
    json_object_set_new(o, "segments_positive", json_integer((json_int_t)t->positive));
    s_set_acceptance(o, t);
    json_object_set_new(o, "acceptance_by_judge",
                        s_judges_json(run->judges_run, run->n_judges_run));
    json_object_set_new(o, "reused_groups", json_integer((json_int_t)t->reused_groups));
    json_object_set_new(o, "reused_rows", json_integer((json_int_t)t->reused_rows));
    json_object_set_new(o, "dropped_stale", json_integer((json_int_t)t->stale));
    json_object_set_new(o, "dropped_duplicate", json_integer((json_int_t)t->duplicates));
    json_object_set_new(o, "malformed", json_integer((json_int_t)t->malformed));
    s_set_precision(o, t);
    s_set_triage(o, &run->triage_run, t);
    pv_metrics_set_real(o, "wall_s", run->wall_s);
    pv_metrics_set_real(o, "env_steps_per_s", s_div((double)total, run->wall_s));
    if (run->health)
        json_object_set_new(o, "broker", pv_health_json(run->health));
    const pv_health_llm_t *lc = s_llm_cost(run);
    json_t *llm = lc ? pv_health_llm_cost_json(lc) : NULL;
    if (llm)
        json_object_set_new(o, "llm_judge", llm);
    /* reals in their shortest round-trip form (jansson alone writes 17 digits) */
    pv_err_t err = pv_json_dump_file_shortest(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER, path, em);
    json_decref(o);
    char *text = NULL;
    size_t text_len = 0;
    FILE *out = open_memstream(&text, &text_len);
    if (!out)
        return PV_ERR_NOMEM;
    fprintf(out, "\n== prover run summary (%s, %s, judge %s) ==\n", cfg_env, estimator, judge);
    if (strcmp(outcome, "completed") != 0)
        fprintf(out, "%s after %llu of %llu iterations: %s\n",
                strcmp(outcome, "failed") == 0 ? "FAILED" : "stopped (time limit)",
                (unsigned long long)run->iterations, (unsigned long long)run->iterations_planned,
                run->reason);
    if (evaluated)
        fprintf(out,
                "held-out success: greedy %.3f before -> %.3f after %llu iterations; sampled "
                "%.3f -> %.3f%s\n",
                run->eval_first.greedy, run->eval_last.greedy, (unsigned long long)run->iterations,
                run->eval_first.sampled, run->eval_last.sampled,
                run->eval_last.seen_kinds ? " (learner.eval_split = train: new games of the "
                                            "training task kinds)"
                                          : "");
    if (evaluated && !isnan(run->eval_first.score) && !isnan(run->eval_last.score))
        fprintf(
            out,
            "held-out score (mean final reward x 100): greedy %.1f -> %.1f; sampled %.1f -> %.1f\n",
            run->eval_first.score, run->eval_last.score, run->eval_first.score_sampled,
            run->eval_last.score_sampled);
    if (evaluated && run->eval_last.n_types > 1) {
        fprintf(out, "held-out success by task type (greedy, after):");
        for (uint32_t i = 0; i < run->eval_last.n_types; i++) {
            const pv_eval_type_t *ty = &run->eval_last.types[i];
            fprintf(out, "%s %s %.2f (%u)", i ? ";" : "", ty->name,
                    ty->n ? (double)ty->wins / (double)ty->n : 0.0, ty->n);
        }
        fputc('\n', out);
    }
    if (run->train_first >= 0 && run->iterations > 10)
        fprintf(out,
                "training success (sampled, mean of 10 iterations): %.3f at the start -> %.3f at "
                "the end\n",
                run->train_first, run->train_last);
    else if (run->train_first >= 0) /* the first and the last 10 are the same iterations */
        fprintf(out, "training success (sampled, mean of the %llu iterations): %.3f\n",
                (unsigned long long)run->iterations, run->train_last);
    fprintf(out, "environment steps: %llu rollouts + %llu verification (%.0f%% of %llu)\n",
            (unsigned long long)run->rollout_env_steps, (unsigned long long)run->verify_env_steps,
            100.0 * s_div((double)run->verify_env_steps, (double)total), (unsigned long long)total);
    fprintf(out,
            "segments verified %llu (%llu with a positive delta); groups %llu, dropped stale %llu, "
            "duplicates %llu, malformed %llu\n",
            (unsigned long long)t->verified, (unsigned long long)t->positive,
            (unsigned long long)t->groups, (unsigned long long)t->stale,
            (unsigned long long)t->duplicates, (unsigned long long)t->malformed);
    if (s_unverified(t))
        fprintf(out,
                "segments unverified %llu of %llu proposed (%.0f%%: over prover.verify_budget, "
                "past prover.verify_timeout_ms, their verification failed, or they did not fit "
                "their trajectory; the judge's log says which): they got no credit, and "
                "verifying them would have cost more\n",
                (unsigned long long)s_unverified(t), (unsigned long long)t->proposals,
                100.0 * (double)s_unverified(t) / (double)t->proposals);
    if (t->verified)
        fprintf(
            out,
            "judge acceptance rate %.3f (verified segments with a positive delta; %.3f expected "
            "by noise alone; the paper: random segments 0.195, LLM judges 0.585-0.724); mean "
            "segment %.2f actions, delta standard error %.2f\n",
            (double)t->positive / (double)t->verified, t->noise_pos_sum / (double)t->verified,
            (double)t->turns_sum / (double)t->verified, t->delta_se_sum / (double)t->verified);
    for (size_t i = 0; run->n_judges_run > 1 && i < run->n_judges_run; i++) {
        const pv_judge_tally_t *j = &run->judges_run[i];
        if (j->verified)
            fprintf(out,
                    "  proposed by %s: %llu groups, acceptance %.3f of %llu verified (%.3f "
                    "by noise alone), mean segment %.2f actions\n",
                    j->judge, (unsigned long long)j->groups,
                    (double)j->positive / (double)j->verified, (unsigned long long)j->verified,
                    j->noise_pos_sum / (double)j->verified,
                    (double)j->turns_sum / (double)j->verified);
    }
    if (llm) {
        char line[512];
        pv_health_llm_line(lc, line, sizeof line);
        fprintf(out, "%s\n", line);
    }
    uint64_t lag_tokens = 0;
    for (unsigned k = 0; k < PV_LAG_BUCKETS; k++)
        lag_tokens += run->lag_hist.tokens[k];
    if (lag_tokens) {
        fprintf(out, "policy lag of the trained tokens (share, PPO clip fraction):");
        const char *sep = " ";
        for (unsigned k = 0; k < PV_LAG_BUCKETS; k++)
            if (run->lag_hist.tokens[k]) {
                fprintf(out, "%s%s: %.3f, %.3f", sep, pv_lag_bucket_name(k),
                        (double)run->lag_hist.tokens[k] / (double)lag_tokens,
                        (double)run->lag_hist.clipped[k] / (double)run->lag_hist.tokens[k]);
                sep = "; ";
            }
        fputc('\n', out);
    }
    if (t->reused_rows)
        fprintf(out,
                "continuations trained on (prover.reuse_continuations): %llu groups, %llu "
                "trajectories, %llu steps (their environment steps are the verification's)\n",
                (unsigned long long)t->reused_groups, (unsigned long long)t->reused_rows,
                (unsigned long long)t->reused_steps);
    if (run->triage_run.judged + run->triage_run.model_free > 0) {
        const pv_triage_stats_t *tr = &run->triage_run;
        fprintf(out,
                "triage labels: %zu turns from the judge's model, %zu model-free (%llu groups "
                "labelled by the model, %llu role entries dropped); roles decisive %zu, "
                "exploration %zu, no_progress %zu, regression %zu\n",
                tr->judged, tr->model_free, (unsigned long long)t->labelled_groups,
                (unsigned long long)t->bad_labels, tr->roles[0], tr->roles[1], tr->roles[2],
                tr->roles[3]);
    }
    if (t->precision_samples)
        fprintf(out, "judge precision against the oracle: %.3f (%llu of %llu proposals pivotal)\n",
                (double)t->precision_hits / (double)t->precision_samples,
                (unsigned long long)t->precision_hits, (unsigned long long)t->precision_samples);
    if (run->health) {
        char line[1024];
        pv_health_line(run->health, line, sizeof line);
        fprintf(out, "%s\n", line);
    }
    fprintf(out, "wall time %.1f s, throughput %.0f environment steps/s\n", run->wall_s,
            s_div((double)total, run->wall_s));
    fclose(out);
    snprintf(path, sizeof path, "%s/summary.txt", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text + 1, f); /* without the leading blank line */
        fclose(f);
    } else if (err == PV_OK) {
        err = pv_errf(em, PV_ERR_IO, "%s: %s", path, strerror(errno));
    }
    *text_out = text;
    return err;
}
