/* lm_train.c - the language-model policy's training forward and backward over a batch of
 * steps (pv_policy_forward_items / pv_policy_backward_items); see lm_policy.c.
 *
 * Sequences. Each step (item) is its context (lm_prompt.h, built from the texts exactly as
 * when it acted) followed by its action tokens. Consecutive items whose context starts with
 * the previous sequence (the steps between two window restarts of one trajectory, whose
 * earlier actions re-encode to the tokens that were generated) extend that sequence, so one
 * forward scores them all; causal attention makes every action token's log-prob the same
 * as in a sequence of its own. The log-prob of the token at position p is the forward's
 * log_softmax(logits[p - 1] / T)[token] (pv_tf_forward), at the temperature the actors
 * sampled with.
 * Chunks. Sequences are taken longest first into chunks of at most S_TOKENS padded tokens
 * (B rows of the chunk's longest length; padding has no target), each one pv_tf_forward;
 * the training work is sized for the longest sequence seen so far. The backward runs each
 * chunk's forward again before pv_tf_backward (chunks whose gradients are all zero are
 * skipped), so no activations are kept between calls.
 */
#include <stdlib.h>
#include <string.h>

#include "common/policy/lm_impl.h"
#include "common/vec.h"

#define S_TOKENS 1024 /* padded tokens of one chunk (B x T) */

void pv_lm_train_free(pv_lm_work_t *w)
{
    pv_tf_work_destroy(&w->tw);
    free(w->pool.ids);
    free(w->seqs);
    free(w->order);
    free(w->at);
    free(w->btok);
    free(w->btgt);
    free(w->blp);
    free(w->bent);
    free(w->bdlp);
    free(w->bdent);
    free(w->apool.ids);
    free(w->abegin);
    free(w->an);
    free(w->bbegin);
    free(w->bn);
}

/* Append tokens to the pool. */
static pv_err_t s_pool_put(pv_lm_work_t *w, const uint32_t *ids, size_t n)
{
    if (pv_grow((void **)&w->pool.ids, &w->pool.cap, w->pool.n + n, sizeof *ids) != PV_OK)
        return PV_ERR_NOMEM;
    memcpy(w->pool.ids + w->pool.n, ids, n * sizeof *ids);
    w->pool.n += n;
    return PV_OK;
}

/* The sequences of items[0 .. n): w->seqs, w->at. */
static pv_err_t s_sequences(pv_lm_t *lm, pv_lm_work_t *w, const pv_policy_item_t *items, size_t n,
                            pv_errmsg_t *em)
{
    w->pool.n = 0;
    w->n_seqs = 0;
    if (pv_grow((void **)&w->at, &w->cap_at, n ? n : 1, sizeof *w->at) != PV_OK)
        return PV_ERR_NOMEM;
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        const pv_policy_item_t *it = &items[i];
        for (size_t k = 0; k < it->n_tokens; k++)
            if (it->tokens[k] >= lm->V)
                return pv_errf(em, PV_ERR_RANGE, "item %zu: token %u >= the vocabulary's %u", i,
                               it->tokens[k], lm->V);
        pv_err_t rc = pv_lm_context(lm, &it->ctx, it->cands, it->n_cands, &w->ctx, em);
        if (rc != PV_OK)
            return rc;
        const pv_lmp_ids_t *c = &w->ctx;
        if (c->n + it->n_tokens > lm->max_context)
            return pv_errf(em, PV_ERR_LIMIT, "item %zu: %zu context and %zu action tokens pass %zu",
                           i, c->n, it->n_tokens, lm->max_context);
        pv_lm_seq_t *last = w->n_seqs ? &w->seqs[w->n_seqs - 1] : NULL;
        bool extend = last && c->n >= last->len && c->n + it->n_tokens <= lm->max_context &&
                      memcmp(w->pool.ids + last->off, c->ids, last->len * sizeof *c->ids) == 0;
        if (!extend) {
            if (pv_grow((void **)&w->seqs, &w->cap_seqs, w->n_seqs + 1, sizeof *w->seqs) != PV_OK)
                return PV_ERR_NOMEM;
            last = &w->seqs[w->n_seqs++];
            *last = (pv_lm_seq_t){.off = w->pool.n, .len = 0};
        }
        if ((rc = s_pool_put(w, c->ids + last->len, c->n - last->len)) ||
            (rc = s_pool_put(w, it->tokens, it->n_tokens)))
            return rc;
        w->at[i] = (pv_lm_at_t){.seq = w->n_seqs - 1, .pos = c->n, .out = out};
        last->len = c->n + it->n_tokens;
        out += it->n_tokens;
    }
    /* longest first (ties in order: deterministic) */
    if (pv_grow((void **)&w->order, &w->cap_order, w->n_seqs ? w->n_seqs : 1, sizeof *w->order))
        return PV_ERR_NOMEM;
    for (size_t s = 0; s < w->n_seqs; s++) {
        size_t k = s;
        while (k > 0 && w->seqs[w->order[k - 1]].len < w->seqs[s].len) {
            w->order[k] = w->order[k - 1];
            k--;
        }
        w->order[k] = s;
    }
    return PV_OK;
}

