/* wsync_shm.c - the weights tree's same-host path (see weight_sync.h): version buffers in
 * shared memory (memfd), offers in BEGIN, children that map their parent's buffer and copy
 * each chunk out of it as it becomes ready, and their answers (wsync_int.h: ws_ack_t).
 *
 * A shared buffer is one memfd of WS_SHM_HDR + bytes: the header page (ws_shm_hdr_t: a
 * random nonce, the generation, the chunks ready), then the version's bytes, page-aligned.
 * Its owner alone writes it. Ordering: taking the buffer for another version stores the new
 * generation (sequentially consistent) and ready = 0 before any new byte is written; each
 * chunk is written, then ready is stored with release. A reader loads ready (acquire),
 * copies the chunks below it, then re-reads the generation after a full fence: unchanged,
 * the bytes it copied are that generation's (a seqlock); changed, it drops the copy. The
 * version's checksum is the last word either way. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/wsync_int.h"

/* ---- identity ---------------------------------------------------------------------------- */

/* This host: its MPI processor name and boot id (two containers of one machine with the same
 * host name still differ by pid namespace, which the nonce check catches). */
static uint64_t s_host(void)
{
    char buf[MPI_MAX_PROCESSOR_NAME + 64] = {0};
    int len = 0;
    if (MPI_Get_processor_name(buf, &len) != MPI_SUCCESS || len < 0)
        len = 0;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        size_t k = fread(buf + len, 1, sizeof buf - (size_t)len - 1, f);
        len += (int)k;
        fclose(f);
    }
    return pv_checksum(buf, (size_t)len);
}

pv_err_t ws_shm_init(ws_node_t *n, const pv_wsync_opts_t *opts)
{
    const char *env = getenv("PV_WSYNC_SHM");
    bool off = env && (strcmp(env, "0") == 0 || strcasecmp(env, "off") == 0 ||
                       strcasecmp(env, "false") == 0 || strcasecmp(env, "no") == 0);
    n->shm_on = opts->shm >= 0 && !off;
    n->pid = getpid();
    n->host = s_host();
    return MPI_Irecv(&n->ack_in, (int)sizeof n->ack_in, MPI_BYTE, MPI_ANY_SOURCE, PV_WSYNC_TAG_ACK,
                     n->comm, &n->ack_req) == MPI_SUCCESS
               ? PV_OK
               : PV_ERR_MPI;
}

/* ---- own buffers ------------------------------------------------------------------------- */

unsigned char *ws_shm_alloc(const ws_node_t *n, ws_buf_t *b)
{
    b->sh = (ws_shm_t){.fd = -1};
    if (n->shm_on) {
        size_t len = WS_SHM_HDR + n->bytes;
        int fd = memfd_create("pv-wsync", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        void *p = MAP_FAILED;
        if (fd >= 0 && ftruncate(fd, (off_t)len) == 0)
            p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        uint64_t nonce = 0;
        /* sealed against resizing, or not shared at all: a child refuses a buffer that could
         * shrink under its mapping (a read past the end would be SIGBUS) */
        if (p != MAP_FAILED && getrandom(&nonce, sizeof nonce, 0) == (ssize_t)sizeof nonce &&
            fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0) {
            ws_shm_hdr_t *h = p;
            h->magic = WS_SHM_MAGIC;
            h->nonce = nonce;
            h->bytes = n->bytes;
            atomic_store(&h->gen, 0);
            atomic_store(&h->ready, 0);
            b->sh = (ws_shm_t){.fd = fd, .hdr = h, .len = len};
            return (unsigned char *)p + WS_SHM_HDR;
        }
        if (p != MAP_FAILED)
            munmap(p, len);
        if (fd >= 0)
            close(fd);
        /* no shared memory here: a private buffer (its children get chunk messages) */
    }
    return malloc(n->bytes ? n->bytes : 1);
}

void ws_shm_free(ws_buf_t *b)
{
    if (b->sh.fd < 0) {
        free(b->bytes);
        return;
    }
    munmap(b->sh.hdr, b->sh.len);
    close(b->sh.fd);
}

void ws_shm_reuse(ws_buf_t *b)
{
    if (!b->sh.hdr)
        return;
    atomic_fetch_add(&b->sh.hdr->gen, 1); /* before any byte of the new contents */
    atomic_store_explicit(&b->sh.hdr->ready, 0, memory_order_release);
}

void ws_buf_set_ready(ws_buf_t *b, uint32_t ready)
{
    b->ready = ready;
    if (b->sh.hdr)
        atomic_store_explicit(&b->sh.hdr->ready, ready, memory_order_release);
}

void ws_shm_offer(ws_node_t *n, int c, int b, ws_msg_t *m)
{
    ws_out_t *o = &n->out[c];
    const ws_buf_t *x = &n->bufs[b];
    o->shm_now = n->shm_on && x->sh.hdr && o->shm >= 0;
    o->want_ack = o->shm_now;
    m->shm_fd = -1;
    m->shm_xfer = o->xfer;
    if (!o->shm_now)
        return;
    m->shm_pid = (int32_t)n->pid;
    m->shm_fd = x->sh.fd;
    m->shm_host = n->host;
    m->shm_nonce = x->sh.hdr->nonce;
    m->shm_gen = atomic_load(&x->sh.hdr->gen);
}

/* ---- a parent's buffers, mapped -------------------------------------------------------- */

static void s_unmap(ws_map_t *mp)
{
    munmap(mp->base, mp->len);
    *mp = (ws_map_t){0};
}

/* (wsync_int.h) */
unsigned char *ws_shm_map_peer(int pid, int fd_no, uint64_t nonce, uint64_t bytes)
{
    size_t len = WS_SHM_HDR + bytes;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, fd_no);
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < len)
        return NULL; /* no FIFO, device or socket is ever opened */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    int seals = fcntl(fd, F_GET_SEALS);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < len || seals < 0 ||
        !(seals & F_SEAL_SHRINK)) {
        close(fd);
        return NULL;
    }
    void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    close(fd); /* the mapping keeps the file */
    if (p == MAP_FAILED)
        return NULL;
    const ws_shm_hdr_t *h = p;
    if (h->magic != WS_SHM_MAGIC || h->nonce != nonce || h->bytes != bytes) {
        munmap(p, len);
        return NULL;
    }
    return p;
}

