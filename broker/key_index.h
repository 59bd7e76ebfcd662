/* key_index.h - open-addressing hash map from a 128-bit key to an int32 value.
 *
 * Linear probing with backward-shift deletion (Knuth, TAOCP vol. 3, 6.4, algorithm R), so
 * deletes leave no tombstones and lookups stay short under churn. Kept at most half full;
 * it grows by doubling and never shrinks, so a steady-state broker allocates nothing here.
 * The broker keys jobs by (job_id, service) and peers by two independent 64-bit hashes of
 * their routing id.
 */
#ifndef PV_KEY_INDEX_H
#define PV_KEY_INDEX_H

#include <stdint.h>

#include "common/err.h"

#define PV_KEY_ABSENT INT32_MIN /* value returned for a missing key; not storable */

typedef struct pv_key {
    uint64_t a, b;
} pv_key_t;

typedef struct pv_key_entry {
    pv_key_t key;
    int32_t value; /* PV_KEY_ABSENT marks an empty entry */
} pv_key_entry_t;

typedef struct pv_key_index {
    pv_key_entry_t *entries; /* (cap) */
    uint32_t cap, used;      /* cap is a power of two */
} pv_key_index_t;

/* Empty index with room for `expect` keys before it grows. Errors: PV_ERR_NOMEM. */
pv_err_t pv_key_index_init(pv_key_index_t *self, uint32_t expect);

/* Free the entries. NULL-safe. */
void pv_key_index_fini(pv_key_index_t *self);

/* Value of `key`, or PV_KEY_ABSENT. */
int32_t pv_key_get(const pv_key_index_t *self, pv_key_t key);

/* Insert or overwrite. `value` must not be PV_KEY_ABSENT. Errors: PV_ERR_NOMEM (index
 * unchanged). */
pv_err_t pv_key_put(pv_key_index_t *self, pv_key_t key, int32_t value);

/* Make room for one more key now, so a later pv_key_put of a new key cannot fail.
 * Errors: PV_ERR_NOMEM. */
pv_err_t pv_key_reserve(pv_key_index_t *self);

/* Remove `key`; returns 1 when it was present, 0 otherwise. */
int pv_key_del(pv_key_index_t *self, pv_key_t key);

#endif
