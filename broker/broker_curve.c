/* broker_curve.c - CURVE keys and the ZAP allowlist of prover-broker; see broker_curve.h. */
#include "broker/broker_curve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/net/curve_keys.h"

struct pv_broker_curve {
    pv_net_t *net;
    char dir[512];
    pv_curve_server_t keys;
};

/* Pointers to the Z85 client keys, as pv_net_allow takes them. */
static const char **s_key_list(const pv_curve_server_t *k)
{
    const char **list = calloc(k->n_clients ? k->n_clients : 1, sizeof *list);
    for (size_t i = 0; list && i < k->n_clients; i++)
        list[i] = k->client_keys[i];
    return list;
}

pv_err_t pv_broker_curve_new(pv_net_t *net, const char *dir, pv_broker_curve_t **out,
                             pv_errmsg_t *em)
{
    *out = NULL;
    pv_broker_curve_t *self = calloc(1, sizeof *self);
    if (!self)
        return PV_ERR_NOMEM;
    self->net = net;
    snprintf(self->dir, sizeof self->dir, "%s", dir);
    pv_err_t err = pv_curve_server_load(dir, &self->keys, em);
    const char **list = err ? NULL : s_key_list(&self->keys);
    if (!err && !list)
        err = PV_ERR_NOMEM;
    if (!err)
        err = pv_net_allow(net, list, self->keys.n_clients, em);
    free(list);
    if (err) {
        pv_broker_curve_destroy(&self);
        return err;
    }
    *out = self;
    return PV_OK;
}

void pv_broker_curve_destroy(pv_broker_curve_t **pself)
{
    if (!pself || !*pself)
        return;
    pv_curve_server_free(&(*pself)->keys);
    free(*pself);
    *pself = NULL;
}

const char *pv_broker_curve_secret(const pv_broker_curve_t *self)
{
    return self->keys.pair.secret_key;
}

size_t pv_broker_curve_n_clients(const pv_broker_curve_t *self)
{
    return self->keys.n_clients;
}

pv_err_t pv_broker_curve_reload(pv_broker_curve_t *self, bool *server_changed, pv_errmsg_t *em)
{
    *server_changed = false;
    pv_curve_server_t fresh;
    pv_err_t err = pv_curve_server_load(self->dir, &fresh, em);
    if (err)
        return err;
    const char **list = s_key_list(&fresh);
    err = list ? pv_net_allow_update(self->net, list, fresh.n_clients, em) : PV_ERR_NOMEM;
    free(list);
    if (err) {
        pv_curve_server_free(&fresh);
        return err;
    }
    *server_changed = strcmp(fresh.pair.secret_key, self->keys.pair.secret_key) != 0;
    memcpy(&fresh.pair, &self->keys.pair, sizeof fresh.pair); /* the socket's key stays */
    pv_curve_server_free(&self->keys);
    self->keys = fresh;
    return PV_OK;
}
