/* wsync_int.h - internals of common/weight_sync (not a public header).
 *
 * One engine serves both sides: a node (ws_node_t) holds the version buffers, the tree of the
 * current epoch, a send state per child (ws_out_t) and, on subscribers, the transfers being
 * received (ws_in_t). ws_step() makes every MPI call of a node; the helper thread (or, without
 * MPI_THREAD_MULTIPLE, the API calls) runs it under the node's mutex.
 *
 * Messages (on the node's communicator):
 *   PV_WSYNC_TAG         ws_msg_t: BEGIN (a version starts: its epoch, fanout, chunk size and
 *                        the cut-out bitmap follow), END (its checksum), EPOCH (a new tree,
 *                        bitmap follows), ABORT (the sender will not finish that version),
 *                        STOP (from the root).
 *   PV_WSYNC_TAG_DATA+v  the chunks of version v, in order, raw bytes.
 *   PV_WSYNC_TAG_REPORT  ws_report_t to the root: HAVE / REFUSED a version, STALLED child.
 *   PV_WSYNC_TAG_ACK     ws_ack_t to the parent, same-host path (wsync_shm.c): DONE (copied
 *                        out of the parent's shared buffer), LOST (the buffer was reused
 *                        under the copy: send again), NOSHM (offer refused: send chunks).
 * All integers little-endian (the hosts we run on); the bitmap has bit r%8 of byte r/8 set
 * when rank r is out of the tree.
 */
#ifndef PV_WSYNC_INT_H
#define PV_WSYNC_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "common/checksum.h"
#include "common/weight_sync.h"

#define WS_MAGIC      0x54575650u /* "PVWT" */
#define WS_MAX_BUFS   32
#define WS_MAX_IN     8
#define WS_TAG_SPAN   4096
#define WS_N_REPORT   16   /* reports in flight */
#define WS_N_OWED     64   /* reports waiting for a slot */
#define WS_ALIVE_MS   1000 /* a subscriber reports its version at least this often */
#define WS_MAX_PARAMS (1ull << 40)
#define WS_N_ACK      8          /* acks to parents in flight */
#define WS_N_MAPS     64         /* parents' shared buffers kept mapped */
#define WS_SHM_HDR    4096       /* a shared buffer: this header page, then the version's bytes */
#define WS_SHM_BUDGET (4u << 20) /* bytes a step copies at most out of shared memory */

enum { WS_BEGIN = 1, WS_END = 2, WS_EPOCH = 3, WS_ABORT = 4, WS_STOP = 5 };
enum { WS_R_HAVE = 1, WS_R_REFUSED = 2, WS_R_STALLED = 3 };
enum { WS_A_DONE = 1, WS_A_LOST = 2, WS_A_NOSHM = 3 };

typedef struct ws_msg {
    uint32_t magic;
    uint16_t kind;
    uint16_t fanout;
    uint64_t version;
    uint64_t n_params;
    uint64_t checksum; /* END: XXH3-64 of the version's bytes */
    uint64_t epoch;
    uint32_t chunk_bytes;
    uint32_t n_ranks; /* size of the communicator: bits in the bitmap */
    /* BEGIN, same-host offer (shm_fd -1: none): the version is in the sender's shared buffer
     * /proc/shm_pid/fd/shm_fd, generation shm_gen (wsync_shm.c) */
    int32_t shm_pid;
    int32_t shm_fd;
    uint64_t shm_host;  /* the sender's host (hash of processor name and boot id) */
    uint64_t shm_nonce; /* random, in the buffer's header: proves it is that buffer */
    uint64_t shm_gen;
    uint64_t shm_xfer; /* the transfer's number (per parent and child): matches its ack */
} ws_msg_t;

typedef struct ws_ack {
    uint32_t magic;
    uint32_t kind; /* WS_A_* */
    uint64_t version;
    uint64_t xfer; /* shm_xfer of the BEGIN answered */
} ws_ack_t;

/* The header page of a shared buffer, written by its owner only. gen changes (before any
 * byte of the new contents is written) each time the buffer is taken for another version;
 * ready is the prefix of chunks in place for generation gen. */
typedef struct ws_shm_hdr {
    uint64_t magic; /* WS_SHM_MAGIC */
    uint64_t nonce;
    uint64_t bytes;
    _Atomic uint64_t gen;
    _Atomic uint32_t ready;
} ws_shm_hdr_t;
#define WS_SHM_MAGIC 0x4d48535457565050ull /* "PPVWTSHM" */

