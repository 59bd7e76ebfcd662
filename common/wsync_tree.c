/* wsync_tree.c - the tree of an epoch, version buffers, and a rank's sends to its children
 * (see weight_sync.h for the scheme, wsync_int.h for the messages). */
#include <stdlib.h>
#include <string.h>

#include "common/wsync_int.h"

/* ---- tree ------------------------------------------------------------------------------ */

/* Position of `rank` in the heap of the ranks in the tree (root 0, then rank order), -1 when
 * it is out; with `at` >= 0, the rank at that position instead (returned, -1 past the end). */
static int s_walk(const ws_node_t *n, int rank, int at)
{
    if (at == 0 || (at < 0 && rank == n->root))
        return at == 0 ? n->root : 0;
    int pos = 0;
    for (int r = 0; r < n->size; r++) {
        if (r == n->root || n->cut[r])
            continue;
        pos++;
        if (at < 0 && r == rank)
            return pos;
        if (at == pos)
            return r;
    }
    return -1;
}

void ws_tree_update(ws_node_t *n)
{
    n->n_children = 0;
    int me = s_walk(n, n->rank, -1);
    if (me < 0 || n->fanout < 1)
        return;
    for (int k = 1; k <= n->fanout; k++) {
        int r = s_walk(n, -1, n->fanout * me + k);
        if (r < 0)
            break;
        n->children[n->n_children++] = r;
    }
}

int ws_parent_of(const ws_node_t *n, int rank)
{
    int pos = s_walk(n, rank, -1);
    if (pos <= 0 || n->fanout < 1)
        return -1;
    return s_walk(n, -1, (pos - 1) / n->fanout);
}

void ws_epoch_set(ws_node_t *n, uint64_t epoch, const unsigned char *bitmap, int fanout)
{
    int old[PV_WSYNC_FANOUT_MAX], n_old = n->n_children;
    memcpy(old, n->children, sizeof old);
    n->epoch = epoch;
    n->fanout = fanout;
    n->st.epoch = epoch;
    n->st.cut_out = 0;
    for (int r = 0; r < n->size; r++) {
        n->cut[r] = (unsigned char)((bitmap[r / 8] >> (r % 8)) & 1);
        n->st.cut_out += n->cut[r];
    }
    n->cut[n->root] = 0;
    ws_tree_update(n);
    for (int i = 0; i < n->n_children; i++) {
        int c = n->children[i];
        bool known = false;
        for (int j = 0; j < n_old; j++)
            known |= old[j] == c;
        ws_out_t *o = &n->out[c];
        if (!known)
            o->new_child = true;
        int done = 1;
        if (o->epoch_req != MPI_REQUEST_NULL)
            MPI_Test(&o->epoch_req, &done, MPI_STATUS_IGNORE);
        if (!done)
            continue; /* the last epoch has not left: this child is stalled */
        ws_msg_fill(n, o->epoch_msg, WS_EPOCH, 0);
        if (MPI_Isend(o->epoch_msg, (int)n->msg_bytes, MPI_BYTE, c, PV_WSYNC_TAG, n->comm,
                      &o->epoch_req) != MPI_SUCCESS)
            n->err = PV_ERR_MPI;
    }
    ws_schedule(n);
}

/* ---- buffers and messages --------------------------------------------------------------- */

int ws_buf_get(ws_node_t *n, uint64_t version)
{
    int b = -1;
    for (int i = 0; i < n->n_bufs && b < 0; i++)
        if (n->bufs[i].refs == 0 && !n->bufs[i].leaked)
            b = i;
    if (b < 0) {
        if (n->n_bufs == WS_MAX_BUFS)
            return -1;
        ws_buf_t fresh = {0};
        unsigned char *p = ws_shm_alloc(n, &fresh); /* shared memory when it can be */
        if (!p)
            return -1;
        b = n->n_bufs++;
        n->bufs[b] = (ws_buf_t){.bytes = p, .sh = fresh.sh};
    }
    ws_buf_t *buf = &n->bufs[b];
    *buf = (ws_buf_t){
        .bytes = buf->bytes, .sh = buf->sh, .version = version, .filling = true, .refs = 1};
    ws_shm_reuse(buf); /* a child still copying an older version sees it change */
    return b;
}

