/* prover_train_local.c - prover-train-local: the whole training loop in one process, no MPI,
 * no broker (quick experiments, deterministic from run.seed).
 *
 *   prover-train-local [--config FILE] [--estimators LIST] [--save] [--bc-only]
 *                      [--eval-every N] [--threads N] [section.key=value ...]
 *
 * Reads the run configuration like every role (docs/config.md). Phases: evaluate the
 * untrained policy (labelled "start" when policy.init_checkpoint or policy.path loads one) on
 * learner.eval_tasks held-out tasks (greedy and sampled); behaviour cloning on learner.bc_episodes
 * expert demonstrations when that is > 0 (learner.bc_epochs, bc_batch, bc_lr), then evaluate again;
 * then, from those weights, run.iterations iterations of the in-process pipeline
 * (tools/local_prover.h: the actor's, the judge's, the verifiers' and the learner's own code) for
 * each estimator of --estimators (a comma-separated list of algorithm.adv_estimator values, default
 * the configured one), each evaluated on the same held-out tasks. One line per iteration and per
 * evaluation, a summary at the end. --save first moves a run.out_dir that holds a run aside to
 * run.out_dir.<date> (s_move_aside), then writes run.out_dir/<phase>.safetensors (phase: bc, or
 * the estimator's name) after behaviour cloning and after each estimator (a language model:
 * the Hugging Face directory run.out_dir/<phase>) and the configuration into
 * run.out_dir/config.yaml (`prover-env play
 * --policy` reads it), and gives each estimator a run folder run.out_dir/rl-<estimator> holding
 * metrics.jsonl, summary.json and summary.txt as the learner writes them (learner/report.h:
 * the start's evaluation as iteration 0, a train line per iteration, an eval line per
 * evaluation), which prover-plot and prover-eval read. learner.use_kl_loss takes the policy after
 * behaviour cloning (or policy.init_checkpoint) as the reference.
 * --bc-only (implies --save; needs learner.bc_episodes > 0) stops after behaviour cloning
 * and its evaluation, without evaluating the untrained policy: the start that
 * `cluster/eval-grid --policy transformer` gives every configuration of a seed
 * (policy.init_checkpoint=run.out_dir/bc learner.bc_episodes=0).
 * --eval-every N also evaluates every N iterations of a run (labelled "ESTIMATOR@IT"), so a
 * long run shows its held-out curve; the last iteration's evaluation is the run's result.
 * --threads N plays up to N groups of an iteration at once (tools/local_prover.h; default: the
 * online CPUs) and shares each evaluation's tasks among N threads: the numbers do not change
 * with N (with the transformer, up to its KV cache: an evaluation leaves other prefixes in the
 * trainer's cache, and a prefix reused rather than recomputed can differ in its last bits, so
 * a long run's later iterations can drift apart). The training forward and backward take
 * policy.train_threads.
 * Exit status: 0, 2 for a bad command line or configuration, 1 for a failure while running.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/role.h"
#include "common/role_build.h"
#include "common/traj/episodes.h"
#include "learner/report.h"
#include "learner/train_ckpt.h"
#include "tools/local_prover.h"

static const char s_usage[] =
    "usage: prover-train-local [--config FILE] [--estimators LIST] [--save] [--bc-only] "
    "[--eval-every N] [--threads N] [section.key=value ...]\n"
    "The whole training loop in one process (no MPI, no broker): evaluation, behaviour cloning\n"
    "(learner.bc_episodes > 0), run.iterations iterations per estimator of LIST (values of\n"
    "algorithm.adv_estimator, comma-separated; default the configured one), each from the same\n"
    "start and evaluated on the same learner.eval_tasks held-out tasks. --save moves a\n"
    "run.out_dir holding a run aside (run.out_dir.<date>), then writes the checkpoints\n"
    "run.out_dir/<phase>.safetensors (bc, and each estimator), run.out_dir/config.yaml and,\n"
    "per estimator, a run folder run.out_dir/rl-<estimator> (metrics.jsonl, summary.json,\n"
    "summary.txt). --eval-every N: a held-out evaluation every N iterations as well (the\n"
    "curve of a long run; learner.eval_every is not read here).\n"
    "--bc-only: behaviour cloning, its evaluation and run.out_dir/bc only (implies --save).\n"
    "--threads N: groups, and evaluation episodes, played at once (default: the online CPUs;\n"
    "the results do not depend on it).\n"
    "Example:\n"
    "  prover-train-local --config cluster/configs/alfworld.yaml --estimators grpo,prover \\\n"
    "      run.iterations=120 learner.bc_episodes=400 learner.bc_epochs=20\n";

#define S_MAX_ESTIMATORS 8

typedef struct s_tool {
    pv_config_t cfg;
    char estimators[S_MAX_ESTIMATORS][64];
    size_t n_est;
    bool save;
    long eval_every; /* --eval-every: held-out evaluations during a run; 0 = at its end only */
    long threads;    /* --threads: groups played at once; 0 = the online CPUs */
    bool bc_only;    /* --bc-only: stop after behaviour cloning (saved) */
    pv_env_model_t *model;
    pv_env_t *env;
    pv_arena_t *arena;
    pv_policy_t *policy;
    pv_policy_t *ref; /* learner.use_kl_loss: the policy every estimator starts from */
    pv_adam_t *adam;
    pv_trainer_t trainer;
    bool trainer_ok;
    pv_train_cfg_t tc;
    pv_episodes_t E;
    /* the held-out evaluation's lanes: E, then instances of their own (--threads) */
    pv_episodes_t lanes[PV_EPISODES_MAX_LANES];
    size_t n_lanes;
    /* --save: the estimator's run folder run.out_dir/rl-<estimator> (metrics.jsonl, summary)
     * as the learner writes it (learner/report.h), NULL without --save */
    pv_metrics_t *metrics;
    char run_dir[PV_CONFIG_STR_MAX + 96]; /* run.out_dir/rl-<estimator> */
    double run_t0;                        /* when the estimator's run started (pv_mono_s) */
    pv_run_totals_t run;                  /* the estimator's run so far */
    pv_eval_result_t start_eval;          /* the weights every estimator starts from */
    uint64_t eval_n;                      /* held-out tasks of an evaluation */
} s_tool_t;

