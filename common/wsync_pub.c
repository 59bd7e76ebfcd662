/* wsync_pub.c - the publisher (root): snapshots, reports from subscribers, the epochs of the
 * tree, the stop message, the API (see weight_sync.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/wsync_int.h"

/* ---- epochs ---------------------------------------------------------------------------- */

/* The root changed who is in the tree: a new epoch, sent down the new tree. */
static void s_new_epoch(ws_node_t *n)
{
    unsigned char *bits = calloc(((size_t)n->size + 7) / 8, 1);
    if (!bits) {
        n->err = PV_ERR_NOMEM;
        return;
    }
    for (int r = 0; r < n->size; r++)
        if (n->cut[r])
            bits[r / 8] |= (unsigned char)(1u << (r % 8));
    n->st.reparents++;
    ws_epoch_set(n, n->epoch + 1, bits, n->fanout);
    free(bits);
}

/* Cut `child` out unless it is already out, or has reported `version` (it drains, late:
 * the report raced the stall). */
static void s_cut(ws_node_t *n, int child, uint64_t version)
{
    if (n->cut[child] || n->settled[child] >= version)
        return;
    n->cut[child] = 1;
    s_new_epoch(n);
}

void ws_on_stalled(ws_node_t *n, int child, uint64_t version)
{
    if (n->is_root)
        s_cut(n, child, version);
    else
        ws_report(n, WS_R_STALLED, version, child);
}

uint32_t ws_pub_lagging(const ws_node_t *n)
{
    uint32_t lag = 0;
    for (int r = 0; r < n->size; r++)
        lag += r != n->root && !n->cut[r] && n->settled[r] < n->latest_v;
    return lag;
}

static void s_on_report(ws_node_t *n, const ws_report_t *rep, int src)
{
    if (rep->kind == WS_R_HAVE || rep->kind == WS_R_REFUSED) {
        if (rep->version > n->settled[src])
            n->settled[src] = rep->version;
        if (rep->kind == WS_R_REFUSED) {
            n->st.refused++;
            n->st.last_refused = rep->version;
        }
        if (n->cut[src]) { /* it was stopped, not dead: back into the tree */
            n->cut[src] = 0;
            s_new_epoch(n);
        }
    } else if (rep->kind == WS_R_STALLED && rep->rank >= 0 && rep->rank < n->size &&
               rep->rank != n->root && !n->cut[src] && ws_parent_of(n, rep->rank) == src) {
        s_cut(n, rep->rank, rep->version); /* from a rank out of the tree: stale, ignored */
    }
}

bool ws_pub_step(ws_node_t *n, uint64_t now)
{
    (void)now;
    bool moved = false;
    while (n->rrecv_req != MPI_REQUEST_NULL) {
        int done = 0, count = 0;
        MPI_Status st;
        if (MPI_Test(&n->rrecv_req, &done, &st) != MPI_SUCCESS) {
            n->err = PV_ERR_MPI;
            break;
        }
        if (!done)
            break;
        MPI_Get_count(&st, MPI_BYTE, &count);
        ws_report_t rep = n->rrecv;
        if (count == (int)sizeof rep && rep.magic == WS_MAGIC && st.MPI_SOURCE != n->root)
            s_on_report(n, &rep, st.MPI_SOURCE);
        moved = true;
        if (MPI_Irecv(&n->rrecv, (int)sizeof n->rrecv, MPI_BYTE, MPI_ANY_SOURCE,
                      PV_WSYNC_TAG_REPORT, n->comm, &n->rrecv_req) != MPI_SUCCESS)
            n->err = PV_ERR_MPI;
    }
    uint32_t lag = ws_pub_lagging(n);
    if (lag == 0 && n->st.lagging > 0)
        n->event = true;
    n->st.lagging = lag;
    return moved;
}

/* ---- API ------------------------------------------------------------------------------- */

pv_err_t pv_wsync_pub_new(MPI_Comm comm, int root, size_t n_params, const pv_wsync_opts_t *opts,
                          pv_wsync_pub_t **out)
{
    ws_node_t *n = NULL;
    pv_err_t rc = ws_node_new(comm, root, n_params, opts, true, &n);
    if (rc == PV_OK)
        *out = (pv_wsync_pub_t *)(void *)n; /* the node is its first member */
    return rc;
}

void pv_wsync_pub_destroy(pv_wsync_pub_t **pub)
{
    if (!pub || !*pub)
        return;
    ws_node_finish(&(*pub)->n);
    *pub = NULL;
}

