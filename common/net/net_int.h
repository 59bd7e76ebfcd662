/* net_int.h - pieces of pv_net shared by net.c and net_auth.c (not a public API). */
#ifndef PV_NET_INT_H
#define PV_NET_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <zmq.h>

#include "common/net/net.h"

struct pv_net {
    void *ctx;
    /* ZAP handler (pv_net_allow) */
    pthread_mutex_t lock; /* guards keys and n_keys (pv_net_allow_update) */
    uint8_t (*keys)[32];  /* admitted CURVE client public keys, binary */
    size_t n_keys;
    void *zap; /* REP socket on inproc://zeromq.zap.01, owned by the thread */
    pthread_t thread;
    int running;
};

/* Stop and join the ZAP thread if it runs (shuts the context down: every other socket
 * must be closed already). */
void pv_net_auth_stop(pv_net_t *self);

#endif
