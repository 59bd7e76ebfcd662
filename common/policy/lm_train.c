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
 * Fused pass (pv_lm_train_items, the learner's update): each chunk's forward, then every
 * action token's gradient from its log-prob and entropy by the caller's function, then the
 * backward: the update's separate forward is saved.
 * Lanes. With policy.train_threads = L > 1 the chunks are shared among L lanes (lane l takes
 * chunks l, l + L, ...; lane 0 in the caller's thread, the others on threads started for
 * the call), each with its own transformer work and, in the backward, its own gradient,
 * added into the caller's in lane order afterwards: the model is only read, every log-prob
 * is the one a single lane computes, and the gradient differs from one lane's only by the
 * order of float additions (the same for every run with the same L).
 */
#include <stdlib.h>
#include <string.h>

#include "common/policy/lm_impl.h"
#include "common/vec.h"

#define S_TOKENS 1024 /* padded tokens of one chunk (B x T) */

/* A lane's chunk buffers (not its work or gradient). */
static void s_lane_bufs_free(pv_lm_lane_t *ln)
{
    free(ln->btok);
    free(ln->btgt);
    free(ln->blp);
    free(ln->bent);
    free(ln->bdlp);
    free(ln->bdent);
    free(ln->bbegin);
    free(ln->bn);
}

void pv_lm_train_free(pv_lm_work_t *w)
{
    for (size_t l = 0; l < PV_LM_MAX_LANES; l++) {
        pv_lm_lane_t *ln = &w->lane[l];
        pv_tf_work_destroy(&ln->tw);
        s_lane_bufs_free(ln);
        free(ln->grad);
    }
    free(w->chunk);
    free(w->pool.ids);
    free(w->seqs);
    free(w->order);
    free(w->at);
    free(w->apool.ids);
    free(w->abegin);
    free(w->an);
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
        if (rc == PV_OK && w->ctx.n + it->n_tokens > lm->max_context &&
            it->n_tokens < lm->max_context) /* an action longer than acting writes (a
                                                demonstration's): a context that leaves it room */
            rc = pv_lm_context_within(lm, &it->ctx, it->cands, it->n_cands,
                                      lm->max_context - it->n_tokens, &w->ctx, em);
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

/* Lane buffers for chunks of sequences of up to `longest` tokens; lanes after the first also
 * get a gradient buffer. */
static pv_err_t s_room(const pv_policy_t *p, pv_lm_lane_t *ln, bool own_grad, size_t longest,
                       pv_errmsg_t *em)
{
    const pv_lm_t *lm = p->impl;
    if (own_grad && !ln->grad && !(ln->grad = calloc(p->n_params, sizeof *ln->grad)))
        return PV_ERR_NOMEM;
    size_t T = (longest + 63) / 64 * 64;
    if (T > lm->max_context)
        T = lm->max_context;
    if (ln->tw && ln->tw_T >= T)
        return PV_OK;
    size_t B = S_TOKENS / T ? S_TOKENS / T : 1;
    pv_tf_work_destroy(&ln->tw);
    pv_err_t rc = pv_tf_work_new(lm->model, B, T, &ln->tw, em);
    if (rc != PV_OK)
        return rc;
    ln->tw_B = B;
    ln->tw_T = T;
    size_t N = B * T;
    s_lane_bufs_free(ln);
    ln->bbegin = malloc(N * sizeof *ln->bbegin);
    ln->bn = malloc(N * sizeof *ln->bn);
    ln->btok = malloc(N * sizeof *ln->btok);
    ln->btgt = malloc(N * sizeof *ln->btgt);
    ln->blp = malloc(N * sizeof *ln->blp);
    ln->bent = malloc(N * sizeof *ln->bent);
    ln->bdlp = malloc(N * sizeof *ln->bdlp);
    ln->bdent = malloc(N * sizeof *ln->bdent);
    if (!ln->btok || !ln->btgt || !ln->blp || !ln->bent || !ln->bdlp || !ln->bdent || !ln->bbegin ||
        !ln->bn)
        return PV_ERR_NOMEM;
    ln->cap_b = N;
    return PV_OK;
}

/* Chunk [k0, k1) of the order into lane ln: rows b = sequence order[k0 + b], padded to T. */
static void s_fill(const pv_lm_t *lm, const pv_lm_work_t *w, pv_lm_lane_t *ln,
                   const pv_policy_item_t *items, size_t n, size_t k0, size_t k1, size_t T)
{
    size_t B = k1 - k0;
    for (size_t i = 0; i < B * T; i++) {
        ln->btok[i] = lm->lmp.im_end; /* padding: any id, no target */
        ln->btgt[i] = PV_TF_NO_TARGET;
        ln->bn[i] = 0;
    }
    for (size_t b = 0; b < B; b++) {
        const pv_lm_seq_t *s = &w->seqs[w->order[k0 + b]];
        memcpy(ln->btok + b * T, w->pool.ids + s->off, s->len * sizeof *ln->btok);
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
            ln->btgt[at] = items[i].tokens[k];
            ln->bbegin[at] = w->abegin[a->out + k];
            ln->bn[at] = w->an[a->out + k];
        }
    }
}

/* The chunks of the order (w->chunk: first position, end, padded length), each at most
 * S_TOKENS padded tokens and B rows of the lanes' works. Errors: PV_ERR_NOMEM. */
static pv_err_t s_chunks(pv_lm_work_t *w, size_t *n_chunks)
{
    size_t n = 0, B = w->lane[0].tw_B, cap = w->lane[0].cap_b;
    for (size_t k0 = 0; k0 < w->n_seqs; n++) {
        if (pv_grow((void **)&w->chunk, &w->cap_chunk, 3 * (n + 1), sizeof *w->chunk) != PV_OK)
            return PV_ERR_NOMEM;
        size_t T = w->seqs[w->order[k0]].len, k1 = k0 + 1;
        while (k1 < w->n_seqs && k1 - k0 < B && (k1 - k0 + 1) * T <= cap)
            k1++;
        w->chunk[3 * n] = k0;
        w->chunk[3 * n + 1] = k1;
        w->chunk[3 * n + 2] = T;
        k0 = k1;
    }
    *n_chunks = n;
    return PV_OK;
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
        pv_err_t rc = pv_lm_cands(lm, &w->cs, it->cands, it->n_cands);
        if (rc != PV_OK)
            return rc;
        pv_lm_walk_t wk;
        pv_lm_walk_start(&wk, &w->cs, it->n_cands);
        for (size_t k = 0; k < it->n_tokens; k++) {
            size_t na = pv_lm_walk_allowed(&wk, w->cs.allow), o = w->at[i].out + k;
            bool in = false;
            for (size_t j = 0; j < na; j++)
                in = in || w->cs.allow[j] == it->tokens[k];
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
                if ((rc = pv_lmp_push(&w->apool, w->cs.allow[j])) != PV_OK)
                    return rc;
            pv_lm_walk_step(&wk, it->tokens[k]);
        }
    }
    return PV_OK;
}

