/* weight_sync.c - a node's life, its step and its helper thread; see weight_sync.h and
 * wsync_int.h. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/wsync_int.h"

#define S_EXIT_WAIT_MS 2000 /* destroy: how long pending requests are waited for */
#define S_BUSY_MS      2    /* the helper sleeps once nothing has moved for this long */

uint64_t ws_now_ms(void)
{
    return pv_mono_ms();
}

static pv_err_t s_opts(const pv_wsync_opts_t *in, pv_wsync_opts_t *o)
{
    *o = in ? *in : (pv_wsync_opts_t){0};
    if (o->chunk_bytes == 0)
        o->chunk_bytes = PV_WSYNC_CHUNK_DEFAULT;
    if (o->fanout == 0)
        o->fanout = 2;
    if (o->stall_ms == 0)
        o->stall_ms = 2000;
    if (o->chunk_bytes % 4 || o->chunk_bytes < 4096 || o->chunk_bytes > (1u << 30) ||
        o->fanout < 1 || o->fanout > PV_WSYNC_FANOUT_MAX || o->stall_ms < 0)
        return PV_ERR_INVAL;
    return PV_OK;
}

static pv_err_t s_node_init(ws_node_t *n, MPI_Comm comm, int root, size_t n_params,
                            const pv_wsync_opts_t *opts, bool want_root)
{
    pv_wsync_opts_t o;
    int rank, size;
    if (pthread_mutex_init(&n->mu, NULL) != 0)
        return PV_ERR_NOMEM;
    if (pthread_cond_init(&n->changed, NULL) != 0) {
        pthread_mutex_destroy(&n->mu);
        return PV_ERR_NOMEM;
    }
    n->sync_ok = true; /* from here on a failure is undone by ws_node_finish */
    n->ctrl_req = n->rrecv_req = n->ack_req = MPI_REQUEST_NULL;
    for (int i = 0; i < WS_N_ACK; i++)
        n->ack_out_req[i] = MPI_REQUEST_NULL;
    for (int i = 0; i < WS_N_REPORT; i++)
        n->rep_req[i] = MPI_REQUEST_NULL;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return PV_ERR_MPI;
    if ((rank == root) != want_root || root < 0 || root >= size || n_params > WS_MAX_PARAMS ||
        s_opts(opts, &o) != PV_OK)
        return PV_ERR_INVAL;
    n->comm = comm;
    n->rank = rank;
    n->size = size;
    n->root = root;
    n->is_root = want_root;
    n->n_params = n_params;
    n->bytes = 4 * n_params;
    n->msg_bytes = sizeof(ws_msg_t) + ((size_t)size + 7) / 8;
    n->stall_ms = o.stall_ms;
    n->corrupt_version = o.corrupt_version;
    n->want_thread = o.thread >= 0;
    if (want_root) { /* the root's shape is the job's: it travels with every version */
        n->chunk_bytes = o.chunk_bytes;
        n->n_chunks = (uint32_t)((n->bytes + o.chunk_bytes - 1) / o.chunk_bytes);
        n->fanout = o.fanout;
    }
    n->ok_buf = n->front_buf = n->bad_buf = n->latest_buf = n->last_parent = n->back_buf = -1;
    n->cut = calloc((size_t)size, 1);
    n->out = calloc((size_t)size, sizeof *n->out);
    n->ctrl_buf = malloc(n->msg_bytes + 256); /* room to see an oversized rogue message */
    n->settled = calloc((size_t)size, sizeof *n->settled);
    if (!n->cut || !n->out || !n->ctrl_buf || !n->settled)
        return PV_ERR_NOMEM;
    for (int r = 0; r < size; r++) {
        n->out[r].begin_req = n->out[r].end_req = n->out[r].epoch_req = MPI_REQUEST_NULL;
        n->out[r].pin = -1;
    }
    for (int r = 0; r < size; r++) {
        ws_out_t *x = &n->out[r];
        x->begin_msg = malloc(n->msg_bytes);
        x->epoch_msg = malloc(n->msg_bytes);
        if (!x->begin_msg || !x->epoch_msg)
            return PV_ERR_NOMEM;
    }
    if (ws_shm_init(n, &o) != PV_OK)
        return PV_ERR_MPI;
    ws_tree_update(n);
    int rc = want_root ? MPI_Irecv(&n->rrecv, (int)sizeof n->rrecv, MPI_BYTE, MPI_ANY_SOURCE,
                                   PV_WSYNC_TAG_REPORT, comm, &n->rrecv_req)
                       : MPI_Irecv(n->ctrl_buf, (int)n->msg_bytes + 256, MPI_BYTE, MPI_ANY_SOURCE,
                                   PV_WSYNC_TAG, comm, &n->ctrl_req);
    return rc == MPI_SUCCESS ? PV_OK : PV_ERR_MPI;
}

static void s_node_start(ws_node_t *n);

pv_err_t ws_node_new(MPI_Comm comm, int root, size_t n_params, const pv_wsync_opts_t *opts,
                     bool want_root, ws_node_t **out)
{
    if (n_params == 0)
        return PV_ERR_INVAL;
    ws_node_t *n = calloc(1, sizeof(struct pv_wsync_pub)); /* == sizeof(struct pv_wsync_sub) */
    if (!n)
        return PV_ERR_NOMEM;
    pv_err_t rc = s_node_init(n, comm, root, n_params, opts, want_root);
    if (rc == PV_OK && want_root && pv_checksum_new(&n->in[0].hs) != PV_OK)
        rc = PV_ERR_NOMEM; /* the root's running checksum (it receives nothing) */
    if (rc != PV_OK) {
        if (n->sync_ok)
            ws_node_finish(n);
        else
            free(n);
        return rc;
    }
    s_node_start(n);
    *out = n;
    return PV_OK;
}

