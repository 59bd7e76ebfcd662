/* weight_sync.h - versioned policy weights from the learner to actors and verifiers over MPI.
 *
 * The learner (root of `comm`) publishes (policy version, float32 parameters); every other
 * rank of `comm` subscribes. A version travels as a pipelined broadcast built from
 * nonblocking point-to-point messages (the shape NCCL and MPI libraries use for large
 * broadcasts): it is cut into chunks (opts.chunk_bytes, 512 KiB by default), and every rank
 * forwards each chunk to its children in a k-ary tree (opts.fanout, 2 by default; 1 = a
 * chain) as soon as the chunk has arrived, straight from the buffer it arrived in.
 *
 * The tree. The ranks still in the tree are laid out in rank order, root first, as a heap:
 * the rank at position p has the ranks at positions k*p+1 .. k*p+k as children. Every
 * version and every re-formation carries the root's list of ranks cut out of the tree (an
 * "epoch"), so every rank computes the same tree.
 *
 * Failures (OpenMPI --enable-recovery keeps the job running when a rank dies or stops):
 * - A rank detects a child that does not drain: a send to it has been pending and none has
 *   completed for opts.stall_ms (2000 ms by default). It stops sending to that child and
 *   reports it to the root (the root acts on its own children at once).
 * - The root cuts the child out (a new epoch) and sends the new list down the tree; the
 *   stalled rank's subtree is re-parented by the heap rule over the ranks left, and every
 *   rank that gained a child sends it the newest version it has (catch-up). So a stopped or
 *   dead rank holds up only the ranks below it, and those for about stall_ms.
 * - Every subscriber reports to the root each version it finished (held or refused), and its
 *   newest version at least once a second. A rank cut out that reports (it was stopped, not
 *   dead, and resumed; or only slow) is taken back into the tree by the next epoch and
 *   caught up.
 * - A rank whose parent stopped mid-version gives that transfer up once it holds, or
 *   receives from another parent, a version at least as new and the old transfer has not
 *   moved for stall_ms; receives that cannot be cancelled leave their buffer leaked on
 *   purpose (freeing memory under a pending receive is undefined behaviour).
 * The stop message goes from the root to every rank directly, not through the tree.
 *
 * Guarantees:
 * - A version is verified before it is used: it carries XXH3-64 of its bytes
 *   (common/checksum.h, computed once by the root while the chunks are already on their
 *   way); every receiver hashes each chunk as it arrives and compares at the end. A
 *   mismatch is refused and counted; the receiver keeps its last good version, and
 *   pv_wsync_poll() returns PV_ERR_CHECKSUM for it (the caller logs).
 * - A version is applied whole or not at all, and versions are applied in increasing order;
 *   pv_wsync_poll() applies the newest verified version that has arrived, so a subscriber
 *   always ends on the latest complete version.
 * - The publisher never blocks on subscribers: pv_wsync_publish() copies the parameters into
 *   a snapshot buffer (the only copy on the root; the learner trains on while the snapshot
 *   is in flight) and returns; pv_wsync_pub_back() / pv_wsync_publish_back() let the caller
 *   write the version into the snapshot itself, so the root copies nothing. A child still
 *   receiving an older version skips the versions published meanwhile and is sent the
 *   newest one as soon as it is done (catch-up), at every level of the tree. Skips and
 *   catch-ups are counted.
 * - Receivers receive into a back buffer; nothing is copied again until the caller applies
 *   the version (pv_wsync_poll with params, or no copy at all with pv_wsync_sub_params).
 * - Progress: when MPI provides MPI_THREAD_MULTIPLE (common/world.h asks for it), each
 *   publisher and subscriber runs a helper thread that makes all of its MPI calls, so
 *   chunks move on while the role plays an episode or trains: an actor switches versions
 *   only between episodes (poll), and waits at most one episode for a version that has
 *   arrived. Without it, progress happens inside the calls below.
 * - Idle waiting does not spin: the helper sleeps 1 ms between tests when nothing has moved
 *   for 2 ms; while chunks move, or a caller is in pv_wsync_wait() (its first 50 ms), it
 *   tests continuously and yields the CPU between tests (as OpenMPI's yield-when-idle).
 * - Same host (common/wsync_shm.c): every rank's version buffers are shared memory
 *   (memfd_create, mmap). BEGIN offers the child the buffer the version is in (the sender's
 *   pid, the memfd's fd number, its generation and a random nonce that proves it is that
 *   file); a child on the same host opens /proc/PID/fd/N read-only, maps it, and copies
 *   each chunk into its own shared buffer as soon as the parent marks it ready in the
 *   buffer's header, hashing it in the same pass (pv_checksum_copy_update), so a version
 *   moves down a same-host tree as a pipeline of one copy per rank, without MPI messages for
 *   the bytes. It answers DONE (the parent unpins the buffer) or, unable to map it (another
 *   host, no /proc access, opts.shm = -1 or PV_WSYNC_SHM=0 (or off, false, no) in its environment),
 * NOSHM, and the parent sends that child chunk messages from then on. A parent never waits on a
 *   child's copy: a child that does not answer within stall_ms of the version being whole
 *   in the buffer is stalled like one that does not drain its sends, and its pin is dropped
 *   at once (a stopped child holds no buffer). If the buffer is then reused under a copy,
 *   the child sees the generation change, drops the copy (LOST: sent again) and the
 *   checksum would refuse any torn byte that slipped through.
 * Every rank must have called MPI_Init; `comm` is typically an MPI_Comm_split of the roles
 * that hold a policy copy, with MPI_ERRORS_RETURN.
 */