/* The mapping of the buffer BEGIN m offers, mapped now if need be; -1 when it cannot be. */
static int s_map_find(ws_node_t *n, const ws_msg_t *m)
{
    size_t len = WS_SHM_HDR + n->bytes;
    int slot = -1, victim = -1;
    for (int i = 0; i < WS_N_MAPS; i++) {
        ws_map_t *mp = &n->maps[i];
        if (!mp->base) {
            slot = slot < 0 ? i : slot;
            continue;
        }
        if (mp->pid == m->shm_pid && mp->fd == m->shm_fd && mp->nonce == m->shm_nonce)
            return i;
        if (mp->users == 0 && (mp->pid != m->shm_pid || mp->fd == m->shm_fd)) {
            /* another parent's (re-parented: a dead one's mapping would keep its memory), or
             * that fd is another buffer now */
            s_unmap(mp);
            slot = slot < 0 ? i : slot;
            continue;
        }
        if (mp->users == 0 && (victim < 0 || mp->used < n->maps[victim].used))
            victim = i;
    }
    if (slot < 0 && victim >= 0) {
        s_unmap(&n->maps[victim]);
        slot = victim;
    }
    if (slot < 0)
        return -1;
    unsigned char *p = ws_shm_map_peer((int)m->shm_pid, (int)m->shm_fd, m->shm_nonce, n->bytes);
    if (!p)
        return -1;
    n->maps[slot] = (ws_map_t){
        .pid = m->shm_pid, .fd = m->shm_fd, .nonce = m->shm_nonce, .base = p, .len = len};
    return slot;
}

/* The process has ended (or is ending: a zombie, or its files already closed). */
static bool s_gone(pid_t pid)
{
    char path[48], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return true;
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[k] = 0;
    const char *state = strrchr(buf, ')'); /* "pid (comm) S ...": comm may hold anything */
    if (!state || state[1] != ' ' || strchr("ZXx", state[2]))
        return true;
    snprintf(path, sizeof path, "/proc/%d/fd/0", (int)pid);
    struct stat st;
    return stat(path, &st) != 0 && errno == ENOENT; /* exit closed its files */
}

bool ws_shm_accept(ws_node_t *n, ws_in_t *in, const ws_msg_t *m, int src)
{
    if (m->shm_fd < 0)
        return false;
    int map = n->shm_on && m->shm_host == n->host ? s_map_find(n, m) : -1;
    if (map < 0) {
        if (!n->shm_on || m->shm_host != n->host || !s_gone(m->shm_pid))
            n->st.shm_refusals++; /* else the parent died since it offered: no refusal */
        ws_shm_ack(n, src, WS_A_NOSHM, m->version, m->shm_xfer);
        return false;
    }
    n->maps[map].users++;
    n->maps[map].used = ++n->map_clock;
    in->shm = true;
    in->map = map;
    in->gen = m->shm_gen;
    in->xfer = m->shm_xfer;
    in->acked = false;
    for (uint32_t k = 0; k < in->cap; k++)
        in->req[k] = MPI_REQUEST_NULL; /* nothing is received */
    return true;
}

