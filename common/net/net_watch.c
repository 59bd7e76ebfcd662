/* net_watch.c - count a socket's failed handshakes with ZeroMQ's socket monitor; see net.h.
 *
 * libzmq 4.x monitor events are two frames: [u16 event][u32 value] (host byte order), then
 * the endpoint text (zmq_socket_monitor(3)). */
#include "common/net/net_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define S_EVENTS                                                                                   \
    (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |                  \
     ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)

struct pv_handshake_watch {
    void *zsock; /* the watched socket */
    void *pair;  /* receives the events */
};

pv_err_t pv_handshake_watch_new(void *zctx, void *zsock, pv_handshake_watch_t **out,
                                pv_errmsg_t *em)
{
    *out = NULL;
    pv_handshake_watch_t *self = calloc(1, sizeof *self);
    if (!self)
        return PV_ERR_NOMEM;
    /* unique even when a new socket reuses a closed one's address before libzmq has
     * released the old monitor's endpoint */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    char ep[96];
    snprintf(ep, sizeof ep, "inproc://pv-handshake-watch-%p-%lld.%09ld", zsock,
             (long long)ts.tv_sec, ts.tv_nsec);
    int linger = 0;
    self->zsock = zsock;
    if (zmq_socket_monitor(zsock, ep, S_EVENTS) != 0) {
        free(self);
        return pv_errf(em, PV_ERR_NET, "socket monitor: %s", zmq_strerror(zmq_errno()));
    }
    self->pair = zmq_socket(zctx, ZMQ_PAIR);
    if (!self->pair || zmq_setsockopt(self->pair, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_connect(self->pair, ep) != 0) {
        pv_err_t err = pv_errf(em, PV_ERR_NET, "socket monitor: %s", zmq_strerror(zmq_errno()));
        pv_handshake_watch_destroy(&self);
        return err;
    }
    *out = self;
    return PV_OK;
}

void pv_handshake_watch_destroy(pv_handshake_watch_t **pself)
{
    if (!pself || !*pself)
        return;
    pv_handshake_watch_t *self = *pself;
    zmq_socket_monitor(self->zsock, NULL, 0);
    if (self->pair)
        zmq_close(self->pair);
    free(self);
    *pself = NULL;
}

void *pv_handshake_watch_zmq(pv_handshake_watch_t *self)
{
    return self->pair;
}

int pv_handshake_watch_read(pv_handshake_watch_t *self, pv_handshakes_t *acc)
{
    int n = 0;
    for (;;) {
        zmq_msg_t head, rest;
        zmq_msg_init(&head);
        if (zmq_msg_recv(&head, self->pair, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&head);
            return n;
        }
        uint16_t event = 0;
        if (zmq_msg_size(&head) >= sizeof event)
            memcpy(&event, zmq_msg_data(&head), sizeof event);
        bool more = zmq_msg_more(&head);
        zmq_msg_close(&head);
        while (more) { /* the endpoint frame */
            zmq_msg_init(&rest);
            more = zmq_msg_recv(&rest, self->pair, ZMQ_DONTWAIT) >= 0 && zmq_msg_more(&rest);
            zmq_msg_close(&rest);
        }
        if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
            acc->auth_refused++;
        else if (event & S_EVENTS)
            acc->failed++;
        n++;
    }
}