/* A buffer's shared memory (fd -1: plain malloc) */
typedef struct ws_shm {
    int fd;
    ws_shm_hdr_t *hdr;
    size_t len; /* of the mapping: WS_SHM_HDR + bytes */
} ws_shm_t;

/* A parent's shared buffer, mapped read-only by a child */
typedef struct ws_map {
    pid_t pid;
    int fd;
    uint64_t nonce;
    unsigned char *base; /* (len) mapped PROT_READ: never written; NULL = free slot */
    size_t len;
    int users;     /* transfers in copying from it */
    uint64_t used; /* last use (a counter), for eviction */
} ws_map_t;

typedef struct ws_report {
    uint32_t magic;
    uint32_t kind;
    uint64_t version; /* HAVE, REFUSED */
    int32_t rank;     /* the reporting rank; STALLED: the child */
    int32_t from;     /* the reporting rank */
} ws_report_t;

typedef struct ws_buf {
    unsigned char *bytes; /* (node bytes) */
    uint64_t version;
    uint32_t ready; /* chunks in place: a prefix */
    bool have_sum;  /* checksum known (root: computed; subscriber: from END) */
    uint64_t checksum;
    bool filling; /* the publisher or a receive still writes it */
    bool bad;     /* refused: only a source for forwards still in progress */
    bool leaked;  /* a receive that could not be cancelled may write it: never reused */
    int refs;     /* pins: latest / newest verified / front, the receive, each chunk send,
                   * each same-host transfer until the child's DONE */
    ws_shm_t sh;
} ws_buf_t;

typedef struct ws_out {    /* this rank's sends to one child */
    bool active;           /* a transfer is in progress */
    bool stalled;          /* found not draining: nothing new is started */
    bool owe_catchup;      /* skipped a version: the next transfer is a catch-up */
    bool new_child;        /* became a child in a new epoch */
    uint64_t version;      /* the transfer in progress */
    uint64_t sent_v;       /* newest version whose transfer was started */
    uint64_t noted_v;      /* newest version counted as skipped */
    uint32_t posted, done; /* chunk sends posted / completed (in order) */
    bool end_posted;
    MPI_Request *req; /* (cap) chunk sends */
    int *req_buf;     /* (cap) buffer each reads */
    uint32_t cap;
    MPI_Request begin_req, end_req, epoch_req;
    unsigned char *begin_msg, *epoch_msg; /* (msg_bytes) */
    ws_msg_t end_msg;
    uint64_t last_ms; /* start of the transfer or the last completion */
    int pin;          /* a buffer of the version, pinned while the transfer lasts */
    int shm;          /* same-host path with this child: 0 not known yet, 1 yes, -1 refused */
    bool shm_now;     /* this transfer was offered through shared memory */
    bool want_ack;    /* its DONE / LOST / NOSHM has not come (counts as pending) */
    uint64_t xfer;    /* number of the transfer in progress (or last), carried in BEGIN */
} ws_out_t;

typedef struct ws_in { /* a transfer this subscriber receives */
    bool used;
    int src;
    uint64_t version;
    int buf;
    uint32_t ready, hashed; /* chunks received (prefix) / hashed */
    MPI_Request *req;       /* (cap) chunk receives */
    uint32_t cap;
    pv_checksum_state_t *hs;
    bool have_end;
    uint64_t last_ms;
    bool shm;      /* copied out of the parent's shared buffer, not received */
    int map;       /* its mapping (n->maps) */
    uint64_t gen;  /* the generation the parent offered */
    uint64_t xfer; /* the parent's transfer number */
    bool acked;    /* DONE / LOST sent */
} ws_in_t;

