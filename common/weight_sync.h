/* weight_sync.h - versioned policy weights from the learner to actors and verifiers over MPI.
 *
 * The learner (root of `comm`) publishes (policy version, float32 parameters); every other
 * rank of `comm` subscribes. The transport is a star of nonblocking point-to-point sends
 * (MPI_Isend / MPI_Irecv), not MPI_Bcast, on purpose: with OpenMPI's --enable-recovery a
 * killed actor or verifier only stalls the sends addressed to it, while a collective would
 * stall every rank below it in the broadcast tree. The cost is root bandwidth (the root sends
 * the weights once per subscriber); the benchmark compares it with a raw MPI_Bcast.
 *
 * Guarantees:
 * - A version is applied whole or not at all: it is received into a back buffer, its
 *   header (magic, parameter count, message size) is checked, and only then it is copied
 *   into the caller's parameters. MPI delivers bytes intact, so no checksum is computed on
 *   this path (a crc32 of 64 MiB on both ends cost more than the transfer itself); the
 *   broker relay, which crosses process boundaries through ZeroMQ, carries a crc32.
 * - Versions arrive in order (MPI's non-overtaking rule) and pv_wsync_poll() drains all
 *   that have arrived, so a subscriber always ends on the latest complete version.
 * - The publisher never blocks: a subscriber whose previous send has not completed (slow,
 *   or dead) skips the versions published meanwhile, and is sent the newest one as soon as
 *   that send completes (catch-up, in pv_wsync_progress / publish), so a subscriber never
 *   waits for the next update to get a version it missed. Skips and catch-ups are counted.
 * - Idle waiting sleeps between tests (no spinning), as oversubscribed ranks need.
 * Every rank must have called MPI_Init; `comm` is typically an MPI_Comm_split of the roles
 * that hold a policy copy.
 */
#ifndef PV_WEIGHT_SYNC_H
#define PV_WEIGHT_SYNC_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define PV_WSYNC_TAG 7101 /* MPI tag of weight messages */

typedef struct pv_wsync_pub pv_wsync_pub_t;
typedef struct pv_wsync_sub pv_wsync_sub_t;

/* Counters of a publisher. */
typedef struct pv_wsync_pub_stats {
    uint64_t published;  /* versions given to pv_wsync_publish() */
    uint64_t sends;      /* point-to-point sends started */
    uint64_t skipped;    /* (version, subscriber) pairs skipped: previous send still pending */
    uint64_t catchups;   /* sends of the newest version to a subscriber that had skipped */
    uint32_t lagging;    /* subscribers whose last send is still pending */
    uint64_t bytes_sent; /* payload bytes handed to MPI */
} pv_wsync_pub_stats_t;

/* Publisher on the root rank of `comm` for `n_params` floats. Errors: PV_ERR_INVAL (not
 * the root, n_params too large for one message), PV_ERR_NOMEM, PV_ERR_MPI. */
pv_err_t pv_wsync_pub_new(MPI_Comm comm, int root, size_t n_params, pv_wsync_pub_t **out);

/* Free the publisher; clears *pub. Sends still pending (to dead ranks) are abandoned. */
void pv_wsync_pub_destroy(pv_wsync_pub_t **pub);

/* Start sending `params` (n_params floats, copied) as `version` to every subscriber whose
 * previous send has completed. Returns at once. Errors: PV_ERR_MPI, PV_ERR_NOMEM. */
pv_err_t pv_wsync_publish(pv_wsync_pub_t *self, uint64_t version, const float *params);

/* Send the stop message to every subscriber and wait up to timeout_ms for the sends to
 * complete (dead subscribers never complete). *n_unreached receives how many did not.
 * Errors: PV_ERR_MPI. */
pv_err_t pv_wsync_stop(pv_wsync_pub_t *self, int timeout_ms, int *n_unreached);

/* Counters so far. */
pv_wsync_pub_stats_t pv_wsync_pub_stats(pv_wsync_pub_t *self);

/* Drive pending sends (MPI moves large messages only while the sender makes MPI calls):
 * call it regularly while waiting on something else. Returns the subscribers whose send is
 * still pending. */
uint32_t pv_wsync_progress(pv_wsync_pub_t *self);

/* Subscriber on a non-root rank; posts its first receive. Errors: PV_ERR_INVAL,
 * PV_ERR_NOMEM, PV_ERR_MPI. */
pv_err_t pv_wsync_sub_new(MPI_Comm comm, int root, size_t n_params, pv_wsync_sub_t **out);

/* Free the subscriber (cancels its pending receive); clears *sub. NULL-safe. A receive
 * that cannot be cancelled because it already matched a message whose sender died during
 * the transfer never completes: after 2 s of waiting the request and its buffer are
 * abandoned (leaked on purpose; freeing memory under a pending receive is undefined
 * behaviour) so that the process can still end. */
void pv_wsync_sub_destroy(pv_wsync_sub_t **sub);

/* Apply every complete version that has arrived: on return *version is the version now in
 * params (unchanged when nothing arrived), *stop is true once the stop message came.
 * params: (n_params) floats, written only with a whole, checked version.
 * Errors: PV_ERR_DATA (a corrupt message: counted, skipped, receive reposted), PV_ERR_MPI. */
pv_err_t pv_wsync_poll(pv_wsync_sub_t *self, float *params, uint64_t *version, bool *stop);

/* Like poll, but wait (sleeping 1 ms between tests) until *version >= min_version, a stop
 * arrives, or timeout_ms passes (-1 = forever). Errors: PV_ERR_TIMEOUT, as poll. */
pv_err_t pv_wsync_wait(pv_wsync_sub_t *self, uint64_t min_version, int timeout_ms, float *params,
                       uint64_t *version, bool *stop);

/* Corrupt messages seen (bad magic, size or count). */
uint64_t pv_wsync_sub_rejected(const pv_wsync_sub_t *self);

#endif
