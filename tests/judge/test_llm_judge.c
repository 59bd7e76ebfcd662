/* test_llm_judge.c - the LLM judge's conversations against the stand-in endpoint
 * (tests/judge/fake_openai.py, started per test with its script): the oracle's answer, the
 * tool-call path, repairs, the contrast fallback and its counts, retries, a hung or
 * unreachable endpoint that costs its timeout and blocks no other group, answers that are
 * not chat completions, and many groups at once with nothing lost or counted twice.
 * Exits 77 (ctest: skipped) without python3. Only configured timeouts are timed, with wide
 * margins; nothing else depends on the machine's speed. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <jansson.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "common/clock.h"
#include "judge/llm_judge.h"
#include "fake_server.h"
#include "llm_fixture.h"

static char s_url[128];

static pv_llm_opts_t s_opts(const fs_server_t *s)
{
    pv_llm_opts_t o = {.model = "fake-judge",
                       .timeout_ms = 20000,
                       .group_timeout_ms = 60000,
                       .retries = 0,
                       .backoff_ms = 20,
                       .max_in_flight = 4,
                       .capacity = 16,
                       .max_tokens = 256,
                       .max_repairs = 3,
                       .max_tool_calls = 8,
                       .format = PV_LLM_FORMAT_JSON_SCHEMA,
                       .lim = pv_llm_limits_default()};
    snprintf(s_url, sizeof s_url, "http://127.0.0.1:%d/v1", s ? s->port : 1);
    o.base_url = s_url;
    return o;
}

static pv_propose_opts_t s_propose_opts(void)
{
    return (pv_propose_opts_t){.kind = PV_JUDGE_LLM,
                               .max_segments = 1,
                               .max_turns = 4,
                               .min_successes = 1,
                               .max_successes = 3,
                               .max_steps = 50};
}

static pv_llm_group_t s_group(fx_group_t *g, uint64_t id, const char *task)
{
    fx_build(g);
    for (size_t i = 0; i < FX_N; i++)
        g->trajs[i].task_text = task;
    return (pv_llm_group_t){.group_id = id,
                            .task_text = task,
                            .trajs = g->trajs,
                            .views = g->views,
                            .n_trajs = FX_N,
                            .fallback = s_propose_opts(),
                            .seed = 1234 + id};
}

/* Poll until every ticket has its result (a generous guard of 120 s: a failure, not a
 * measurement); order[] receives the indices in the order they finished. */
static void s_run(pv_llm_judge_t *J, const uint64_t *tickets, size_t n, pv_llm_result_t *res,
                  size_t *order)
{
    bool *done = calloc(n, sizeof *done);
    size_t n_done = 0;
    uint64_t start = pv_mono_ms();
    while (n_done < n) {
        assert_int_equal(pv_llm_judge_poll(J, 50), PV_OK);
        for (size_t i = 0; i < n; i++) {
            if (done[i])
                continue;
            pv_err_t rc = pv_llm_judge_take(J, tickets[i], &res[i]);
            if (rc == PV_OK) {
                done[i] = true;
                if (order)
                    order[n_done] = i;
                n_done++;
                assert_int_equal(pv_llm_judge_take(J, tickets[i], &res[i]), PV_ERR_NOTFOUND);
            } else {
                assert_int_equal(rc, PV_ERR_AGAIN);
            }
        }
        if (pv_mono_ms() - start > 120000)
            fail_msg("groups still unfinished after 120 s");
    }
    free(done);
}

static void s_one(pv_llm_judge_t *J, const pv_llm_group_t *g, pv_llm_result_t *res)
{
    uint64_t t;
    assert_int_equal(pv_llm_judge_submit(J, g, &t, NULL), PV_OK);
    s_run(J, &t, 1, res, NULL);
}

/* The contrast judge's proposal for the fixture group with seed `seed`. */
static size_t s_contrast(fx_group_t *g, uint64_t seed, pv_segment_t *seg)
{
    pv_arena_t *a;
    assert_int_equal(pv_arena_new(0, 0, &a), PV_OK);
    pv_rng_t rng;
    pv_rng_seed(&rng, seed, 0);
    size_t n = 0;
    pv_propose_opts_t po = s_propose_opts();
    po.kind = PV_JUDGE_CONTRAST;
    assert_int_equal(pv_judge_propose(&po, g->views, FX_N, a, &rng, seg, 1, &n), PV_OK);
    pv_arena_destroy(&a);
    return n;
}

