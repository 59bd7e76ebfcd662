/* alfworld_expert.c - breadth-first shortest plans over the game's own operators.
 *
 * The search runs the same ground operators the game runs, so a plan found is executable and
 * shortest among plans that use the allowed operators. Two restrictions keep it small:
 *
 *   1. Exact: only atoms of "relevant" predicates (those some precondition, effect condition
 *      or the goal reads) are part of a search state, and operators that change nothing
 *      relevant (look, inventory, examine, help: they only set `checked`) are left out.
 *   2. ALFWorld knowledge (entities declared "- object" / "- receptacle"): the search may only
 *      touch objects the goal can be about (candidates of the goal's variables after arc
 *      consistency over the atoms that can hold) plus an object in hand, and receptacles that
 *      are goal candidates, hold one of those objects now, or take part in an operator that
 *      achieves a goal atom (microwave, sink basin, fridge, the lamp's place). An operator
 *      that needs one of its objects to be in such a receptacle already does not count when
 *      that is false now (a "take" from where the object is not). With one hand and no
 *      capacity limits, moving other objects or visiting other receptacles never shortens a
 *      plan; tests compare against the unrestricted search on small games.
 */
#include <stdlib.h>
#include <string.h>

#include "common/env/alfworld_expert.h"

#define S_MAX_NODES (1u << 21)

struct pv_alf_expert {
    bool exhaustive;
    const uint64_t *hidden; /* entities plans may not name (pv_alf_expert_set_hidden) */
    uint32_t *allowed;
    uint32_t n_allowed, cap_allowed;
    uint32_t *mut; /* mutable atoms (search state bits) */
    uint32_t n_mut, cap_mut;
    int32_t *mut_idx; /* atom -> bit, -1 */
    uint32_t cap_mut_idx;
    uint8_t *ent_ok, *pred_rel, *is_goal_atom;
    uint32_t cap_ent, cap_preds, cap_goal_atom;
    uint64_t *cand; /* goal variable candidates: n_vars rows of ent words */
    uint32_t cap_cand;
    uint64_t *work, *tmp;
    uint32_t cap_work, cap_tmp;
    uint64_t *nodes; /* packed states */
    uint32_t *parent, *via;
    uint16_t *depth;
    uint32_t cap_nodes;
    pv_idx_table_t visited; /* nodes by s_hash_words; slots malloc'd, rebuilt by s_reserve */
};

pv_err_t pv_alf_expert_new(pv_alf_expert_t **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? PV_OK : PV_ERR_NOMEM;
}

void pv_alf_expert_destroy(pv_alf_expert_t **ex)
{
    if (!ex || !*ex)
        return;
    pv_alf_expert_t *x = *ex;
    free(x->allowed);
    free(x->mut);
    free(x->mut_idx);
    free(x->ent_ok);
    free(x->pred_rel);
    free(x->is_goal_atom);
    free(x->cand);
    free(x->work);
    free(x->tmp);
    free(x->nodes);
    free(x->parent);
    free(x->via);
    free(x->depth);
    free(x->visited.slot);
    free(x);
    *ex = NULL;
}

void pv_alf_expert_set_exhaustive(pv_alf_expert_t *ex, bool on)
{
    ex->exhaustive = on;
}

void pv_alf_expert_set_hidden(pv_alf_expert_t *ex, const uint64_t *hidden)
{
    ex->hidden = hidden;
}

static bool s_grow(void **p, uint32_t *cap, uint32_t need, size_t sz)
{
    if (need <= *cap)
        return true;
    uint32_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *n = realloc(*p, (size_t)c * sz);
    if (!n)
        return false;
    *p = n;
    *cap = c;
    return true;
}

/* ---------------------------------------------------------------- what may matter */

/* Entity e is of game type t (pv_alf_game_type: a name's first index, as ent_type holds). */
static bool s_type_is(const pv_alf_game_t *g, uint32_t e, int32_t t)
{
    return (int32_t)g->ent_type[e] == t;
}

/* Does atom `a` fit literal `l` with its variables ranging over `cand` (rows of ew words)? */
static bool s_fits(const pv_alf_atom_t *a, const pv_alf_glit_t *l, const uint64_t *cand,
                   uint32_t ew)
{
    for (uint8_t q = 0; q < l->n; q++) {
        const pv_alf_arg_t *y = &l->args[q];
        if (y->kind == PV_ARG_ENT ? a->args[q] != y->idx
                                  : !pv_alf_bit(cand + y->idx * ew, a->args[q]))
            return false;
    }
    return true;
}

