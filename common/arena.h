/* arena.h - bump allocator for per-batch scratch memory.
 *
 * Hot paths (policy forward, advantage computation, message decoding) take scratch space
 * from an arena and release it all at once with pv_arena_reset(). Memory comes in blocks;
 * a reset keeps every block, so after the first batch a steady-state loop allocates
 * nothing from the system. A block cap bounds the total so a bad input cannot make an
 * arena grow without limit.
 */
#ifndef PV_ARENA_H
#define PV_ARENA_H

#include <stddef.h>

#include "common/err.h"

typedef struct pv_arena pv_arena_t;

/* Create an arena whose blocks are at least `block_bytes` (0 means 64 KiB) and whose total
 * reserved memory never exceeds `max_bytes` (0 means unlimited). Errors: PV_ERR_NOMEM. */
pv_err_t pv_arena_new(size_t block_bytes, size_t max_bytes, pv_arena_t **out);

/* Free every block and the arena; clears *arena. NULL-safe. */
void pv_arena_destroy(pv_arena_t **arena);

/* `size` bytes aligned to `align` (a power of two; 0 means max_align_t). Returns NULL when
 * the system is out of memory or the arena's max_bytes would be exceeded. The memory is
 * uninitialised and valid until the next pv_arena_reset() or destroy. */
void *pv_arena_alloc(pv_arena_t *self, size_t size, size_t align);

/* Like pv_arena_alloc() but zero-filled; `n * size` is overflow-checked. */
void *pv_arena_calloc(pv_arena_t *self, size_t n, size_t size);

/* Copy `len` bytes of `s` plus a terminating NUL into the arena. */
char *pv_arena_strndup(pv_arena_t *self, const char *s, size_t len);

/* Copy the NUL-terminated `s` into the arena (pv_arena_strndup with strlen(s)). */
char *pv_arena_strdup(pv_arena_t *self, const char *s);

/* Release all allocations; blocks are kept for reuse. */
void pv_arena_reset(pv_arena_t *self);

/* Bytes handed out since the last reset / bytes reserved from the system. */
size_t pv_arena_used(const pv_arena_t *self);
size_t pv_arena_reserved(const pv_arena_t *self);

#endif
