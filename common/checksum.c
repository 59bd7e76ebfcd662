/* checksum.c - see checksum.h. */
#include "common/checksum.h"

#include <stdlib.h>
#include <string.h>

#define S_NAME(x) s_base_##x
#include "common/checksum_impl.h"

struct pv_checksum_state {
    XXH3_state_t st; /* 64-byte aligned member: the struct is allocated aligned */
};

typedef struct s_impl {
    uint64_t (*oneshot)(const void *, size_t);
    void (*reset)(XXH3_state_t *);
    void (*update)(XXH3_state_t *, const void *, size_t);
    uint64_t (*digest)(const XXH3_state_t *);
    const char *name;
} s_impl_t;

#ifdef PV_CHECKSUM_AVX2
uint64_t pv_checksum_avx2_oneshot(const void *data, size_t len);
void pv_checksum_avx2_reset(XXH3_state_t *st);
void pv_checksum_avx2_update(XXH3_state_t *st, const void *data, size_t len);
uint64_t pv_checksum_avx2_digest(const XXH3_state_t *st);
static const s_impl_t s_avx2 = {pv_checksum_avx2_oneshot, pv_checksum_avx2_reset,
                                pv_checksum_avx2_update, pv_checksum_avx2_digest, "avx2"};
#endif

static const s_impl_t s_base = {s_base_oneshot, s_base_reset, s_base_update, s_base_digest,
#if XXH_VECTOR == XXH_SSE2
                                "sse2"
#else
                                "scalar"
#endif
};

/* The CPU does not change while we run: the choice is a pure function, safe to repeat from
 * any thread (no cached global needed). */
static const s_impl_t *s_pick(void)
{
#ifdef PV_CHECKSUM_AVX2
    if (__builtin_cpu_supports("avx2"))
        return &s_avx2;
#endif
    return &s_base;
}

uint64_t pv_checksum(const void *data, size_t len)
{
    return s_pick()->oneshot(data, len);
}

pv_err_t pv_checksum_new(pv_checksum_state_t **out)
{
    pv_checksum_state_t *st = aligned_alloc(64, (sizeof *st + 63) / 64 * 64);
    if (!st)
        return PV_ERR_NOMEM;
    pv_checksum_reset(st);
    *out = st;
    return PV_OK;
}

void pv_checksum_destroy(pv_checksum_state_t **st)
{
    if (!st || !*st)
        return;
    free(*st);
    *st = NULL;
}

void pv_checksum_reset(pv_checksum_state_t *st)
{
    s_pick()->reset(&st->st);
}

void pv_checksum_update(pv_checksum_state_t *st, const void *data, size_t len)
{
    s_pick()->update(&st->st, data, len);
}

void pv_checksum_copy_update(pv_checksum_state_t *st, void *dst, const void *src, size_t len)
{
    enum { PIECE = 32 * 1024 }; /* copied and hashed while in L1 (32-48 KiB on x86-64) */
    const s_impl_t *im = s_pick();
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (size_t off = 0; off < len; off += PIECE) {
        size_t k = len - off < PIECE ? len - off : PIECE;
        memcpy(d + off, s + off, k);
        im->update(&st->st, d + off, k);
    }
}

uint64_t pv_checksum_digest(const pv_checksum_state_t *st)
{
    return s_pick()->digest(&st->st);
}

const char *pv_checksum_impl(void)
{
    return s_pick()->name;
}
