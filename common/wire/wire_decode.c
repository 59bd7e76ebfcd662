/* wire_decode.c - bounded, type-checked decoder (pre-scan + msgpack-c + conversion); see
 * wire.h for the steps. */
#include "common/wire/wire_int.h"

#include <float.h>
#include <math.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#define ZONE_CHUNK (64 * 1024)

struct pv_wire_dec {
    pv_wire_limits_t lim;
    msgpack_zone zone; /* cleared after every message */
    uint64_t counts[PV_ERR__COUNT];
};

typedef struct s_dec {
    const pv_wire_limits_t *lim;
    pv_arena_t *arena;
    pv_wire_path_t path;
    pv_errmsg_t *em;
} s_dec_t;

pv_err_t pv_wire_dec_new(const pv_wire_limits_t *lim, pv_wire_dec_t **out)
{
    pv_wire_limits_t l;
    if (lim)
        l = *lim;
    else
        pv_wire_limits_default(&l);
    if (l.max_depth == 0 || l.max_depth > PV_WIRE_MAX_DEPTH_CAP || l.max_msg_bytes == 0 ||
        l.max_objects == 0)
        return PV_ERR_INVAL;
    pv_wire_dec_t *self = calloc(1, sizeof *self);
    if (!self)
        return PV_ERR_NOMEM;
    self->lim = l;
    if (!msgpack_zone_init(&self->zone, ZONE_CHUNK)) {
        free(self);
        return PV_ERR_NOMEM;
    }
    *out = self;
    return PV_OK;
}

void pv_wire_dec_destroy(pv_wire_dec_t **dec)
{
    if (!dec || !*dec)
        return;
    msgpack_zone_destroy(&(*dec)->zone);
    free(*dec);
    *dec = NULL;
}

uint64_t pv_wire_dec_count(const pv_wire_dec_t *self, pv_err_t err)
{
    return (unsigned)err < PV_ERR__COUNT ? self->counts[err] : 0;
}

static const char *s_type_name(msgpack_object_type t)
{
    switch (t) {
    case MSGPACK_OBJECT_NIL:
        return "nil";
    case MSGPACK_OBJECT_BOOLEAN:
        return "bool";
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        return "int";
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
        return "float";
    case MSGPACK_OBJECT_STR:
        return "str";
    case MSGPACK_OBJECT_ARRAY:
        return "array";
    case MSGPACK_OBJECT_MAP:
        return "map";
    case MSGPACK_OBJECT_BIN:
        return "bin";
    default:
        return "ext";
    }
}

static pv_err_t s_want(s_dec_t *d, const msgpack_object *o, msgpack_object_type t, const char *what)
{
    if (o->type == t)
        return PV_OK;
    return pv_wire_fail(&d->path, d->em, PV_ERR_TYPE, "expected %s, got %s", what,
                        s_type_name(o->type));
}

static pv_err_t s_uint(s_dec_t *d, const pv_wire_field_t *f, pv_wire_kind_t kind,
                       const msgpack_object *o, uint64_t *v)
{
    if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        return pv_wire_fail(&d->path, d->em, PV_ERR_RANGE, "negative integer %lld",
                            (long long)o->via.i64);
    pv_err_t err = s_want(d, o, MSGPACK_OBJECT_POSITIVE_INTEGER, "unsigned integer");
    if (!err)
        err = pv_wire_check_uint(f, kind, o->via.u64, &d->path, d->em);
    if (!err)
        *v = o->via.u64;
    return err;
}

static pv_err_t s_struct(s_dec_t *d, const pv_wire_struct_t *sd, const msgpack_object *o,
                         void *dst);

