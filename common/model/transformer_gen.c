/* transformer_gen.c - generation with a KV cache: prefill, batched decode; see transformer.h.
 *
 * One inference step runs a set of row groups through the layers together: group g is n_g
 * consecutive tokens appended to slot s_g at positions len[s_g] .. len[s_g] + n_g - 1. A
 * prefill chunk is one group of up to S_CHUNK rows; a batched prefill packs the new tokens
 * of several slots into steps of up to S_ROWS rows (one group of up to S_CHUNK rows per slot
 * and step); a decode step is B groups of one row.
 * The linear layers see all rows at once (one matrix product for the batch); RoPE, the cache
 * writes and attention go group by group against the group's own slot.
 */
#include <stdlib.h>
#include <string.h>

#include "common/model/kernels.h"
#include "common/model/transformer.h"
#include "common/model/transformer_impl.h"

#define S_CHUNK 64  /* prefill rows per group (the attention scratch) */
#define S_ROWS  256 /* rows per step of a batched prefill */

struct pv_tf_cache {
    size_t n_slots, max_T, R; /* R: scratch rows, max(n_slots, S_CHUNK, S_ROWS if n_slots > 1) */
    size_t L, kd;             /* layers, KV*D */
    size_t *len;              /* (n_slots) */
    float *k, *v;             /* (n_slots, L, max_T, KV*D) after q/k norm and RoPE */
    float *mem;
    size_t n_floats;
    /* scratch */
    float *x, *ln, *o;      /* (R, C) */
    float *q, *y;           /* (R, H*D) */
    float *kn, *vn;         /* (R, KV*D) */
    float *g, *u;           /* (R, F) */
    float *rstd;            /* (R * H) */
    float *att;             /* (H, S_CHUNK, max_T) */
    float *last;            /* (R, C) the last row of each group */
    size_t *gslot, *gn;     /* (R) groups: slot and row count */
    float **gout;           /* (R) where each group's last-row logits go (NULL: nowhere) */
    uint32_t *gtok;         /* (R) a batched prefill step's tokens */
    size_t *pstart;         /* (n_slots) a batched prefill: each slot's length at entry */
    pv_tf_agroup_t *groups; /* (R) their attention groups */
};

pv_err_t pv_tf_cache_new(const pv_tf_t *m, size_t n_slots, size_t max_T, pv_tf_cache_t **out,
                         pv_errmsg_t *em)
{
    const pv_tf_config_t *c = &m->cfg;
    if (n_slots == 0 || n_slots > (1u << 16) || max_T == 0 || max_T > m->n_pos)
        return pv_errf(em, PV_ERR_INVAL,
                       "transformer cache: need 1 <= slots <= 65536 and 1 <= T <= %zu (got %zu, "
                       "%zu)",
                       m->n_pos, n_slots, max_T);
    pv_tf_cache_t *s = calloc(1, sizeof *s);
    if (!s)
        return PV_ERR_NOMEM;
    size_t L = c->num_hidden_layers, C = c->hidden_size, F = c->intermediate_size;
    size_t H = c->num_attention_heads, QD = H * c->head_dim;
    size_t KD = (size_t)c->num_key_value_heads * c->head_dim;
    s->n_slots = n_slots;
    s->max_T = max_T;
    s->R = n_slots > S_CHUNK ? n_slots : S_CHUNK;
    if (n_slots > 1 && s->R < S_ROWS) /* room to pack several slots' prompts in one step */
        s->R = S_ROWS;
    s->L = L;
    s->kd = KD;
    size_t R = s->R, kv = n_slots * L * max_T * KD;
    struct {
        float **p;
        size_t n;
    } blocks[] = {{&s->k, kv},
                  {&s->v, kv},
                  {&s->x, R * C},
                  {&s->ln, R * C},
                  {&s->o, R * C},
                  {&s->q, R * QD},
                  {&s->y, R * QD},
                  {&s->kn, R * KD},
                  {&s->vn, R * KD},
                  {&s->g, R * F},
                  {&s->u, R * F},
                  {&s->rstd, R * H},
                  {&s->att, H * S_CHUNK * max_T},
                  {&s->last, R * C}};
    size_t nb = sizeof blocks / sizeof blocks[0], at = 0;
    for (size_t i = 0; i < nb; i++)
        at += (blocks[i].n + 15) / 16 * 16;
    s->n_floats = at;
    s->mem = aligned_alloc(64, at * sizeof(float));
    s->len = calloc(n_slots, sizeof *s->len);
    s->gslot = calloc(R, sizeof *s->gslot);
    s->gn = calloc(R, sizeof *s->gn);
    s->groups = calloc(R, sizeof *s->groups);
    s->gout = calloc(R, sizeof *s->gout);
    s->gtok = calloc(R, sizeof *s->gtok);
    s->pstart = calloc(n_slots, sizeof *s->pstart);
    if (!s->mem || !s->len || !s->gslot || !s->gn || !s->groups || !s->gout || !s->gtok ||
        !s->pstart) {
        pv_tf_cache_destroy(&s);
        return pv_errf(em, PV_ERR_NOMEM, "transformer cache: no memory for %zu MiB",
                       at * sizeof(float) >> 20);
    }
    at = 0;
    for (size_t i = 0; i < nb; i++) {
        *blocks[i].p = s->mem + at;
        at += (blocks[i].n + 15) / 16 * 16;
    }
    *out = s;
    return PV_OK;
}

