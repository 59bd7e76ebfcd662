/* eval_curve.c - see eval_curve.h. */
#include "tools/eval_curve.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/metrics.h"

/* A number of `o`, or NaN when the key is missing, null or not a number. */
static double s_num(const json_t *o, const char *key)
{
    return pv_metrics_num(o, key, NAN);
}

static pv_err_t s_push(pv_ev_point_t **a, size_t *n, size_t *cap, pv_ev_point_t p)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        pv_ev_point_t *b = realloc(*a, c * sizeof *b);
        if (!b)
            return PV_ERR_NOMEM;
        *a = b;
        *cap = c;
    }
    (*a)[(*n)++] = p;
    return PV_OK;
}

typedef struct s_read_ctx {
    pv_ev_run_t *r;
    size_t cap_eval, cap_train;
    double verified, positive, proposals; /* segments so far */
} s_read_ctx_t;

/* A per-iteration count of a train line (0 when absent or not a count). */
static double s_count(const json_t *o, const char *key)
{
    double v = s_num(o, key);
    return isfinite(v) && v > 0 ? v : 0.0;
}

/* One line of metrics.jsonl onto the curves (lines that are not objects are skipped). */
static pv_err_t s_metrics_line(const json_t *o, size_t lineno, const char *why, void *ctx_)
{
    (void)lineno, (void)why;
    s_read_ctx_t *ctx = ctx_;
    pv_ev_run_t *r = ctx->r;
    const char *kind = json_string_value(json_object_get(o, "kind"));
    pv_ev_point_t p = {.iteration = s_num(o, "iteration"),
                       .env_steps = s_num(o, "total_env_steps"),
                       .tokens = s_num(o, "total_tokens"),
                       .success = s_num(o, "success_rate"),
                       .rollout = s_num(o, "cum_rollout_env_steps"),
                       .verify = s_num(o, "cum_verify_env_steps"),
                       .reward = s_num(o, "mean_reward")};
    bool ok = kind && isfinite(p.iteration) && isfinite(p.env_steps) && isfinite(p.success);
    if (ok && strcmp(kind, "eval") == 0) {
        p.rollout = p.verify = p.reward = 0;
        return s_push(&r->eval, &r->n_eval, &ctx->cap_eval, p);
    }
    if (ok && strcmp(kind, "train") == 0 && isfinite(p.rollout) && isfinite(p.verify) &&
        isfinite(p.reward)) {
        ctx->verified += s_count(o, "segments_verified");
        ctx->positive += s_count(o, "segments_positive");
        ctx->proposals += s_count(o, "proposals");
        p.verified = ctx->verified;
        p.positive = ctx->positive;
        return s_push(&r->train, &r->n_train, &ctx->cap_train, p);
    }
    return PV_OK;
}

/* The curves of metrics.jsonl. */
static pv_err_t s_read_metrics(const char *path, pv_ev_run_t *r, pv_errmsg_t *em)
{
    s_read_ctx_t ctx = {.r = r};
    pv_err_t rc = pv_metrics_read(path, s_metrics_line, &ctx, em);
    r->proposals = ctx.proposals;
    return rc;
}

pv_err_t pv_ev_run_load(const char *dir, pv_ev_run_t *out, pv_errmsg_t *em)
{
    memset(out, 0, sizeof *out);
    char path[4096];
    snprintf(path, sizeof path, "%s/metrics.jsonl", dir);
    pv_err_t rc = s_read_metrics(path, out, em);
    if (rc == PV_OK && out->n_eval == 0)
        rc = pv_errf(em, PV_ERR_DATA, "%s: no eval record (learner.eval_every = 0?)", path);
    if (rc != PV_OK) {
        pv_ev_run_free(out);
        return rc;
    }
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_error_t je;
    json_t *s = json_load_file(path, 0, &je);
    if (!s || !json_is_object(s)) {
        json_decref(s);
        pv_ev_run_free(out);
        return pv_errf(em, s ? PV_ERR_PARSE : PV_ERR_IO, "%s: %s", path,
                       s ? "not a JSON object" : je.text);
    }
    const char *outcome = json_string_value(json_object_get(s, "outcome"));
    if (outcome && strcmp(outcome, "failed") == 0) { /* a failed run is no data point */
        const char *why = json_string_value(json_object_get(s, "reason"));
        rc = pv_errf(em, PV_ERR_DATA, "%s: the run failed: %s", path, why ? why : "?");
        json_decref(s);
        pv_ev_run_free(out);
        return rc;
    }
    out->final_success = s_num(s, "eval_success_after");
    out->final_sampled = s_num(s, "eval_sampled_success_after");
    out->final_score = s_num(s, "eval_score_after");
    out->acceptance = s_num(s, "acceptance_rate");
    out->verify_share = s_num(s, "verify_share");
    out->rollout_steps = s_num(s, "rollout_env_steps");
    out->verify_steps = s_num(s, "verify_env_steps");
    out->precision = s_num(s, "judge_precision");
    double ps = s_num(s, "precision_samples"), it = s_num(s, "iterations");
    out->precision_samples = isfinite(ps) && ps > 0 ? (uint64_t)ps : 0;
    out->iterations = isfinite(it) && it > 0 ? (uint64_t)it : 0;
    out->wall_s = s_num(s, "wall_s");
    json_decref(s);
    return PV_OK;
}

