/* test_wire_hostile.c - the decoder against hostile input: every prefix of every message
 * type, a wrong type in every field, counts of 2^32-1, nesting past the limit, bad
 * envelopes, bad values, random and mutated bytes. Each gives an error code (checked), none
 * crashes or leaks (run under ASan/UBSan too), and the decoder works after every error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <msgpack.h>

#include "common/wire/wire_desc.h"
#include "wire_fill.h"

typedef struct fx {
    wire_fx_t w;
    pv_wire_buf_t good; /* a valid HEARTBEAT, decoded between hostile inputs */
    msgpack_sbuffer sb;
    msgpack_packer pk;
} fx_t;

static int s_setup(void **state)
{
    fx_t *fx = calloc(1, sizeof *fx);
    assert_true(wire_fx_init(&fx->w));
    pv_wire_buf_init(&fx->good, 0);
    pv_wire_msg_t m = {.type = PV_MSG_HEARTBEAT};
    m.heartbeat = (pv_wire_heartbeat_t){.credits = 7, .in_flight = 3};
    assert_int_equal(pv_wire_encode(&m, NULL, &fx->good, NULL), PV_OK);
    msgpack_sbuffer_init(&fx->sb);
    msgpack_packer_init(&fx->pk, &fx->sb, msgpack_sbuffer_write);
    *state = fx;
    return 0;
}

static int s_teardown(void **state)
{
    fx_t *fx = *state;
    wire_fx_fini(&fx->w);
    pv_wire_buf_free(&fx->good);
    msgpack_sbuffer_destroy(&fx->sb);
    free(fx);
    return 0;
}

/* Decode `len` bytes; on error the message must come back empty. Then check that the
 * decoder still decodes a valid message (it was reset after the error). */
static pv_err_t s_decode(fx_t *fx, const void *p, size_t len)
{
    pv_wire_msg_t m;
    memset(&m, 0x5a, sizeof m);
    pv_errmsg_t em;
    pv_err_t err = pv_wire_decode(fx->w.dec, p, len, fx->w.arena, &m, &em);
    if (err)
        assert_int_equal(m.type, PV_MSG_NONE);
    pv_wire_msg_t ok;
    assert_int_equal(pv_wire_decode(fx->w.dec, fx->good.data, fx->good.len, fx->w.arena, &ok, NULL),
                     PV_OK);
    assert_int_equal(ok.heartbeat.credits, 7);
    pv_arena_reset(fx->w.arena);
    return err;
}

static pv_err_t s_decode_sb(fx_t *fx)
{
    pv_err_t err = s_decode(fx, fx->sb.data, fx->sb.size);
    msgpack_sbuffer_clear(&fx->sb);
    return err;
}

static void s_key(fx_t *fx, const char *k)
{
    msgpack_pack_str_with_body(&fx->pk, k, strlen(k));
}

static void s_uint_pair(fx_t *fx, const char *k, uint64_t v)
{
    s_key(fx, k);
    msgpack_pack_uint64(&fx->pk, v);
}

/* A map header of n_keys, then "pv", "ver" and "type" with the given values. */
static void s_head(fx_t *fx, uint32_t n_keys, uint64_t magic, uint64_t ver, uint64_t type)
{
    msgpack_pack_map(&fx->pk, n_keys);
    s_uint_pair(fx, "pv", magic);
    s_uint_pair(fx, "ver", ver);
    s_uint_pair(fx, "type", type);
}

/* Envelope up to the body's map header: {"pv":magic,"ver":1,"type":type,"body":{n keys. */
static void s_envelope(fx_t *fx, uint64_t type, uint32_t n_body)
{
    s_head(fx, 4, PV_WIRE_MAGIC, PV_WIRE_VERSION, type);
    s_key(fx, "body");
    msgpack_pack_map(&fx->pk, n_body);
}

static void s_raw(fx_t *fx, const char *bytes, size_t n)
{
    msgpack_sbuffer_write(&fx->sb, bytes, n);
}