static int s_fail(const char *what, pv_err_t rc, const pv_errmsg_t *em)
{
    fprintf(stderr, "prover-train-local: %s: %s%s%s\n", what, pv_strerror(rc),
            em->text[0] ? ": " : "", em->text);
    return 1;
}

/* The command line: the tool's own flags, then the configuration. Returns 0, 1 for --help
 * (printed), -1 for an error (printed). */
static int s_args(s_tool_t *T, int argc, char **argv)
{
    int *rest = calloc((size_t)argc + 1, sizeof *rest), n_rest = 0;
    char **cargv = calloc((size_t)argc + 1, sizeof *cargv);
    int cargc = 0, status = 0;
    const char *list = NULL;
    if (!rest || !cargv) {
        free(rest);
        free(cargv);
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        if (i > 0 && (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)) {
            fputs(s_usage, stdout);
            status = 1;
        } else if (i > 0 && strcmp(argv[i], "--save") == 0) {
            T->save = true;
        } else if (i > 0 && strcmp(argv[i], "--bc-only") == 0) {
            T->save = T->bc_only = true;
        } else if (i > 0 && strcmp(argv[i], "--eval-every") == 0 && i + 1 < argc) {
            char *end = NULL;
            T->eval_every = strtol(argv[++i], &end, 10);
            if (!end || *end || T->eval_every < 1) {
                fprintf(stderr, "prover-train-local: --eval-every: a positive integer, not '%s'\n",
                        argv[i]);
                status = -1;
            }
        } else if (i > 0 && strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            char *end = NULL;
            T->threads = strtol(argv[++i], &end, 10);
            if (!end || *end || T->threads < 1 || T->threads > 16) {
                fprintf(stderr, "prover-train-local: --threads: 1 to 16, not '%s'\n", argv[i]);
                status = -1;
            }
        } else if (i > 0 && strcmp(argv[i], "--estimators") == 0 && i + 1 < argc) {
            list = argv[++i];
        } else if (i > 0 && strncmp(argv[i], "--estimators=", 13) == 0) {
            list = argv[i] + 13;
        } else {
            cargv[cargc++] = argv[i];
        }
    }
    pv_errmsg_t em = {{0}};
    pv_config_defaults(&T->cfg);
    if (status == 0 && pv_config_from_args(&T->cfg, cargc, cargv, rest, &n_rest, &em) != PV_OK) {
        fprintf(stderr, "prover-train-local: %s\n", em.text);
        status = -1;
    }
    if (status == 0 && n_rest > 0) {
        fprintf(stderr, "prover-train-local: unexpected argument '%s' (see --help)\n",
                cargv[rest[0]]);
        status = -1;
    }
    if (status == 0 && T->bc_only && T->cfg.learner.bc_episodes == 0) {
        fprintf(stderr, "prover-train-local: --bc-only needs learner.bc_episodes > 0\n");
        status = -1;
    }
    if (status == 0) {
        char buf[sizeof T->estimators];
        snprintf(buf, sizeof buf, "%s", list ? list : T->cfg.algorithm.adv_estimator);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && status == 0;
             tok = strtok_r(NULL, ",", &save)) {
            pv_config_t probe = T->cfg;
            if (T->n_est == S_MAX_ESTIMATORS ||
                pv_config_set(&probe, "algorithm.adv_estimator", tok, &em) != PV_OK) {
                fprintf(stderr, "prover-train-local: --estimators: %s\n",
                        T->n_est == S_MAX_ESTIMATORS ? "at most 8" : em.text);
                status = -1;
            } else {
                snprintf(T->estimators[T->n_est++], sizeof T->estimators[0], "%s", tok);
            }
        }
        if (status == 0 && T->n_est == 0) {
            fprintf(stderr, "prover-train-local: --estimators: an empty list\n");
            status = -1;
        }
    }
    free(rest);
    free(cargv);
    return status;
}

