/* eval_grid.c - reading a grid and computing its numbers; see eval_grid.h. */
#include "tools/eval_grid.h"
#include "tools/eval_stats.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const s_env_order[] = {"alfworld", "webshop", "searchqa", NULL};
static const char *const s_config_order[] = {
    "grpo",   "grpo-matched", "gigpo", "pgpo",   "spopp",  "triage",     "vict",
    "prover", "contrast",     "reuse", "random", "oracle", "exhaustive", NULL};

static int s_rank(const char *name, const char *const *order)
{
    for (int i = 0; order[i]; i++)
        if (strcmp(name, order[i]) == 0)
            return i;
    return INT_MAX;
}

/* names in `order` first (by position), then by name. */
static int s_cmp(const char *x, const char *y, const char *const *order)
{
    int rx = order ? s_rank(x, order) : INT_MAX, ry = order ? s_rank(y, order) : INT_MAX;
    return rx != ry ? (rx < ry ? -1 : 1) : strcmp(x, y);
}

/* Insertion sort (folders are few; qsort has no context argument for `order`). */
static void s_sort(char **names, size_t n, const char *const *order)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && s_cmp(names[j - 1], names[j], order) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
}

/* a/b into buf (s_subdirs lists only names whose joined path fits). */
static void s_join(char *buf, size_t cap, const char *a, const char *b)
{
    if ((size_t)snprintf(buf, cap, "%s/%s", a, b) >= cap)
        buf[0] = '\0';
}

static bool s_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Sub-folders of `dir` (not starting with '.') in `order`, then by name. *names is
 * malloc'ed (free each and the array). Errors: PV_ERR_IO, PV_ERR_NOMEM. */
static pv_err_t s_subdirs(const char *dir, const char *const *order, char ***names, size_t *n)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return PV_ERR_IO;
    size_t cap = 0;
    pv_err_t rc = PV_OK;
    struct dirent *de;
    while (rc == PV_OK && (de = readdir(d))) {
        char path[PATH_MAX];
        s_join(path, sizeof path, dir, de->d_name);
        if (de->d_name[0] == '.' || !path[0] || !s_is_dir(path))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **m = realloc(*names, cap * sizeof *m);
            if (!m) {
                rc = PV_ERR_NOMEM;
                break;
            }
            *names = m;
        }
        if (!((*names)[*n] = strdup(de->d_name)))
            rc = PV_ERR_NOMEM;
        else
            (*n)++;
    }
    closedir(d);
    s_sort(*names, *n, order);
    return rc;
}

static void s_free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* s_subdirs with the errors worded for the user: at most `max` folders of `what`. */
static pv_err_t s_list(const char *dir, const char *const *order, size_t max, const char *what,
                       char ***names, size_t *n, pv_errmsg_t *em)
{
    pv_err_t rc = s_subdirs(dir, order, names, n);
    if (rc != PV_OK)
        return pv_errf(em, rc, "%s: cannot list: %s", dir,
                       rc == PV_ERR_IO ? strerror(errno) : pv_strerror(rc));
    if (*n > max) {
        s_free_names(*names, *n);
        *names = NULL;
        return pv_errf(em, PV_ERR_LIMIT, "%s: more than %zu %s", dir, max, what);
    }
    return PV_OK;
}

/* The first line of dir/overrides.txt into buf, or "". */
static void s_overrides(const char *dir, char *buf, size_t cap)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/overrides.txt", dir);
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(buf, (int)cap, f))
        buf[strcspn(buf, "\r\n")] = '\0';
    fclose(f);
}

static pv_err_t s_skip(pv_eg_t *g, const char *path, const char *why)
{
    char **s = realloc(g->skipped, (g->n_skipped + 1) * sizeof *s);
    if (!s)
        return PV_ERR_NOMEM;
    g->skipped = s;
    size_t len = strlen(path) + strlen(why) + 3;
    if (!(s[g->n_skipped] = malloc(len)))
        return PV_ERR_NOMEM;
    snprintf(s[g->n_skipped++], len, "%s: %s", path, why);
    return PV_OK;
}

/* The runs of one configuration folder. */
static pv_err_t s_load_config(pv_eg_t *g, const char *dir, pv_eg_config_t *c, pv_errmsg_t *em)
{
    char **seeds;
    size_t n;
    pv_err_t rc = s_list(dir, NULL, PV_EG_MAX_SEEDS, "seeds", &seeds, &n, em);
    if (rc != PV_OK)
        return rc;
    for (size_t i = 0; i < n && rc == PV_OK; i++) {
        char path[PATH_MAX];
        s_join(path, sizeof path, dir, seeds[i]);
        pv_errmsg_t why = {{0}};
        snprintf(c->seed_names[c->n_ok], sizeof c->seed_names[c->n_ok], "%s", seeds[i]);
        pv_err_t r = pv_ev_run_load(path, &c->runs[c->n_ok], &why);
        if (r == PV_ERR_NOMEM)
            rc = r;
        else if (r != PV_OK)
            rc = s_skip(g, path, why.text);
        else {
            c->n_ok++;
            g->n_runs++;
            char sum[PATH_MAX + 16];
            snprintf(sum, sizeof sum, "%s/summary.json", path);
            struct stat st;
            if (stat(sum, &st) == 0 && st.st_mtime > g->finished)
                g->finished = st.st_mtime;
        }
    }
    s_free_names(seeds, n);
    return rc;
}