/* A training work and chunk buffers for sequences of up to `longest` tokens. */
static pv_err_t s_room(const pv_lm_t *lm, pv_lm_work_t *w, size_t longest, pv_errmsg_t *em)
{
    size_t T = (longest + 63) / 64 * 64;
    if (T > lm->max_context)
        T = lm->max_context;
    if (w->tw && w->tw_T >= T)
        return PV_OK;
    size_t B = S_TOKENS / T ? S_TOKENS / T : 1;
    pv_tf_work_destroy(&w->tw);
    pv_err_t rc = pv_tf_work_new(lm->model, B, T, &w->tw, em);
    if (rc != PV_OK)
        return rc;
    w->tw_B = B;
    w->tw_T = T;
    size_t N = B * T;
    free(w->btok);
    free(w->btgt);
    free(w->blp);
    free(w->bent);
    free(w->bdlp);
    free(w->bdent);
    free(w->bbegin);
    free(w->bn);
    w->bbegin = malloc(N * sizeof *w->bbegin);
    w->bn = malloc(N * sizeof *w->bn);
    w->btok = malloc(N * sizeof *w->btok);
    w->btgt = malloc(N * sizeof *w->btgt);
    w->blp = malloc(N * sizeof *w->blp);
    w->bent = malloc(N * sizeof *w->bent);
    w->bdlp = malloc(N * sizeof *w->bdlp);
    w->bdent = malloc(N * sizeof *w->bdent);
    if (!w->btok || !w->btgt || !w->blp || !w->bent || !w->bdlp || !w->bdent || !w->bbegin ||
        !w->bn)
        return PV_ERR_NOMEM;
    w->cap_b = N;
    return PV_OK;
}

/* Chunk [k0, k1) of the order: rows b = sequence order[k0 + b], padded to T. */
static void s_fill(const pv_lm_t *lm, pv_lm_work_t *w, const pv_policy_item_t *items, size_t n,
                   size_t k0, size_t k1, size_t T)
{
    size_t B = k1 - k0;
    for (size_t i = 0; i < B * T; i++) {
        w->btok[i] = lm->lmp.im_end; /* padding: any id, no target */
        w->btgt[i] = PV_TF_NO_TARGET;
        w->bn[i] = 0;
    }
    for (size_t b = 0; b < B; b++) {
        const pv_lm_seq_t *s = &w->seqs[w->order[k0 + b]];
        memcpy(w->btok + b * T, w->pool.ids + s->off, s->len * sizeof *w->btok);
    }
    /* targets: the token at position p is predicted at p - 1 */
    for (size_t i = 0; i < n; i++) {
        const pv_lm_at_t *a = &w->at[i];
        size_t b = SIZE_MAX;
        for (size_t r = 0; r < B; r++)
            if (w->order[k0 + r] == a->seq)
                b = r;
        if (b == SIZE_MAX)
            continue;
        for (size_t k = 0; k < items[i].n_tokens; k++) {
            size_t at = b * T + a->pos + k - 1;
            w->btgt[at] = items[i].tokens[k];
            w->bbegin[at] = w->abegin[a->out + k];
            w->bn[at] = w->an[a->out + k];
        }
    }
}

/* The next chunk from order position k0: its end and padded length. */
static size_t s_chunk(const pv_lm_work_t *w, size_t k0, size_t *T)
{
    *T = w->seqs[w->order[k0]].len;
    size_t k1 = k0 + 1;
    while (k1 < w->n_seqs && k1 - k0 < w->tw_B && (k1 - k0 + 1) * *T <= w->cap_b)
        k1++;
    return k1;
}

