/* wsync_sub.c - the subscriber: control messages, transfers in, verification, the API
 * (see weight_sync.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/wsync_int.h"

/* ---- control messages ----------------------------------------------------------------- */

static bool s_valid(const ws_node_t *n, const ws_msg_t *m, int count, int src)
{
    if (count < (int)sizeof *m || m->magic != WS_MAGIC || m->n_ranks != (uint32_t)n->size)
        return false;
    switch (m->kind) {
    case WS_BEGIN:
        if (m->n_params != n->n_params || m->chunk_bytes % 4 || m->chunk_bytes < 4096 ||
            m->chunk_bytes > (1u << 30) || (n->chunk_bytes && m->chunk_bytes != n->chunk_bytes))
            return false;
        /* fall through */
    case WS_EPOCH:
        return (size_t)count == n->msg_bytes && m->fanout >= 1 && m->fanout <= PV_WSYNC_FANOUT_MAX;
    case WS_END:
    case WS_ABORT:
        return count == (int)sizeof *m;
    case WS_STOP:
        return count == (int)sizeof *m && src == n->root;
    default:
        return false;
    }
}

static ws_in_t *s_in_find(ws_node_t *n, int src, uint64_t version)
{
    for (int i = 0; i < WS_MAX_IN; i++)
        if (n->in[i].used && n->in[i].src == src && n->in[i].version == version)
            return &n->in[i];
    return NULL;
}

/* Stop receiving `in`: cancel what has not arrived; a receive that cannot be cancelled (it
 * matched a message still in flight) leaves the buffer pinned for good. */
