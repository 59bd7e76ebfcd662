/* lm_slots.c - the language-model policy's KV-cache slots: the scratch of a batch of
 * conversations, which slot each context goes to, and prefilling what is new in them together
 * (lm_impl.h; acting is lm_policy.c).
 *
 * KV cache. A work keeps one slot per conversation of its largest batch and
 * PV_LM_SLOTS_KEPT more, with the tokens each holds. A new context goes to the slot sharing
 * its longest prefix; when that slot holds more than the shared part (another episode of the
 * group, another continuation from a state, a window restart) or an earlier conversation of
 * the batch has it, the shared prefix is copied to the least recently used free slot and the
 * new tokens are prefilled there, so the slot with the group's first prompt survives for its
 * next episode. Only the tokens after the shared prefix are computed.
 */
#include <stdlib.h>
#include <string.h>

#include "common/policy/lm_impl.h"
#include "common/vec.h"

void pv_lm_gen_free(pv_lm_gen_t *g)
{
    free(g->ctx.ids);
    pv_lm_cset_free(&g->cs);
    free(g->gen);
    free(g->gen_lp);
    free(g->reply);
    free(g->action);
}

void pv_lm_room_free(pv_lm_work_t *w)
{
    pv_tf_cache_destroy(&w->cache);
    for (size_t s = 0; s < w->n_slots; s++)
        free(w->slot[s].ids.ids);
    free(w->slot);
    free(w->claimed);
    for (size_t i = 0; i < w->cap_gens; i++)
        pv_lm_gen_free(&w->gens[i]);
    free(w->gens);
    free(w->logits);
    free(w->dlogits);
    free(w->dslot);
    free(w->dtok);
    free(w->dgen);
    free(w->ptok);
    free(w->pcnt);
}

pv_err_t pv_lm_room(const pv_lm_t *lm, pv_lm_work_t *w, size_t B)
{
    size_t V = lm->V;
    if (B > w->cap_gens) {
        if (pv_lm_resize(&w->gens, B, sizeof *w->gens) ||
            pv_lm_resize(&w->logits, B * V, sizeof(float)) ||
            pv_lm_resize(&w->dlogits, B * V, sizeof(float)) ||
            pv_lm_resize(&w->dslot, B, sizeof *w->dslot) ||
            pv_lm_resize(&w->dtok, B, sizeof *w->dtok) ||
            pv_lm_resize(&w->dgen, B, sizeof *w->dgen) ||
            pv_lm_resize(&w->ptok, B, sizeof *w->ptok) ||
            pv_lm_resize(&w->pcnt, B, sizeof *w->pcnt))
            return PV_ERR_NOMEM;
        while (w->cap_gens < B) {
            pv_lm_gen_t *g = &w->gens[w->cap_gens];
            *g = (pv_lm_gen_t){0};
            g->gen = malloc(lm->max_new * sizeof *g->gen);
            g->gen_lp = malloc(lm->max_new * sizeof *g->gen_lp);
            g->reply = malloc(w->text_cap);
            g->action = malloc(w->text_cap);
            if (!g->gen || !g->gen_lp || !g->reply || !g->action) {
                pv_lm_gen_free(g);
                return PV_ERR_NOMEM;
            }
            w->cap_gens++;
        }
    }
    size_t need = B + PV_LM_SLOTS_KEPT;
    if (need <= w->n_slots)
        return PV_OK;
    pv_tf_cache_t *c = NULL;
    if (pv_lm_resize(&w->claimed, need, sizeof *w->claimed) ||
        pv_lm_resize(&w->slot, need, sizeof *w->slot) ||
        pv_tf_cache_new(lm->model, need, lm->max_context, &c, NULL) != PV_OK)
        return PV_ERR_NOMEM;
    for (size_t s = w->n_slots; s < need; s++)
        w->slot[s] = (pv_lm_slot_t){0};
    for (size_t s = 0; s < need; s++) {
        w->slot[s].ids.n = 0;
        w->slot[s].used = 0;
    }
    pv_tf_cache_destroy(&w->cache);
    w->cache = c;
    w->n_slots = need;
    return PV_OK;
}

