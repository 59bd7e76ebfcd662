/* metrics_http.h - the broker's HTTP endpoint for Prometheus (`GET /metrics`).
 *
 * A libmicrohttpd daemon in its external-loop epoll mode: no thread of its own. The broker
 * adds pv_metrics_http_fd() to its zmq_poll set and calls pv_metrics_http_run() when the
 * fd is readable or pv_metrics_http_timeout_ms() has passed, so the page is rendered in the
 * broker's own thread from a consistent snapshot, without locks.
 *
 * Routes: GET or HEAD /metrics -> 200, Content-Type PV_METRICS_CONTENT_TYPE, the body the
 * render callback writes; any other path -> 404; other methods -> 405. At most 16
 * connections, each closed after 10 s idle.
 */
#ifndef PV_METRICS_HTTP_H
#define PV_METRICS_HTTP_H

#include <stdint.h>
#include <stdio.h>

#include "common/err.h"

typedef struct pv_metrics_http pv_metrics_http_t;

/* Writes the /metrics body to `out`; returns PV_OK or an error (the client then gets a
 * 500). Called from pv_metrics_http_run() only. */
typedef pv_err_t (*pv_metrics_render_fn)(void *ctx, FILE *out);

/* Listen on `bind_ip` (IPv4 dotted quad; NULL or "" = all interfaces) port `port` (0 = a
 * free port chosen by the system; read it with pv_metrics_http_port()). `render` and `ctx`
 * are kept (not owned). Errors: PV_ERR_INVAL (bad address), PV_ERR_NET (cannot listen, e.g.
 * the port is taken; `em` says which). */
pv_err_t pv_metrics_http_new(const char *bind_ip, uint16_t port, pv_metrics_render_fn render,
                             void *ctx, pv_metrics_http_t **out, pv_errmsg_t *em);

/* Stop listening, close every connection and free the server; clears *self. NULL-safe. */
void pv_metrics_http_destroy(pv_metrics_http_t **self);

/* The file descriptor to poll for input (an epoll fd). */
int pv_metrics_http_fd(const pv_metrics_http_t *self);

/* The port actually bound. */
uint16_t pv_metrics_http_port(const pv_metrics_http_t *self);

/* Serve whatever is ready without blocking. */
void pv_metrics_http_run(pv_metrics_http_t *self);

/* Milliseconds until pv_metrics_http_run() must be called even without input, or -1 when
 * only input matters. */
int64_t pv_metrics_http_timeout_ms(pv_metrics_http_t *self);

#endif
