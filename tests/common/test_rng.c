/* test_rng.c - PCG32 against the reference outputs of pcg-c-basic's pcg32-demo
 * (pcg32_srandom_r(&rng, 42u, 54u)), plus properties of the derived samplers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* pv_rng_permute: for every size (powers of 4 and their neighbours included) and two keys,
 * the positions map onto [0, n) once each; the two keys give different orders, neither is
 * the identity, and about 1/n of the positions stay fixed, as in a uniform permutation. */
static void test_permute_is_a_bijection(void **state)
{
    (void)state;
    static unsigned char seen[5000];
    static const uint64_t sizes[] = {2,   3,   4,   5,   15,   16,   17,   63,   64,   65,
                                     100, 255, 256, 257, 1000, 1023, 1024, 1025, 4096, 4999};
    size_t fixed = 0, total = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        uint64_t n = sizes[s];
        size_t same_order = 0;
        for (uint64_t key = 1; key <= 2; key++) {
            memset(seen, 0, sizeof seen);
            size_t moved = 0;
            for (uint64_t i = 0; i < n; i++) {
                uint64_t j = pv_rng_permute(i, n, key);
                assert_true(j < n);
                assert_int_equal(seen[j], 0);
                seen[j] = 1;
                moved += j != i;
                fixed += j == i;
                total++;
                same_order += key == 2 && j == pv_rng_permute(i, n, 1);
                assert_int_equal(j, pv_rng_permute(i, n, key)); /* a function of (i, n, key) */
            }
            if (n >= 15)
                assert_true(moved > n / 2);
        }
        if (n >= 15)
            assert_true(same_order < n / 2);
    }
    assert_true(fixed < total / 20); /* a uniform permutation fixes one point on average */
    assert_int_equal(pv_rng_permute(0, 1, 7), 0);
    assert_int_equal(pv_rng_permute(0, 0, 7), 0);
    assert_int_equal(pv_rng_permute(9, 5, 7), 9); /* not a position: unchanged */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_demo_outputs),
        cmocka_unit_test(test_streams_differ_and_copies_repeat),
        cmocka_unit_test(test_bounded_is_in_range_and_unbiased),
        cmocka_unit_test(test_uniform_and_normal_moments),
        cmocka_unit_test(test_mix_spreads),
        cmocka_unit_test(test_permute_is_a_bijection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
