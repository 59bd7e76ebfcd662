/* test_net.c - the ZeroMQ wrapper over inproc, ipc (in a temp dir) and tcp loopback:
 * envelopes both ways between ROUTER and DEALER, timeouts, ROUTER_MANDATORY, malformed
 * framing, oversized and undecodable messages, a large message, CURVE with a ZAP allowlist
 * (replaced while running, failed handshakes counted), and closing with messages still
 * queued. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zmq.h>

#include "common/net/net.h"

typedef struct fx {
    pv_net_t *net;
    pv_wire_dec_t *dec;
    pv_arena_t *arena;
    pv_wire_buf_t buf, scratch;
    char dir[64];
} fx_t;

static int s_setup(void **state)
{
    fx_t *fx = calloc(1, sizeof *fx);
    assert_int_equal(pv_net_new(&fx->net, NULL), PV_OK);
    assert_int_equal(pv_wire_dec_new(NULL, &fx->dec), PV_OK);
    assert_int_equal(pv_arena_new(0, 0, &fx->arena), PV_OK);
    pv_wire_buf_init(&fx->buf, 0);
    pv_wire_buf_init(&fx->scratch, 0);
    snprintf(fx->dir, sizeof fx->dir, "/tmp/pv-net-XXXXXX");
    assert_non_null(mkdtemp(fx->dir));
    *state = fx;
    return 0;
}

static int s_teardown(void **state)
{
    fx_t *fx = *state;
    char path[128];
    snprintf(path, sizeof path, "%s/broker.sock", fx->dir);
    unlink(path);
    rmdir(fx->dir);
    pv_wire_dec_destroy(&fx->dec);
    pv_arena_destroy(&fx->arena);
    pv_wire_buf_free(&fx->buf);
    pv_wire_buf_free(&fx->scratch);
    pv_net_destroy(&fx->net);
    assert_null(fx->net);
    free(fx);
    return 0;
}

/* A ROUTER bound to `endpoint` and a DEALER "worker-1" connected to it. */
static void s_pair(fx_t *fx, const char *endpoint, pv_sock_t **router, pv_sock_t **dealer)
{
    pv_errmsg_t em;
    assert_int_equal(pv_sock_new(fx->net, PV_SOCK_ROUTER, NULL, router, &em), PV_OK);
    assert_int_equal(pv_sock_bind(*router, endpoint, &em), PV_OK);
    assert_true(strlen(pv_sock_endpoint(*router)) > 0);
    pv_sock_opts_t o = {.identity = "worker-1"};
    assert_int_equal(pv_sock_new(fx->net, PV_SOCK_DEALER, &o, dealer, &em), PV_OK);
    assert_int_equal(pv_sock_connect(*dealer, pv_sock_endpoint(*router), &em), PV_OK);
}

/* REGISTER up, LEASE with a payload down, ACK up: identities, bodies and bins intact. */
static void s_conversation(fx_t *fx, const char *endpoint)
{
    pv_sock_t *router = NULL, *dealer = NULL;
    s_pair(fx, endpoint, &router, &dealer);
    pv_errmsg_t em;
    pv_wire_msg_t m = {.type = PV_MSG_REGISTER}, got;
    m.registration = (pv_wire_registration_t){.service = "verify",
                                              .capacity = 4,
                                              .role = "verifier",
                                              .host = "node-7",
                                              .pid = 4242,
                                              .worker_id = "worker-1"};
    assert_int_equal(pv_sock_send_msg(dealer, NULL, &m, &fx->scratch, 2000, &em), PV_OK);
    pv_peer_t from = {0};
    pv_err_t err = pv_sock_recv_msg(router, &from, &fx->buf, fx->dec, fx->arena, &got, 2000, &em);
    if (err)
        fail_msg("%s: recv: %s", endpoint, em.text);
    assert_int_equal(got.type, PV_MSG_REGISTER);
    assert_string_equal(got.registration.host, "node-7");
    assert_int_equal(got.registration.pid, 4242);
    assert_int_equal(from.len, 8);
    assert_memory_equal(from.id, "worker-1", 8);

    uint8_t payload[1000];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 7);
    m = (pv_wire_msg_t){.type = PV_MSG_LEASE};
    m.lease = (pv_wire_lease_t){.job_id = 9,
                                .service = "verify",
                                .lease_ms = 30000,
                                .attempt = 1,
                                .payload = {payload, sizeof payload}};
    assert_int_equal(pv_sock_send_msg(router, &from, &m, &fx->scratch, 2000, &em), PV_OK);
    assert_int_equal(pv_sock_recv_msg(dealer, NULL, &fx->buf, fx->dec, fx->arena, &got, 2000, &em),
                     PV_OK);
    assert_int_equal(got.type, PV_MSG_LEASE);
    assert_true(got.lease.job_id == 9);
    assert_int_equal(got.lease.payload.len, sizeof payload);
    assert_memory_equal(got.lease.payload.ptr, payload, sizeof payload);

    m = (pv_wire_msg_t){.type = PV_MSG_ACK};
    m.ack = (pv_wire_ack_t){.job_id = 9, .ok = true, .error = ""};
    assert_int_equal(pv_sock_send_msg(dealer, NULL, &m, &fx->scratch, 2000, &em), PV_OK);
    assert_int_equal(pv_sock_recv_msg(router, &from, &fx->buf, fx->dec, fx->arena, &got, 2000, &em),
                     PV_OK);
    assert_true(got.type == PV_MSG_ACK && got.ack.ok && got.ack.job_id == 9);
    pv_arena_reset(fx->arena);
    pv_sock_destroy(&dealer);
    pv_sock_destroy(&router);
    assert_null(router);
}

