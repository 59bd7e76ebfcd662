/* checksum.h - the checksum of a policy version: XXH3-64 (xxHash, Y. Collet; libxxhash, seed
 * 0) of its parameter bytes, as they travel (little-endian float32).
 *
 * One rule for both weight paths: the MPI tree (common/weight_sync.h) and the broker relay
 * (WEIGHTS.xxh3, common/wire/wire_schema.h) carry this value, and every receiver recomputes
 * it before it applies a version. The result is XXH3_64bits(data, len) exactly (Python:
 * xxhash.xxh3_64_intdigest(data)); the functions here only pick the fastest vector path of
 * the header-only libxxhash build this CPU runs (AVX2 when present: 40 GB/s on data in cache
 * on the development machine, against 17 GB/s for the shared library's SSE2 build), so that
 * verifying costs a small fraction of moving the bytes.
 */
#ifndef PV_CHECKSUM_H
#define PV_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* XXH3-64 (seed 0) of len bytes (data may be NULL when len is 0). */
uint64_t pv_checksum(const void *data, size_t len);

/* A running checksum over bytes given in order, in pieces of any size: the digest equals
 * pv_checksum() of their concatenation. Opaque; about 600 bytes. */
typedef struct pv_checksum_state pv_checksum_state_t;

/* Allocate a state, reset. Errors: PV_ERR_NOMEM. */
pv_err_t pv_checksum_new(pv_checksum_state_t **out);

/* Free; clears *st. NULL-safe. */
void pv_checksum_destroy(pv_checksum_state_t **st);

/* Start over (nothing hashed yet). */
void pv_checksum_reset(pv_checksum_state_t *st);

/* Add the next len bytes. */
void pv_checksum_update(pv_checksum_state_t *st, const void *data, size_t len);

/* Copy len bytes from src to dst (not overlapping; either may be unaligned) and add them to
 * the running checksum, fused: in pieces of 32 KiB, each hashed from dst right after it is
 * copied, while it is still in the first-level caches, so the bytes come from memory once.
 * Same digest as memcpy then pv_checksum_update(st, dst, len). Used by the weights tree's
 * same-host path (common/wsync_shm.c): a receiver copies a version out of its parent's
 * shared buffer and verifies it in one pass. */
void pv_checksum_copy_update(pv_checksum_state_t *st, void *dst, const void *src, size_t len);

/* The checksum of everything added since the last reset (the state is unchanged). */
uint64_t pv_checksum_digest(const pv_checksum_state_t *st);

/* "avx2" or "sse2"/"scalar": the vector path in use, for logs and benchmarks. */
const char *pv_checksum_impl(void);

#endif
