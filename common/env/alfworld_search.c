/* alfworld_search.c - the searching expert (pv_alf_search_action, alfworld_expert.h).
 *
 * ALFWorld's handcoded expert (alfworld/agents/expert/handcoded_expert.py) does not know
 * where things are: it walks the receptacles that can hold what it looks for, opens the
 * closed ones, and acts on an object once it has seen it. The planner expert
 * (pv_alf_expert_plan) reads the whole state and walks straight to a hidden object, which an
 * agent that sees only the observations cannot imitate: cloned on such plans, a policy
 * learns to take whatever lies at the first receptacle it visits. This expert plans only
 * over what the game has shown and searches for the rest, so every demonstration step is
 * one an observing agent could have chosen.
 */
#include <stdlib.h>
#include <string.h>

#include "common/env/alfworld_expert.h"

/* Predicate ids the search reads (-1 when the domain lacks one). */
typedef struct s_preds {
    int32_t at, recep_at, openable, opened, checked, in_recep, in_recobj, holds, rtype, otype,
        can_contain;
} s_preds_t;

static void s_preds(const pv_alf_domain_t *d, s_preds_t *p)
{
    *p = (s_preds_t){.at = pv_alf_domain_pred(d, "atlocation"),
                     .recep_at = pv_alf_domain_pred(d, "receptacleatlocation"),
                     .openable = pv_alf_domain_pred(d, "openable"),
                     .opened = pv_alf_domain_pred(d, "opened"),
                     .checked = pv_alf_domain_pred(d, "checked"),
                     .in_recep = pv_alf_domain_pred(d, "inreceptacle"),
                     .in_recobj = pv_alf_domain_pred(d, "inreceptacleobject"),
                     .holds = pv_alf_domain_pred(d, "holds"),
                     .rtype = pv_alf_domain_pred(d, "receptacletype"),
                     .otype = pv_alf_domain_pred(d, "objecttype"),
                     .can_contain = pv_alf_domain_pred(d, "cancontain")};
}

/* The atoms of predicate p (none when p < 0): [*b, *e) of g->by_pred. */
static void s_range(const pv_alf_game_t *g, int32_t p, uint32_t *b, uint32_t *e)
{
    *b = *e = 0;
    if (p >= 0) {
        *b = g->by_pred_off[p];
        *e = g->by_pred_off[p + 1];
    }
}

/* Per-entity scratch of one call. */
typedef struct s_know {
    uint32_t n;
    uint8_t *visited;   /* location visited (now or before) */
    uint8_t *openable;  /* receptacle can be opened */
    uint8_t *looked;    /* receptacle opened or checked */
    uint32_t *loc;      /* receptacle's location, UINT32_MAX = none */
    uint8_t *inspected; /* receptacle's inside was shown */
    uint8_t *seen;      /* object shown (or held) */
    uint8_t *prior;     /* receptacle whose type can contain a sought object */
    uint32_t here;      /* the agent's location, UINT32_MAX = none */
} s_know_t;

static void s_know_free(s_know_t *k)
{
    free(k->visited);
    free(k->loc);
}

static pv_err_t s_know_new(s_know_t *k, uint32_t n)
{
    memset(k, 0, sizeof *k);
    k->n = n;
    k->visited = calloc(6u * (n + 1), 1);
    k->loc = malloc((n + 1) * sizeof *k->loc);
    if (!k->visited || !k->loc) {
        s_know_free(k);
        return PV_ERR_NOMEM;
    }
    k->openable = k->visited + (n + 1);
    k->looked = k->openable + (n + 1);
    k->inspected = k->looked + (n + 1);
    k->seen = k->inspected + (n + 1);
    k->prior = k->seen + (n + 1);
    for (uint32_t i = 0; i <= n; i++)
        k->loc[i] = UINT32_MAX;
    k->here = UINT32_MAX;
    return PV_OK;
}

