/* eval_stats.c - the bootstrap interval of a difference of means; see eval_stats.h. */
#include <math.h>
#include <stdlib.h>

#include "common/rng.h"
#include "tools/eval_stats.h"

static int s_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double pv_es_quantile_sorted(const double *x, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)floor(pos);
    if (i + 1 >= n)
        return x[n - 1];
    double f = pos - (double)i;
    return x[i] + f * (x[i + 1] - x[i]);
}

static double s_mean(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return s / (double)n;
}

/* The mean of n values drawn from x[0 .. n) with replacement. */
static double s_resample_mean(const double *x, size_t n, pv_rng_t *rng)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[pv_rng_bounded(rng, (uint32_t)n)];
    return s / (double)n;
}

pv_err_t pv_es_boot_diff(const double *a, size_t na, const double *b, size_t nb, double level,
                         size_t resamples, uint64_t seed, double *diff, double *lo, double *hi)
{
    if (!a || !b || !diff || !lo || !hi || na < 2 || nb < 2 || resamples < 100 ||
        !(level > 0 && level < 1) || na > UINT32_MAX || nb > UINT32_MAX)
        return PV_ERR_INVAL;
    double *d = malloc(resamples * sizeof *d);
    if (!d)
        return PV_ERR_NOMEM;
    pv_rng_t rng;
    pv_rng_seed(&rng, seed, 0);
    for (size_t k = 0; k < resamples; k++)
        d[k] = s_resample_mean(a, na, &rng) - s_resample_mean(b, nb, &rng);
    qsort(d, resamples, sizeof *d, s_cmp);
    *diff = s_mean(a, na) - s_mean(b, nb);
    *lo = pv_es_quantile_sorted(d, resamples, (1 - level) / 2);
    *hi = pv_es_quantile_sorted(d, resamples, (1 + level) / 2);
    free(d);
    return PV_OK;
}
