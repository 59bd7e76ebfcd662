/* alfworld_ground.c - instantiate a PDDL problem into ground operators over binary atoms.
 *
 * Mirrors what TextWorld's PddlEnv gets from fast_downward.pddl2sas(optimize=False) (Fast
 * Downward's translator with invariant synthesis off, so each atom is its own binary variable):
 *   - preconditions are put in negation normal form and split into disjuncts (one operator per
 *     disjunct, same name); existential variables become extra parameters; universally
 *     quantified ones are expanded over the objects of their type (normalize.py);
 *   - parameters range over objects of their declared type; a type that is not declared has no
 *     objects (so ALFWorld's "(exists (?l - location, ?r - receptacle) ...)", whose first type
 *     token is "location,", can never hold: objects are examinable only when held);
 *   - static predicates (no effect changes them) are evaluated against the initial facts;
 *   - relaxed reachability from the initial state keeps only operators that can ever apply;
 *   - a delete effect is dropped when the same atom is added under the same condition, an
 *     effect whose value equals the operator's precondition on that atom is dropped, and an
 *     operator left without effects is dropped (translate.py: "operator is noop").
 * Operators whose action has no template in the grammar cannot be typed and are left out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/env/alfworld_int.h"

#define S_MAX_CLAUSES 4096

#include "common/env/alfworld_gr.h"

/* ---------------------------------------------------------------- vectors and atoms */

void *pv_alf_vec_push(pv_alf_vec_t *v)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 256;
        void *nv = realloc(v->v, cap * v->sz);
        if (!nv)
            return NULL;
        v->v = nv;
        v->cap = cap;
    }
    return (char *)v->v + v->sz * v->n++;
}

/* Multiply-xorshift over the words of (pred, args); atoms are hashed often while grounding. */
uint32_t pv_alf_akey(int32_t pred, uint8_t n, const uint32_t *args)
{
    uint64_t h = (uint64_t)(uint32_t)pred * 0x9e3779b97f4a7c15ull + n;
    for (uint8_t i = 0; i < n; i++) {
        h ^= args[i] + 0x632be59bd9b4e019ull;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 29;
    }
    h *= 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h >> 32);
}

bool pv_alf_aeq(const pv_alf_atom_t *a, int32_t pred, uint8_t n, const uint32_t *args)
{
    if (a->pred != pred || a->n != n)
        return false;
    for (uint8_t i = 0; i < n; i++)
        if (a->args[i] != args[i])
            return false;
    return true;
}

int32_t pv_alf_atoms_find(const pv_alf_atoms_t *t, int32_t pred, uint8_t n, const uint32_t *args)
{
    if (!t->hcap)
        return -1;
    for (uint32_t i = pv_alf_akey(pred, n, args) & (t->hcap - 1);; i = (i + 1) & (t->hcap - 1)) {
        if (!t->hash[i])
            return -1;
        if (pv_alf_aeq(&t->v[t->hash[i] - 1], pred, n, args))
            return (int32_t)(t->hash[i] - 1);
    }
}

bool pv_alf_atoms_rehash(pv_alf_atoms_t *t, uint32_t hcap)
{
    uint32_t *h = calloc(hcap, sizeof *h);
    if (!h)
        return false;
    for (uint32_t id = 0; id < t->n; id++) {
        const pv_alf_atom_t *a = &t->v[id];
        uint32_t i = pv_alf_akey(a->pred, a->n, a->args) & (hcap - 1);
        while (h[i])
            i = (i + 1) & (hcap - 1);
        h[i] = id + 1;
    }
    free(t->hash);
    t->hash = h;
    t->hcap = hcap;
    return true;
}

/* Id of the atom, adding it when new; -1 on exhaustion, -2 past PV_ALF_MAX_ATOMS. */
int32_t pv_alf_atoms_add(pv_alf_atoms_t *t, int32_t pred, uint8_t n, const uint32_t *args)
{
    int32_t id = pv_alf_atoms_find(t, pred, n, args);
    if (id >= 0)
        return id;
    if (t->n >= PV_ALF_MAX_ATOMS * 4u)
        return -2;
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? 2 * t->cap : 1024;
        pv_alf_atom_t *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return -1;
        t->v = v;
        t->cap = cap;
    }
    if (2 * (t->n + 1) > t->hcap && !pv_alf_atoms_rehash(t, t->hcap ? 2 * t->hcap : 2048))
        return -1;
    pv_alf_atom_t *a = &t->v[t->n];
    memset(a, 0, sizeof *a);
    a->pred = pred;
    a->n = n;
    memcpy(a->args, args, n * sizeof *args);
    uint32_t i = pv_alf_akey(pred, n, args) & (t->hcap - 1);
    while (t->hash[i])
        i = (i + 1) & (t->hcap - 1);
    t->hash[i] = t->n + 1;
    return (int32_t)t->n++;
}

int32_t pv_alf_atom_find(const pv_alf_game_t *g, int32_t pred, uint8_t n, const uint32_t *args)
{
    if (pred < 0 || !g->hash_cap)
        return -1;
    for (uint32_t i = pv_alf_akey(pred, n, args) & (g->hash_cap - 1);;
         i = (i + 1) & (g->hash_cap - 1)) {
        if (!g->hash[i])
            return -1;
        if (pv_alf_aeq(&g->atoms[g->hash[i] - 1], pred, n, args))
            return (int32_t)(g->hash[i] - 1);
    }
}

/* ---------------------------------------------------------------- names and types */

static int32_t s_entity(const pv_alf_gr_t *gr, const char *id)
{
    uint32_t h = (uint32_t)pv_alf_hash(id, strlen(id), PV_ALF_HASH_SEED);
    for (uint32_t i = h & (gr->ncap - 1);; i = (i + 1) & (gr->ncap - 1)) {
        if (!gr->nslot[i])
            return -1;
        if (strcmp(gr->prob->ent_id[gr->nslot[i] - 1], id) == 0)
            return (int32_t)(gr->nslot[i] - 1);
    }
}

int32_t pv_alf_game_type(const pv_alf_game_t *g, const char *name)
{
    for (uint16_t i = 0; i < g->n_types; i++)
        if (strcmp(g->type_name[i], name) == 0)
            return i;
    return -1;
}

/* Game type of a scope variable (domain numbering, else by name). */
static int32_t s_var_type(const pv_alf_gr_t *gr, const pv_alf_scope_t *sc, uint16_t v)
{
    return sc->var_tid[v] >= 0 ? sc->var_tid[v] : pv_alf_game_type(gr->g, sc->var_type[v]);
}

