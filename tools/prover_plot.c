/* prover-plot - PNG plots of one or more runs' metrics.jsonl with gnuplot.
 *
 *   prover-plot [-o OUT.png] [--x total_env_steps|iteration|wall_s] [--series both|train|eval]
 *               [--logx] [--title T] RUN_DIR_OR_METRICS[=LABEL] ...
 *   prover-plot --cost [-o OUT.png] [--title T] RUN_DIR_OR_METRICS[=LABEL] ...
 *
 * Plots success rate against the x axis (default: environment steps, rollouts and
 * verification together): each run's training success (sampled, per iteration) as a line
 * and its held-out evaluations as points, greedy and (when recorded) sampled (--series keeps
 * one of the two kinds; --logx puts
 * the x axis on a log scale, where points at x = 0 are not drawn). A run
 * argument is a metrics.jsonl file or a run folder containing one; "=LABEL" names it in the
 * legend (default: the folder name). --cost draws instead a bar chart of each run's
 * environment steps, rollouts and verification side by side on a log scale, from its last
 * record with cum_rollout_env_steps and cum_verify_env_steps. Data is extracted with
 * jansson into a temporary folder and drawn by gnuplot's pngcairo terminal. Exit status 0,
 * 1 when gnuplot fails, 2 for bad arguments or files.
 */
#include <errno.h>
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
    char train_dat[1100], eval_dat[1100];
    int n_train, n_eval, n_sampled; /* n_sampled: eval lines with success_rate_sampled */
} s_run_t;

static int s_usage(void)
{
    fprintf(stderr, "usage: prover-plot [-o OUT.png] [--x total_env_steps|iteration|wall_s] "
                    "[--series both|train|eval] [--logx] [--title T] RUN[=LABEL] ...\n"
                    "       prover-plot --cost [-o OUT.png] [--title T] RUN[=LABEL] ...\n");
    return 2;
}

typedef struct s_extract_ctx {
    const char *metrics, *kind, *xkey;
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
    json_t *x = json_object_get(o, c->xkey), *y = json_object_get(o, "success_rate");
    if (!k || strcmp(k, c->kind) != 0 || !json_is_number(x) || !json_is_number(y))
        return PV_OK;
    c->win[c->n % 10] = json_number_value(y);
    c->n++;
    int m = c->n < 10 ? c->n : 10;
    double mean = 0;
    for (int i = 0; i < m; i++)
        mean += c->win[i];
    double sampled = pv_metrics_num(o, "success_rate_sampled", NAN);
    if (isfinite(sampled) && c->n_sampled)
        (*c->n_sampled)++;
    fprintf(c->out, "%.17g %.17g %.17g %.17g\n", json_number_value(x), json_number_value(y),
            mean / m, sampled);
    return PV_OK;
}

/* Points of `kind` lines into dat: x, success_rate, the mean of the last 10, and
 * success_rate_sampled (NaN when absent; *n_sampled counts the others, may be NULL).
 * Returns the count, or -1 when a file cannot be opened. */
static int s_extract(const char *metrics, const char *kind, const char *xkey, const char *dat,
                     int *n_sampled)
{
    s_extract_ctx_t c = {.metrics = metrics, .kind = kind, .xkey = xkey, .n_sampled = n_sampled};
    if (!(c.out = fopen(dat, "w")))
        return -1;
    pv_errmsg_t em = {{0}};
    pv_err_t rc = pv_metrics_read(metrics, s_extract_line, &c, &em);
    fclose(c.out);
    if (rc != PV_OK)
        fprintf(stderr, "prover-plot: %s\n", em.text);
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

/* A label for a gnuplot string in double quotes: quotes and backslashes become '_'. */
static void s_plain(char *label)
{
    for (char *c = label; *c; c++)
        if (*c == '"' || *c == '\\' || *c == '\'')
            *c = '_';
}

/* --cost: one cluster of two bars (rollouts, verification) per run. */
static int s_cost(s_run_t *runs, int n_runs, const char *dir, const char *out, const char *title)
{
    char dat[1100];
    snprintf(dat, sizeof dat, "%s/cost.dat", dir);
    FILE *f = fopen(dat, "w");
    if (!f)
        return 2;
    int status = 0;
    double top = 1, low = INFINITY;
    for (int i = 0; i < n_runs && status == 0; i++) {
        double r = 0, v = 0;
        int found = s_last_cost(runs[i].path, &r, &v);
        if (found <= 0) {
            if (found == 0)
                fprintf(stderr, "prover-plot: %s: no record with cum_rollout_env_steps\n",
                        runs[i].path);
            status = 2;
            break;
        }
        s_plain(runs[i].label);
        /* log scale: a zero bar is drawn as missing, not as 10^-inf */
        fprintf(f, "\"%s\" %.17g %.17g\n", runs[i].label, r > 0 ? r : NAN, v > 0 ? v : NAN);
        top = fmax(top, fmax(r, v));
        low = r > 0 ? fmin(low, r) : low;
        low = v > 0 ? fmin(low, v) : low;
    }
    fclose(f);
    if (status == 0) {
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
                    "plot '%s' using 2:xtic(1) title 'rollouts' lc rgb '#4477aa', "
                    "'' using 3 title 'verification' lc rgb '#cc6677'\n",
                    out, title, isfinite(low) ? pow(10.0, floor(log10(low / 2.0))) : 1.0, top * 3.0,
                    dat);
            status = pclose(gp) == 0 ? 0 : 1;
        }
        if (status)
            fprintf(stderr, "prover-plot: gnuplot failed\n");
    }
    unlink(dat);
    return status;
}

