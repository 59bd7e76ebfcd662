/* test_err.c - the error table covers every code and pv_errf formats into the caller's buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/err.h"

static void test_every_code_has_text_and_name(void **state)
{
    (void)state;
    for (int i = 0; i < PV_ERR__COUNT; i++) {
        const char *t = pv_strerror((pv_err_t)i);
        assert_non_null(t);
        assert_true(strlen(t) > 0);
        assert_string_not_equal(t, "unknown error");
        /* texts are distinct: a reader can tell two errors apart */
        for (int j = 0; j < i; j++)
            assert_string_not_equal(t, pv_strerror((pv_err_t)j));
    }
    assert_string_equal(pv_strerror(PV_OK), "success");
    assert_string_equal(pv_errname(PV_ERR_FULL), "FULL");
    assert_string_equal(pv_strerror((pv_err_t)9999), "unknown error");
    assert_string_equal(pv_errname((pv_err_t)-1), "UNKNOWN");
}

static void test_errf_fills_and_returns(void **state)
{
    (void)state;
    pv_errmsg_t em;
    pv_errmsg_clear(&em);
    assert_int_equal(pv_errf(&em, PV_ERR_PARSE, "%s:%d: bad", "f.yaml", 7), PV_ERR_PARSE);
    assert_string_equal(em.text, "f.yaml:7: bad");
    assert_int_equal(pv_errf(NULL, PV_ERR_IO, "ignored"), PV_ERR_IO);
    char longtext[2 * PV_ERRMSG_MAX];
    memset(longtext, 'x', sizeof longtext - 1);
    longtext[sizeof longtext - 1] = '\0';
    pv_errf(&em, PV_ERR_INVAL, "%s", longtext);
    assert_int_equal(strlen(em.text), PV_ERRMSG_MAX - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_code_has_text_and_name),
        cmocka_unit_test(test_errf_fills_and_returns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
