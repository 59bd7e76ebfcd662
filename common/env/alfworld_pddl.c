/* alfworld_pddl.c - PDDL domains and formulas (the subset ALFWorld and TextWorld use:
 * typing, and/or/not/imply/exists/forall/=, conditional and quantified effects; numeric effects
 * such as (increase (total-cost) 1) are read and ignored as Fast Downward treats action costs).
 * Structure follows Fast Downward's translate/pddl_parser/parsing_functions.py. */
#include <string.h>

#include "common/env/alfworld_px.h"

static bool s_is(const pv_alf_sx_t *x, const char *atom)
{
    return x && x->atom && strcmp(x->atom, atom) == 0;
}

int32_t pv_alf_domain_type(const pv_alf_domain_t *dom, const char *name)
{
    for (uint16_t i = 0; i < dom->n_tt; i++)
        if (strcmp(dom->tt_name[i], name) == 0)
            return i;
    return -1;
}

void pv_alf_px_scope_types(const pv_alf_domain_t *d, pv_alf_scope_t *sc)
{
    for (uint16_t v = 0; v < sc->n_vars; v++)
        sc->var_tid[v] = (int16_t)pv_alf_domain_type(d, sc->var_type[v]);
}

int32_t pv_alf_domain_pred(const pv_alf_domain_t *dom, const char *name)
{
    for (uint16_t i = 0; i < dom->n_preds; i++)
        if (strcmp(dom->pred_name[i], name) == 0)
            return i;
    return -1;
}

/* ---------------------------------------------------------------- typed lists */

/* FD parse_typed_list: "a b - t c" gives a:t b:t c:object. */
pv_err_t pv_alf_px_typed_list(pv_alf_px_t *px, const pv_alf_sx_t *x, uint32_t from,
                              pv_alf_typed_t *out)
{
    uint32_t cap = x->n > from ? x->n - from : 1;
    out->name = pv_arena_alloc(px->arena, cap * sizeof *out->name, 0);
    out->type = pv_arena_alloc(px->arena, cap * sizeof *out->type, 0);
    out->line = pv_arena_alloc(px->arena, cap * sizeof *out->line, 0);
    if (!out->name || !out->type || !out->line)
        return PV_ERR_NOMEM;
    out->n = 0;
    uint32_t pending = 0;
    for (uint32_t i = from; i < x->n; i++) {
        const pv_alf_sx_t *k = x->kids[i];
        if (!k->atom)
            return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: expected a name in a typed list", px->what,
                           k->line);
        if (strcmp(k->atom, "-") == 0) {
            if (i + 1 >= x->n || !x->kids[i + 1]->atom)
                return pv_errf(px->em, PV_ERR_PARSE,
                               "%s:%u: '-' must be followed by a type name (\"either\" types are "
                               "not supported)",
                               px->what, k->line);
            const char *t = x->kids[++i]->atom;
            for (uint32_t j = pending; j < out->n; j++)
                out->type[j] = t;
            pending = out->n;
            continue;
        }
        out->name[out->n] = k->atom;
        out->type[out->n] = "object";
        out->line[out->n] = k->line;
        out->n++;
    }
    return PV_OK;
}

/* ---------------------------------------------------------------- formulas */

static pv_err_t s_new_var(pv_alf_px_t *px, const char *name, const char *type, uint32_t line,
                          uint16_t *id)
{
    pv_alf_scope_t *sc = px->scope;
    if (sc->n_vars >= PV_ALF_MAX_VARS || px->n_vis >= PV_ALF_MAX_VARS)
        return pv_errf(px->em, PV_ERR_LIMIT, "%s:%u: more than %d variables in one scope", px->what,
                       line, PV_ALF_MAX_VARS);
    if (name[0] != '?')
        return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: variable '%s' must start with '?'", px->what,
                       line, name);
    sc->var_name[sc->n_vars] = name + 1;
    sc->var_type[sc->n_vars] = type;
    *id = sc->n_vars++;
    px->vis[px->n_vis++] = *id;
    return PV_OK;
}

