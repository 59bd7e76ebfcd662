/* wire_fill.h - test support: random messages within the schema, and field-by-field
 * comparison, both driven by the descriptor tables (so every field of every message type
 * is covered, including those added later).
 */
#ifndef PV_TEST_WIRE_FILL_H
#define PV_TEST_WIRE_FILL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/arena.h"
#include "common/rng.h"
#include "common/wire/wire_desc.h"

/* Fill `msg` with a random message of `type`: every field set, arrays of 0..max_items
 * elements (capped by the schema), strings of 0..max_str bytes mixing ASCII, quotes and
 * multi-byte UTF-8, integers often at their extremes, the schema's rules satisfied.
 * Memory comes from `arena`. Returns false when the arena is full. */
bool wire_fill_msg(pv_wire_msg_t *msg, pv_wire_type_t type, pv_rng_t *rng, pv_arena_t *arena,
                   uint32_t max_items, uint32_t max_str);

/* Compare two structs of `sd` field by field (floats bit for bit). On a difference writes
 * the field path into why[0..cap) and returns false. */
bool wire_equal(const pv_wire_struct_t *sd, const void *a, const void *b, char *why, size_t cap);

/* The same for two messages (type and body). */
bool wire_msg_equal(const pv_wire_msg_t *a, const pv_wire_msg_t *b, char *why, size_t cap);

/* What most wire tests need: two arenas, a decoder with default limits, two buffers. */
typedef struct wire_fx {
    pv_arena_t *arena, *arena2;
    pv_wire_dec_t *dec;
    pv_wire_buf_t buf, buf2;
} wire_fx_t;

/* Create / free the pieces of `fx`. wire_fx_init returns false when out of memory. */
bool wire_fx_init(wire_fx_t *fx);
void wire_fx_fini(wire_fx_t *fx);

#endif