/* The forward of one chunk (B, T) filled by s_fill into lane ln, masked under decode =
 * constrain. */
static pv_err_t s_run(const pv_policy_t *p, const pv_lm_work_t *w, pv_lm_lane_t *ln, size_t B,
                      size_t T, pv_errmsg_t *em)
{
    const pv_lm_t *lm = p->impl;
    pv_tf_allow_t a = {.ids = w->apool.ids, .begin = ln->bbegin, .n = ln->bn};
    bool masked = p->spec.decode == PV_POLICY_DECODE_CONSTRAIN;
    return pv_tf_forward_masked(lm->model, ln->tw, ln->btok, ln->btgt, B, T, p->spec.temperature,
                                masked ? &a : NULL, ln->blp, ln->bent, em);
}

/* One pass over the items, in lanes: forward only (logp, ent out) or forward and backward
 * (dlogp, dent in; the gradient added into grad; logp_out, when not NULL, the log-probs). */
typedef struct s_pass {
    const pv_policy_t *p;
    pv_lm_work_t *w;
    const pv_policy_item_t *items;
    size_t n, n_chunks;
    bool backward;
    float *logp, *ent;          /* forward (and the fused pass) */
    const float *dlogp, *dent;  /* backward */
    float *grad, *logp_out;     /* backward */
    pv_policy_token_grad_fn fn; /* the fused pass: gradients from the forward's log-probs */
    void *user;
} s_pass_t;

typedef struct s_lane_arg {
    const s_pass_t *ps;
    size_t lane;
} s_lane_arg_t;

/* Lane `lane` takes chunks lane, lane + n_lanes, ...: the assignment is fixed, so a pass
 * gives the same numbers whatever the threads' timing. */
