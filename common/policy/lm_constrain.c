/* lm_constrain.c - the candidates' token sequences and the trie walk over them, shared by
 * acting (lm_policy.c: rank scores the sequences, decode = constrain masks each generated
 * token to the trie's continuations) and training (lm_train.c: the learner rebuilds the same
 * allowed ids for every action token); see lm_impl.h. */
#include <stdlib.h>
#include <string.h>

#include "common/policy/lm_impl.h"
#include "common/vec.h"

pv_err_t pv_lm_action_ids(pv_lm_t *lm, const char *text, pv_lmp_ids_t *out)
{
    out->n = 0;
    pthread_mutex_lock(&lm->tok_mu);
    pv_err_t rc = pv_lmp_encode(lm->tok, text, strlen(text), out);
    pthread_mutex_unlock(&lm->tok_mu);
    return rc ? rc : pv_lmp_push(out, lm->lmp.im_end);
}

/* *p resized to n elements of `size` bytes (unchanged on failure). */
pv_err_t pv_lm_resize(void *p, size_t n, size_t size)
{
    void *q = realloc(*(void **)p, n * size);
    if (!q)
        return PV_ERR_NOMEM;
    *(void **)p = q;
    return PV_OK;
}

pv_err_t pv_lm_cand_room(pv_lm_cset_t *cs, size_t n)
{
    if (n + 1 <= cs->cap)
        return PV_OK;
    size_t cap = n + 1;
    if (pv_lm_resize(&cs->off, cap, sizeof *cs->off) ||
        pv_lm_resize(&cs->score, cap, sizeof *cs->score) ||
        pv_lm_resize(&cs->alive, cap, sizeof *cs->alive) ||
        pv_lm_resize(&cs->allow, cap, sizeof *cs->allow) ||
        pv_lm_resize(&cs->keep, cap, sizeof *cs->keep))
        return PV_ERR_NOMEM;
    cs->cap = cap;
    return PV_OK;
}

void pv_lm_cset_free(pv_lm_cset_t *cs)
{
    free(cs->ids.ids);
    free(cs->off);
    free(cs->score);
    free(cs->alive);
    free(cs->allow);
    free(cs->keep);
    *cs = (pv_lm_cset_t){0};
}

pv_err_t pv_lm_cands(pv_lm_t *lm, pv_lm_cset_t *cs, const char *const *cands, size_t n)
{
    pv_err_t rc = pv_lm_cand_room(cs, n);
    cs->ids.n = 0;
    pv_lmp_ids_t one = {0};
    for (size_t c = 0; rc == PV_OK && c < n; c++) {
        cs->off[c] = cs->ids.n;
        if ((rc = pv_lm_action_ids(lm, cands[c], &one)) != PV_OK)
            break;
        size_t k = one.n < lm->max_new ? one.n : lm->max_new;
        for (size_t j = 0; rc == PV_OK && j < k; j++)
            rc = pv_lmp_push(&cs->ids, one.ids[j]);
    }
    free(one.ids);
    if (rc == PV_OK)
        cs->off[n] = cs->ids.n;
    return rc;
}

void pv_lm_walk_start(pv_lm_walk_t *wk, const pv_lm_cset_t *cs, size_t n)
{
    *wk = (pv_lm_walk_t){.ids = cs->ids.ids, .off = cs->off, .alive = cs->alive, .k = 0};
    for (size_t c = 0; c < n; c++)
        wk->alive[wk->n_alive++] = c;
}

size_t pv_lm_walk_allowed(const pv_lm_walk_t *wk, uint32_t *allow)
{
    size_t na = 0;
    for (size_t i = 0; i < wk->n_alive; i++) {
        size_t c = wk->alive[i];
        if (wk->off[c] + wk->k >= wk->off[c + 1])
            continue; /* this candidate ended here */
        uint32_t t = wk->ids[wk->off[c] + wk->k];
        size_t j = 0;
        while (j < na && allow[j] != t)
            j++;
        if (j == na)
            allow[na++] = t;
    }
    return na;
}

void pv_lm_walk_step(pv_lm_walk_t *wk, uint32_t tok)
{
    size_t m = 0;
    for (size_t i = 0; i < wk->n_alive; i++) {
        size_t c = wk->alive[i];
        if (wk->off[c] + wk->k < wk->off[c + 1] && wk->ids[wk->off[c] + wk->k] == tok)
            wk->alive[m++] = c;
    }
    wk->n_alive = m;
    wk->k++;
}

size_t pv_lm_walk_ended(const pv_lm_walk_t *wk)
{
    for (size_t i = 0; i < wk->n_alive; i++) {
        size_t c = wk->alive[i];
        if (wk->off[c + 1] - wk->off[c] == wk->k)
            return c;
    }
    return SIZE_MAX;
}
