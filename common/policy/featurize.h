/* featurize.h - text to hashed feature ids for the bow_mlp policy.
 *
 * Words are maximal runs of ASCII letters and digits, lower-cased (other bytes separate
 * words; a word longer than PV_FEAT_WORD_MAX bytes is hashed on its first PV_FEAT_WORD_MAX).
 * A word is represented by its 64-bit XXH3 hash (xxHash, Y. Collet). A feature is a
 * (tag, a, b) triple of 64-bit values - tag names the field and feature type, a and b are
 * word hashes or small integers - hashed with XXH3 into [0, n_buckets): the hashing trick
 * (Weinberger et al. 2009, "Feature Hashing for Large Scale Multitask Learning").
 */
#ifndef PV_POLICY_FEATURIZE_H
#define PV_POLICY_FEATURIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PV_FEAT_WORD_MAX 48

typedef struct pv_word {
    uint64_t h;  /* XXH3 of the lower-cased word */
    bool digits; /* only digits ("1" in "cabinet 1") */
} pv_word_t;

/* Split `text` into at most `max` words (the rest is ignored); returns the count. */
size_t pv_feat_words(const char *text, pv_word_t *out, size_t max);

/* Feature id of (tag, a, b) in [0, n_buckets). */
uint32_t pv_feat_id(uint64_t tag, uint64_t a, uint64_t b, uint32_t n_buckets);

/* Hash of a byte string (XXH3, seed 0): the word hash of a word already lower-cased. */
uint64_t pv_feat_hash(const void *data, size_t len);

#endif