typedef struct ws_node {
    MPI_Comm comm;
    int rank, size, root;
    bool is_root;
    size_t n_params, bytes, msg_bytes; /* msg_bytes: ws_msg_t + bitmap */
    uint32_t chunk_bytes, n_chunks;    /* root: from opts; subscriber: from the first BEGIN */
    int fanout, stall_ms;
    uint64_t corrupt_version;
    uint64_t epoch;
    unsigned char *cut; /* (size) 1 = out of the tree in this epoch */
    int children[PV_WSYNC_FANOUT_MAX], n_children;
    ws_buf_t bufs[WS_MAX_BUFS];
    int n_bufs;
    ws_out_t *out; /* (size) */
    ws_in_t in[WS_MAX_IN];
    /* reports sent (subscriber) */
    ws_report_t rep[WS_N_REPORT];
    MPI_Request rep_req[WS_N_REPORT];
    ws_report_t owed[WS_N_OWED]; /* REFUSED / STALLED not sent yet, in order */
    int n_owed;
    uint64_t owed_have; /* newest HAVE not sent yet */
    uint64_t have_ms;   /* when this rank last reported its version */
    bool owe_have;
    /* subscriber */
    MPI_Request ctrl_req;
    unsigned char *ctrl_buf; /* (msg_bytes) */
    int ok_buf, front_buf;   /* newest verified version; the one the caller reads */
    int bad_buf;             /* newest refused version when newer than ok_buf, else -1 */
    uint64_t ok_version;
    int last_parent;
    bool stopped;
    uint64_t refused_seen, rejected_seen;
    /* root */
    MPI_Request rrecv_req;
    ws_report_t rrecv;
    uint64_t *settled; /* (size) newest version each rank reported */
    int latest_buf;
    int back_buf; /* taken by pv_wsync_pub_back, not published yet (-1 = none) */
    uint64_t latest_v;
    MPI_Request *stop_req; /* (size) */
    ws_msg_t stop_msg;
    /* both */
    pv_wsync_stats_t st;
    pv_err_t err; /* sticky MPI / allocation failure seen by ws_step */
    pthread_mutex_t mu;
    pthread_cond_t changed; /* a version verified or refused, a stop, lagging reached 0 */
    pthread_t thread;
    bool want_thread, threaded, sync_ok;
    bool event; /* set by a step: wake the waiters */
    atomic_bool quit;
    uint64_t eager_until_ms; /* the helper polls without sleeping until then */
    /* same-host path (wsync_shm.c) */
    bool shm_on; /* offer own buffers and accept the parent's (opts.shm, PV_WSYNC_SHM) */
    pid_t pid;
    uint64_t host; /* hash of MPI_Get_processor_name and the boot id */
    MPI_Request ack_req;
    ws_ack_t ack_in;
    MPI_Request ack_out_req[WS_N_ACK];
    ws_ack_t ack_out[WS_N_ACK];
    ws_map_t maps[WS_N_MAPS];
    uint64_t map_clock;
} ws_node_t;

struct pv_wsync_pub {
    ws_node_t n;
};
struct pv_wsync_sub {
    ws_node_t n;
};

/* ---- weight_sync.c: node life, the step, the helper thread ----------------------------- */
/* A new node (the root when want_root), its helper thread started when MPI allows.
 * Errors: PV_ERR_INVAL (wrong role, bad options, n_params 0 or above 2^40), PV_ERR_NOMEM,
 * PV_ERR_MPI. */
pv_err_t ws_node_new(MPI_Comm comm, int root, size_t n_params, const pv_wsync_opts_t *opts,
                     bool want_root, ws_node_t **out);
void ws_node_finish(ws_node_t *n);     /* stop the helper, bounded wait, free or leak */
bool ws_step(ws_node_t *n);            /* one round of progress; true when something moved */
void ws_nap(ws_node_t *n, bool moved); /* between steps without a helper thread */
uint64_t ws_now_ms(void);

/* ---- wsync_tree.c: tree, buffers, messages, sends to children -------------------------- */
void ws_tree_update(ws_node_t *n);
int ws_parent_of(const ws_node_t *n, int rank); /* -1 when out of the tree */
int ws_buf_get(ws_node_t *n, uint64_t version); /* a free buffer, pinned once; -1 NOMEM */
void ws_buf_unref(ws_node_t *n, int b);
size_t ws_chunk_len(const ws_node_t *n, uint32_t i);
int ws_tag(uint64_t version);
void ws_msg_fill(const ws_node_t *n, unsigned char *out, int kind, uint64_t version);
void ws_epoch_set(ws_node_t *n, uint64_t epoch, const unsigned char *bitmap, int fanout);
void ws_schedule(ws_node_t *n); /* start transfers to idle children */
bool ws_pump_outs(ws_node_t *n, uint64_t now);
void ws_report(ws_node_t *n, int kind, uint64_t version, int rank); /* to the root */
/* A slot of `req` (n_slots sends) whose send has completed, -1 when all are in flight. */
int ws_free_slot(MPI_Request *req, int n_slots);
/* Test the posted receive *req: 1 = a message arrived (its *src, *count bytes), 0 = not yet,
 * -1 = it completed in error (larger than the buffer: the caller counts it rejected),
 * -2 = MPI failed (n->err set). The caller posts the next receive after 1 and -1. */