static pv_err_t s_types(pv_alf_gr_t *gr)
{
    pv_alf_game_t *g = gr->g;
    const pv_alf_domain_t *d = gr->dom;
    for (uint16_t i = 0; i < d->n_tt; i++) /* the domain's numbering first */
        g->type_name[g->n_types++] = d->tt_name[i];
    for (uint32_t e = 0; e < gr->prob->n_ent; e++) {
        const char *t = gr->prob->ent_type[e];
        if (pv_alf_game_type(g, t) < 0) {
            if (g->n_types >= PV_ALF_MAX_TYPES)
                return pv_errf(gr->em, PV_ERR_LIMIT, "%s: more than %d types", gr->what,
                               PV_ALF_MAX_TYPES);
            g->type_name[g->n_types++] = t;
        }
    }
    /* supertype masks: walk declared parents (a cycle or unknown parent stops at "object") */
    uint64_t up[PV_ALF_MAX_TYPES];
    for (uint16_t t = 0; t < g->n_types; t++) {
        uint64_t m = 1u | ((uint64_t)1 << t);
        const char *cur = g->type_name[t];
        for (int hop = 0; hop < PV_ALF_MAX_TYPES; hop++) {
            const char *par = NULL;
            for (uint16_t i = 0; i < d->n_types; i++)
                if (strcmp(d->type_name[i], cur) == 0)
                    par = d->type_parent[i];
            if (!par)
                break;
            int32_t pi = pv_alf_game_type(g, par);
            if (pi < 0 || (m >> pi) & 1u)
                break;
            m |= (uint64_t)1 << pi;
            cur = par;
        }
        up[t] = m;
    }
    g->n_ent = gr->prob->n_ent;
    g->ent_type = pv_arena_alloc(gr->arena, (g->n_ent + 1) * sizeof *g->ent_type, 0);
    g->ent_types = pv_arena_alloc(gr->arena, (g->n_ent + 1) * sizeof *g->ent_types, 0);
    if (!g->ent_type || !g->ent_types)
        return PV_ERR_NOMEM;
    for (uint32_t e = 0; e < g->n_ent; e++) {
        g->ent_type[e] = (uint16_t)pv_alf_game_type(g, gr->prob->ent_type[e]);
        g->ent_types[e] = up[g->ent_type[e]];
    }
    /* entities by type */
    gr->ty_off = pv_arena_calloc(gr->tmp, g->n_types + 1u, sizeof *gr->ty_off);
    uint32_t total = 0;
    for (uint16_t t = 0; t < g->n_types; t++)
        for (uint32_t e = 0; e < g->n_ent; e++)
            total += (g->ent_types[e] >> t) & 1u;
    gr->ty_ent = pv_arena_alloc(gr->tmp, (total + 1) * sizeof *gr->ty_ent, 0);
    if (!gr->ty_off || !gr->ty_ent)
        return PV_ERR_NOMEM;
    uint32_t k = 0;
    for (uint16_t t = 0; t < g->n_types; t++) {
        gr->ty_off[t] = k;
        for (uint32_t e = 0; e < g->n_ent; e++)
            if ((g->ent_types[e] >> t) & 1u)
                gr->ty_ent[k++] = e;
    }
    gr->ty_off[g->n_types] = k;
    return PV_OK;
}

/* ALFWorld's Demangler (alfworld/agents/utils/misc.py) over the ids that occur in facts:
 * "potato_bar__plus_01_dot_01_..." -> "potato" numbered 1..count in reverse sorted-id order
 * (ids are sorted, then numbers are popped from the end of [1..count]); "basin" is appended to
 * the name when the id contains it ("sink_bar_..._bar_sinkbasin" -> "sinkbasin"). Ids without
 * "_bar_" keep their id as name (ALFWorld would append a space; PddlEnv uses the bare id). */
typedef struct s_idref {
    const char *id;
    uint32_t e;
} s_idref_t;

static int s_cmp_idref(const void *a, const void *b)
{
    return strcmp(((const s_idref_t *)a)->id, ((const s_idref_t *)b)->id);
}

static size_t s_prefix(const char *id, char *buf, size_t cap)
{
    const char *bar = strstr(id, "_bar_");
    size_t n = (size_t)(bar - id);
    if (n + 6 > cap)
        n = cap - 6;
    memcpy(buf, id, n);
    buf[n] = 0;
    /* the display name is the text before the first '|' after _minus_/_plus_/... rewriting;
     * those markers only ever follow the first _bar_ in ALFWorld ids */
    if (strstr(id, "basin")) {
        memcpy(buf + n, "basin", 6);
        n += 5;
    }
    return n;
}

static pv_err_t s_names(pv_alf_gr_t *gr)
{
    pv_alf_game_t *g = gr->g;
    const pv_alf_problem_t *p = gr->prob;
    g->ent_name = pv_arena_alloc(gr->arena, (g->n_ent + 1) * sizeof *g->ent_name, 0);
    uint8_t *in_fact = pv_arena_calloc(gr->tmp, g->n_ent + 1, 1);
    s_idref_t *order = pv_arena_alloc(gr->tmp, (g->n_ent + 1) * sizeof *order, 0);
    if (!g->ent_name || !in_fact || !order)
        return PV_ERR_NOMEM;
    for (uint32_t i = 0; i < p->n_init; i++)
        for (uint8_t k = 0; k < p->init[i].n; k++)
            in_fact[p->init[i].args[k]] = 1;
    uint32_t n = 0;
    for (uint32_t e = 0; e < g->n_ent; e++) {
        bool given = p->ent_name && p->ent_name[e];
        g->ent_name[e] = given ? p->ent_name[e] : p->ent_id[e];
        if (!given && in_fact[e] && strstr(p->ent_id[e], "_bar_"))
            order[n++] = (s_idref_t){p->ent_id[e], e};
    }
    qsort(order, n, sizeof *order, s_cmp_idref);
    /* count per name (grouped through a hash of the name), then count down in sorted order */
    uint32_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    uint32_t *slot = pv_arena_calloc(gr->tmp, cap, sizeof *slot); /* sorted index + 1 */
    uint32_t *left = pv_arena_calloc(gr->tmp, n + 1, sizeof *left);
    uint32_t *grp = pv_arena_calloc(gr->tmp, n + 1, sizeof *grp);
    if (!slot || !left || !grp)
        return PV_ERR_NOMEM;
    char a[128], b[128];
    for (uint32_t i = 0; i < n; i++) {
        size_t len = s_prefix(order[i].id, a, sizeof a);
        uint32_t h = (uint32_t)pv_alf_hash(a, len, PV_ALF_HASH_SEED) & (cap - 1);
        for (;; h = (h + 1) & (cap - 1)) {
            if (!slot[h]) {
                slot[h] = i + 1;
                break;
            }
            s_prefix(order[slot[h] - 1].id, b, sizeof b);
            if (strcmp(a, b) == 0)
                break;
        }
        grp[i] = slot[h] - 1;
        left[grp[i]]++;
    }
    for (uint32_t i = 0; i < n; i++) {
        size_t len = s_prefix(order[i].id, a, sizeof a);
        char *nm = pv_arena_alloc(gr->arena, len + 12, 1);
        if (!nm)
            return PV_ERR_NOMEM;
        snprintf(nm, len + 12, "%s %u", a, left[grp[i]]--);
        g->ent_name[order[i].e] = nm;
    }
    return PV_OK;
}

