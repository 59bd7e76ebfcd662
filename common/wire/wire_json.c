/* wire_json.c - a message as JSON (jansson), driven by the descriptors; see wire_desc.h. */
#include "common/wire/wire_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *s_struct(const pv_wire_struct_t *sd, const void *obj);

static json_t *s_u64(uint64_t v)
{
    if (v <= (uint64_t)INT64_MAX)
        return json_integer((json_int_t)v);
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, v);
    return json_string(text);
}

static json_t *s_hex(const pv_wire_bin_t *b)
{
    static const char digits[] = "0123456789abcdef";
    char *text = malloc(2 * b->len + 1);
    if (!text)
        return NULL;
    for (size_t i = 0; i < b->len; i++) {
        text[2 * i] = digits[b->ptr[i] >> 4];
        text[2 * i + 1] = digits[b->ptr[i] & 15];
    }
    text[2 * b->len] = '\0';
    json_t *j = json_stringn(text, 2 * b->len);
    free(text);
    return j;
}

static json_t *s_value(const pv_wire_field_t *f, pv_wire_kind_t kind, const void *p)
{
    switch (kind) {
    case PV_WIRE_K_U8:
        return json_integer(*(const uint8_t *)p);
    case PV_WIRE_K_U32:
        return json_integer(*(const uint32_t *)p);
    case PV_WIRE_K_U64:
        return s_u64(*(const uint64_t *)p);
    case PV_WIRE_K_F32:
        return json_real(*(const float *)p);
    case PV_WIRE_K_BOOL:
        return json_boolean(*(const bool *)p);
    case PV_WIRE_K_STR: {
        const char *s = *(const char *const *)p;
        return json_string(s ? s : "");
    }
    case PV_WIRE_K_BIN:
        return s_hex(p);
    case PV_WIRE_K_OBJ:
        return s_struct(f->sub, p);
    default:
        return NULL;
    }
}

static json_t *s_field(const pv_wire_field_t *f, const void *obj)
{
    const char *p = (const char *)obj + f->off;
    pv_wire_kind_t ek = pv_wire_elem_kind(f->kind);
    if (ek == f->kind)
        return s_value(f, f->kind, p);
    json_t *arr = json_array();
    const char *elems;
    memcpy(&elems, p, sizeof elems);
    uint32_t n = pv_wire_get_count(f, obj);
    size_t es = pv_wire_elem_size(f);
    for (uint32_t i = 0; arr && i < n; i++) {
        if (json_array_append_new(arr, s_value(f, ek, elems + (size_t)i * es)) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

static json_t *s_struct(const pv_wire_struct_t *sd, const void *obj)
{
    json_t *o = json_object();
    for (uint32_t i = 0; o && i < sd->n_fields; i++) {
        if (json_object_set_new(o, sd->fields[i].name, s_field(&sd->fields[i], obj)) != 0) {
            json_decref(o);
            o = NULL;
        }
    }
    return o;
}

pv_err_t pv_wire_msg_to_json(const pv_wire_msg_t *msg, json_t **out)
{
    const pv_wire_msgdesc_t *md = pv_wire_message(msg->type);
    if (!md)
        return PV_ERR_UNKNOWN_TYPE;
    json_t *j = json_pack("{s:s, s:i, s:o}", "type", md->name, "type_id", (int)md->type, "body",
                          s_struct(md->body, pv_wire_body_const(msg)));
    if (!j)
        return PV_ERR_NOMEM;
    *out = j;
    return PV_OK;
}
