/* prover-plot - PNG plots of one or more runs' metrics.jsonl with gnuplot.
 *
 *   prover-plot [-o OUT.png] [--metric KEY] [--x total_env_steps|total_tokens|iteration|wall_s]
 *               [--series both|train|eval] [--raw] [--logx] [--title T]
 *               RUN_DIR_OR_METRICS[=LABEL] ...
 *   prover-plot --cost [-o OUT.png] [--title T] [--dump] RUN_DIR_OR_METRICS[=LABEL] ...
 *
 * Plots a metric (default success_rate) against the x axis (default: environment steps,
 * rollouts and verification together): each run's training value (per iteration, as the
 * mean of the last 10) as a line and, for success_rate, its held-out evaluations as points,
 * greedy and (when recorded) sampled. --metric score draws the held-out score the same way
 * (the mean final reward x 100, WebShop's metric: the eval lines' score and score_sampled)
 * with the training batches' mean_reward x 100 as the line (--raw draws the training values
 * themselves, not their mean of the last 10, for a metric that is already cumulative such as
 * prover-eval's acceptance_rate_cum; --series keeps one of the two kinds; --logx puts the x axis on
 * a log scale, where points at x = 0 are not drawn). --metric takes any number of the train lines
 * of metrics.jsonl (mean_reward, loss, pg_loss, entropy, kl, clip_frac, grad_norm, acceptance_rate,
 * episode_len, policy_lag_mean, ...), a few names as verl and the README say them (reward,
 * clip_fraction, acceptance), and verify_share: the share of environment steps spent on
 * verification so far (from cum_verify_env_steps and cum_rollout_env_steps). A run that is missing
 * or has no such records is left out with a warning; the plot fails (2) only when no run has any.
 * --dump prints the points (label, train|eval, x, value, mean of the last 10) instead of drawing
 * them. A run argument is a metrics.jsonl file or a run folder containing one; "=LABEL" names it in
 * the legend (default: the folder name; for prover-train-local's rl-<estimator> folders,
 * PARENT/rl-<estimator>; folder names that two runs share take their parents until they
 * differ: grpo/seed1, contrast/seed1). --cost draws instead a bar chart of each run's environment
 * steps, rollouts and verification side by side on a log scale, from its last record with
 * cum_rollout_env_steps and cum_verify_env_steps (with --dump: a line per run, label, rollout
 * steps, verification steps). OUT.png defaults to success.png, KEY.png for --metric KEY and
 * cost.png for --cost. Data is extracted with jansson into a temporary
 * folder and drawn by gnuplot's pngcairo terminal. Exit status 0, 1 when gnuplot fails, 2 for bad
 * arguments or files.
 */
#include <errno.h>
#include <glob.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/metrics.h"

#define S_MAX_RUNS 32

typedef struct s_run {
    char path[1024];
    char label[256];
    int label_depth; /* folders in an automatic label (0: given as RUN=LABEL) */
    char train_dat[1100], eval_dat[1100];
    int n_train, n_eval, n_sampled; /* n_sampled: eval lines with success_rate_sampled */
} s_run_t;

/* The run's folder (its path without /metrics.jsonl) into buf. */
static void s_run_dir(const char *path, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", path);
    char *slash = strrchr(buf, '/');
    if (slash && strcmp(slash, "/metrics.jsonl") == 0)
        *slash = '\0';
    for (size_t n = strlen(buf); n > 1 && buf[n - 1] == '/';)
        buf[--n] = '\0';
}

static bool s_in_rl_folder(const char *path)
{
    char dir[1024];
    s_run_dir(path, dir, sizeof dir);
    const char *slash = strrchr(dir, '/');
    return strncmp(slash ? slash + 1 : dir, "rl-", 3) == 0;
}

/* r's label: the last `depth` folders of its path ("contrast/seed1"). */
static void s_auto_label(s_run_t *r, int depth)
{
    char dir[1024];
    s_run_dir(r->path, dir, sizeof dir);
    size_t n = strlen(dir);
    const char *start = dir;
    int found = 0;
    for (char *c = dir + n; c > dir; c--)
        if (c[-1] == '/' && ++found == depth) {
            start = c;
            break;
        }
    snprintf(r->label, sizeof r->label, "%.255s", start);
    r->label_depth = depth;
}