/* ---------------------------------------------------------------- normal form */

static pv_err_t s_lit_from(pv_alf_gr_t *gr, const pv_alf_scope_t *sc, const pv_alf_fm_t *f,
                           bool neg, const int32_t *sub, pv_alf_glit2_t *l)
{
    memset(l, 0, sizeof *l);
    l->pred = f->kind == PV_FM_EQ ? -2 : f->pred;
    l->neg = neg;
    l->n = f->n_args;
    for (uint8_t i = 0; i < f->n_args; i++) {
        pv_alf_arg_t a = f->args[i];
        if (a.kind == PV_ARG_VAR && sub[a.idx] >= 0) {
            a.kind = PV_ARG_ENT;
            a.idx = (uint32_t)sub[a.idx];
        } else if (a.kind == PV_ARG_CONST) {
            int32_t e = s_entity(gr, sc->const_name[a.idx]);
            a.kind = PV_ARG_ENT;
            a.idx = e >= 0 ? (uint32_t)e : PV_ALF_ENT_UNKNOWN;
        }
        l->a[i] = a;
    }
    return PV_OK;
}

pv_err_t pv_alf_gr_dnf_one(pv_alf_gr_t *gr, pv_alf_gdnf_t *d)
{
    d->n = 1;
    d->c = pv_arena_calloc(gr->tmp, 1, sizeof *d->c);
    return d->c ? PV_OK : PV_ERR_NOMEM;
}

/* acc := acc AND k (clause-wise concatenation) */
static pv_err_t s_dnf_and(pv_alf_gr_t *gr, pv_alf_gdnf_t *acc, const pv_alf_gdnf_t *k)
{
    if ((uint64_t)acc->n * k->n > S_MAX_CLAUSES)
        return pv_errf(gr->em, PV_ERR_LIMIT,
                       "%s: a condition expands to more than %d "
                       "disjuncts",
                       gr->what, S_MAX_CLAUSES);
    pv_alf_gdnf_t r = {.n = acc->n * k->n};
    r.c = pv_arena_calloc(gr->tmp, r.n ? r.n : 1, sizeof *r.c);
    if (!r.c)
        return PV_ERR_NOMEM;
    uint32_t o = 0;
    for (uint32_t i = 0; i < acc->n; i++)
        for (uint32_t j = 0; j < k->n; j++, o++) {
            const pv_alf_gcl_t *x = &acc->c[i], *y = &k->c[j];
            pv_alf_gcl_t *z = &r.c[o];
            if (x->n_ex + y->n_ex > PV_ALF_MAX_VARS)
                return pv_errf(gr->em, PV_ERR_LIMIT, "%s: too many quantified variables", gr->what);
            z->n = (uint16_t)(x->n + y->n);
            z->l = pv_arena_alloc(gr->tmp, (z->n ? z->n : 1) * sizeof *z->l, 0);
            if (!z->l)
                return PV_ERR_NOMEM;
            if (x->n)
                memcpy(z->l, x->l, x->n * sizeof *z->l);
            if (y->n)
                memcpy(z->l + x->n, y->l, y->n * sizeof *z->l);
            z->n_ex = (uint16_t)(x->n_ex + y->n_ex);
            memcpy(z->ex, x->ex, x->n_ex * sizeof *z->ex);
            memcpy(z->ex + x->n_ex, y->ex, y->n_ex * sizeof *z->ex);
        }
    *acc = r;
    return PV_OK;
}

static pv_err_t s_dnf_or(pv_alf_gr_t *gr, pv_alf_gdnf_t *acc, const pv_alf_gdnf_t *k)
{
    if (acc->n + k->n > S_MAX_CLAUSES)
        return pv_errf(gr->em, PV_ERR_LIMIT,
                       "%s: a condition expands to more than %d "
                       "disjuncts",
                       gr->what, S_MAX_CLAUSES);
    pv_alf_gcl_t *c = pv_arena_alloc(gr->tmp, (acc->n + k->n + 1) * sizeof *c, 0);
    if (!c)
        return PV_ERR_NOMEM;
    if (acc->n)
        memcpy(c, acc->c, acc->n * sizeof *c);
    if (k->n)
        memcpy(c + acc->n, k->c, k->n * sizeof *c);
    acc->c = c;
    acc->n += k->n;
    return PV_OK;
}

pv_err_t pv_alf_gr_dnf(pv_alf_gr_t *gr, const pv_alf_scope_t *sc, const pv_alf_fm_t *f, bool neg,
                       int32_t *sub, pv_alf_gdnf_t *out);

/* forall (or, negated, exists): conjunction over every assignment of the variables */
static pv_err_t s_expand(pv_alf_gr_t *gr, const pv_alf_scope_t *sc, const pv_alf_fm_t *f, bool neg,
                         int32_t *sub, uint16_t k, pv_alf_gdnf_t *acc)
{
    if (k == f->n_vars) {
        pv_alf_gdnf_t d;
        pv_err_t rc = pv_alf_gr_dnf(gr, sc, f->kids[0], neg, sub, &d);
        return rc == PV_OK ? s_dnf_and(gr, acc, &d) : rc;
    }
    uint16_t v = f->vars[k];
    int32_t t = s_var_type(gr, sc, v);
    if (t < 0)
        return PV_OK; /* no objects: the conjunction over them is empty */
    for (uint32_t i = gr->ty_off[t]; i < gr->ty_off[t + 1]; i++) {
        sub[v] = (int32_t)gr->ty_ent[i];
        pv_err_t rc = s_expand(gr, sc, f, neg, sub, (uint16_t)(k + 1), acc);
        if (rc != PV_OK)
            return rc;
        if (acc->n == 0)
            break;
    }
    sub[v] = -1;
    return PV_OK;
}

