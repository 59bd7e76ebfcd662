/* eval_grid.h - an evaluation grid on disk (environments x configurations x seeds), the
 * side-by-side numbers prover-eval reports, and its output files (issue 8).
 *
 * Layout read by pv_eg_load:
 *   GRID/ENV/overrides.txt            optional: the environment's settings, one line
 *   GRID/ENV/CONFIG/overrides.txt     optional: what makes the configuration, one line
 *   GRID/ENV/CONFIG/SEED/metrics.jsonl, summary.json    one run (tools/eval_curve.h)
 * Folders are taken in a fixed order: environments alfworld, webshop, searchqa, then the
 * others by name; configurations grpo, grpo-matched, gigpo, pgpo, spopp, triage, vict,
 * prover, contrast, random, oracle, exhaustive, then the others by name; seeds by name. A run that
 * cannot be read (still running, crashed, no evaluation) is left out and listed in `skipped`.
 *
 * Per environment: `updates` = the last learner update every run reached (the smallest
 * final evaluation iteration), `steps` = the fewest environment steps any run ended with
 * (its final evaluation's total_env_steps), `tokens` = the fewest generated tokens any run
 * ended with (total_tokens; NaN when a run has none). Per configuration, over its seeds,
 * mean and sample std of: final success, success at `updates` updates, success at `steps`
 * environment steps, success at `tokens` generated tokens, environment steps to reach `target`
 * (over the seeds that reached it), verification share, judge precision (over the seeds that
 * measured it), environment steps, wall time, and the mean training reward of the last PV_EG_TAIL
 * updates; and when the environment has a configuration named "grpo", each other configuration's
 * final success minus grpo's with its 95 % bootstrap interval over seeds (tools/eval_stats.h).
 */
#ifndef PV_TOOLS_EVAL_GRID_H
#define PV_TOOLS_EVAL_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "common/err.h"
#include "tools/eval_curve.h"

#define PV_EG_MAX_ENVS    8
#define PV_EG_MAX_CONFIGS 16
#define PV_EG_MAX_SEEDS   64
#define PV_EG_NAME_MAX    128
#define PV_EG_TAIL        10 /* updates averaged for the final training reward */

/* Mean and sample std over the n seeds with a finite value. */
typedef struct pv_eg_stat {
    double mean, std;
    size_t n;
} pv_eg_stat_t;

/* A configuration's final success minus GRPO's, over seeds (tools/eval_stats.h). */
typedef struct pv_eg_diff {
    bool have;     /* both have >= 2 seeds, and this configuration is not grpo itself */
    double diff;   /* mean final success minus grpo's mean */
    double lo, hi; /* its 95 % percentile-bootstrap interval (PV_ES_RESAMPLES, PV_ES_SEED) */
} pv_eg_diff_t;

typedef struct pv_eg_config {
    char name[PV_EG_NAME_MAX];
    char overrides[1024]; /* overrides.txt, or "" */
    pv_ev_run_t runs[PV_EG_MAX_SEEDS];
    char seed_names[PV_EG_MAX_SEEDS][64]; /* the runs' folder names ("seed3") */
    double finals[PV_EG_MAX_SEEDS];       /* the runs' final success (the final_success values) */
    size_t n_ok;                          /* runs read */
    pv_eg_diff_t vs_grpo;
    pv_eg_stat_t final_success, final_sampled, final_score, acceptance, at_updates, at_steps,
        at_tokens, to_target, verify_share, precision, env_steps, wall_s, train_reward;
    pv_eg_stat_t unverified; /* share of a run's proposals without a verified delta (runs that
                                proposed; pv_ev_run_t.proposals): above 0 the verification
                                share and steps are a floor of the configuration's cost */
} pv_eg_config_t;

typedef struct pv_eg_env {
    char name[PV_EG_NAME_MAX];
    char overrides[1024];
    pv_eg_config_t *configs; /* (n_configs) */
    size_t n_configs;
    double updates;   /* equal learner updates: the last one every run reached */
    double steps;     /* equal environment steps: the fewest any run ended with */
    double steps_max; /* the most environment steps any run ended with */
    double tokens;    /* equal generated tokens: the fewest any run ended with (NaN when a
                         run has no token counts) */
} pv_eg_env_t;

typedef struct pv_eg {
    pv_eg_env_t envs[PV_EG_MAX_ENVS];
    size_t n_envs;
    size_t n_runs;  /* runs read */
    char **skipped; /* (n_skipped) "path: why" of runs left out */
    size_t n_skipped;
    double target;   /* success rate of "steps to target" */
    time_t finished; /* newest summary.json modification time */
} pv_eg_t;

/* Read the grid under `dir` and compute every configuration's numbers (target: the success
 * rate for "steps to target", in (0, 1]). Errors: PV_ERR_IO (dir unreadable),
 * PV_ERR_NOTFOUND (no usable run), PV_ERR_LIMIT (more environments, configurations or seeds
 * than the PV_EG_MAX_* bounds), PV_ERR_NOMEM; detail in `em`. *out is freed with
 * pv_eg_destroy. */
pv_err_t pv_eg_load(const char *dir, double target, pv_eg_t **out, pv_errmsg_t *em);

void pv_eg_destroy(pv_eg_t **g);

/* Whether a finished run of configuration c verified a segment (its acceptance curve
 * exists), and whether any configuration of environment e did. */
bool pv_eg_config_verifies(const pv_eg_config_t *c);
bool pv_eg_env_verifies(const pv_eg_env_t *e);

/* The mean curves over seeds (pv_ev_mean_curve of the eval and of the train points) as
 * dir/ENV/CONFIG/mean.jsonl, in the learner's metrics format (kind "eval" and "train"
 * lines) so prover-plot draws them. A train line whose configuration has verified a
 * segment by then also gets acceptance_rate_cum: the accepted segments so far over the
 * verified ones, both means over the seeds (so pooled, not a mean of per-seed rates).
 * Errors: PV_ERR_IO, PV_ERR_NOMEM. */
pv_err_t pv_eg_write_means(const pv_eg_t *g, const char *dir, pv_errmsg_t *em);

/* dir/results.md: per environment a Markdown table (one row per configuration), the
 * settings, the date the runs finished, the machine (cores and CPU model from
 * /proc/cpuinfo), `command`, and (plots) the PNGs. Errors: PV_ERR_IO. */
pv_err_t pv_eg_write_markdown(const pv_eg_t *g, const char *dir, const char *command, int plots,
                              pv_errmsg_t *em);

/* dir/results.json: the same numbers for programs (null for a value no seed has).
 * Errors: PV_ERR_IO. */
pv_err_t pv_eg_write_json(const pv_eg_t *g, const char *dir, const char *command, pv_errmsg_t *em);

#endif
