/* bench_paths.c - the broker paths of prover-broker-bench: a client speaking the wire
 * protocol directly (what the broker itself costs), and the pv_bclient worker/producer
 * with their agent threads (what a role pays). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "broker/bench/bench_int.h"
#include "common/net/broker_client.h"
#include "common/wire/wire.h"

int64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int bench_done(bench_run_t *r, uint64_t seq, uint64_t *measured_from, int64_t *t_start)
{
    int64_t now = bench_now_ns();
    if (seq == 200) { /* warm-up over: start the clock */
        *measured_from = seq;
        *t_start = now;
    }
    if (*t_start && seq >= *measured_from) {
        pv_hist_record(r->hist, (uint64_t)((now - r->sent_ns[seq % BENCH_RING]) / 1000));
        r->n++;
        r->elapsed_s = (double)(now - *t_start) / 1e9;
        if (r->elapsed_s >= r->seconds)
            return 0;
    }
    return 1;
}

/* ---- raw protocol ----------------------------------------------------------------- */

typedef struct raw {
    void *s;
    pv_wire_buf_t buf;
    pv_wire_dec_t *dec;
    pv_arena_t *arena;
} raw_t;

static void s_raw_open(raw_t *x, void *zctx, const char *endpoint, const char *service,
                       uint32_t capacity)
{
    int zero = 0;
    x->s = zmq_socket(zctx, ZMQ_DEALER);
    zmq_setsockopt(x->s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_connect(x->s, endpoint);
    pv_wire_buf_init(&x->buf, 0);
    pv_wire_dec_new(NULL, &x->dec);
    pv_arena_new(0, 1u << 20, &x->arena);
    pv_wire_msg_t m = {.type = PV_MSG_REGISTER};
    m.registration = (pv_wire_registration_t){.service = service,
                                              .capacity = capacity,
                                              .role = "bench",
                                              .host = "localhost",
                                              .pid = (uint32_t)getpid(),
                                              .worker_id = service};
    pv_wire_encode(&m, NULL, &x->buf, NULL);
    zmq_send(x->s, x->buf.data, x->buf.len, 0);
}

static void s_raw_close(raw_t *x)
{
    pv_wire_msg_t m = {.type = PV_MSG_DISCONNECT};
    m.disconnect.reason = "bench done";
    pv_wire_encode(&m, NULL, &x->buf, NULL);
    int linger = 500;
    zmq_setsockopt(x->s, ZMQ_LINGER, &linger, sizeof linger);
    zmq_send(x->s, x->buf.data, x->buf.len, 0);
    zmq_close(x->s);
    pv_wire_buf_free(&x->buf);
    pv_wire_dec_destroy(&x->dec);
    pv_arena_destroy(&x->arena);
}

/* Receive and decode one message (valid until the next call); -1 when the context ends. */
static int s_raw_recv(raw_t *x, zmq_msg_t *frame, pv_wire_msg_t *m)
{
    zmq_msg_close(frame);
    zmq_msg_init(frame);
    if (zmq_msg_recv(frame, x->s, 0) < 0)
        return -1;
    pv_arena_reset(x->arena);
    return pv_wire_decode(x->dec, zmq_msg_data(frame), zmq_msg_size(frame), x->arena, m, NULL) ==
                   PV_OK
               ? 0
               : 1;
}

typedef struct raw_worker {
    void *zctx;
    const char *endpoint;
} raw_worker_t;

static void *s_raw_worker(void *arg)
{
    raw_worker_t *w = arg;
    raw_t x;
    s_raw_open(&x, w->zctx, w->endpoint, "verify", 1024);
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    pv_wire_msg_t m;
    int rc;
    while ((rc = s_raw_recv(&x, &frame, &m)) >= 0) {
        if (rc != 0 || m.type != PV_MSG_LEASE)
            continue;
        pv_wire_msg_t a = {.type = PV_MSG_ACK};
        a.ack.job_id = m.lease.job_id;
        a.ack.ok = true;
        pv_wire_encode(&a, NULL, &x.buf, NULL);
        zmq_send(x.s, x.buf.data, x.buf.len, 0);
    }
    zmq_msg_close(&frame);
    s_raw_close(&x);
    return NULL;
}

int bench_broker_raw(bench_run_t *r, const char *endpoint)
{
    void *zctx = zmq_ctx_new();
    raw_worker_t w = {.zctx = zctx, .endpoint = endpoint};
    pthread_t tw;
    pthread_create(&tw, NULL, s_raw_worker, &w);
    raw_t x;
    s_raw_open(&x, zctx, endpoint, "", 0);
    uint8_t *payload = calloc(1, r->bytes);
    uint64_t seq = 0, measured_from = 0;
    int64_t t_start = 0;
    int outstanding = 0, go = 1;
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    while (go || outstanding > 0) {
        while (go && outstanding < r->window) {
            pv_wire_msg_t m = {.type = PV_MSG_SUBMIT};
            m.submit = (pv_wire_submit_t){.service = "verify",
                                          .job_id = r->id_base + seq,
                                          .payload = {.ptr = payload, .len = r->bytes}};
            pv_wire_encode(&m, NULL, &x.buf, NULL);
            r->sent_ns[seq % BENCH_RING] = bench_now_ns();
            zmq_send(x.s, x.buf.data, x.buf.len, 0);
            seq++;
            outstanding++;
        }
        pv_wire_msg_t m;
        if (s_raw_recv(&x, &frame, &m) < 0)
            break;
        if (m.type == PV_MSG_SUBMIT_ACK && !m.submit_ack.accepted)
            r->refused++;
        if (m.type != PV_MSG_REPLY)
            continue;
        outstanding--;
        if (go)
            go = bench_done(r, m.reply.job_id - r->id_base, &measured_from, &t_start);
    }
    zmq_msg_close(&frame);
    free(payload);
    s_raw_close(&x);
    zmq_ctx_shutdown(zctx); /* ends the worker's receive */
    pthread_join(tw, NULL);
    zmq_ctx_term(zctx);
    return 0;
}

/* ---- pv_bclient ------------------------------------------------------------------- */

typedef struct client_worker {
    const char *endpoint;
    volatile int stop;
} client_worker_t;

static void *s_client_worker(void *arg)
{
    client_worker_t *cw = arg;
    pv_bclient_opts_t o = {.endpoint = cw->endpoint, .role = "bench"};
    pv_worker_t *w = NULL;
    if (pv_worker_new(&o, "verify", 1024, &w, NULL) != PV_OK)
        return NULL;
    while (!__atomic_load_n(&cw->stop, __ATOMIC_ACQUIRE)) {
        pv_lease_t l;
        if (pv_worker_recv(w, 50, &l) == PV_OK)
            pv_worker_ack(w, l.job_id, true, NULL, NULL, 0);
    }
    pv_worker_destroy(&w);
    return NULL;
}

int bench_broker_client(bench_run_t *r, const char *endpoint)
{
    client_worker_t cw = {.endpoint = endpoint};
    pthread_t tw;
    pthread_create(&tw, NULL, s_client_worker, &cw);
    pv_bclient_opts_t o = {.endpoint = endpoint, .role = "bench"};
    pv_producer_t *p = NULL;
    if (pv_producer_new(&o, (uint32_t)r->window, &p, NULL) != PV_OK)
        return -1;
    uint8_t *payload = calloc(1, r->bytes);
    uint64_t seq = 0, measured_from = 0;
    int64_t t_start = 0;
    int go = 1;
    while (go || pv_producer_pending(p) > 0) {
        while (go && pv_producer_pending(p) < (uint32_t)r->window) {
            r->sent_ns[seq % BENCH_RING] = bench_now_ns();
            if (pv_producer_submit(p, "verify", r->id_base + seq, false, payload, r->bytes, 1000) !=
                PV_OK)
                break;
            seq++;
        }
        pv_completion_t c;
        if (pv_producer_recv(p, 2000, &c) != PV_OK)
            break;
        if (go)
            go = bench_done(r, c.job_id - r->id_base, &measured_from, &t_start);
    }
    free(payload);
    pv_producer_destroy(&p);
    __atomic_store_n(&cw.stop, 1, __ATOMIC_RELEASE);
    pthread_join(tw, NULL);
    return 0;
}