void ws_buf_unref(ws_node_t *n, int b)
{
    if (b >= 0 && n->bufs[b].refs > 0)
        n->bufs[b].refs--;
}

size_t ws_chunk_len(const ws_node_t *n, uint32_t i)
{
    size_t off = (size_t)i * n->chunk_bytes;
    return n->bytes - off < n->chunk_bytes ? n->bytes - off : n->chunk_bytes;
}

int ws_tag(uint64_t version)
{
    return PV_WSYNC_TAG_DATA + (int)(version % WS_TAG_SPAN);
}

void ws_msg_fill(const ws_node_t *n, unsigned char *out, int kind, uint64_t version)
{
    ws_msg_t m = {.magic = WS_MAGIC,
                  .kind = (uint16_t)kind,
                  .fanout = (uint16_t)n->fanout,
                  .version = version,
                  .n_params = n->n_params,
                  .epoch = n->epoch,
                  .chunk_bytes = n->chunk_bytes,
                  .n_ranks = (uint32_t)n->size,
                  .shm_fd = -1};
    memcpy(out, &m, sizeof m);
    unsigned char *bits = out + sizeof m;
    memset(bits, 0, n->msg_bytes - sizeof m);
    for (int r = 0; r < n->size; r++)
        if (n->cut[r])
            bits[r / 8] |= (unsigned char)(1u << (r % 8));
}

/* A buffer of `version` holding chunk i (-1 none), or, with i < 0, one that holds or will
 * hold the whole version (filling or complete, not refused). */
static int s_source(const ws_node_t *n, uint64_t version, int64_t i)
{
    for (int b = 0; b < n->n_bufs; b++) {
        const ws_buf_t *x = &n->bufs[b];
        if (x->refs == 0 || x->version != version)
            continue;
        if (i >= 0 ? x->ready > (uint64_t)i : (x->filling && !x->leaked) || x->ready == n->n_chunks)
            return b;
    }
    return -1;
}

static int s_sum_source(const ws_node_t *n, uint64_t version)
{
    for (int b = 0; b < n->n_bufs; b++)
        if (n->bufs[b].refs > 0 && n->bufs[b].version == version && n->bufs[b].have_sum)
            return b;
    return -1;
}

/* ---- sends to children ------------------------------------------------------------------ */

static void s_out_start(ws_node_t *n, int c, uint64_t version)
{
    ws_out_t *o = &n->out[c];
    if (o->cap < n->n_chunks) {
        MPI_Request *req = realloc(o->req, n->n_chunks * sizeof *req);
        int *rb = req ? realloc(o->req_buf, n->n_chunks * sizeof *rb) : NULL;
        if (req)
            o->req = req;
        if (!req || !rb) {
            n->err = PV_ERR_NOMEM;
            return;
        }
        o->req_buf = rb;
        o->cap = n->n_chunks;
    }
    if ((o->owe_catchup && version <= o->noted_v) || o->new_child)
        n->st.catchups++; /* a version it skipped, or its first from this parent */
    o->owe_catchup = o->new_child = false;
    o->pin = s_source(n, version, -1); /* kept until the end: its checksum is needed last */
    n->bufs[o->pin].refs++;
    o->active = true;
    o->version = version;
    o->sent_v = version;
    o->posted = o->done = 0;
    o->end_posted = false;
    o->last_ms = ws_now_ms();
    o->xfer++;
    ws_msg_fill(n, o->begin_msg, WS_BEGIN, version);
    ws_msg_t m;
    memcpy(&m, o->begin_msg, sizeof m);
    ws_shm_offer(n, c, o->pin, &m);
    memcpy(o->begin_msg, &m, sizeof m);
    if (MPI_Isend(o->begin_msg, (int)n->msg_bytes, MPI_BYTE, c, PV_WSYNC_TAG, n->comm,
                  &o->begin_req) != MPI_SUCCESS)
        n->err = PV_ERR_MPI;
    n->st.sends++;
}