void pv_alf_goal_cands(const pv_alf_game_t *g, const uint64_t *fd, const pv_alf_gclause_t *c,
                       uint64_t *cand, uint64_t *fresh, uint32_t ew)
{
    for (uint16_t v = 0; v < c->n_vars; v++)
        for (uint32_t e = 0; e < g->n_ent; e++)
            pv_alf_setbit(cand + v * ew, e, (g->ent_types[e] & c->var_types[v]) != 0);
    for (int iter = 0; iter < 8; iter++) {
        bool changed = false;
        for (uint16_t k = 0; k < c->n_lits; k++) {
            const pv_alf_glit_t *l = &c->lits[k];
            if (l->pred < 0 || l->neg)
                continue;
            for (uint8_t i = 0; i < l->n; i++) {
                if (l->args[i].kind != PV_ARG_VAR)
                    continue;
                uint32_t v = l->args[i].idx;
                memset(fresh, 0, ew * sizeof *fresh);
                for (uint32_t j = g->by_pred_off[l->pred]; j < g->by_pred_off[l->pred + 1]; j++) {
                    uint32_t id = g->by_pred[j];
                    if (!pv_alf_bit(fd, id) && pv_alf_bit(g->static_mask, id))
                        continue; /* false and nothing makes it true */
                    if (s_fits(&g->atoms[id], l, cand, ew))
                        pv_alf_setbit(fresh, g->atoms[id].args[i], true);
                }
                for (uint32_t w = 0; w < ew; w++) {
                    uint64_t nv = cand[v * ew + w] & fresh[w];
                    changed |= nv != cand[v * ew + w];
                    cand[v * ew + w] = nv;
                }
            }
        }
        if (!changed)
            break;
    }
}

void pv_alf_goal_marks(const pv_alf_game_t *g, const pv_alf_gclause_t *c, const uint64_t *cand,
                       uint32_t ew, uint8_t *is_goal)
{
    for (uint16_t k = 0; k < c->n_lits; k++) {
        const pv_alf_glit_t *l = &c->lits[k];
        if (l->pred < 0)
            continue;
        for (uint32_t j = g->by_pred_off[l->pred]; j < g->by_pred_off[l->pred + 1]; j++) {
            uint32_t id = g->by_pred[j];
            if (pv_alf_bit(g->static_mask, id))
                continue;
            if (s_fits(&g->atoms[id], l, cand, ew))
                is_goal[id] |= l->neg ? 2 : 1;
        }
    }
}

static int s_cmp_op(const void *a, const void *b, const pv_alf_game_t *g)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (g->ops[x].cmd != g->ops[y].cmd)
        return g->ops[x].cmd < g->ops[y].cmd ? -1 : 1;
    return x < y ? -1 : x > y;
}

