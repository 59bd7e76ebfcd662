/* test_report_history.c - pv_report_history: what a resumed learner takes over from the
 * metrics.jsonl of the run that wrote its checkpoint. The file is written here by the
 * learner's own writers (pv_report_iteration / pv_report_eval), plus lines a crash or an
 * editor could leave (not JSON, iterations past the checkpoint). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "learner/report.h"

/* 14 iterations with success i / 20, evaluations at 0 and 10; then a broken line and 3
 * iterations past the checkpoint (step 14) that must not count. */
static void s_write_run(const char *path)
{
    pv_metrics_t *m = NULL;
    assert_int_equal(pv_metrics_open(path, false, &m, NULL), PV_OK);
    pv_run_totals_t run = {.eval_first = {.greedy = -1, .sampled = -1},
                           .eval_last = {.greedy = -1, .sampled = -1}};
    pv_eval_result_t e0 = {.greedy = 0.0, .sampled = 0.05, .score = 3.5, .score_sampled = 7.25},
                     e10 = {.greedy = 0.4,
                            .sampled = 0.55,
                            .score = 41.0,
                            .score_sampled = 60.5,
                            .seen_kinds = true};
    assert_int_equal(pv_report_eval(m, 0, 1, &e0, 20, &run), PV_OK);
    for (uint64_t i = 1; i <= 17; i++) {
        pv_intake_stats_t b = {.groups = 1, .trajectories = 20, .won = i, .steps = 100};
        pv_intake_stats_t t = {0};
        pv_update_stats_t up = {0};
        run.rollout_env_steps = 1000 * i;
        run.verify_env_steps = 300 * i;
        run.rollout_tokens = 7000 * i;
        run.verify_tokens = 900 * i;
        run.wall_s = 2.0 * (double)i;
        assert_int_equal(pv_report_iteration(m, i, 20, i + 1, &b, &t, &up, &run), PV_OK);
        if (i == 10)
            assert_int_equal(pv_report_eval(m, 10, 11, &e10, 20, &run), PV_OK);
        if (i == 14) {
            pv_metrics_close(&m);
            FILE *f = fopen(path, "a");
            assert_non_null(f);
            fputs("{\"kind\": \"train\", \"iteration\": 15, \"trunc\n", f); /* a torn line */
            fclose(f);
            assert_int_equal(pv_metrics_open(path, true, &m, NULL), PV_OK);
        }
    }
    pv_metrics_close(&m);
}

static void test_history(void **state)
{
    (void)state;
    char path[] = "/tmp/test_report_history.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    s_write_run(path);
    /* each eval line names its split: the first the test split, the second the seen kinds */
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    int evals = 0;
    while (fgets(line, sizeof line, f)) {
        json_t *o = json_loads(line, 0, NULL); /* the torn line does not parse */
        const char *kind = json_string_value(json_object_get(o, "kind"));
        if (kind && strcmp(kind, "eval") == 0)
            assert_string_equal(json_string_value(json_object_get(o, "eval_split")),
                                evals++ == 0 ? "test" : "train");
        json_decref(o);
    }
    fclose(f);
    assert_int_equal(evals, 2);
    pv_run_history_t h;
    assert_int_equal(pv_report_history(path, 14, &h, NULL), PV_OK);
    assert_int_equal(h.n_train, 14);
    assert_int_equal(h.rollout_env_steps, 14000);
    assert_int_equal(h.verify_env_steps, 4200);
    assert_int_equal(h.rollout_tokens, 98000);
    assert_int_equal(h.verify_tokens, 12600);
    assert_float_equal(h.wall_s, 28.0, 1e-9);
    assert_int_equal(h.bad_lines, 1);
    assert_float_equal(h.eval_first.greedy, 0.0, 1e-12);
    assert_float_equal(h.eval_first.sampled, 0.05, 1e-12);
    assert_float_equal(h.eval_last.greedy, 0.4, 1e-12);
    assert_float_equal(h.eval_last.sampled, 0.55, 1e-12);
    assert_float_equal(h.eval_first.score, 3.5, 1e-12);
    assert_float_equal(h.eval_last.score_sampled, 60.5, 1e-12);
    assert_int_equal(h.eval_last_iteration, 10);
    /* first 10 successes: (1 + ... + 10) / 20 / 10 */
    assert_float_equal(h.train_first, 55.0 / 200.0, 1e-12);
    /* the ring holds iterations 5..14: line i (0-based, iteration i + 1) at i % 10 */
    for (uint64_t i = 4; i < 14; i++)
        assert_float_equal(h.recent[i % 10], (double)(i + 1) / 20.0, 1e-12);
    /* a checkpoint at step 10 sees its own evaluation as the last one */
    assert_int_equal(pv_report_history(path, 10, &h, NULL), PV_OK);
    assert_int_equal(h.n_train, 10);
    assert_int_equal(h.eval_last_iteration, 10);
    assert_int_equal(h.rollout_env_steps, 10000);
    unlink(path);
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_report_history(path, 14, &h, &em), PV_ERR_IO);
    assert_non_null(strstr(em.text, path));
    assert_int_equal(h.n_train, 0);
    assert_true(h.eval_first.greedy < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_history)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
