/* wire_scan.c - bound a MessagePack byte string before msgpack-c sees it; see wire_int.h.
 *
 * Walks the format bytes of the MessagePack specification (spec.md, "formats") with an
 * explicit stack of pending element counts, so it needs no allocation and no recursion.
 * After a successful scan every container's count is backed by that many objects actually
 * present in the bytes, so msgpack-c's count * sizeof(msgpack_object) allocations add up
 * to at most 48 bytes per input byte, and to at most 48 bytes per object under max_objects.
 */
#include "common/wire/wire_int.h"

static uint64_t s_be(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

pv_err_t pv_wire_scan(const uint8_t *p, size_t len, const pv_wire_limits_t *lim,
                      uint64_t *n_objects, pv_errmsg_t *em)
{
    uint64_t pending[PV_WIRE_MAX_DEPTH_CAP + 1];
    uint32_t top = 0; /* pending[0] holds the single top-level object */
    pending[0] = 1;
    size_t off = 0;
    uint64_t objects = 0;
    uint32_t max_depth =
        lim->max_depth < PV_WIRE_MAX_DEPTH_CAP ? lim->max_depth : PV_WIRE_MAX_DEPTH_CAP;
    *n_objects = 0;
    for (;;) {
        while (pending[top] == 0) {
            if (top == 0)
                goto done;
            top--;
        }
        pending[top]--;
        if (off >= len)
            return pv_errf(em, PV_ERR_TRUNCATED, "input ends at byte %zu inside an object", off);
        if (++objects > lim->max_objects)
            return pv_errf(em, PV_ERR_LIMIT, "more than %u objects", lim->max_objects);
        size_t at = off;
        uint8_t b = p[off++];
        size_t lenbytes = 0; /* bytes of a length/count field that follows */
        size_t skip = 0;     /* fixed payload bytes */
        enum { SCALAR, STR, BIN, ARRAY, MAP } what = SCALAR;
        uint64_t n = 0;
        if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
            /* positive / negative fixint, nil, false, true */
        } else if (b <= 0x8f) {
            what = MAP, n = b & 0x0f;
        } else if (b <= 0x9f) {
            what = ARRAY, n = b & 0x0f;
        } else if (b <= 0xbf) {
            what = STR, n = b & 0x1f;
        } else {
            switch (b) {
            case 0xcc:
            case 0xd0:
                skip = 1;
                break;
            case 0xcd:
            case 0xd1:
                skip = 2;
                break;
            case 0xca:
            case 0xce:
            case 0xd2:
                skip = 4;
                break;
            case 0xcb:
            case 0xcf:
            case 0xd3:
                skip = 8;
                break;
            case 0xd9:
                what = STR, lenbytes = 1;
                break;
            case 0xda:
                what = STR, lenbytes = 2;
                break;
            case 0xdb:
                what = STR, lenbytes = 4;
                break;
            case 0xc4:
                what = BIN, lenbytes = 1;
                break;
            case 0xc5:
                what = BIN, lenbytes = 2;
                break;
            case 0xc6:
                what = BIN, lenbytes = 4;
                break;
            case 0xdc:
                what = ARRAY, lenbytes = 2;
                break;
            case 0xdd:
                what = ARRAY, lenbytes = 4;
                break;
            case 0xde:
                what = MAP, lenbytes = 2;
                break;
            case 0xdf:
                what = MAP, lenbytes = 4;
                break;
            case 0xc1:
                return pv_errf(em, PV_ERR_PARSE, "byte %zu: 0xc1 is never used in MessagePack", at);
            default: /* 0xc7-0xc9, 0xd4-0xd8: extension types */
                return pv_errf(em, PV_ERR_TYPE, "byte %zu: extension type 0x%02x is not used", at,
                               b);
            }
        }
        size_t left = len - off;
        if (lenbytes + skip > left)
            return pv_errf(em, PV_ERR_TRUNCATED, "byte %zu: header 0x%02x needs %zu more bytes", at,
                           b, lenbytes + skip);
        if (lenbytes) {
            n = s_be(p + off, lenbytes);
            off += lenbytes;
            left -= lenbytes;
        }
        off += skip;
        switch (what) {
        case SCALAR:
            break;
        case STR:
            if (n > lim->max_str_bytes)
                return pv_errf(em, PV_ERR_LIMIT, "byte %zu: str of %llu bytes (limit %u)", at,
                               (unsigned long long)n, lim->max_str_bytes);
            /* fall through */
        case BIN:
            if (n > left)
                return pv_errf(em, PV_ERR_TRUNCATED, "byte %zu: %s claims %llu bytes, %zu are left",
                               at, what == STR ? "str" : "bin", (unsigned long long)n, left);
            off += (size_t)n;
            break;
        case ARRAY:
        case MAP:
            if (what == ARRAY && n > PV_WIRE_MAX_ARRAY)
                return pv_errf(em, PV_ERR_LIMIT, "byte %zu: array of %llu elements (limit %u)", at,
                               (unsigned long long)n, PV_WIRE_MAX_ARRAY);
            if (what == MAP && n > PV_WIRE_MAX_MAP)
                return pv_errf(em, PV_ERR_LIMIT, "byte %zu: map of %llu entries (limit %u)", at,
                               (unsigned long long)n, PV_WIRE_MAX_MAP);
            if (what == MAP)
                n *= 2; /* keys and values */
            if (n > left)
                return pv_errf(em, PV_ERR_TRUNCATED,
                               "byte %zu: container claims %llu objects, %zu bytes are left", at,
                               (unsigned long long)n, left);
            if (top + 1 > max_depth)
                return pv_errf(em, PV_ERR_LIMIT, "byte %zu: nesting deeper than %u", at, max_depth);
            pending[++top] = n;
            break;
        }
    }
done:
    if (off != len)
        return pv_errf(em, PV_ERR_PARSE, "%zu trailing bytes after the message", len - off);
    *n_objects = objects;
    return PV_OK;
}
