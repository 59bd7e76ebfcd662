/* wire_buf.c - the caller-owned growable byte buffer; see wire.h. */
#include "common/wire/wire.h"

#include <stdlib.h>
#include <string.h>

static size_t s_max(const pv_wire_buf_t *buf)
{
    return buf->max ? buf->max : PV_WIRE_DEFAULT_MAX_MSG_BYTES;
}

void pv_wire_buf_init(pv_wire_buf_t *buf, size_t max_bytes)
{
    buf->data = NULL;
    buf->len = 0;
    buf->cap = 0;
    buf->max = max_bytes;
}

void pv_wire_buf_free(pv_wire_buf_t *buf)
{
    if (!buf)
        return;
    free(buf->data);
    buf->data = NULL;
    buf->len = 0;
    buf->cap = 0;
}

pv_err_t pv_wire_buf_reserve(pv_wire_buf_t *buf, size_t n)
{
    if (n <= buf->cap)
        return PV_OK;
    size_t max = s_max(buf);
    if (n > max)
        return PV_ERR_LIMIT;
    size_t cap = buf->cap ? buf->cap : 4096;
    while (cap < n)
        cap = cap > max / 2 ? max : cap * 2;
    uint8_t *p = realloc(buf->data, cap);
    if (!p)
        return PV_ERR_NOMEM;
    buf->data = p;
    buf->cap = cap;
    return PV_OK;
}

pv_err_t pv_wire_buf_append(pv_wire_buf_t *buf, const void *p, size_t n)
{
    if (n > SIZE_MAX - buf->len)
        return PV_ERR_LIMIT;
    pv_err_t err = pv_wire_buf_reserve(buf, buf->len + n);
    if (err)
        return err;
    if (n)
        memcpy(buf->data + buf->len, p, n);
    buf->len += n;
    return PV_OK;
}