static void s_lane_run(const s_pass_t *ps, size_t lane)
{
    const pv_policy_t *p = ps->p;
    const pv_lm_t *lm = p->impl;
    pv_lm_work_t *w = ps->w;
    pv_lm_lane_t *ln = &w->lane[lane];
    float *grad = lane ? ln->grad : ps->grad;
    const pv_policy_item_t *items = ps->items;
    ln->rc = PV_OK;
    ln->em.text[0] = 0;
    for (size_t c = lane; ln->rc == PV_OK && c < ps->n_chunks; c += w->n_lanes) {
        size_t k0 = w->chunk[3 * c], k1 = w->chunk[3 * c + 1], T = w->chunk[3 * c + 2];
        size_t N = (k1 - k0) * T;
        bool any = false;
        if (ps->backward && ps->fn) { /* fused: the forward first, then fn for each token */
            memset(ln->bdlp, 0, N * sizeof *ln->bdlp);
            memset(ln->bdent, 0, N * sizeof *ln->bdent);
            s_fill(lm, w, ln, items, ps->n, k0, k1, T);
            if ((ln->rc = s_run(p, w, ln, k1 - k0, T, &ln->em)) != PV_OK)
                break;
            for (size_t i = 0; i < ps->n; i++) {
                size_t b = s_row(w, i, k0, k1);
                for (size_t k = 0; b != SIZE_MAX && k < items[i].n_tokens; k++) {
                    size_t at = b * T + w->at[i].pos + k - 1, o = w->at[i].out + k;
                    ps->fn(ps->user, o, ln->blp[at], ln->bent[at], &ln->bdlp[at], &ln->bdent[at]);
                    any = any || ln->bdlp[at] != 0.0f || ln->bdent[at] != 0.0f;
                    if (ps->logp)
                        ps->logp[o] = ln->blp[at];
                    if (ps->ent)
                        ps->ent[o] = ln->bent[at];
                }
            }
            if (any)
                ln->rc = pv_tf_backward(lm->model, ln->tw, ln->bdlp, ln->bdent, grad);
            continue;
        }
        if (ps->backward) {
            memset(ln->bdlp, 0, N * sizeof *ln->bdlp);
            memset(ln->bdent, 0, N * sizeof *ln->bdent);
            for (size_t i = 0; i < ps->n; i++) {
                size_t b = s_row(w, i, k0, k1);
                if (b == SIZE_MAX)
                    continue;
                for (size_t k = 0; k < items[i].n_tokens; k++) {
                    size_t at = b * T + w->at[i].pos + k - 1, o = w->at[i].out + k;
                    ln->bdlp[at] = ps->dlogp[o];
                    ln->bdent[at] = ps->dent ? ps->dent[o] : 0.0f;
                    any = any || ps->dlogp[o] != 0.0f || (ps->dent && ps->dent[o] != 0.0f);
                }
            }
            if (!any && !ps->logp_out) /* nothing to learn from this chunk */
                continue;
        }
        s_fill(lm, w, ln, items, ps->n, k0, k1, T);
        ln->rc = s_run(p, w, ln, k1 - k0, T, &ln->em);
        float *lp = ps->backward ? ps->logp_out : ps->logp, *en = ps->backward ? NULL : ps->ent;
        for (size_t i = 0; ln->rc == PV_OK && lp && i < ps->n; i++) {
            size_t b = s_row(w, i, k0, k1);
            for (size_t k = 0; b != SIZE_MAX && k < items[i].n_tokens; k++) {
                size_t at = b * T + w->at[i].pos + k - 1;
                lp[w->at[i].out + k] = ln->blp[at];
                if (en)
                    en[w->at[i].out + k] = ln->bent[at];
            }
        }
        if (ln->rc == PV_OK && any)
            ln->rc = pv_tf_backward(lm->model, ln->tw, ln->bdlp, ps->dent ? ln->bdent : NULL, grad);
    }
}

static void *s_lane_thread(void *arg)
{
    const s_lane_arg_t *a = arg;
    s_lane_run(a->ps, a->lane);
    return NULL;
}

/* Run a pass in w->n_lanes lanes (threads for lanes 1..; fewer when there are fewer chunks);
 * the lanes' gradients are then added into ps->grad in lane order. */
static pv_err_t s_pass(s_pass_t *ps, pv_errmsg_t *em)
{
    pv_lm_work_t *w = ps->w;
    size_t lanes = w->n_lanes < ps->n_chunks ? w->n_lanes : ps->n_chunks;
    pthread_t th[PV_LM_MAX_LANES];
    s_lane_arg_t args[PV_LM_MAX_LANES];
    bool started[PV_LM_MAX_LANES] = {false};
    size_t saved = w->n_lanes;
    w->n_lanes = lanes ? lanes : 1; /* the stride of s_lane_run */
    for (size_t l = 1; l < w->n_lanes; l++) {
        args[l] = (s_lane_arg_t){ps, l};
        started[l] = pthread_create(&th[l], NULL, s_lane_thread, &args[l]) == 0;
        if (!started[l]) /* no thread: the lane runs here after lane 0 */
            w->lane[l].rc = PV_ERR_AGAIN;
    }
    s_lane_run(ps, 0);
    for (size_t l = 1; l < w->n_lanes; l++) {
        if (started[l])
            pthread_join(th[l], NULL);
        else
            s_lane_run(ps, l);
    }
    pv_err_t rc = PV_OK;
    for (size_t l = 0; l < w->n_lanes && rc == PV_OK; l++)
        if ((rc = w->lane[l].rc) != PV_OK && em)
            pv_errf(em, rc, "%s", w->lane[l].em.text[0] ? w->lane[l].em.text : pv_strerror(rc));
    if (rc == PV_OK && ps->backward)
        for (size_t l = 1; l < w->n_lanes; l++) {
            float *g = w->lane[l].grad;
            for (size_t i = 0; i < ps->p->n_params; i++) {
                ps->grad[i] += g[i];
                g[i] = 0.0f;
            }
        }
    else if (ps->backward)
        for (size_t l = 1; l < w->n_lanes; l++)
            memset(w->lane[l].grad, 0, ps->p->n_params * sizeof *w->lane[l].grad);
    w->n_lanes = saved;
    return rc;
}