static pv_err_t s_arg(pv_alf_px_t *px, const pv_alf_sx_t *x, pv_alf_arg_t *out)
{
    if (!x->atom)
        return pv_errf(px->em, PV_ERR_PARSE,
                       "%s:%u: expected a variable or a constant, found a list (functions are "
                       "not supported here)",
                       px->what, x->line);
    if (x->atom[0] == '?') {
        for (int i = (int)px->n_vis - 1; i >= 0; i--)
            if (strcmp(px->scope->var_name[px->vis[i]], x->atom + 1) == 0) {
                out->kind = PV_ARG_VAR;
                out->idx = px->vis[i];
                return PV_OK;
            }
        return pv_errf(px->em, PV_ERR_DATA, "%s:%u: undefined variable '%s'", px->what, x->line,
                       x->atom);
    }
    pv_alf_scope_t *sc = px->scope;
    for (uint16_t i = 0; i < sc->n_consts; i++)
        if (strcmp(sc->const_name[i], x->atom) == 0) {
            out->kind = PV_ARG_CONST;
            out->idx = i;
            return PV_OK;
        }
    if (sc->n_consts == UINT16_MAX)
        return pv_errf(px->em, PV_ERR_LIMIT, "%s:%u: too many constants", px->what, x->line);
    if (!pv_alf_arena_grow(px->arena, (void **)&sc->const_name, sc->n_consts, &sc->cap_consts,
                           sizeof *sc->const_name))
        return PV_ERR_NOMEM;
    sc->const_name[sc->n_consts] = x->atom;
    out->kind = PV_ARG_CONST;
    out->idx = sc->n_consts++;
    return PV_OK;
}

static pv_alf_fm_t *s_fm(pv_alf_px_t *px, uint8_t kind, uint32_t line)
{
    pv_alf_fm_t *f = pv_arena_calloc(px->arena, 1, sizeof *f);
    if (f) {
        f->kind = kind;
        f->line = line;
    }
    return f;
}

static pv_err_t s_atom(pv_alf_px_t *px, const pv_alf_sx_t *x, pv_alf_fm_t **out)
{
    const char *head = x->kids[0]->atom;
    pv_alf_fm_t *f = s_fm(px, PV_FM_ATOM, x->line);
    if (!f)
        return PV_ERR_NOMEM;
    if (strcmp(head, "=") == 0) {
        f->kind = PV_FM_EQ;
        if (x->n != 3)
            return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: '=' takes two arguments", px->what,
                           x->line);
    } else {
        const pv_alf_domain_t *d = px->dom ? px->dom : px->d;
        f->pred = pv_alf_domain_pred(d, head);
        if (f->pred < 0)
            return pv_errf(px->em, PV_ERR_DATA, "%s:%u: undefined predicate '%s'", px->what,
                           x->line, head);
        if (x->n - 1 != d->pred_arity[f->pred])
            return pv_errf(px->em, PV_ERR_DATA,
                           "%s:%u: predicate '%s' takes %u arguments, %u given", px->what, x->line,
                           head, d->pred_arity[f->pred], x->n - 1);
    }
    f->n_args = (uint8_t)(x->n - 1);
    for (uint32_t i = 1; i < x->n; i++) {
        pv_err_t rc = s_arg(px, x->kids[i], &f->args[i - 1]);
        if (rc != PV_OK)
            return rc;
    }
    *out = f;
    return PV_OK;
}

pv_err_t pv_alf_px_formula(pv_alf_px_t *px, const pv_alf_sx_t *x, bool effect, int depth,
                           pv_alf_fm_t **out);

static pv_err_t s_kids(pv_alf_px_t *px, const pv_alf_sx_t *x, uint32_t from, bool effect, int depth,
                       pv_alf_fm_t *f)
{
    f->n_kids = (uint16_t)(x->n - from);
    f->kids = pv_arena_alloc(px->arena, (f->n_kids ? f->n_kids : 1) * sizeof *f->kids, 0);
    if (!f->kids)
        return PV_ERR_NOMEM;
    for (uint32_t i = from; i < x->n; i++) {
        pv_err_t rc = pv_alf_px_formula(px, x->kids[i], effect, depth + 1, &f->kids[i - from]);
        if (rc != PV_OK)
            return rc;
    }
    return PV_OK;
}

