/* test_eval_stats.c - tools/eval_stats.h against numpy (issue 19): the quantile rule is
 * numpy.percentile's "linear" exactly, and the percentile-bootstrap interval of a difference
 * of means agrees with numpy's own bootstrap (its RNG, 200,000 resamples) within Monte Carlo
 * error. numpy runs at test time (/usr/bin/python3 -c, Debian's python3-numpy); the numpy
 * checks skip when it is absent. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/eval_stats.h"

/* Run a python3 program that prints numbers; read up to `cap` of them. Returns how many were
 * read, or -1 when python3 or numpy is missing. */
static int s_numpy(const char *program, double *out, int cap)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c 'import numpy' 2>/dev/null && /usr/bin/python3 -c '%s'", program);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    int n = 0;
    while (n < cap && fscanf(p, "%lf", &out[n]) == 1)
        n++;
    return pclose(p) == 0 && n > 0 ? n : -1;
}

/* |a - b| <= tol in double precision (cmocka's assert_float_equal rounds to float). */
#define S_NEAR(a, b, tol)                                                                          \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!(fabs(a_ - b_) <= (tol)))                                                             \
            fail_msg("%.17g != %.17g (tolerance %g)", a_, b_, (double)(tol));                      \
    } while (0)

static const double s_a[] = {0.88, 0.95, 0.92, 0.85, 0.87, 0.92, 0.82, 0.85, 0.85, 0.91};
static const double s_b[] = {0.80, 0.86, 0.76, 0.52, 0.86, 0.79, 0.67, 0.61, 0.46, 0.54};
static const double s_c[] = {0.79, 0.86, 0.82, 0.38, 0.36, 0.63, 0.71, 0.40, 0.58, 0.67};
static const double s_d[] = {0.39, 0.91, 0.74};

static void test_quantile_is_numpy_linear(void **state)
{
    (void)state;
    double x[] = {0.1, 0.2, 0.2, 0.35, 0.5, 0.8, 0.9};
    const double q[] = {0, 0.025, 0.1, 0.5, 0.77, 0.975, 1};
    double ref[7];
    int n = s_numpy("import numpy as np; x=[0.1,0.2,0.2,0.35,0.5,0.8,0.9]; "
                    "print(*np.percentile(x, [0, 2.5, 10, 50, 77, 97.5, 100]))",
                    ref, 7);
    if (n < 0)
        skip();
    assert_int_equal(n, 7);
    for (int i = 0; i < 7; i++)
        S_NEAR(pv_es_quantile_sorted(x, 7, q[i]), ref[i], 1e-12);
    S_NEAR(pv_es_quantile_sorted(x, 1, 0.5), 0.1, 0); /* one value */
}

/* The interval of mean(a) - mean(b) for (vict, grpo), (prover, grpo) and a 3-seed case, the
 * seeds of docs/eval/issue17/all7.md. */
static void test_bootstrap_agrees_with_numpy(void **state)
{
    (void)state;
    const char *prog = "import numpy as np\n"
                       "r = np.random.default_rng(1)\n"
                       "a = np.array([0.88,0.95,0.92,0.85,0.87,0.92,0.82,0.85,0.85,0.91])\n"
                       "b = np.array([0.80,0.86,0.76,0.52,0.86,0.79,0.67,0.61,0.46,0.54])\n"
                       "c = np.array([0.79,0.86,0.82,0.38,0.36,0.63,0.71,0.40,0.58,0.67])\n"
                       "d = np.array([0.39,0.91,0.74])\n"
                       "def ci(x, y):\n"
                       "    B = 200000\n"
                       "    dx = x[r.integers(0, len(x), (B, len(x)))].mean(1)\n"
                       "    dy = y[r.integers(0, len(y), (B, len(y)))].mean(1)\n"
                       "    return np.percentile(dx - dy, [2.5, 97.5])\n"
                       "for x, y in ((a, b), (c, b), (d, c)):\n"
                       "    print(*ci(x, y))\n";
    double ref[6];
    int n = s_numpy(prog, ref, 6);
    if (n < 0)
        skip();
    assert_int_equal(n, 6);
    const double *xs[3] = {s_a, s_c, s_d}, *ys[3] = {s_b, s_b, s_c};
    size_t nx[3] = {10, 10, 3}, ny[3] = {10, 10, 10};
    for (int k = 0; k < 3; k++) {
        double diff, lo, hi;
        assert_int_equal(pv_es_boot_diff(xs[k], nx[k], ys[k], ny[k], 0.95, PV_ES_RESAMPLES,
                                         PV_ES_SEED, &diff, &lo, &hi),
                         PV_OK);
        print_message("case %d: %+.4f [%+.4f, %+.4f], numpy [%+.4f, %+.4f]\n", k, diff, lo, hi,
                      ref[2 * k], ref[2 * k + 1]);
        /* Monte Carlo error of a 2.5 % quantile from 20,000 resamples: about 0.003 here */
        S_NEAR(lo, ref[2 * k], 0.01);
        S_NEAR(hi, ref[2 * k + 1], 0.01);
        assert_true(lo <= diff && diff <= hi);
    }
}

static void test_bootstrap_exact_cases_and_errors(void **state)
{
    (void)state;
    double diff, lo, hi, lo2, hi2, d2;
    /* mean difference exactly; the same seed gives the same interval */
    assert_int_equal(pv_es_boot_diff(s_a, 10, s_b, 10, 0.95, 1000, 7, &diff, &lo, &hi), PV_OK);
    double ma = 0, mb = 0;
    for (int i = 0; i < 10; i++) {
        ma += s_a[i] / 10;
        mb += s_b[i] / 10;
    }
    S_NEAR(diff, ma - mb, 1e-12);
    assert_int_equal(pv_es_boot_diff(s_a, 10, s_b, 10, 0.95, 1000, 7, &d2, &lo2, &hi2), PV_OK);
    assert_true(lo == lo2 && hi == hi2);
    /* constant samples: every resample has the same difference */
    const double one[] = {0.5, 0.5, 0.5}, two[] = {0.25, 0.25};
    assert_int_equal(pv_es_boot_diff(one, 3, two, 2, 0.9, 500, 1, &diff, &lo, &hi), PV_OK);
    assert_true(diff == 0.25 && lo == 0.25 && hi == 0.25);
    /* a wider level gives a wider interval */
    assert_int_equal(pv_es_boot_diff(s_c, 10, s_b, 10, 0.5, 5000, 3, &diff, &lo, &hi), PV_OK);
    assert_int_equal(pv_es_boot_diff(s_c, 10, s_b, 10, 0.99, 5000, 3, &diff, &lo2, &hi2), PV_OK);
    assert_true(lo2 < lo && hi < hi2);
    /* what it refuses */
    assert_int_equal(pv_es_boot_diff(s_a, 1, s_b, 10, 0.95, 1000, 1, &diff, &lo, &hi),
                     PV_ERR_INVAL);
    assert_int_equal(pv_es_boot_diff(s_a, 10, s_b, 10, 0.95, 99, 1, &diff, &lo, &hi), PV_ERR_INVAL);
    assert_int_equal(pv_es_boot_diff(s_a, 10, s_b, 10, 1.0, 1000, 1, &diff, &lo, &hi),
                     PV_ERR_INVAL);
    assert_int_equal(pv_es_boot_diff(NULL, 10, s_b, 10, 0.95, 1000, 1, &diff, &lo, &hi),
                     PV_ERR_INVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantile_is_numpy_linear),
        cmocka_unit_test(test_bootstrap_agrees_with_numpy),
        cmocka_unit_test(test_bootstrap_exact_cases_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
