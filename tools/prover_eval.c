/* prover-eval - aggregate an evaluation grid (issue 8): configurations x seeds x
 * environments, side by side.
 *
 *   prover-eval [--target X] [--command TEXT] [--no-plots] GRID_DIR
 *   prover-eval --steps-per-update CONFIG_DIR
 *
 * The second form prints the mean environment steps (rollouts + verification) per learner
 * update over the runs of one configuration folder that load as the grid's do (a failed
 * run is none): what cluster/eval-grid's grpo-matched scales its groups by. Exit 2 when no
 * run loads.
 *
 * GRID_DIR holds one folder per environment, in it one folder per configuration (grpo,
 * contrast, random, oracle, exhaustive, ...), in it one run folder per seed with the
 * learner's metrics.jsonl and summary.json (cluster/eval-grid lays it out). Optional files
 * GRID_DIR/ENV/overrides.txt and GRID_DIR/ENV/CONFIG/overrides.txt describe the settings.
 * Per environment and configuration, over seeds (mean +- sample std):
 *   final success          greedy held-out success at the end (summary eval_success_after)
 *   final success (sampled) the same held-out tasks with actions sampled from the policy
 *                          (eval_sampled_success_after): steadier across seeds than greedy,
 *                          which one argmax loop can sink
 *   final score            held-out mean final reward x 100 (eval_score_after; WebShop's
 *                          standard number, 100 x success for 0/1 rewards)
 *   success at N updates   the evaluation curve at the last learner update every run of the
 *                          environment reached (equal updates: is the credit better?)
 *   success at S steps     the curve at S = the fewest environment steps (rollouts +
 *                          verification) any run of the environment ended with (equal
 *                          environment steps: is it worth its cost?)
 *   steps to target        environment steps at which the curve first reaches --target
 *                          (default 0.5), over the seeds that reached it
 *   verification share     verification steps / all environment steps
 *   judge precision        pivotal / oracle-labelled proposals (prover.measure_precision)
 * Writes GRID_DIR/results.md (the tables, the date the runs finished, the machine, the
 * command), GRID_DIR/results.json, the mean curves GRID_DIR/ENV/CONFIG/mean.jsonl and, with
 * prover-plot (found beside this program), GRID_DIR/ENV-success-vs-updates.png,
 * ENV-success-vs-env-steps.png (log x axis when the runs' budgets differ tenfold) and
 * ENV-verification-cost.png.
 * Exit status 0; 1 when a plot failed; 2 for bad arguments or a grid without a usable run.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/eval_grid.h"

static int s_usage(void)
{
    fprintf(stderr, "usage: prover-eval [--target X] [--command TEXT] [--no-plots] GRID_DIR\n"
                    "       prover-eval --steps-per-update CONFIG_DIR\n");
    return 2;
}

/* --steps-per-update: the mean over the runs (seed folders) of dir. */
static int s_steps_per_update(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "prover-eval: %s: %s\n", dir, strerror(errno));
        return 2;
    }
    double sum = 0;
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        pv_ev_run_t r;
        if (pv_ev_run_load(path, &r, NULL) != PV_OK)
            continue;
        if (r.iterations > 0) {
            sum += (r.rollout_steps + r.verify_steps) / (double)r.iterations;
            n++;
        }
        pv_ev_run_free(&r);
    }
    closedir(d);
    if (n == 0) {
        fprintf(stderr, "prover-eval: %s: no finished run\n", dir);
        return 2;
    }
    printf("%.6f\n", sum / (double)n);
    return 0;
}

