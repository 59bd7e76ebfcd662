/* bench_proxy.c - the baseline: a plain zmq_proxy (ROUTER front, DEALER back) between a
 * DEALER client and a DEALER echo worker over TCP loopback, the "shared queue" of the
 * ZeroMQ Guide ch. 2. Same payloads, same window as the broker runs. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "broker/bench/bench_int.h"

typedef struct proxy_ctx {
    void *zctx;       /* the proxy's own context (own I/O thread), as the broker has its process */
    void *client_ctx; /* client and echo worker share one, as in the broker runs */
    char front[128], back[128];
    volatile int ready;
} proxy_ctx_t;

static void *s_proxy(void *arg)
{
    proxy_ctx_t *p = arg;
    void *front = zmq_socket(p->zctx, ZMQ_ROUTER), *back = zmq_socket(p->zctx, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(front, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(back, ZMQ_LINGER, &zero, sizeof zero);
    zmq_bind(front, "tcp://127.0.0.1:*");
    zmq_bind(back, "tcp://127.0.0.1:*");
    size_t len = sizeof p->front;
    zmq_getsockopt(front, ZMQ_LAST_ENDPOINT, p->front, &len);
    len = sizeof p->back;
    zmq_getsockopt(back, ZMQ_LAST_ENDPOINT, p->back, &len);
    __atomic_store_n(&p->ready, 1, __ATOMIC_RELEASE);
    zmq_proxy(front, back, NULL); /* returns when the context terminates */
    zmq_close(front);
    zmq_close(back);
    return NULL;
}

/* Echo worker: [client id][payload] -> [client id][first 8 bytes]. */
static void *s_echo(void *arg)
{
    proxy_ctx_t *p = arg;
    void *s = zmq_socket(p->client_ctx, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_connect(s, p->back);
    for (;;) {
        zmq_msg_t id, body;
        zmq_msg_init(&id);
        zmq_msg_init(&body);
        if (zmq_msg_recv(&id, s, 0) < 0 || zmq_msg_recv(&body, s, 0) < 0) {
            zmq_msg_close(&id);
            zmq_msg_close(&body);
            break;
        }
        zmq_msg_send(&id, s, ZMQ_SNDMORE);
        zmq_send(s, zmq_msg_data(&body), 8, 0);
        zmq_msg_close(&body);
    }
    zmq_close(s);
    return NULL;
}

int bench_proxy(bench_run_t *r)
{
    proxy_ctx_t p = {.zctx = zmq_ctx_new(), .client_ctx = zmq_ctx_new()};
    pthread_t tp, tw;
    pthread_create(&tp, NULL, s_proxy, &p);
    while (!__atomic_load_n(&p.ready, __ATOMIC_ACQUIRE))
        usleep(1000);
    pthread_create(&tw, NULL, s_echo, &p);
    void *c = zmq_socket(p.client_ctx, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(c, ZMQ_LINGER, &zero, sizeof zero);
    zmq_connect(c, p.front);
    uint8_t *payload = calloc(1, r->bytes);
    uint64_t seq = 0, measured_from = 0;
    int64_t t_start = 0;
    int outstanding = 0, go = 1;
    while (go || outstanding > 0) {
        while (go && outstanding < r->window) {
            memcpy(payload, &seq, 8);
            r->sent_ns[seq % BENCH_RING] = bench_now_ns();
            zmq_send(c, payload, r->bytes, 0);
            seq++;
            outstanding++;
        }
        uint64_t back;
        if (zmq_recv(c, &back, sizeof back, 0) != 8)
            break;
        outstanding--;
        if (go)
            go = bench_done(r, back, &measured_from, &t_start);
    }
    free(payload);
    zmq_close(c);
    zmq_ctx_shutdown(p.client_ctx); /* unblocks the echo worker */
    pthread_join(tw, NULL);
    zmq_ctx_shutdown(p.zctx); /* and the proxy */
    pthread_join(tp, NULL);
    zmq_ctx_term(p.client_ctx);
    zmq_ctx_term(p.zctx);
    return 0;
}