pv_err_t pv_alf_gr_dnf(pv_alf_gr_t *gr, const pv_alf_scope_t *sc, const pv_alf_fm_t *f, bool neg,
                       int32_t *sub, pv_alf_gdnf_t *out)
{
    pv_err_t rc;
    switch (f->kind) {
    case PV_FM_TRUE:
        if (neg) {
            out->n = 0;
            out->c = NULL;
            return PV_OK;
        }
        return pv_alf_gr_dnf_one(gr, out);
    case PV_FM_ATOM:
    case PV_FM_EQ:
        if ((rc = pv_alf_gr_dnf_one(gr, out)) != PV_OK)
            return rc;
        out->c[0].n = 1;
        out->c[0].l = pv_arena_alloc(gr->tmp, sizeof *out->c[0].l, 0);
        if (!out->c[0].l)
            return PV_ERR_NOMEM;
        return s_lit_from(gr, sc, f, neg, sub, &out->c[0].l[0]);
    case PV_FM_NOT:
        return pv_alf_gr_dnf(gr, sc, f->kids[0], !neg, sub, out);
    case PV_FM_AND:
    case PV_FM_OR: {
        bool conj = (f->kind == PV_FM_AND) != neg;
        if (conj) {
            if ((rc = pv_alf_gr_dnf_one(gr, out)) != PV_OK)
                return rc;
        } else {
            out->n = 0;
            out->c = NULL;
        }
        for (uint16_t i = 0; i < f->n_kids; i++) {
            pv_alf_gdnf_t k;
            if ((rc = pv_alf_gr_dnf(gr, sc, f->kids[i], neg, sub, &k)) != PV_OK)
                return rc;
            rc = conj ? s_dnf_and(gr, out, &k) : s_dnf_or(gr, out, &k);
            if (rc != PV_OK)
                return rc;
        }
        return PV_OK;
    }
    case PV_FM_EXISTS:
    case PV_FM_FORALL:
        if ((f->kind == PV_FM_EXISTS) != neg) { /* existential: variables become parameters */
            if ((rc = pv_alf_gr_dnf(gr, sc, f->kids[0], neg, sub, out)) != PV_OK)
                return rc;
            for (uint32_t i = 0; i < out->n; i++) {
                pv_alf_gcl_t *c = &out->c[i];
                if (c->n_ex + f->n_vars > PV_ALF_MAX_VARS)
                    return pv_errf(gr->em, PV_ERR_LIMIT, "%s: too many quantified variables",
                                   gr->what);
                memcpy(c->ex + c->n_ex, f->vars, f->n_vars * sizeof *f->vars);
                c->n_ex = (uint16_t)(c->n_ex + f->n_vars);
            }
            return PV_OK;
        }
        if ((rc = pv_alf_gr_dnf_one(gr, out)) != PV_OK)
            return rc;
        return s_expand(gr, sc, f, neg, sub, 0, out);
    default:
        return pv_errf(gr->em, PV_ERR_DATA, "%s:%u: unexpected construct in a condition", gr->what,
                       f->line);
    }
}

/* ---------------------------------------------------------------- literal tests */

bool pv_alf_gr_static_pred(const pv_alf_gr_t *gr, int32_t pred)
{
    return pred >= 0 && !gr->dom->pred_fluent[pred];
}

/* Truth of a ground static literal or equality. */
static bool s_eval_static(const pv_alf_gr_t *gr, const pv_alf_glit2_t *l, const uint32_t *args)
{
    bool v;
    if (l->pred == -2) {
        v = args[0] == args[1] && args[0] != PV_ALF_ENT_UNKNOWN;
    } else {
        for (uint8_t i = 0; i < l->n; i++)
            if (args[i] == PV_ALF_ENT_UNKNOWN)
                return l->neg;
        int32_t id = pv_alf_atoms_find(&gr->at, l->pred, l->n, args);
        v = id >= 0 && (uint32_t)id < gr->n_init;
    }
    return v != (bool)l->neg;
}

/* ---------------------------------------------------------------- operators */

typedef struct s_bind {
    const pv_alf_gcl_t *cl;
    const pv_alf_schema_t *s;
    uint16_t schema;
    uint16_t n_v;
    uint16_t var[PV_ALF_MAX_VARS];         /* binding order */
    int32_t gen[PV_ALF_MAX_VARS];          /* generating static literal, -1 = by type */
    uint16_t chk_off[PV_ALF_MAX_VARS + 2]; /* literals testable after depth d (CSR) */
    uint16_t chk[256];
    int32_t sub[PV_ALF_MAX_VARS];
} s_bind_t;

static void s_args(const pv_alf_glit2_t *l, const int32_t *sub, uint32_t *args)
{
    for (uint8_t i = 0; i < l->n; i++)
        args[i] = l->a[i].kind == PV_ARG_ENT ? l->a[i].idx : (uint32_t)sub[l->a[i].idx];
}

static pv_err_t s_effects(pv_alf_gr_t *gr, const pv_alf_scope_t *sc, const pv_alf_fm_t *e,
                          int32_t *sub, uint32_t cond_from, uint16_t n_cond);

/* Collect ground effects; conditions sit in cur_cond[cond_from .. +n_cond). */
static pv_err_t s_effect_atom(pv_alf_gr_t *gr, const pv_alf_scope_t *sc, const pv_alf_fm_t *a,
                              bool neg, int32_t *sub, uint32_t cond_from, uint16_t n_cond)
{
    pv_alf_glit2_t l;
    s_lit_from(gr, sc, a, neg, sub, &l);
    uint32_t args[PV_ALF_MAX_ARITY];
    for (uint8_t i = 0; i < l.n; i++) {
        if (l.a[i].kind != PV_ARG_ENT)
            return pv_errf(gr->em, PV_ERR_DATA, "%s:%u: free variable in an effect", gr->what,
                           a->line);
        if (l.a[i].idx == PV_ALF_ENT_UNKNOWN)
            return PV_OK; /* about an object the problem does not have */
        args[i] = l.a[i].idx;
    }
    int32_t id = pv_alf_atoms_add(&gr->at, l.pred, l.n, args);
    if (id < 0)
        return id == -2 ? pv_errf(gr->em, PV_ERR_LIMIT, "%s: too many atoms", gr->what)
                        : PV_ERR_NOMEM;
    pv_alf_eff_t *ef = pv_alf_vec_push(&gr->cur_eff);
    if (!ef)
        return PV_ERR_NOMEM;
    ef->atom = (uint32_t)id;
    ef->val = !neg;
    ef->cond = cond_from;
    ef->n_cond = n_cond;
    return PV_OK;
}

