/* prover-plot - PNG plots of one or more runs' metrics.jsonl with gnuplot.
 *
 *   prover-plot [-o OUT.png] [--x total_env_steps|iteration|wall_s] [--title T]
 *               RUN_DIR_OR_METRICS[=LABEL] ...
 *
 * Plots success rate against the x axis (default: environment steps, rollouts and
 * verification together): each run's training success (sampled, per iteration) as a line
 * and its greedy held-out evaluations as points. A run argument is a metrics.jsonl file or
 * a run folder containing one; "=LABEL" names it in the legend (default: the folder name).
 * Data is extracted with jansson into a temporary folder and drawn by gnuplot's pngcairo
 * (or png) terminal. Exit status 0, 1 when gnuplot fails, 2 for bad arguments or files.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_MAX_RUNS 32

typedef struct s_run {
    char path[1024];
    char label[256];
    char train_dat[1100], eval_dat[1100];
    int n_train, n_eval;
} s_run_t;

static int s_usage(void)
{
    fprintf(stderr, "usage: prover-plot [-o OUT.png] [--x total_env_steps|iteration|wall_s] "
                    "[--title T] RUN[=LABEL] ...\n");
    return 2;
}

/* Write "x y" lines of `kind` records to dat; returns the count or -1. */
static int s_extract(const char *metrics, const char *kind, const char *xkey, const char *dat)
{
    FILE *in = fopen(metrics, "r");
    if (!in) {
        fprintf(stderr, "prover-plot: %s: %s\n", metrics, strerror(errno));
        return -1;
    }
    FILE *out = fopen(dat, "w");
    if (!out) {
        fclose(in);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int n = 0, lineno = 0;
    while (getline(&line, &cap, in) > 0) {
        lineno++;
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        if (!o) {
            fprintf(stderr, "prover-plot: %s:%d: not JSON (%s); line skipped\n", metrics, lineno,
                    je.text);
            continue;
        }
        const char *k = json_string_value(json_object_get(o, "kind"));
        json_t *x = json_object_get(o, xkey), *y = json_object_get(o, "success_rate");
        if (k && strcmp(k, kind) == 0 && json_is_number(x) && json_is_number(y)) {
            fprintf(out, "%.17g %.17g\n", json_number_value(x), json_number_value(y));
            n++;
        }
        json_decref(o);
    }
    free(line);
    fclose(in);
    fclose(out);
    return n;
}

int main(int argc, char **argv)
{
    const char *out = "success.png", *xkey = "total_env_steps", *title = "prover";
    s_run_t runs[S_MAX_RUNS];
    int n_runs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--x") == 0 && i + 1 < argc)
            xkey = argv[++i];
        else if (strcmp(argv[i], "--title") == 0 && i + 1 < argc)
            title = argv[++i];
        else if (argv[i][0] == '-')
            return s_usage();
        else if (n_runs < S_MAX_RUNS) {
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
        (strcmp(xkey, "total_env_steps") && strcmp(xkey, "iteration") && strcmp(xkey, "wall_s")))
        return s_usage();
    char dir[] = "/tmp/prover-plot.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("prover-plot: mkdtemp");
        return 2;
    }
    int status = 0, drawn = 0;
    for (int i = 0; i < n_runs; i++) {
        snprintf(runs[i].train_dat, sizeof runs[i].train_dat, "%s/train%d.dat", dir, i);
        snprintf(runs[i].eval_dat, sizeof runs[i].eval_dat, "%s/eval%d.dat", dir, i);
        runs[i].n_train = s_extract(runs[i].path, "train", xkey, runs[i].train_dat);
        runs[i].n_eval = s_extract(runs[i].path, "eval", xkey, runs[i].eval_dat);
        if (runs[i].n_train < 0 || runs[i].n_eval < 0)
            status = 2;
        drawn += runs[i].n_train > 0 || runs[i].n_eval > 0;
    }
    if (status == 0 && drawn == 0) {
        fprintf(stderr, "prover-plot: no train or eval records with %s and success_rate\n", xkey);
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
                    "set key inside right bottom box opaque\nplot ",
                    out, title, xl);
            const char *sep = "";
            for (int i = 0; i < n_runs; i++) {
                if (runs[i].n_train > 0) {
                    fprintf(gp, "%s'%s' using 1:2 with lines lw 2 lc %d title '%s train'", sep,
                            runs[i].train_dat, i + 1, runs[i].label);
                    sep = ", ";
                }
                if (runs[i].n_eval > 0) {
                    fprintf(gp,
                            "%s'%s' using 1:2 with linespoints pt 7 ps 1.2 lc %d dt 2 "
                            "title '%s eval (greedy, held-out)'",
                            sep, runs[i].eval_dat, i + 1, runs[i].label);
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
    rmdir(dir);
    if (status == 0)
        printf("prover-plot: wrote %s\n", out);
    return status;
}