/* Newest version this rank can forward: the root's latest; a subscriber's newest verified
 * one or one arriving (forwarded chunk by chunk as it arrives). */
static uint64_t s_best(const ws_node_t *n)
{
    if (n->is_root)
        return n->latest_buf >= 0 ? n->latest_v : 0;
    uint64_t best = n->ok_version;
    if (n->bad_buf >= 0 && n->bufs[n->bad_buf].version > best)
        best = n->bufs[n->bad_buf].version; /* refused here: still sent on, children judge */
    for (int i = 0; i < WS_MAX_IN; i++)
        if (n->in[i].used && n->in[i].version > best && !n->bufs[n->in[i].buf].leaked)
            best = n->in[i].version;
    return best;
}

void ws_schedule(ws_node_t *n)
{
    uint64_t best = s_best(n);
    if (best == 0 || n->n_chunks == 0)
        return;
    for (int i = 0; i < n->n_children; i++) {
        ws_out_t *o = &n->out[n->children[i]];
        if (!o->active && !o->stalled && o->begin_req != MPI_REQUEST_NULL)
            continue; /* the last BEGIN has not been seen to leave (a transfer given up or
                       * ended on an answer before its BEGIN was tested): s_out_start reuses
                       * its buffer and request, so wait for the next pump to complete it */
        if (o->active || o->stalled) {
            if (best > o->version && best > o->noted_v) { /* it gets the newest when done */
                n->st.skipped++;
                o->noted_v = best;
                o->owe_catchup = true;
            }
            continue;
        }
        if (best > o->sent_v && s_source(n, best, -1) >= 0)
            s_out_start(n, n->children[i], best);
    }
}