static pv_err_t s_effects(pv_alf_gr_t *gr, const pv_alf_scope_t *sc, const pv_alf_fm_t *e,
                          int32_t *sub, uint32_t cond_from, uint16_t n_cond)
{
    pv_err_t rc = PV_OK;
    switch (e->kind) {
    case PV_FM_TRUE:
        return PV_OK;
    case PV_FM_ATOM:
        return s_effect_atom(gr, sc, e, false, sub, cond_from, n_cond);
    case PV_FM_NOT:
        return s_effect_atom(gr, sc, e->kids[0], true, sub, cond_from, n_cond);
    case PV_FM_AND:
        for (uint16_t i = 0; i < e->n_kids && rc == PV_OK; i++)
            rc = s_effects(gr, sc, e->kids[i], sub, cond_from, n_cond);
        return rc;
    case PV_FM_FORALL: {
        /* iterate assignments with a small odometer */
        uint16_t n = e->n_vars;
        int32_t t[PV_ALF_MAX_VARS];
        uint32_t pos[PV_ALF_MAX_VARS] = {0};
        for (uint16_t i = 0; i < n; i++) {
            t[i] = s_var_type(gr, sc, e->vars[i]);
            if (t[i] < 0 || gr->ty_off[t[i]] == gr->ty_off[t[i] + 1])
                return PV_OK;
            pos[i] = gr->ty_off[t[i]];
        }
        for (;;) {
            for (uint16_t i = 0; i < n; i++)
                sub[e->vars[i]] = (int32_t)gr->ty_ent[pos[i]];
            if ((rc = s_effects(gr, sc, e->kids[0], sub, cond_from, n_cond)) != PV_OK)
                return rc;
            uint16_t i = 0;
            while (i < n && ++pos[i] == gr->ty_off[t[i] + 1]) {
                pos[i] = gr->ty_off[t[i]];
                i++;
            }
            if (i == n)
                break;
        }
        for (uint16_t i = 0; i < n; i++)
            sub[e->vars[i]] = -1;
        return PV_OK;
    }
    case PV_FM_WHEN: {
        pv_alf_gdnf_t d;
        if ((rc = pv_alf_gr_dnf(gr, sc, e->kids[0], false, sub, &d)) != PV_OK)
            return rc;
        for (uint32_t c = 0; c < d.n; c++) {
            const pv_alf_gcl_t *cl = &d.c[c];
            if (cl->n_ex)
                return pv_errf(gr->em, PV_ERR_UNSUPPORTED,
                               "%s:%u: quantified effect conditions are not supported", gr->what,
                               e->line);
            uint32_t from = (uint32_t)gr->cur_cond.n;
            /* the enclosing conditions first */
            for (uint16_t i = 0; i < n_cond; i++) {
                pv_alf_lit_t *x = pv_alf_vec_push(&gr->cur_cond);
                if (!x)
                    return PV_ERR_NOMEM;
                *x = ((pv_alf_lit_t *)gr->cur_cond.v)[cond_from + i];
            }
            bool dead = false;
            for (uint16_t i = 0; i < cl->n && !dead; i++) {
                const pv_alf_glit2_t *l = &cl->l[i];
                uint32_t args[PV_ALF_MAX_ARITY];
                for (uint8_t k = 0; k < l->n; k++) {
                    if (l->a[k].kind != PV_ARG_ENT)
                        return pv_errf(gr->em, PV_ERR_DATA,
                                       "%s:%u: free variable in a "
                                       "condition",
                                       gr->what, e->line);
                    args[k] = l->a[k].idx;
                }
                if (l->pred == -2 || pv_alf_gr_static_pred(gr, l->pred)) {
                    dead = !s_eval_static(gr, l, args);
                    continue;
                }
                bool unknown = false;
                for (uint8_t k = 0; k < l->n; k++)
                    unknown |= args[k] == PV_ALF_ENT_UNKNOWN;
                if (unknown) {
                    dead = !l->neg;
                    continue;
                }
                int32_t id = pv_alf_atoms_add(&gr->at, l->pred, l->n, args);
                if (id < 0)
                    return PV_ERR_NOMEM;
                pv_alf_lit_t *x = pv_alf_vec_push(&gr->cur_cond);
                if (!x)
                    return PV_ERR_NOMEM;
                x->atom = (uint32_t)id;
                x->val = !l->neg;
            }
            uint16_t n = (uint16_t)(gr->cur_cond.n - from);
            if (!dead && (rc = s_effects(gr, sc, e->kids[1], sub, from, n)) != PV_OK)
                return rc;
        }
        return PV_OK;
    }
    default:
        return pv_errf(gr->em, PV_ERR_DATA, "%s:%u: unexpected construct in an effect", gr->what,
                       e->line);
    }
}

static int32_t s_pre_val(const pv_alf_lit_t *pre, uint16_t n, uint32_t atom)
{
    for (uint16_t i = 0; i < n; i++)
        if (pre[i].atom == atom)
            return pre[i].val;
    return -1;
}

static bool s_cond_eq(const pv_alf_gr_t *gr, const pv_alf_eff_t *a, const pv_alf_eff_t *b)
{
    if (a->n_cond != b->n_cond)
        return false;
    const pv_alf_lit_t *c = gr->cur_cond.v;
    for (uint16_t i = 0; i < a->n_cond; i++)
        if (c[a->cond + i].atom != c[b->cond + i].atom || c[a->cond + i].val != c[b->cond + i].val)
            return false;
    return true;
}

