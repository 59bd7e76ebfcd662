/* weight_sync.c - see weight_sync.h. */
#include "common/clock.h"
#include "common/weight_sync.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define S_MAGIC     0x54575650u /* "PVWT" */
#define S_FLAG_STOP 1u
#define S_HDR       32u

/* Message header, little-endian on every platform we run (x86-64/aarch64 clusters). */
typedef struct s_hdr {
    uint32_t magic;
    uint32_t flags;
    uint64_t version;
    uint64_t n_params;
    uint32_t header_bytes; /* S_HDR: the payload starts there */
    uint32_t reserved;
} s_hdr_t;

typedef struct s_buf {
    unsigned char *bytes; /* S_HDR + 4 * n_params */
    int refs;             /* pending sends that read it */
} s_buf_t;

struct pv_wsync_pub {
    MPI_Comm comm;
    int root, size;
    size_t n_params;
    size_t msg_bytes;
    s_buf_t *bufs; /* pool: at most size + 1 buffers (one per lagging peer, the latest, a
                    * free one) */
    int n_bufs;
    int latest;        /* buffer of the newest version (pinned: one extra ref), -1 none */
    uint64_t latest_v; /* its version */
    MPI_Request *req;  /* (size) pending send per peer, MPI_REQUEST_NULL when idle */
    int *req_buf;      /* (size) buffer index the pending send reads */
    uint64_t *sent_v;  /* (size) version last sent to each peer (0 = none) */
    s_hdr_t stop_hdr;
    pv_wsync_pub_stats_t stats;
};

struct pv_wsync_sub {
    MPI_Comm comm;
    int root;
    size_t n_params;
    size_t msg_bytes;
    unsigned char *back; /* receive buffer */
    MPI_Request req;
    uint64_t rejected;
};

pv_err_t pv_wsync_pub_new(MPI_Comm comm, int root, size_t n_params, pv_wsync_pub_t **out)
{
    int rank, size;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return PV_ERR_MPI;
    if (rank != root || n_params > ((size_t)INT_MAX - S_HDR) / 4)
        return PV_ERR_INVAL;
    pv_wsync_pub_t *self = calloc(1, sizeof *self);
    if (!self)
        return PV_ERR_NOMEM;
    self->comm = comm;
    self->root = root;
    self->size = size;
    self->n_params = n_params;
    self->msg_bytes = S_HDR + 4 * n_params;
    self->bufs = calloc((size_t)size + 1, sizeof *self->bufs);
    self->req = malloc((size_t)size * sizeof *self->req);
    self->req_buf = calloc((size_t)size, sizeof *self->req_buf);
    self->sent_v = calloc((size_t)size, sizeof *self->sent_v);
    self->latest = -1;
    if (!self->bufs || !self->req || !self->req_buf || !self->sent_v) {
        pv_wsync_pub_destroy(&self);
        return PV_ERR_NOMEM;
    }
    for (int i = 0; i < size; i++)
        self->req[i] = MPI_REQUEST_NULL;
    *out = self;
    return PV_OK;
}

void pv_wsync_pub_destroy(pv_wsync_pub_t **pub)
{
    if (!pub || !*pub)
        return;
    pv_wsync_pub_t *self = *pub;
    for (int i = 0; i < self->n_bufs; i++) {
        if (self->bufs[i].refs == (i == self->latest ? 1 : 0))
            free(self->bufs[i].bytes);
        /* a buffer still read by a send to a dead rank is leaked on purpose: freeing it
         * under a pending MPI_Isend would be undefined behaviour */
    }
    free(self->bufs);
    free(self->req);
    free(self->req_buf);
    free(self->sent_v);
    free(self);
    *pub = NULL;
}

/* Start sending buffer b (version v) to peer p. */
static pv_err_t s_send(pv_wsync_pub_t *self, int p, int b, uint64_t v)
{
    if (MPI_Isend(self->bufs[b].bytes, (int)self->msg_bytes, MPI_BYTE, p, PV_WSYNC_TAG, self->comm,
                  &self->req[p]) != MPI_SUCCESS)
        return PV_ERR_MPI;
    self->req_buf[p] = b;
    self->bufs[b].refs++;
    self->sent_v[p] = v;
    self->stats.sends++;
    self->stats.bytes_sent += self->msg_bytes;
    return PV_OK;
}