static bool s_raw; /* --raw: train lines drawn as recorded, not as the mean of the last 10 */

static int s_usage(void)
{
    fprintf(stderr, "usage: prover-plot [-o OUT.png] [--metric KEY] "
                    "[--x total_env_steps|total_tokens|iteration|wall_s]\n"
                    "                   [--series both|train|eval] [--raw] [--logx] [--dump] "
                    "[--title T] RUN[=LABEL] ...\n"
                    "       prover-plot --cost [-o OUT.png] [--title T] [--dump] RUN[=LABEL] ...\n"
                    "OUT.png: success.png, KEY.png for --metric KEY, cost.png for --cost\n");
    return 2;
}

/* --metric names as people say them -> the key in metrics.jsonl. */
static const char *const s_aliases[][2] = {
    {"reward", "mean_reward"},
    {"clip_fraction", "clip_frac"},
    {"clipfrac", "clip_frac"},
    {"acceptance", "acceptance_rate"},
    {"verification_share", "verify_share"},
    {"success", "success_rate"},
    {"length", "episode_len"},
    {"lag", "policy_lag_mean"},
};

static const char *s_metric_key(const char *name)
{
    for (size_t i = 0; i < sizeof s_aliases / sizeof s_aliases[0]; i++)
        if (strcmp(name, s_aliases[i][0]) == 0)
            return s_aliases[i][1];
    return name;
}

/* Metrics that are shares: drawn on [0, 1]. */
static bool s_is_share(const char *key)
{
    static const char *const shares[] = {"success_rate", "acceptance_rate", "verify_share",
                                         "clip_frac", "acceptance_rate_noise"};
    for (size_t i = 0; i < sizeof shares / sizeof shares[0]; i++)
        if (strcmp(key, shares[i]) == 0)
            return true;
    return false;
}

/* The value of `key` in a record: the number, or verify_share derived from the cumulative
 * step counts; NAN when absent. */
static double s_value(const json_t *o, const char *key)
{
    double v = pv_metrics_num(o, key, NAN);
    if (isfinite(v) || strcmp(key, "verify_share") != 0)
        return v;
    double r = pv_metrics_num(o, "cum_rollout_env_steps", NAN),
           f = pv_metrics_num(o, "cum_verify_env_steps", NAN);
    return isfinite(r) && isfinite(f) && r + f > 0 ? f / (r + f) : NAN;
}

typedef struct s_extract_ctx {
    const char *metrics, *kind, *xkey, *ykey;
    const char *sampled_key; /* the eval lines' sampled counterpart of ykey */
    double scale;            /* multiplies every value (score: 100 x mean_reward) */
    char keys[512]; /* the numeric keys of the first record of `kind`, for an error message */
    FILE *out;
    int n, *n_sampled;
    double win[10]; /* the last 10 values: column 3 is their mean (training curves are one
                     * noisy batch per point) */
} s_extract_ctx_t;

static pv_err_t s_extract_line(const json_t *o, size_t lineno, const char *why, void *ctx_)
{
    s_extract_ctx_t *c = ctx_;
    if (!o) {
        fprintf(stderr, "prover-plot: %s:%zu: not JSON (%s); line skipped\n", c->metrics, lineno,
                why);
        return PV_OK;
    }
    const char *k = json_string_value(json_object_get(o, "kind"));
    if (!k || strcmp(k, c->kind) != 0)
        return PV_OK;
    if (!c->keys[0]) { /* jansson's iterators take a mutable object; nothing is changed */
        json_t *obj;
        memcpy(&obj, &o, sizeof obj);
        size_t n = 0;
        for (void *it = json_object_iter(obj); it && n < sizeof c->keys;
             it = json_object_iter_next(obj, it))
            if (json_is_number(json_object_iter_value(it)))
                n += (size_t)snprintf(c->keys + n, sizeof c->keys - n, "%s%s", n ? " " : "",
                                      json_object_iter_key(it));
    }
    json_t *x = json_object_get(o, c->xkey);
    double y = s_value(o, c->ykey) * c->scale;
    if (!json_is_number(x) || !isfinite(y))
        return PV_OK;
    c->win[c->n % 10] = y;
    c->n++;
    int m = c->n < 10 ? c->n : 10;
    double mean = 0;
    for (int i = 0; i < m; i++)
        mean += c->win[i];
    double sampled = pv_metrics_num(o, c->sampled_key, NAN);
    if (isfinite(sampled) && c->n_sampled)
        (*c->n_sampled)++;
    fprintf(c->out, "%.17g %.17g %.17g %.17g\n", json_number_value(x), y, mean / m, sampled);
    return PV_OK;
}

