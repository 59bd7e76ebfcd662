/* test_log.c - prefix format, level filtering, and that a filtered line never evaluates its
 * arguments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/log.h"

static int s_calls;
static int s_counted(void)
{
    return ++s_calls;
}

static void test_prefix_and_filter(void **state)
{
    (void)state;
    char buf[4096] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    pv_log_set_sink(f);
    pv_log_init("learner", 3);
    pv_log_set_level(PV_LOG_LEVEL_INFO);
    s_calls = 0;
    PV_LOG_DEBUG("hidden %d", s_counted());
    assert_int_equal(s_calls, 0); /* arguments not evaluated below the level */
    PV_LOG_INFO("iteration %d", 7);
    PV_LOG_ERROR("bad %s", "thing");
    fflush(f);
    char want[64];
    snprintf(want, sizeof want, "I [learner r3 p%d] iteration 7\n", (int)getpid());
    assert_non_null(strstr(buf, want));
    assert_non_null(strstr(buf, "] bad thing\n"));
    assert_null(strstr(buf, "hidden"));
    pv_log_set_sink(NULL);
    fclose(f);
}

static void test_parse_level(void **state)
{
    (void)state;
    pv_log_level_t l = PV_LOG_LEVEL_INFO;
    assert_int_equal(pv_log_parse_level("DEBUG", &l), 0);
    assert_int_equal(l, PV_LOG_LEVEL_DEBUG);
    assert_int_equal(pv_log_parse_level("warn", &l), 0);
    assert_int_equal(l, PV_LOG_LEVEL_WARN);
    assert_int_equal(pv_log_parse_level("loud", &l), -1);
    assert_int_equal(l, PV_LOG_LEVEL_WARN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefix_and_filter),
        cmocka_unit_test(test_parse_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