/* All parameters bound: build the operator. */
static pv_err_t s_emit(pv_alf_gr_t *gr, s_bind_t *b)
{
    const pv_alf_gcl_t *cl = b->cl;
    gr->cur_pre.n = gr->cur_eff.n = gr->cur_cond.n = 0;
    for (uint16_t i = 0; i < cl->n; i++) {
        const pv_alf_glit2_t *l = &cl->l[i];
        if (l->pred == -2 || pv_alf_gr_static_pred(gr, l->pred))
            continue;
        uint32_t args[PV_ALF_MAX_ARITY];
        s_args(l, b->sub, args);
        bool unknown = false;
        for (uint8_t k = 0; k < l->n; k++)
            unknown |= args[k] == PV_ALF_ENT_UNKNOWN;
        if (unknown) {
            if (!l->neg)
                return PV_OK;
            continue;
        }
        int32_t id = pv_alf_atoms_add(&gr->at, l->pred, l->n, args);
        if (id < 0)
            return id == -2 ? pv_errf(gr->em, PV_ERR_LIMIT, "%s: too many atoms", gr->what)
                            : PV_ERR_NOMEM;
        int32_t have = s_pre_val(gr->cur_pre.v, (uint16_t)gr->cur_pre.n, (uint32_t)id);
        if (have >= 0) {
            if (have != !l->neg)
                return PV_OK; /* contradictory precondition */
            continue;
        }
        pv_alf_lit_t *x = pv_alf_vec_push(&gr->cur_pre);
        if (!x)
            return PV_ERR_NOMEM;
        x->atom = (uint32_t)id;
        x->val = !l->neg;
    }
    int32_t sub[PV_ALF_MAX_VARS];
    memcpy(sub, b->sub, sizeof sub);
    pv_err_t rc = s_effects(gr, &b->s->scope, b->s->eff, sub, 0, 0);
    if (rc != PV_OK)
        return rc;
    /* Fast Downward's effect simplifications */
    pv_alf_eff_t *ef = gr->cur_eff.v;
    const pv_alf_lit_t *pre = gr->cur_pre.v;
    const pv_alf_lit_t *cond = gr->cur_cond.v;
    uint16_t n_pre = (uint16_t)gr->cur_pre.n;
    size_t kept = 0;
    for (size_t i = 0; i < gr->cur_eff.n; i++) {
        bool drop = false;
        if (!ef[i].val) /* delete shadowed by an add of the same atom under the same condition */
            for (size_t j = 0; j < gr->cur_eff.n && !drop; j++)
                drop = ef[j].val && ef[j].atom == ef[i].atom && s_cond_eq(gr, &ef[i], &ef[j]);
        if (!drop && s_pre_val(pre, n_pre, ef[i].atom) == ef[i].val)
            drop = true; /* "if the effect does not change the variable value, we ignore it" */
        for (uint16_t c = 0; c < ef[i].n_cond && !drop; c++) {
            int32_t pv = s_pre_val(pre, n_pre, cond[ef[i].cond + c].atom);
            drop = pv >= 0 && pv != cond[ef[i].cond + c].val;
        }
        for (size_t j = 0; j < kept && !drop; j++) /* identical duplicate */
            drop =
                ef[j].atom == ef[i].atom && ef[j].val == ef[i].val && s_cond_eq(gr, &ef[i], &ef[j]);
        if (!drop)
            ef[kept++] = ef[i];
    }
    if (kept == 0)
        return PV_OK; /* operator is noop */
    if (kept > 64)
        return pv_errf(gr->em, PV_ERR_LIMIT, "%s: action '%s' has more than 64 effects", gr->what,
                       b->s->name);
    if (gr->ops.n >= PV_ALF_MAX_OPS)
        return pv_errf(gr->em, PV_ERR_LIMIT, "%s: more than %d ground actions", gr->what,
                       PV_ALF_MAX_OPS);
    pv_alf_gop_t *o = pv_alf_vec_push(&gr->ops);
    if (!o)
        return PV_ERR_NOMEM;
    memset(o, 0, sizeof *o);
    o->op.schema = b->schema;
    o->op.n_params = (uint8_t)b->s->n_params;
    o->op.params = (uint32_t)gr->params.n;
    for (uint16_t i = 0; i < b->s->n_params; i++) {
        uint32_t *pp = pv_alf_vec_push(&gr->params);
        if (!pp)
            return PV_ERR_NOMEM;
        *pp = (uint32_t)b->sub[i];
    }
    o->op.pre = (uint32_t)gr->lits.n;
    o->op.n_pre = n_pre;
    for (uint16_t i = 0; i < n_pre; i++) {
        pv_alf_lit_t *x = pv_alf_vec_push(&gr->lits);
        if (!x)
            return PV_ERR_NOMEM;
        *x = pre[i];
    }
    o->op.eff = (uint32_t)gr->effs.n;
    o->op.n_eff = (uint16_t)kept;
    for (size_t i = 0; i < kept; i++) {
        pv_alf_eff_t *x = pv_alf_vec_push(&gr->effs);
        if (!x)
            return PV_ERR_NOMEM;
        *x = ef[i];
        x->cond = (uint32_t)gr->lits.n;
        for (uint16_t c = 0; c < ef[i].n_cond; c++) {
            pv_alf_lit_t *y = pv_alf_vec_push(&gr->lits);
            if (!y)
                return PV_ERR_NOMEM;
            *y = cond[ef[i].cond + c];
            /* s_push may have moved gr->lits; cond/pre live in other vectors */
        }
        ((pv_alf_eff_t *)gr->effs.v)[gr->effs.n - 1].cond = (uint32_t)(gr->lits.n - ef[i].n_cond);
    }
    return PV_OK;
}

static pv_err_t s_bind_rec(pv_alf_gr_t *gr, s_bind_t *b, uint16_t d)
{
    if (d == b->n_v)
        return s_emit(gr, b);
    uint16_t v = b->var[d];
    const pv_alf_scope_t *sc = &b->s->scope;
    uint32_t cand_n = 0;
    const uint32_t *cand = NULL;
    int32_t gl = b->gen[d];
    int32_t t = s_var_type(gr, sc, v);
    if (t < 0)
        return PV_OK;
    uint64_t tbit = (uint64_t)1 << t;
    if (gl >= 0) { /* values from the initial facts of a static literal */
        const pv_alf_glit2_t *l = &b->cl->l[gl];
        /* scan the initial atoms of a bound argument's object, else of the predicate */
        const uint32_t *scan = gr->ip + gr->ip_off[l->pred];
        uint32_t sn = gr->ip_off[l->pred + 1] - gr->ip_off[l->pred];
        for (uint8_t i = 0; i < l->n; i++) {
            const pv_alf_arg_t *x = &l->a[i];
            uint32_t e = x->kind == PV_ARG_ENT ? x->idx
                         : x->idx != v         ? (uint32_t)b->sub[x->idx]
                                               : PV_ALF_ENT_UNKNOWN;
            if (e != PV_ALF_ENT_UNKNOWN) {
                scan = gr->ie + gr->ie_off[e];
                sn = gr->ie_off[e + 1] - gr->ie_off[e];
                break;
            }
        }
        uint32_t *buf = gr->cand + (size_t)d * gr->g->n_ent;
        uint32_t mark = ++gr->stamp_now;
        for (uint32_t k = 0; k < sn; k++) {
            const pv_alf_atom_t *a = &gr->at.v[scan[k]];
            if (a->pred != l->pred)
                continue;
            uint32_t val = UINT32_MAX;
            bool ok = true;
            for (uint8_t i = 0; i < l->n && ok; i++) {
                const pv_alf_arg_t *x = &l->a[i];
                if (x->kind == PV_ARG_ENT)
                    ok = a->args[i] == x->idx;
                else if (x->idx == v)
                    ok = val == UINT32_MAX || val == a->args[i], val = a->args[i];
                else
                    ok = a->args[i] == (uint32_t)b->sub[x->idx];
            }
            if (ok && val != UINT32_MAX && (gr->g->ent_types[val] & tbit) &&
                gr->stamp[val] != mark) {
                gr->stamp[val] = mark;
                buf[cand_n++] = val;
            }
        }
        cand = buf;
    } else {
        cand = gr->ty_ent + gr->ty_off[t];
        cand_n = gr->ty_off[t + 1] - gr->ty_off[t];
    }
    pv_err_t rc = PV_OK;
    for (uint32_t k = 0; k < cand_n && rc == PV_OK; k++) {
        b->sub[v] = (int32_t)cand[k];
        bool ok = true;
        for (uint16_t c = b->chk_off[d + 1]; c < b->chk_off[d + 2] && ok; c++) {
            const pv_alf_glit2_t *l = &b->cl->l[b->chk[c]];
            uint32_t args[PV_ALF_MAX_ARITY];
            s_args(l, b->sub, args);
            ok = s_eval_static(gr, l, args);
        }
        if (ok)
            rc = s_bind_rec(gr, b, (uint16_t)(d + 1));
    }
    b->sub[v] = -1;
    return rc;
}