/* run.out_dir/config.yaml: the effective configuration, as a run folder holds it, so that
 * `prover-env play --policy run.out_dir/<phase>.safetensors` finds what the policy was
 * trained with. */
static pv_err_t s_save_config(const pv_config_t *c, pv_errmsg_t *em)
{
    size_t cap = pv_config_yaml_max(), len = 0;
    char *yaml = malloc(cap), path[PV_CONFIG_STR_MAX + 16];
    if (!yaml)
        return pv_errf(em, PV_ERR_NOMEM, "configuration text");
    snprintf(path, sizeof path, "%s/config.yaml", c->run.out_dir);
    pv_err_t rc = pv_config_to_yaml(c, yaml, cap, &len);
    if (rc == PV_OK)
        rc = pv_write_file(path, yaml, len, em);
    else
        pv_errf(em, rc, "configuration text");
    free(yaml);
    return rc;
}

/* --threads, or the online CPUs (at most PV_EPISODES_MAX_LANES). */
static long s_threads(const s_tool_t *T)
{
    long n = T->threads;
    if (n == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus < 1 ? 1 : cpus;
    }
    return n > PV_EPISODES_MAX_LANES ? PV_EPISODES_MAX_LANES : n;
}

/* The evaluation's lanes 1 .. s_threads - 1: each its own environment, scratch and arena. */
static pv_err_t s_eval_lanes(s_tool_t *T, pv_errmsg_t *em)
{
    T->lanes[0] = T->E;
    T->n_lanes = 1;
    for (long l = 1; l < s_threads(T); l++) {
        pv_episodes_t *e = &T->lanes[l];
        *e = T->E;
        e->env = NULL;
        e->work = NULL;
        e->arena = NULL;
        if (pv_env_new(T->model, &e->env) != PV_OK ||
            pv_policy_work_new(T->policy, &e->work) != PV_OK ||
            pv_arena_new(1 << 20, 0, &e->arena) != PV_OK) {
            T->n_lanes = (size_t)l + 1; /* freed by s_teardown */
            return pv_errf(em, PV_ERR_NOMEM, "evaluation thread %ld: its environment and scratch",
                           l);
        }
        T->n_lanes = (size_t)l + 1;
    }
    return PV_OK;
}

/* --save into a run.out_dir that already holds a run (its config.yaml or metrics.jsonl): move
 * the folder aside to run.out_dir.<that file's date> first, as cluster/launch does, so that no
 * run overwrites another's results; a policy.init_checkpoint or policy.path inside it is then
 * read from the moved folder. Errors: PV_ERR_IO (the rename), PV_ERR_CONFIG (a moved path
 * too long for its key). */