/* What an observing agent knows in (fd, neg); see alfworld_expert.h. */
static void s_knowledge(const pv_alf_game_t *g, const s_preds_t *p, const uint64_t *fd,
                        const uint64_t *neg, s_know_t *k)
{
    uint32_t b, e;
    s_range(g, p->at, &b, &e);
    for (uint32_t j = b; j < e; j++) {
        uint32_t a = g->by_pred[j];
        const pv_alf_atom_t *at = &g->atoms[a];
        if (at->n != 2)
            continue;
        if (pv_alf_bit(fd, a)) {
            k->visited[at->args[1]] = 1;
            k->here = at->args[1];
        } else if (pv_alf_bit(neg, a)) {
            k->visited[at->args[1]] = 1; /* left since: TextWorld keeps not_atlocation */
        }
    }
    s_range(g, p->recep_at, &b, &e);
    for (uint32_t j = b; j < e; j++)
        if (pv_alf_bit(fd, g->by_pred[j]) && g->atoms[g->by_pred[j]].n == 2)
            k->loc[g->atoms[g->by_pred[j]].args[0]] = g->atoms[g->by_pred[j]].args[1];
    int32_t flags[3] = {p->openable, p->opened, p->checked};
    for (int f = 0; f < 3; f++) {
        s_range(g, flags[f], &b, &e);
        for (uint32_t j = b; j < e; j++)
            if (pv_alf_bit(fd, g->by_pred[j]) && g->atoms[g->by_pred[j]].n == 1)
                (f == 0 ? k->openable : k->looked)[g->atoms[g->by_pred[j]].args[0]] = 1;
    }
    for (uint32_t r = 0; r < k->n; r++)
        k->inspected[r] =
            k->loc[r] != UINT32_MAX && k->visited[k->loc[r]] && (!k->openable[r] || k->looked[r]);
    s_range(g, p->holds, &b, &e);
    for (uint32_t j = b; j < e; j++)
        if (pv_alf_bit(fd, g->by_pred[j]) && g->atoms[g->by_pred[j]].n == 2)
            k->seen[g->atoms[g->by_pred[j]].args[1]] = 1;
    s_range(g, p->in_recep, &b, &e);
    for (uint32_t j = b; j < e; j++) {
        const pv_alf_atom_t *at = &g->atoms[g->by_pred[j]];
        if (pv_alf_bit(fd, g->by_pred[j]) && at->n == 2 && k->inspected[at->args[1]])
            k->seen[at->args[0]] = 1;
    }
    s_range(g, p->in_recobj, &b, &e); /* inside a seen object (one level, as ALFWorld nests) */
    for (uint32_t j = b; j < e; j++) {
        const pv_alf_atom_t *at = &g->atoms[g->by_pred[j]];
        if (pv_alf_bit(fd, g->by_pred[j]) && at->n == 2 && k->seen[at->args[1]])
            k->seen[at->args[0]] = 1;
    }
}

/* k->prior: receptacles whose type can contain the type of an unseen object that the goal
 * can be about (`cand`, `fresh`: scratch of max_vars * ew and ew words). */
static void s_priors(const pv_alf_game_t *g, const s_preds_t *p, const uint64_t *fd,
                     const uint8_t *is_obj, s_know_t *k, uint64_t *cand, uint64_t *fresh,
                     uint32_t ew)
{
    uint8_t *sought = calloc(k->n + 1, 1), *otype_sought = calloc(k->n + 1, 1),
            *rtype_ok = calloc(k->n + 1, 1);
    if (!sought || !otype_sought || !rtype_ok)
        goto out; /* no priors: every receptacle alike */
    for (uint16_t i = 0; i < g->n_goal; i++) {
        const pv_alf_gclause_t *c = &g->goal[i];
        pv_alf_goal_cands(g, fd, c, cand, fresh, ew);
        for (uint16_t v = 0; v < c->n_vars; v++)
            for (uint32_t o = 0; o < k->n; o++)
                if (pv_alf_bit(cand + v * ew, o) && is_obj[o] && !k->seen[o])
                    sought[o] = 1;
    }
    uint32_t b, e;
    s_range(g, p->otype, &b, &e); /* objectType(o, ot) */
    for (uint32_t j = b; j < e; j++) {
        const pv_alf_atom_t *at = &g->atoms[g->by_pred[j]];
        if (pv_alf_bit(fd, g->by_pred[j]) && at->n == 2 && sought[at->args[0]])
            otype_sought[at->args[1]] = 1;
    }
    s_range(g, p->can_contain, &b, &e); /* canContain(rt, ot) */
    for (uint32_t j = b; j < e; j++) {
        const pv_alf_atom_t *at = &g->atoms[g->by_pred[j]];
        if (pv_alf_bit(fd, g->by_pred[j]) && at->n == 2 && otype_sought[at->args[1]])
            rtype_ok[at->args[0]] = 1;
    }
    s_range(g, p->rtype, &b, &e); /* receptacleType(r, rt) */
    for (uint32_t j = b; j < e; j++) {
        const pv_alf_atom_t *at = &g->atoms[g->by_pred[j]];
        if (pv_alf_bit(fd, g->by_pred[j]) && at->n == 2 && rtype_ok[at->args[1]])
            k->prior[at->args[0]] = 1;
    }
out:
    free(sought);
    free(otype_sought);
    free(rtype_ok);
}

