/* stats_client.h - ask a running broker for its statistics (STATS_REQUEST/STATS_REPLY).
 *
 * Used by prover-stats and by the tests. Each fetch uses a fresh DEALER socket on the
 * client's context, so a broker that restarted between two fetches is simply reached again.
 * No registration is needed: the broker answers STATS_REQUEST from anyone.
 */
#ifndef PV_STATS_CLIENT_H
#define PV_STATS_CLIENT_H

#include "broker/broker_stats.h"
#include "common/err.h"
#include "common/net/curve_keys.h"

typedef struct pv_stats_client pv_stats_client_t;

/* A client for the broker at `endpoint`; with `curve` (copied; NULL = plain text) every
 * fetch connects as that CURVE client (pv_curve_client_load). Errors: PV_ERR_NET,
 * PV_ERR_NOMEM. */
pv_err_t pv_stats_client_new(const char *endpoint, const pv_curve_client_t *curve,
                             pv_stats_client_t **out, pv_errmsg_t *em);

/* Free the client; clears *self. NULL-safe. */
void pv_stats_client_destroy(pv_stats_client_t **self);

/* Fetch one snapshot (free it with pv_broker_stats_free). Errors: PV_ERR_TIMEOUT (no
 * answer within timeout_ms: `em` names the endpoint), PV_ERR_PARSE and the decoder's
 * errors (an answer that is not a STATS_REPLY), PV_ERR_NET, PV_ERR_NOMEM. */
pv_err_t pv_stats_client_fetch(pv_stats_client_t *self, int timeout_ms, pv_broker_stats_t *out,
                               pv_errmsg_t *em);

#endif