bool ws_step(ws_node_t *n)
{
    uint64_t now = ws_now_ms();
    bool moved = n->is_root ? ws_pub_step(n, now) : ws_sub_step(n, now, true);
    moved |= ws_shm_acks(n);
    ws_schedule(n);
    moved |= ws_pump_outs(n, now);
    if (!n->is_root) {
        moved |= ws_sub_step(n, now, false);
        if (now - n->have_ms >= WS_ALIVE_MS) /* alive: a rank cut out by mistake is taken back */
            ws_report(n, WS_R_HAVE, n->ok_version, n->rank);
        ws_report_flush(n);
    }
    n->st.pinned = 0;
    for (int b = 0; b < n->n_bufs; b++)
        n->st.pinned += n->bufs[b].refs > 0;
    if (n->event) { /* a version verified or refused, a stop, the root's lagging at 0 */
        n->event = false;
        pthread_cond_broadcast(&n->changed);
    }
    return moved;
}

void ws_nap(ws_node_t *n, bool moved)
{
    if (moved || ws_now_ms() < n->eager_until_ms)
        sched_yield();
    else
        pv_sleep_ms(1);
}

static void *s_helper(void *arg)
{
    ws_node_t *n = arg;
    uint64_t moved_ms = 0;
    while (!atomic_load(&n->quit)) {
        pthread_mutex_lock(&n->mu);
        bool moved = ws_step(n);
        uint64_t now = ws_now_ms();
        bool eager = now < n->eager_until_ms;
        pthread_mutex_unlock(&n->mu);
        if (moved)
            moved_ms = now;
        if (moved || now - moved_ms < S_BUSY_MS || eager)
            sched_yield(); /* chunks are moving: test again at once, but let others run */
        else
            pv_sleep_ms(1);
    }
    return NULL;
}

static void s_node_start(ws_node_t *n)
{
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    n->threaded = n->want_thread && level == MPI_THREAD_MULTIPLE &&
                  pthread_create(&n->thread, NULL, s_helper, n) == 0;
}

/* Every request of the node that has not completed; with `cancel`, receives are cancelled
 * first. Returns how many are still pending. */
static int s_pending(ws_node_t *n, bool cancel)
{
    int pending = 0;
#define S_REQ(r)                                                                                   \
    do {                                                                                           \
        int f_ = 1;                                                                                \
        if ((r) != MPI_REQUEST_NULL && MPI_Test(&(r), &f_, MPI_STATUS_IGNORE) != MPI_SUCCESS)      \
            f_ = 0;                                                                                \
        pending += !f_;                                                                            \
    } while (0)
    if (cancel) {
        if (n->ctrl_req != MPI_REQUEST_NULL)
            MPI_Cancel(&n->ctrl_req);
        if (n->rrecv_req != MPI_REQUEST_NULL)
            MPI_Cancel(&n->rrecv_req);
        if (n->ack_req != MPI_REQUEST_NULL)
            MPI_Cancel(&n->ack_req);
        for (int i = 0; i < WS_MAX_IN; i++)
            for (uint32_t k = n->in[i].ready; n->in[i].used && k < n->n_chunks; k++)
                if (n->in[i].req[k] != MPI_REQUEST_NULL)
                    MPI_Cancel(&n->in[i].req[k]);
    }
    S_REQ(n->ctrl_req);
    S_REQ(n->rrecv_req);
    S_REQ(n->ack_req);
    for (int i = 0; i < WS_N_ACK; i++)
        S_REQ(n->ack_out_req[i]);
    for (int i = 0; i < WS_N_REPORT; i++)
        S_REQ(n->rep_req[i]);
    for (int i = 0; i < WS_MAX_IN; i++)
        for (uint32_t k = n->in[i].ready; n->in[i].used && k < n->n_chunks; k++)
            S_REQ(n->in[i].req[k]);
    for (int r = 0; r < n->size && n->out; r++) {
        ws_out_t *o = &n->out[r];
        S_REQ(o->begin_req);
        S_REQ(o->end_req);
        S_REQ(o->epoch_req);
        for (uint32_t k = o->done; k < o->posted; k++)
            S_REQ(o->req[k]);
    }
    for (int r = 0; r < n->size && n->stop_req; r++)
        S_REQ(n->stop_req[r]);
#undef S_REQ
    return pending;
}

void ws_node_finish(ws_node_t *n)
{
    if (n->threaded) {
        atomic_store(&n->quit, true);
        pthread_join(n->thread, NULL);
    }
    int pending = s_pending(n, true);
    for (uint64_t t0 = ws_now_ms(); pending > 0 && ws_now_ms() - t0 < S_EXIT_WAIT_MS;) {
        pv_sleep_ms(1);
        pending = s_pending(n, false);
    }
    if (pending > 0)
        return; /* the node, its buffers and messages stay: MPI may still touch them */
    for (int b = 0; b < n->n_bufs; b++)
        ws_shm_free(&n->bufs[b]);
    ws_shm_finish(n);
    for (int i = 0; i < WS_MAX_IN; i++) {
        free(n->in[i].req);
        pv_checksum_destroy(&n->in[i].hs);
    }
    for (int r = 0; r < n->size && n->out; r++) {
        free(n->out[r].req);
        free(n->out[r].req_buf);
        free(n->out[r].begin_msg);
        free(n->out[r].epoch_msg);
    }
    free(n->out);
    free(n->cut);
    free(n->ctrl_buf);
    free(n->settled);
    free(n->stop_req);
    if (n->sync_ok) {
        pthread_cond_destroy(&n->changed);
        pthread_mutex_destroy(&n->mu);
    }
    free(n); /* the node is the first member of pv_wsync_pub / pv_wsync_sub */
}