static pv_err_t s_move_aside(pv_config_t *c, pv_errmsg_t *em)
{
    const char *out = c->run.out_dir;
    char path[PV_CONFIG_STR_MAX + 32], aside[PV_CONFIG_STR_MAX + 48], date[32];
    struct stat st;
    bool found = false;
    for (int i = 0; i < 2 && !found; i++) {
        snprintf(path, sizeof path, "%s/%s", out, i ? "metrics.jsonl" : "config.yaml");
        found = stat(path, &st) == 0;
    }
    if (!found)
        return PV_OK;
    struct tm tm;
    strftime(date, sizeof date, "%Y%m%d-%H%M%S", localtime_r(&st.st_mtime, &tm));
    snprintf(aside, sizeof aside, "%s.%s", out, date);
    for (int n = 2; stat(aside, &st) == 0 && n < 1000; n++)
        snprintf(aside, sizeof aside, "%s.%s-%d", out, date, n);
    if (rename(out, aside) != 0)
        return pv_errf(em, PV_ERR_IO, "moving the earlier run in %s aside to %s: %s", out, aside,
                       strerror(errno));
    printf("moved      the earlier run in %s to %s\n", out, aside);
    size_t n = strlen(out);
    const char *keys[2] = {"policy.init_checkpoint", "policy.path"};
    char *vals[2] = {c->policy.init_checkpoint, c->policy.path};
    for (int k = 0; k < 2; k++) {
        if (strncmp(vals[k], out, n) != 0 || vals[k][n] != '/')
            continue;
        char moved[sizeof aside + PV_CONFIG_STR_MAX];
        snprintf(moved, sizeof moved, "%s%s", aside, vals[k] + n);
        pv_err_t rc = pv_config_set(c, keys[k], moved, em);
        if (rc != PV_OK)
            return rc;
        printf("moved      %s=%s (it was in the moved folder)\n", keys[k], moved);
    }
    return PV_OK;
}

static pv_err_t s_setup(s_tool_t *T, pv_errmsg_t *em)
{
    const pv_config_t *c = &T->cfg;
    pv_err_t rc;
    pv_role_warn_ignored(c);
    if (T->save && (rc = s_move_aside(&T->cfg, em)) != PV_OK)
        return rc;
    if ((rc = pv_train_cfg_from_config(c, &T->tc, em)) ||
        (rc = pv_role_env_new(c, &T->model, &T->env, em)) ||
        (rc = pv_arena_new(1 << 20, 0, &T->arena)) ||
        (rc = pv_role_policy_make(c, &T->policy, em)) ||
        (rc = pv_adam_new(pv_policy_n_params(T->policy), &T->tc.adam, &T->adam, em)) ||
        (rc = pv_trainer_init(&T->trainer, T->policy, NULL, T->adam, em)))
        return rc;
    T->trainer_ok = true;
    T->E = (pv_episodes_t){.model = T->model,
                           .env = T->env,
                           .policy = T->policy,
                           .work = T->trainer.work,
                           .arena = T->arena,
                           .task_seed = (uint64_t)c->run.seed};
    if ((rc = s_eval_lanes(T, em)) != PV_OK)
        return rc;
    if (T->save && ((rc = pv_mkdirs(c->run.out_dir, 0755, em)) != PV_OK ||
                    (rc = s_save_config(c, em)) != PV_OK))
        return rc;
    if (c->policy.init_checkpoint[0] &&
        (rc = pv_ckpt_load(c->policy.init_checkpoint, T->policy, NULL, NULL, NULL, 0, em)))
        return rc;
    if (pv_policy_version(T->policy) == 0)
        pv_policy_set_version(T->policy, 1);
    return PV_OK;
}

static void s_teardown(s_tool_t *T)
{
    if (T->trainer_ok)
        pv_trainer_fini(&T->trainer);
    for (size_t l = 1; l < T->n_lanes; l++) {
        pv_arena_destroy(&T->lanes[l].arena);
        pv_policy_work_destroy(&T->lanes[l].work);
        pv_env_destroy(&T->lanes[l].env);
    }
    pv_policy_destroy(&T->ref);
    pv_adam_destroy(&T->adam);
    pv_policy_destroy(&T->policy);
    pv_arena_destroy(&T->arena);
    pv_env_destroy(&T->env);
    pv_env_model_destroy(&T->model);
}

/* Greedy (out[0]) and sampled (out[1], at learner.eval_temperature) held-out success,
 * printed; each task's sampled episode uses the learner's evaluation stream of that task, so
 * phases compare on common random numbers; the tasks are shared among the --threads lanes
 * (the same numbers for any count). */
