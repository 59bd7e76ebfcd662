/* test_latency_hist.c - bucket geometry and quantiles against exact order statistics. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "broker/latency_hist.h"
#include "common/rng.h"

/* Buckets tile [0, 2^48) without gaps or overlaps, every value falls in its bucket's range,
 * and a bucket is at most 1/16 of its lower bound wide (so midpoints are within 1/32). */
static void test_buckets_tile_the_range(void **state)
{
    (void)state;
    uint64_t expect_lo = 0;
    for (uint32_t b = 0; b < PV_HIST_BUCKETS; b++) {
        uint64_t lo, hi;
        pv_hist_bucket_range(b, &lo, &hi);
        assert_int_equal(lo, expect_lo);
        assert_true(hi >= lo);
        if (lo >= 32)
            assert_true((double)(hi - lo + 1) <= (double)lo / 16.0);
        assert_int_equal(pv_hist_bucket_of(lo), b);
        assert_int_equal(pv_hist_bucket_of(hi), b);
        expect_lo = hi + 1;
    }
    assert_int_equal(expect_lo, 1ull << 48);
    assert_int_equal(pv_hist_bucket_of(UINT64_MAX), PV_HIST_BUCKETS - 1);
}

static int s_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Quantiles of log-uniform samples (1 us .. 10 s) agree with the exact nearest-rank order
 * statistic within the bucket bound. */
static void test_quantiles_match_order_statistics(void **state)
{
    (void)state;
    enum { N = 20000 };
    uint64_t *v = malloc(N * sizeof *v);
    pv_hist_t *h = malloc(sizeof *h);
    pv_hist_reset(h);
    pv_rng_t rng;
    pv_rng_seed(&rng, 11, 3);
    uint64_t sum = 0;
    for (int i = 0; i < N; i++) {
        v[i] = (uint64_t)exp(pv_rng_uniform(&rng) * log(1e7));
        sum += v[i];
        pv_hist_record(h, v[i]);
    }
    qsort(v, N, sizeof *v, s_cmp_u64);
    assert_int_equal(h->count, N);
    assert_int_equal(h->sum, sum);
    assert_int_equal(h->max, v[N - 1]);
    const double qs[] = {0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0};
    for (size_t k = 0; k < sizeof qs / sizeof qs[0]; k++) {
        size_t rank = (size_t)ceil(qs[k] * N);
        double exact = (double)v[rank - 1];
        double got = pv_hist_quantile(h, qs[k]);
        double tol = exact < 32 ? 0.0 : exact / 32.0 + 1.0;
        assert_true(fabs(got - exact) <= tol);
    }
    free(v);
    free(h);
}

static void test_empty_single_and_merge(void **state)
{
    (void)state;
    pv_hist_t *a = malloc(sizeof *a), *b = malloc(sizeof *b), *c = malloc(sizeof *c);
    pv_hist_reset(a);
    assert_true(pv_hist_quantile(a, 0.5) == 0.0);
    pv_hist_record(a, 7);
    assert_true(pv_hist_quantile(a, 0.0) == 7.0);
    assert_true(pv_hist_quantile(a, 1.0) == 7.0);
    /* a single large value is reported within its bucket and never above the max */
    pv_hist_reset(b);
    pv_hist_record(b, 1000003);
    double q = pv_hist_quantile(b, 0.99);
    assert_true(q <= 1000003.0 && q >= 1000003.0 * (1 - 1.0 / 16));
    /* merge equals recording everything in one histogram */
    pv_hist_reset(c);
    pv_hist_record(c, 7);
    pv_hist_record(c, 1000003);
    pv_hist_merge(a, b);
    assert_memory_equal(a, c, sizeof *a);
    free(a);
    free(b);
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets_tile_the_range),
        cmocka_unit_test(test_quantiles_match_order_statistics),
        cmocka_unit_test(test_empty_single_and_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
