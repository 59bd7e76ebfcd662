/* stats_fetch.c - the STATS_REQUEST round trip; see stats_fetch.h. */
#include "common/net/stats_fetch.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <zmq.h>

struct pv_stats_link {
    pv_net_t *net;
    const char *endpoint;
    bool curve;
    pv_curve_client_t keys;
    pv_err_t keys_rc; /* their load (PV_OK without curve_dir) */
    char keys_why[PV_ERRMSG_MAX];
    pv_wire_dec_t *dec;
    pv_arena_t *arena;
    pv_wire_buf_t buf;
    bool reset; /* the next exchange resets the arena first (a reply is in it) */
};

pv_err_t pv_stats_link_new(pv_net_t *net, const char *endpoint, const char *curve_dir,
                           const char *curve_name, const char *role, pv_stats_link_t **out)
{
    pv_stats_link_t *l = calloc(1, sizeof *l);
    if (!l)
        return PV_ERR_NOMEM;
    l->net = net;
    l->endpoint = endpoint;
    pv_wire_buf_init(&l->buf, 0);
    if (pv_wire_dec_new(NULL, &l->dec) != PV_OK || pv_arena_new(0, 16u << 20, &l->arena) != PV_OK) {
        pv_stats_link_destroy(&l);
        return PV_ERR_NOMEM;
    }
    if (curve_dir && curve_dir[0]) { /* once: every exchange reuses them */
        pv_errmsg_t ke = {{0}};
        l->curve = true;
        l->keys_rc = pv_curve_client_load(curve_dir, curve_name, role, &l->keys, &ke);
        snprintf(l->keys_why, sizeof l->keys_why, "%s", ke.text);
    }
    *out = l;
    return PV_OK;
}

void pv_stats_link_destroy(pv_stats_link_t **self)
{
    if (!self || !*self)
        return;
    pv_wire_dec_destroy(&(*self)->dec);
    pv_arena_destroy(&(*self)->arena);
    pv_wire_buf_free(&(*self)->buf);
    free(*self);
    *self = NULL;
}

pv_arena_t *pv_stats_link_arena(pv_stats_link_t *self)
{
    if (self->reset) {
        pv_arena_reset(self->arena);
        self->reset = false;
    }
    return self->arena;
}

pv_err_t pv_stats_link_exchange(pv_stats_link_t *self, const pv_wire_run_status_t *status,
                                int timeout_ms, pv_wire_stats_reply_t *out, pv_errmsg_t *em)
{
    if (self->keys_rc != PV_OK)
        return pv_errf(em, self->keys_rc, "%s", self->keys_why);
    if (!status) /* nothing of ours in the arena: start afresh */
        pv_arena_reset(self->arena);
    self->reset = true;
    return pv_broker_stats_exchange(self->net, self->endpoint, self->curve ? &self->keys : NULL,
                                    timeout_ms, status, self->dec, self->arena, &self->buf, out,
                                    em);
}

pv_err_t pv_stats_link_exchange_retry(pv_stats_link_t *self, int attempts, int timeout_ms,
                                      pv_stats_status_fn status, void *ctx,
                                      pv_wire_stats_reply_t *out, int *tried, pv_errmsg_t *em)
{
    pv_err_t rc = PV_OK;
    int a = 0;
    char why[PV_ERRMSG_MAX] = "";
    do {
        pv_wire_run_status_t st;
        if (status) {
            if ((rc = status(ctx, a, a ? why : NULL, pv_stats_link_arena(self), &st)) != PV_OK) {
                pv_errf(em, rc, "building the run status: %s", pv_strerror(rc));
                break; /* nothing sent: not an attempt */
            }
        }
        em->text[0] = '\0';
        rc = pv_stats_link_exchange(self, status ? &st : NULL, timeout_ms, out, em);
        a++;
        snprintf(why, sizeof why, "%s", em->text[0] ? em->text : pv_strerror(rc));
        if (timeout_ms <= INT_MAX / 2)
            timeout_ms *= 2;
    } while (rc != PV_OK && a < attempts);
    if (tried)
        *tried = a;
    return rc;
}

pv_err_t pv_broker_stats_fetch(pv_net_t *net, const char *endpoint, const pv_curve_client_t *curve,
                               int timeout_ms, pv_wire_dec_t *dec, pv_arena_t *arena,
                               pv_wire_buf_t *scratch, pv_wire_stats_reply_t *out, pv_errmsg_t *em)
{
    return pv_broker_stats_exchange(net, endpoint, curve, timeout_ms, NULL, dec, arena, scratch,
                                    out, em);
}

pv_err_t pv_broker_stats_exchange(pv_net_t *net, const char *endpoint,
                                  const pv_curve_client_t *curve, int timeout_ms,
                                  const pv_wire_run_status_t *status, pv_wire_dec_t *dec,
                                  pv_arena_t *arena, pv_wire_buf_t *scratch,
                                  pv_wire_stats_reply_t *out, pv_errmsg_t *em)
{
    /* the request is sent at once and waits for the connection (queue_unconnected) */
    pv_sock_opts_t so = {.queue_unconnected = true};
    if (curve) {
        so.curve_server_key = curve->server_key;
        so.curve_public = curve->pair.public_key;
        so.curve_secret = curve->pair.secret_key;
    }
    pv_sock_t *ps = NULL;
    pv_err_t rc = pv_sock_new(net, PV_SOCK_DEALER, &so, &ps, em);
    if (rc != PV_OK)
        return rc;
    void *s = pv_sock_zmq(ps);
    zmq_msg_t reply;
    zmq_msg_init(&reply);
    pv_wire_msg_t m = {.type = PV_MSG_STATS_REQUEST};
    if (status) {
        m.type = PV_MSG_RUN_STATUS;
        m.run_status = *status;
    }
    if ((rc = pv_sock_connect(ps, endpoint, em)) != PV_OK ||
        (rc = pv_wire_encode(&m, NULL, scratch, em)) != PV_OK)
        goto out;
    if (zmq_send(s, scratch->data, scratch->len, 0) < 0) {
        rc = pv_zmq_fail(em, "stats request");
        goto out;
    }
    zmq_pollitem_t item = {.socket = s, .events = ZMQ_POLLIN};
    if (zmq_poll(&item, 1, timeout_ms) <= 0 || zmq_msg_recv(&reply, s, ZMQ_DONTWAIT) < 0) {
        rc = pv_errf(em, PV_ERR_TIMEOUT,
                     "no answer from %s within %d ms (is prover-broker running there%s?)", endpoint,
                     timeout_ms,
                     curve ? ", and is this client's key in its curve_dir/clients"
                           : ", and without broker.curve_dir");
        goto out;
    }
    rc = pv_wire_decode(dec, zmq_msg_data(&reply), zmq_msg_size(&reply), arena, &m, em);
    if (rc == PV_OK && m.type != PV_MSG_STATS_REPLY)
        rc = pv_errf(em, PV_ERR_PARSE, "%s answered with %s, not STATS_REPLY", endpoint,
                     pv_wire_type_name(m.type) ? pv_wire_type_name(m.type) : "?");
    if (rc == PV_OK)
        *out = m.stats_reply;
out:
    zmq_msg_close(&reply);
    pv_sock_destroy(&ps);
    return rc;
}