/* Points of `kind` lines into dat: x, the metric `ykey`, the mean of its last 10, and its
 * sampled counterpart (success_rate_sampled, score_sampled; NaN when absent; *n_sampled
 * counts the others, may be NULL). The score's train lines are 100 x mean_reward. `keys`
 * (may be NULL) gets the numeric keys of the first such line. Returns the count, or -1 when
 * the file cannot be read (said on stderr). */
static int s_extract(const char *metrics, const char *kind, const char *xkey, const char *ykey,
                     const char *dat, int *n_sampled, char *keys, size_t keys_cap)
{
    bool score = strcmp(ykey, "score") == 0, train = strcmp(kind, "train") == 0;
    s_extract_ctx_t c = {.metrics = metrics,
                         .kind = kind,
                         .xkey = xkey,
                         .ykey = score && train ? "mean_reward" : ykey,
                         .sampled_key = score ? "score_sampled" : "success_rate_sampled",
                         .scale = score && train ? 100.0 : 1.0,
                         .n_sampled = n_sampled};
    if (!(c.out = fopen(dat, "w")))
        return -1;
    pv_errmsg_t em = {{0}};
    pv_err_t rc = pv_metrics_read(metrics, s_extract_line, &c, &em);
    fclose(c.out);
    if (rc != PV_OK)
        fprintf(stderr, "prover-plot: %s\n", em.text);
    if (keys && !keys[0])
        snprintf(keys, keys_cap, "%s", c.keys);
    return rc == PV_OK ? c.n : -1;
}

typedef struct s_cost_ctx {
    double rollout, verify;
    int found;
} s_cost_ctx_t;

static pv_err_t s_cost_line(const json_t *o, size_t lineno, const char *why, void *ctx_)
{
    (void)lineno, (void)why;
    s_cost_ctx_t *c = ctx_;
    double r = pv_metrics_num(o, "cum_rollout_env_steps", NAN),
           v = pv_metrics_num(o, "cum_verify_env_steps", NAN);
    if (isfinite(r) && isfinite(v))
        *c = (s_cost_ctx_t){r, v, 1};
    return PV_OK;
}

/* The last record of `metrics` with cumulative rollout and verification steps: 1 found,
 * 0 none, -1 unreadable. */
static int s_last_cost(const char *metrics, double *rollout, double *verify)
{
    s_cost_ctx_t c = {0};
    pv_errmsg_t em = {{0}};
    if (pv_metrics_read(metrics, s_cost_line, &c, &em) != PV_OK) {
        fprintf(stderr, "prover-plot: %s\n", em.text);
        return -1;
    }
    *rollout = c.rollout;
    *verify = c.verify;
    return c.found;
}

/* A folder without metrics.jsonl that holds prover-train-local --save's run folders
 * (rl-<estimator>): say where the runs are. */
static void s_hint_rl_folders(const char *dir)
{
    char pattern[1100], m[1100];
    struct stat st;
    snprintf(m, sizeof m, "%s/metrics.jsonl", dir);
    if (stat(m, &st) == 0)
        return;
    snprintf(pattern, sizeof pattern, "%s/rl-*/metrics.jsonl", dir);
    glob_t g;
    if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0)
        fprintf(stderr,
                "prover-plot: %s holds no metrics.jsonl, but prover-train-local's run folders: "
                "name them (%s/rl-<estimator>)\n",
                dir, dir);
    globfree(&g);
}

/* A label for a gnuplot string in double quotes: quotes and backslashes become '_'. */
static void s_plain(char *label)
{
    for (char *c = label; *c; c++)
        if (*c == '"' || *c == '\\' || *c == '\'')
            *c = '_';
}