static void test_every_prefix_is_truncated(void **state)
{
    fx_t *fx = *state;
    size_t n_types;
    const pv_wire_msgdesc_t *types = pv_wire_messages(&n_types);
    pv_rng_t rng;
    pv_rng_seed(&rng, 11, 0);
    pv_wire_buf_t buf;
    pv_wire_buf_init(&buf, 0);
    for (size_t t = 0; t < n_types; t++) {
        pv_wire_msg_t m;
        assert_true(wire_fill_msg(&m, types[t].type, &rng, fx->w.arena2, 2, 12));
        assert_int_equal(pv_wire_encode(&m, NULL, &buf, NULL), PV_OK);
        for (size_t n = 0; n < buf.len; n++) {
            uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan sees any over-read */
            memcpy(copy, buf.data, n);
            pv_err_t err = s_decode(fx, copy, n);
            free(copy);
            if (err != PV_ERR_TRUNCATED)
                fail_msg("%s prefix %zu/%zu gave %s", types[t].name, n, buf.len, pv_errname(err));
        }
        pv_arena_reset(fx->w.arena2);
    }
    pv_wire_buf_free(&buf);
}

/* ---- a wrong MessagePack type in every field, found by walking the unpacked tree ---- */

typedef struct s_walk {
    fx_t *fx;
    msgpack_object *root;
    uint64_t *hits; /* per struct, bit i = field i was tested */
    const pv_wire_struct_t *const *structs;
    size_t n_structs;
    int tested;
} s_walk_t;

static msgpack_object s_wrong(pv_wire_kind_t k)
{
    msgpack_object o;
    memset(&o, 0, sizeof o);
    switch (k) {
    case PV_WIRE_K_U8:
    case PV_WIRE_K_U32:
    case PV_WIRE_K_U64:
        o.type = MSGPACK_OBJECT_STR, o.via.str.ptr = "7", o.via.str.size = 1;
        break;
    case PV_WIRE_K_F32:
        o.type = MSGPACK_OBJECT_POSITIVE_INTEGER, o.via.u64 = 1; /* an int is not a float */
        break;
    case PV_WIRE_K_BOOL:
        o.type = MSGPACK_OBJECT_NIL; /* nil is not false */
        break;
    case PV_WIRE_K_STR:
        o.type = MSGPACK_OBJECT_BIN, o.via.bin.ptr = "ab", o.via.bin.size = 2;
        break;
    case PV_WIRE_K_BIN:
        o.type = MSGPACK_OBJECT_STR, o.via.str.ptr = "ab", o.via.str.size = 2;
        break;
    case PV_WIRE_K_OBJ:
        o.type = MSGPACK_OBJECT_ARRAY; /* empty array */
        break;
    default: /* arrays get an empty map */
        o.type = MSGPACK_OBJECT_MAP;
        break;
    }
    return o;
}

static void s_try(s_walk_t *w, msgpack_object *slot, pv_wire_kind_t k, const char *what)
{
    msgpack_object saved = *slot;
    *slot = s_wrong(k);
    msgpack_pack_object(&w->fx->pk, *w->root);
    *slot = saved;
    pv_err_t err = s_decode_sb(w->fx);
    if (err != PV_ERR_TYPE)
        fail_msg("wrong type in %s gave %s", what, pv_errname(err));
    w->tested++;
}

static void s_walk(s_walk_t *w, const pv_wire_struct_t *sd, msgpack_object *map)
{
    size_t si = 0;
    while (w->structs[si] != sd)
        si++;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        msgpack_object_kv *kv = &map->via.map.ptr[i];
        const pv_wire_field_t *f =
            pv_wire_field_find(sd, kv->key.via.str.ptr, kv->key.via.str.size);
        assert_non_null(f);
        char what[128];
        snprintf(what, sizeof what, "%s.%s", sd->name, f->name);
        s_try(w, &kv->val, f->kind, what);
        w->hits[si] |= 1ull << (f - sd->fields);
        pv_wire_kind_t ek = pv_wire_elem_kind(f->kind);
        if (f->kind == PV_WIRE_K_OBJ)
            s_walk(w, f->sub, &kv->val);
        else if (ek != f->kind && kv->val.via.array.size > 0) {
            snprintf(what, sizeof what, "%s.%s[0]", sd->name, f->name);
            s_try(w, &kv->val.via.array.ptr[0], ek, what);
            if (f->kind == PV_WIRE_K_ARR_OBJ)
                s_walk(w, f->sub, &kv->val.via.array.ptr[0]);
        }
    }
}