static size_t s_lcp(const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
    size_t n = na < nb ? na : nb, i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

static pv_err_t s_copy_ids(pv_lmp_ids_t *dst, const uint32_t *src, size_t n)
{
    if (pv_grow((void **)&dst->ids, &dst->cap, n ? n : 1, sizeof *dst->ids) != PV_OK)
        return PV_ERR_NOMEM;
    memcpy(dst->ids, src, n * sizeof *src);
    dst->n = n;
    return PV_OK;
}

/* Forget every slot when the parameters changed since the cache was filled: its keys and
 * values belong to the old ones. */
static void s_cache_check(const pv_policy_t *p, pv_lm_work_t *w)
{
    if (w->cache_gen == p->generation)
        return;
    for (size_t s = 0; s < w->n_slots; s++) {
        pv_tf_cache_reset(w->cache, s);
        w->slot[s].ids.n = 0;
        w->slot[s].used = 0;
    }
    w->cache_gen = p->generation;
}

void pv_lm_batch_begin(const pv_policy_t *p, pv_lm_work_t *w)
{
    s_cache_check(p, w);
    memset(w->claimed, 0, w->n_slots * sizeof *w->claimed);
    w->n_pend = 0;
}

/* w->claimed[s]: free for this batch, or claimed by one of its conversations (its KV rows
 * prefilled, or still pending: the slot's ids already hold the whole context). */
enum { S_FREE = 0, S_CLAIMED = 1, S_PENDING = 2 };

/* Is slot s a better source for a context than slot b, sharing l and bl tokens with it? A
 * longer shared prefix; at equal length a free slot, then one already prefilled, then the
 * more recently used. */
static bool s_better(const pv_lm_work_t *w, size_t s, size_t l, size_t b, size_t bl)
{
    if (l != bl)
        return l > bl;
    if (w->claimed[s] != w->claimed[b])
        return w->claimed[s] < w->claimed[b];
    return w->slot[s].used > w->slot[b].used;
}

/* Prefill the pending conversations w->gens[w->pend0 .. + w->n_pend) (consecutive) in one
 * pv_tf_prefill_batch: each its context's tokens from g->have on, its next-token logits into
 * its row of w->logits. */
pv_err_t pv_lm_flush(const pv_lm_t *lm, pv_lm_work_t *w, pv_errmsg_t *em)
{
    size_t n = w->n_pend, b0 = w->pend0;
    if (n == 0)
        return PV_OK;
    for (size_t i = 0; i < n; i++) {
        const pv_lm_gen_t *g = &w->gens[b0 + i];
        w->dslot[i] = g->slot;
        w->ptok[i] = g->ctx.ids + g->have;
        w->pcnt[i] = g->ctx.n - g->have;
    }
    w->n_pend = 0;
    pv_err_t rc = pv_tf_prefill_batch(lm->model, w->cache, w->dslot, w->ptok, w->pcnt, n,
                                      w->logits + b0 * lm->V, em);
    for (size_t i = 0; i < n; i++) {
        size_t s = w->gens[b0 + i].slot;
        w->claimed[s] = S_CLAIMED;
        if (rc != PV_OK) {
            pv_tf_cache_reset(w->cache, s);
            w->slot[s].ids.n = 0;
        }
    }
    return rc;
}

/* The rows a pending slot's KV cache already holds (its conversation's `have`). */
static size_t s_pending_have(const pv_lm_work_t *w, size_t slot)
{
    for (size_t i = 0; i < w->n_pend; i++)
        if (w->gens[w->pend0 + i].slot == slot)
            return w->gens[w->pend0 + i].have;
    return 0;
}

/* After an error before s_flush: a pending slot's ids hold the whole context but its rows
 * only the first `have` tokens; its ids go back to those. */
void pv_lm_unpend(pv_lm_work_t *w)
{
    for (size_t i = 0; i < w->n_pend; i++) {
        const pv_lm_gen_t *g = &w->gens[w->pend0 + i];
        w->slot[g->slot].ids.n = g->have;
        w->claimed[g->slot] = S_CLAIMED;
    }
    w->n_pend = 0;
}

/* Bring conversation b's context (g->ctx) into a cache slot no earlier conversation of the
 * batch has claimed (see the header: the slot with the longest shared prefix, or a copy of
 * that prefix in the least recently used free slot) and queue what is new for s_flush
 * (g->slot, g->have); a prefix copied from a pending slot is prefilled first. */
pv_err_t pv_lm_prefill(const pv_lm_t *lm, pv_lm_work_t *w, size_t b, pv_errmsg_t *em)
{
    pv_lm_gen_t *g = &w->gens[b];
    const pv_lmp_ids_t *c = &g->ctx;
    size_t best = 0, best_l = 0;
    for (size_t s = 0; s < w->n_slots; s++) {
        size_t l = s_lcp(w->slot[s].ids.ids, w->slot[s].ids.n, c->ids, c->n);
        if (s == 0 || s_better(w, s, l, best, best_l)) {
            best = s;
            best_l = l;
        }
    }
    size_t use = best;
    if (w->claimed[best] != S_FREE || best_l < w->slot[best].ids.n) {
        /* keep `best` for whoever shares more of it (or for the conversation that claimed it) */
        use = SIZE_MAX;
        for (size_t s = 0; s < w->n_slots; s++)
            if (s != best && w->claimed[s] == S_FREE &&
                (use == SIZE_MAX || w->slot[s].used < w->slot[use].used))
                use = s;
        if (use == SIZE_MAX) /* s_room keeps PV_LM_SLOTS_KEPT more slots than conversations */
            return pv_errf(em, PV_ERR_STATE, "transformer: no free cache slot");
        pv_err_t rc;
        if (best_l > 0 && w->claimed[best] == S_PENDING && best_l > s_pending_have(w, best) &&
            (rc = pv_lm_flush(lm, w, em)) != PV_OK)
            return rc;
        if (best_l > 0)
            pv_tf_cache_copy(w->cache, use, best);
        else
            pv_tf_cache_reset(w->cache, use);
        pv_tf_cache_truncate(w->cache, use, best_l);
    }
    size_t have = best_l;
    if (have == c->n) /* nothing new: prefill the last token again for its logits */
        have--;
    pv_tf_cache_truncate(w->cache, use, have);
    pv_lm_slot_t *sl = &w->slot[use];
    if (s_copy_ids(&sl->ids, c->ids, c->n) != PV_OK) { /* its ids no longer describe its rows */
        pv_tf_cache_reset(w->cache, use);
        sl->ids.n = 0;
        return PV_ERR_NOMEM;
    }
    sl->used = ++w->clock;
    w->claimed[use] = S_PENDING;
    g->slot = use;
    g->have = have;
    if (w->n_pend == 0)
        w->pend0 = b;
    w->n_pend++;
    return PV_OK;
}