static void s_sort_ops(uint32_t *v, uint32_t n, const pv_alf_game_t *g)
{
    for (uint32_t i = 1; i < n; i++) { /* insertion sort: nearly sorted by construction */
        uint32_t t = v[i], j = i;
        while (j > 0 && s_cmp_op(&v[j - 1], &t, g) > 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = t;
    }
}

/* Compute allowed operators and mutable atoms for a search from `fd`. */
static pv_err_t s_prepare(pv_alf_expert_t *x, const pv_alf_game_t *g, const uint64_t *fd)
{
    uint32_t ew = (g->n_ent + 63) / 64;
    /* ALFWorld's two kinds of things, by type id (the names compared once, not per entity) */
    const int32_t obj_t = pv_alf_game_type(g, "object"), rec_t = pv_alf_game_type(g, "receptacle");
    uint32_t max_vars = 1;
    for (uint16_t i = 0; i < g->n_goal; i++)
        if (g->goal[i].n_vars > max_vars)
            max_vars = g->goal[i].n_vars;
    if (!s_grow((void **)&x->ent_ok, &x->cap_ent, g->n_ent + 1, 1) ||
        !s_grow((void **)&x->pred_rel, &x->cap_preds, g->dom->n_preds + 1u, 1) ||
        !s_grow((void **)&x->is_goal_atom, &x->cap_goal_atom, g->n_atoms + 1, 1) ||
        !s_grow((void **)&x->mut_idx, &x->cap_mut_idx, g->n_atoms + 1, sizeof *x->mut_idx) ||
        !s_grow((void **)&x->work, &x->cap_work, g->n_words + ew + 2, sizeof *x->work) ||
        !s_grow((void **)&x->tmp, &x->cap_tmp, g->n_words + ew + 2, sizeof *x->tmp) ||
        !s_grow((void **)&x->cand, &x->cap_cand, max_vars * ew + 1, sizeof *x->cand) ||
        !s_grow((void **)&x->allowed, &x->cap_allowed, g->n_ops + 1, sizeof *x->allowed) ||
        !s_grow((void **)&x->mut, &x->cap_mut, g->n_atoms + 1, sizeof *x->mut))
        return PV_ERR_NOMEM;
    /* relevant predicates: read by a precondition, an effect condition or the goal */
    memset(x->pred_rel, 0, g->dom->n_preds + 1u);
    for (uint32_t o = 0; o < g->n_ops; o++) {
        const pv_alf_op_t *op = &g->ops[o];
        for (uint16_t i = 0; i < op->n_pre; i++)
            x->pred_rel[g->atoms[g->lits[op->pre + i].atom].pred] = 1;
        for (uint16_t i = 0; i < op->n_eff; i++)
            for (uint16_t c = 0; c < g->effs[op->eff + i].n_cond; c++)
                x->pred_rel[g->atoms[g->lits[g->effs[op->eff + i].cond + c].atom].pred] = 1;
    }
    for (uint16_t i = 0; i < g->n_goal; i++)
        for (uint16_t k = 0; k < g->goal[i].n_lits; k++)
            if (g->goal[i].lits[k].pred >= 0)
                x->pred_rel[g->goal[i].lits[k].pred] = 1;
    /* entities the search may touch */
    memset(x->ent_ok, 0, g->n_ent + 1);
    memset(x->is_goal_atom, 0, g->n_atoms + 1);
    for (uint32_t e = 0; e < g->n_ent; e++)
        x->ent_ok[e] = x->exhaustive || !(s_type_is(g, e, obj_t) || s_type_is(g, e, rec_t));
    for (uint16_t i = 0; i < g->n_goal; i++) {
        const pv_alf_gclause_t *c = &g->goal[i];
        pv_alf_goal_cands(g, fd, c, x->cand, x->tmp, ew);
        pv_alf_goal_marks(g, c, x->cand, ew, x->is_goal_atom);
        for (uint16_t v = 0; v < c->n_vars; v++)
            for (uint32_t e = 0; e < g->n_ent; e++)
                if (pv_alf_bit(x->cand + v * ew, e))
                    x->ent_ok[e] = 1;
        for (uint16_t k = 0; k < c->n_lits; k++)
            for (uint8_t q = 0; q < c->lits[k].n; q++)
                if (c->lits[k].args[q].kind == PV_ARG_ENT)
                    x->ent_ok[c->lits[k].args[q].idx] = 1;
    }
    if (x->hidden) /* unseen objects are out of reach (the searching expert) */
        for (uint32_t e = 0; e < g->n_ent; e++)
            if (pv_alf_bit(x->hidden, e))
                x->ent_ok[e] = 0;
    if (!x->exhaustive) {
        int32_t holds = pv_alf_domain_pred(g->dom, "holds");
        /* objects in hand, and receptacles sharing a true atom with an allowed object */
        if (holds >= 0)
            for (uint32_t j = g->by_pred_off[holds]; j < g->by_pred_off[holds + 1]; j++)
                if (pv_alf_bit(fd, g->by_pred[j]))
                    for (uint8_t q = 0; q < g->atoms[g->by_pred[j]].n; q++)
                        x->ent_ok[g->atoms[g->by_pred[j]].args[q]] = 1;
        for (uint32_t id = 0; id < g->n_atoms; id++) {
            const pv_alf_atom_t *a = &g->atoms[id];
            if (!pv_alf_bit(fd, id) || pv_alf_bit(g->static_mask, id))
                continue;
            bool obj = false;
            for (uint8_t q = 0; q < a->n; q++)
                obj |= s_type_is(g, a->args[q], obj_t) && x->ent_ok[a->args[q]];
            if (obj)
                for (uint8_t q = 0; q < a->n; q++)
                    if (s_type_is(g, a->args[q], rec_t))
                        x->ent_ok[a->args[q]] = 2;
        }
        /* receptacles of operators achieving a goal atom or using an object in hand */
        for (uint32_t o = 0; o < g->n_ops; o++) {
            const pv_alf_op_t *op = &g->ops[o];
            bool achieves = false, objs_ok = true, uses_held = false;
            for (uint16_t i = 0; i < op->n_eff && !achieves; i++)
                achieves =
                    x->is_goal_atom[g->effs[op->eff + i].atom] & (g->effs[op->eff + i].val ? 1 : 2);
            for (uint8_t p = 0; p < op->n_params; p++) {
                uint32_t e = g->op_params[op->params + p];
                if (s_type_is(g, e, obj_t))
                    objs_ok &= x->ent_ok[e] != 0;
            }
            for (uint16_t i = 0; i < op->n_pre && !uses_held; i++) {
                const pv_alf_lit_t *l = &g->lits[op->pre + i];
                uses_held = holds >= 0 && l->val && g->atoms[l->atom].pred == holds &&
                            pv_alf_bit(fd, l->atom);
            }
            if (!objs_ok || !(achieves || uses_held))
                continue;
            for (uint8_t p = 0; p < op->n_params; p++) {
                uint32_t r = g->op_params[op->params + p];
                if (!s_type_is(g, r, rec_t) || x->ent_ok[r])
                    continue;
                /* not through a precondition about an object in r that is false now */
                bool blocked = false;
                for (uint16_t i = 0; i < op->n_pre && !blocked; i++) {
                    const pv_alf_lit_t *l = &g->lits[op->pre + i];
                    const pv_alf_atom_t *a = &g->atoms[l->atom];
                    bool has_r = false, has_obj = false;
                    for (uint8_t q = 0; q < a->n; q++) {
                        has_r |= a->args[q] == r;
                        has_obj |= s_type_is(g, a->args[q], obj_t);
                    }
                    blocked = l->val && has_r && has_obj && !pv_alf_bit(fd, l->atom);
                }
                if (!blocked)
                    x->ent_ok[r] = 3;
            }
        }
    }
    /* allowed operators: every object/receptacle parameter allowed, some relevant effect */
    x->n_allowed = 0;
    for (uint32_t o = 0; o < g->n_ops; o++) {
        const pv_alf_op_t *op = &g->ops[o];
        bool ok = false;
        for (uint16_t i = 0; i < op->n_eff && !ok; i++)
            ok = x->pred_rel[g->atoms[g->effs[op->eff + i].atom].pred];
        for (uint8_t p = 0; p < op->n_params && ok; p++)
            ok = x->ent_ok[g->op_params[op->params + p]] != 0;
        if (ok)
            x->allowed[x->n_allowed++] = o;
    }
    s_sort_ops(x->allowed, x->n_allowed, g);
    /* mutable atoms: relevant effects of allowed operators */
    for (uint32_t i = 0; i < g->n_atoms; i++)
        x->mut_idx[i] = -1;
    x->n_mut = 0;
    for (uint32_t k = 0; k < x->n_allowed; k++) {
        const pv_alf_op_t *op = &g->ops[x->allowed[k]];
        for (uint16_t i = 0; i < op->n_eff; i++) {
            uint32_t a = g->effs[op->eff + i].atom;
            if (x->pred_rel[g->atoms[a].pred] && x->mut_idx[a] < 0) {
                x->mut_idx[a] = (int32_t)x->n_mut;
                x->mut[x->n_mut++] = a;
            }
        }
    }
    return PV_OK;
}

/* ---------------------------------------------------------------- search */

static uint64_t s_hash_words(const uint64_t *w, uint32_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0; i < n; i++) {
        h ^= w[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
    }
    return h ^ (h >> 33);
}

/* a packed state of the search and node `rec` (user: the expert) */
typedef struct s_packed {
    const uint64_t *st;
    uint32_t pw; /* words */
} s_packed_t;

static bool s_node_eq(const void *user, uint32_t rec, const void *key)
{
    const s_packed_t *k = key;
    return memcmp(((const pv_alf_expert_t *)user)->nodes + (size_t)rec * k->pw, k->st,
                  k->pw * sizeof *k->st) == 0;
}

/* Look `st` up; insert it as node `n` when new. Returns the existing node or n. */
static uint32_t s_visit(pv_alf_expert_t *x, const uint64_t *st, uint32_t pw, uint32_t n)
{
    s_packed_t k = {.st = st, .pw = pw};
    return pv_idx_add(&x->visited, s_hash_words(st, pw), n, s_node_eq, x, &k);
}

/* Node storage for at least `want` nodes of `pw` words; the hash table is rebuilt over the
 * first `live` nodes. False on exhaustion. */
static bool s_reserve(pv_alf_expert_t *ex, uint32_t want, uint32_t pw, uint32_t live)
{
    uint32_t c1 = ex->cap_nodes, c2 = c1, c3 = c1;
    if (!s_grow((void **)&ex->parent, &c1, want, sizeof *ex->parent) ||
        !s_grow((void **)&ex->via, &c2, want, sizeof *ex->via) ||
        !s_grow((void **)&ex->depth, &c3, want, sizeof *ex->depth))
        return false;
    void *nn = realloc(ex->nodes, (size_t)c1 * pw * sizeof *ex->nodes);
    if (!nn)
        return false;
    ex->nodes = nn;
    ex->cap_nodes = c1;
    /* a power of two >= 2 * c1 slots: at most half full with c1 nodes */
    uint32_t hc = 1;
    while (hc < 2u * c1)
        hc *= 2;
    uint32_t *slot = ex->visited.slot;
    if (hc != ex->visited.cap) {
        free(slot);
        slot = malloc(hc * sizeof *slot);
        pv_idx_table_init(&ex->visited, slot, slot ? hc : 0);
        if (!slot)
            return false;
    }
    memset(slot, 0, hc * sizeof *slot);
    for (uint32_t q = 0; q < live; q++)
        (void)s_visit(ex, ex->nodes + (size_t)q * pw, pw, q);
    return true;
}

static void s_unpack(const pv_alf_expert_t *x, const uint64_t *base, uint32_t n_words,
                     const uint64_t *st, uint64_t *full)
{
    memcpy(full, base, n_words * sizeof *full);
    for (uint32_t i = 0; i < x->n_mut; i++)
        pv_alf_setbit(full, x->mut[i], pv_alf_bit(st, i));
}

int pv_alf_expert_plan(pv_alf_expert_t *ex, const pv_alf_game_t *g, const uint64_t *fd,
                       uint32_t max_len, int32_t *first)
{
    *first = -1;
    if (pv_alf_goal_holds(g, fd))
        return 0;
    if (max_len == 0 || s_prepare(ex, g, fd) != PV_OK)
        return PV_ALF_EXPERT_NONE;
    uint32_t pw = (ex->n_mut + 63) / 64;
    if (pw == 0)
        return PV_ALF_EXPERT_NONE;
    /* node storage within ~256 MiB */
    uint32_t budget = (uint32_t)((256u << 20) / (pw * 8u + 12u));
    if (budget > S_MAX_NODES)
        budget = S_MAX_NODES;
    if (!s_reserve(ex, budget < 4096 ? budget : 4096, pw, 0))
        return PV_ALF_EXPERT_LIMIT;
    /* root */
    uint64_t *root = ex->nodes;
    memset(root, 0, pw * sizeof *root);
    for (uint32_t i = 0; i < ex->n_mut; i++)
        pv_alf_setbit(root, i, pv_alf_bit(fd, ex->mut[i]));
    s_visit(ex, root, pw, 0);
    ex->parent[0] = UINT32_MAX;
    ex->via[0] = UINT32_MAX;
    ex->depth[0] = 0;
    uint32_t n = 1;
    uint64_t *work = ex->work;
    uint64_t child[64];
    if (pw > 64)
        return PV_ALF_EXPERT_LIMIT;
    for (uint32_t cur = 0; cur < n; cur++) {
        if (ex->depth[cur] >= max_len)
            break; /* breadth-first: every later node is at least as deep */
        s_unpack(ex, fd, g->n_words, ex->nodes + (size_t)cur * pw, work);
        for (uint32_t k = 0; k < ex->n_allowed; k++) {
            uint32_t o = ex->allowed[k];
            if (!pv_alf_op_applicable(g, o, work))
                continue;
            /* successor: apply on a copy of the full state, then pack */
            memcpy(ex->tmp, work, g->n_words * sizeof *work);
            pv_alf_op_apply(g, o, ex->tmp, NULL);
            memcpy(child, ex->nodes + (size_t)cur * pw, pw * sizeof *child);
            const pv_alf_op_t *op = &g->ops[o];
            for (uint16_t i = 0; i < op->n_eff; i++) {
                int32_t b = ex->mut_idx[g->effs[op->eff + i].atom];
                if (b >= 0)
                    pv_alf_setbit(child, (uint32_t)b,
                                  pv_alf_bit(ex->tmp, g->effs[op->eff + i].atom));
            }
            if (n >= ex->cap_nodes &&
                (ex->cap_nodes >= budget ||
                 !s_reserve(ex, ex->cap_nodes * 2 > budget ? budget : ex->cap_nodes * 2, pw, n)))
                return PV_ALF_EXPERT_LIMIT;
            if (s_visit(ex, child, pw, n) != n)
                continue;
            memcpy(ex->nodes + (size_t)n * pw, child, pw * sizeof *child);
            ex->parent[n] = cur;
            ex->via[n] = o;
            ex->depth[n] = (uint16_t)(ex->depth[cur] + 1);
            n++;
            if (pv_alf_goal_holds(g, ex->tmp)) {
                uint32_t q = n - 1;
                while (ex->parent[q] != 0)
                    q = ex->parent[q];
                *first = (int32_t)ex->via[q];
                return ex->depth[n - 1];
            }
        }
    }
    return PV_ALF_EXPERT_NONE;
}