static pv_eg_stat_t s_stat(const double *x, size_t n)
{
    pv_eg_stat_t s;
    pv_ev_mean_std(x, n, &s.mean, &s.std, &s.n);
    return s;
}

/* Equal-budget points of one environment, then every configuration's numbers. */
static void s_compute(pv_eg_env_t *e, double target)
{
    e->updates = e->steps = e->tokens = INFINITY;
    e->steps_max = 0;
    bool tokens = true; /* every run counted its tokens */
    for (size_t c = 0; c < e->n_configs; c++)
        for (size_t r = 0; r < e->configs[c].n_ok; r++) {
            const pv_ev_run_t *run = &e->configs[c].runs[r];
            const pv_ev_point_t *last = &run->eval[run->n_eval - 1];
            e->updates = fmin(e->updates, last->iteration);
            e->steps = fmin(e->steps, last->env_steps);
            e->steps_max = fmax(e->steps_max, last->env_steps);
            tokens = tokens && isfinite(last->tokens);
            e->tokens = fmin(e->tokens, last->tokens);
        }
    if (!tokens || !isfinite(e->tokens))
        e->tokens = NAN;
    for (size_t c = 0; c < e->n_configs; c++) {
        pv_eg_config_t *cf = &e->configs[c];
        double v[14][PV_EG_MAX_SEEDS];
        for (size_t r = 0; r < cf->n_ok; r++) {
            const pv_ev_run_t *run = &cf->runs[r];
            v[0][r] = isfinite(run->final_success) ? run->final_success
                                                   : run->eval[run->n_eval - 1].success;
            v[1][r] = pv_ev_success_at(run->eval, run->n_eval, PV_EV_UPDATES, e->updates);
            v[2][r] = pv_ev_success_at(run->eval, run->n_eval, PV_EV_ENV_STEPS, e->steps);
            v[12][r] = pv_ev_success_at(run->eval, run->n_eval, PV_EV_TOKENS, e->tokens);
            v[3][r] = pv_ev_steps_to(run->eval, run->n_eval, target);
            v[4][r] = run->verify_share;
            v[5][r] = run->precision_samples ? run->precision : NAN;
            v[6][r] = run->rollout_steps + run->verify_steps;
            v[7][r] = run->wall_s;
            v[8][r] = pv_ev_tail_reward(run->train, run->n_train, PV_EG_TAIL);
            v[9][r] = run->final_sampled;
            v[10][r] = run->final_score;
            v[11][r] = run->acceptance;
            double verified = run->n_train ? run->train[run->n_train - 1].verified : 0;
            v[13][r] = run->proposals > 0 ? fmax(0.0, 1.0 - verified / run->proposals) : NAN;
        }
        for (size_t r = 0; r < cf->n_ok; r++)
            cf->finals[r] = v[0][r];
        cf->final_success = s_stat(v[0], cf->n_ok);
        cf->at_updates = s_stat(v[1], cf->n_ok);
        cf->at_steps = s_stat(v[2], cf->n_ok);
        cf->at_tokens = s_stat(v[12], cf->n_ok);
        cf->to_target = s_stat(v[3], cf->n_ok);
        cf->verify_share = s_stat(v[4], cf->n_ok);
        cf->precision = s_stat(v[5], cf->n_ok);
        cf->env_steps = s_stat(v[6], cf->n_ok);
        cf->wall_s = s_stat(v[7], cf->n_ok);
        cf->train_reward = s_stat(v[8], cf->n_ok);
        cf->final_sampled = s_stat(v[9], cf->n_ok);
        cf->final_score = s_stat(v[10], cf->n_ok);
        cf->acceptance = s_stat(v[11], cf->n_ok);
        cf->unverified = s_stat(v[13], cf->n_ok);
    }
}

/* Each configuration's final success against grpo's (finals are finite: v[0] falls back
 * to the last evaluation, which every run read has). */
