/* eval_stats.h - the statistics prover-eval reports beside the means: a confidence interval
 * of the difference between two configurations' final success over seeds (issue 19).
 *
 * Percentile bootstrap of a difference of means (Efron & Tibshirani 1993, ch. 13; the
 * two-sample case of ch. 8): each of B resamples draws na values from a and nb from b with
 * replacement, independently, and takes mean(a*) - mean(b*); the interval is the
 * (1 - level) / 2 and (1 + level) / 2 quantiles of the B differences, each the linear
 * interpolation between order statistics at position q (B - 1) (numpy.percentile's default,
 * "linear"). Seeds are the unit of resampling: the runs of one configuration are
 * independent draws, which is what the interval is about. With 3 seeds a percentile
 * bootstrap is too narrow (it cannot see tails its seeds did not hit); the seeds are
 * printed next to it so a reader can judge.
 */
#ifndef PV_TOOLS_EVAL_STATS_H
#define PV_TOOLS_EVAL_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define PV_ES_RESAMPLES 20000 /* B of prover-eval's intervals */
#define PV_ES_SEED      2026u /* their RNG seed (common/rng.h): the same grid, the same CI */

/* Difference of means mean(a) - mean(b) of a[0 .. na) and b[0 .. nb) into *diff, and its
 * percentile-bootstrap interval at `level` (e.g. 0.95) from `resamples` resamples drawn with
 * pv_rng seeded by `seed` into [*lo, *hi]. Values are used as given (no NaN filtering: pass
 * finite values). Errors: PV_ERR_INVAL (na or nb below 2, resamples below 100, level outside
 * (0, 1), a NULL pointer), PV_ERR_NOMEM (the resamples' buffer: 8 bytes each). */
pv_err_t pv_es_boot_diff(const double *a, size_t na, const double *b, size_t nb, double level,
                         size_t resamples, uint64_t seed, double *diff, double *lo, double *hi);

/* The q-quantile (q in [0, 1]) of sorted x[0 .. n), n >= 1, by linear interpolation between
 * the order statistics at q (n - 1) (numpy.percentile's "linear"). */
double pv_es_quantile_sorted(const double *x, size_t n, double q);

#endif