static pv_err_t s_prepare(const pv_policy_t *p, pv_lm_work_t *w, const pv_policy_item_t *items,
                          size_t n, bool backward, size_t *n_chunks, pv_errmsg_t *em)
{
    pv_lm_t *lm = p->impl;
    w->single_ready = false;
    *n_chunks = 0;
    if (!w->n_lanes) {
        uint32_t t = p->spec.train_threads;
        w->n_lanes = t < 1 ? 1 : t > PV_LM_MAX_LANES ? PV_LM_MAX_LANES : t;
    }
    pv_err_t rc = s_sequences(lm, w, items, n, em);
    if (rc == PV_OK)
        rc = s_allow(p, w, items, n, em);
    for (size_t l = 0; rc == PV_OK && w->n_seqs && l < w->n_lanes; l++)
        rc = s_room(p, &w->lane[l], backward && l > 0, w->seqs[w->order[0]].len, em);
    if (rc == PV_OK && w->n_seqs)
        rc = s_chunks(w, n_chunks);
    return rc;
}

/* Prepare and run pass ps (its policy, work, items and mode set by the caller). */
static pv_err_t s_run_pass(s_pass_t *ps, pv_errmsg_t *em)
{
    pv_err_t rc = s_prepare(ps->p, ps->w, ps->items, ps->n, ps->backward, &ps->n_chunks, em);
    return rc == PV_OK ? s_pass(ps, em) : rc;
}

pv_err_t pv_lm_forward_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                             void *work, float *logp, float *ent, pv_errmsg_t *em)
{
    s_pass_t ps = {.p = p, .w = work, .items = items, .n = n, .logp = logp, .ent = ent};
    return s_run_pass(&ps, em);
}

pv_err_t pv_lm_backward_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                              void *work, const float *dlogp, const float *dent, float *grad,
                              float *logp_out, pv_errmsg_t *em)
{
    s_pass_t ps = {.p = p, .w = work, .items = items, .n = n, .backward = true};
    ps.dlogp = dlogp, ps.dent = dent, ps.grad = grad, ps.logp_out = logp_out;
    return s_run_pass(&ps, em);
}

pv_err_t pv_lm_train_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                           void *work, pv_policy_token_grad_fn fn, void *user, float *grad,
                           float *logp_out, float *ent_out, pv_errmsg_t *em)
{
    s_pass_t ps = {.p = p, .w = work, .items = items, .n = n, .backward = true};
    ps.fn = fn, ps.user = user, ps.grad = grad, ps.logp = logp_out, ps.ent = ent_out;
    return s_run_pass(&ps, em);
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
    w->single_ready = rc == PV_OK; /* one sequence: one chunk, in lane 0 */
    w->single_n = n_tokens;
    return rc;
}

pv_err_t pv_lm_backward_one(const pv_policy_t *p, void *work, const float *dlogp, const float *dent,
                            float *grad)
{
    const pv_lm_t *lm = p->impl;
    pv_lm_work_t *w = work;
    pv_lm_lane_t *ln = &w->lane[0];
    if (!w->single_ready)
        return PV_ERR_STATE;
    size_t T = w->seqs[0].len;
    memset(ln->bdlp, 0, T * sizeof *ln->bdlp);
    memset(ln->bdent, 0, T * sizeof *ln->bdent);
    for (size_t k = 0; k < w->single_n; k++) {
        ln->bdlp[w->at[0].pos + k - 1] = dlogp[k];
        ln->bdent[w->at[0].pos + k - 1] = dent ? dent[k] : 0.0f;
    }
    return pv_tf_backward(lm->model, ln->tw, ln->bdlp, dent ? ln->bdent : NULL, grad);
}