static void test_wrong_type_in_every_field(void **state)
{
    fx_t *fx = *state;
    size_t n_types, n_structs;
    const pv_wire_msgdesc_t *types = pv_wire_messages(&n_types);
    const pv_wire_struct_t *const *structs = pv_wire_structs(&n_structs);
    uint64_t hits[64] = {0};
    assert_true(n_structs <= 64);
    s_walk_t w = {.fx = fx, .hits = hits, .structs = structs, .n_structs = n_structs};
    pv_rng_t rng;
    pv_rng_seed(&rng, 5, 5);
    pv_wire_buf_t buf;
    pv_wire_buf_init(&buf, 0);
    msgpack_zone zone;
    msgpack_zone_init(&zone, 4096);
    for (int round = 0; round < 6; round++) {
        for (size_t t = 0; t < n_types; t++) {
            pv_wire_msg_t m;
            assert_true(wire_fill_msg(&m, types[t].type, &rng, fx->w.arena2, 2, 8));
            assert_int_equal(pv_wire_encode(&m, NULL, &buf, NULL), PV_OK);
            msgpack_object root;
            size_t off = 0;
            assert_int_equal(msgpack_unpack((const char *)buf.data, buf.len, &off, &zone, &root),
                             MSGPACK_UNPACK_SUCCESS);
            w.root = &root;
            msgpack_object *body = NULL;
            for (uint32_t i = 0; i < root.via.map.size; i++)
                if (root.via.map.ptr[i].key.via.str.size == 4)
                    body = &root.via.map.ptr[i].val;
            assert_non_null(body);
            s_walk(&w, types[t].body, body);
            msgpack_zone_clear(&zone);
            pv_arena_reset(fx->w.arena2);
        }
    }
    for (size_t s = 0; s < n_structs; s++)
        if (hits[s] != (structs[s]->n_fields == 64 ? ~0ull : (1ull << structs[s]->n_fields) - 1))
            fail_msg("struct %s: not every field was tested (mask %llx)", structs[s]->name,
                     (unsigned long long)hits[s]);
    assert_true(w.tested > 200);
    msgpack_zone_destroy(&zone);
    pv_wire_buf_free(&buf);
}

static void test_huge_counts(void **state)
{
    fx_t *fx = *state;
    static const struct {
        const char *bytes;
        size_t n;
        pv_err_t want;
    } raw[] = {
        {"\xdd\xff\xff\xff\xff", 5, PV_ERR_LIMIT},     /* array32 of 2^32-1 */
        {"\xdf\xff\xff\xff\xff", 5, PV_ERR_LIMIT},     /* map32 of 2^32-1 */
        {"\xdb\xff\xff\xff\xff", 5, PV_ERR_LIMIT},     /* str32 of 2^32-1 */
        {"\xc6\xff\xff\xff\xff", 5, PV_ERR_TRUNCATED}, /* bin32 of 2^32-1 */
        {"\xdc\xff\xff", 3, PV_ERR_TRUNCATED},         /* array16: within limits, not present */
        {"\xde\x00\x40", 3, PV_ERR_TRUNCATED},         /* map16 of 64 entries, not present */
        {"\xde\x00\x41", 3, PV_ERR_LIMIT},             /* map16 of 65 entries */
    };
    for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
        pv_err_t err = s_decode(fx, raw[i].bytes, raw[i].n);
        if (err != raw[i].want)
            fail_msg("case %zu gave %s, expected %s", i, pv_errname(err), pv_errname(raw[i].want));
    }
    /* the same headers deep inside an otherwise valid envelope */
    s_envelope(fx, PV_MSG_ROLLOUT_GROUP, 1);
    s_key(fx, "trajectories");
    s_raw(fx, "\xdd\xff\xff\xff\xff", 5);
    assert_int_equal(s_decode_sb(fx), PV_ERR_LIMIT);
    s_envelope(fx, PV_MSG_ROLLOUT_GROUP, 1);
    s_key(fx, "task_text");
    s_raw(fx, "\xdb\xff\xff\xff\xff", 5);
    assert_int_equal(s_decode_sb(fx), PV_ERR_LIMIT);
    s_envelope(fx, PV_MSG_SUBMIT, 1);
    s_key(fx, "payload");
    s_raw(fx, "\xc6\xff\xff\xff\xff", 5);
    assert_int_equal(s_decode_sb(fx), PV_ERR_TRUNCATED);
    /* a count the bytes back up, but above the field's own limit (1024 trajectories) */
    s_envelope(fx, PV_MSG_ROLLOUT_GROUP, 1);
    s_key(fx, "trajectories");
    msgpack_pack_array(&fx->pk, 1025);
    for (int i = 0; i < 1025; i++)
        msgpack_pack_nil(&fx->pk);
    assert_int_equal(s_decode_sb(fx), PV_ERR_LIMIT);
    /* a total object count above a configured max_objects */
    pv_wire_limits_t lim;
    pv_wire_limits_default(&lim);
    lim.max_objects = 1000;
    pv_wire_dec_t *small = NULL;
    assert_int_equal(pv_wire_dec_new(&lim, &small), PV_OK);
    s_envelope(fx, PV_MSG_VERIFY_JOB, 1);
    s_key(fx, "history");
    msgpack_pack_array(&fx->pk, 1200);
    for (int i = 0; i < 1200; i++)
        s_key(fx, "x");
    pv_wire_msg_t m;
    assert_int_equal(pv_wire_decode(small, fx->sb.data, fx->sb.size, fx->w.arena, &m, NULL),
                     PV_ERR_LIMIT);
    /* the default decoder gets past the scan and stops at the missing keys */
    assert_int_equal(s_decode_sb(fx), PV_ERR_PARSE);
    pv_wire_dec_destroy(&small);
}