static pv_err_t s_quant(pv_alf_px_t *px, const pv_alf_sx_t *x, uint8_t kind, bool effect, int depth,
                        pv_alf_fm_t **out)
{
    if (x->n != 3 || x->kids[1]->atom)
        return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: '%s' needs (variables) and a formula",
                       px->what, x->line, x->kids[0]->atom);
    pv_alf_typed_t tl;
    pv_err_t rc = pv_alf_px_typed_list(px, x->kids[1], 0, &tl);
    if (rc != PV_OK)
        return rc;
    pv_alf_fm_t *f = s_fm(px, kind, x->line);
    if (!f)
        return PV_ERR_NOMEM;
    f->n_vars = (uint16_t)tl.n;
    f->vars = pv_arena_alloc(px->arena, (tl.n ? tl.n : 1) * sizeof *f->vars, 0);
    if (!f->vars)
        return PV_ERR_NOMEM;
    uint16_t saved = px->n_vis;
    for (uint32_t i = 0; i < tl.n; i++)
        if ((rc = s_new_var(px, tl.name[i], tl.type[i], tl.line[i], &f->vars[i])) != PV_OK)
            return rc;
    f->n_kids = 1;
    f->kids = pv_arena_alloc(px->arena, sizeof *f->kids, 0);
    if (!f->kids)
        return PV_ERR_NOMEM;
    rc = pv_alf_px_formula(px, x->kids[2], effect, depth + 1, &f->kids[0]);
    px->n_vis = saved;
    *out = f;
    return rc;
}

pv_err_t pv_alf_px_formula(pv_alf_px_t *px, const pv_alf_sx_t *x, bool effect, int depth,
                           pv_alf_fm_t **out)
{
    if (depth > 100)
        return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: formula nested too deeply", px->what, x->line);
    if (x->atom)
        return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: expected a formula, found '%s'", px->what,
                       x->line, x->atom);
    if (x->n == 0) { /* "()" is an empty conjunction */
        *out = s_fm(px, PV_FM_TRUE, x->line);
        return *out ? PV_OK : PV_ERR_NOMEM;
    }
    const pv_alf_sx_t *h = x->kids[0];
    if (!h->atom)
        return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: a formula cannot start with a list", px->what,
                       x->line);
    const char *op = h->atom;
    pv_alf_fm_t *f = NULL;
    if (strcmp(op, "and") == 0 || (!effect && strcmp(op, "or") == 0)) {
        f = s_fm(px, op[0] == 'a' ? PV_FM_AND : PV_FM_OR, x->line);
        if (!f)
            return PV_ERR_NOMEM;
        pv_err_t rc = s_kids(px, x, 1, effect, depth, f);
        *out = f;
        return rc;
    }
    if (strcmp(op, "not") == 0) {
        if (x->n != 2)
            return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: 'not' takes one formula", px->what,
                           x->line);
        f = s_fm(px, PV_FM_NOT, x->line);
        if (!f)
            return PV_ERR_NOMEM;
        pv_err_t rc = s_kids(px, x, 1, false, depth, f);
        if (rc == PV_OK && effect && f->kids[0]->kind != PV_FM_ATOM)
            return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: an effect can only negate an atom",
                           px->what, x->line);
        *out = f;
        return rc;
    }
    if (!effect && strcmp(op, "imply") == 0) { /* (imply a b) = (or (not a) b) */
        if (x->n != 3)
            return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: 'imply' takes two formulas", px->what,
                           x->line);
        f = s_fm(px, PV_FM_OR, x->line);
        pv_alf_fm_t *neg = s_fm(px, PV_FM_NOT, x->line);
        if (!f || !neg)
            return PV_ERR_NOMEM;
        f->n_kids = 2;
        f->kids = pv_arena_alloc(px->arena, 2 * sizeof *f->kids, 0);
        neg->n_kids = 1;
        neg->kids = pv_arena_alloc(px->arena, sizeof *neg->kids, 0);
        if (!f->kids || !neg->kids)
            return PV_ERR_NOMEM;
        pv_err_t rc = pv_alf_px_formula(px, x->kids[1], false, depth + 1, &neg->kids[0]);
        if (rc == PV_OK)
            rc = pv_alf_px_formula(px, x->kids[2], false, depth + 1, &f->kids[1]);
        f->kids[0] = neg;
        *out = f;
        return rc;
    }
    if ((!effect && strcmp(op, "exists") == 0))
        return s_quant(px, x, PV_FM_EXISTS, effect, depth, out);
    if (strcmp(op, "forall") == 0)
        return s_quant(px, x, PV_FM_FORALL, effect, depth, out);
    if (effect && strcmp(op, "when") == 0) {
        if (x->n != 3)
            return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: 'when' takes a condition and an effect",
                           px->what, x->line);
        f = s_fm(px, PV_FM_WHEN, x->line);
        if (!f)
            return PV_ERR_NOMEM;
        f->n_kids = 2;
        f->kids = pv_arena_alloc(px->arena, 2 * sizeof *f->kids, 0);
        if (!f->kids)
            return PV_ERR_NOMEM;
        pv_err_t rc = pv_alf_px_formula(px, x->kids[1], false, depth + 1, &f->kids[0]);
        if (rc == PV_OK)
            rc = pv_alf_px_formula(px, x->kids[2], true, depth + 1, &f->kids[1]);
        *out = f;
        return rc;
    }
    if (effect &&
        (strcmp(op, "increase") == 0 || strcmp(op, "decrease") == 0 || strcmp(op, "assign") == 0 ||
         strcmp(op, "scale-up") == 0 || strcmp(op, "scale-down") == 0)) {
        *out = s_fm(px, PV_FM_TRUE, x->line); /* action costs: no state change */
        return *out ? PV_OK : PV_ERR_NOMEM;
    }
    if (strcmp(op, "exists") == 0 || strcmp(op, "or") == 0 || strcmp(op, "imply") == 0 ||
        strcmp(op, "when") == 0)
        return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: '%s' is not allowed %s", px->what, x->line, op,
                       effect ? "in an effect" : "in a condition");
    return s_atom(px, x, out);
}