/* Success-rate curves: train lines and/or eval points per run. */
static int s_curves(s_run_t *runs, int n_runs, const char *dir, const char *out, const char *title,
                    const char *xkey, const char *series, bool logx)
{
    int status = 0, drawn = 0;
    bool train = strcmp(series, "eval") != 0, eval = strcmp(series, "train") != 0;
    for (int i = 0; i < n_runs; i++) {
        snprintf(runs[i].train_dat, sizeof runs[i].train_dat, "%s/train%d.dat", dir, i);
        snprintf(runs[i].eval_dat, sizeof runs[i].eval_dat, "%s/eval%d.dat", dir, i);
        runs[i].n_train =
            train ? s_extract(runs[i].path, "train", xkey, runs[i].train_dat, NULL) : 0;
        runs[i].n_sampled = 0;
        runs[i].n_eval =
            eval ? s_extract(runs[i].path, "eval", xkey, runs[i].eval_dat, &runs[i].n_sampled) : 0;
        if (runs[i].n_train < 0 || runs[i].n_eval < 0)
            status = 2;
        drawn += runs[i].n_train > 0 || runs[i].n_eval > 0;
        s_plain(runs[i].label);
    }
    if (status == 0 && drawn == 0) {
        fprintf(stderr, "prover-plot: no %s records with %s and success_rate\n",
                train && eval ? "train or eval" : series, xkey);
        status = 2;
    }
    if (status == 0) {
        FILE *gp = popen("gnuplot", "w");
        if (!gp) {
            perror("prover-plot: gnuplot");
            status = 1;
        } else {
            const char *xl = strcmp(xkey, "total_env_steps") == 0
                                 ? "environment steps (rollouts + verification)"
                             : strcmp(xkey, "iteration") == 0 ? "learner updates"
                                                              : "wall time (s)";
            fprintf(gp,
                    "set terminal pngcairo size 960,600 noenhanced\n"
                    "set output '%s'\nset title '%s'\nset xlabel '%s'\n"
                    "set ylabel 'success rate'\nset yrange [0:1]\nset grid\n"
                    "set key inside right bottom box opaque\nset rmargin 6\n%s\nplot ",
                    out, title, xl, logx ? "set logscale x\nset format x '%.0s%c'" : "");
            const char *sep = "";
            for (int i = 0; i < n_runs; i++) {
                if (runs[i].n_train > 0) {
                    fprintf(gp,
                            "%s'%s' using 1:3 with lines lw 2 lc %d title '%s train (mean of 10 "
                            "updates)'",
                            sep, runs[i].train_dat, i + 1, runs[i].label);
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
    const char *out = "success.png", *xkey = "total_env_steps", *title = "prover";
    const char *series = "both";
    bool cost = false, logx = false;
    static s_run_t runs[S_MAX_RUNS];
    int n_runs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--x") == 0 && i + 1 < argc)
            xkey = argv[++i];
        else if (strcmp(argv[i], "--series") == 0 && i + 1 < argc)
            series = argv[++i];
        else if (strcmp(argv[i], "--title") == 0 && i + 1 < argc)
            title = argv[++i];
        else if (strcmp(argv[i], "--cost") == 0)
            cost = true;
        else if (strcmp(argv[i], "--logx") == 0)
            logx = true;
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
            if (stat(r->path, &st) == 0 && S_ISDIR(st.st_mode))
                strncat(r->path, "/metrics.jsonl", sizeof r->path - strlen(r->path) - 1);
            if (!eq) {
                char tmp[1024];
                snprintf(tmp, sizeof tmp, "%s", r->path);
                char *slash = strrchr(tmp, '/');
                if (slash && strcmp(slash, "/metrics.jsonl") == 0)
                    *slash = '\0';
                slash = strrchr(tmp, '/');
                snprintf(r->label, sizeof r->label, "%.255s", slash ? slash + 1 : tmp);
            }
        }
    }
    if (n_runs == 0 ||
        (strcmp(xkey, "total_env_steps") && strcmp(xkey, "iteration") && strcmp(xkey, "wall_s")) ||
        (strcmp(series, "both") && strcmp(series, "train") && strcmp(series, "eval")))
        return s_usage();
    char dir[] = "/tmp/prover-plot.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("prover-plot: mkdtemp");
        return 2;
    }
    int status = cost ? s_cost(runs, n_runs, dir, out, title)
                      : s_curves(runs, n_runs, dir, out, title, xkey, series, logx);
    rmdir(dir);
    if (status == 0)
        printf("prover-plot: wrote %s\n", out);
    return status;
}