static void test_nesting_beyond_limit(void **state)
{
    fx_t *fx = *state;
    char deep[1001];
    memset(deep, 0x91, 1000); /* 1000 nested one-element arrays */
    deep[1000] = 0x00;
    assert_int_equal(s_decode(fx, deep, sizeof deep), PV_ERR_LIMIT);
    /* exactly max_depth levels scan fine (then fail as not an envelope); one more does not */
    assert_int_equal(
        s_decode(fx, deep + 1000 - PV_WIRE_DEFAULT_MAX_DEPTH, PV_WIRE_DEFAULT_MAX_DEPTH + 1),
        PV_ERR_TYPE);
    assert_int_equal(
        s_decode(fx, deep + 1000 - PV_WIRE_DEFAULT_MAX_DEPTH - 1, PV_WIRE_DEFAULT_MAX_DEPTH + 2),
        PV_ERR_LIMIT);
    /* nesting inside a field of a valid envelope (which already uses 2 levels) */
    s_envelope(fx, PV_MSG_HEARTBEAT, 1);
    s_key(fx, "credits");
    s_raw(fx, deep, 20);
    s_raw(fx, "\x00", 1);
    assert_int_equal(s_decode_sb(fx), PV_ERR_LIMIT);
}

static void test_bad_envelopes(void **state)
{
    fx_t *fx = *state;
    s_head(fx, 4, PV_WIRE_MAGIC ^ 1, PV_WIRE_VERSION, PV_MSG_HEARTBEAT); /* wrong magic */
    s_key(fx, "body");
    msgpack_pack_map(&fx->pk, 0);
    assert_int_equal(s_decode_sb(fx), PV_ERR_PARSE);
    msgpack_pack_map(&fx->pk, 1); /* no magic */
    s_uint_pair(fx, "ver", 1);
    assert_int_equal(s_decode_sb(fx), PV_ERR_PARSE);
    /* another version, with a body this version could not read: VERSION, not a body error */
    s_head(fx, 4, PV_WIRE_MAGIC, PV_WIRE_VERSION + 1, PV_MSG_HEARTBEAT);
    s_key(fx, "body");
    s_key(fx, "a v2 body");
    assert_int_equal(s_decode_sb(fx), PV_ERR_VERSION);
    /* unknown type ids: a gap, zero, large, huge */
    const uint64_t bad_types[] = {6, 0, 99, 1ull << 40};
    for (size_t i = 0; i < 4; i++) {
        s_envelope(fx, bad_types[i], 0);
        assert_int_equal(s_decode_sb(fx), PV_ERR_UNKNOWN_TYPE);
    }
    s_head(fx, 4, PV_WIRE_MAGIC, PV_WIRE_VERSION, PV_MSG_HEARTBEAT); /* body not a map */
    s_key(fx, "body");
    msgpack_pack_array(&fx->pk, 0);
    assert_int_equal(s_decode_sb(fx), PV_ERR_TYPE);
    msgpack_pack_array(&fx->pk, 0); /* envelope not a map */
    assert_int_equal(s_decode_sb(fx), PV_ERR_TYPE);
    s_head(fx, 5, PV_WIRE_MAGIC, PV_WIRE_VERSION, PV_MSG_STATS_REQUEST); /* a fifth key */
    s_key(fx, "body");
    msgpack_pack_map(&fx->pk, 0);
    s_uint_pair(fx, "extra", 1);
    assert_int_equal(s_decode_sb(fx), PV_ERR_PARSE);
    s_envelope(fx, PV_MSG_STATS_REQUEST, 0);
    s_key(fx, "extra"); /* a pair after a map header of 4: trailing bytes */
    assert_int_equal(s_decode_sb(fx), PV_ERR_PARSE);
    msgpack_pack_map(&fx->pk, 3); /* duplicate key */
    s_uint_pair(fx, "pv", PV_WIRE_MAGIC);
    s_uint_pair(fx, "pv", PV_WIRE_MAGIC);
    s_uint_pair(fx, "ver", 1);
    assert_int_equal(s_decode_sb(fx), PV_ERR_PARSE);
    s_head(fx, 3, PV_WIRE_MAGIC, PV_WIRE_VERSION, PV_MSG_HEARTBEAT); /* no body */
    assert_int_equal(s_decode_sb(fx), PV_ERR_PARSE);
    /* keys in another order are fine */
    msgpack_pack_map(&fx->pk, 4);
    s_key(fx, "body");
    msgpack_pack_map(&fx->pk, 2);
    s_uint_pair(fx, "in_flight", 2);
    s_uint_pair(fx, "credits", 9);
    s_uint_pair(fx, "type", PV_MSG_HEARTBEAT);
    s_uint_pair(fx, "ver", PV_WIRE_VERSION);
    s_uint_pair(fx, "pv", PV_WIRE_MAGIC);
    pv_wire_msg_t m;
    assert_int_equal(pv_wire_decode(fx->w.dec, fx->sb.data, fx->sb.size, fx->w.arena, &m, NULL),
                     PV_OK);
    assert_int_equal(m.heartbeat.credits, 9);
    assert_int_equal(m.heartbeat.in_flight, 2);
    msgpack_sbuffer_clear(&fx->sb);
}

