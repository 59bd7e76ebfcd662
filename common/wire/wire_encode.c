/* wire_encode.c - descriptor-driven MessagePack encoder (msgpack-c packer); see wire.h. */
#include "common/wire/wire_int.h"

#include <math.h>
#include <string.h>

#include <msgpack.h>

typedef struct s_enc {
    msgpack_packer pk;
    pv_wire_buf_t *out;
    const pv_wire_limits_t *lim;
    size_t max_bytes;
    uint64_t objects;
    pv_err_t write_err; /* why the write callback refused */
    pv_wire_path_t path;
    pv_errmsg_t *em;
} s_enc_t;

static int s_write(void *data, const char *buf, size_t len)
{
    s_enc_t *e = data;
    if (len > e->max_bytes - e->out->len) {
        e->write_err = PV_ERR_LIMIT;
        return -1;
    }
    pv_err_t err = pv_wire_buf_append(e->out, buf, len);
    if (err) {
        e->write_err = err;
        return -1;
    }
    return 0;
}

/* A msgpack_pack_* return value: 0, or -1 when s_write refused. */
static pv_err_t s_packed(s_enc_t *e, int rc)
{
    if (rc == 0)
        return PV_OK;
    if (e->write_err == PV_ERR_LIMIT)
        return pv_wire_fail(&e->path, e->em, PV_ERR_LIMIT, "message exceeds %zu bytes",
                            e->max_bytes);
    return pv_wire_fail(&e->path, e->em, e->write_err ? e->write_err : PV_ERR_INTERNAL,
                        "packing failed");
}

static pv_err_t s_count(s_enc_t *e, uint64_t n)
{
    e->objects += n;
    if (e->objects > e->lim->max_objects)
        return pv_wire_fail(&e->path, e->em, PV_ERR_LIMIT, "more than %u objects",
                            e->lim->max_objects);
    return PV_OK;
}

static pv_err_t s_str(s_enc_t *e, const char *s, uint64_t max)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    if (n > max)
        return pv_wire_fail(&e->path, e->em, PV_ERR_LIMIT, "string of %zu bytes (limit %llu)", n,
                            (unsigned long long)max);
    if (!pv_wire_utf8_ok(s, n))
        return pv_wire_fail(&e->path, e->em, PV_ERR_INVAL, "string is not valid UTF-8");
    return s_packed(e, msgpack_pack_str_with_body(&e->pk, s, n));
}

static pv_err_t s_struct(s_enc_t *e, const pv_wire_struct_t *sd, const void *obj);

/* One value of scalar kind `kind` (an array element or a plain field) at `p`. */
static pv_err_t s_value(s_enc_t *e, const pv_wire_field_t *f, pv_wire_kind_t kind, const void *p)
{
    pv_err_t err;
    switch (kind) {
    case PV_WIRE_K_U8:
        if ((err = pv_wire_check_uint(f, kind, *(const uint8_t *)p, &e->path, e->em)))
            return err;
        return s_packed(e, msgpack_pack_uint8(&e->pk, *(const uint8_t *)p));
    case PV_WIRE_K_U32:
        if ((err = pv_wire_check_uint(f, kind, *(const uint32_t *)p, &e->path, e->em)))
            return err;
        return s_packed(e, msgpack_pack_uint32(&e->pk, *(const uint32_t *)p));
    case PV_WIRE_K_U64:
        if ((err = pv_wire_check_uint(f, kind, *(const uint64_t *)p, &e->path, e->em)))
            return err;
        return s_packed(e, msgpack_pack_uint64(&e->pk, *(const uint64_t *)p));
    case PV_WIRE_K_F32: {
        float v = *(const float *)p;
        if (!isfinite(v))
            return pv_wire_fail(&e->path, e->em, PV_ERR_RANGE, "float is not finite");
        return s_packed(e, msgpack_pack_float(&e->pk, v));
    }
    case PV_WIRE_K_BOOL:
        return s_packed(e,
                        *(const bool *)p ? msgpack_pack_true(&e->pk) : msgpack_pack_false(&e->pk));
    case PV_WIRE_K_STR: {
        uint64_t max =
            f->kind == PV_WIRE_K_STR ? pv_wire_field_max_bytes(f, e->lim) : e->lim->max_str_bytes;
        return s_str(e, *(const char *const *)p, max);
    }
    case PV_WIRE_K_BIN: {
        const pv_wire_bin_t *b = p;
        uint64_t max = pv_wire_field_max_bytes(f, e->lim);
        if (b->len > max)
            return pv_wire_fail(&e->path, e->em, PV_ERR_LIMIT, "bin of %zu bytes (limit %llu)",
                                b->len, (unsigned long long)max);
        if (b->len && !b->ptr)
            return pv_wire_fail(&e->path, e->em, PV_ERR_INVAL, "bin has a length but no bytes");
        return s_packed(e, msgpack_pack_bin_with_body(&e->pk, b->ptr, b->len));
    }
    case PV_WIRE_K_OBJ:
        return s_struct(e, f->sub, p);
    default:
        return pv_wire_fail(&e->path, e->em, PV_ERR_INTERNAL, "bad kind %d", (int)kind);
    }
}