/* Item i's rows of the chunk [k0, k1): row b, or SIZE_MAX when it is not in the chunk. */
static size_t s_row(const pv_lm_work_t *w, size_t i, size_t k0, size_t k1)
{
    for (size_t r = k0; r < k1; r++)
        if (w->order[r] == w->at[i].seq)
            return r - k0;
    return SIZE_MAX;
}

/* The allowed ids of every action token (w->apool, w->abegin, w->an in the callers' token
 * order): under decode = constrain, the walk down the trie of the item's candidates along
 * its tokens (lm_constrain.c, as acting masked them); otherwise, and for full_vocab items,
 * none (the whole vocabulary). Errors: PV_ERR_INVAL (a constrained item without
 * candidates), PV_ERR_RANGE (its tokens continue none of its candidates), PV_ERR_NOMEM. */
static pv_err_t s_allow(const pv_policy_t *p, pv_lm_work_t *w, const pv_policy_item_t *items,
                        size_t n, pv_errmsg_t *em)
{
    pv_lm_t *lm = p->impl;
    size_t nt = 0;
    for (size_t i = 0; i < n; i++)
        nt += items[i].n_tokens;
    if (pv_grow((void **)&w->abegin, &w->cap_a, nt ? nt : 1, sizeof *w->abegin) != PV_OK ||
        pv_grow((void **)&w->an, &w->cap_an, nt ? nt : 1, sizeof *w->an) != PV_OK)
        return PV_ERR_NOMEM;
    memset(w->an, 0, nt * sizeof *w->an);
    w->apool.n = 0;
    if (p->spec.decode != PV_POLICY_DECODE_CONSTRAIN)
        return PV_OK;
    for (size_t i = 0; i < n; i++) {
        const pv_policy_item_t *it = &items[i];
        if (it->full_vocab)
            continue;
        if (it->n_cands == 0)
            return pv_errf(em, PV_ERR_INVAL, "item %zu: decode=constrain needs its candidates", i);
        pv_err_t rc = pv_lm_cands(lm, w, it->cands, it->n_cands);
        if (rc != PV_OK)
            return rc;
        pv_lm_walk_t wk;
        pv_lm_walk_start(&wk, w, it->n_cands);
        for (size_t k = 0; k < it->n_tokens; k++) {
            size_t na = pv_lm_walk_allowed(&wk, w->allow), o = w->at[i].out + k;
            bool in = false;
            for (size_t j = 0; j < na; j++)
                in = in || w->allow[j] == it->tokens[k];
            if (!in && k >= lm->max_new)
                return pv_errf(em, PV_ERR_RANGE,
                               "item %zu: the action has more than policy.max_new_tokens = %zu "
                               "tokens (the candidates are cut there; raise max_new_tokens)",
                               i, lm->max_new);
            if (!in)
                return pv_errf(em, PV_ERR_RANGE,
                               "item %zu: token %zu (id %u) continues none of its %zu candidates",
                               i, k, it->tokens[k], it->n_cands);
            w->abegin[o] = w->apool.n;
            w->an[o] = (uint32_t)na;
            for (size_t j = 0; j < na; j++)
                if ((rc = pv_lmp_push(&w->apool, w->allow[j])) != PV_OK)
                    return rc;
            pv_lm_walk_step(&wk, it->tokens[k]);
        }
    }
    return PV_OK;
}

/* The forward of one chunk (B, T) filled by s_fill, masked under decode = constrain. */
static pv_err_t s_run(const pv_policy_t *p, pv_lm_work_t *w, size_t B, size_t T, pv_errmsg_t *em)
{
    const pv_lm_t *lm = p->impl;
    pv_tf_allow_t a = {.ids = w->apool.ids, .begin = w->bbegin, .n = w->bn};
    bool masked = p->spec.decode == PV_POLICY_DECODE_CONSTRAIN;
    return pv_tf_forward_masked(lm->model, w->tw, w->btok, w->btgt, B, T, p->spec.temperature,
                                masked ? &a : NULL, w->blp, w->bent, em);
}

static pv_err_t s_prepare(const pv_policy_t *p, pv_lm_work_t *w, const pv_policy_item_t *items,
                          size_t n, pv_errmsg_t *em)
{
    pv_lm_t *lm = p->impl;
    w->single_ready = false;
    pv_err_t rc = s_sequences(lm, w, items, n, em);
    if (rc == PV_OK)
        rc = s_allow(p, w, items, n, em);
    if (rc == PV_OK && w->n_seqs)
        rc = s_room(lm, w, w->seqs[w->order[0]].len, em);
    return rc;
}

