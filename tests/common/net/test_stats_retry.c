/* test_stats_retry.c - pv_stats_link_exchange_retry (common/net/stats_fetch.h), the learner's
 * last fetch of the broker's books: against a fake broker (a ROUTER on tcp loopback in a
 * thread) that leaves the first requests unanswered. A dropped first request is asked again
 * with a status built anew and the reply taken is the one to the last attempt; a broker that
 * never answers costs exactly `attempts` tries with doubling timeouts, named in the error; a
 * builder's error sends nothing; a plain STATS_REQUEST goes out without a builder. Judged by
 * what was sent and answered, never by time: a slow machine only takes more attempts. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zmq.h>

#include "common/net/net.h"
#include "common/net/stats_fetch.h"

#define FAKE_MAX 64

/* The fake broker: answers a request with a STATS_REPLY whose uptime_ms is the request's
 * iteration (RUN_STATUS) or 7 (STATS_REQUEST). It leaves unanswered the statuses of the first
 * `drop` attempts (iteration below 100 + drop, whenever they arrive: an attempt's request may
 * never arrive, its socket closed before it connected) and the first `drop` STATS_REQUESTs. */
typedef struct fake {
    pv_sock_t *router; /* bound by the test, then used by the thread only */
    int drop;
    atomic_int seen;
    int type[FAKE_MAX];
    uint64_t iteration[FAKE_MAX];
    atomic_bool stop;
} fake_t;

static void *s_fake_main(void *arg)
{
    fake_t *f = arg;
    void *z = pv_sock_zmq(f->router);
    pv_wire_dec_t *dec = NULL;
    pv_arena_t *arena = NULL;
    pv_wire_buf_t buf;
    pv_wire_buf_init(&buf, 0);
    if (pv_wire_dec_new(NULL, &dec) != PV_OK || pv_arena_new(0, 0, &arena) != PV_OK)
        abort();
    while (!atomic_load(&f->stop)) {
        zmq_pollitem_t it = {.socket = z, .events = ZMQ_POLLIN};
        if (zmq_poll(&it, 1, 20) <= 0)
            continue;
        zmq_msg_t id, body;
        zmq_msg_init(&id);
        zmq_msg_init(&body);
        if (zmq_msg_recv(&id, z, 0) >= 0 && zmq_msg_more(&id) && zmq_msg_recv(&body, z, 0) >= 0) {
            pv_wire_msg_t m;
            pv_errmsg_t em;
            pv_arena_reset(arena);
            int k = atomic_load(&f->seen);
            if (pv_wire_decode(dec, zmq_msg_data(&body), zmq_msg_size(&body), arena, &m, &em) ==
                    PV_OK &&
                k < FAKE_MAX) {
                f->type[k] = (int)m.type;
                f->iteration[k] = m.type == PV_MSG_RUN_STATUS ? m.run_status.iteration : 0;
                atomic_store(&f->seen, k + 1);
                bool dropped = m.type == PV_MSG_RUN_STATUS
                                   ? m.run_status.iteration < 100 + (uint64_t)f->drop
                                   : k < f->drop;
                if (!dropped) {
                    pv_wire_msg_t r = {.type = PV_MSG_STATS_REPLY};
                    r.stats_reply.uptime_ms = m.type == PV_MSG_RUN_STATUS ? f->iteration[k] : 7;
                    if (pv_wire_encode(&r, NULL, &buf, &em) == PV_OK) {
                        zmq_send(z, zmq_msg_data(&id), zmq_msg_size(&id), ZMQ_SNDMORE);
                        zmq_send(z, buf.data, buf.len, 0);
                    }
                }
            }
        }
        zmq_msg_close(&id);
        zmq_msg_close(&body);
    }
    pv_wire_buf_free(&buf);
    pv_arena_destroy(&arena);
    pv_wire_dec_destroy(&dec);
    return NULL;
}

typedef struct fx {
    pv_net_t *net;
    fake_t fake;
    pthread_t thread;
    pv_stats_link_t *link;
} fx_t;

static void s_start(fx_t *fx, int drop)
{
    pv_errmsg_t em;
    assert_int_equal(pv_net_new(&fx->net, NULL), PV_OK);
    fx->fake.drop = drop;
    assert_int_equal(pv_sock_new(fx->net, PV_SOCK_ROUTER, NULL, &fx->fake.router, &em), PV_OK);
    assert_int_equal(pv_sock_bind(fx->fake.router, "tcp://127.0.0.1:*", &em), PV_OK);
    assert_int_equal(pv_stats_link_new(fx->net, pv_sock_endpoint(fx->fake.router), NULL, NULL,
                                       "learner", &fx->link),
                     PV_OK);
    assert_int_equal(pthread_create(&fx->thread, NULL, s_fake_main, &fx->fake), 0);
}

static void s_stop(fx_t *fx)
{
    atomic_store(&fx->fake.stop, true);
    pthread_join(fx->thread, NULL);
    pv_stats_link_destroy(&fx->link);
    pv_sock_destroy(&fx->fake.router);
    pv_net_destroy(&fx->net);
}