/* Convert one value of scalar kind `kind` into the C object at `p`. */
static pv_err_t s_value(s_dec_t *d, const pv_wire_field_t *f, pv_wire_kind_t kind,
                        const msgpack_object *o, void *p)
{
    uint64_t u = 0;
    pv_err_t err;
    switch (kind) {
    case PV_WIRE_K_U8:
        if (!(err = s_uint(d, f, kind, o, &u)))
            *(uint8_t *)p = (uint8_t)u;
        return err;
    case PV_WIRE_K_U32:
        if (!(err = s_uint(d, f, kind, o, &u)))
            *(uint32_t *)p = (uint32_t)u;
        return err;
    case PV_WIRE_K_U64:
        if (!(err = s_uint(d, f, kind, o, &u)))
            *(uint64_t *)p = u;
        return err;
    case PV_WIRE_K_F32:
        if (o->type != MSGPACK_OBJECT_FLOAT32 && o->type != MSGPACK_OBJECT_FLOAT64)
            return s_want(d, o, MSGPACK_OBJECT_FLOAT32, "float");
        if (!isfinite(o->via.f64) || fabs(o->via.f64) > FLT_MAX)
            return pv_wire_fail(&d->path, d->em, PV_ERR_RANGE, "float %g is not a finite f32",
                                o->via.f64);
        *(float *)p = (float)o->via.f64;
        return PV_OK;
    case PV_WIRE_K_BOOL:
        if ((err = s_want(d, o, MSGPACK_OBJECT_BOOLEAN, "bool")))
            return err;
        *(bool *)p = o->via.boolean;
        return PV_OK;
    case PV_WIRE_K_STR: {
        if ((err = s_want(d, o, MSGPACK_OBJECT_STR, "str")))
            return err;
        uint64_t max =
            f->kind == PV_WIRE_K_STR ? pv_wire_field_max_bytes(f, d->lim) : d->lim->max_str_bytes;
        if (o->via.str.size > max)
            return pv_wire_fail(&d->path, d->em, PV_ERR_LIMIT, "str of %u bytes (limit %llu)",
                                o->via.str.size, (unsigned long long)max);
        if (!pv_wire_utf8_ok(o->via.str.ptr, o->via.str.size))
            return pv_wire_fail(&d->path, d->em, PV_ERR_PARSE,
                                "str is not valid UTF-8 or contains NUL");
        char *s = pv_arena_strndup(d->arena, o->via.str.ptr, o->via.str.size);
        if (!s)
            return pv_wire_fail(&d->path, d->em, PV_ERR_NOMEM, "arena full");
        *(const char **)p = s;
        return PV_OK;
    }
    case PV_WIRE_K_BIN: {
        if ((err = s_want(d, o, MSGPACK_OBJECT_BIN, "bin")))
            return err;
        uint64_t max = pv_wire_field_max_bytes(f, d->lim);
        if (o->via.bin.size > max)
            return pv_wire_fail(&d->path, d->em, PV_ERR_LIMIT, "bin of %u bytes (limit %llu)",
                                o->via.bin.size, (unsigned long long)max);
        pv_wire_bin_t *b = p;
        b->len = o->via.bin.size;
        b->ptr = b->len ? (const uint8_t *)o->via.bin.ptr : NULL;
        return PV_OK;
    }
    case PV_WIRE_K_OBJ:
        return s_struct(d, f->sub, o, p);
    default:
        return pv_wire_fail(&d->path, d->em, PV_ERR_INTERNAL, "bad kind %d", (int)kind);
    }
}

static pv_err_t s_field(s_dec_t *d, const pv_wire_field_t *f, const msgpack_object *o, void *obj)
{
    char *p = (char *)obj + f->off;
    pv_wire_kind_t ek = pv_wire_elem_kind(f->kind);
    if (ek == f->kind)
        return s_value(d, f, f->kind, o, p);
    pv_err_t err = s_want(d, o, MSGPACK_OBJECT_ARRAY, "array");
    if (err)
        return err;
    uint32_t n = o->via.array.size;
    if (n > f->max)
        return pv_wire_fail(&d->path, d->em, PV_ERR_LIMIT, "%u elements (limit %llu)", n,
                            (unsigned long long)f->max);
    size_t es = pv_wire_elem_size(f);
    char *elems = NULL;
    if (n) {
        size_t align = f->kind == PV_WIRE_K_ARR_OBJ ? f->sub->align : es;
        elems = pv_arena_alloc(d->arena, (size_t)n * es, align);
        if (!elems)
            return pv_wire_fail(&d->path, d->em, PV_ERR_NOMEM, "arena full");
    }
    for (uint32_t i = 0; i < n && !err; i++) {
        pv_wire_path_index(&d->path, i);
        err = s_value(d, f, ek, &o->via.array.ptr[i], elems + (size_t)i * es);
    }
    pv_wire_path_index(&d->path, -1);
    memcpy(p, &elems, sizeof elems); /* the member is a typed pointer: copy, do not pun */
    *(uint32_t *)((char *)obj + f->off_n) = n;
    return err;
}

static pv_err_t s_struct(s_dec_t *d, const pv_wire_struct_t *sd, const msgpack_object *o, void *dst)
{
    memset(dst, 0, sd->size);
    pv_err_t err = s_want(d, o, MSGPACK_OBJECT_MAP, "map");
    if (err)
        return err;
    uint64_t seen = 0; /* n_fields <= PV_WIRE_MAX_MAP = 64, checked by the schema test */
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object *k = &o->via.map.ptr[i].key;
        if (k->type != MSGPACK_OBJECT_STR)
            return pv_wire_fail(&d->path, d->em, PV_ERR_TYPE, "map key is a %s, not a str",
                                s_type_name(k->type));
        const pv_wire_field_t *f = pv_wire_field_find(sd, k->via.str.ptr, k->via.str.size);
        if (!f)
            return pv_wire_fail(&d->path, d->em, PV_ERR_PARSE, "unknown key \"%.*s\"",
                                (int)(k->via.str.size > 64 ? 64 : k->via.str.size), k->via.str.ptr);
        uint64_t bit = 1ull << (f - sd->fields);
        if (seen & bit)
            return pv_wire_fail(&d->path, d->em, PV_ERR_PARSE, "duplicate key \"%s\"", f->name);
        seen |= bit;
        pv_wire_path_push(&d->path, f->name);
        err = s_field(d, f, &o->via.map.ptr[i].val, dst);
        pv_wire_path_pop(&d->path);
        if (err)
            return err;
    }
    for (uint32_t i = 0; i < sd->n_fields; i++) {
        const pv_wire_field_t *f = &sd->fields[i];
        if (seen & (1ull << i))
            continue;
        if (!f->optional)
            return pv_wire_fail(&d->path, d->em, PV_ERR_PARSE, "missing key \"%s\"", f->name);
        if (f->kind == PV_WIRE_K_STR) /* absent str: "", never NULL */
            *(const char **)((char *)dst + f->off) = "";
    }
    return pv_wire_check_rules(sd, dst, &d->path, d->em);
}