static bool s_lit_has(const pv_alf_glit2_t *l, uint16_t v)
{
    for (uint8_t i = 0; i < l->n; i++)
        if (l->a[i].kind == PV_ARG_VAR && l->a[i].idx == v)
            return true;
    return false;
}

static pv_err_t s_ground_clause(pv_alf_gr_t *gr, uint16_t schema, const pv_alf_gcl_t *cl)
{
    const pv_alf_schema_t *s = &gr->dom->schemas[schema];
    s_bind_t b;
    memset(&b, 0, sizeof b);
    b.cl = cl;
    b.s = s;
    b.schema = schema;
    for (uint16_t i = 0; i < PV_ALF_MAX_VARS; i++)
        b.sub[i] = -1;
    bool in[PV_ALF_MAX_VARS] = {false};
    uint16_t todo[PV_ALF_MAX_VARS], n_todo = 0;
    for (uint16_t i = 0; i < s->n_params; i++)
        in[i] = true, todo[n_todo++] = i;
    for (uint16_t i = 0; i < cl->n_ex; i++)
        if (!in[cl->ex[i]])
            in[cl->ex[i]] = true, todo[n_todo++] = cl->ex[i];
    for (uint16_t i = 0; i < cl->n; i++)
        for (uint8_t k = 0; k < cl->l[i].n; k++)
            if (cl->l[i].a[k].kind == PV_ARG_VAR && !in[cl->l[i].a[k].idx])
                return pv_errf(gr->em, PV_ERR_DATA, "%s: action '%s': free variable '?%s'",
                               gr->what, s->name, s->scope.var_name[cl->l[i].a[k].idx]);
    if (cl->n > 256)
        return pv_errf(gr->em, PV_ERR_LIMIT, "%s: action '%s': condition too long", gr->what,
                       s->name);
    /* greedy order: a variable that a static literal can generate, else the smallest type */
    bool bound[PV_ALF_MAX_VARS] = {false};
    for (uint16_t d = 0; d < n_todo; d++) {
        int32_t best = -1, best_gen = -1;
        uint32_t best_size = UINT32_MAX;
        for (uint16_t j = 0; j < n_todo; j++) {
            uint16_t v = todo[j];
            if (bound[v])
                continue;
            int32_t gen = -1;
            uint32_t size = UINT32_MAX;
            for (uint16_t i = 0; i < cl->n; i++) {
                const pv_alf_glit2_t *l = &cl->l[i];
                if (l->neg || !pv_alf_gr_static_pred(gr, l->pred) || !s_lit_has(l, v))
                    continue;
                bool others = true;
                for (uint8_t k = 0; k < l->n; k++)
                    if (l->a[k].kind == PV_ARG_VAR && l->a[k].idx != v && !bound[l->a[k].idx])
                        others = false;
                uint32_t n = gr->ip_off[l->pred + 1] - gr->ip_off[l->pred];
                if (others && n < size)
                    gen = i, size = n;
            }
            if (gen < 0) {
                int32_t t = s_var_type(gr, &s->scope, v);
                size = t < 0 ? 0 : (gr->ty_off[t + 1] - gr->ty_off[t]) + (1u << 20);
            }
            if (size < best_size || best < 0)
                best = v, best_gen = gen, best_size = size;
        }
        b.var[d] = (uint16_t)best;
        b.gen[d] = best_gen;
        bound[best] = true;
    }
    b.n_v = n_todo;
    /* testable literals after each depth (chk_off[0]: no variables; chk_off[d+1]: after d) */
    uint16_t k = 0;
    for (int32_t d = -1; d < (int32_t)n_todo; d++) {
        b.chk_off[d + 1] = k;
        for (uint16_t i = 0; i < cl->n; i++) {
            const pv_alf_glit2_t *l = &cl->l[i];
            if (l->pred != -2 && !pv_alf_gr_static_pred(gr, l->pred))
                continue;
            int32_t last = -1;
            for (uint8_t a = 0; a < l->n; a++)
                if (l->a[a].kind == PV_ARG_VAR)
                    for (uint16_t e = 0; e < n_todo; e++)
                        if (b.var[e] == l->a[a].idx && (int32_t)e > last)
                            last = e;
            if (last == d)
                b.chk[k++] = i;
        }
    }
    b.chk_off[n_todo + 1] = k;
    for (uint16_t c = b.chk_off[0]; c < b.chk_off[1]; c++) {
        const pv_alf_glit2_t *l = &cl->l[b.chk[c]];
        uint32_t args[PV_ALF_MAX_ARITY];
        s_args(l, b.sub, args);
        if (!s_eval_static(gr, l, args))
            return PV_OK;
    }
    return s_bind_rec(gr, &b, 0);
}

int32_t pv_alf_gr_gaction(const pv_alf_grammar_t *gram, const char *name)
{
    for (uint32_t i = 0; i < gram->n_actions; i++)
        if (strcmp(gram->actions[i].name, name) == 0)
            return (int32_t)i;
    return -1;
}

pv_err_t pv_alf_gws_new(pv_alf_gws_t **out)
{
    pv_alf_gws_t *ws = calloc(1, sizeof *ws);
    if (!ws || pv_arena_new(64 * 1024, 0, &ws->tmp) != PV_OK) {
        free(ws);
        return PV_ERR_NOMEM;
    }
    ws->ops.sz = sizeof(pv_alf_gop_t);
    ws->lits.sz = ws->cur_pre.sz = ws->cur_cond.sz = sizeof(pv_alf_lit_t);
    ws->effs.sz = ws->cur_eff.sz = sizeof(pv_alf_eff_t);
    ws->params.sz = sizeof(uint32_t);
    *out = ws;
    return PV_OK;
}

void pv_alf_gws_destroy(pv_alf_gws_t **ws)
{
    if (!ws || !*ws)
        return;
    pv_alf_gws_t *w = *ws;
    free(w->at.v);
    free(w->at.hash);
    free(w->ops.v);
    free(w->lits.v);
    free(w->effs.v);
    free(w->params.v);
    free(w->cur_pre.v);
    free(w->cur_eff.v);
    free(w->cur_cond.v);
    pv_arena_destroy(&w->tmp);
    free(w);
    *ws = NULL;
}