/* --cost: one cluster of two bars (rollouts, verification) per run. */
static int s_cost(s_run_t *runs, int n_runs, const char *dir, const char *out, const char *title,
                  bool dump)
{
    char dat[1100];
    snprintf(dat, sizeof dat, "%s/cost.dat", dir);
    FILE *f = fopen(dat, "w");
    if (!f)
        return 2;
    int status = 0, bars = 0, verified = 0;
    double top = 1, low = INFINITY;
    for (int i = 0; i < n_runs; i++) {
        double r = 0, v = 0;
        int found = s_last_cost(runs[i].path, &r, &v);
        if (found <= 0) {
            fprintf(stderr, "prover-plot: warning: run %s left out (%s)\n", runs[i].label,
                    found == 0 ? "no record with cum_rollout_env_steps" : "no readable metrics");
            continue;
        }
        bars++;
        s_plain(runs[i].label);
        if (dump)
            printf("%s %.17g %.17g\n", runs[i].label, r, v);
        /* log scale: a zero bar is drawn as missing, not as 10^-inf */
        fprintf(f, "\"%s\" %.17g %.17g\n", runs[i].label, r > 0 ? r : NAN, v > 0 ? v : NAN);
        verified += v > 0;
        top = fmax(top, fmax(r, v));
        low = r > 0 ? fmin(low, r) : low;
        low = v > 0 ? fmin(low, v) : low;
    }
    fclose(f);
    if (bars == 0) {
        fprintf(stderr, "prover-plot: no run has environment-step counts to draw\n");
        status = 2;
    }
    if (status == 0 && !dump) {
        FILE *gp = popen("gnuplot", "w");
        if (!gp)
            status = 1;
        else {
            fprintf(gp,
                    "set terminal pngcairo size 960,600 noenhanced\n"
                    "set output '%s'\nset title '%s'\n"
                    "set ylabel 'environment steps (log scale)'\nset logscale y\n"
                    "set yrange [%.17g:%.17g]\nset format y '%%.0s%%c'\nset grid ytics\n"
                    "set style data histograms\nset style histogram clustered gap 1\n"
                    "set style fill solid 0.8 border -1\nset key inside left top box opaque\n"
                    "set datafile missing NaN\n"
                    "plot '%s' using 2:xtic(1) title 'rollouts%s' lc rgb '#4477aa'%s\n",
                    out, title, isfinite(low) ? pow(10.0, floor(log10(low / 2.0))) : 1.0, top * 3.0,
                    dat, verified ? "" : " (no run verified a segment)",
                    /* no verification bar at all: gnuplot would warn of a series without a
                     * valid point */
                    verified ? ", '' using 3 title 'verification' lc rgb '#cc6677'" : "");
            status = pclose(gp) == 0 ? 0 : 1;
        }
        if (status)
            fprintf(stderr, "prover-plot: gnuplot failed\n");
    }
    unlink(dat);
    return status;
}

/* Curves of metric `ykey`: train lines and/or (success_rate) eval points per run. A run
 * without a file or without records is left out with a warning. */
/* --dump: the points instead of a plot, one line each: label, kind, x, value, mean of 10. */
static void s_dump(const s_run_t *r, const char *kind, const char *dat)
{
    FILE *f = fopen(dat, "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        double x, y, mean;
        if (sscanf(line, "%lf %lf %lf", &x, &y, &mean) == 3)
            printf("%s %s %.17g %.17g %.17g\n", r->label, kind, x, y, mean);
    }
    if (f)
        fclose(f);
}