void pv_ev_run_free(pv_ev_run_t *r)
{
    if (!r)
        return;
    free(r->eval);
    free(r->train);
    memset(r, 0, sizeof *r);
}

static double s_x(const pv_ev_point_t *p, pv_ev_axis_t axis)
{
    return axis == PV_EV_TOKENS ? p->tokens : axis == PV_EV_ENV_STEPS ? p->env_steps : p->iteration;
}

double pv_ev_success_at(const pv_ev_point_t *p, size_t n, pv_ev_axis_t axis, double x)
{
    if (n == 0 || !isfinite(x) || !(x >= s_x(&p[0], axis)) || !(x <= s_x(&p[n - 1], axis)))
        return NAN;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(s_x(&p[i], axis)))
            return NAN;
    for (size_t i = 0; i + 1 < n; i++) {
        double x0 = s_x(&p[i], axis), x1 = s_x(&p[i + 1], axis);
        if (x == x0)
            return p[i].success;
        if (x > x0 && x < x1)
            return p[i].success + (p[i + 1].success - p[i].success) * (x - x0) / (x1 - x0);
    }
    return p[n - 1].success; /* x is the last point's */
}

double pv_ev_steps_to(const pv_ev_point_t *p, size_t n, double target)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i].success < target)
            continue;
        if (i == 0)
            return p[0].env_steps;
        const pv_ev_point_t *a = &p[i - 1], *b = &p[i];
        return a->env_steps +
               (b->env_steps - a->env_steps) * (target - a->success) / (b->success - a->success);
    }
    return NAN;
}

double pv_ev_tail_reward(const pv_ev_point_t *p, size_t n, size_t last)
{
    if (n == 0)
        return NAN;
    size_t from = n > last ? n - last : 0;
    double sum = 0;
    for (size_t i = from; i < n; i++)
        sum += p[i].reward;
    return sum / (double)(n - from);
}

void pv_ev_mean_std(const double *x, size_t n, double *mean, double *std, size_t *count)
{
    double sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i])) {
            sum += x[i];
            k++;
        }
    *count = k;
    if (k == 0) {
        *mean = *std = NAN;
        return;
    }
    double m = sum / (double)k, ss = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]))
            ss += (x[i] - m) * (x[i] - m);
    *mean = m;
    *std = k > 1 ? sqrt(ss / (double)(k - 1)) : 0.0;
}

pv_err_t pv_ev_mean_curve(const pv_ev_point_t *const *curves, const size_t *lens, size_t n_runs,
                          pv_ev_point_t **out, size_t *n_out)
{
    size_t n = n_runs ? lens[0] : 0;
    for (size_t r = 1; r < n_runs; r++)
        n = lens[r] < n ? lens[r] : n;
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out)
        return PV_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        pv_ev_point_t *m = &(*out)[i];
        for (size_t r = 0; r < n_runs; r++) {
            m->iteration += curves[r][i].iteration / (double)n_runs;
            m->env_steps += curves[r][i].env_steps / (double)n_runs;
            m->tokens += curves[r][i].tokens / (double)n_runs; /* NaN when a run has none */
            m->success += curves[r][i].success / (double)n_runs;
            m->rollout += curves[r][i].rollout / (double)n_runs;
            m->verify += curves[r][i].verify / (double)n_runs;
            m->reward += curves[r][i].reward / (double)n_runs;
            m->verified += curves[r][i].verified / (double)n_runs;
            m->positive += curves[r][i].positive / (double)n_runs;
        }
    }
    *n_out = n;
    return PV_OK;
}