static bool s_test(MPI_Request *r)
{
    int flag = 0;
    if (*r == MPI_REQUEST_NULL || MPI_Test(r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return false;
    return flag != 0;
}

/* Something of the child's is outstanding: a send, or the answer to a same-host offer. */
static bool s_pending(const ws_out_t *o)
{
    return o->done < o->posted || o->begin_req != MPI_REQUEST_NULL ||
           o->end_req != MPI_REQUEST_NULL || o->want_ack;
}

static void s_send_ctrl(ws_node_t *n, ws_out_t *o, int c, int kind)
{
    o->end_msg = (ws_msg_t){.magic = WS_MAGIC,
                            .kind = (uint16_t)kind,
                            .fanout = (uint16_t)n->fanout,
                            .version = o->version,
                            .n_params = n->n_params,
                            .epoch = n->epoch,
                            .chunk_bytes = n->chunk_bytes,
                            .n_ranks = (uint32_t)n->size,
                            .shm_fd = -1};
    if (kind == WS_END)
        o->end_msg.checksum = n->bufs[s_sum_source(n, o->version)].checksum;
    if (MPI_Isend(&o->end_msg, (int)sizeof o->end_msg, MPI_BYTE, c, PV_WSYNC_TAG, n->comm,
                  &o->end_req) != MPI_SUCCESS)
        n->err = PV_ERR_MPI;
}

static void s_out_end(ws_node_t *n, ws_out_t *o)
{
    o->active = false;
    ws_buf_unref(n, o->pin);
    o->pin = -1;
}

/* The child reads the version out of the pinned buffer: post END once the checksum is
 * known; finish once the child said DONE and END has left. The stall clock only runs once
 * the version is whole in the buffer and END is posted (the child cannot be blamed before). */
static bool s_advance_shm(ws_node_t *n, ws_out_t *o, int c, uint64_t now)
{
    const ws_buf_t *pb = &n->bufs[o->pin];
    if (pb->ready < n->n_chunks || !o->end_posted)
        o->last_ms = now;
    if (!o->end_posted && o->end_req == MPI_REQUEST_NULL && s_sum_source(n, o->version) >= 0) {
        s_send_ctrl(n, o, c, WS_END);
        o->end_posted = true;
        return true;
    }
    if (!pb->filling && pb->ready < n->n_chunks) { /* its transfer in was given up here */
        if (o->end_req != MPI_REQUEST_NULL)
            return false; /* END still leaving; ABORT follows it */
        s_send_ctrl(n, o, c, WS_ABORT);
        o->want_ack = false;
        s_out_end(n, o);
        o->owe_catchup = true;
        return true;
    }
    if (o->end_posted && !s_pending(o)) {
        s_out_end(n, o);
        return true;
    }
    return false;
}

void ws_out_ack(ws_node_t *n, int c, int kind, uint64_t version, uint64_t xfer)
{
    ws_out_t *o = &n->out[c];
    if (!o->want_ack || o->version != version || o->xfer != xfer)
        return; /* an old transfer's, already given up */
    o->want_ack = false;
    o->last_ms = ws_now_ms();
    if (kind == WS_A_DONE) {
        n->st.shm_sends++;
    } else if (kind == WS_A_NOSHM) { /* chunk messages from now on, starting with this one */
        n->st.shm_refusals++;
        o->shm = -1;
        o->shm_now = false;
    } else { /* LOST: the buffer was reused under its copy (after a stall); again */
        if (o->active)
            s_out_end(n, o);
        o->sent_v = 0;
        o->owe_catchup = true;
    }
    if (kind != WS_A_NOSHM)
        o->shm = 1;
}

/* Post what child c can be sent of its transfer; finish or give it up. */
static bool s_advance(ws_node_t *n, ws_out_t *o, int c, uint64_t now)
{
    if (o->shm_now)
        return s_advance_shm(n, o, c, now);
    bool moved = false;
    while (o->posted < n->n_chunks) {
        int b = s_source(n, o->version, o->posted);
        if (b < 0)
            break;
        size_t len = ws_chunk_len(n, o->posted);
        if (!s_pending(o))
            o->last_ms = now; /* the stall clock runs while something is in flight */
        if (MPI_Isend(n->bufs[b].bytes + (size_t)o->posted * n->chunk_bytes, (int)len, MPI_BYTE, c,
                      ws_tag(o->version), n->comm, &o->req[o->posted]) != MPI_SUCCESS) {
            n->err = PV_ERR_MPI;
            return moved;
        }
        n->bufs[b].refs++;
        o->req_buf[o->posted++] = b;
        n->st.chunks++;
        n->st.bytes_sent += len;
        moved = true;
    }
    if (o->posted == n->n_chunks && !o->end_posted && s_sum_source(n, o->version) >= 0 &&
        o->end_req == MPI_REQUEST_NULL) {
        s_send_ctrl(n, o, c, WS_END);
        o->end_posted = true;
        moved = true;
    }
    if (!o->end_posted && o->done == o->posted && o->end_req == MPI_REQUEST_NULL &&
        s_source(n, o->version, -1) < 0 &&
        (o->posted < n->n_chunks ? s_source(n, o->version, o->posted) < 0
                                 : s_sum_source(n, o->version) < 0)) {
        /* the version cannot be completed here any more (its transfer in was given up for a
         * newer one): tell the child, once what was posted has left, so it cancels */
        s_send_ctrl(n, o, c, WS_ABORT);
        s_out_end(n, o);
        o->owe_catchup = true;
        return true;
    }
    if (o->end_posted && o->done == n->n_chunks && !s_pending(o)) {
        s_out_end(n, o);
        moved = true;
    }
    return moved;
}

/* Complete, post and finish the sends to child c; detect a child that does not drain. */
static bool s_pump(ws_node_t *n, int c, uint64_t now)
{
    ws_out_t *o = &n->out[c];
    bool moved = s_test(&o->begin_req);
    moved |= s_test(&o->end_req);
    while (o->done < o->posted && s_test(&o->req[o->done])) {
        ws_buf_unref(n, o->req_buf[o->done]);
        o->done++;
        moved = true;
    }
    if (moved)
        o->last_ms = now;
    if (o->stalled) {
        if (s_pending(o))
            return moved;
        o->stalled = false; /* it drained after all (stopped, then resumed) */
    }
    if (o->active)
        moved |= s_advance(n, o, c, now);
    if (s_pending(o) && now - o->last_ms > (uint64_t)n->stall_ms) {
        o->stalled = true;
        n->st.stalled++;
        if (o->active && o->shm_now)
            s_out_end(n, o); /* its pin goes: a stopped child holds no buffer (want_ack stays:
                              * stalled until it answers) */
        ws_on_stalled(n, c, o->version);
    }
    return moved;
}

bool ws_pump_outs(ws_node_t *n, uint64_t now)
{
    bool moved = false;
    for (int c = 0; c < n->size; c++) {
        ws_out_t *o = &n->out[c];
        if (o->active || o->stalled || s_pending(o))
            moved |= s_pump(n, c, now);
    }
    uint32_t busy = 0;
    for (int i = 0; i < n->n_children; i++)
        busy += n->out[n->children[i]].active;
    if (!n->is_root)
        n->st.lagging = busy;
    return moved;
}

int ws_free_slot(MPI_Request *req, int n_slots)
{
    for (int i = 0; i < n_slots; i++) {
        int done = 1;
        if (req[i] != MPI_REQUEST_NULL)
            MPI_Test(&req[i], &done, MPI_STATUS_IGNORE);
        if (done)
            return i;
    }
    return -1;
}

int ws_recv_test(ws_node_t *n, MPI_Request *req, int *src, int *count)
{
    int done = 0;
    MPI_Status st;
    if (MPI_Test(req, &done, &st) != MPI_SUCCESS) {
        if (*req == MPI_REQUEST_NULL)
            return -1;
        n->err = PV_ERR_MPI;
        return -2;
    }
    if (!done)
        return 0;
    *src = st.MPI_SOURCE;
    MPI_Get_count(&st, MPI_BYTE, count);
    return 1;
}

/* Send one report; false when every slot is still in flight. */
static bool s_report_send(ws_node_t *n, const ws_report_t *rep)
{
    int i = ws_free_slot(n->rep_req, WS_N_REPORT);
    if (i < 0)
        return false;
    n->rep[i] = *rep;
    if (MPI_Isend(&n->rep[i], (int)sizeof n->rep[i], MPI_BYTE, n->root, PV_WSYNC_TAG_REPORT,
                  n->comm, &n->rep_req[i]) != MPI_SUCCESS)
        n->err = PV_ERR_MPI;
    return true;
}

void ws_report(ws_node_t *n, int kind, uint64_t version, int rank)
{
    ws_report_t rep = {WS_MAGIC, (uint32_t)kind, version, rank, n->rank};
    if (kind == WS_R_HAVE)
        n->have_ms = ws_now_ms();
    if (kind == WS_R_HAVE) { /* only the newest matters: kept in one place until sent */
        if (version >= n->owed_have) {
            n->owed_have = version;
            n->owe_have = true;
        }
    } else if (n->n_owed < WS_N_OWED) {
        n->owed[n->n_owed++] = rep;
    } /* else: dozens of reports the root has not taken; it is gone */
    ws_report_flush(n);
}

void ws_report_flush(ws_node_t *n)
{
    int k = 0;
    while (k < n->n_owed && s_report_send(n, &n->owed[k]))
        k++;
    memmove(n->owed, n->owed + k, (size_t)(n->n_owed - k) * sizeof *n->owed);
    n->n_owed -= k;
    ws_report_t have = {WS_MAGIC, WS_R_HAVE, n->owed_have, n->rank, n->rank};
    if (n->owe_have && n->n_owed == 0 && s_report_send(n, &have))
        n->owe_have = false;
}
