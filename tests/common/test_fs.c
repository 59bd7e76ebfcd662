/* test_fs.c - pv_mkdirs: nested creation, the mode of the last directory, an existing
 * directory is fine, and an impossible path names the directory that failed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fs.h"

static void test_mkdirs(void **state)
{
    (void)state;
    char root[] = "/tmp/pv_test_fs.XXXXXX", path[256], file[256];
    assert_non_null(mkdtemp(root));
    snprintf(path, sizeof path, "%s/a/b/c", root);
    assert_int_equal(pv_mkdirs(path, 0700, NULL), PV_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0700);            /* the umask never removes owner bits */
    assert_int_equal(pv_mkdirs(path, 0700, NULL), PV_OK); /* already there */
    /* a regular file in the way */
    snprintf(file, sizeof file, "%s/a/f", root);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(path, sizeof path, "%s/a/f/x", root);
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_mkdirs(path, 0755, &em), PV_ERR_IO);
    assert_non_null(strstr(em.text, path));
    assert_int_equal(pv_mkdirs("", 0755, &em), PV_ERR_INVAL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_mkdirs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
