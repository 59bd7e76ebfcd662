/* eval_report.c - prover-eval's output files: mean curves, results.md, results.json; see
 * eval_grid.h. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/eval_grid.h"
#include "tools/eval_stats.h"

/* ---- mean curves ----------------------------------------------------------------------- */

static void s_write_points(FILE *f, const char *kind, const pv_ev_point_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(f,
                "{\"kind\":\"%s\",\"iteration\":%.17g,\"total_env_steps\":%.17g,"
                "\"success_rate\":%.17g",
                kind, p[i].iteration, p[i].env_steps, p[i].success);
        if (isfinite(p[i].tokens))
            fprintf(f, ",\"total_tokens\":%.17g", p[i].tokens);
        if (strcmp(kind, "train") == 0)
            fprintf(f,
                    ",\"cum_rollout_env_steps\":%.17g,\"cum_verify_env_steps\":%.17g,"
                    "\"mean_reward\":%.17g",
                    p[i].rollout, p[i].verify, p[i].reward);
        if (strcmp(kind, "train") == 0 && p[i].verified > 0) /* pooled over the seeds */
            fprintf(f, ",\"acceptance_rate_cum\":%.17g", p[i].positive / p[i].verified);
        fprintf(f, "}\n");
    }
}

/* The mean of one curve (eval or train) of a configuration's runs. */
static pv_err_t s_mean_of(const pv_eg_config_t *c, bool eval, pv_ev_point_t **out, size_t *n)
{
    const pv_ev_point_t *curves[PV_EG_MAX_SEEDS];
    size_t lens[PV_EG_MAX_SEEDS];
    for (size_t r = 0; r < c->n_ok; r++) {
        curves[r] = eval ? c->runs[r].eval : c->runs[r].train;
        lens[r] = eval ? c->runs[r].n_eval : c->runs[r].n_train;
    }
    return pv_ev_mean_curve(curves, lens, c->n_ok, out, n);
}

pv_err_t pv_eg_write_means(const pv_eg_t *g, const char *dir, pv_errmsg_t *em)
{
    for (size_t e = 0; e < g->n_envs; e++)
        for (size_t c = 0; c < g->envs[e].n_configs; c++) {
            const pv_eg_config_t *cf = &g->envs[e].configs[c];
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/%s/%s/mean.jsonl", dir, g->envs[e].name, cf->name);
            pv_ev_point_t *ev = NULL, *tr = NULL;
            size_t n_ev = 0, n_tr = 0;
            if (s_mean_of(cf, true, &ev, &n_ev) != PV_OK ||
                s_mean_of(cf, false, &tr, &n_tr) != PV_OK) {
                free(ev);
                return PV_ERR_NOMEM;
            }
            FILE *f = fopen(path, "w");
            if (f) {
                s_write_points(f, "eval", ev, n_ev);
                s_write_points(f, "train", tr, n_tr);
            }
            free(ev);
            free(tr);
            if (!f || fclose(f) != 0)
                return pv_errf(em, PV_ERR_IO, "%s: %s", path, strerror(errno));
        }
    return PV_OK;
}

/* ---- results.md ------------------------------------------------------------------------ */

/* "12.3k", "1.23M" */
static void s_si(char *buf, size_t cap, double x)
{
    if (fabs(x) >= 1e6)
        snprintf(buf, cap, "%.2fM", x / 1e6);
    else if (fabs(x) >= 1e3)
        snprintf(buf, cap, "%.1fk", x / 1e3);
    else
        snprintf(buf, cap, "%.0f", x);
}

typedef enum { S_RATE, S_STEPS, S_PERCENT, S_SECONDS } s_fmt_t;

static void s_one(char *buf, size_t cap, double x, s_fmt_t f)
{
    if (f == S_RATE)
        snprintf(buf, cap, "%.3f", x);
    else if (f == S_STEPS)
        s_si(buf, cap, x);
    else if (f == S_PERCENT)
        snprintf(buf, cap, "%.1f%%", 100.0 * x);
    else
        snprintf(buf, cap, "%.1f", x);
}

/* "mean ± std" (the mean alone for one seed, "—" for none). */
static void s_cell(char *buf, size_t cap, const pv_eg_stat_t *s, s_fmt_t f)
{
    if (s->n == 0) {
        snprintf(buf, cap, "—");
        return;
    }
    char m[32], d[32];
    s_one(m, sizeof m, s->mean, f);
    if (s->n == 1) {
        snprintf(buf, cap, "%s", m);
        return;
    }
    s_one(d, sizeof d, s->std, f);
    snprintf(buf, cap, "%s ± %s", m, d);
}

