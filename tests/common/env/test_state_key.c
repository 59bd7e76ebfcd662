/* test_state_key.c - pv_env_state_key() on all three families (embedded generators):
 * it ignores the step counter (an inadmissible action changes n_steps, not the key), it
 * changes when the state does, it survives save/load onto another instance, and equal
 * action sequences give equal keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/env/env.h"
#include "common/rng.h"

static void s_check_family(const char *name)
{
    pv_env_spec_t spec = {.name = name};
    pv_env_model_t *m = NULL;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_env_model_new(&spec, &m, &em), PV_OK);
    pv_env_t *a = NULL, *b = NULL;
    assert_int_equal(pv_env_new(m, &a), PV_OK);
    assert_int_equal(pv_env_new(m, &b), PV_OK);
    assert_int_equal(pv_env_state_key(a), 0); /* no episode yet */
    size_t cap = pv_env_state_max(m), len = 0;
    uint8_t *buf = malloc(cap);
    pv_rng_t rng;
    pv_rng_seed(&rng, 3, 1);
    int changed = 0, steps = 0;
    for (uint64_t task = 0; task < 6; task++) {
        pv_task_t t = {PV_SPLIT_TRAIN, task, 11};
        pv_step_result_t ra, rb;
        assert_int_equal(pv_env_reset(a, &t, &ra), PV_OK);
        assert_int_equal(pv_env_reset(b, &t, &rb), PV_OK);
        assert_true(pv_env_state_key(a) != 0);
        assert_true(pv_env_state_key(a) == pv_env_state_key(b));
        while (!ra.done) {
            uint64_t before = pv_env_state_key(a);
            uint32_t n_before = ra.n_steps;
            /* an action no environment admits: the step counter moves, the key does not */
            assert_int_equal(pv_env_step(a, "xyzzy plugh", &ra), PV_OK);
            assert_false(ra.admissible);
            assert_int_equal(ra.n_steps, n_before + 1);
            if (ra.done)
                break;
            assert_true(pv_env_state_key(a) == before);
            /* a random admissible action, replayed on b (which skipped the xyzzy) */
            const char *const *acts = NULL;
            size_t n = 0;
            assert_int_equal(pv_env_admissible(a, &acts, &n), PV_OK);
            if (n == 0)
                break;
            char act[1024];
            snprintf(act, sizeof act, "%s", acts[pv_rng_bounded(&rng, (uint32_t)n)]);
            assert_int_equal(pv_env_step(a, act, &ra), PV_OK);
            assert_int_equal(pv_env_step(b, act, &rb), PV_OK);
            steps++;
            changed += pv_env_state_key(a) != before;
            if (ra.done && !ra.won)
                break; /* a ran out of steps first (it also spent steps on xyzzy) */
            assert_true(pv_env_state_key(a) == pv_env_state_key(b)); /* same path, other n */
            /* save/load carries the key */
            assert_int_equal(pv_env_save(a, buf, cap, &len), PV_OK);
            pv_env_t *c = NULL;
            assert_int_equal(pv_env_new(m, &c), PV_OK);
            assert_int_equal(pv_env_load(c, buf, len, &em), PV_OK);
            assert_true(pv_env_state_key(c) == pv_env_state_key(a));
            pv_env_destroy(&c);
            if (rb.done)
                break;
        }
    }
    /* most admissible actions change something */
    assert_true(steps > 10);
    assert_true(changed * 2 > steps);
    free(buf);
    pv_env_destroy(&a);
    pv_env_destroy(&b);
    pv_env_model_destroy(&m);
}

/* Task keys: equal across save/load and for the same path; ALFWorld's "go to" and
 * "open" leave them alone while the state key moves; a pick-up changes them. */
