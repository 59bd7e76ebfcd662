/* test_rng.c - PCG32 against the reference outputs of pcg-c-basic's pcg32-demo
 * (pcg32_srandom_r(&rng, 42u, 54u)), plus properties of the derived samplers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "common/rng.h"

static void test_reference_demo_outputs(void **state)
{
    (void)state;
    /* pcg32-demo, "Round 1: 32bit:" line, and its documented internal state */
    static const uint32_t expect[6] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u,
                                       0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
    pv_rng_t rng;
    pv_rng_seed(&rng, 42u, 54u);
    assert_true(rng.state == 1753877967969059832ULL);
    assert_true(rng.inc == 109u);
    for (int i = 0; i < 6; i++)
        assert_int_equal(pv_rng_u32(&rng), expect[i]);
}

static void test_streams_differ_and_copies_repeat(void **state)
{
    (void)state;
    pv_rng_t a, b;
    pv_rng_seed(&a, 7, 1);
    pv_rng_seed(&b, 7, 2);
    int same = 0;
    for (int i = 0; i < 64; i++)
        same += pv_rng_u32(&a) == pv_rng_u32(&b);
    assert_true(same < 4);
    pv_rng_t c = a;
    for (int i = 0; i < 16; i++)
        assert_int_equal(pv_rng_u32(&a), pv_rng_u32(&c));
}

static void test_bounded_is_in_range_and_unbiased(void **state)
{
    (void)state;
    pv_rng_t rng;
    pv_rng_seed(&rng, 1, 1);
    enum { N = 6, DRAWS = 60000 };
    int count[N] = {0};
    for (int i = 0; i < DRAWS; i++) {
        uint32_t v = pv_rng_bounded(&rng, N);
        assert_true(v < N);
        count[v]++;
    }
    /* each face within 5 sigma of DRAWS/N (sigma ~ 91) */
    for (int i = 0; i < N; i++)
        assert_true(abs(count[i] - DRAWS / N) < 460);
    assert_int_equal(pv_rng_bounded(&rng, 0), 0);
}

static void test_uniform_and_normal_moments(void **state)
{
    (void)state;
    pv_rng_t rng;
    pv_rng_seed(&rng, 3, 9);
    enum { N = 200000 };
    double su = 0, sn = 0, sn2 = 0;
    for (int i = 0; i < N; i++) {
        double u = pv_rng_uniform(&rng);
        float f = pv_rng_uniformf(&rng);
        assert_true(u >= 0.0 && u < 1.0);
        assert_true(f >= 0.0f && f < 1.0f);
        su += u;
        double z = pv_rng_normal(&rng);
        assert_true(isfinite(z));
        sn += z;
        sn2 += z * z;
    }
    assert_true(fabs(su / N - 0.5) < 0.005);
    assert_true(fabs(sn / N) < 0.01);
    assert_true(fabs(sn2 / N - 1.0) < 0.02);
}

static void test_mix_spreads(void **state)
{
    (void)state;
    assert_true(pv_rng_mix(1, 0) != pv_rng_mix(1, 1));
    assert_true(pv_rng_mix(0, 1) != pv_rng_mix(1, 0));
    assert_true(pv_rng_mix(5, 5) == pv_rng_mix(5, 5));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_demo_outputs),
        cmocka_unit_test(test_streams_differ_and_copies_repeat),
        cmocka_unit_test(test_bounded_is_in_range_and_unbiased),
        cmocka_unit_test(test_uniform_and_normal_moments),
        cmocka_unit_test(test_mix_spreads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