/* Complete finished sends and release their buffers; a peer whose send completed while a
 * newer version was published gets that version now (catch-up), so nobody waits for the
 * next publish to receive what it skipped. */
static pv_err_t s_reap(pv_wsync_pub_t *self)
{
    self->stats.lagging = 0;
    for (int p = 0; p < self->size; p++) {
        if (self->req[p] != MPI_REQUEST_NULL) {
            int done = 0;
            if (MPI_Test(&self->req[p], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return PV_ERR_MPI;
            if (!done) {
                self->stats.lagging++;
                continue;
            }
            self->bufs[self->req_buf[p]].refs--;
        }
        if (p != self->root && self->latest >= 0 && self->sent_v[p] < self->latest_v) {
            pv_err_t rc = s_send(self, p, self->latest, self->latest_v);
            if (rc != PV_OK)
                return rc;
            self->stats.catchups++;
            self->stats.lagging++;
        }
    }
    return PV_OK;
}

pv_err_t pv_wsync_publish(pv_wsync_pub_t *self, uint64_t version, const float *params)
{
    pv_err_t rc = s_reap(self);
    if (rc != PV_OK)
        return rc;
    int b = -1;
    for (int i = 0; i < self->n_bufs && b < 0; i++)
        if (self->bufs[i].refs == 0)
            b = i;
    if (b < 0) {
        /* cannot run out: each pinned buffer has a lagging peer or is the latest */
        if (self->n_bufs > self->size)
            return PV_ERR_INTERNAL;
        b = self->n_bufs;
        self->bufs[b].bytes = malloc(self->msg_bytes);
        if (!self->bufs[b].bytes)
            return PV_ERR_NOMEM;
        self->n_bufs++;
    }
    s_buf_t *buf = &self->bufs[b];
    s_hdr_t h = {S_MAGIC, 0, version, self->n_params, S_HDR, 0};
    memcpy(buf->bytes, &h, sizeof h);
    memcpy(buf->bytes + S_HDR, params, 4 * self->n_params);
    if (self->latest >= 0)
        self->bufs[self->latest].refs--; /* unpin the previous latest */
    self->latest = b;
    self->latest_v = version;
    buf->refs++;
    self->stats.published++;
    for (int p = 0; p < self->size; p++) {
        if (p == self->root)
            continue;
        if (self->req[p] != MPI_REQUEST_NULL) {
            self->stats.skipped++; /* it gets the latest when its send completes */
            continue;
        }
        if ((rc = s_send(self, p, b, version)) != PV_OK)
            return rc;
    }
    return PV_OK;
}

pv_err_t pv_wsync_stop(pv_wsync_pub_t *self, int timeout_ms, int *n_unreached)
{
    pv_err_t rc = s_reap(self);
    if (rc != PV_OK)
        return rc;
    self->stop_hdr = (s_hdr_t){S_MAGIC, S_FLAG_STOP, 0, 0, 0, 0};
    /* a peer with a pending weight send gets the stop after it: MPI keeps the order */
    MPI_Request *stop_req = malloc((size_t)self->size * sizeof *stop_req);
    if (!stop_req)
        return PV_ERR_NOMEM;
    for (int p = 0; p < self->size; p++) {
        stop_req[p] = MPI_REQUEST_NULL;
        if (p != self->root && MPI_Isend(&self->stop_hdr, (int)sizeof self->stop_hdr, MPI_BYTE, p,
                                         PV_WSYNC_TAG, self->comm, &stop_req[p]) != MPI_SUCCESS) {
            free(stop_req);
            return PV_ERR_MPI;
        }
    }
    int waited = 0, pending = 0;
    for (;;) {
        pending = 0;
        for (int p = 0; p < self->size; p++) {
            int done = 1;
            if (stop_req[p] != MPI_REQUEST_NULL)
                MPI_Test(&stop_req[p], &done, MPI_STATUS_IGNORE);
            pending += !done;
        }
        if (pending == 0 || (timeout_ms >= 0 && waited >= timeout_ms))
            break;
        pv_sleep_ms(1);
        waited++;
    }
    /* requests to dead ranks stay pending; the stop header is in self, which outlives
     * them only until destroy, so keep it alive by leaking the request array on purpose */
    if (pending == 0)
        free(stop_req);
    if (n_unreached)
        *n_unreached = pending;
    return PV_OK;
}

uint32_t pv_wsync_progress(pv_wsync_pub_t *self)
{
    s_reap(self);
    return self->stats.lagging;
}

pv_wsync_pub_stats_t pv_wsync_pub_stats(pv_wsync_pub_t *self)
{
    s_reap(self);
    return self->stats;
}

static pv_err_t s_post(pv_wsync_sub_t *self)
{
    return MPI_Irecv(self->back, (int)self->msg_bytes, MPI_BYTE, self->root, PV_WSYNC_TAG,
                     self->comm, &self->req) == MPI_SUCCESS
               ? PV_OK
               : PV_ERR_MPI;
}

pv_err_t pv_wsync_sub_new(MPI_Comm comm, int root, size_t n_params, pv_wsync_sub_t **out)
{
    int rank;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return PV_ERR_MPI;
    if (rank == root || n_params > ((size_t)INT_MAX - S_HDR) / 4)
        return PV_ERR_INVAL;
    pv_wsync_sub_t *self = calloc(1, sizeof *self);
    if (!self)
        return PV_ERR_NOMEM;
    self->comm = comm;
    self->root = root;
    self->n_params = n_params;
    self->msg_bytes = S_HDR + 4 * n_params;
    self->back = malloc(self->msg_bytes);
    if (!self->back) {
        free(self);
        return PV_ERR_NOMEM;
    }
    pv_err_t rc = s_post(self);
    if (rc != PV_OK) {
        free(self->back);
        free(self);
        return rc;
    }
    *out = self;
    return PV_OK;
}

void pv_wsync_sub_destroy(pv_wsync_sub_t **sub)
{
    if (!sub || !*sub)
        return;
    pv_wsync_sub_t *self = *sub;
    if (self->req != MPI_REQUEST_NULL) {
        MPI_Cancel(&self->req);
        /* not MPI_Wait: a receive matched by a sender that died mid-transfer (the learner
         * killed while it sent a version) would block it forever */
        int done = 0;
        for (uint64_t t0 = pv_mono_ms(); !done && pv_mono_ms() - t0 < 2000;) {
            if (MPI_Test(&self->req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                break;
            if (!done)
                pv_sleep_ms(1);
        }
        if (!done) {
            free(self); /* self->back stays: the receive may still write into it */
            *sub = NULL;
            return;
        }
    }
    free(self->back);
    free(self);
    *sub = NULL;
}

pv_err_t pv_wsync_poll(pv_wsync_sub_t *self, float *params, uint64_t *version, bool *stop)
{
    pv_err_t result = PV_OK;
    while (self->req != MPI_REQUEST_NULL) {
        int done = 0, count = 0;
        MPI_Status st;
        if (MPI_Test(&self->req, &done, &st) != MPI_SUCCESS)
            return PV_ERR_MPI;
        if (!done)
            break;
        MPI_Get_count(&st, MPI_BYTE, &count);
        s_hdr_t h;
        if ((size_t)count < sizeof h) {
            self->rejected++;
            result = PV_ERR_DATA;
        } else {
            memcpy(&h, self->back, sizeof h);
            if (h.magic != S_MAGIC) {
                self->rejected++;
                result = PV_ERR_DATA;
            } else if (h.flags & S_FLAG_STOP) {
                *stop = true;
                return result; /* nothing follows a stop: do not repost */
            } else if (h.n_params != self->n_params || (size_t)count != self->msg_bytes ||
                       h.header_bytes != S_HDR) {
                self->rejected++;
                result = PV_ERR_DATA;
            } else {
                memcpy(params, self->back + S_HDR, 4 * self->n_params);
                *version = h.version;
            }
        }
        pv_err_t rc = s_post(self);
        if (rc != PV_OK)
            return rc;
    }
    return result;
}

pv_err_t pv_wsync_wait(pv_wsync_sub_t *self, uint64_t min_version, int timeout_ms, float *params,
                       uint64_t *version, bool *stop)
{
    for (int waited = 0;; waited++) {
        pv_err_t rc = pv_wsync_poll(self, params, version, stop);
        if (rc != PV_OK && rc != PV_ERR_DATA)
            return rc;
        if (*stop || *version >= min_version)
            return PV_OK;
        if (timeout_ms >= 0 && waited >= timeout_ms)
            return PV_ERR_TIMEOUT;
        pv_sleep_ms(1);
    }
}

uint64_t pv_wsync_sub_rejected(const pv_wsync_sub_t *self)
{
    return self->rejected;
}
