/* state_io.h - little-endian writers and bounds-checked readers for saved environment
 * states (header-only, internal to common/env). A writer that runs out of room and a reader
 * that runs out of bytes set `bad` and turn every later call into a no-op, so a save or
 * load checks once at the end. */
#ifndef PV_STATE_IO_H
#define PV_STATE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/err.h"

typedef struct pv_sio {
    uint8_t *w;       /* writer buffer (NULL for a reader) */
    const uint8_t *r; /* reader buffer */
    size_t len;       /* bytes written / read so far */
    size_t cap;       /* buffer size */
    bool bad;
} pv_sio_t;

static inline void pv_sio_put(pv_sio_t *s, const void *p, size_t n)
{
    if (s->bad || s->cap - s->len < n) {
        s->bad = true;
        return;
    }
    memcpy(s->w + s->len, p, n);
    s->len += n;
}

static inline void pv_sio_u8(pv_sio_t *s, uint8_t v)
{
    pv_sio_put(s, &v, 1);
}

static inline void pv_sio_u32(pv_sio_t *s, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    pv_sio_put(s, b, 4);
}

static inline void pv_sio_u64(pv_sio_t *s, uint64_t v)
{
    pv_sio_u32(s, (uint32_t)v);
    pv_sio_u32(s, (uint32_t)(v >> 32));
}

static inline void pv_sio_f32(pv_sio_t *s, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    pv_sio_u32(s, u);
}

static inline bool pv_sio_get(pv_sio_t *s, void *p, size_t n)
{
    if (s->bad || s->cap - s->len < n) {
        s->bad = true;
        memset(p, 0, n);
        return false;
    }
    memcpy(p, s->r + s->len, n);
    s->len += n;
    return true;
}

static inline uint8_t pv_sio_get_u8(pv_sio_t *s)
{
    uint8_t v;
    pv_sio_get(s, &v, 1);
    return v;
}

static inline uint32_t pv_sio_get_u32(pv_sio_t *s)
{
    uint8_t b[4];
    pv_sio_get(s, b, 4);
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline uint64_t pv_sio_get_u64(pv_sio_t *s)
{
    uint64_t lo = pv_sio_get_u32(s);
    return lo | (uint64_t)pv_sio_get_u32(s) << 32;
}

static inline float pv_sio_get_f32(pv_sio_t *s)
{
    uint32_t u = pv_sio_get_u32(s);
    float v;
    memcpy(&v, &u, 4);
    return v;
}

/* A family payload starts with its payload version and the model fingerprint. */
static inline void pv_sio_head(pv_sio_t *s, uint32_t version, uint64_t fingerprint)
{
    pv_sio_u32(s, version);
    pv_sio_u64(s, fingerprint);
}

/* Read and check that start: PV_ERR_VERSION / PV_ERR_INVAL (another model) with detail in
 * em naming `family`; PV_OK also when the bytes ran out (the caller reports truncation). */
static inline pv_err_t pv_sio_check_head(pv_sio_t *s, uint32_t version, uint64_t fingerprint,
                                         const char *family, pv_errmsg_t *em)
{
    uint32_t v = pv_sio_get_u32(s);
    if (!s->bad && v != version)
        return pv_errf(em, PV_ERR_VERSION, "%s state version %u, expected %u", family, v, version);
    uint64_t fp = pv_sio_get_u64(s);
    if (!s->bad && fp != fingerprint)
        return pv_errf(em, PV_ERR_INVAL, "%s state from another model (data or settings)", family);
    return PV_OK;
}

#endif