/* Parameter q of operator o. */
static uint32_t s_param(const pv_alf_game_t *g, uint32_t o, uint8_t q)
{
    return g->op_params[g->ops[o].params + q];
}

/* The search step: open the receptacle here when closed and not inspected, else go to the
 * best receptacle not inspected (a prior first, then the lower command rank). -1 = none. */
static int32_t s_search_op(const pv_alf_game_t *g, const uint64_t *fd, const s_know_t *k)
{
    int32_t best = -1;
    uint32_t best_key = UINT32_MAX;
    for (uint32_t o = 0; o < g->n_ops; o++) {
        const pv_alf_op_t *op = &g->ops[o];
        const char *name = g->dom->schemas[op->schema].name;
        bool open = strcmp(name, "openobject") == 0 && op->n_params == 3;
        bool go = strcmp(name, "gotolocation") == 0 && op->n_params == 4;
        if (!(open || go) || !pv_alf_op_applicable(g, o, fd))
            continue;
        uint32_t r = s_param(g, o, open ? 2 : 3);
        if (r >= k->n || k->inspected[r])
            continue;
        if (open) {
            if (k->loc[r] == k->here)
                return (int32_t)o;
            continue;
        }
        if (k->loc[r] == k->here) /* here already: nothing to go to */
            continue;
        uint32_t key = (k->prior[r] ? 0u : 1u << 31) | op->cmd;
        if (key < best_key) {
            best_key = key;
            best = (int32_t)o;
        }
    }
    return best;
}

pv_err_t pv_alf_search_action(pv_alf_expert_t *ex, const pv_alf_game_t *g, const uint64_t *fd,
                              const uint64_t *neg, uint32_t max_len, int32_t *op)
{
    *op = -1;
    s_preds_t p;
    s_preds(g->dom, &p);
    uint32_t ew = (g->n_ent + 63) / 64, max_vars = 1;
    for (uint16_t i = 0; i < g->n_goal; i++)
        if (g->goal[i].n_vars > max_vars)
            max_vars = g->goal[i].n_vars;
    s_know_t k;
    if (s_know_new(&k, g->n_ent) != PV_OK)
        return PV_ERR_NOMEM;
    uint64_t *hidden = calloc((size_t)ew * (max_vars + 2) + 1, sizeof *hidden);
    uint8_t *is_obj = calloc(g->n_ent + 1, 1);
    pv_err_t rc = PV_OK;
    if (!hidden || !is_obj) {
        rc = PV_ERR_NOMEM;
        goto out;
    }
    s_knowledge(g, &p, fd, neg, &k);
    const int32_t obj_t = pv_alf_game_type(g, "object");
    for (uint32_t e = 0; e < g->n_ent; e++) {
        is_obj[e] = obj_t >= 0 && (int32_t)g->ent_type[e] == obj_t;
        if (is_obj[e] && !k.seen[e])
            pv_alf_setbit(hidden, e, true);
    }
    int32_t first = -1;
    pv_alf_expert_set_hidden(ex, hidden);
    int len = pv_alf_expert_plan(ex, g, fd, max_len, &first);
    pv_alf_expert_set_hidden(ex, NULL);
    if (len > 0 && first >= 0) {
        *op = first;
        goto out;
    }
    s_priors(g, &p, fd, is_obj, &k, hidden + ew, hidden + ew * (max_vars + 1), ew);
    if ((*op = s_search_op(g, fd, &k)) >= 0)
        goto out;
    /* everything inspected and still no plan over what was seen: the planner's action */
    len = pv_alf_expert_plan(ex, g, fd, max_len, &first);
    if (len > 0 && first >= 0)
        *op = first;
    else
        rc = len == PV_ALF_EXPERT_LIMIT ? PV_ERR_LIMIT : PV_ERR_NOTFOUND;
out:
    free(hidden);
    free(is_obj);
    s_know_free(&k);
    return rc;
}