static void test_inproc(void **state)
{
    s_conversation(*state, "inproc://test-broker");
}

static void test_ipc(void **state)
{
    fx_t *fx = *state;
    char ep[128];
    snprintf(ep, sizeof ep, "ipc://%s/broker.sock", fx->dir);
    s_conversation(fx, ep);
}

static void test_tcp_loopback(void **state)
{
    s_conversation(*state, "tcp://127.0.0.1:*");
}

static void test_timeouts_and_mandatory(void **state)
{
    fx_t *fx = *state;
    pv_sock_t *router = NULL, *dealer = NULL;
    s_pair(fx, "inproc://test-timeouts", &router, &dealer);
    pv_errmsg_t em;
    assert_int_equal(pv_sock_recv(router, NULL, &fx->buf, 0, &em), PV_ERR_AGAIN);
    assert_int_equal(pv_sock_recv(router, NULL, &fx->buf, 30, &em), PV_ERR_TIMEOUT);
    /* ROUTER_MANDATORY: a peer that is not connected is an error, not a silent drop */
    pv_peer_t ghost;
    assert_int_equal(pv_peer_set(&ghost, "nobody", 6), PV_OK);
    assert_int_equal(pv_sock_send(router, &ghost, "x", 1, 100, &em), PV_ERR_NOTFOUND);
    assert_int_equal(pv_sock_send(router, NULL, "x", 1, 100, &em), PV_ERR_INVAL);
    /* a DEALER with nobody to talk to times out instead of queueing (ZMQ_IMMEDIATE) */
    pv_sock_t *lonely = NULL;
    assert_int_equal(pv_sock_new(fx->net, PV_SOCK_DEALER, NULL, &lonely, &em), PV_OK);
    assert_int_equal(pv_sock_connect(lonely, "tcp://127.0.0.1:9", &em), PV_OK); /* discard */
    assert_int_equal(pv_sock_send(lonely, NULL, "x", 1, 50, &em), PV_ERR_TIMEOUT);
    assert_int_equal(pv_sock_send(lonely, NULL, "x", 1, 0, &em), PV_ERR_AGAIN);
    pv_sock_destroy(&lonely);
    /* bad options are refused */
    pv_sock_opts_t bad = {.linger_ms = -1};
    assert_int_equal(pv_sock_new(fx->net, PV_SOCK_DEALER, &bad, &lonely, &em), PV_ERR_INVAL);
    bad = (pv_sock_opts_t){.curve_secret = "too short"};
    assert_int_equal(pv_sock_new(fx->net, PV_SOCK_ROUTER, &bad, &lonely, &em), PV_ERR_INVAL);
    assert_null(lonely);
    assert_int_equal(pv_sock_bind(router, "tcp://not-an-address:x", &em), PV_ERR_NET);
    assert_non_null(strstr(em.text, "not-an-address"));
    pv_sock_destroy(&dealer);
    pv_sock_destroy(&router);
}

/* Malformed framing, oversized and undecodable messages: each is an error, consumed, and
 * the next good message arrives. */