static void test_bad_keys(void **state)
{
    fx_t *fx = *state;
    s_envelope(fx, PV_MSG_HEARTBEAT, 3);
    s_uint_pair(fx, "credits", 1);
    s_uint_pair(fx, "in_flight", 1);
    s_uint_pair(fx, "bogus", 1);
    assert_int_equal(s_decode_sb(fx), PV_ERR_PARSE); /* unknown key */
    s_envelope(fx, PV_MSG_HEARTBEAT, 2);
    s_uint_pair(fx, "credits", 1);
    s_uint_pair(fx, "credits", 1);
    assert_int_equal(s_decode_sb(fx), PV_ERR_PARSE); /* duplicate key */
    s_envelope(fx, PV_MSG_HEARTBEAT, 1);
    s_uint_pair(fx, "credits", 1);
    assert_int_equal(s_decode_sb(fx), PV_ERR_PARSE); /* missing required key */
    s_envelope(fx, PV_MSG_HEARTBEAT, 2);
    msgpack_pack_uint32(&fx->pk, 1);
    msgpack_pack_uint32(&fx->pk, 1);
    s_uint_pair(fx, "in_flight", 1);
    assert_int_equal(s_decode_sb(fx), PV_ERR_TYPE); /* a key that is not a str */
    /* optional keys may be absent */
    pv_wire_msg_t m;
    s_envelope(fx, PV_MSG_STATS_REQUEST, 0);
    assert_int_equal(pv_wire_decode(fx->w.dec, fx->sb.data, fx->sb.size, fx->w.arena, &m, NULL),
                     PV_OK);
    assert_string_equal(m.stats_request.format, "");
    msgpack_sbuffer_clear(&fx->sb);
    s_envelope(fx, PV_MSG_ACK, 2);
    s_uint_pair(fx, "job_id", 77);
    s_key(fx, "ok");
    msgpack_pack_true(&fx->pk);
    assert_int_equal(pv_wire_decode(fx->w.dec, fx->sb.data, fx->sb.size, fx->w.arena, &m, NULL),
                     PV_OK);
    assert_true(m.ack.job_id == 77 && m.ack.ok && m.ack.reply.len == 0);
    assert_string_equal(m.ack.error, "");
    msgpack_sbuffer_clear(&fx->sb);
}

