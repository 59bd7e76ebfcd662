/* wire_int.h - pieces shared by the encoder and the decoder (not a public API).
 *
 * A pv_wire_path_t follows the walk through nested structs and arrays so that an error
 * names the field ("rollout_group.trajectories[2].steps[0].obs: invalid UTF-8"). The rule
 * and value checks live here so that encode and decode apply exactly the same ones.
 */
#ifndef PV_WIRE_INT_H
#define PV_WIRE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/wire/wire_desc.h"

#define PV_WIRE_PATH_MAX 16

typedef struct pv_wire_path {
    const char *name[PV_WIRE_PATH_MAX];
    int64_t index[PV_WIRE_PATH_MAX]; /* element index inside an array field, -1 for none */
    int depth;
} pv_wire_path_t;

/* Enter / leave a named level. Levels past PV_WIRE_PATH_MAX are not recorded (the schema
 * is shallower; the depth is still tracked). */
static inline void pv_wire_path_push(pv_wire_path_t *p, const char *name)
{
    if (p->depth < PV_WIRE_PATH_MAX) {
        p->name[p->depth] = name;
        p->index[p->depth] = -1;
    }
    p->depth++;
}

static inline void pv_wire_path_index(pv_wire_path_t *p, int64_t index)
{
    if (p->depth > 0 && p->depth <= PV_WIRE_PATH_MAX)
        p->index[p->depth - 1] = index;
}

static inline void pv_wire_path_pop(pv_wire_path_t *p)
{
    p->depth--;
}

/* Write "path: <printf text>" into `em` and return `err`. */
pv_err_t pv_wire_fail(const pv_wire_path_t *path, pv_errmsg_t *em, pv_err_t err, const char *fmt,
                      ...) __attribute__((format(printf, 4, 5)));

/* `len` bytes of `s` are well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF) and contain no NUL byte. */
bool pv_wire_utf8_ok(const char *s, size_t len);

/* Check the value range of an integer field: v <= MAX (or the kind's maximum). */
pv_err_t pv_wire_check_uint(const pv_wire_field_t *f, pv_wire_kind_t kind, uint64_t v,
                            const pv_wire_path_t *path, pv_errmsg_t *em);

/* Check every RULE of struct `sd` on the filled C struct `obj` (after all fields are in
 * place). Errors: PV_ERR_INVAL with the field path in `em`. */
pv_err_t pv_wire_check_rules(const pv_wire_struct_t *sd, const void *obj,
                             const pv_wire_path_t *path, pv_errmsg_t *em);

/* Pre-scan of MessagePack bytes (wire_scan.c): see wire.h, step 2. Allocates nothing.
 * *n_objects receives the number of objects. Errors: PV_ERR_LIMIT, PV_ERR_TRUNCATED,
 * PV_ERR_PARSE, PV_ERR_TYPE (extension types). */
pv_err_t pv_wire_scan(const uint8_t *p, size_t len, const pv_wire_limits_t *lim,
                      uint64_t *n_objects, pv_errmsg_t *em);

#endif