static pv_err_t s_field(s_enc_t *e, const pv_wire_field_t *f, const void *obj)
{
    const char *p = (const char *)obj + f->off;
    pv_wire_kind_t ek = pv_wire_elem_kind(f->kind);
    if (ek == f->kind)
        return s_value(e, f, f->kind, p);
    uint32_t n = pv_wire_get_count(f, obj);
    const char *elems;
    memcpy(&elems, p, sizeof elems); /* the member is a typed pointer: copy, do not pun */
    if (n > f->max)
        return pv_wire_fail(&e->path, e->em, PV_ERR_LIMIT, "%u elements (limit %llu)", n,
                            (unsigned long long)f->max);
    if (n && !elems)
        return pv_wire_fail(&e->path, e->em, PV_ERR_INVAL, "%u elements but a NULL array", n);
    pv_err_t err = s_packed(e, msgpack_pack_array(&e->pk, n));
    if (!err)
        err = s_count(e, n);
    size_t es = pv_wire_elem_size(f);
    for (uint32_t i = 0; i < n && !err; i++) {
        pv_wire_path_index(&e->path, i);
        err = s_value(e, f, ek, elems + (size_t)i * es);
    }
    pv_wire_path_index(&e->path, -1);
    return err;
}

static pv_err_t s_struct(s_enc_t *e, const pv_wire_struct_t *sd, const void *obj)
{
    pv_err_t err = s_packed(e, msgpack_pack_map(&e->pk, sd->n_fields));
    if (!err)
        err = s_count(e, 2 * (uint64_t)sd->n_fields);
    for (uint32_t i = 0; i < sd->n_fields && !err; i++) {
        const pv_wire_field_t *f = &sd->fields[i];
        err = s_packed(e, msgpack_pack_str_with_body(&e->pk, f->name, f->name_len));
        if (err)
            break;
        pv_wire_path_push(&e->path, f->name);
        err = s_field(e, f, obj);
        pv_wire_path_pop(&e->path);
    }
    /* rules last, as the decoder does: every field is known to be well-formed by then */
    return err ? err : pv_wire_check_rules(sd, obj, &e->path, e->em);
}

static pv_err_t s_key_uint(s_enc_t *e, const char *key, uint64_t v)
{
    pv_err_t err = s_packed(e, msgpack_pack_str_with_body(&e->pk, key, strlen(key)));
    return err ? err : s_packed(e, msgpack_pack_uint64(&e->pk, v));
}

pv_err_t pv_wire_encode(const pv_wire_msg_t *msg, const pv_wire_limits_t *lim, pv_wire_buf_t *out,
                        pv_errmsg_t *em)
{
    pv_wire_limits_t dflt;
    if (!lim) {
        pv_wire_limits_default(&dflt);
        lim = &dflt;
    }
    out->len = 0;
    const pv_wire_msgdesc_t *md = pv_wire_message(msg->type);
    if (!md)
        return pv_errf(em, PV_ERR_UNKNOWN_TYPE, "unknown message type %d", (int)msg->type);
    s_enc_t e = {.out = out, .lim = lim, .max_bytes = lim->max_msg_bytes, .em = em};
    if (out->max && out->max < e.max_bytes)
        e.max_bytes = out->max;
    msgpack_packer_init(&e.pk, &e, s_write);
    pv_wire_path_push(&e.path, md->body->name);
    pv_err_t err = s_packed(&e, msgpack_pack_map(&e.pk, 4));
    if (!err)
        err = s_count(&e, 1 + 8);
    if (!err)
        err = s_key_uint(&e, "pv", PV_WIRE_MAGIC);
    if (!err)
        err = s_key_uint(&e, "ver", PV_WIRE_VERSION);
    if (!err)
        err = s_key_uint(&e, "type", (uint64_t)msg->type);
    if (!err)
        err = s_packed(&e, msgpack_pack_str_with_body(&e.pk, "body", 4));
    if (!err)
        err = s_struct(&e, md->body, pv_wire_body_const(msg));
    if (err)
        out->len = 0;
    return err;
}