#ifndef PV_WEIGHT_SYNC_H
#define PV_WEIGHT_SYNC_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define PV_WSYNC_TAG        7101 /* MPI tag of control messages (begin, end, epoch, stop) */
#define PV_WSYNC_TAG_ACK    7102 /* children's answers to same-host offers (DONE, LOST, NOSHM) */
#define PV_WSYNC_TAG_REPORT 7103 /* subscribers' reports to the root */
#define PV_WSYNC_TAG_DATA   7200 /* chunks of version v: PV_WSYNC_TAG_DATA + v % 4096 */

#define PV_WSYNC_CHUNK_DEFAULT (512u * 1024u)
#define PV_WSYNC_FANOUT_MAX    16

typedef struct pv_wsync_pub pv_wsync_pub_t;
typedef struct pv_wsync_sub pv_wsync_sub_t;

/* Options; zero fields take the defaults. Only the root's chunk_bytes and fanout count (they
 * travel with every version); stall_ms and thread are each rank's own. */
typedef struct pv_wsync_opts {
    uint32_t chunk_bytes;     /* bytes per chunk (a multiple of 4, >= 4096; 0 = 512 KiB) */
    int fanout;               /* children per rank, 1 .. PV_WSYNC_FANOUT_MAX (0 = 2) */
    int stall_ms;             /* a child that drains nothing for this long is cut out (0 = 2000) */
    int thread;               /* 0 = helper thread when MPI_THREAD_MULTIPLE, -1 = never */
    int shm;                  /* 0 = same-host shared memory when possible, -1 = never (also
                               * env PV_WSYNC_SHM=0, off, false or no); each rank's own */
    uint64_t corrupt_version; /* test hook (root): flip one byte of this version after its
                               * checksum is computed, as a fault in flight would (0 = off) */
} pv_wsync_opts_t;