static int s_eval(s_tool_t *T, const char *label, double out[2], pv_eval_result_t *res)
{
    const pv_config_t *c = &T->cfg;
    pv_errmsg_t em = {{0}};
    pv_cost_t cost = {0};
    pv_rollout_opts_t ro = {.max_steps = (uint32_t)c->env.max_steps};
    size_t n = (size_t)c->learner.eval_tasks;
    double t0 = pv_mono_s();
    pv_eval_detail_t d[2];
    pv_err_t rc = pv_episodes_eval_heldout(
        T->lanes, T->n_lanes, T->policy, pv_episodes_eval_split(c->learner.eval_split), n, &ro,
        (uint64_t)c->run.seed, (float)c->learner.eval_temperature, &d[0], &d[1], &cost, &em);
    if (rc != PV_OK)
        return s_fail("evaluation", rc, &em);
    n = d[0].n; /* a finite test split may hold fewer */
    for (int i = 0; i < 2; i++)
        out[i] = n ? (double)d[i].wins / (double)n : 0.0;
    T->eval_n = n;
    if (res)
        pv_report_eval_result(&d[0], &d[1], res);
    printf("eval %-10s held-out%s success greedy %.3f, sampled %.3f; score %.1f, %.1f (%zu "
           "tasks each, %llu env steps, %.1f s)\n",
           label, d[0].split == PV_SPLIT_TRAIN ? " (training task kinds)" : "", out[0], out[1],
           n ? 100.0 * d[0].reward_sum / (double)n : 0.0,
           n ? 100.0 * d[1].reward_sum / (double)n : 0.0, n, (unsigned long long)cost.env_steps,
           pv_mono_s() - t0);
    fflush(stdout);
    return 0;
}

static int s_save(s_tool_t *T, const char *name, uint64_t step)
{
    if (!T->save)
        return 0;
    char path[PV_CONFIG_STR_MAX + 96];
    bool dir = pv_policy_token_space(T->policy) > 0; /* a Hugging Face directory */
    snprintf(path, sizeof path, "%s/%s%s", T->cfg.run.out_dir, name, dir ? "" : ".safetensors");
    pv_run_meta_t meta = {.step = step, .config = "prover-train-local"};
    pv_errmsg_t em = {{0}};
    pv_err_t rc = pv_ckpt_save(path, T->policy, T->adam, &meta, &em);
    if (rc != PV_OK)
        return s_fail("checkpoint", rc, &em);
    printf("saved      %s\n", path);
    return 0;
}

/* --save: open the run folder run.out_dir/rl-<est> of estimator `est`, its metrics.jsonl
 * starting with the start's evaluation as iteration 0 (as the learner's first eval line). The
 * summary of an earlier run into the same folder goes first, so a run that then fails never
 * leaves its partial metrics beside a "completed" summary. */
static pv_err_t s_run_open(s_tool_t *T, const char *est, pv_errmsg_t *em)
{
    memset(&T->run, 0, sizeof T->run);
    T->run.iterations_planned = (uint64_t)T->cfg.run.iterations;
    T->run.eval_first = T->run.eval_last = T->start_eval;
    T->run.train_first = T->run.train_last = -1;
    T->run.quiet = true; /* s_rl prints its own lines */
    T->run_t0 = pv_mono_s();
    if (!T->save)
        return PV_OK;
    char path[PV_CONFIG_STR_MAX + 128];
    snprintf(T->run_dir, sizeof T->run_dir, "%s/rl-%s", T->cfg.run.out_dir, est);
    const char *dir = T->run_dir;
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, i ? "summary.txt" : "summary.json");
        if (unlink(path) != 0 && errno != ENOENT)
            return pv_errf(em, PV_ERR_IO, "%s: %s", path, strerror(errno));
    }
    snprintf(path, sizeof path, "%s/metrics.jsonl", dir);
    pv_err_t rc = pv_mkdirs(dir, 0755, em);
    if (rc == PV_OK)
        rc = pv_metrics_open(path, 0, &T->metrics, em);
    if (rc == PV_OK)
        rc = pv_report_eval(T->metrics, 0, pv_policy_version(T->policy), &T->start_eval, T->eval_n,
                            &T->run);
    if (rc != PV_OK && !em->text[0])
        pv_errf(em, rc, "%s", path);
    return rc;
}

/* The totals after iteration `it` (learner/report.h, as the learner takes them), and its
 * train line when the run folder is open. */
static pv_err_t s_run_iteration(s_tool_t *T, const pv_local_t *L, const pv_local_stats_t *st,
                                uint64_t it, pv_errmsg_t *em)
{
    const pv_intake_t *in = pv_local_intake(L);
    pv_report_take_iteration(&T->run, in, it, &st->update.lag);
    pv_report_adv_stats(&T->run, &st->adv);
    T->run.wall_s = pv_mono_s() - T->run_t0;
    if (!T->metrics)
        return PV_OK;
    pv_err_t rc = pv_report_iteration(T->metrics, it, (uint64_t)T->cfg.run.iterations,
                                      pv_policy_version(T->policy), pv_intake_stats(in),
                                      pv_intake_totals(in), &st->update, &T->run);
    return rc == PV_OK ? PV_OK : pv_errf(em, rc, "writing %s/metrics.jsonl", T->run_dir);
}