/* Run build/bin/prover-plot (beside this executable) with argv; 0 on success. */
static int s_plot(char **argv)
{
    char self[PATH_MAX], exe[PATH_MAX + 16];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(exe, sizeof exe, "%s/prover-plot", self);
    argv[0] = exe;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execv(exe, argv);
        fprintf(stderr, "prover-eval: %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* The plots of one environment (the acceptance plot only when a configuration verified
 * segments, the tokens plot only when every run counted its generated tokens). Returns the
 * failures. */
static int s_plots(const char *grid, const pv_eg_env_t *e)
{
    char out[5][PATH_MAX], title[5][512], args[PV_EG_MAX_CONFIGS][PATH_MAX + 64];
    int failed = 0;
    for (size_t c = 0; c < e->n_configs; c++)
        snprintf(args[c], sizeof args[c], "%s/%s/%s/mean.jsonl=%s", grid, e->name,
                 e->configs[c].name, e->configs[c].name);
    static const char *const files[5] = {"success-vs-updates", "success-vs-env-steps",
                                         "verification-cost", "acceptance", "success-vs-tokens"};
    static const char *const what[5] = {
        "greedy held-out success vs learner updates",
        "greedy held-out success vs environment steps",
        "rollout and verification environment steps",
        "acceptance rate so far (verified segments with a positive delta) vs learner updates",
        "greedy held-out success vs generated tokens"};
    bool any_verified = pv_eg_env_verifies(e);
    for (int p = 0; p < 5; p++) {
        if ((p == 3 && !any_verified) || (p == 4 && !isfinite(e->tokens)))
            continue;
        snprintf(out[p], sizeof out[p], "%s/%s-%s.png", grid, e->name, files[p]);
        snprintf(title[p], sizeof title[p], "%s: %s (mean over seeds)", e->name, what[p]);
        char *argv[14 + PV_EG_MAX_CONFIGS];
        int a = 1;
        argv[a++] = "-o";
        argv[a++] = out[p];
        argv[a++] = "--title";
        argv[a++] = title[p];
        if (p < 2 || p == 4) {
            argv[a++] = "--series";
            argv[a++] = "eval";
            argv[a++] = "--x";
            argv[a++] = p == 0 ? "iteration" : p == 1 ? "total_env_steps" : "total_tokens";
            if (p == 1 && e->steps_max > 10.0 * e->steps)
                argv[a++] = "--logx"; /* exhaustive verification: an order of magnitude more */
        } else if (p == 2) {
            argv[a++] = "--cost";
        } else {
            argv[a++] = "--metric";
            argv[a++] = "acceptance_rate_cum";
            argv[a++] = "--raw"; /* already a rate so far: no second averaging */
            argv[a++] = "--series";
            argv[a++] = "train";
            argv[a++] = "--x";
            argv[a++] = "iteration";
        }
        for (size_t c = 0; c < e->n_configs; c++)
            if (e->configs[c].n_ok > 0 && (p != 3 || pv_eg_config_verifies(&e->configs[c])))
                argv[a++] = args[c];
        argv[a] = NULL;
        if (s_plot(argv) != 0) {
            fprintf(stderr, "prover-eval: plot %s failed\n", out[p]);
            failed++;
        }
    }
    return failed;
}

int main(int argc, char **argv)
{
    const char *grid = NULL, *command = NULL;
    double target = 0.5;
    int plots = 1;
    if (argc == 3 && strcmp(argv[1], "--steps-per-update") == 0)
        return s_steps_per_update(argv[2]);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
            char *end;
            target = strtod(argv[++i], &end);
            if (*end || !(target > 0 && target <= 1)) {
                fprintf(stderr, "prover-eval: --target wants a success rate in (0, 1]\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--command") == 0 && i + 1 < argc) {
            command = argv[++i];
        } else if (strcmp(argv[i], "--no-plots") == 0) {
            plots = 0;
        } else if (argv[i][0] == '-' || grid) {
            return s_usage();
        } else {
            grid = argv[i];
        }
    }
    if (!grid)
        return s_usage();
    pv_eg_t *g = NULL;
    pv_errmsg_t em = {{0}};
    pv_err_t rc = pv_eg_load(grid, target, &g, &em);
    if (rc != PV_OK) {
        fprintf(stderr, "prover-eval: %s\n", em.text[0] ? em.text : pv_strerror(rc));
        return 2;
    }
    for (size_t i = 0; i < g->n_skipped; i++)
        fprintf(stderr, "prover-eval: run left out: %s\n", g->skipped[i]);
    int status = 0;
    if ((rc = pv_eg_write_means(g, grid, &em)) != PV_OK) {
        fprintf(stderr, "prover-eval: %s\n", em.text);
        status = 2;
    }
    for (size_t e = 0; status == 0 && plots && e < g->n_envs; e++)
        if (s_plots(grid, &g->envs[e]) > 0)
            status = 1;
    char cmd[4096];
    if (!command) {
        size_t len = (size_t)snprintf(cmd, sizeof cmd, "prover-eval");
        for (int i = 1; i < argc && len < sizeof cmd; i++)
            len += (size_t)snprintf(cmd + len, sizeof cmd - len, " %s", argv[i]);
        command = cmd;
    }
    if (status != 2 && ((rc = pv_eg_write_markdown(g, grid, command, plots, &em)) != PV_OK ||
                        (rc = pv_eg_write_json(g, grid, command, &em)) != PV_OK)) {
        fprintf(stderr, "prover-eval: %s\n", em.text);
        status = 2;
    }
    if (status != 2)
        printf("prover-eval: wrote %s/results.md (%zu environments, %zu runs)\n", grid, g->n_envs,
               g->n_runs);
    pv_eg_destroy(&g);
    return status;
}