void pv_tf_cache_destroy(pv_tf_cache_t **cp)
{
    if (!cp || !*cp)
        return;
    pv_tf_cache_t *s = *cp;
    free(s->mem);
    free(s->len);
    free(s->gslot);
    free(s->gn);
    free(s->groups);
    free(s->gout);
    free(s->gtok);
    free(s->pstart);
    free(s);
    *cp = NULL;
}

size_t pv_tf_cache_bytes(const pv_tf_cache_t *c)
{
    return c->n_floats * sizeof(float) + (c->n_slots + 2 * c->R) * sizeof(size_t);
}

size_t pv_tf_cache_len(const pv_tf_cache_t *c, size_t slot)
{
    return slot < c->n_slots ? c->len[slot] : 0;
}

void pv_tf_cache_reset(pv_tf_cache_t *c, size_t slot)
{
    if (slot < c->n_slots)
        c->len[slot] = 0;
}

void pv_tf_cache_truncate(pv_tf_cache_t *c, size_t slot, size_t n)
{
    if (slot < c->n_slots && n < c->len[slot])
        c->len[slot] = n;
}

/* The cache rows (max_T, KV*D) of one slot and layer. */
static float *s_kv(const pv_tf_cache_t *c, float *base, size_t slot, size_t l)
{
    return base + (slot * c->L + l) * c->max_T * c->kd;
}

void pv_tf_cache_copy(pv_tf_cache_t *c, size_t dst, size_t src)
{
    if (dst >= c->n_slots || src >= c->n_slots || dst == src)
        return;
    /* a slot is (L, max_T, KD): copy the used rows of every layer */
    size_t n = c->len[src] * c->kd;
    for (size_t l = 0; l < c->L; l++) {
        size_t d = (dst * c->L + l) * c->max_T * c->kd, s = (src * c->L + l) * c->max_T * c->kd;
        memcpy(c->k + d, c->k + s, n * sizeof(float));
        memcpy(c->v + d, c->v + s, n * sizeof(float));
    }
    c->len[dst] = c->len[src];
}

/* Runs the groups (c->gslot, c->gn, n_groups) with tokens (sum gn) through the model and
 * appends them to their slots; with `all`, logits (n, V) of every row; else the logits (V) of
 * each group's last row go to c->gout[g] (NULL: not computed), one product per run of groups
 * whose outputs are consecutive rows. */