/* Mark predicates changed by an effect formula as fluent. */
static void s_mark_fluent(pv_alf_domain_t *d, const pv_alf_fm_t *f)
{
    if (!f)
        return;
    if (f->kind == PV_FM_ATOM) {
        d->pred_fluent[f->pred] = 1;
        return;
    }
    if (f->kind == PV_FM_WHEN) {
        s_mark_fluent(d, f->kids[1]);
        return;
    }
    for (uint16_t i = 0; i < f->n_kids; i++)
        s_mark_fluent(d, f->kids[i]);
}

/* ---------------------------------------------------------------- domain */

pv_err_t pv_alf_px_define(pv_alf_px_t *px, const pv_alf_sx_t *top, const char *kind,
                          const pv_alf_sx_t **def, const char **name)
{
    if (top->n != 1 || top->kids[0]->atom || top->kids[0]->n < 2 ||
        !s_is(top->kids[0]->kids[0], "define"))
        return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: expected one (define (%s ...) ...)", px->what,
                       top->n ? top->kids[0]->line : 1, kind);
    *def = top->kids[0];
    const pv_alf_sx_t *hd = (*def)->kids[1];
    if (hd->atom || hd->n != 2 || !s_is(hd->kids[0], kind) || !hd->kids[1]->atom)
        return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: expected (%s NAME)", px->what, hd->line, kind);
    *name = hd->kids[1]->atom;
    return PV_OK;
}