/* Counters of one rank; every rank forwards, so both sides have them. */
typedef struct pv_wsync_stats {
    uint64_t published;    /* root: versions given to pv_wsync_publish() or _publish_back() */
    uint64_t received;     /* subscriber: versions received whole and verified */
    uint64_t refused;      /* subscriber: versions refused (checksum mismatch); root: refusals
                            * reported by subscribers */
    uint64_t rejected;     /* subscriber: malformed control messages (bad magic, kind, size) */
    uint64_t sends;        /* version transfers started to children */
    uint64_t skipped;      /* (version, child) pairs skipped: the child was still receiving */
    uint64_t catchups;     /* transfers of the newest version to a child that had skipped one,
                            * or that became a child in a new epoch */
    uint64_t chunks;       /* chunks forwarded to children */
    uint64_t bytes_sent;   /* payload bytes handed to MPI */
    uint64_t stalled;      /* children found not draining (cut out, reported to the root) */
    uint64_t reparents;    /* root: epochs (tree re-formations); subscriber: versions that came
                            * from another parent than the version before */
    uint64_t epoch;        /* current epoch (0 = the tree of all ranks) */
    uint32_t lagging;      /* root: ranks in the tree that have not reported the newest
                            * version; subscriber: children with a transfer in progress */
    uint32_t cut_out;      /* ranks out of the tree in the current epoch */
    uint64_t last_refused; /* version of the last refusal (0 = none) */
    uint64_t shm_reads;    /* subscriber: versions copied whole out of a parent's shared buffer */
    uint64_t shm_sends;    /* transfers to children that copied them out of this rank's shared
                            * buffer (their DONE came) */
    uint64_t shm_refusals; /* same-host offers refused: as a subscriber, the offers it refused,
                            * plus, as a parent (the root, or a rank mid-tree), the NOSHM answers
                            * of its children: one sum */
    uint64_t acks_unsent;  /* same-host answers (DONE, LOST, NOSHM) not sent to the parent
                            * because all WS_N_ACK (8) send slots were still in flight; the
                            * parent then finds this rank stalled after opts.stall_ms and cuts
                            * it out, so nothing waits forever, but the transfer is lost */
    uint32_t pinned;       /* version buffers pinned now (the latest / newest verified / front
                            * version, the back buffer, transfers in and out); a stopped or dead
                            * same-host child holds none once found stalled */
} pv_wsync_stats_t;

/* ---- publisher (root) ----------------------------------------------------------------- */

/* Publisher on the root rank of `comm` for `n_params` floats (opts NULL = defaults).
 * Errors: PV_ERR_INVAL (not the root, bad options, n_params above 2^40), PV_ERR_NOMEM,
 * PV_ERR_MPI. */
pv_err_t pv_wsync_pub_new(MPI_Comm comm, int root, size_t n_params, const pv_wsync_opts_t *opts,
                          pv_wsync_pub_t **out);

/* Free the publisher; clears *pub. NULL-safe. Sends still pending (to dead or stopped ranks)
 * are abandoned and their buffers leaked on purpose (freeing memory under a pending
 * MPI_Isend would be undefined behaviour). */
void pv_wsync_pub_destroy(pv_wsync_pub_t **pub);

/* Publish `params` (n_params floats, copied into a snapshot and hashed) as `version`
 * (greater than the last one) and start sending it to the root's children that are idle.
 * Each chunk is sent on as soon as it is copied and hashed right after, while it is in
 * cache (the checksum travels last, in END). Returns once the snapshot is taken.
 * Errors: PV_ERR_INVAL (version not increasing; checked first, nothing allocated),
 * PV_ERR_NOMEM (no buffer: out of memory or all 32 pinned by sends), the sticky PV_ERR_MPI /
 * PV_ERR_NOMEM of an earlier step. */
pv_err_t pv_wsync_publish(pv_wsync_pub_t *self, uint64_t version, const float *params);

/* Publishing without a copy (the double buffer): write the next version into the buffer
 * this returns, then call pv_wsync_publish_back(). The buffer is (n_params) floats owned by
 * the publisher that no send in flight reads; its contents are undefined (an older
 * version). The same buffer is returned until it is published. NULL when none can be had:
 * out of memory, every buffer pinned by sends to stalled children, or the publisher holds
 * a sticky MPI or allocation error (pv_wsync_publish_back then returns it). */
float *pv_wsync_pub_back(pv_wsync_pub_t *self);

/* Publish the buffer from pv_wsync_pub_back() as `version` (greater than the last one)
 * without copying it: the sends of every chunk start at once and the checksum is computed
 * while the children read them (END follows it). The caller must not write the buffer
 * afterwards, nor rely on reading it: it belongs to the sends and is reused once they are
 * done (the next pv_wsync_pub_back() gives another one). Errors: PV_ERR_INVAL (no back
 * buffer taken, version not increasing; the buffer stays the back buffer), the sticky
 * PV_ERR_MPI / PV_ERR_NOMEM of an earlier step. */