static void s_same_seg(const pv_segment_t *a, const pv_segment_t *b)
{
    assert_int_equal(a->traj, b->traj);
    assert_int_equal(a->t0, b->t0);
    assert_int_equal(a->t1, b->t1);
    assert_int_equal(a->expect, b->expect);
}

static void test_oracle_answer_and_request_shape(void **state)
{
    (void)state;
    fs_server_t s;
    char answers[64];
    snprintf(answers, sizeof answers, "/tmp/pv_test_llm_answers_%d.json", (int)getpid());
    FILE *f = fopen(answers, "w");
    assert_non_null(f);
    fputs("{\"101\": {\"start_turn\": 3, \"end_turn\": 4, \"failure_mode\": \"the failures "
          "never clean the mug\"}}",
          f);
    fclose(f);
    fs_start(&s, "--script oracle --require-key sk-test-123 --answers %s", answers);
    pv_llm_opts_t o = s_opts(&s);
    o.api_key = "sk-test-123";
    pv_llm_judge_t *J;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    fx_group_t g;
    pv_llm_group_t grp = s_group(&g, 101, "put a clean mug in coffeemachine.");
    pv_llm_result_t r;
    s_one(J, &grp, &r);
    assert_int_equal(r.fallback, PV_LLM_FALLBACK_NONE);
    assert_int_equal(r.n_segs, 1);
    assert_int_equal(r.seg.traj, 2);
    assert_int_equal(r.seg.t0, 3);
    assert_int_equal(r.seg.t1, 5);
    assert_int_equal(r.seg.expect, 1);
    assert_string_equal(r.failure_mode, "the failures never clean the mug");
    assert_int_equal(r.requests, 1);
    assert_true(r.prompt_tokens > 100 && r.completion_tokens > 0);
    pv_llm_stats_t st;
    pv_llm_judge_stats(J, &st);
    assert_int_equal(st.groups, 1);
    assert_int_equal(st.answered, 1);
    assert_int_equal(st.fallbacks, 0);
    assert_int_equal(st.requests, 1);
    assert_int_equal(st.prompt_tokens, r.prompt_tokens);
    assert_int_equal(st.latency_samples, 1);
    assert_true(st.latency_p99_ms >= st.latency_p50_ms);
    assert_int_equal(st.active, 0);
    /* what went over the wire */
    json_t *reqs = fs_requests(&s);
    assert_int_equal(json_array_size(reqs), 1);
    json_t *body = json_object_get(json_array_get(reqs, 0), "request");
    assert_string_equal(json_string_value(json_object_get(body, "model")), "fake-judge");
    assert_string_equal(json_string_value(json_object_get(body, "tool_choice")), "auto");
    assert_int_equal(json_array_size(json_object_get(body, "tools")), 2);
    json_t *rf = json_object_get(body, "response_format");
    assert_string_equal(json_string_value(json_object_get(rf, "type")), "json_schema");
    json_t *msgs = json_object_get(body, "messages");
    assert_int_equal(json_array_size(msgs), 2);
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(msgs, 1), "content")),
                           "Group 101. Task: put a clean mug"));
    char *dump = json_dumps(reqs, 0);
    assert_null(strstr(dump, "sk-test-123")); /* the key is a header, never in the body */
    free(dump);
    json_decref(reqs);
    pv_llm_judge_destroy(&J);
    assert_null(J);
    /* a wrong key: 401 is not worth a retry; the group falls back, the key is not in the
     * detail */
    o.api_key = "sk-wrong";
    o.retries = 2;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    s_one(J, &grp, &r);
    assert_int_equal(r.fallback, PV_LLM_FALLBACK_HTTP);
    assert_non_null(strstr(r.detail, "HTTP 401"));
    assert_null(strstr(r.detail, "sk-wrong"));
    assert_int_equal(r.requests, 1);
    pv_segment_t want;
    assert_int_equal(s_contrast(&g, grp.seed, &want), 1);
    assert_int_equal(r.n_segs, 1);
    s_same_seg(&r.seg, &want);
    pv_llm_judge_destroy(&J);
    fs_stop(&s);
    remove(answers);
}