static pv_err_t s_predicates(pv_alf_px_t *px, const pv_alf_sx_t *x)
{
    pv_alf_domain_t *d = px->dom;
    uint32_t n = x->n - 1;
    d->pred_name = pv_arena_alloc(px->arena, (n + 1) * sizeof *d->pred_name, 0);
    d->pred_arity = pv_arena_calloc(px->arena, n + 1, 1);
    d->pred_fluent = pv_arena_calloc(px->arena, n + 1, 1);
    if (!d->pred_name || !d->pred_arity || !d->pred_fluent)
        return PV_ERR_NOMEM;
    for (uint32_t i = 1; i < x->n; i++) {
        const pv_alf_sx_t *p = x->kids[i];
        if (p->atom || p->n == 0 || !p->kids[0]->atom)
            return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: expected (predicate ?arg - type ...)",
                           px->what, p->line);
        pv_alf_typed_t tl;
        pv_err_t rc = pv_alf_px_typed_list(px, p, 1, &tl);
        if (rc != PV_OK)
            return rc;
        if (tl.n > PV_ALF_MAX_ARITY)
            return pv_errf(px->em, PV_ERR_LIMIT,
                           "%s:%u: predicate '%s' has more than %d "
                           "arguments",
                           px->what, p->line, p->kids[0]->atom, PV_ALF_MAX_ARITY);
        if (pv_alf_domain_pred(d, p->kids[0]->atom) >= 0)
            return pv_errf(px->em, PV_ERR_DATA, "%s:%u: predicate '%s' declared twice", px->what,
                           p->line, p->kids[0]->atom);
        d->pred_name[d->n_preds] = p->kids[0]->atom;
        d->pred_arity[d->n_preds] = (uint8_t)tl.n;
        d->n_preds++;
    }
    return PV_OK;
}

static pv_err_t s_action(pv_alf_px_t *px, const pv_alf_sx_t *x, pv_alf_schema_t *s)
{
    if (x->n < 2 || !x->kids[1]->atom)
        return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: expected (:action NAME ...)", px->what,
                       x->line);
    memset(s, 0, sizeof *s);
    s->name = x->kids[1]->atom;
    s->line = x->line;
    px->scope = &s->scope;
    px->n_vis = 0;
    for (uint32_t i = 2; i < x->n; i += 2) {
        if (i + 1 >= x->n)
            return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: action '%s': '%s' has no value", px->what,
                           x->kids[i]->line, s->name,
                           x->kids[i]->atom ? x->kids[i]->atom : "(...)");
        const pv_alf_sx_t *key = x->kids[i], *val = x->kids[i + 1];
        pv_err_t rc = PV_OK;
        if (s_is(key, ":parameters")) {
            pv_alf_typed_t tl;
            if (val->atom)
                return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: :parameters needs a list", px->what,
                               val->line);
            if ((rc = pv_alf_px_typed_list(px, val, 0, &tl)) != PV_OK)
                return rc;
            for (uint32_t k = 0; k < tl.n; k++) {
                uint16_t id;
                if ((rc = s_new_var(px, tl.name[k], tl.type[k], tl.line[k], &id)) != PV_OK)
                    return rc;
            }
            s->n_params = (uint16_t)tl.n;
        } else if (s_is(key, ":precondition")) {
            rc = pv_alf_px_formula(px, val, false, 0, &s->pre);
        } else if (s_is(key, ":effect")) {
            rc = pv_alf_px_formula(px, val, true, 0, &s->eff);
        } else {
            return pv_errf(px->em, PV_ERR_PARSE, "%s:%u: action '%s': unknown field '%s'", px->what,
                           key->line, s->name, key->atom ? key->atom : "(...)");
        }
        if (rc != PV_OK)
            return rc;
    }
    if (!s->eff)
        return pv_errf(px->em, PV_ERR_DATA, "%s:%u: action '%s' has no :effect", px->what, x->line,
                       s->name);
    return PV_OK;
}