/* The builder: iteration 100 + attempt; remembers what it was told of the last failure. */
typedef struct builder {
    int calls;
    bool first_had_error;
    bool later_named_it; /* every later call got the previous attempt's "no answer" */
    int fail_at;         /* attempt whose build fails with PV_ERR_NOMEM; -1 = none */
} builder_t;

static pv_err_t s_build(void *ctx, int attempt, const char *last_error, pv_arena_t *arena,
                        pv_wire_run_status_t *out)
{
    (void)arena;
    builder_t *b = ctx;
    assert_int_equal(attempt, b->calls);
    b->calls++;
    if (attempt == 0)
        b->first_had_error = last_error != NULL;
    else if (!last_error || !strstr(last_error, "no answer from"))
        b->later_named_it = false;
    if (attempt == b->fail_at)
        return PV_ERR_NOMEM;
    *out = (pv_wire_run_status_t){.source = "learner", .iteration = 100 + (uint64_t)attempt};
    return PV_OK;
}

/* The first request goes unanswered: asked again, and the reply is the last attempt's. */
static void test_asks_again(void **state)
{
    (void)state;
    fx_t fx = {0};
    s_start(&fx, 1);
    builder_t b = {.later_named_it = true, .fail_at = -1};
    pv_wire_stats_reply_t st;
    pv_errmsg_t em = {{0}};
    int tried = 0;
    /* 0.3, 0.6, 1.2, 2.4, 4.8 s: a slow machine may need more than the second */
    assert_int_equal(pv_stats_link_exchange_retry(fx.link, 5, 300, s_build, &b, &st, &tried, &em),
                     PV_OK);
    assert_true(tried >= 2);
    assert_int_equal(b.calls, tried);
    assert_false(b.first_had_error);
    assert_true(b.later_named_it);
    assert_int_equal(st.uptime_ms, 100 + (uint64_t)(tried - 1)); /* the last status's answer */
    int seen = atomic_load(&fx.fake.seen);
    assert_true(seen >= 1 && seen <= tried);
    for (int k = 0; k < seen; k++) {
        assert_int_equal(fx.fake.type[k], PV_MSG_RUN_STATUS);
        assert_true(fx.fake.iteration[k] >= 100 && fx.fake.iteration[k] < 100 + (uint64_t)tried);
    }
    s_stop(&fx);
}

/* A broker that never answers: exactly `attempts` tries, the timeout doubling each time. */
static void test_gives_up(void **state)
{
    (void)state;
    fx_t fx = {0};
    s_start(&fx, 1 << 20);
    builder_t b = {.later_named_it = true, .fail_at = -1};
    pv_wire_stats_reply_t st;
    pv_errmsg_t em = {{0}};
    int tried = 0;
    assert_int_equal(pv_stats_link_exchange_retry(fx.link, 3, 50, s_build, &b, &st, &tried, &em),
                     PV_ERR_TIMEOUT);
    assert_int_equal(tried, 3);
    assert_int_equal(b.calls, 3);
    assert_true(b.later_named_it);
    assert_non_null(strstr(em.text, "no answer from tcp://127.0.0.1:"));
    assert_non_null(strstr(em.text, "within 200 ms")); /* 50, 100, 200 */
    s_stop(&fx);
}

/* A status that cannot be built ends the exchange with its error, nothing sent; attempts
 * below 1 still try once. */
static void test_builder_error_and_at_least_once(void **state)
{
    (void)state;
    fx_t fx = {0};
    s_start(&fx, 1 << 20);
    builder_t b = {.later_named_it = true, .fail_at = 1};
    pv_wire_stats_reply_t st;
    pv_errmsg_t em = {{0}};
    int tried = -1;
    assert_int_equal(pv_stats_link_exchange_retry(fx.link, 3, 50, s_build, &b, &st, &tried, &em),
                     PV_ERR_NOMEM);
    assert_int_equal(tried, 1); /* the first went out; the second was never built */
    assert_int_equal(b.calls, 2);
    assert_non_null(strstr(em.text, "building the run status")); /* not the timeout before */
    b = (builder_t){.later_named_it = true, .fail_at = -1};
    assert_int_equal(pv_stats_link_exchange_retry(fx.link, 0, 50, s_build, &b, &st, &tried, &em),
                     PV_ERR_TIMEOUT);
    assert_int_equal(tried, 1);
    assert_int_equal(b.calls, 1);
    s_stop(&fx);
}

/* Without a builder: STATS_REQUEST, answered. */
static void test_stats_request(void **state)
{
    (void)state;
    fx_t fx = {0};
    s_start(&fx, 0);
    pv_wire_stats_reply_t st;
    pv_errmsg_t em = {{0}};
    int tried = 0;
    assert_int_equal(pv_stats_link_exchange_retry(fx.link, 4, 1000, NULL, NULL, &st, &tried, &em),
                     PV_OK);
    assert_true(tried >= 1);
    assert_int_equal(st.uptime_ms, 7);
    assert_true(atomic_load(&fx.fake.seen) >= 1); /* orders the read of type[0] */
    assert_int_equal(fx.fake.type[0], PV_MSG_STATS_REQUEST);
    s_stop(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_asks_again),
        cmocka_unit_test(test_gives_up),
        cmocka_unit_test(test_builder_error_and_at_least_once),
        cmocka_unit_test(test_stats_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