pv_err_t pv_lm_forward_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                             void *work, float *logp, float *ent, pv_errmsg_t *em)
{
    const pv_lm_t *lm = p->impl;
    pv_lm_work_t *w = work;
    pv_err_t rc = s_prepare(p, w, items, n, em);
    for (size_t k0 = 0, k1, T; rc == PV_OK && k0 < w->n_seqs; k0 = k1) {
        k1 = s_chunk(w, k0, &T);
        s_fill(lm, w, items, n, k0, k1, T);
        rc = s_run(p, w, k1 - k0, T, em);
        for (size_t i = 0; rc == PV_OK && i < n; i++) {
            size_t b = s_row(w, i, k0, k1);
            if (b == SIZE_MAX)
                continue;
            for (size_t k = 0; k < items[i].n_tokens; k++) {
                size_t at = b * T + w->at[i].pos + k - 1;
                logp[w->at[i].out + k] = w->blp[at];
                if (ent)
                    ent[w->at[i].out + k] = w->bent[at];
            }
        }
    }
    return rc;
}

pv_err_t pv_lm_backward_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                              void *work, const float *dlogp, const float *dent, float *grad,
                              float *logp_out, pv_errmsg_t *em)
{
    const pv_lm_t *lm = p->impl;
    pv_lm_work_t *w = work;
    pv_err_t rc = s_prepare(p, w, items, n, em);
    for (size_t k0 = 0, k1, T; rc == PV_OK && k0 < w->n_seqs; k0 = k1) {
        k1 = s_chunk(w, k0, &T);
        size_t N = (k1 - k0) * T;
        memset(w->bdlp, 0, N * sizeof *w->bdlp);
        memset(w->bdent, 0, N * sizeof *w->bdent);
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            size_t b = s_row(w, i, k0, k1);
            if (b == SIZE_MAX)
                continue;
            for (size_t k = 0; k < items[i].n_tokens; k++) {
                size_t at = b * T + w->at[i].pos + k - 1, o = w->at[i].out + k;
                w->bdlp[at] = dlogp[o];
                w->bdent[at] = dent ? dent[o] : 0.0f;
                any = any || dlogp[o] != 0.0f || (dent && dent[o] != 0.0f);
            }
        }
        if (!any)
            continue;
        s_fill(lm, w, items, n, k0, k1, T);
        rc = s_run(p, w, k1 - k0, T, em);
        for (size_t i = 0; rc == PV_OK && logp_out && i < n; i++) {
            size_t b = s_row(w, i, k0, k1);
            for (size_t k = 0; b != SIZE_MAX && k < items[i].n_tokens; k++)
                logp_out[w->at[i].out + k] = w->blp[b * T + w->at[i].pos + k - 1];
        }
        if (rc == PV_OK)
            rc = pv_tf_backward(lm->model, w->tw, w->bdlp, dent ? w->bdent : NULL, grad);
    }
    return rc;
}

pv_err_t pv_lm_forward_one(const pv_policy_t *p, const pv_policy_ctx_t *ctx,
                           const char *const *cands, size_t n, const uint32_t *tokens,
                           size_t n_tokens, void *work, float *logp, float *ent)
{
    pv_lm_work_t *w = work;
    if (n_tokens == 0)
        return PV_ERR_RANGE;
    pv_policy_item_t it = {
        .ctx = *ctx, .cands = cands, .n_cands = n, .tokens = tokens, .n_tokens = n_tokens};
    pv_err_t rc = pv_lm_forward_items(p, &it, 1, work, logp, ent, NULL);
    w->single_ready = rc == PV_OK;
    w->single_n = n_tokens;
    return rc;
}

pv_err_t pv_lm_backward_one(const pv_policy_t *p, void *work, const float *dlogp, const float *dent,
                            float *grad)
{
    const pv_lm_t *lm = p->impl;
    pv_lm_work_t *w = work;
    if (!w->single_ready)
        return PV_ERR_STATE;
    size_t T = w->seqs[0].len;
    memset(w->bdlp, 0, T * sizeof *w->bdlp);
    memset(w->bdent, 0, T * sizeof *w->bdent);
    for (size_t k = 0; k < w->single_n; k++) {
        w->bdlp[w->at[0].pos + k - 1] = dlogp[k];
        w->bdent[w->at[0].pos + k - 1] = dent ? dent[k] : 0.0f;
    }
    return pv_tf_backward(lm->model, w->tw, w->bdlp, dent ? w->bdent : NULL, grad);
}