/* An evaluation at iteration `it` of the run: its eval line. */
static pv_err_t s_run_eval(s_tool_t *T, uint64_t it, const pv_eval_result_t *r, pv_errmsg_t *em)
{
    T->run.eval_last = *r;
    T->run.wall_s = pv_mono_s() - T->run_t0; /* as the learner's: the evaluation included */
    if (!T->metrics)
        return PV_OK;
    pv_err_t rc =
        pv_report_eval(T->metrics, it, pv_policy_version(T->policy), r, T->eval_n, &T->run);
    return rc == PV_OK ? PV_OK : pv_errf(em, rc, "writing %s/metrics.jsonl", T->run_dir);
}

/* Close the run folder: summary.json and summary.txt beside metrics.jsonl, as the learner
 * writes them; `failure` (NULL: the run completed) makes the outcome "failed" with that
 * reason, so a run that stopped on an error says so rather than looking finished. The LLM
 * judge's cost, if any, is T->run.llm_cost, set by the caller. */
static pv_err_t s_run_close(s_tool_t *T, const char *est, const pv_local_t *L, const char *failure,
                            pv_errmsg_t *em)
{
    if (!T->metrics)
        return PV_OK;
    pv_metrics_close(&T->metrics);
    if (failure) {
        T->run.outcome = "failed";
        snprintf(T->run.reason, sizeof T->run.reason, "%s", failure);
    }
    const pv_run_plan_t *plan = &pv_local_train_cfg(L)->plan;
    char *text = NULL;
    pv_err_t rc = pv_report_summary(T->run_dir, T->cfg.env.name, plan->name,
                                    plan->prover ? pv_judge_kind_name(plan->judge) : "none",
                                    pv_intake_totals(pv_local_intake(L)), &T->run, &text, em);
    free(text);
    if (rc == PV_OK)
        printf("run        %s: %s/metrics.jsonl, summary.json, summary.txt%s\n", est, T->run_dir,
               failure ? " (failed)" : "");
    return rc;
}

/* run.iterations iterations of estimator `est` from the current weights, then its held-out
 * evaluation (result: greedy, sampled); *tot gets the intake's run totals (steps, the judge's
 * segments). */