static void test_tool_calls_then_answer(void **state)
{
    (void)state;
    fs_server_t s;
    fs_start(&s, "--script search,segment,bad_tool,oracle");
    pv_llm_opts_t o = s_opts(&s);
    pv_llm_judge_t *J;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    fx_group_t g;
    pv_llm_group_t grp = s_group(&g, 7, "put a clean mug in coffeemachine.");
    pv_llm_result_t r;
    s_one(J, &grp, &r);
    assert_int_equal(r.fallback, PV_LLM_FALLBACK_NONE);
    assert_int_equal(r.seg.traj, 2);
    assert_int_equal(r.seg.t0, 0); /* the stand-in's default: the first allowed turn */
    assert_int_equal(r.seg.t1, 1);
    assert_int_equal(r.requests, 4);
    assert_int_equal(r.tool_calls, 4); /* search, get_segment, two bad calls */
    assert_int_equal(r.repairs, 0);
    pv_llm_stats_t st;
    pv_llm_judge_stats(J, &st);
    assert_int_equal(st.tool_calls, 4);
    assert_int_equal(st.tool_errors, 2);
    json_t *reqs = fs_requests(&s);
    assert_int_equal(json_array_size(reqs), 4);
    /* request 2 carries the search's result, request 3 the segment, request 4 two errors */
    const char *want[3] = {"\"results\"", "\"turns\"", "\"error\""};
    for (size_t k = 1; k < 4; k++) {
        json_t *msgs =
            json_object_get(json_object_get(json_array_get(reqs, k), "request"), "messages");
        json_t *last = json_array_get(msgs, json_array_size(msgs) - 1);
        assert_string_equal(json_string_value(json_object_get(last, "role")), "tool");
        const char *content = json_string_value(json_object_get(last, "content"));
        if (!strstr(content, want[k - 1]))
            fail_msg("request %zu: tool content '%s' lacks %s", k + 1, content, want[k - 1]);
    }
    /* the search found the failed runs' turns that share the success's first action */
    json_t *m2 = json_object_get(json_object_get(json_array_get(reqs, 1), "request"), "messages");
    const char *res = json_string_value(json_object_get(json_array_get(m2, 3), "content"));
    assert_non_null(strstr(res, "\"action\":\"go to countertop 1\""));
    json_decref(reqs);
    pv_llm_judge_destroy(&J);
    fs_stop(&s);
}

static void test_tool_budget(void **state)
{
    (void)state;
    fs_server_t s;
    fs_start(&s, "--script search,search,oracle");
    pv_llm_opts_t o = s_opts(&s);
    o.max_tool_calls = 1;
    pv_llm_judge_t *J;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    fx_group_t g;
    pv_llm_group_t grp = s_group(&g, 8, "t");
    pv_llm_result_t r;
    s_one(J, &grp, &r);
    assert_int_equal(r.fallback, PV_LLM_FALLBACK_NONE);
    assert_int_equal(r.tool_calls, 1); /* the second search was not run */
    assert_int_equal(r.repairs, 1);    /* calling a tool after being told to answer */
    json_t *reqs = fs_requests(&s);
    assert_int_equal(json_array_size(reqs), 3);
    json_t *b2 = json_object_get(json_array_get(reqs, 1), "request");
    assert_string_equal(json_string_value(json_object_get(b2, "tool_choice")), "none");
    json_decref(reqs);
    pv_llm_judge_destroy(&J);
    fs_stop(&s);
}

static void test_repairs_then_accept(void **state)
{
    (void)state;
    fs_server_t s;
    fs_start(&s, "--script malformed,out_of_bounds,wrong_actions,oracle");
    pv_llm_opts_t o = s_opts(&s);
    pv_llm_judge_t *J;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    fx_group_t g;
    pv_llm_group_t grp = s_group(&g, 9, "t");
    pv_llm_result_t r;
    s_one(J, &grp, &r);
    assert_int_equal(r.fallback, PV_LLM_FALLBACK_NONE);
    assert_int_equal(r.repairs, 3);
    assert_int_equal(r.requests, 4);
    pv_llm_stats_t st;
    pv_llm_judge_stats(J, &st);
    assert_int_equal(st.repairs, 3);
    assert_int_equal(st.refusals_by[PV_LLM_REFUSAL_NOT_JSON], 1);
    assert_int_equal(st.refusals_by[PV_LLM_REFUSAL_BOUNDS], 1);
    assert_int_equal(st.refusals_by[PV_LLM_REFUSAL_ACTIONS], 1);
    assert_int_equal(st.answered, 1);
    /* the repair turn: the refused answer, then the validator's message */
    json_t *reqs = fs_requests(&s);
    json_t *msgs = json_object_get(json_object_get(json_array_get(reqs, 2), "request"), "messages");
    size_t n = json_array_size(msgs);
    assert_int_equal(n, 6);
    assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, n - 2), "role")),
                        "assistant");
    const char *fix = json_string_value(json_object_get(json_array_get(msgs, n - 1), "content"));
    assert_non_null(strstr(fix, "refused"));
    assert_non_null(strstr(fix, "a turn is outside the trajectory"));
    json_decref(reqs);
    pv_llm_judge_destroy(&J);
    fs_stop(&s);
}