pv_err_t pv_alf_ground(pv_alf_gws_t *ws, pv_arena_t *arena, const pv_alf_domain_t *dom,
                       const pv_alf_grammar_t *gram, const pv_alf_problem_t *prob,
                       const char *task_override, const char *what, pv_alf_game_t **out,
                       pv_errmsg_t *em)
{
    pv_alf_gws_t *own = NULL;
    pv_err_t rc;
    if (!ws && (rc = pv_alf_gws_new(&own)) != PV_OK)
        return rc;
    if (!ws)
        ws = own;
    /* take the scratch, emptied but with its capacity */
    pv_alf_gr_t gr = {.arena = arena,
                      .dom = dom,
                      .gram = gram,
                      .prob = prob,
                      .what = what,
                      .em = em,
                      .tmp = ws->tmp,
                      .at = ws->at,
                      .ops = ws->ops,
                      .lits = ws->lits,
                      .effs = ws->effs,
                      .params = ws->params,
                      .cur_pre = ws->cur_pre,
                      .cur_eff = ws->cur_eff,
                      .cur_cond = ws->cur_cond};
    pv_arena_reset(gr.tmp);
    gr.at.n = 0;
    if (gr.at.hcap)
        memset(gr.at.hash, 0, gr.at.hcap * sizeof *gr.at.hash);
    gr.ops.n = gr.lits.n = gr.effs.n = gr.params.n = 0;
    pv_alf_game_t *g = pv_arena_calloc(arena, 1, sizeof *g);
    if (!g) {
        rc = PV_ERR_NOMEM;
        goto out;
    }
    gr.g = g;
    g->dom = dom;
    g->gram = gram;
    g->prob = prob;
    g->task_override = task_override;
    /* entity lookup by id */
    gr.ncap = 16;
    while (gr.ncap < 2 * prob->n_ent + 2)
        gr.ncap *= 2;
    gr.nslot = pv_arena_calloc(gr.tmp, gr.ncap, sizeof *gr.nslot);
    if (!gr.nslot) {
        rc = PV_ERR_NOMEM;
        goto out;
    }
    for (uint32_t e = 0; e < prob->n_ent; e++) {
        uint32_t h =
            (uint32_t)pv_alf_hash(prob->ent_id[e], strlen(prob->ent_id[e]), PV_ALF_HASH_SEED);
        uint32_t i = h & (gr.ncap - 1);
        while (gr.nslot[i])
            i = (i + 1) & (gr.ncap - 1);
        gr.nslot[i] = e + 1;
    }
    if ((rc = s_types(&gr)) != PV_OK || (rc = s_names(&gr)) != PV_OK)
        goto out;
    /* initial facts, deduplicated, in file order */
    for (uint32_t i = 0; i < prob->n_init; i++) {
        const pv_alf_patom_t *a = &prob->init[i];
        if (pv_alf_atoms_add(&gr.at, a->pred, a->n, a->args) < 0) {
            rc = PV_ERR_NOMEM;
            goto out;
        }
    }
    gr.n_init = gr.at.n;
    gr.ip_off = pv_arena_calloc(gr.tmp, dom->n_preds + 2u, sizeof *gr.ip_off);
    gr.ip = pv_arena_alloc(gr.tmp, (gr.n_init + 1) * sizeof *gr.ip, 0);
    if (!gr.ip_off || !gr.ip) {
        rc = PV_ERR_NOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < gr.n_init; i++)
        gr.ip_off[gr.at.v[i].pred + 1]++;
    for (uint16_t p = 0; p < dom->n_preds; p++)
        gr.ip_off[p + 1] += gr.ip_off[p];
    {
        uint32_t *fill = pv_arena_calloc(gr.tmp, dom->n_preds + 1u, sizeof *fill);
        if (!fill) {
            rc = PV_ERR_NOMEM;
            goto out;
        }
        for (uint32_t i = 0; i < gr.n_init; i++) {
            int32_t p = gr.at.v[i].pred;
            gr.ip[gr.ip_off[p] + fill[p]++] = i;
        }
    }
    /* initial atoms by object, candidate buffers, visit stamps */
    gr.ie_off = pv_arena_calloc(gr.tmp, g->n_ent + 2u, sizeof *gr.ie_off);
    gr.ie = pv_arena_alloc(gr.tmp, (gr.n_init * PV_ALF_MAX_ARITY + 1) * sizeof *gr.ie, 0);
    gr.cand = pv_arena_alloc(gr.tmp, ((size_t)PV_ALF_MAX_VARS * g->n_ent + 1) * sizeof *gr.cand, 0);
    gr.stamp = pv_arena_calloc(gr.tmp, g->n_ent + 1u, sizeof *gr.stamp);
    if (!gr.ie_off || !gr.ie || !gr.cand || !gr.stamp) {
        rc = PV_ERR_NOMEM;
        goto out;
    }
    for (uint32_t i = 0; i < gr.n_init; i++)
        for (uint8_t k = 0; k < gr.at.v[i].n; k++)
            if (k == 0 || gr.at.v[i].args[k] != gr.at.v[i].args[0])
                gr.ie_off[gr.at.v[i].args[k] + 2]++;
    for (uint32_t e = 0; e < g->n_ent; e++)
        gr.ie_off[e + 2] += gr.ie_off[e + 1];
    for (uint32_t i = 0; i < gr.n_init; i++)
        for (uint8_t k = 0; k < gr.at.v[i].n; k++)
            if (k == 0 || gr.at.v[i].args[k] != gr.at.v[i].args[0])
                gr.ie[gr.ie_off[gr.at.v[i].args[k] + 1]++] = i;
    /* operators, schema by schema, disjunct by disjunct */
    for (uint16_t s = 0; s < dom->n_schemas; s++) {
        if (pv_alf_gr_gaction(gram, dom->schemas[s].name) < 0)
            continue;
        pv_alf_gdnf_t d;
        int32_t sub[PV_ALF_MAX_VARS];
        for (int i = 0; i < PV_ALF_MAX_VARS; i++)
            sub[i] = -1;
        if (dom->schemas[s].pre)
            rc = pv_alf_gr_dnf(&gr, &dom->schemas[s].scope, dom->schemas[s].pre, false, sub, &d);
        else
            rc = pv_alf_gr_dnf_one(&gr, &d);
        for (uint32_t c = 0; c < d.n && rc == PV_OK; c++)
            rc = s_ground_clause(&gr, s, &d.c[c]);
        if (rc != PV_OK)
            goto out;
    }
    rc = pv_alf_game_finish(&gr);
    if (rc == PV_OK)
        *out = g;
out: /* hand the (possibly grown) scratch back */
    ws->at = gr.at;
    ws->ops = gr.ops;
    ws->lits = gr.lits;
    ws->effs = gr.effs;
    ws->params = gr.params;
    ws->cur_pre = gr.cur_pre;
    ws->cur_eff = gr.cur_eff;
    ws->cur_cond = gr.cur_cond;
    pv_alf_gws_destroy(&own);
    return rc;
}