static int s_rl(s_tool_t *T, const char *est, pv_intake_stats_t *tot, double result[2])
{
    pv_config_t cfg = T->cfg;
    pv_errmsg_t em = {{0}};
    pv_local_t *L = NULL;
    pv_err_t rc = pv_config_set(&cfg, "algorithm.adv_estimator", est, &em);
    if (rc == PV_OK)
        rc = pv_local_new(&cfg, T->model, T->env, &T->trainer, &L, &em);
    if (rc == PV_OK)
        rc = pv_local_set_threads(L, (unsigned)s_threads(T), &em);
    if (rc == PV_OK)
        rc = s_run_open(T, est, &em);
    if (rc != PV_OK) {
        pv_metrics_close(&T->metrics);
        pv_local_destroy(&L);
        return s_fail(est, rc, &em);
    }
    double t0 = pv_mono_s();
    int status = 0;
    char failure[PV_ERRMSG_MAX + 64] = ""; /* why the run stopped, for its summary */
    for (int64_t it = 1; it <= cfg.run.iterations; it++) {
        pv_local_stats_t st;
        if ((rc = pv_local_iteration(L, &st, &em)) != PV_OK ||
            (rc = s_run_iteration(T, L, &st, (uint64_t)it, &em)) != PV_OK) {
            snprintf(failure, sizeof failure, "iteration %lld: %s", (long long)it,
                     em.text[0] ? em.text : pv_strerror(rc));
            status = s_fail(est, rc, &em);
            break;
        }
        char lm[192] = "", vict[160] = "", reuse[64] = "";
        if (st.reused_rows > 0) /* prover.reuse_continuations: the verifiers' rows trained on */
            snprintf(reuse, sizeof reuse, " | %llu continuations trained on",
                     (unsigned long long)st.reused_rows);
        const pv_vict_stats_t *vs = &st.adv.vict;
        size_t vict_rows = vs->rows_proof + vs->rows_no_proof + vs->rows_untraced + vs->rows_failed;
        if (vict_rows > 0) /* VICT: how much of the batch went along a proof (learner/vict.h) */
            snprintf(vict, sizeof vict,
                     " | vict rows: %zu proof, %zu no proof, %zu untraced, %zu failed kept; "
                     "proof steps %.2f",
                     vs->rows_proof, vs->rows_no_proof, vs->rows_untraced, vs->rows_failed,
                     vs->steps ? (double)vs->proof_steps / (double)vs->steps : 0.0);
        if (pv_policy_token_space(T->policy) > 0)
            snprintf(lm, sizeof lm,
                     " | invalid %.3f | %llu tokens | entropy %.3f | kl %.4f | clipfrac %.3f | "
                     "mismatch %.1e",
                     st.invalid_rate, (unsigned long long)st.action_tokens, st.update.entropy,
                     st.update.kl, st.update.pg_clipfrac, st.update.mismatch_max);
        printf("%-6s iter %lld/%lld | success %.3f | mixed %llu/%llu | len %5.1f | segments "
               "%llu/%llu (+%llu, mean "
               "delta %+.2f, %zu tokens credited) | steps: rollout %llu verify %llu | grad norm "
               "%.3f%s%s%s | v%llu | %.1f s (play %.1f, update %.1f)\n",
               est, (long long)it, (long long)cfg.run.iterations, st.success,
               (unsigned long long)st.mixed, (unsigned long long)st.groups, st.mean_len,
               (unsigned long long)st.verified, (unsigned long long)st.proposals,
               (unsigned long long)st.positive, st.mean_delta, st.n_credited,
               (unsigned long long)st.rollout.env_steps, (unsigned long long)st.verify.env_steps,
               st.update.grad_norm, lm, vict, reuse,
               (unsigned long long)pv_policy_version(T->policy), pv_mono_s() - t0, st.play_s,
               st.update_s);
        fflush(stdout);
        if (T->eval_every > 0 && it % T->eval_every == 0 && it < cfg.run.iterations) {
            char label[80];
            double curve[2];
            pv_eval_result_t r;
            snprintf(label, sizeof label, "%s@%lld", est, (long long)it);
            if ((status = s_eval(T, label, curve, &r)) != 0) {
                snprintf(failure, sizeof failure, "the evaluation at iteration %lld failed",
                         (long long)it);
                break;
            }
            if ((rc = s_run_eval(T, (uint64_t)it, &r, &em)) != PV_OK) {
                snprintf(failure, sizeof failure, "%s", em.text);
                status = s_fail(est, rc, &em);
                break;
            }
        }
    }
    if (status == 0) {
        pv_eval_result_t r;
        if ((status = s_eval(T, est, result, &r)) != 0)
            snprintf(failure, sizeof failure, "the final evaluation failed");
        else if ((rc = s_run_eval(T, (uint64_t)cfg.run.iterations, &r, &em)) != PV_OK) {
            snprintf(failure, sizeof failure, "%s", em.text);
            status = s_fail(est, rc, &em);
        }
    }
    pv_health_llm_t llm; /* the LLM judge's cost, for the summary and the line below */
    bool has_llm = pv_local_llm_cost(L, &llm);
    T->run.llm_cost = has_llm ? &llm : NULL;
    pv_errmsg_t cm = {{0}};
    if ((rc = s_run_close(T, est, L, status ? failure : NULL, &cm)) != PV_OK && status == 0)
        status = s_fail(est, rc, &cm);
    T->run.llm_cost = NULL; /* this frame's */
    pv_metrics_close(&T->metrics);
    *tot = *pv_intake_totals(pv_local_intake(L));
    pv_local_destroy(&L);
    if (status == 0 && tot->verified)
        printf("judge      %s: acceptance rate %.3f (%llu of %llu verified segments; %.3f by noise "
               "alone), mean segment %.2f actions\n",
               est, (double)tot->positive / (double)tot->verified,
               (unsigned long long)tot->positive, (unsigned long long)tot->verified,
               tot->noise_pos_sum / (double)tot->verified,
               (double)tot->turns_sum / (double)tot->verified);
    if (status == 0 && has_llm) { /* with a warning when the model answered no group */
        char line[512];
        pv_health_llm_line(&llm, line, sizeof line);
        printf("judge      %s: %s\n", est, line);
    }
    if (status == 0 && tot->reused_rows)
        printf("judge      %s: %llu continuations trained on (prover.reuse_continuations)\n", est,
               (unsigned long long)tot->reused_rows);
    if (status == 0 && tot->precision_samples)
        printf("judge      %s: precision against the oracle %.3f (%llu of %llu proposals "
               "pivotal)\n",
               est, (double)tot->precision_hits / (double)tot->precision_samples,
               (unsigned long long)tot->precision_hits, (unsigned long long)tot->precision_samples);
    return status;
}

