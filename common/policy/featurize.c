/* featurize.c - hashed text features; see featurize.h. */
#include "common/policy/featurize.h"

#include <xxhash.h>

size_t pv_feat_words(const char *text, pv_word_t *out, size_t max)
{
    size_t n = 0;
    const unsigned char *s = (const unsigned char *)text;
    while (*s && n < max) {
        while (*s &&
               !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
            s++;
        if (!*s)
            break;
        char buf[PV_FEAT_WORD_MAX];
        size_t len = 0;
        bool digits = true;
        for (; (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9');
             s++) {
            char c = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
            digits = digits && c >= '0' && c <= '9';
            if (len < sizeof buf)
                buf[len++] = c;
        }
        out[n].h = XXH3_64bits(buf, len);
        out[n].digits = digits;
        n++;
    }
    return n;
}

uint32_t pv_feat_id(uint64_t tag, uint64_t a, uint64_t b, uint32_t n_buckets)
{
    uint64_t v[2] = {a, b};
    return (uint32_t)(XXH3_64bits_withSeed(v, sizeof v, tag) % n_buckets);
}

uint64_t pv_feat_hash(const void *data, size_t len)
{
    return XXH3_64bits(data, len);
}