/* One field of a VERIFY_RESULT set to a raw MessagePack value; every other field valid. */
static pv_err_t s_verify_result_with(fx_t *fx, const char *key, const char *raw, size_t n,
                                     pv_wire_msg_t *out)
{
    static const char *const keys[] = {
        "job_id",     "group_id",  "segment_id",    "side",           "k",           "successes",
        "reward_sum", "env_steps", "policy_tokens", "policy_version", "verifier_id", "wall_ms"};
    s_envelope(fx, PV_MSG_VERIFY_RESULT, 12);
    for (size_t i = 0; i < 12; i++) {
        s_key(fx, keys[i]);
        if (strcmp(keys[i], key) == 0)
            s_raw(fx, raw, n);
        else if (strcmp(keys[i], "reward_sum") == 0)
            msgpack_pack_float(&fx->pk, 1.0f);
        else
            msgpack_pack_uint32(&fx->pk, 1);
    }
    pv_errmsg_t em = {{0}};
    pv_err_t err = pv_wire_decode(fx->w.dec, fx->sb.data, fx->sb.size, fx->w.arena, out, &em);
    if (getenv("PV_TEST_VERBOSE"))
        print_message("%s: %s\n", key, em.text);
    msgpack_sbuffer_clear(&fx->sb);
    return err;
}

static void test_bad_values(void **state)
{
    fx_t *fx = *state;
    static const struct {
        const char *key, *raw;
        size_t n;
        pv_err_t want;
    } cases[] = {
        {"job_id", "\xff", 1, PV_ERR_RANGE},                                     /* -1 */
        {"job_id", "\xd3\x80\x00\x00\x00\x00\x00\x00\x00", 9, PV_ERR_RANGE},     /* INT64_MIN */
        {"job_id", "\xcf\xff\xff\xff\xff\xff\xff\xff\xff", 9, PV_OK},            /* UINT64_MAX */
        {"segment_id", "\xcf\x00\x00\x00\x01\x00\x00\x00\x00", 9, PV_ERR_RANGE}, /* 2^32 */
        {"segment_id", "\xce\xff\xff\xff\xff", 5, PV_OK},
        {"side", "\x02", 1, PV_ERR_RANGE}, /* u8 with max 1 */
        {"side", "\xcd\x01\x2c", 3, PV_ERR_RANGE},
        {"k", "\xcd\x10\x01", 3, PV_ERR_RANGE},                                  /* 4097 > 4096 */
        {"reward_sum", "\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00", 9, PV_ERR_RANGE}, /* NaN */
        {"reward_sum", "\xca\x7f\x80\x00\x00", 5, PV_ERR_RANGE},                 /* +inf */
        {"reward_sum", "\xcb\x7e\x37\xe4\x3c\x88\x00\x75\x9c", 9, PV_ERR_RANGE}, /* 1e300 */
        {"reward_sum", "\xcb\x3f\xe0\x00\x00\x00\x00\x00\x00", 9, PV_OK},        /* 0.5 */
        {"reward_sum", "\x01", 1, PV_ERR_TYPE},
        {"wall_ms", "\xc0", 1, PV_ERR_TYPE},
        {"wall_ms", "\xc3", 1, PV_ERR_TYPE},
        {"wall_ms", "\xc1", 1, PV_ERR_PARSE},        /* never used in MessagePack */
        {"wall_ms", "\xd4\x01\x00", 3, PV_ERR_TYPE}, /* fixext 1 */
        {"wall_ms", "\xc7\x00\x05", 3, PV_ERR_TYPE}, /* ext 8 */
        {"wall_ms", "\x01\x01", 2, PV_ERR_PARSE},    /* one value too many: trailing */
        {"successes", "\x02", 1, PV_ERR_INVAL},      /* successes > k (rule at_most) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pv_wire_msg_t m;
        pv_err_t err = s_verify_result_with(fx, cases[i].key, cases[i].raw, cases[i].n, &m);
        if (err != cases[i].want)
            fail_msg("case %zu (%s) gave %s, expected %s", i, cases[i].key, pv_errname(err),
                     pv_errname(cases[i].want));
        if (i == 11)
            assert_true(m.verify_result.reward_sum == 0.5f);
    }
    /* strings: NUL inside, invalid UTF-8, an overlong form; and the empty input */
    static const struct {
        const char *raw;
        size_t n;
    } strs[] = {{"\xa3"
                 "a\0b",
                 4},
                {"\xa2\xc3\x28", 3},
                {"\xa2\xc0\xaf", 2 + 1},
                {"\xa1\x80", 2}};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        s_envelope(fx, PV_MSG_DISCONNECT, 1);
        s_key(fx, "reason");
        s_raw(fx, strs[i].raw, strs[i].n);
        assert_int_equal(s_decode_sb(fx), PV_ERR_PARSE);
    }
    assert_int_equal(s_decode(fx, "", 0), PV_ERR_TRUNCATED);
    pv_wire_msg_t m;
    assert_int_equal(pv_wire_decode(fx->w.dec, NULL, 0, fx->w.arena, &m, NULL), PV_ERR_TRUNCATED);
}

