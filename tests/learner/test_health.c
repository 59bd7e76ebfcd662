/* test_health.c - the run's books (learner/health.h): conservation per service, the summary
 * line's figures and what is unaccounted, the "broker" metrics line. The counters are made up
 * by hand; the expected line is written out from them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "learner/health.h"

static pv_wire_service_stats_t s_svc(const char *name, uint64_t enq, uint64_t acked,
                                     uint64_t dropped, uint32_t inflight, uint32_t queued)
{
    pv_wire_service_stats_t s;
    memset(&s, 0, sizeof s);
    s.name = name;
    s.enqueued = enq;
    s.acked = acked;
    s.dropped = dropped;
    s.inflight_msgs = inflight;
    s.depth_msgs = queued;
    return s;
}

/* A STATS_REPLY holding the n services `svc` (borrowed). */
static pv_wire_stats_reply_t s_reply(pv_wire_service_stats_t *svc, uint32_t n)
{
    pv_wire_stats_reply_t st;
    memset(&st, 0, sizeof st);
    st.services = svc;
    st.n_services = n;
    return st;
}

static void test_never_fetched(void **state)
{
    (void)state;
    pv_health_t h;
    memset(&h, 0, sizeof h);
    snprintf(h.last_error, sizeof h.last_error, "timed out");
    char line[512];
    pv_health_line(&h, line, sizeof line);
    assert_string_equal(line, "broker: no statistics (timed out)");
    json_t *j = pv_health_json(&h);
    assert_false(json_is_true(json_object_get(j, "conserved")));
    assert_false(json_is_true(json_object_get(j, "fetched")));
    json_decref(j);
}

static void test_books_balance(void **state)
{
    (void)state;
    pv_wire_service_stats_t svc[3] = {s_svc("judge", 748, 744, 0, 4, 0),
                                      s_svc("verify", 1776, 1770, 2, 1, 3),
                                      s_svc("idle", 0, 0, 0, 0, 0)};
    pv_wire_stats_reply_t st = s_reply(svc, 3);
    st.weights_version = 17;
    pv_health_t h;
    memset(&h, 0, sizeof h);
    assert_int_equal(pv_health_record(&h, &st, 5, NULL), PV_OK);
    assert_true(pv_health_conserved(&h));
    assert_int_equal(h.weights_version, 17);
    char line[512];
    pv_health_line(&h, line, sizeof line);
    assert_string_equal(line, "broker: nothing lost: judge 748 = 744 acked + 0 dropped + 4 in "
                              "flight + 0 queued; verify 1776 = 1770 acked + 2 dropped + 1 in "
                              "flight + 3 queued");
    json_t *j = pv_health_json(&h);
    assert_true(json_is_true(json_object_get(j, "conserved")));
    json_t *v = json_object_get(json_object_get(j, "services"), "verify");
    assert_int_equal(json_integer_value(json_object_get(v, "dropped")), 2);
    json_decref(j);
}

/* Books older than a failed fetch (the run's last, on a loaded machine) say how old they are,
 * and the next reply makes them current again; a failure before any reply leaves "no
 * statistics". */
static void test_stale_books(void **state)
{
    (void)state;
    pv_wire_service_stats_t svc[1] = {s_svc("learn", 560, 560, 0, 0, 0)};
    pv_wire_stats_reply_t st = s_reply(svc, 1);
    pv_health_t h;
    memset(&h, 0, sizeof h);
    pv_health_fetch_failed(&h, "no answer from tcp://127.0.0.1:5555");
    assert_false(h.stale);
    char line[512];
    pv_health_line(&h, line, sizeof line);
    assert_string_equal(line, "broker: no statistics (no answer from tcp://127.0.0.1:5555)");
    assert_int_equal(pv_health_record(&h, &st, 70, NULL), PV_OK);
    pv_health_fetch_failed(&h, "timed out");
    assert_true(h.stale);
    assert_int_equal(h.failures, 2);
    pv_health_line(&h, line, sizeof line);
    assert_string_equal(line, "broker (as of iteration 70; the last fetch failed: timed out): "
                              "nothing lost: learn 560 = 560 acked + 0 dropped + 0 in flight + "
                              "0 queued");
    json_t *j = pv_health_json(&h);
    assert_true(json_is_true(json_object_get(j, "stale")));
    assert_int_equal(json_integer_value(json_object_get(j, "iteration")), 70);
    assert_true(json_is_true(json_object_get(j, "conserved")));
    json_decref(j);
    svc[0] = s_svc("learn", 640, 640, 0, 0, 0);
    assert_int_equal(pv_health_record(&h, &st, 80, NULL), PV_OK);
    pv_health_line(&h, line, sizeof line);
    assert_string_equal(line, "broker: nothing lost: learn 640 = 640 acked + 0 dropped + 0 in "
                              "flight + 0 queued");
    j = pv_health_json(&h);
    assert_false(json_is_true(json_object_get(j, "stale")));
    assert_int_equal(json_integer_value(json_object_get(j, "iteration")), 80);
    json_decref(j);
}