static void s_step(const pv_tf_t *m, pv_tf_cache_t *c, const uint32_t *tokens, size_t n_groups,
                   float *logits, int all)
{
    const pv_tf_config_t *cf = &m->cfg;
    size_t C = cf->hidden_size;
    float eps = (float)cf->rms_norm_eps, *P = m->params;
    size_t n = 0;
    for (size_t g = 0; g < n_groups; g++)
        n += c->gn[g];
    pv_k_embed_fwd(c->x, P + m->o_embed, tokens, n, C);
    /* everything in scratch, updated in place; one attention group per slot */
    pv_tf_lbuf_t lb = {.x = c->x,
                       .ln1 = c->ln,
                       .ln2 = c->ln,
                       .rstd1 = c->rstd,
                       .rstd2 = c->rstd,
                       .q = c->q,
                       .qr = c->q,
                       .k = c->kn,
                       .kn = c->kn,
                       .v = c->vn,
                       .qrstd = c->rstd,
                       .krstd = c->rstd,
                       .y = c->y,
                       .mid = c->x,
                       .gate = c->g,
                       .up = c->u,
                       .h = c->g,
                       .out = c->x,
                       .tmp = c->o};
    for (size_t l = 0; l < cf->num_hidden_layers; l++) {
        for (size_t g = 0, r = 0; g < n_groups; r += c->gn[g++])
            c->groups[g] = (pv_tf_agroup_t){.row = r,
                                            .n = c->gn[g],
                                            .p0 = c->len[c->gslot[g]],
                                            .kc = s_kv(c, c->k, c->gslot[g], l),
                                            .vc = s_kv(c, c->v, c->gslot[g], l),
                                            .att = c->att};
        pv_tf_layer_fwd(m, l, &lb, n, c->groups, n_groups);
    }
    for (size_t g = 0; g < n_groups; g++)
        c->len[c->gslot[g]] += c->gn[g];
    if (all) {
        if (logits) {
            pv_k_rmsnorm_fwd(c->ln, c->rstd, c->x, P + m->o_norm, n, C, eps);
            pv_k_matmul_fwd(logits, c->ln, P + m->o_head, NULL, n, C, cf->vocab_size);
        }
        return;
    }
    size_t V = cf->vocab_size;
    for (size_t g = 0, r = 0; g < n_groups;) {
        if (!c->gout[g]) {
            r += c->gn[g++];
            continue;
        }
        size_t k = 0; /* a run of groups writing consecutive rows */
        for (; g + k < n_groups && c->gout[g + k] == c->gout[g] + k * V; k++) {
            memcpy(c->last + k * C, c->x + (r + c->gn[g + k] - 1) * C, C * sizeof(float));
            r += c->gn[g + k];
        }
        pv_k_rmsnorm_fwd(c->last, c->rstd, c->last, P + m->o_norm, k, C, eps);
        pv_k_matmul_fwd(c->gout[g], c->last, P + m->o_head, NULL, k, C, V);
        g += k;
    }
}

static pv_err_t s_tokens_ok(const pv_tf_t *m, const uint32_t *tokens, size_t n, pv_errmsg_t *em)
{
    for (size_t i = 0; i < n; i++)
        if (tokens[i] >= m->cfg.vocab_size)
            return pv_errf(em, PV_ERR_RANGE, "transformer: token %u >= vocab_size %u", tokens[i],
                           m->cfg.vocab_size);
    return PV_OK;
}

/* B distinct slots, each with room for n[b] more positions (n NULL: 1 each), the tokens of
 * each in the vocabulary (toks[b], or tokens[b] when toks is NULL). `what` names the call. */
static pv_err_t s_check_slots(const pv_tf_t *m, const pv_tf_cache_t *c, const size_t *slots,
                              const size_t *n, const uint32_t *const *toks, const uint32_t *tokens,
                              size_t B, const char *what, pv_errmsg_t *em)
{
    if (B == 0 || B > c->n_slots)
        return pv_errf(em, PV_ERR_INVAL, "transformer %s: %zu sequences for %zu slots", what, B,
                       c->n_slots);
    for (size_t b = 0; b < B; b++) {
        size_t k = n ? n[b] : 1;
        if (slots[b] >= c->n_slots || k == 0)
            return pv_errf(em, PV_ERR_INVAL, "transformer %s: slot %zu of %zu, %zu tokens", what,
                           slots[b], c->n_slots, k);
        if (c->len[slots[b]] + k > c->max_T)
            return pv_errf(em, PV_ERR_LIMIT,
                           "transformer %s: slot %zu holds %zu positions, %zu more pass %zu", what,
                           slots[b], c->len[slots[b]], k, c->max_T);
        for (size_t e = 0; e < b; e++)
            if (slots[e] == slots[b])
                return pv_errf(em, PV_ERR_INVAL, "transformer %s: slot %zu given twice", what,
                               slots[b]);
        pv_err_t rc = s_tokens_ok(m, toks ? toks[b] : tokens + b, k, em);
        if (rc != PV_OK)
            return rc;
    }
    return PV_OK;
}