static void test_alfworld_task_key(void **state)
{
    (void)state;
    pv_env_spec_t spec = {.name = "alfworld"};
    pv_env_model_t *m = NULL;
    assert_int_equal(pv_env_model_new(&spec, &m, NULL), PV_OK);
    pv_env_t *a = NULL, *c = NULL;
    assert_int_equal(pv_env_new(m, &a), PV_OK);
    assert_int_equal(pv_env_new(m, &c), PV_OK);
    size_t cap = pv_env_state_max(m), len = 0;
    uint8_t *buf = malloc(cap);
    int moves = 0, takes = 0;
    for (uint64_t task = 0; task < 8; task++) {
        pv_task_t t = {PV_SPLIT_TRAIN, task, 5};
        pv_step_result_t r;
        assert_int_equal(pv_env_reset(a, &t, &r), PV_OK);
        assert_true(pv_env_task_key(a) != 0);
        for (int step = 0; step < 40 && !r.done; step++) {
            const char *const *acts = NULL;
            size_t n = 0;
            assert_int_equal(pv_env_admissible(a, &acts, &n), PV_OK);
            /* a pick-up when there is one, else a walk or an opening, varied by step */
            const char *pick = NULL, *moves_here[64];
            size_t n_moves = 0;
            for (size_t i = 0; i < n; i++) {
                if (!pick && strncmp(acts[i], "take ", 5) == 0)
                    pick = acts[i];
                else if (n_moves < 64 &&
                         (strncmp(acts[i], "go to ", 6) == 0 || strncmp(acts[i], "open ", 5) == 0))
                    moves_here[n_moves++] = acts[i];
            }
            if (!pick && n_moves)
                pick = moves_here[(size_t)step % n_moves];
            if (!pick)
                break;
            char act[256];
            snprintf(act, sizeof act, "%s", pick);
            uint64_t tk = pv_env_task_key(a), sk = pv_env_state_key(a);
            assert_int_equal(pv_env_step(a, act, &r), PV_OK);
            if (r.done)
                break;
            if (strncmp(act, "go to ", 6) == 0 || strncmp(act, "open ", 5) == 0) {
                assert_true(pv_env_task_key(a) == tk); /* wandering is not progress */
                moves += pv_env_state_key(a) != sk;
            } else if (strncmp(act, "take ", 5) == 0) {
                assert_true(pv_env_task_key(a) != tk);
                takes++;
            }
            assert_int_equal(pv_env_save(a, buf, cap, &len), PV_OK);
            assert_int_equal(pv_env_load(c, buf, len, NULL), PV_OK);
            assert_true(pv_env_task_key(c) == pv_env_task_key(a));
        }
    }
    assert_true(moves > 5);
    assert_true(takes > 0);
    free(buf);
    pv_env_destroy(&a);
    pv_env_destroy(&c);
    pv_env_model_destroy(&m);
}

/* WebShop: searching and browsing leave the task key alone; opening an item changes it. */
static void test_webshop_task_key(void **state)
{
    (void)state;
    pv_env_spec_t spec = {.name = "webshop"};
    pv_env_model_t *m = NULL;
    assert_int_equal(pv_env_model_new(&spec, &m, NULL), PV_OK);
    pv_env_t *a = NULL;
    assert_int_equal(pv_env_new(m, &a), PV_OK);
    int items = 0;
    for (uint64_t task = 0; task < 6; task++) {
        pv_task_t t = {PV_SPLIT_TRAIN, task, 5};
        pv_step_result_t r;
        assert_int_equal(pv_env_reset(a, &t, &r), PV_OK);
        const char *const *acts = NULL;
        size_t n = 0;
        assert_int_equal(pv_env_admissible(a, &acts, &n), PV_OK);
        assert_true(n > 0 && strncmp(acts[0], "search[", 7) == 0);
        char act[512];
        snprintf(act, sizeof act, "%s", acts[0]);
        uint64_t tk = pv_env_task_key(a), sk = pv_env_state_key(a);
        assert_int_equal(pv_env_step(a, act, &r), PV_OK);
        assert_true(pv_env_task_key(a) == tk);
        assert_true(pv_env_state_key(a) != sk);
        assert_int_equal(pv_env_admissible(a, &acts, &n), PV_OK);
        for (size_t i = 0; i < n; i++) {
            /* result items are the clicks that are not navigation buttons */
            if (strncmp(acts[i], "click[", 6) != 0 || strstr(acts[i], "search") ||
                strstr(acts[i], "next >") || strstr(acts[i], "< prev"))
                continue;
            snprintf(act, sizeof act, "%s", acts[i]);
            assert_int_equal(pv_env_step(a, act, &r), PV_OK);
            assert_true(pv_env_task_key(a) != tk);
            items++;
            break;
        }
    }
    assert_true(items > 0);
    pv_env_destroy(&a);
    pv_env_model_destroy(&m);
}

static void test_alfworld(void **state)
{
    (void)state;
    s_check_family("alfworld");
}

static void test_webshop(void **state)
{
    (void)state;
    s_check_family("webshop");
}

static void test_searchqa(void **state)
{
    (void)state;
    s_check_family("searchqa");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alfworld),         cmocka_unit_test(test_webshop),
        cmocka_unit_test(test_searchqa),         cmocka_unit_test(test_alfworld_task_key),
        cmocka_unit_test(test_webshop_task_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