/* The envelope: exactly the keys pv, ver, type, body; checked in that order so that a
 * message of another version reports PV_ERR_VERSION, not a body error. */
static pv_err_t s_envelope(s_dec_t *d, const msgpack_object *root, pv_wire_msg_t *out)
{
    static const char *const keys[4] = {"pv", "ver", "type", "body"};
    const msgpack_object *v[4] = {NULL, NULL, NULL, NULL};
    if (root->type != MSGPACK_OBJECT_MAP)
        return pv_errf(d->em, PV_ERR_TYPE, "envelope: expected map, got %s",
                       s_type_name(root->type));
    for (uint32_t i = 0; i < root->via.map.size; i++) {
        const msgpack_object *k = &root->via.map.ptr[i].key;
        int which = -1;
        for (int j = 0; j < 4 && k->type == MSGPACK_OBJECT_STR; j++)
            if (k->via.str.size == strlen(keys[j]) &&
                memcmp(k->via.str.ptr, keys[j], k->via.str.size) == 0)
                which = j;
        if (which < 0)
            return pv_errf(d->em, PV_ERR_PARSE, "envelope: unknown key");
        if (v[which])
            return pv_errf(d->em, PV_ERR_PARSE, "envelope: duplicate key \"%s\"", keys[which]);
        v[which] = &root->via.map.ptr[i].val;
    }
    if (!v[0] || v[0]->type != MSGPACK_OBJECT_POSITIVE_INTEGER || v[0]->via.u64 != PV_WIRE_MAGIC)
        return pv_errf(d->em, PV_ERR_PARSE, "envelope: missing or wrong magic \"pv\"");
    if (!v[1])
        return pv_errf(d->em, PV_ERR_PARSE, "envelope: missing \"ver\"");
    if (v[1]->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return pv_errf(d->em, PV_ERR_TYPE, "envelope: \"ver\" is not an unsigned integer");
    if (v[1]->via.u64 != PV_WIRE_VERSION)
        return pv_errf(d->em, PV_ERR_VERSION, "schema version %llu, this build speaks %u",
                       (unsigned long long)v[1]->via.u64, PV_WIRE_VERSION);
    if (!v[2])
        return pv_errf(d->em, PV_ERR_PARSE, "envelope: missing \"type\"");
    if (v[2]->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return pv_errf(d->em, PV_ERR_TYPE, "envelope: \"type\" is not an unsigned integer");
    const pv_wire_msgdesc_t *md =
        v[2]->via.u64 <= INT32_MAX ? pv_wire_message((pv_wire_type_t)v[2]->via.u64) : NULL;
    if (!md)
        return pv_errf(d->em, PV_ERR_UNKNOWN_TYPE, "unknown message type %llu",
                       (unsigned long long)v[2]->via.u64);
    if (!v[3])
        return pv_errf(d->em, PV_ERR_PARSE, "envelope: missing \"body\"");
    pv_wire_path_push(&d->path, md->body->name);
    pv_err_t err = s_struct(d, md->body, v[3], pv_wire_body(out));
    pv_wire_path_pop(&d->path);
    if (!err)
        out->type = md->type;
    return err;
}

pv_err_t pv_wire_decode(pv_wire_dec_t *self, const void *buf, size_t len, pv_arena_t *arena,
                        pv_wire_msg_t *out, pv_errmsg_t *em)
{
    memset(out, 0, sizeof *out);
    pv_err_t err = PV_OK;
    uint64_t n_objects = 0;
    if (len > self->lim.max_msg_bytes)
        err = pv_errf(em, PV_ERR_LIMIT, "message of %zu bytes (limit %zu)", len,
                      self->lim.max_msg_bytes);
    else if (!buf && len)
        err = pv_errf(em, PV_ERR_INVAL, "NULL buffer");
    if (!err)
        err = pv_wire_scan(buf, len, &self->lim, &n_objects, em);
    if (!err) {
        msgpack_object root;
        size_t off = 0;
        msgpack_unpack_return rc = msgpack_unpack(buf, len, &off, &self->zone, &root);
        if (rc != MSGPACK_UNPACK_SUCCESS) /* the scan accepted it: only memory can fail */
            err = pv_errf(em, PV_ERR_NOMEM, "msgpack unpack failed (%d)", (int)rc);
        if (!err) {
            s_dec_t d = {.lim = &self->lim, .arena = arena, .em = em};
            err = s_envelope(&d, &root, out);
        }
        msgpack_zone_clear(&self->zone);
    }
    if (err)
        memset(out, 0, sizeof *out);
    self->counts[(unsigned)err < PV_ERR__COUNT ? err : PV_ERR_INTERNAL]++;
    return err;
}