static void test_random_and_mutated_bytes(void **state)
{
    fx_t *fx = *state;
    pv_rng_t rng;
    pv_rng_seed(&rng, 2024, 7);
    uint8_t bytes[300];
    for (int i = 0; i < 20000; i++) {
        size_t n = pv_rng_bounded(&rng, sizeof bytes + 1);
        for (size_t k = 0; k < n; k++)
            bytes[k] = (uint8_t)pv_rng_u32(&rng);
        assert_int_not_equal(s_decode(fx, bytes, n), PV_OK);
    }
    /* valid messages of every type with 1-4 bytes changed: an error, or a message that
     * encodes again */
    size_t n_types;
    const pv_wire_msgdesc_t *types = pv_wire_messages(&n_types);
    pv_wire_buf_t buf, again;
    pv_wire_buf_init(&buf, 0);
    pv_wire_buf_init(&again, 0);
    int ok = 0, errors = 0;
    for (int i = 0; i < 20000; i++) {
        pv_wire_msg_t m;
        assert_true(wire_fill_msg(&m, types[i % n_types].type, &rng, fx->w.arena2, 2, 10));
        assert_int_equal(pv_wire_encode(&m, NULL, &buf, NULL), PV_OK);
        int flips = 1 + (int)pv_rng_bounded(&rng, 4);
        for (int k = 0; k < flips; k++)
            buf.data[pv_rng_bounded(&rng, (uint32_t)buf.len)] = (uint8_t)pv_rng_u32(&rng);
        pv_err_t err = pv_wire_decode(fx->w.dec, buf.data, buf.len, fx->w.arena, &m, NULL);
        if (err == PV_OK) {
            assert_int_equal(pv_wire_encode(&m, NULL, &again, NULL), PV_OK);
            ok++;
        } else {
            errors++;
        }
        pv_arena_reset(fx->w.arena);
        pv_arena_reset(fx->w.arena2);
    }
    assert_true(errors > 1000 && ok > 100); /* both paths were exercised */
    pv_wire_buf_free(&buf);
    pv_wire_buf_free(&again);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_prefix_is_truncated),
        cmocka_unit_test(test_wrong_type_in_every_field),
        cmocka_unit_test(test_huge_counts),
        cmocka_unit_test(test_nesting_beyond_limit),
        cmocka_unit_test(test_bad_envelopes),
        cmocka_unit_test(test_bad_keys),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_random_and_mutated_bytes),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