/* Appends n tokens to a slot in chunks; logits as s_step (last row, or every row). */
static pv_err_t s_append(const pv_tf_t *m, pv_tf_cache_t *c, size_t slot, const uint32_t *tokens,
                         size_t n, float *logits, int all, pv_errmsg_t *em)
{
    pv_err_t rc = s_check_slots(m, c, &slot, &n, NULL, tokens, 1, "prefill", em);
    if (rc != PV_OK)
        return rc;
    for (size_t at = 0; at < n; at += S_CHUNK) {
        size_t k = n - at < S_CHUNK ? n - at : S_CHUNK;
        c->gslot[0] = slot;
        c->gn[0] = k;
        float *out = !logits       ? NULL
                     : all         ? logits + at * m->cfg.vocab_size
                     : at + k == n ? logits
                                   : NULL;
        c->gout[0] = out;
        s_step(m, c, tokens + at, 1, out, all);
    }
    return PV_OK;
}

pv_err_t pv_tf_prefill(const pv_tf_t *m, pv_tf_cache_t *c, size_t slot, const uint32_t *tokens,
                       size_t n, float *logits, pv_errmsg_t *em)
{
    return s_append(m, c, slot, tokens, n, logits, 0, em);
}

pv_err_t pv_tf_extend(const pv_tf_t *m, pv_tf_cache_t *c, size_t slot, const uint32_t *tokens,
                      size_t n, float *logits, pv_errmsg_t *em)
{
    return s_append(m, c, slot, tokens, n, logits, 1, em);
}

pv_err_t pv_tf_decode(const pv_tf_t *m, pv_tf_cache_t *c, const size_t *slots,
                      const uint32_t *tokens, size_t B, float *logits, pv_errmsg_t *em)
{
    pv_err_t rc = s_check_slots(m, c, slots, NULL, NULL, tokens, B, "decode", em);
    if (rc != PV_OK)
        return rc;
    for (size_t b = 0; b < B; b++) {
        c->gslot[b] = slots[b];
        c->gn[b] = 1;
        c->gout[b] = logits ? logits + b * m->cfg.vocab_size : NULL;
    }
    s_step(m, c, tokens, B, logits, 0);
    return PV_OK;
}

pv_err_t pv_tf_prefill_batch(const pv_tf_t *m, pv_tf_cache_t *c, const size_t *slots,
                             const uint32_t *const *tokens, const size_t *n, size_t B,
                             float *logits, pv_errmsg_t *em)
{
    pv_err_t rc = s_check_slots(m, c, slots, n, tokens, NULL, B, "prefill", em);
    if (rc != PV_OK)
        return rc;
    size_t V = m->cfg.vocab_size, done = 0, first = 0, *start = c->pstart;
    for (size_t b = 0; b < B; b++) /* sequence b's tokens in so far: len - start */
        start[slots[b]] = c->len[slots[b]];
    while (done < B) {
        size_t rows = 0, ng = 0;
        for (size_t b = first; b < B && rows < c->R; b++) {
            size_t have = c->len[slots[b]] - start[slots[b]];
            if (have == n[b])
                continue;
            size_t k = n[b] - have;
            if (k > S_CHUNK)
                k = S_CHUNK;
            if (k > c->R - rows)
                k = c->R - rows;
            memcpy(c->gtok + rows, tokens[b] + have, k * sizeof *c->gtok);
            c->gslot[ng] = slots[b];
            c->gn[ng] = k;
            c->gout[ng] = logits && have + k == n[b] ? logits + b * V : NULL;
            done += have + k == n[b];
            rows += k;
            ng++;
        }
        s_step(m, c, c->gtok, ng, NULL, 0);
        while (first < B && c->len[slots[first]] - start[slots[first]] == n[first])
            first++;
    }
    return PV_OK;
}