/* CPU model (first "model name" of /proc/cpuinfo) and online cores. */
static void s_machine(char *buf, size_t cap)
{
    char model[256] = "unknown CPU", line[512], host[256] = "";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon) {
                snprintf(model, sizeof model, "%s", colon + 1 + strspn(colon + 1, " \t"));
                model[strcspn(model, "\n")] = '\0';
            }
            break;
        }
    }
    if (f)
        fclose(f);
    gethostname(host, sizeof host - 1);
    snprintf(buf, cap, "%ld cores (nproc), %s, host %s", sysconf(_SC_NPROCESSORS_ONLN), model,
             host[0] ? host : "?");
}

static void s_table(FILE *f, const pv_eg_t *g, const pv_eg_env_t *e)
{
    char steps[32], target[32], tokens[64] = "";
    s_si(steps, sizeof steps, e->steps);
    snprintf(target, sizeof target, "%.2f", g->target);
    bool by_tokens = isfinite(e->tokens); /* every run counted its generated tokens */
    if (by_tokens) {
        char n[32];
        s_si(n, sizeof n, e->tokens);
        snprintf(tokens, sizeof tokens, " success at %s tokens |", n);
    }
    fprintf(f,
            "| configuration | seeds | final success | minus grpo (95%% CI) | final success "
            "(sampled) | final score | "
            "success at %.0f updates | success at %s env steps |%s env steps to %s | "
            "verification share | judge precision | acceptance | env steps | train reward (last "
            "%d) | wall (s) |\n"
            "|---|---|---|---|---|---|---|---|%s---|---|---|---|---|---|---|\n",
            e->updates, steps, tokens, target, PV_EG_TAIL, by_tokens ? "---|" : "");
    for (size_t c = 0; c < e->n_configs; c++) {
        const pv_eg_config_t *cf = &e->configs[c];
        char cells[13][128];
        s_cell(cells[0], sizeof cells[0], &cf->final_success, S_RATE);
        s_cell(cells[1], sizeof cells[1], &cf->at_updates, S_RATE);
        s_cell(cells[2], sizeof cells[2], &cf->at_steps, S_RATE);
        cells[12][0] = '\0';
        if (by_tokens) {
            char s[100];
            s_cell(s, sizeof s, &cf->at_tokens, S_RATE);
            snprintf(cells[12], sizeof cells[12], " %s |", s);
        }
        if (cf->to_target.n == 0)
            snprintf(cells[3], sizeof cells[3], "not reached");
        else {
            char s[72]; /* two 31-character numbers and " ± " */
            s_cell(s, sizeof s, &cf->to_target, S_STEPS);
            snprintf(cells[3], sizeof cells[3], "%s (%zu/%zu)", s, cf->to_target.n, cf->n_ok);
        }
        s_cell(cells[4], sizeof cells[4], &cf->verify_share, S_PERCENT);
        s_cell(cells[5], sizeof cells[5], &cf->precision, S_RATE);
        s_cell(cells[6], sizeof cells[6], &cf->env_steps, S_STEPS);
        s_cell(cells[7], sizeof cells[7], &cf->train_reward, S_RATE);
        s_cell(cells[8], sizeof cells[8], &cf->wall_s, S_SECONDS);
        s_cell(cells[9], sizeof cells[9], &cf->final_sampled, S_RATE);
        s_cell(cells[10], sizeof cells[10], &cf->final_score, S_SECONDS); /* one decimal */
        s_cell(cells[11], sizeof cells[11], &cf->acceptance, S_PERCENT);
        char vs[96] = "—";
        if (cf->vs_grpo.have)
            snprintf(vs, sizeof vs, "%+.3f [%+.3f, %+.3f]", cf->vs_grpo.diff, cf->vs_grpo.lo,
                     cf->vs_grpo.hi);
        fprintf(f,
                "| %s | %zu | %s | %s | %s | %s | %s | %s |%s %s | %s | %s | %s | %s | %s | %s |\n",
                cf->name, cf->n_ok, cells[0], vs, cells[9], cells[10], cells[1], cells[2],
                cells[12], cells[3], cells[4], cells[5], cells[11], cells[6], cells[7], cells[8]);
    }
}