pv_err_t pv_wsync_publish_back(pv_wsync_pub_t *self, uint64_t version);

/* Send the stop message to every other rank of comm and wait up to timeout_ms (-1 =
 * forever) for the sends to complete. *n_unreached (may be NULL) receives how many did not
 * (dead ranks; an eager send to a dead rank may still complete). Errors: PV_ERR_MPI,
 * PV_ERR_NOMEM. */
pv_err_t pv_wsync_stop(pv_wsync_pub_t *self, int timeout_ms, int *n_unreached);

/* Counters so far (drives progress first when there is no helper thread). */
pv_wsync_stats_t pv_wsync_pub_stats(pv_wsync_pub_t *self);

/* Wait until every rank in the tree has reported the newest version (stats.lagging == 0:
 * held or refused), or timeout_ms passes (-1 = forever). Ranks cut out of the tree do not
 * count. Errors: PV_ERR_TIMEOUT, PV_ERR_MPI, PV_ERR_NOMEM. */
pv_err_t pv_wsync_pub_wait(pv_wsync_pub_t *self, int timeout_ms);

/* Drive progress when there is no helper thread (call it regularly while waiting on
 * something else); a cheap read otherwise. Returns stats.lagging: the ranks in the tree
 * that have not reported the newest version yet. */
uint32_t pv_wsync_progress(pv_wsync_pub_t *self);

/* ---- subscriber ----------------------------------------------------------------------- */

/* Subscriber on a non-root rank (opts NULL = defaults); posts its first receive.
 * Errors: PV_ERR_INVAL, PV_ERR_NOMEM, PV_ERR_MPI. */
pv_err_t pv_wsync_sub_new(MPI_Comm comm, int root, size_t n_params, const pv_wsync_opts_t *opts,
                          pv_wsync_sub_t **out);

/* Free the subscriber; clears *sub. NULL-safe. Pending receives are cancelled; one that
 * cannot be (it matched a message whose sender died mid-transfer) or a send to a child that
 * never drains is waited for at most 2 s in all, then abandoned with its buffer (leaked on
 * purpose) so that the process can still end. */
void pv_wsync_sub_destroy(pv_wsync_sub_t **sub);

/* Apply the newest verified version that has arrived, if it is newer than *version: on
 * return *version is the version applied (unchanged when nothing newer arrived), *stop is
 * true once the stop message came (it stays true). params: (n_params) floats, written only
 * with a whole, verified version; NULL = no copy (read it with pv_wsync_sub_params).
 * Errors (after applying what could be applied): PV_ERR_CHECKSUM (a version was refused
 * since the last call: stats.last_refused says which), PV_ERR_DATA (a malformed message was
 * skipped), PV_ERR_MPI, PV_ERR_NOMEM. */
pv_err_t pv_wsync_poll(pv_wsync_sub_t *self, float *params, uint64_t *version, bool *stop);

/* Like poll, but wait until *version >= min_version, a stop arrives, or timeout_ms passes
 * (-1 = forever). Refusals and malformed messages do not end the wait (they are counted).
 * Errors: PV_ERR_TIMEOUT, PV_ERR_MPI, PV_ERR_NOMEM. */
pv_err_t pv_wsync_wait(pv_wsync_sub_t *self, uint64_t min_version, int timeout_ms, float *params,
                       uint64_t *version, bool *stop);

/* The parameters of the version last applied by poll/wait with params == NULL: (n_params)
 * floats owned by the subscriber, valid until the next poll or wait; NULL before the first. */
const float *pv_wsync_sub_params(const pv_wsync_sub_t *self);

/* Counters so far. */
pv_wsync_stats_t pv_wsync_sub_stats(pv_wsync_sub_t *self);

/* Malformed control messages seen (stats.rejected). */
uint64_t pv_wsync_sub_rejected(pv_wsync_sub_t *self);

#endif