int ws_shm_pull(ws_node_t *n, ws_in_t *in, size_t *budget)
{
    const ws_map_t *mp = &n->maps[in->map];
    ws_shm_hdr_t *h = (ws_shm_hdr_t *)(void *)mp->base; /* read only */
    const unsigned char *src = mp->base + WS_SHM_HDR;
    ws_buf_t *b = &n->bufs[in->buf];
    uint32_t ready = atomic_load_explicit(&h->ready, memory_order_acquire);
    bool moved = false, lost = false;
    if (atomic_load(&h->gen) != in->gen)
        lost = true;
    while (!lost && in->ready < ready && in->ready<n->n_chunks && * budget> 0) {
        size_t off = (size_t)in->ready * n->chunk_bytes, len = ws_chunk_len(n, in->ready);
        pv_checksum_copy_update(in->hs, b->bytes + off, src + off, len);
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load(&h->gen) != in->gen) {
            lost = true; /* reused under the copy: what was copied may be torn */
            break;
        }
        in->hashed = ++in->ready;
        ws_buf_set_ready(b, in->ready);
        *budget = *budget > len ? *budget - len : 0;
        moved = true;
    }
    if (lost) {
        if (!in->acked)
            ws_shm_ack(n, in->src, WS_A_LOST, in->version, in->xfer);
        in->acked = true;
        return -1;
    }
    if (in->ready == n->n_chunks && !in->acked) {
        n->st.shm_reads++;
        ws_shm_ack(n, in->src, WS_A_DONE, in->version, in->xfer);
        in->acked = true;
    }
    return moved ? 1 : 0;
}

void ws_shm_release(ws_node_t *n, ws_in_t *in)
{
    if (!in->shm)
        return;
    if (!in->acked) /* given up: the parent, if it still waits, sends it again */
        ws_shm_ack(n, in->src, WS_A_LOST, in->version, in->xfer);
    in->acked = true;
    if (n->maps[in->map].users > 0)
        n->maps[in->map].users--;
    in->shm = false;
}

void ws_shm_finish(ws_node_t *n)
{
    for (int i = 0; i < WS_N_MAPS; i++)
        if (n->maps[i].base)
            s_unmap(&n->maps[i]);
}

/* ---- acks -------------------------------------------------------------------------------- */

void ws_shm_ack(ws_node_t *n, int parent, int kind, uint64_t version, uint64_t xfer)
{
    int i = ws_free_slot(n->ack_out_req, WS_N_ACK);
    if (i < 0) { /* every slot in flight: the parent takes none; it finds this child stalled */
        n->st.acks_unsent++;
        return;
    }
    n->ack_out[i] = (ws_ack_t){WS_MAGIC, (uint32_t)kind, version, xfer};
    if (MPI_Isend(&n->ack_out[i], (int)sizeof n->ack_out[i], MPI_BYTE, parent, PV_WSYNC_TAG_ACK,
                  n->comm, &n->ack_out_req[i]) != MPI_SUCCESS)
        n->err = PV_ERR_MPI;
}

bool ws_shm_acks(ws_node_t *n)
{
    bool moved = false;
    while (n->ack_req != MPI_REQUEST_NULL) {
        int c = -1, count = 0, got = ws_recv_test(n, &n->ack_req, &c, &count);
        if (got == 0 || got == -2)
            break;
        ws_ack_t a = n->ack_in;
        if (got == 1 && count == (int)sizeof a && a.magic == WS_MAGIC && c >= 0 && c < n->size &&
            a.kind >= WS_A_DONE && a.kind <= WS_A_NOSHM)
            ws_out_ack(n, c, (int)a.kind, a.version, a.xfer);
        else
            n->st.rejected++; /* malformed, or completed in error (oversized) */
        moved = true;
        if (MPI_Irecv(&n->ack_in, (int)sizeof n->ack_in, MPI_BYTE, MPI_ANY_SOURCE, PV_WSYNC_TAG_ACK,
                      n->comm, &n->ack_req) != MPI_SUCCESS)
            n->err = PV_ERR_MPI;
    }
    return moved;
}
