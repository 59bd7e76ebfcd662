/* stats_fetch.h - one STATS_REQUEST (or RUN_STATUS) / STATS_REPLY round trip with a broker:
 * what prover-stats
 * shows and what the learner records of the run's health (run.out_dir/metrics.jsonl kind
 * "broker", the summary's conservation line).
 *
 * No registration is needed: the broker answers STATS_REQUEST from anyone (with CURVE, from
 * any admitted key). Each fetch uses a fresh DEALER socket in the caller's context, so a
 * broker that restarted between two fetches is simply reached again.
 */
#ifndef PV_STATS_FETCH_H
#define PV_STATS_FETCH_H

#include "common/arena.h"
#include "common/err.h"
#include "common/net/curve_keys.h"
#include "common/net/net.h"
#include "common/wire/wire.h"

/* Ask the broker at `endpoint` (as CURVE client `curve`, NULL = plain text) and decode its
 * STATS_REPLY into *out: strings and arrays in `arena`, decoded with `dec`. `scratch` holds
 * the request. Errors: PV_ERR_TIMEOUT (no answer within timeout_ms: `em` names the endpoint
 * and what to check), PV_ERR_PARSE (an answer that is not a STATS_REPLY) and the decoder's
 * errors, PV_ERR_NET. */
pv_err_t pv_broker_stats_fetch(pv_net_t *net, const char *endpoint, const pv_curve_client_t *curve,
                               int timeout_ms, pv_wire_dec_t *dec, pv_arena_t *arena,
                               pv_wire_buf_t *scratch, pv_wire_stats_reply_t *out, pv_errmsg_t *em);

/* The same round trip, telling the broker how the run goes first: with `status` not NULL the
 * request is RUN_STATUS (broker/run_status.h: the broker keeps it as its source's latest
 * status and answers with STATS_REPLY, which then carries it); NULL = STATS_REQUEST. Errors
 * as pv_broker_stats_fetch, and the encoder's for a status that breaks the schema. */
pv_err_t pv_broker_stats_exchange(pv_net_t *net, const char *endpoint,
                                  const pv_curve_client_t *curve, int timeout_ms,
                                  const pv_wire_run_status_t *status, pv_wire_dec_t *dec,
                                  pv_arena_t *arena, pv_wire_buf_t *scratch,
                                  pv_wire_stats_reply_t *out, pv_errmsg_t *em);

/* A role's link to its broker's statistics (the learner's health lines, the judge's
 * RUN_STATUS): the CURVE keys loaded once at start-up (a load that failed is reported by
 * every exchange instead), a decoder, an arena for the reply and a request buffer. */
typedef struct pv_stats_link pv_stats_link_t;

/* A link to `endpoint` in `net` (both borrowed: keep them alive) as CURVE client `role`
 * (keys from curve_dir, name curve_name or role, as pv_curve_client_load chooses; NULL or ""
 * curve_dir = plain text). Errors: PV_ERR_NOMEM. */
pv_err_t pv_stats_link_new(pv_net_t *net, const char *endpoint, const char *curve_dir,
                           const char *curve_name, const char *role, pv_stats_link_t **out);
void pv_stats_link_destroy(pv_stats_link_t **self);

/* The link's arena: what a status to send is built in. Reset by every exchange, so build
 * the status after the previous reply is used up. */
pv_arena_t *pv_stats_link_arena(pv_stats_link_t *self);

/* pv_broker_stats_exchange over the link; *out lives in the link until the next exchange
 * (the status may be built in the link's arena: it is encoded before the reply is read).
 * Errors: the keys' load error (named in `em`), and pv_broker_stats_exchange's. */
pv_err_t pv_stats_link_exchange(pv_stats_link_t *self, const pv_wire_run_status_t *status,
                                int timeout_ms, pv_wire_stats_reply_t *out, pv_errmsg_t *em);

/* Builds the status of attempt `attempt` (0, 1, ...) of pv_stats_link_exchange_retry into
 * *out, from `arena` (the link's, reset before each attempt). `last_error` is NULL on the
 * first attempt, then what the previous attempt failed with (the caller may log it). An
 * error ends the exchange at once, nothing sent. */
typedef pv_err_t (*pv_stats_status_fn)(void *ctx, int attempt, const char *last_error,
                                       pv_arena_t *arena, pv_wire_run_status_t *out);

/* pv_stats_link_exchange up to `attempts` times (at least once) until one is answered, each
 * on a fresh socket with twice the previous timeout (timeout_ms, 2 x, 4 x: from 2000, the
 * learner's 2, 4 and 8 s), so a broker slowed by a loaded machine still gets its say and a
 * reply is taken once. `status` NULL = STATS_REQUEST; otherwise it builds each attempt's
 * RUN_STATUS (the status may change between attempts). *tried (may be NULL) = attempts
 * made. Returns PV_OK with *out as pv_stats_link_exchange leaves it, the builder's error
 * ("building the run status: ..."), or the last attempt's error, named in `em` (required,
 * not NULL). */
pv_err_t pv_stats_link_exchange_retry(pv_stats_link_t *self, int attempts, int timeout_ms,
                                      pv_stats_status_fn status, void *ctx,
                                      pv_wire_stats_reply_t *out, int *tried, pv_errmsg_t *em);

#endif