static int s_main(s_tool_t *T)
{
    pv_errmsg_t em = {{0}};
    pv_err_t rc = s_setup(T, &em);
    if (rc != PV_OK) {
        int st = pv_role_exit_status(rc);
        fprintf(stderr, "prover-train-local: %s\n", em.text[0] ? em.text : pv_strerror(rc));
        return st;
    }
    double t_start = pv_mono_s(), first_eval[2] = {NAN, NAN}, start[2];
    /* a policy loaded from policy.init_checkpoint or policy.path is the start, not untrained */
    const char *first =
        T->cfg.policy.init_checkpoint[0] || T->cfg.policy.path[0] ? "start" : "untrained";
    if (!T->bc_only && s_eval(T, first, first_eval, &T->start_eval) != 0)
        return 1;
    memcpy(start, first_eval, sizeof start);
    uint64_t demo_steps = 0;
    if (T->tc.bc_episodes > 0) {
        double loss = 0, acc = 0, t0 = pv_mono_s();
        if ((rc = pv_train_bc(&T->tc, &T->E, &T->trainer, &loss, &acc, &demo_steps, &em)))
            return s_fail("behaviour cloning", rc, &em);
        printf("bc         %zu demonstrations (%llu env steps), %u epochs: last nll %.3f, step "
               "accuracy %.3f (%.1f s)\n",
               T->tc.bc_episodes, (unsigned long long)demo_steps, T->tc.bc_epochs, loss, acc,
               pv_mono_s() - t0);
        if (s_eval(T, "bc", start, &T->start_eval) != 0 || s_save(T, "bc", 0) != 0)
            return 1;
    }
    if (T->bc_only) {
        printf("summary: held-out success (greedy / sampled) after behaviour cloning %.3f / %.3f "
               "(%llu demonstration steps) | wall %.1f s\n",
               start[0], start[1], (unsigned long long)demo_steps, pv_mono_s() - t_start);
        return 0;
    }
    /* every estimator starts from the same weights, optimiser state and version (and KL
     * reference) */
    if (T->cfg.learner.use_kl_loss &&
        (rc = pv_trainer_freeze_reference(&T->trainer, &T->ref, &em)) != PV_OK)
        return s_fail("the KL reference policy", rc, &em);
    size_t n = pv_policy_n_params(T->policy);
    float *p0 = malloc(n * sizeof *p0);
    if (!p0)
        return 1;
    memcpy(p0, pv_policy_params(T->policy), n * sizeof *p0);
    uint64_t v0 = pv_policy_version(T->policy);
    double result[S_MAX_ESTIMATORS][2];
    pv_intake_stats_t tot[S_MAX_ESTIMATORS] = {{0}};
    int status = 0;
    for (size_t e = 0; e < T->n_est && status == 0; e++) {
        memcpy(pv_policy_params(T->policy), p0, n * sizeof *p0);
        pv_policy_set_version(T->policy, v0);
        memset(pv_adam_m(T->adam), 0, n * sizeof(float));
        memset(pv_adam_v(T->adam), 0, n * sizeof(float));
        pv_adam_set_t_step(T->adam, 0);
        status = s_rl(T, T->estimators[e], &tot[e], result[e]);
        if (status == 0)
            status = s_save(T, T->estimators[e], (uint64_t)T->cfg.run.iterations);
    }
    free(p0);
    if (status != 0)
        return status;
    printf("summary: held-out success (greedy / sampled): %s %.3f / %.3f", first, first_eval[0],
           first_eval[1]);
    if (T->tc.bc_episodes > 0)
        printf(", bc %.3f / %.3f (%llu demonstration steps)", start[0], start[1],
               (unsigned long long)demo_steps);
    for (size_t e = 0; e < T->n_est; e++)
        printf(", %s %.3f / %.3f (%llu rollout + %llu verification steps)", T->estimators[e],
               result[e][0], result[e][1],
               (unsigned long long)(tot[e].steps + tot[e].dropped_steps),
               (unsigned long long)tot[e].verify_env_steps);
    printf(" | wall %.1f s\n", pv_mono_s() - t_start);
    return 0;
}

int main(int argc, char **argv)
{
    static s_tool_t T;
    int a = s_args(&T, argc, argv);
    if (a != 0)
        return a > 0 ? 0 : 2;
    pv_log_level_t level;
    if (pv_log_parse_level(T.cfg.run.log_level, &level) == 0)
        pv_log_set_level(level);
    int status = s_main(&T);
    s_teardown(&T);
    return status;
}