pv_err_t pv_alf_domain_parse(pv_arena_t *arena, const char *text, const char *what,
                             pv_alf_domain_t **out, pv_errmsg_t *em)
{
    pv_alf_sx_t *top = NULL;
    pv_err_t rc = pv_alf_sx_parse(arena, text, what, &top, em);
    if (rc != PV_OK)
        return rc;
    pv_alf_domain_t *d = pv_arena_calloc(arena, 1, sizeof *d);
    if (!d)
        return PV_ERR_NOMEM;
    pv_alf_px_t px = {.arena = arena, .what = what, .em = em, .dom = d};
    const pv_alf_sx_t *def;
    if ((rc = pv_alf_px_define(&px, top, "domain", &def, &d->name)) != PV_OK)
        return rc;
    /* predicates first: actions refer to them */
    const pv_alf_sx_t *preds = NULL;
    uint32_t n_actions = 0;
    for (uint32_t i = 2; i < def->n; i++) {
        const pv_alf_sx_t *sec = def->kids[i];
        if (sec->atom || sec->n == 0 || !sec->kids[0]->atom)
            return pv_errf(em, PV_ERR_PARSE, "%s:%u: expected a (:section ...)", what, sec->line);
        if (s_is(sec->kids[0], ":predicates"))
            preds = sec;
        else if (s_is(sec->kids[0], ":action"))
            n_actions++;
    }
    if (!preds)
        return pv_errf(em, PV_ERR_DATA, "%s: the domain has no (:predicates ...)", what);
    if ((rc = s_predicates(&px, preds)) != PV_OK)
        return rc;
    d->schemas = pv_arena_calloc(arena, n_actions ? n_actions : 1, sizeof *d->schemas);
    if (!d->schemas)
        return PV_ERR_NOMEM;
    for (uint32_t i = 2; i < def->n; i++) {
        const pv_alf_sx_t *sec = def->kids[i];
        const char *k = sec->kids[0]->atom;
        if (strcmp(k, ":types") == 0) {
            pv_alf_typed_t tl;
            if ((rc = pv_alf_px_typed_list(&px, sec, 1, &tl)) != PV_OK)
                return rc;
            for (uint32_t t = 0; t < tl.n; t++) {
                if (d->n_types >= PV_ALF_MAX_TYPES)
                    return pv_errf(em, PV_ERR_LIMIT, "%s:%u: more than %d types", what, sec->line,
                                   PV_ALF_MAX_TYPES);
                d->type_name[d->n_types] = tl.name[t];
                d->type_parent[d->n_types] = strcmp(tl.type[t], "object") == 0 ? NULL : tl.type[t];
                d->n_types++;
            }
        } else if (strcmp(k, ":constants") == 0) {
            pv_alf_typed_t tl;
            if ((rc = pv_alf_px_typed_list(&px, sec, 1, &tl)) != PV_OK)
                return rc;
            d->n_consts = (uint16_t)tl.n;
            d->const_name = tl.name;
            d->const_type = tl.type;
        } else if (strcmp(k, ":action") == 0) {
            pv_alf_schema_t *s = &d->schemas[d->n_schemas];
            if ((rc = s_action(&px, sec, s)) != PV_OK)
                return rc;
            for (uint16_t j = 0; j < d->n_schemas; j++)
                if (strcmp(d->schemas[j].name, s->name) == 0)
                    return pv_errf(em, PV_ERR_DATA, "%s:%u: action '%s' defined twice", what,
                                   sec->line, s->name);
            d->n_schemas++;
        } else if (strcmp(k, ":derived") == 0) {
            return pv_errf(em, PV_ERR_UNSUPPORTED, "%s:%u: derived predicates are not supported",
                           what, sec->line);
        } else if (strcmp(k, ":requirements") != 0 && strcmp(k, ":functions") != 0 &&
                   strcmp(k, ":predicates") != 0) {
            return pv_errf(em, PV_ERR_PARSE, "%s:%u: unknown section '%s'", what, sec->line, k);
        }
    }
    d->tt_name[d->n_tt++] = "object";
    for (uint16_t t = 0; t < d->n_types; t++)
        if (pv_alf_domain_type(d, d->type_name[t]) < 0)
            d->tt_name[d->n_tt++] = d->type_name[t];
    for (uint16_t j = 0; j < d->n_schemas; j++) {
        s_mark_fluent(d, d->schemas[j].eff);
        pv_alf_px_scope_types(d, &d->schemas[j].scope);
    }
    *out = d;
    return PV_OK;
}