/* The buffer of a new `version`, made the latest: a fresh one (copying publish) or the back
 * buffer, which then belongs to the sends. The version is checked before a buffer is taken,
 * so a refused call allocates nothing. Errors: the node's sticky error, PV_ERR_INVAL
 * (version not increasing; no back buffer taken), PV_ERR_NOMEM. */
static pv_err_t s_claim(ws_node_t *n, uint64_t version, bool back, int *out)
{
    pthread_mutex_lock(&n->mu);
    if (!n->threaded)
        ws_step(n);
    pv_err_t rc = n->err;
    int b = -1;
    if (rc == PV_OK && (version == 0 || (n->latest_buf >= 0 && version <= n->latest_v)))
        rc = PV_ERR_INVAL;
    if (rc == PV_OK && (b = back ? n->back_buf : ws_buf_get(n, 0)) < 0)
        rc = back ? PV_ERR_INVAL : PV_ERR_NOMEM;
    if (rc == PV_OK) {
        ws_buf_unref(n, n->latest_buf); /* the previous latest is pinned by its sends only */
        n->latest_buf = b;
        n->latest_v = version;
        n->bufs[b].version = version;
        n->st.published++;
        if (back)
            n->back_buf = -1;
    }
    pthread_mutex_unlock(&n->mu);
    *out = b;
    return rc;
}

/* Chunks [0, ready) of the latest buffer are in place: start and pump the sends. */
static void s_ready(ws_node_t *n, ws_buf_t *buf, uint32_t ready)
{
    pthread_mutex_lock(&n->mu);
    bool first = buf->ready == 0;
    ws_buf_set_ready(buf, ready);
    if (first)
        ws_schedule(n);
    ws_pump_outs(n, ws_now_ms());
    pthread_mutex_unlock(&n->mu);
}

/* The checksum is known: the END messages can go. */
static pv_err_t s_sealed(ws_node_t *n, ws_buf_t *buf, uint64_t sum)
{
    pthread_mutex_lock(&n->mu);
    buf->checksum = sum;
    buf->have_sum = true;
    buf->filling = false;
    ws_pump_outs(n, ws_now_ms());
    n->st.lagging = ws_pub_lagging(n);
    pv_err_t rc = n->err;
    pthread_mutex_unlock(&n->mu);
    return rc;
}

pv_err_t pv_wsync_publish(pv_wsync_pub_t *self, uint64_t version, const float *params)
{
    ws_node_t *n = &self->n;
    int b = -1;
    pv_err_t rc = s_claim(n, version, false, &b);
    if (rc != PV_OK)
        return rc;
    /* the snapshot, chunk by chunk: each chunk is sent on as soon as it is copied, and hashed
     * afterwards while it is still in cache (the checksum only travels in END) */
    ws_buf_t *buf = &n->bufs[b];
    pv_checksum_state_t *hs = n->in[0].hs;
    pv_checksum_reset(hs);
    const unsigned char *src = (const unsigned char *)params;
    for (uint32_t i = 0; i < n->n_chunks; i++) {
        size_t off = (size_t)i * n->chunk_bytes, len = ws_chunk_len(n, i);
        memcpy(buf->bytes + off, src + off, len);
        bool corrupt = i == 0 && n->corrupt_version == version;
        if (corrupt) { /* test hook: a byte flipped after the checksum, before it is sent */
            pv_checksum_update(hs, buf->bytes + off, len);
            buf->bytes[0] ^= 0x01;
        }
        s_ready(n, buf, i + 1);
        if (!corrupt)
            pv_checksum_update(hs, buf->bytes + off, len);
    }
    return s_sealed(n, buf, pv_checksum_digest(hs));
}

float *pv_wsync_pub_back(pv_wsync_pub_t *self)
{
    ws_node_t *n = &self->n;
    pthread_mutex_lock(&n->mu);
    if (!n->threaded)
        ws_step(n); /* sends that completed unpin their buffers */
    if (n->back_buf < 0 && n->err == PV_OK)
        n->back_buf = ws_buf_get(n, 0); /* version 0: never a source of sends */
    float *p = n->back_buf >= 0 ? (float *)(void *)n->bufs[n->back_buf].bytes : NULL;
    pthread_mutex_unlock(&n->mu);
    return p;
}