static void test_repairs_spent_fall_back(void **state)
{
    (void)state;
    fs_server_t s;
    fs_start(&s, "--script terminal");
    pv_llm_opts_t o = s_opts(&s);
    o.max_repairs = 2;
    pv_llm_judge_t *J;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    fx_group_t g;
    pv_llm_group_t grp = s_group(&g, 10, "t");
    pv_llm_result_t r;
    s_one(J, &grp, &r);
    assert_int_equal(r.fallback, PV_LLM_FALLBACK_INVALID);
    assert_non_null(strstr(r.detail, "nonterminal"));
    assert_int_equal(r.repairs, 2);
    assert_int_equal(r.requests, 3);
    pv_segment_t want;
    assert_int_equal(s_contrast(&g, grp.seed, &want), 1);
    assert_int_equal(r.n_segs, 1);
    s_same_seg(&r.seg, &want);
    assert_string_equal(r.failure_mode, "");
    pv_llm_stats_t st;
    pv_llm_judge_stats(J, &st);
    assert_int_equal(st.fallbacks, 1);
    assert_int_equal(st.fallback_by[PV_LLM_FALLBACK_INVALID], 1);
    assert_int_equal(st.refusals_by[PV_LLM_REFUSAL_TERMINAL], 3);
    assert_int_equal(st.answered, 0);
    /* without views a fallback proposes nothing */
    grp.views = NULL;
    s_one(J, &grp, &r);
    assert_int_equal(r.fallback, PV_LLM_FALLBACK_INVALID);
    assert_int_equal(r.n_segs, 0);
    pv_llm_judge_destroy(&J);
    fs_stop(&s);
}

static void test_retries_with_backoff(void **state)
{
    (void)state;
    fs_server_t s;
    fs_start(&s, "--script oracle --fail-first 2");
    pv_llm_opts_t o = s_opts(&s);
    o.retries = 2;
    pv_llm_judge_t *J;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    fx_group_t g;
    pv_llm_group_t grp = s_group(&g, 11, "t");
    pv_llm_result_t r;
    s_one(J, &grp, &r); /* 503, 503, then the answer */
    assert_int_equal(r.fallback, PV_LLM_FALLBACK_NONE);
    assert_int_equal(r.requests, 3);
    assert_int_equal(r.retries, 2);
    assert_true(r.elapsed_ms >= 20 + 40); /* the back-off: 20 ms, then 40 ms */
    pv_llm_stats_t st;
    pv_llm_judge_stats(J, &st);
    assert_int_equal(st.http_errors, 2);
    assert_int_equal(st.retries, 2);
    pv_llm_judge_destroy(&J);
    fs_stop(&s);
    /* one retry is not enough for two failures */
    fs_start(&s, "--script oracle --fail-first 2");
    o = s_opts(&s);
    o.retries = 1;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    s_one(J, &grp, &r);
    assert_int_equal(r.fallback, PV_LLM_FALLBACK_HTTP);
    assert_non_null(strstr(r.detail, "HTTP 503"));
    assert_int_equal(r.requests, 2);
    pv_llm_judge_destroy(&J);
    fs_stop(&s);
}

/* A port nothing listens on: bind one, note it, close it. */
static int s_dead_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void test_unreachable_endpoint(void **state)
{
    (void)state;
    fs_server_t dead = {.port = s_dead_port()};
    pv_llm_opts_t o = s_opts(&dead);
    o.retries = 2;
    pv_llm_judge_t *J;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    fx_group_t g;
    pv_llm_group_t grp = s_group(&g, 12, "t");
    pv_llm_result_t r;
    s_one(J, &grp, &r);
    assert_int_equal(r.fallback, PV_LLM_FALLBACK_HTTP);
    assert_non_null(strstr(r.detail, "network error"));
    assert_int_equal(r.requests, 3);
    assert_int_equal(r.n_segs, 1); /* the contrast fallback */
    pv_llm_judge_destroy(&J);
}

