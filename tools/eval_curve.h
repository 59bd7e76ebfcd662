/* eval_curve.h - one finished run as prover-eval reads it, and the curve arithmetic of the
 * comparison (issue 8: ProVer against GRPO and the other judges, at equal learner updates
 * and at equal environment steps).
 *
 * A run folder holds metrics.jsonl and summary.json as the learner writes them
 * (learner/report.h). From it come two curves, each a list of points in the file's order:
 *   eval   the greedy held-out success of every kind "eval" line (iteration 0 = before
 *          training), with the environment steps spent so far (total_env_steps: rollouts and
 *          verification together);
 *   train  the sampled training success of every kind "train" line, with the cumulative
 *          rollout and verification steps (cum_rollout_env_steps, cum_verify_env_steps),
 *          the batch's mean reward (WebShop's graded score) and the segments verified and
 *          accepted so far (segments_verified and segments_positive summed; a line without
 *          them adds 0).
 * Comparisons interpolate linearly between the points of a curve: success at a given
 * learner update, success at a given environment-step count, and the environment steps at
 * which the curve first reaches a target success rate.
 */
#ifndef PV_TOOLS_EVAL_CURVE_H
#define PV_TOOLS_EVAL_CURVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef struct pv_ev_point {
    double iteration; /* learner updates done */
    double env_steps; /* total_env_steps: rollouts + verification so far */
    double success;   /* success rate in [0, 1] */
    double rollout;   /* cum_rollout_env_steps (train points; 0 for eval points) */
    double verify;    /* cum_verify_env_steps (train points; 0 for eval points) */
    double reward;    /* mean_reward of the batch (train points; 0 for eval points) */
    double verified;  /* segments verified so far: the sum of segments_verified over the train
                         lines up to this one (train points; 0 for eval points) */
    double positive;  /* of them with a positive delta (segments_positive, summed likewise);
                         positive / verified is the run's acceptance rate so far */
} pv_ev_point_t;

typedef struct pv_ev_run {
    pv_ev_point_t *eval; /* (n_eval) greedy held-out evaluations, in file order */
    size_t n_eval;
    pv_ev_point_t *train; /* (n_train) training iterations, in file order */
    size_t n_train;
    /* from summary.json */
    double final_success;       /* eval_success_after (NaN when not evaluated) */
    double final_sampled;       /* eval_sampled_success_after (NaN when absent) */
    double final_score;         /* eval_score_after: mean final reward x 100 (NaN when absent) */
    double acceptance;          /* acceptance_rate: verified segments with a positive delta */
    double verify_share;        /* verification / (rollouts + verification) steps */
    double rollout_steps;       /* rollout_env_steps */
    double verify_steps;        /* verify_env_steps */
    double precision;           /* judge_precision (NaN when not measured) */
    uint64_t precision_samples; /* proposals the oracle labelled over the run */
    double wall_s;
    uint64_t iterations;
} pv_ev_run_t;

/* Read dir/metrics.jsonl and dir/summary.json into *out (arrays owned by *out). Lines that
 * are not JSON objects, and records without the numbers a curve needs, are skipped.
 * Errors: PV_ERR_IO (a file missing or unreadable), PV_ERR_PARSE (summary.json not a JSON
 * object), PV_ERR_DATA (no eval record: the run cannot be compared; or the summary says
 * "outcome": "failed": a failed run is no data point), PV_ERR_NOMEM; detail
 * naming the file in `em`. */
pv_err_t pv_ev_run_load(const char *dir, pv_ev_run_t *out, pv_errmsg_t *em);

/* Free the arrays of a run and zero it. NULL-safe. */
void pv_ev_run_free(pv_ev_run_t *r);

/* Success at x on curve p[0..n) (points in increasing x), x being the iteration
 * (by_steps false) or the environment steps (true): linear interpolation between the two
 * points around x, the point's value at a point. NaN when x lies outside [p[0], p[n-1]] or
 * n == 0. */
double pv_ev_success_at(const pv_ev_point_t *p, size_t n, bool by_steps, double x);

/* Environment steps at which curve p[0..n) first reaches `target`: the crossing linearly
 * interpolated between the last point below and the first point at or above it (the first
 * point's steps when it already reaches it). NaN when no point reaches it. */
double pv_ev_steps_to(const pv_ev_point_t *p, size_t n, double target);

/* Mean and sample standard deviation (n - 1 in the denominator; 0 for one value) of the
 * finite values among x[0..n); *count = how many were finite. Both NaN when none. */
void pv_ev_mean_std(const double *x, size_t n, double *mean, double *std, size_t *count);

/* Mean training reward of the last `last` points of curve p[0..n) (all when fewer); NaN
 * when n == 0. */
double pv_ev_tail_reward(const pv_ev_point_t *p, size_t n, size_t last);

/* The mean curve of n_runs curves: point i is the mean (of iteration, env_steps, success,
 * rollout, verify, reward, verified, positive) of every curve's point i, for i below the shortest
 * curve's length. curves[r] has lens[r] points. *out (malloc'ed, caller frees) gets *n_out points.
 * Errors: PV_ERR_NOMEM. */
pv_err_t pv_ev_mean_curve(const pv_ev_point_t *const *curves, const size_t *lens, size_t n_runs,
                          pv_ev_point_t **out, size_t *n_out);

#endif