static int s_curves(s_run_t *runs, int n_runs, const char *dir, const char *out, const char *title,
                    const char *xkey, const char *ykey, const char *series, bool logx, bool dump)
{
    int status = 0, drawn = 0;
    /* eval lines hold the held-out success and score */
    bool score = strcmp(ykey, "score") == 0;
    bool eval_kind = strcmp(ykey, "success_rate") == 0 || score;
    bool train = strcmp(series, "eval") != 0, eval = strcmp(series, "train") != 0 && eval_kind;
    char keys[512] = "";
    const char *what = train && eval ? "train or eval" : train ? "train" : "eval";
    for (int i = 0; i < n_runs; i++) {
        snprintf(runs[i].train_dat, sizeof runs[i].train_dat, "%s/train%d.dat", dir, i);
        snprintf(runs[i].eval_dat, sizeof runs[i].eval_dat, "%s/eval%d.dat", dir, i);
        runs[i].n_train = train ? s_extract(runs[i].path, "train", xkey, ykey, runs[i].train_dat,
                                            NULL, keys, sizeof keys)
                                : 0;
        runs[i].n_sampled = 0;
        runs[i].n_eval = eval ? s_extract(runs[i].path, "eval", xkey, ykey, runs[i].eval_dat,
                                          &runs[i].n_sampled, NULL, 0)
                              : 0;
        if (runs[i].n_train < 0 || runs[i].n_eval < 0) {
            fprintf(stderr, "prover-plot: warning: run %s left out (no readable metrics)\n",
                    runs[i].label);
            runs[i].n_train = runs[i].n_eval = runs[i].n_sampled = 0;
        } else if (runs[i].n_train == 0 && runs[i].n_eval == 0) {
            fprintf(stderr,
                    "prover-plot: warning: run %s left out (%s: no %s records with %s and %s)\n",
                    runs[i].label, runs[i].path, what, xkey, ykey);
        }
        drawn += runs[i].n_train > 0 || runs[i].n_eval > 0;
        s_plain(runs[i].label);
    }
    if (drawn == 0) {
        fprintf(stderr, "prover-plot: no run has %s records with %s and %s%s%s%s\n", what, xkey,
                ykey, keys[0] ? " (the train lines' numeric keys: " : "", keys, keys[0] ? ")" : "");
        status = 2;
    }
    for (int i = 0; dump && status == 0 && i < n_runs; i++) {
        if (runs[i].n_train > 0)
            s_dump(&runs[i], "train", runs[i].train_dat);
        if (runs[i].n_eval > 0)
            s_dump(&runs[i], "eval", runs[i].eval_dat);
    }
    if (status == 0 && !dump) {
        FILE *gp = popen("gnuplot", "w");
        if (!gp) {
            perror("prover-plot: gnuplot");
            status = 1;
        } else {
            const char *xl =
                strcmp(xkey, "total_env_steps") == 0 ? "environment steps (rollouts + verification)"
                : strcmp(xkey, "total_tokens") == 0  ? "generated tokens (rollouts + verification)"
                : strcmp(xkey, "iteration") == 0     ? "learner updates"
                                                     : "wall time (s)";
            fprintf(gp,
                    "set terminal pngcairo size 960,600 noenhanced\n"
                    "set output '%s'\nset title '%s'\nset xlabel '%s'\n"
                    "set ylabel '%s'\n%s\nset grid\n"
                    "set key %s box opaque\nset rmargin 6\n%s\nplot ",
                    out, title, xl,
                    score       ? "score (mean final reward x 100)"
                    : eval_kind ? "success rate"
                                : ykey,
                    s_is_share(ykey) ? "set yrange [0:1]"
                    : score          ? "set yrange [0:100]"
                                     : "set autoscale y",
                    eval_kind ? "inside right bottom" : "outside bottom center horizontal",
                    logx ? "set logscale x\nset format x '%.0s%c'" : "");
            const char *sep = "";
            for (int i = 0; i < n_runs; i++) {
                if (runs[i].n_train > 0) {
                    fprintf(gp, "%s'%s' using 1:%d with lines lw 2 lc %d title '%s train%s'", sep,
                            runs[i].train_dat, s_raw ? 2 : 3, i + 1, runs[i].label,
                            s_raw ? "" : " (mean of 10 updates)");
                    sep = ", ";
                }
                if (runs[i].n_eval > 0) {
                    fprintf(gp,
                            "%s'%s' using 1:2 with linespoints pt 7 ps 1.2 lc %d dt %d lw %d "
                            "title '%s%s'",
                            sep, runs[i].eval_dat, i + 1, train ? 2 : 1, train ? 1 : 2,
                            runs[i].label, train ? " eval (greedy, held-out)" : "");
                    sep = ", ";
                }
                if (runs[i].n_sampled > 0) {
                    fprintf(gp,
                            "%s'%s' using 1:4 with linespoints pt 6 ps 1.2 lc %d dt 3 lw %d "
                            "title '%s eval (sampled, held-out)'",
                            sep, runs[i].eval_dat, i + 1, train ? 1 : 2, runs[i].label);
                    sep = ", ";
                }
            }
            fprintf(gp, "\n");
            if (pclose(gp) != 0) {
                fprintf(stderr, "prover-plot: gnuplot failed\n");
                status = 1;
            }
        }
    }
    for (int i = 0; i < n_runs; i++) {
        unlink(runs[i].train_dat);
        unlink(runs[i].eval_dat);
    }
    return status;
}