pv_err_t pv_wsync_publish_back(pv_wsync_pub_t *self, uint64_t version)
{
    ws_node_t *n = &self->n;
    int b = -1;
    pv_err_t rc = s_claim(n, version, true, &b);
    if (rc != PV_OK)
        return rc;
    ws_buf_t *buf = &n->bufs[b];
    pv_checksum_state_t *hs = n->in[0].hs;
    pv_checksum_reset(hs);
    uint32_t first = 0;
    if (n->corrupt_version == version) { /* test hook: chunk 0 hashed, then a byte flipped */
        pv_checksum_update(hs, buf->bytes, ws_chunk_len(n, 0));
        buf->bytes[0] ^= 0x01;
        first = 1;
    }
    /* every chunk is in place: all sends start now, and the checksum is computed while the
     * children read them; a chunk at a time so that the helper's pumping interleaves */
    s_ready(n, buf, n->n_chunks);
    for (uint32_t i = first; i < n->n_chunks; i++)
        pv_checksum_update(hs, buf->bytes + (size_t)i * n->chunk_bytes, ws_chunk_len(n, i));
    return s_sealed(n, buf, pv_checksum_digest(hs));
}

pv_err_t pv_wsync_stop(pv_wsync_pub_t *self, int timeout_ms, int *n_unreached)
{
    ws_node_t *n = &self->n;
    pthread_mutex_lock(&n->mu);
    pv_err_t rc = PV_OK;
    if (!n->stop_req && !(n->stop_req = malloc((size_t)n->size * sizeof *n->stop_req)))
        rc = PV_ERR_NOMEM;
    n->stop_msg = (ws_msg_t){.magic = WS_MAGIC,
                             .kind = WS_STOP,
                             .n_params = n->n_params,
                             .epoch = n->epoch,
                             .n_ranks = (uint32_t)n->size};
    for (int r = 0; rc == PV_OK && r < n->size; r++) {
        n->stop_req[r] = MPI_REQUEST_NULL; /* straight to every rank: no tree to get stuck in */
        if (r != n->root && MPI_Isend(&n->stop_msg, (int)sizeof n->stop_msg, MPI_BYTE, r,
                                      PV_WSYNC_TAG, n->comm, &n->stop_req[r]) != MPI_SUCCESS)
            rc = PV_ERR_MPI;
    }
    int pending = 0;
    for (uint64_t t0 = pv_mono_ms(); rc == PV_OK;) {
        pending = 0;
        for (int r = 0; r < n->size; r++) {
            int done = 1;
            if (n->stop_req[r] != MPI_REQUEST_NULL)
                MPI_Test(&n->stop_req[r], &done, MPI_STATUS_IGNORE);
            pending += !done;
        }
        if (pending == 0 || (timeout_ms >= 0 && pv_mono_ms() - t0 >= (uint64_t)timeout_ms))
            break;
        pthread_mutex_unlock(&n->mu);
        pv_sleep_ms(1);
        pthread_mutex_lock(&n->mu);
    }
    pthread_mutex_unlock(&n->mu);
    if (n_unreached)
        *n_unreached = pending;
    return rc;
}

pv_wsync_stats_t pv_wsync_pub_stats(pv_wsync_pub_t *self)
{
    ws_node_t *n = &self->n;
    pthread_mutex_lock(&n->mu);
    if (!n->threaded)
        ws_step(n);
    pv_wsync_stats_t st = n->st;
    pthread_mutex_unlock(&n->mu);
    return st;
}

uint32_t pv_wsync_progress(pv_wsync_pub_t *self)
{
    return pv_wsync_pub_stats(self).lagging;
}

pv_err_t pv_wsync_pub_wait(pv_wsync_pub_t *self, int timeout_ms)
{
    ws_node_t *n = &self->n;
    uint64_t start = pv_mono_ms();
    pthread_mutex_lock(&n->mu);
    n->eager_until_ms = start + 50;
    pv_err_t rc = PV_OK;
    for (;;) {
        if (!n->threaded)
            ws_step(n);
        if ((rc = n->err) != PV_OK || n->st.lagging == 0)
            break;
        uint64_t now = pv_mono_ms();
        if (timeout_ms >= 0 && now - start >= (uint64_t)timeout_ms) {
            rc = PV_ERR_TIMEOUT;
            break;
        }
        if (n->threaded) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t ns = (uint64_t)ts.tv_nsec + 20u * 1000000u; /* re-checked every 20 ms */
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