int ws_recv_test(ws_node_t *n, MPI_Request *req, int *src, int *count);
void ws_report_flush(ws_node_t *n); /* send what ws_report had to keep */
/* Child `child` does not drain its transfer of `version`: cut it (root) or report it. */
void ws_on_stalled(ws_node_t *n, int child, uint64_t version);

/* ---- wsync_shm.c: the same-host path ------------------------------------------------- */
/* Options and identity (opts->shm, env PV_WSYNC_SHM=0, this host and pid); posts the ack
 * receive. Errors: PV_ERR_MPI. */
pv_err_t ws_shm_init(ws_node_t *n, const pv_wsync_opts_t *opts);
/* Bytes for a new buffer: a memfd shared mapping when shm_on (b->sh set), else malloc;
 * NULL when out of memory. */
unsigned char *ws_shm_alloc(const ws_node_t *n, ws_buf_t *b);
/* Map a parent's shared buffer /proc/pid/fd/fd_no read-only (WS_SHM_HDR + bytes) and check
 * it is the buffer offered: a regular file of at least that size, sealed against shrinking
 * (so a parent that lies cannot truncate it under the mapping and kill this rank with
 * SIGBUS), whose header holds WS_SHM_MAGIC, `nonce` and `bytes`. The checks are made on the
 * opened descriptor, not the path, and no FIFO, device or socket is opened. Returns the
 * mapping (munmap WS_SHM_HDR + bytes), or NULL when it is not such a buffer. */
unsigned char *ws_shm_map_peer(int pid, int fd_no, uint64_t nonce, uint64_t bytes);
/* Free a buffer's bytes: unmap and close its memfd, or free() a private one. */
void ws_shm_free(ws_buf_t *b);
/* The buffer is taken for another version: a new generation, nothing ready. */
void ws_shm_reuse(ws_buf_t *b);
/* Chunks [0, ready) of b are in place (published to its children through the header). */
void ws_buf_set_ready(ws_buf_t *b, uint32_t ready);
/* Fill BEGIN's offer (shm_* fields) for child c of a transfer from buffer b: an offer when
 * this rank and b are shared and c has not refused (o->shm_now set), else shm_fd = -1. */
void ws_shm_offer(ws_node_t *n, int c, int b, ws_msg_t *m);
/* Subscriber, BEGIN m from src: map the offered buffer into `in` (true), or refuse it
 * (NOSHM sent when an offer was made; false: receive chunks). */
bool ws_shm_accept(ws_node_t *n, ws_in_t *in, const ws_msg_t *m, int src);
/* Copy (and hash) what the parent made ready for `in`, at most about *budget bytes (a chunk
 * at least; *budget is decreased); sends DONE once whole. Returns 1 when something was
 * copied, 0 when nothing was ready, -1 when the parent reused the buffer (LOST sent: the
 * caller closes `in`). */
int ws_shm_pull(ws_node_t *n, ws_in_t *in, size_t *budget);
/* `in` is closed: its mapping is no longer used by it; LOST is sent if nothing was. */
void ws_shm_release(ws_node_t *n, ws_in_t *in);
/* Answer the parent (kind WS_A_*). */
void ws_shm_ack(ws_node_t *n, int parent, int kind, uint64_t version, uint64_t xfer);
/* Take the children's acks that have arrived (each goes to ws_out_ack). */
bool ws_shm_acks(ws_node_t *n);
/* wsync_tree.c: child c answered transfer xfer of `version` (kind WS_A_*). */
void ws_out_ack(ws_node_t *n, int c, int kind, uint64_t version, uint64_t xfer);
/* Unmap every parent buffer (node end). */
void ws_shm_finish(ws_node_t *n);

/* ---- wsync_sub.c / wsync_pub.c: the side-specific parts of a step ---------------------- */
bool ws_sub_step(ws_node_t *n, uint64_t now, bool before_outs);
bool ws_pub_step(ws_node_t *n, uint64_t now);
uint32_t ws_pub_lagging(const ws_node_t *n);

#endif