static pv_err_t s_against_grpo(pv_eg_env_t *e)
{
    const pv_eg_config_t *grpo = NULL;
    for (size_t c = 0; c < e->n_configs && !grpo; c++)
        if (strcmp(e->configs[c].name, "grpo") == 0)
            grpo = &e->configs[c];
    for (size_t c = 0; c < e->n_configs; c++) {
        pv_eg_config_t *cf = &e->configs[c];
        cf->vs_grpo = (pv_eg_diff_t){0};
        if (!grpo || cf == grpo || grpo->n_ok < 2 || cf->n_ok < 2)
            continue;
        pv_err_t rc =
            pv_es_boot_diff(cf->finals, cf->n_ok, grpo->finals, grpo->n_ok, 0.95, PV_ES_RESAMPLES,
                            PV_ES_SEED, &cf->vs_grpo.diff, &cf->vs_grpo.lo, &cf->vs_grpo.hi);
        if (rc != PV_OK)
            return rc;
        cf->vs_grpo.have = true;
    }
    return PV_OK;
}

/* One environment folder: its configurations. */
static pv_err_t s_load_env(pv_eg_t *g, const char *dir, pv_eg_env_t *e, pv_errmsg_t *em)
{
    char **names;
    size_t n;
    pv_err_t rc = s_list(dir, s_config_order, PV_EG_MAX_CONFIGS, "configurations", &names, &n, em);
    if (rc != PV_OK)
        return rc;
    e->configs = calloc(n ? n : 1, sizeof *e->configs);
    if (!e->configs) {
        s_free_names(names, n);
        return PV_ERR_NOMEM;
    }
    s_overrides(dir, e->overrides, sizeof e->overrides);
    for (size_t i = 0; i < n && rc == PV_OK; i++) {
        pv_eg_config_t *c = &e->configs[e->n_configs];
        memset(c, 0, sizeof *c); /* the slot of a configuration without a usable run */
        char path[PATH_MAX];
        s_join(path, sizeof path, dir, names[i]);
        snprintf(c->name, sizeof c->name, "%s", names[i]);
        s_overrides(path, c->overrides, sizeof c->overrides);
        rc = s_load_config(g, path, c, em);
        if (rc == PV_OK && c->n_ok > 0)
            e->n_configs++;
        else /* an error: forget its runs */
            for (size_t r = 0; r < c->n_ok; r++)
                pv_ev_run_free(&c->runs[r]);
    }
    s_free_names(names, n);
    return rc;
}

static void s_env_free(pv_eg_env_t *e)
{
    for (size_t c = 0; c < e->n_configs; c++)
        for (size_t r = 0; r < e->configs[c].n_ok; r++)
            pv_ev_run_free(&e->configs[c].runs[r]);
    free(e->configs);
    e->configs = NULL;
    e->n_configs = 0;
}

pv_err_t pv_eg_load(const char *dir, double target, pv_eg_t **out, pv_errmsg_t *em)
{
    *out = NULL;
    pv_eg_t *g = calloc(1, sizeof *g);
    if (!g)
        return PV_ERR_NOMEM;
    g->target = target;
    char **names;
    size_t n;
    pv_err_t rc = s_list(dir, s_env_order, PV_EG_MAX_ENVS, "environments", &names, &n, em);
    if (rc != PV_OK) {
        free(g);
        return rc;
    }
    for (size_t i = 0; i < n && rc == PV_OK; i++) {
        pv_eg_env_t *e = &g->envs[g->n_envs];
        char path[PATH_MAX];
        s_join(path, sizeof path, dir, names[i]);
        snprintf(e->name, sizeof e->name, "%s", names[i]);
        rc = s_load_env(g, path, e, em);
        if (rc == PV_OK && e->n_configs > 0) {
            s_compute(e, target);
            rc = s_against_grpo(e);
            g->n_envs++; /* counted even on error: pv_eg_destroy frees it */
            if (rc == PV_ERR_NOMEM)
                pv_errf(em, rc, "%s: out of memory for the bootstrap", path);
        } else {
            s_env_free(e);
        }
    }
    s_free_names(names, n);
    if (rc == PV_OK && g->n_runs == 0)
        rc = pv_errf(em, PV_ERR_NOTFOUND,
                     "%s: no usable run (want ENV/CONFIG/SEED/{metrics.jsonl,summary.json})", dir);
    if (rc != PV_OK) {
        pv_eg_destroy(&g);
        return rc;
    }
    *out = g;
    return PV_OK;
}

void pv_eg_destroy(pv_eg_t **gp)
{
    if (!gp || !*gp)
        return;
    pv_eg_t *g = *gp;
    for (size_t e = 0; e < g->n_envs; e++)
        s_env_free(&g->envs[e]);
    s_free_names(g->skipped, g->n_skipped);
    free(g);
    *gp = NULL;
}

bool pv_eg_config_verifies(const pv_eg_config_t *c)
{
    for (size_t r = 0; r < c->n_ok; r++)
        if (c->runs[r].n_train > 0 && c->runs[r].train[c->runs[r].n_train - 1].verified > 0)
            return true;
    return false;
}

bool pv_eg_env_verifies(const pv_eg_env_t *e)
{
    for (size_t c = 0; c < e->n_configs; c++)
        if (pv_eg_config_verifies(&e->configs[c]))
            return true;
    return false;
}
