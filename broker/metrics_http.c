/* metrics_http.c - libmicrohttpd endpoint in the caller's poll loop; see metrics_http.h. */
#include "broker/metrics_http.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "broker/metrics_text.h"

struct pv_metrics_http {
    struct MHD_Daemon *daemon;
    pv_metrics_render_fn render;
    void *ctx;
    int fd;
    uint16_t port;
};

static enum MHD_Result s_respond(struct MHD_Connection *conn, unsigned status, const char *type,
                                 char *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
    if (!r) {
        if (mode == MHD_RESPMEM_MUST_FREE)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    enum MHD_Result rc = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result s_handle(void *cls, struct MHD_Connection *conn, const char *url,
                                const char *method, const char *version, const char *upload,
                                size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)upload;
    pv_metrics_http_t *self = cls;
    static char not_found[] = "not found; try /metrics\n";
    static char not_allowed[] = "method not allowed\n";
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return s_respond(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", not_allowed,
                         sizeof not_allowed - 1, MHD_RESPMEM_PERSISTENT);
    if (*upload_size != 0) { /* a GET with a body: ignore it */
        *upload_size = 0;
        return MHD_YES;
    }
    if (*con_cls == NULL) { /* first call: headers only; answer on the next */
        *con_cls = self;
        return MHD_YES;
    }
    if (strcmp(url, "/metrics") != 0)
        return s_respond(conn, MHD_HTTP_NOT_FOUND, "text/plain", not_found, sizeof not_found - 1,
                         MHD_RESPMEM_PERSISTENT);
    char *body = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&body, &len);
    if (!mem)
        return MHD_NO;
    pv_err_t rc = self->render(self->ctx, mem);
    if (fclose(mem) != 0 || rc != PV_OK) {
        free(body);
        static char failed[] = "stats unavailable\n";
        return s_respond(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", failed,
                         sizeof failed - 1, MHD_RESPMEM_PERSISTENT);
    }
    return s_respond(conn, MHD_HTTP_OK, PV_METRICS_CONTENT_TYPE, body, len, MHD_RESPMEM_MUST_FREE);
}

pv_err_t pv_metrics_http_new(const char *bind_ip, uint16_t port, pv_metrics_render_fn render,
                             void *ctx, pv_metrics_http_t **out, pv_errmsg_t *em)
{
    *out = NULL;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    addr.sin_addr.s_addr = htonl(INADDR_ANY);
    if (bind_ip && *bind_ip && inet_pton(AF_INET, bind_ip, &addr.sin_addr) != 1)
        return pv_errf(em, PV_ERR_INVAL, "metrics: '%s' is not an IPv4 address", bind_ip);
    pv_metrics_http_t *self = calloc(1, sizeof *self);
    if (!self)
        return PV_ERR_NOMEM;
    self->render = render;
    self->ctx = ctx;
    self->daemon =
        MHD_start_daemon(MHD_USE_EPOLL, port, NULL, NULL, s_handle, self, MHD_OPTION_SOCK_ADDR,
                         (struct sockaddr *)&addr, MHD_OPTION_CONNECTION_LIMIT, (unsigned)16,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
    if (!self->daemon) {
        free(self);
        return pv_errf(em, PV_ERR_NET, "metrics: cannot listen on %s:%u (port taken?)",
                       bind_ip && *bind_ip ? bind_ip : "0.0.0.0", (unsigned)port);
    }
    const union MHD_DaemonInfo *fd = MHD_get_daemon_info(self->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    const union MHD_DaemonInfo *bp = MHD_get_daemon_info(self->daemon, MHD_DAEMON_INFO_BIND_PORT);
    if (!fd || !bp) {
        MHD_stop_daemon(self->daemon);
        free(self);
        return pv_errf(em, PV_ERR_NET, "metrics: libmicrohttpd without epoll support");
    }
    self->fd = fd->epoll_fd;
    self->port = bp->port;
    *out = self;
    return PV_OK;
}

void pv_metrics_http_destroy(pv_metrics_http_t **pself)
{
    if (!pself || !*pself)
        return;
    MHD_stop_daemon((*pself)->daemon);
    free(*pself);
    *pself = NULL;
}

int pv_metrics_http_fd(const pv_metrics_http_t *self)
{
    return self->fd;
}

uint16_t pv_metrics_http_port(const pv_metrics_http_t *self)
{
    return self->port;
}

void pv_metrics_http_run(pv_metrics_http_t *self)
{
    MHD_run(self->daemon);
}

int64_t pv_metrics_http_timeout_ms(pv_metrics_http_t *self)
{
    MHD_UNSIGNED_LONG_LONG t = 0;
    if (MHD_get_timeout(self->daemon, &t) != MHD_YES)
        return -1;
    return t > INT64_MAX ? INT64_MAX : (int64_t)t;
}