static void s_in_close(ws_node_t *n, ws_in_t *in)
{
    ws_buf_t *b = &n->bufs[in->buf];
    ws_shm_release(n, in);
    for (uint32_t k = in->ready; k < n->n_chunks; k++) {
        int done = 0;
        if (in->req[k] == MPI_REQUEST_NULL)
            continue;
        MPI_Cancel(&in->req[k]);
        if (MPI_Test(&in->req[k], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done)
            b->leaked = true;
    }
    b->filling = false;
    if (!b->leaked)
        ws_buf_unref(n, in->buf);
    in->used = false;
    /* a sign of life for the root: a rank cut out while this transfer was stuck is taken
     * back once it reports again */
    ws_report(n, WS_R_HAVE, n->ok_version, n->rank);
}

static void s_in_done(ws_node_t *n, ws_in_t *in);

/* Hash what has arrived and not been hashed; verify when whole. */
static bool s_in_finish(ws_node_t *n, ws_in_t *in)
{
    for (; in->hashed < in->ready; in->hashed++)
        pv_checksum_update(in->hs, n->bufs[in->buf].bytes + (size_t)in->hashed * n->chunk_bytes,
                           ws_chunk_len(n, in->hashed));
    if (in->hashed < n->n_chunks || !in->have_end)
        return false;
    s_in_done(n, in);
    return true;
}

static void s_begin(ws_node_t *n, int src, const ws_msg_t *m, uint64_t now)
{
    if (n->chunk_bytes == 0) {
        n->chunk_bytes = m->chunk_bytes;
        n->n_chunks = (uint32_t)((n->bytes + m->chunk_bytes - 1) / m->chunk_bytes);
    }
    if (m->epoch > n->epoch || n->fanout == 0)
        ws_epoch_set(n, m->epoch, n->ctrl_buf + sizeof *m, m->fanout);
    ws_in_t *in = NULL;
    for (int i = 0; i < WS_MAX_IN; i++) {
        ws_in_t *x = &n->in[i];
        if (x->used && x->src == src && x->ready == n->n_chunks && x->have_end)
            s_in_finish(n, x); /* whole, its END read just before: verify it now */
        else if (x->used && x->src == src)
            s_in_close(n, x); /* the sender started over */
        if (!n->in[i].used && !in)
            in = &n->in[i];
    }
    if (!in) { /* full: give up the oldest */
        in = &n->in[0];
        for (int i = 1; i < WS_MAX_IN; i++)
            if (n->in[i].version < in->version)
                in = &n->in[i];
        s_in_close(n, in);
    }
    int b = ws_buf_get(n, m->version);
    if (b < 0 || (!in->hs && pv_checksum_new(&in->hs) != PV_OK)) {
        ws_buf_unref(n, b);
        n->err = PV_ERR_NOMEM; /* the sender finds this rank not draining */
        return;
    }
    if (in->cap < n->n_chunks) {
        MPI_Request *r = realloc(in->req, n->n_chunks * sizeof *r);
        if (!r) {
            ws_buf_unref(n, b);
            n->err = PV_ERR_NOMEM;
            return;
        }
        in->req = r;
        in->cap = n->n_chunks;
    }
    *in = (ws_in_t){.used = true,
                    .map = -1,
                    .src = src,
                    .version = m->version,
                    .buf = b,
                    .req = in->req,
                    .cap = in->cap,
                    .hs = in->hs,
                    .last_ms = now};
    pv_checksum_reset(in->hs);
    if (ws_shm_accept(n, in, m, src))
        return; /* copied out of the parent's shared buffer (ws_shm_pull) */
    for (uint32_t k = 0; k < n->n_chunks; k++)
        if (MPI_Irecv(n->bufs[b].bytes + (size_t)k * n->chunk_bytes, (int)ws_chunk_len(n, k),
                      MPI_BYTE, src, ws_tag(m->version), n->comm, &in->req[k]) != MPI_SUCCESS)
            n->err = PV_ERR_MPI;
}

static void s_control(ws_node_t *n, int src, int count, uint64_t now)
{
    ws_msg_t m;
    memcpy(&m, n->ctrl_buf, count < (int)sizeof m ? (size_t)count : sizeof m);
    if (!s_valid(n, &m, count, src)) {
        n->st.rejected++;
        n->event = true;
        return;
    }
    ws_in_t *in = m.kind == WS_END || m.kind == WS_ABORT ? s_in_find(n, src, m.version) : NULL;
    switch (m.kind) {
    case WS_BEGIN:
        s_begin(n, src, &m, now);
        break;
    case WS_END:
        if (in) {
            in->have_end = true;
            n->bufs[in->buf].checksum = m.checksum;
            n->bufs[in->buf].have_sum = true;
        }
        break;
    case WS_ABORT:
        if (in)
            s_in_close(n, in);
        break;
    case WS_EPOCH:
        if (m.epoch > n->epoch || n->fanout == 0)
            ws_epoch_set(n, m.epoch, n->ctrl_buf + sizeof m, m.fanout);
        break;
    case WS_STOP:
        n->stopped = true;
        n->event = true;
        break;
    }
}

/* ---- transfers in ------------------------------------------------------------------- */

/* The whole version and its END are here: verify it, keep it or refuse it. */
static void s_in_done(ws_node_t *n, ws_in_t *in)
{
    ws_buf_t *b = &n->bufs[in->buf];
    b->filling = false;
    n->event = true;
    if (pv_checksum_digest(in->hs) != b->checksum) {
        b->bad = true;
        if (in->version > n->ok_version &&
            (n->bad_buf < 0 || in->version > n->bufs[n->bad_buf].version)) {
            ws_buf_unref(n, n->bad_buf); /* kept to be sent on: every rank checks for itself */
            n->bad_buf = in->buf;
            b->refs++;
        }
        n->st.refused++;
        n->st.last_refused = in->version;
        ws_report(n, WS_R_REFUSED, in->version, n->rank);
    } else {
        n->st.received++;
        if (in->version > n->ok_version) {
            if (n->bad_buf >= 0 && n->bufs[n->bad_buf].version <= in->version) {
                ws_buf_unref(n, n->bad_buf);
                n->bad_buf = -1;
            }
            ws_buf_unref(n, n->ok_buf);
            n->ok_buf = in->buf;
            n->ok_version = in->version;
            b->refs++;
            if (n->last_parent >= 0 && in->src != n->last_parent)
                n->st.reparents++;
            n->last_parent = in->src;
        }
        ws_report(n, WS_R_HAVE, in->version, n->rank);
    }
    ws_shm_release(n, in);
    ws_buf_unref(n, in->buf);
    in->used = false;
}

/* A chunk receive finished (an error status counts: the checksum then refuses it). */
static bool s_arrived(MPI_Request *r)
{
    int done = 0;
    int rc = MPI_Test(r, &done, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? done != 0 : *r == MPI_REQUEST_NULL;
}

bool ws_sub_step(ws_node_t *n, uint64_t now, bool before_outs)
{
    bool moved = false;
    if (before_outs) {
        while (n->ctrl_req != MPI_REQUEST_NULL) {
            int src = -1, count = 0, got = ws_recv_test(n, &n->ctrl_req, &src, &count);
            if (got == 0 || got == -2)
                break;
            if (got == 1) {
                s_control(n, src, count, now);
            } else {
                n->st.rejected++; /* completed in error: larger than any message of ours */
                n->event = true;
            }
            moved = true;
            if (MPI_Irecv(n->ctrl_buf, (int)n->msg_bytes + 256, MPI_BYTE, MPI_ANY_SOURCE,
                          PV_WSYNC_TAG, n->comm, &n->ctrl_req) != MPI_SUCCESS)
                n->err = PV_ERR_MPI;
        }
        size_t budget = WS_SHM_BUDGET;
        for (int i = 0; i < WS_MAX_IN; i++) {
            ws_in_t *in = &n->in[i];
            if (in->used && in->shm) {
                int got = ws_shm_pull(n, in, &budget);
                if (got != 0) {
                    in->last_ms = now;
                    moved = true;
                }
                if (got < 0)
                    s_in_close(n, in); /* the parent reused the buffer: it sends again */
                continue;
            }
            while (in->used && in->ready < n->n_chunks && s_arrived(&in->req[in->ready])) {
                ws_buf_set_ready(&n->bufs[in->buf], ++in->ready);
                in->last_ms = now;
                moved = true;
            }
        }
        return moved;
    }
    /* after the forwards are posted: hash what arrived, verify what is whole */
    for (int i = 0; i < WS_MAX_IN; i++) {
        ws_in_t *in = &n->in[i];
        if (!in->used)
            continue;
        moved |= s_in_finish(n, in);
    }
    /* a transfer that stopped moving is given up once a version as new is here or coming */
    for (int i = 0; i < WS_MAX_IN; i++) {
        ws_in_t *in = &n->in[i];
        if (!in->used || now - in->last_ms <= (uint64_t)n->stall_ms)
            continue;
        bool newer = n->ok_version >= in->version;
        for (int j = 0; j < WS_MAX_IN && !newer; j++)
            newer = j != i && n->in[j].used && n->in[j].version >= in->version &&
                    n->in[j].last_ms > in->last_ms;
        if (newer) {
            s_in_close(n, in);
            moved = true;
        }
    }
    return moved;
}

/* ---- API ----------------------------------------------------------------------------- */

pv_err_t pv_wsync_sub_new(MPI_Comm comm, int root, size_t n_params, const pv_wsync_opts_t *opts,
                          pv_wsync_sub_t **out)
{
    ws_node_t *n = NULL;
    pv_err_t rc = ws_node_new(comm, root, n_params, opts, false, &n);
    if (rc == PV_OK)
        *out = (pv_wsync_sub_t *)(void *)n; /* the node is its first member */
    return rc;
}

void pv_wsync_sub_destroy(pv_wsync_sub_t **sub)
{
    if (!sub || !*sub)
        return;
    ws_node_finish(&(*sub)->n);
    *sub = NULL;
}

/* Under the lock: apply the newest verified version (see pv_wsync_poll). */
static pv_err_t s_apply(ws_node_t *n, float *params, uint64_t *version, bool *stop)
{
    if (!n->threaded)
        ws_step(n);
    pv_err_t rc = n->err;
    if (n->ok_buf >= 0 && n->ok_version > *version) {
        int b = n->ok_buf;
        uint64_t v = n->ok_version;
        n->bufs[b].refs++;
        if (params) { /* pinned: the helper does not reuse it while we copy */
            pthread_mutex_unlock(&n->mu);
            memcpy(params, n->bufs[b].bytes, n->bytes);
            pthread_mutex_lock(&n->mu);
            ws_buf_unref(n, b);
        } else {
            ws_buf_unref(n, n->front_buf);
            n->front_buf = b;
        }
        *version = v;
    }
    *stop = n->stopped;
    if (rc == PV_OK && n->st.refused > n->refused_seen)
        rc = PV_ERR_CHECKSUM;
    else if (rc == PV_OK && n->st.rejected > n->rejected_seen)
        rc = PV_ERR_DATA;
    n->refused_seen = n->st.refused;
    n->rejected_seen = n->st.rejected;
    return rc;
}

pv_err_t pv_wsync_poll(pv_wsync_sub_t *self, float *params, uint64_t *version, bool *stop)
{
    ws_node_t *n = &self->n;
    pthread_mutex_lock(&n->mu);
    pv_err_t rc = s_apply(n, params, version, stop);
    pthread_mutex_unlock(&n->mu);
    return rc;
}

pv_err_t pv_wsync_wait(pv_wsync_sub_t *self, uint64_t min_version, int timeout_ms, float *params,
                       uint64_t *version, bool *stop)
{
    ws_node_t *n = &self->n;
    uint64_t start = ws_now_ms();
    pthread_mutex_lock(&n->mu);
    n->eager_until_ms = start + 50; /* a version is likely close: no sleeping for a while */
    pv_err_t rc;
    for (;;) {
        rc = s_apply(n, params, version, stop);
        if (rc == PV_ERR_CHECKSUM || rc == PV_ERR_DATA)
            rc = PV_OK; /* counted; the wait goes on */
        if (rc != PV_OK || *stop || *version >= min_version)
            break;
        uint64_t now = ws_now_ms();
        if (timeout_ms >= 0 && now - start >= (uint64_t)timeout_ms) {
            rc = PV_ERR_TIMEOUT;
            break;
        }
        if (n->threaded) {
            uint64_t until = now + 100;
            if (timeout_ms >= 0 && until > start + (uint64_t)timeout_ms)
                until = start + (uint64_t)timeout_ms;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t ns = (uint64_t)ts.tv_nsec + (until - now) * 1000000u;
            ts.tv_sec += (time_t)(ns / 1000000000u);
            ts.tv_nsec = (long)(ns % 1000000000u);
            pthread_cond_timedwait(&n->changed, &n->mu, &ts);
        } else {
            pthread_mutex_unlock(&n->mu);
            ws_nap(n, false);
            pthread_mutex_lock(&n->mu);
        }
    }
    n->eager_until_ms = 0;
    pthread_mutex_unlock(&n->mu);
    return rc;
}

const float *pv_wsync_sub_params(const pv_wsync_sub_t *self)
{
    const ws_node_t *n = &self->n;
    return n->front_buf >= 0 ? (const float *)(const void *)n->bufs[n->front_buf].bytes : NULL;
}

pv_wsync_stats_t pv_wsync_sub_stats(pv_wsync_sub_t *self)
{
    ws_node_t *n = &self->n;
    pthread_mutex_lock(&n->mu);
    if (!n->threaded)
        ws_step(n);
    pv_wsync_stats_t st = n->st;
    pthread_mutex_unlock(&n->mu);
    return st;
}

uint64_t pv_wsync_sub_rejected(pv_wsync_sub_t *self)
{
    return pv_wsync_sub_stats(self).rejected;
}