static void test_hung_endpoint_blocks_nobody(void **state)
{
    (void)state;
    fs_server_t s;
    fs_start(&s, "--script oracle");
    pv_llm_opts_t o = s_opts(&s);
    o.timeout_ms = 6000; /* the hung group's cost; the others finish well within it */
    o.max_in_flight = 2; /* the hung request holds one; the others share the other */
    pv_llm_judge_t *J;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    fx_group_t g[4];
    pv_llm_group_t grp[4] = {s_group(&g[0], 20, "fake-script: hang"),
                             s_group(&g[1], 21, "fake-script: oracle"),
                             s_group(&g[2], 22, "fake-script: search,oracle"),
                             s_group(&g[3], 23, "fake-script: malformed,oracle")};
    uint64_t t[4];
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(pv_llm_judge_submit(J, &grp[i], &t[i], NULL), PV_OK);
    pv_llm_result_t r[4];
    size_t order[4];
    uint64_t start = pv_mono_ms();
    s_run(J, t, 4, r, order);
    assert_int_equal(order[3], 0); /* the hung group ends last ... */
    assert_int_equal(r[0].fallback, PV_LLM_FALLBACK_TIMEOUT);
    assert_true(r[0].elapsed_ms >= 6000 - 50); /* ... after its timeout, not before */
    assert_true(pv_mono_ms() - start < 60000);
    assert_int_equal(r[0].n_segs, 1);
    for (size_t i = 1; i < 4; i++) {
        assert_int_equal(r[i].fallback, PV_LLM_FALLBACK_NONE);
        assert_true(r[i].elapsed_ms < r[0].elapsed_ms);
    }
    pv_llm_stats_t st;
    pv_llm_judge_stats(J, &st);
    assert_int_equal(st.fallback_by[PV_LLM_FALLBACK_TIMEOUT], 1);
    assert_int_equal(st.answered, 3);
    assert_true(st.latency_p99_ms >= 6000 - 50); /* the timed-out request is a sample */
    pv_llm_judge_destroy(&J);
    /* the group's deadline ends a conversation whose request would wait much longer */
    o.timeout_ms = 600000;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    grp[0].deadline_ms = pv_mono_ms() + 1000;
    pv_llm_result_t one;
    s_one(J, &grp[0], &one);
    assert_int_equal(one.fallback, PV_LLM_FALLBACK_TIMEOUT);
    /* the request's own timeout is cut to what is left of the deadline: curl's timeout ends
     * it, or on a slow machine the deadline's timer a moment before */
    assert_true(strstr(one.detail, "timed out") || strstr(one.detail, "deadline"));
    assert_true(one.elapsed_ms >= 1000 - 50 && one.elapsed_ms < 60000);
    pv_llm_judge_stats(J, &st);
    assert_int_equal(st.in_flight, 0); /* its transfer was aborted */
    pv_llm_judge_destroy(&J);
    fs_stop(&s);
}

static void test_untrusted_replies(void **state)
{
    (void)state;
    fs_server_t s;
    fs_start(&s, "--script oracle");
    pv_llm_opts_t o = s_opts(&s);
    o.retries = 1;
    o.backoff_ms = 1;
    pv_llm_judge_t *J;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    fx_group_t g[3];
    pv_llm_group_t grp[3] = {s_group(&g[0], 30, "fake-script: garbage"),
                             s_group(&g[1], 31, "fake-script: huge"),
                             s_group(&g[2], 32, "fake-script: wrong_types,oracle")};
    uint64_t t[3];
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(pv_llm_judge_submit(J, &grp[i], &t[i], NULL), PV_OK);
    pv_llm_result_t r[3];
    s_run(J, t, 3, r, NULL);
    assert_int_equal(r[0].fallback, PV_LLM_FALLBACK_HTTP);
    assert_non_null(strstr(r[0].detail, "not a chat completion"));
    assert_int_equal(r[0].requests, 2); /* retried once */
    assert_int_equal(r[1].fallback, PV_LLM_FALLBACK_HTTP);
    assert_non_null(strstr(r[1].detail, "size or count limit"));
    /* content 42 is no answer (a repair), tool_calls "x" no call, bad usage not counted */
    assert_int_equal(r[2].fallback, PV_LLM_FALLBACK_NONE);
    assert_int_equal(r[2].repairs, 1);
    assert_int_equal(r[2].tool_calls, 0);
    pv_llm_stats_t st;
    pv_llm_judge_stats(J, &st);
    assert_int_equal(st.refusals_by[PV_LLM_REFUSAL_NOT_JSON], 1);
    pv_llm_judge_destroy(&J);
    fs_stop(&s);
}

