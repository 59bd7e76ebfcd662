/* test_arena.c - alignment, reuse after reset (no new blocks), the max_bytes cap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/arena.h"

static void test_alignment_and_contents(void **state)
{
    (void)state;
    pv_arena_t *a = NULL;
    assert_int_equal(pv_arena_new(256, 0, &a), PV_OK);
    for (size_t align = 1; align <= 64; align *= 2) {
        unsigned char *p = pv_arena_alloc(a, 3, align);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % align, 0);
        memset(p, 0xab, 3);
    }
    char *s = pv_arena_strndup(a, "hello world", 5);
    assert_string_equal(s, "hello");
    const char *src = "copied whole";
    char *d = pv_arena_strdup(a, src);
    assert_string_equal(d, src);
    assert_ptr_not_equal(d, src);
    int *z = pv_arena_calloc(a, 10, sizeof(int));
    for (int i = 0; i < 10; i++)
        assert_int_equal(z[i], 0);
    assert_null(pv_arena_calloc(a, SIZE_MAX / 2, 4)); /* overflow is refused */
    assert_null(pv_arena_alloc(a, 8, 3));             /* not a power of two */
    pv_arena_destroy(&a);
    assert_null(a);
    pv_arena_destroy(&a); /* NULL-safe */
}

static void test_reset_reuses_blocks(void **state)
{
    (void)state;
    pv_arena_t *a = NULL;
    assert_int_equal(pv_arena_new(1024, 0, &a), PV_OK);
    for (int i = 0; i < 100; i++)
        assert_non_null(pv_arena_alloc(a, 100, 8));
    size_t reserved = pv_arena_reserved(a);
    assert_true(pv_arena_used(a) >= 100 * 100);
    for (int round = 0; round < 5; round++) {
        pv_arena_reset(a);
        assert_int_equal(pv_arena_used(a), 0);
        for (int i = 0; i < 100; i++)
            assert_non_null(pv_arena_alloc(a, 100, 8));
        assert_int_equal(pv_arena_reserved(a), reserved); /* steady state: no new blocks */
    }
    pv_arena_destroy(&a);
}

static void test_cap_is_enforced(void **state)
{
    (void)state;
    pv_arena_t *a = NULL;
    assert_int_equal(pv_arena_new(1024, 4096, &a), PV_OK);
    int got = 0;
    while (pv_arena_alloc(a, 512, 8))
        got++;
    assert_true(got >= 4 && got <= 8);
    assert_true(pv_arena_reserved(a) <= 4096);
    assert_null(pv_arena_alloc(a, 1 << 20, 8));
    pv_arena_destroy(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alignment_and_contents),
        cmocka_unit_test(test_reset_reuses_blocks),
        cmocka_unit_test(test_cap_is_enforced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