int main(int argc, char **argv)
{
    const char *out = NULL, *xkey = "total_env_steps", *title = "prover";
    const char *ykey = "success_rate";
    const char *series = "both";
    bool cost = false, logx = false, dump = false;
    static s_run_t runs[S_MAX_RUNS];
    int n_runs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--x") == 0 && i + 1 < argc)
            xkey = argv[++i];
        else if (strcmp(argv[i], "--metric") == 0 && i + 1 < argc)
            ykey = s_metric_key(argv[++i]);
        else if (strcmp(argv[i], "--series") == 0 && i + 1 < argc)
            series = argv[++i];
        else if (strcmp(argv[i], "--title") == 0 && i + 1 < argc)
            title = argv[++i];
        else if (strcmp(argv[i], "--cost") == 0)
            cost = true;
        else if (strcmp(argv[i], "--dump") == 0)
            dump = true;
        else if (strcmp(argv[i], "--logx") == 0)
            logx = true;
        else if (strcmp(argv[i], "--raw") == 0)
            s_raw = true;
        else if (argv[i][0] == '-')
            return s_usage();
        else if (n_runs == S_MAX_RUNS) {
            fprintf(stderr, "prover-plot: at most %d runs\n", S_MAX_RUNS);
            return 2;
        } else {
            s_run_t *r = &runs[n_runs++];
            memset(r, 0, sizeof *r);
            snprintf(r->path, sizeof r->path, "%s", argv[i]);
            char *eq = strrchr(r->path, '=');
            if (eq) {
                *eq = '\0';
                snprintf(r->label, sizeof r->label, "%s", eq + 1);
            }
            struct stat st;
            if (stat(r->path, &st) == 0 && S_ISDIR(st.st_mode)) {
                s_hint_rl_folders(r->path);
                strncat(r->path, "/metrics.jsonl", sizeof r->path - strlen(r->path) - 1);
            }
            if (!eq) /* prover-train-local's rl-<estimator>: told apart by their parent */
                s_auto_label(r, s_in_rl_folder(r->path) ? 2 : 1);
        }
    }
    /* automatic labels that collide (grpo/seed1 and contrast/seed1) take more folders: at
     * each depth every automatic label shared with another run is marked first, then all of
     * them are relabelled */
    for (int depth = 2; depth <= 4; depth++) {
        bool grow[S_MAX_RUNS] = {false}, any = false;
        for (int i = 0; i < n_runs; i++)
            for (int j = 0; j < n_runs && !grow[i]; j++)
                if (i != j && runs[i].label_depth && runs[i].label_depth < depth &&
                    strcmp(runs[i].label, runs[j].label) == 0)
                    grow[i] = any = true;
        for (int i = 0; i < n_runs; i++)
            if (grow[i])
                s_auto_label(&runs[i], depth);
        if (!any)
            break;
    }
    if (n_runs == 0 ||
        (strcmp(xkey, "total_env_steps") && strcmp(xkey, "total_tokens") &&
         strcmp(xkey, "iteration") && strcmp(xkey, "wall_s")) ||
        (strcmp(series, "both") && strcmp(series, "train") && strcmp(series, "eval")))
        return s_usage();
    char dir[] = "/tmp/prover-plot.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("prover-plot: mkdtemp");
        return 2;
    }
    char def_out[128];
    if (!out) { /* success.png, KEY.png, cost.png */
        snprintf(def_out, sizeof def_out, "%.100s.png",
                 cost                                ? "cost"
                 : strcmp(ykey, "success_rate") == 0 ? "success"
                                                     : ykey);
        out = def_out;
    }
    int status = cost ? s_cost(runs, n_runs, dir, out, title, dump)
                      : s_curves(runs, n_runs, dir, out, title, xkey, ykey, series, logx, dump);
    rmdir(dir);
    if (status == 0 && !dump)
        printf("prover-plot: wrote %s\n", out);
    return status;
}