static void test_bad_input_keeps_socket_usable(void **state)
{
    fx_t *fx = *state;
    pv_errmsg_t em;
    pv_sock_t *router = NULL;
    pv_sock_opts_t o = {.max_msg_bytes = 4096};
    assert_int_equal(pv_sock_new(fx->net, PV_SOCK_ROUTER, &o, &router, &em), PV_OK);
    assert_int_equal(pv_sock_bind(router, "inproc://test-bad", &em), PV_OK);
    void *raw = zmq_socket(pv_net_zmq(fx->net), ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(raw, ZMQ_LINGER, &linger, sizeof linger);
    assert_int_equal(zmq_connect(raw, "inproc://test-bad"), 0);
    pv_wire_msg_t hb = {.type = PV_MSG_HEARTBEAT}, got;
    hb.heartbeat = (pv_wire_heartbeat_t){.credits = 2, .in_flight = 1};
    assert_int_equal(pv_wire_encode(&hb, NULL, &fx->scratch, NULL), PV_OK);

    zmq_send(raw, "a", 1, ZMQ_SNDMORE); /* two frames: not one envelope */
    zmq_send(raw, "b", 1, 0);
    static char big[5000];
    zmq_send(raw, big, sizeof big, 0);  /* above max_msg_bytes */
    zmq_send(raw, "\xc1garbage", 8, 0); /* not MessagePack */
    zmq_send(raw, fx->scratch.data, fx->scratch.len, 0);
    pv_peer_t from;
    assert_int_equal(pv_sock_recv(router, &from, &fx->buf, 2000, &em), PV_ERR_PARSE);
    assert_int_equal(pv_sock_recv(router, &from, &fx->buf, 2000, &em), PV_ERR_LIMIT);
    assert_int_equal(pv_sock_recv_msg(router, &from, &fx->buf, fx->dec, fx->arena, &got, 2000, &em),
                     PV_ERR_PARSE);
    assert_int_equal(pv_sock_recv_msg(router, &from, &fx->buf, fx->dec, fx->arena, &got, 2000, &em),
                     PV_OK);
    assert_int_equal(got.heartbeat.credits, 2);
    /* the reply goes back to the raw peer by its identity */
    assert_int_equal(pv_sock_send_msg(router, &from, &hb, &fx->scratch, 1000, &em), PV_OK);
    char back[64];
    assert_int_equal(zmq_recv(raw, back, sizeof back, 0), (int)fx->scratch.len);
    zmq_close(raw);
    pv_sock_destroy(&router);
}

/* A 48 MiB message over tcp arrives intact (the receive buffer grows to it). */
static void test_large_message_tcp(void **state)
{
    fx_t *fx = *state;
    pv_sock_t *router = NULL, *dealer = NULL;
    s_pair(fx, "tcp://127.0.0.1:*", &router, &dealer);
    size_t n = 48u << 20;
    uint8_t *data = malloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (uint8_t)(i ^ (i >> 11));
    pv_errmsg_t em;
    assert_int_equal(pv_sock_send(dealer, NULL, data, n, 5000, &em), PV_OK);
    pv_peer_t from;
    assert_int_equal(pv_sock_recv(router, &from, &fx->buf, 10000, &em), PV_OK);
    assert_int_equal(fx->buf.len, n);
    assert_memory_equal(fx->buf.data, data, n);
    free(data);
    pv_wire_buf_free(&fx->buf);
    pv_sock_destroy(&dealer);
    pv_sock_destroy(&router);
}

/* A DEALER of `net` with `o` connects to `server` and says "hello"; true when the server got it
 * within wait_ms. The socket is closed before returning, so teardown cannot hang. */
static bool s_hello(fx_t *fx, pv_net_t *net, pv_sock_t *server, const pv_sock_opts_t *o,
                    int wait_ms, pv_err_t *sent, pv_err_t *got)
{
    pv_errmsg_t em;
    pv_sock_t *c = NULL;
    assert_int_equal(pv_sock_new(net, PV_SOCK_DEALER, o, &c, &em), PV_OK);
    pv_sock_connect(c, pv_sock_endpoint(server), &em);
    *sent = pv_sock_send(c, NULL, "hello", 5, wait_ms, &em);
    *got = pv_sock_recv(server, NULL, &fx->buf, wait_ms, &em);
    bool hello = *got == PV_OK && fx->buf.len == 5 && memcmp(fx->buf.data, "hello", 5) == 0;
    pv_sock_destroy(&c);
    return hello;
}

/* CURVE + ZAP: the admitted client talks; a stranger's key, a wrong server key and a
 * plain-text client never reach the server. */
static void test_curve_allowlist(void **state)
{
    fx_t *fx = *state;
    char spub[41], ssec[41], apub[41], asec[41], xpub[41], xsec[41];
    if (pv_net_curve_keypair(spub, ssec) == PV_ERR_UNSUPPORTED)
        skip();
    assert_int_equal(pv_net_curve_keypair(apub, asec), PV_OK);
    assert_int_equal(pv_net_curve_keypair(xpub, xsec), PV_OK);
    pv_errmsg_t em;
    const char *allowed[] = {apub};
    const char *bad_key[] = {"short"};
    assert_int_equal(pv_net_allow(fx->net, bad_key, 1, &em), PV_ERR_INVAL);
    assert_int_equal(pv_net_allow(fx->net, allowed, 1, &em), PV_OK);
    assert_int_equal(pv_net_allow(fx->net, allowed, 1, &em), PV_ERR_STATE);
    pv_sock_t *server = NULL;
    pv_sock_opts_t so = {.curve_secret = ssec};
    assert_int_equal(pv_sock_new(fx->net, PV_SOCK_ROUTER, &so, &server, &em), PV_OK);
    assert_int_equal(pv_sock_bind(server, "tcp://127.0.0.1:*", &em), PV_OK);

    struct {
        pv_sock_opts_t o;
        bool admitted;
    } clients[] = {
        {{.identity = "good", .curve_server_key = spub, .curve_public = apub, .curve_secret = asec},
         true},
        {{.identity = "stranger",
          .curve_server_key = spub,
          .curve_public = xpub,
          .curve_secret = xsec},
         false},
        {{.identity = "wrong-server",
          .curve_server_key = xpub,
          .curve_public = apub,
          .curve_secret = asec},
         false},
        {{.identity = "plain"}, false},
    };
    pv_err_t sent[4], got[4];
    bool hello[4] = {false};
    for (size_t i = 0; i < 4; i++)
        hello[i] = s_hello(fx, fx->net, server, &clients[i].o, clients[i].admitted ? 3000 : 300,
                           &sent[i], &got[i]);
    pv_sock_destroy(&server);
    for (size_t i = 0; i < 4; i++) {
        if (clients[i].admitted) {
            assert_int_equal(sent[i], PV_OK);
            assert_true(hello[i]);
        } else {
            assert_int_equal(got[i], PV_ERR_TIMEOUT); /* nothing reached the server */
        }
    }
}

/* Wait up to 2 s until the watch has counted at least `auth` refusals and `failed`
 * failures; returns the counts. */
static pv_handshakes_t s_watch_until(pv_handshake_watch_t *w, pv_handshakes_t *acc, uint64_t auth,
                                     uint64_t failed)
{
    for (int i = 0; i < 100 && (acc->auth_refused < auth || acc->failed < failed); i++) {
        zmq_pollitem_t item = {.socket = pv_handshake_watch_zmq(w), .events = ZMQ_POLLIN};
        if (zmq_poll(&item, 1, 20) > 0)
            pv_handshake_watch_read(w, acc);
    }
    return *acc;
}

/* The allowlist can be replaced while the server runs (a key added is admitted, a key
 * removed is refused on its next connection), and the handshake monitor counts refused
 * keys apart from protocol failures (no CURVE, wrong server key). */
static void test_curve_reload_and_watch(void **state)
{
    fx_t *fx = *state;
    char spub[41], ssec[41], apub[41], asec[41], xpub[41], xsec[41];
    if (pv_net_curve_keypair(spub, ssec) == PV_ERR_UNSUPPORTED)
        skip();
    assert_int_equal(pv_net_curve_keypair(apub, asec), PV_OK);
    assert_int_equal(pv_net_curve_keypair(xpub, xsec), PV_OK);
    pv_errmsg_t em;
    pv_net_t *net = NULL; /* its own context: the fixture's has an allowlist already */
    assert_int_equal(pv_net_new(&net, &em), PV_OK);
    const char *only_a[] = {apub}, *both[] = {apub, xpub}, *bad[] = {"short"};
    assert_int_equal(pv_net_allow_update(net, only_a, 1, &em), PV_ERR_STATE);
    assert_int_equal(pv_net_allow(net, only_a, 1, &em), PV_OK);
    pv_sock_t *server = NULL;
    pv_sock_opts_t so = {.curve_secret = ssec};
    assert_int_equal(pv_sock_new(net, PV_SOCK_ROUTER, &so, &server, &em), PV_OK);
    pv_handshake_watch_t *w = NULL;
    assert_int_equal(pv_handshake_watch_new(pv_net_zmq(net), pv_sock_zmq(server), &w, &em), PV_OK);
    assert_int_equal(pv_sock_bind(server, "tcp://127.0.0.1:*", &em), PV_OK);
    pv_sock_opts_t a = {.curve_server_key = spub, .curve_public = apub, .curve_secret = asec};
    pv_sock_opts_t x = {.curve_server_key = spub, .curve_public = xpub, .curve_secret = xsec};
    pv_sock_opts_t wrong = {.curve_server_key = xpub, .curve_public = apub, .curve_secret = asec};
    pv_sock_opts_t plain = {0};
    pv_err_t sent, got;
    pv_handshakes_t hs = {0};
    bool x_before = s_hello(fx, net, server, &x, 200, &sent, &got);
    pv_handshakes_t after_x = s_watch_until(w, &hs, 1, 0);
    bool wrong_ok = s_hello(fx, net, server, &wrong, 200, &sent, &got);
    bool plain_ok = s_hello(fx, net, server, &plain, 200, &sent, &got);
    pv_handshakes_t after_bad = s_watch_until(w, &hs, 1, 2);
    pv_err_t bad_rc = pv_net_allow_update(net, bad, 1, &em);
    pv_err_t up_rc = pv_net_allow_update(net, both, 2, &em);
    bool x_after = s_hello(fx, net, server, &x, 3000, &sent, &got);
    pv_err_t none_rc = pv_net_allow_update(net, NULL, 0, &em);
    bool a_removed = s_hello(fx, net, server, &a, 200, &sent, &got);
    pv_handshakes_t last = s_watch_until(w, &hs, after_bad.auth_refused + 1, 0);
    pv_handshake_watch_destroy(&w);
    assert_null(w);
    pv_sock_destroy(&server);
    pv_net_destroy(&net);
    assert_false(x_before);
    assert_true(after_x.auth_refused >= 1);
    assert_int_equal(after_x.failed, 0); /* a refused key is not a protocol failure */
    assert_false(wrong_ok);
    assert_false(plain_ok);
    assert_true(after_bad.failed >= 2);
    assert_int_equal(bad_rc, PV_ERR_INVAL);
    assert_int_equal(up_rc, PV_OK);
    assert_true(x_after);
    assert_int_equal(none_rc, PV_OK);
    assert_false(a_removed);
    assert_true(last.auth_refused > after_bad.auth_refused);
}

/* Closing with messages queued to a peer that stopped reading returns promptly. */
static void test_close_never_hangs(void **state)
{
    fx_t *fx = *state;
    pv_net_t *net = NULL;
    pv_errmsg_t em;
    assert_int_equal(pv_net_new(&net, &em), PV_OK);
    pv_sock_t *router = NULL, *dealer = NULL;
    assert_int_equal(pv_sock_new(net, PV_SOCK_ROUTER, NULL, &router, &em), PV_OK);
    assert_int_equal(pv_sock_bind(router, "tcp://127.0.0.1:*", &em), PV_OK);
    pv_sock_opts_t o = {.sndhwm = 10};
    assert_int_equal(pv_sock_new(net, PV_SOCK_DEALER, &o, &dealer, &em), PV_OK);
    assert_int_equal(pv_sock_connect(dealer, pv_sock_endpoint(router), &em), PV_OK);
    int queued = 0;
    static char chunk[65536];
    while (queued < 100000 &&
           pv_sock_send(dealer, NULL, chunk, sizeof chunk, queued ? 100 : 3000, &em) == PV_OK)
        queued++;
    assert_true(queued > 0);
    assert_true(queued < 100000); /* back-pressure reached: the send timed out */
    pv_sock_destroy(&dealer);
    pv_sock_destroy(&router);
    pv_net_destroy(&net); /* would hang forever with an infinite linger */
    assert_null(net);
    (void)fx;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inproc),
        cmocka_unit_test(test_ipc),
        cmocka_unit_test(test_tcp_loopback),
        cmocka_unit_test(test_timeouts_and_mandatory),
        cmocka_unit_test(test_bad_input_keeps_socket_usable),
        cmocka_unit_test(test_large_message_tcp),
        cmocka_unit_test(test_curve_allowlist),
        cmocka_unit_test(test_curve_reload_and_watch),
        cmocka_unit_test(test_close_never_hangs),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