static void test_many_groups_nothing_lost(void **state)
{
    (void)state;
    fs_server_t s;
    fs_start(&s, "--script oracle");
    pv_llm_opts_t o = s_opts(&s);
    o.max_in_flight = 3;
    o.capacity = 12;
    o.max_repairs = 1;
    pv_llm_judge_t *J;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    static const char *const scripts[] = {
        "fake-script: oracle",           "fake-script: search,oracle",    "fake-script: malformed",
        "fake-script: slow:300",         "fake-script: segment,terminal", "fake-script: http500",
        "fake-script: malformed,oracle", "fake-script: bad_tool,oracle"};
    enum { N = 12 };
    fx_group_t g[N];
    pv_llm_group_t grp[N];
    uint64_t t[N];
    for (size_t i = 0; i < N; i++) {
        grp[i] = s_group(&g[i], 100 + i, scripts[i % 8]);
        assert_int_equal(pv_llm_judge_submit(J, &grp[i], &t[i], NULL), PV_OK);
    }
    pv_llm_result_t r[N];
    s_run(J, t, N, r, NULL);
    uint64_t requests = 0, answered = 0, fallbacks = 0, prompt = 0, completion = 0;
    for (size_t i = 0; i < N; i++) {
        requests += r[i].requests;
        prompt += r[i].prompt_tokens;
        completion += r[i].completion_tokens;
        answered += r[i].fallback == PV_LLM_FALLBACK_NONE;
        fallbacks += r[i].fallback != PV_LLM_FALLBACK_NONE;
        bool fails = i % 8 == 2 || i % 8 == 4 || i % 8 == 5;
        if (fails != (r[i].fallback != PV_LLM_FALLBACK_NONE))
            fail_msg("group %zu (%s): fallback %s (%s)", i, scripts[i % 8],
                     pv_llm_fallback_name(r[i].fallback), r[i].detail);
    }
    pv_llm_stats_t st;
    pv_llm_judge_stats(J, &st);
    assert_int_equal(st.groups, N);
    assert_int_equal(st.answered, answered);
    assert_int_equal(st.fallbacks, fallbacks);
    assert_int_equal(st.answered + st.fallbacks, N);
    assert_int_equal(st.requests, requests);
    assert_int_equal(st.prompt_tokens, prompt);
    assert_int_equal(st.completion_tokens, completion);
    assert_int_equal(st.active, 0);
    json_t *reqs = fs_requests(&s); /* every request the endpoint saw, counted once */
    assert_int_equal(json_array_size(reqs), requests);
    json_decref(reqs);
    pv_llm_judge_destroy(&J);
    fs_stop(&s);
}

static void test_submit_take_cancel(void **state)
{
    (void)state;
    fs_server_t s;
    fs_start(&s, "--script hang");
    pv_llm_opts_t o = s_opts(&s);
    o.capacity = 1;
    pv_llm_judge_t *J;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    fx_group_t g;
    pv_llm_group_t grp = s_group(&g, 40, "t");
    uint64_t t1, t2;
    assert_int_equal(pv_llm_judge_submit(J, &grp, &t1, NULL), PV_OK);
    assert_int_equal(pv_llm_judge_submit(J, &grp, &t2, NULL), PV_ERR_FULL);
    assert_int_equal(pv_llm_judge_poll(J, 10), PV_OK);
    pv_llm_result_t r;
    assert_int_equal(pv_llm_judge_take(J, t1, &r), PV_ERR_AGAIN);
    assert_true(pv_llm_judge_cancel(J, t1));
    assert_false(pv_llm_judge_cancel(J, t1));
    assert_int_equal(pv_llm_judge_take(J, t1, &r), PV_ERR_NOTFOUND);
    assert_int_equal(pv_llm_judge_take(J, 12345, &r), PV_ERR_NOTFOUND);
    /* a group with nothing to ask ends at once, without a request */
    fx_group_t one;
    pv_llm_group_t g1 = s_group(&one, 41, "t");
    one.trajs[1].n_steps = one.trajs[2].n_steps = 1;
    assert_int_equal(pv_llm_judge_submit(J, &g1, &t2, NULL), PV_OK);
    assert_int_equal(pv_llm_judge_take(J, t2, &r), PV_OK);
    assert_int_equal(r.fallback, PV_LLM_FALLBACK_NO_SEGMENT);
    assert_int_equal(r.requests, 0);
    /* a group without a failure is refused */
    g1 = s_group(&one, 42, "t");
    g1.trajs = one.trajs + 1;
    g1.n_trajs = 2;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_llm_judge_submit(J, &g1, &t2, &em), PV_ERR_INVAL);
    pv_llm_stats_t st;
    pv_llm_judge_stats(J, &st);
    assert_int_equal(st.cancelled, 1);
    assert_int_equal(st.groups, 2);
    assert_int_equal(st.fallback_by[PV_LLM_FALLBACK_NO_SEGMENT], 1);
    pv_llm_judge_destroy(&J);
    fs_stop(&s);
}