static void s_env_section(FILE *f, const pv_eg_t *g, const pv_eg_env_t *e, int plots)
{
    fprintf(f, "\n## %s\n\n", e->name);
    if (e->overrides[0])
        fprintf(f, "Settings: `%s`\n\n", e->overrides);
    s_table(f, g, e);
    fprintf(f, "\nConfigurations:\n\n");
    for (size_t c = 0; c < e->n_configs; c++)
        fprintf(f, "- `%s`%s%s%s\n", e->configs[c].name, e->configs[c].overrides[0] ? ": `" : "",
                e->configs[c].overrides, e->configs[c].overrides[0] ? "`" : "");
    for (size_t c = 0; c < e->n_configs; c++) {
        const pv_eg_stat_t *u = &e->configs[c].unverified;
        if (u->n && u->mean > 0.0005)
            fprintf(f,
                    "\n**%s: %.1f%% of its proposals went unverified** (mean over %zu run%s): "
                    "over prover.verify_budget, past prover.verify_timeout_ms, their "
                    "verification failed, or they did not fit their trajectory (each run's "
                    "summary.txt and judge log say which). They got no credit, so its "
                    "verification share and environment steps are a floor of what verifying "
                    "every proposal costs.\n",
                    e->configs[c].name, 100.0 * u->mean, u->n, u->n == 1 ? "" : "s");
    }
    if (plots)
        fprintf(f,
                "\n![%s: success vs learner updates](%s-success-vs-updates.png)\n"
                "![%s: success vs environment steps](%s-success-vs-env-steps.png)\n"
                "![%s: verification cost](%s-verification-cost.png)\n",
                e->name, e->name, e->name, e->name, e->name, e->name);
    if (plots && pv_eg_env_verifies(e))
        fprintf(f, "![%s: acceptance rate](%s-acceptance.png)\n", e->name, e->name);
    if (plots && isfinite(e->tokens))
        fprintf(f, "![%s: success vs generated tokens](%s-success-vs-tokens.png)\n", e->name,
                e->name);
}

pv_err_t pv_eg_write_markdown(const pv_eg_t *g, const char *dir, const char *command, int plots,
                              pv_errmsg_t *em)
{
    char path[PATH_MAX], when[64] = "?", machine[512];
    snprintf(path, sizeof path, "%s/results.md", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return pv_errf(em, PV_ERR_IO, "%s: %s", path, strerror(errno));
    struct tm tm;
    if (g->finished && gmtime_r(&g->finished, &tm))
        strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", &tm);
    s_machine(machine, sizeof machine);
    const char *slash = strrchr(dir, '/');
    fprintf(f,
            "# prover evaluation: %s\n\n"
            "- Runs finished: %s\n- Machine: %s\n- Command: `%s`\n- Runs: %zu\n\n"
            "Success is the greedy success rate on held-out tasks, measured every "
            "learner.eval_every updates and interpolated linearly between evaluations. "
            "Environment steps count rollouts and verification together (the oracle's expert "
            "searches are not environment steps and are not counted). *Success at N updates* "
            "compares at the last learner update every run reached; *success at S env steps* "
            "at the fewest environment steps any run of the environment ended with; *success at "
            "K tokens* (when every run counted them) at the fewest generated tokens, rollouts "
            "and verification (one per action for the candidate scorer). *Env steps "
            "to %.2f*: where the curve first reaches that success rate, over the seeds that "
            "reached it. *Judge precision*: the share of the judge's proposals that the oracle "
            "(the environment's expert) labels pivotal. *Train reward*: the sampled training "
            "batches' mean reward over the last updates (WebShop's graded score). Mean ± sample "
            "std over seeds. *Minus grpo*: the final success's difference to the grpo "
            "configuration's, with its 95%% percentile-bootstrap interval over seeds (%d "
            "resamples; shown with 2 or more seeds on both sides).\n",
            slash && slash[1] ? slash + 1 : dir, when, machine, command, g->n_runs, g->target,
            PV_ES_RESAMPLES);
    for (size_t e = 0; e < g->n_envs; e++)
        s_env_section(f, g, &g->envs[e], plots);
    if (g->n_skipped) {
        fprintf(f, "\nRuns left out:\n\n");
        for (size_t i = 0; i < g->n_skipped; i++)
            fprintf(f, "- %s\n", g->skipped[i]);
    }
    if (fclose(f) != 0)
        return pv_errf(em, PV_ERR_IO, "%s: %s", path, strerror(errno));
    return PV_OK;
}

/* ---- results.json ---------------------------------------------------------------------- */

static json_t *s_jstat(const pv_eg_stat_t *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "mean", s->n ? json_real(s->mean) : json_null());
    json_object_set_new(o, "std", s->n ? json_real(s->std) : json_null());
    json_object_set_new(o, "seeds", json_integer((json_int_t)s->n));
    return o;
}

