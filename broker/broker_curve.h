/* broker_curve.h - CURVE for prover-broker: the keys of broker.curve_dir, the ZAP allowlist
 * built from them, and reloading that list while the broker runs.
 *
 * With a key folder (common/net/curve_keys.h: server.key, clients/NAME.pub) the broker's
 * ROUTER socket is a CURVE server and a ZAP handler (pv_net_allow) admits exactly the
 * public keys in clients/; a client without CURVE, with another server key or with a key
 * not listed never completes its handshake, so it cannot send the broker one message.
 * Reloading re-reads clients/ and swaps the list in one step: new handshakes see it,
 * connections already made stay (docs/broker.md, "Security").
 */
#ifndef PV_BROKER_CURVE_H
#define PV_BROKER_CURVE_H

#include <stddef.h>

#include "common/err.h"
#include "common/net/net.h"

typedef struct pv_broker_curve pv_broker_curve_t;

/* Read `dir` (server.key, clients/NAME.pub) and install the allowlist on `net` (before any
 * CURVE socket of `net` binds). Errors: those of pv_curve_server_load (PV_ERR_IO for a
 * missing folder or file, PV_ERR_PARSE for a malformed key, PV_ERR_CONFIG for a secret key
 * readable by others; `em` names the file), and of pv_net_allow. */
pv_err_t pv_broker_curve_new(pv_net_t *net, const char *dir, pv_broker_curve_t **out,
                             pv_errmsg_t *em);

/* Free; clears *self. NULL-safe. The allowlist lives on until pv_net_destroy. */
void pv_broker_curve_destroy(pv_broker_curve_t **self);

/* The server's secret key (Z85) for pv_sock_opts_t.curve_secret. */
const char *pv_broker_curve_secret(const pv_broker_curve_t *self);

/* Client keys admitted now. */
size_t pv_broker_curve_n_clients(const pv_broker_curve_t *self);

/* Re-read clients/ and replace the allowlist. On any error the previous list stays in
 * force and `em` names the file. A server.key that changed on disk is not taken (the
 * socket keeps the key it started with): *server_changed tells the caller to say a
 * restart is needed. Errors: as pv_broker_curve_new. */
pv_err_t pv_broker_curve_reload(pv_broker_curve_t *self, bool *server_changed, pv_errmsg_t *em);

#endif