static void test_opts_from_config(void **state)
{
    (void)state;
    pv_config_t cfg;
    pv_config_defaults(&cfg);
    pv_llm_opts_t o;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_llm_opts_from_config(&cfg, 4, 4, &o, &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "judge.model"));
    assert_int_equal(pv_config_set(&cfg, "judge.model", "qwen", NULL), PV_OK);
    assert_int_equal(pv_config_set(&cfg, "judge.api_key_env", "PV_TEST_LLM_KEY", NULL), PV_OK);
    setenv("PV_TEST_LLM_KEY", "sk-secret-999", 1);
    assert_int_equal(pv_llm_opts_from_config(&cfg, 3, 5, &o, &em), PV_OK);
    assert_string_equal(o.api_key, "sk-secret-999");
    assert_int_equal(o.lim.max_turns, 3);
    assert_int_equal(o.capacity, 5);
    assert_int_equal(o.format, PV_LLM_FORMAT_JSON_SCHEMA);
    /* the config dump holds the variable's name, never the key */
    char yaml[1 << 16];
    size_t len;
    assert_int_equal(pv_config_to_yaml(&cfg, yaml, sizeof yaml, &len), PV_OK);
    assert_non_null(strstr(yaml, "PV_TEST_LLM_KEY"));
    assert_null(strstr(yaml, "sk-secret-999"));
    unsetenv("PV_TEST_LLM_KEY");
    assert_int_equal(pv_llm_opts_from_config(&cfg, 3, 5, &o, &em), PV_OK);
    assert_null(o.api_key);
    assert_int_equal(pv_config_set(&cfg, "judge.base_url", "ftp://x", NULL), PV_OK);
    assert_int_equal(pv_llm_opts_from_config(&cfg, 3, 5, &o, &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "judge.base_url"));
    assert_int_equal(pv_config_set(&cfg, "prover.judge", "llm", NULL), PV_OK);
}

/* TRIAGE's labels (label_turns): one conversation per group, no tools, the labels' schema;
 * the stand-in labels turn t of trajectory i with role (i + t) % 4, and its scripted faults
 * (a short list, an unknown name, a malformed reply) are counted and fall back per turn. */