pv_err_t pv_eg_write_json(const pv_eg_t *g, const char *dir, const char *command, pv_errmsg_t *em)
{
    char path[PATH_MAX], machine[512];
    snprintf(path, sizeof path, "%s/results.json", dir);
    s_machine(machine, sizeof machine);
    json_t *root = json_object(), *envs = json_array();
    json_object_set_new(root, "command", json_string(command));
    json_object_set_new(root, "machine", json_string(machine));
    json_object_set_new(root, "finished_unix", json_integer((json_int_t)g->finished));
    json_object_set_new(root, "target", json_real(g->target));
    for (size_t e = 0; e < g->n_envs; e++) {
        const pv_eg_env_t *ev = &g->envs[e];
        json_t *je = json_object(), *cs = json_array();
        json_object_set_new(je, "env", json_string(ev->name));
        json_object_set_new(je, "settings", json_string(ev->overrides));
        json_object_set_new(je, "equal_updates", json_real(ev->updates));
        json_object_set_new(je, "equal_env_steps", json_real(ev->steps));
        json_object_set_new(je, "equal_tokens",
                            isfinite(ev->tokens) ? json_real(ev->tokens) : json_null());
        for (size_t c = 0; c < ev->n_configs; c++) {
            const pv_eg_config_t *cf = &ev->configs[c];
            json_t *jc = json_object();
            json_object_set_new(jc, "config", json_string(cf->name));
            json_object_set_new(jc, "overrides", json_string(cf->overrides));
            json_object_set_new(jc, "seeds", json_integer((json_int_t)cf->n_ok));
            json_object_set_new(jc, "final_success", s_jstat(&cf->final_success));
            json_t *by = json_object();
            for (size_t r = 0; r < cf->n_ok; r++)
                json_object_set_new(by, cf->seed_names[r], json_real(cf->finals[r]));
            json_object_set_new(jc, "final_success_by_seed", by);
            json_t *vs = json_null();
            if (cf->vs_grpo.have) {
                vs = json_object();
                json_object_set_new(vs, "diff", json_real(cf->vs_grpo.diff));
                json_object_set_new(vs, "lo", json_real(cf->vs_grpo.lo));
                json_object_set_new(vs, "hi", json_real(cf->vs_grpo.hi));
                json_object_set_new(vs, "level", json_real(0.95));
                json_object_set_new(vs, "resamples", json_integer(PV_ES_RESAMPLES));
            }
            json_object_set_new(jc, "final_success_minus_grpo", vs);
            json_object_set_new(jc, "final_success_sampled", s_jstat(&cf->final_sampled));
            json_object_set_new(jc, "final_score", s_jstat(&cf->final_score));
            json_object_set_new(jc, "acceptance_rate", s_jstat(&cf->acceptance));
            json_object_set_new(jc, "success_at_equal_updates", s_jstat(&cf->at_updates));
            json_object_set_new(jc, "success_at_equal_env_steps", s_jstat(&cf->at_steps));
            json_object_set_new(jc, "success_at_equal_tokens", s_jstat(&cf->at_tokens));
            json_object_set_new(jc, "env_steps_to_target", s_jstat(&cf->to_target));
            json_object_set_new(jc, "verify_share", s_jstat(&cf->verify_share));
            json_object_set_new(jc, "unverified_share", s_jstat(&cf->unverified));
            json_object_set_new(jc, "judge_precision", s_jstat(&cf->precision));
            json_object_set_new(jc, "env_steps", s_jstat(&cf->env_steps));
            json_object_set_new(jc, "wall_s", s_jstat(&cf->wall_s));
            json_object_set_new(jc, "train_reward_tail", s_jstat(&cf->train_reward));
            json_array_append_new(cs, jc);
        }
        json_object_set_new(je, "configs", cs);
        json_array_append_new(envs, je);
    }
    json_object_set_new(root, "envs", envs);
    int bad = json_dump_file(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return bad ? pv_errf(em, PV_ERR_IO, "%s: cannot write", path) : PV_OK;
}
