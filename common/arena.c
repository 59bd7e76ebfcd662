/* arena.c - see arena.h. */
#include "common/arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct s_block {
    struct s_block *next;
    size_t cap;  /* usable bytes after the header */
    size_t used; /* bytes handed out */
    alignas(max_align_t) unsigned char data[];
} s_block_t;

struct pv_arena {
    s_block_t *head;    /* block currently allocated from */
    s_block_t *blocks;  /* all blocks, in creation order */
    size_t block_bytes; /* minimum block size */
    size_t max_bytes;   /* cap on reserved bytes, 0 = none */
    size_t reserved;
    size_t used_before; /* bytes used in blocks before head */
};

pv_err_t pv_arena_new(size_t block_bytes, size_t max_bytes, pv_arena_t **out)
{
    pv_arena_t *self = calloc(1, sizeof *self);
    if (!self)
        return PV_ERR_NOMEM;
    self->block_bytes = block_bytes ? block_bytes : 64 * 1024;
    self->max_bytes = max_bytes;
    *out = self;
    return PV_OK;
}

void pv_arena_destroy(pv_arena_t **arena)
{
    if (!arena || !*arena)
        return;
    s_block_t *b = (*arena)->blocks;
    while (b) {
        s_block_t *next = b->next;
        free(b);
        b = next;
    }
    free(*arena);
    *arena = NULL;
}

/* Offset >= used inside `b` whose absolute address is a multiple of `align`. */
static size_t s_align_off(const s_block_t *b, size_t used, size_t align)
{
    uintptr_t at = (uintptr_t)(b->data + used);
    return used + (size_t)((align - (at & (align - 1))) & (align - 1));
}

void *pv_arena_alloc(pv_arena_t *self, size_t size, size_t align)
{
    if (align == 0)
        align = alignof(max_align_t);
    if ((align & (align - 1)) != 0 || size > SIZE_MAX / 2)
        return NULL;
    for (s_block_t *b = self->head; b; b = b->next) {
        size_t off = s_align_off(b, b->used, align);
        if (off <= b->cap && size <= b->cap - off) {
            if (b != self->head) { /* moving on: account for the skipped blocks */
                for (s_block_t *c = self->head; c != b; c = c->next)
                    self->used_before += c->used;
                self->head = b;
            }
            b->used = off + size;
            return b->data + off;
        }
    }
    /* no kept block fits: append a new one at the end of the list */
    size_t cap = size + align > self->block_bytes ? size + align : self->block_bytes;
    if (self->max_bytes && self->reserved + cap > self->max_bytes)
        return NULL;
    s_block_t *nb = malloc(sizeof *nb + cap);
    if (!nb)
        return NULL;
    nb->next = NULL;
    nb->cap = cap;
    nb->used = 0;
    self->reserved += cap;
    if (!self->blocks) {
        self->blocks = nb;
    } else {
        s_block_t *last = self->blocks;
        while (last->next)
            last = last->next;
        last->next = nb;
    }
    for (s_block_t *c = self->head; c; c = c->next)
        self->used_before += c->used;
    self->head = nb;
    size_t off = s_align_off(nb, 0, align);
    nb->used = off + size;
    return nb->data + off;
}

void *pv_arena_calloc(pv_arena_t *self, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = pv_arena_alloc(self, n * size, 0);
    if (p)
        memset(p, 0, n * size);
    return p;
}

char *pv_arena_strndup(pv_arena_t *self, const char *s, size_t len)
{
    char *p = pv_arena_alloc(self, len + 1, 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

char *pv_arena_strdup(pv_arena_t *self, const char *s)
{
    return pv_arena_strndup(self, s, strlen(s));
}

void pv_arena_reset(pv_arena_t *self)
{
    for (s_block_t *b = self->blocks; b; b = b->next)
        b->used = 0;
    self->head = self->blocks;
    self->used_before = 0;
}

size_t pv_arena_used(const pv_arena_t *self)
{
    size_t n = self->used_before;
    for (s_block_t *b = self->head; b; b = b->next)
        n += b->used;
    return n;
}

size_t pv_arena_reserved(const pv_arena_t *self)
{
    return self->reserved;
}