static void test_jobs_unaccounted(void **state)
{
    (void)state;
    pv_wire_service_stats_t svc[1] = {s_svc("learn", 100, 95, 1, 1, 0)};
    pv_wire_stats_reply_t st = s_reply(svc, 1);
    pv_health_t h;
    memset(&h, 0, sizeof h);
    assert_int_equal(pv_health_record(&h, &st, 1, NULL), PV_OK);
    assert_false(pv_health_conserved(&h));
    assert_int_equal(h.services[0].unaccounted, 3);
    char line[512];
    pv_health_line(&h, line, sizeof line);
    assert_non_null(strstr(line, "jobs unaccounted for"));
    assert_string_equal(line, "broker: jobs unaccounted for: learn 100 = 95 acked + 1 dropped + "
                              "1 in flight + 0 queued (3 unaccounted)");
}

/* The judge's RUN_STATUS in a reply becomes an "llm_judge" metrics line and the summary's
 * llm_judge object; without one there is neither. */
static void test_llm_cost(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_health.XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/metrics.jsonl", dir);
    pv_metrics_t *m;
    assert_int_equal(pv_metrics_open(path, 0, &m, NULL), PV_OK);
    pv_wire_stats_reply_t st;
    memset(&st, 0, sizeof st);
    pv_health_t h;
    memset(&h, 0, sizeof h);
    assert_int_equal(pv_health_record(&h, &st, 1, m), PV_OK);
    assert_null(pv_health_llm_json(&h));
    pv_wire_error_count_t fb[2] = {{.name = "TIMEOUT", .count = 2}, {.name = "HTTP", .count = 1}};
    pv_wire_run_status_t runs[2] = {{.source = "learner", .iteration = 3},
                                    {.source = "judge",
                                     .llm_groups = 10,
                                     .llm_answered = 7,
                                     .llm_requests = 15,
                                     .llm_prompt_tokens = 9000,
                                     .llm_completion_tokens = 450,
                                     .llm_latency_p50_ms = 30,
                                     .llm_latency_p99_ms = 700,
                                     .llm_repairs = 4,
                                     .llm_tool_calls = 6,
                                     .llm_fallbacks = fb,
                                     .n_llm_fallbacks = 2,
                                     .ago_ms = 1500}};
    st.runs = runs;
    st.n_runs = 2;
    assert_int_equal(pv_health_record(&h, &st, 2, m), PV_OK);
    pv_metrics_close(&m);
    FILE *f = fopen(path, "r");
    char buf[4096];
    int llm_lines = 0;
    while (fgets(buf, sizeof buf, f)) {
        json_t *o = json_loads(buf, 0, NULL);
        assert_non_null(o);
        if (strcmp(json_string_value(json_object_get(o, "kind")), "llm_judge") == 0) {
            llm_lines++;
            assert_int_equal(json_integer_value(json_object_get(o, "iteration")), 2);
            assert_int_equal(json_integer_value(json_object_get(o, "prompt_tokens")), 9000);
            assert_int_equal(json_integer_value(json_object_get(o, "latency_p99_ms")), 700);
            assert_int_equal(json_integer_value(json_object_get(o, "fallbacks_total")), 3);
            assert_int_equal(
                json_integer_value(json_object_get(json_object_get(o, "fallbacks"), "TIMEOUT")), 2);
            assert_float_equal(json_real_value(json_object_get(o, "status_age_s")), 1.5, 1e-12);
        }
        json_decref(o);
    }
    fclose(f);
    assert_int_equal(llm_lines, 1);
    json_t *j = pv_health_llm_json(&h);
    assert_int_equal(json_integer_value(json_object_get(j, "answered")), 7);
    assert_int_equal(json_integer_value(json_object_get(j, "repairs")), 4);
    json_decref(j);
    /* the summary's line: the fallbacks summed over reasons; a warning only when the model
     * answered none of its groups */
    char line[512];
    pv_health_llm_line(&h.llm, line, sizeof line);
    assert_non_null(strstr(line, "10 groups (7 the model's, 3 fell back), 15 requests"));
    assert_null(strstr(line, "warning"));
    pv_health_llm_t none = h.llm;
    none.answered = 0;
    pv_health_llm_line(&none, line, sizeof line);
    assert_non_null(strstr(line, "warning: the model answered none"));
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_never_fetched), cmocka_unit_test(test_stale_books),
        cmocka_unit_test(test_books_balance), cmocka_unit_test(test_jobs_unaccounted),
        cmocka_unit_test(test_llm_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