static void test_labels_conversation(void **state)
{
    (void)state;
    fs_server_t s;
    fs_start(&s, "--script labels");
    pv_llm_opts_t o = s_opts(&s);
    o.max_repairs = 1;
    pv_llm_judge_t *J;
    assert_int_equal(pv_llm_judge_new(&o, &J, NULL), PV_OK);
    static const char *const tasks[] = {
        "put a clean mug in coffeemachine.",
        "put a clean mug in coffeemachine. fake-script: malformed,labels",
        "put a clean mug in coffeemachine. fake-script: labels_short",
        "put a clean mug in coffeemachine. fake-script: labels_unknown",
        "put a clean mug in coffeemachine. fake-script: malformed",
    };
    enum { N = 5, TURNS = 6 + 7 + 6 + 20 };
    fx_group_t g[N];
    pv_llm_group_t grp[N];
    uint8_t roles[N][TURNS];
    uint64_t tickets[N];
    pv_llm_result_t r[N];
    for (size_t k = 0; k < N; k++) {
        grp[k] = s_group(&g[k], 200 + k, tasks[k]);
        grp[k].views = NULL; /* labels need no proposer */
        grp[k].label_turns = true;
        grp[k].roles = roles[k];
        memset(roles[k], 42, TURNS);
        assert_int_equal(pv_llm_judge_submit(J, &grp[k], &tickets[k], NULL), PV_OK);
    }
    s_run(J, tickets, N, r, NULL);
    /* the rule, turn by turn; `skip` turns [a, b) expected unlabelled */
    for (size_t k = 0; k < N; k++) {
        size_t a = 0, b = 0;
        if (k == 2)
            b = 6; /* trajectory 0 one role short: none of its 6 turns */
        if (k == 3)
            b = 1; /* turn 0 of trajectory 0 "pivotal" */
        if (k == 4)
            b = TURNS; /* no valid answer: nothing */
        for (size_t i = 0, off = 0; i < FX_N; off += g[k].trajs[i].n_steps, i++)
            for (size_t t = 0; t < g[k].trajs[i].n_steps; t++) {
                size_t at = off + t;
                unsigned want = at >= a && at < b ? PV_LLM_ROLE_NONE : (unsigned)((i + t) % 4);
                if (roles[k][at] != want)
                    fail_msg("group %zu trajectory %zu turn %zu: role %u, want %u", k, i, t,
                             roles[k][at], want);
            }
        assert_int_equal(r[k].labels.labelled, TURNS - (b - a));
        assert_int_equal(r[k].labels.unlabelled, b - a);
        assert_int_equal(r[k].n_segs, 0);
    }
    assert_int_equal(r[0].fallback, PV_LLM_FALLBACK_NONE);
    assert_int_equal(r[0].requests, 1);
    assert_int_equal(r[1].fallback, PV_LLM_FALLBACK_NONE);
    assert_int_equal(r[1].repairs, 1);
    assert_int_equal(r[2].labels.bad_trajs, 1);
    assert_int_equal(r[3].labels.bad_roles, 1);
    assert_int_equal(r[4].fallback, PV_LLM_FALLBACK_INVALID);
    assert_int_equal(r[4].repairs, 1);
    pv_llm_stats_t st;
    pv_llm_judge_stats(J, &st);
    assert_int_equal(st.label_groups, N);
    assert_int_equal(st.answered, 4);
    assert_int_equal(st.fallback_by[PV_LLM_FALLBACK_INVALID], 1);
    assert_int_equal(st.turns_labelled, 4 * TURNS - 6 - 1);
    assert_int_equal(st.turns_unlabelled, 6 + 1 + TURNS);
    /* what went over the wire: no tools, the labels' schema, every trajectory in the prompt */
    json_t *reqs = fs_requests(&s);
    assert_int_equal(json_array_size(reqs), 1 + 2 + 1 + 1 + 2);
    for (size_t i = 0; i < json_array_size(reqs); i++) {
        json_t *body = json_object_get(json_array_get(reqs, i), "request");
        assert_null(json_object_get(body, "tools"));
        assert_null(json_object_get(body, "tool_choice"));
        json_t *js = json_object_get(json_object_get(body, "response_format"), "json_schema");
        assert_string_equal(json_string_value(json_object_get(js, "name")), "triage_roles");
        const char *user = json_string_value(
            json_object_get(json_array_get(json_object_get(body, "messages"), 1), "content"));
        assert_non_null(strstr(user, "trajectory 3 (failed, 20 turns):"));
    }
    json_decref(reqs);
    pv_llm_judge_destroy(&J);
    fs_stop(&s);
}

int main(void)
{
    if (!fs_have_python()) {
        printf("test_llm_judge: python3 not found, the stand-in endpoint cannot run: skipped\n");
        return 77;
    }
    signal(SIGPIPE, SIG_IGN);
#define S_TEST(f) cmocka_unit_test_setup_teardown(f, NULL, fs_teardown)
    const struct CMUnitTest tests[] = {
        S_TEST(test_opts_from_config),
        S_TEST(test_oracle_answer_and_request_shape),
        S_TEST(test_tool_calls_then_answer),
        S_TEST(test_tool_budget),
        S_TEST(test_repairs_then_accept),
        S_TEST(test_repairs_spent_fall_back),
        S_TEST(test_retries_with_backoff),
        S_TEST(test_unreachable_endpoint),
        S_TEST(test_hung_endpoint_blocks_nobody),
        S_TEST(test_untrusted_replies),
        S_TEST(test_many_groups_nothing_lost),
        S_TEST(test_submit_take_cancel),
        S_TEST(test_labels_conversation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
