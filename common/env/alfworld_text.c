/* alfworld_text.c - TextWorld's context-sensitive grammar derivation over the game's facts
 * (textworld/envs/pddl/textgen/__init__.py: ContextSensitiveGrammar.derive).
 *
 * A nonterminal takes the first alternative whose condition has a solution (the condition's
 * bindings are not kept); {expr | query} yields one copy of expr per solution of the query,
 * each in the context extended by that solution; [ ... ] joins those copies with the rules
 * list_separator / list_last_separator, or derives list_empty when there is none. Queries
 * follow textworld.logic.State.all_assignments: literals in order, a placeholder matches a
 * context binding with the same name and type, a new placeholder cannot take an object that
 * another binding already holds, and a fact's argument must be of a subtype of the
 * placeholder's type. `not_p` literals read TextWorld's negated facts (the `neg` bitset).
 */
#include <string.h>

#include "common/env/alfworld_int.h"

#define S_MAX_DEPTH 48

void pv_alf_out_put(pv_alf_out_t *out, const char *s, size_t n)
{
    if (out->len + n + 1 > out->cap) {
        out->truncated = true;
        n = out->cap > out->len + 1 ? out->cap - out->len - 1 : 0;
    }
    memcpy(out->buf + out->len, s, n);
    out->len += n;
    out->buf[out->len] = 0;
}

void pv_alf_op_ctx(const pv_alf_game_t *g, uint32_t op, pv_alf_ctx_t *ctx)
{
    const pv_alf_op_t *o = &g->ops[op];
    const pv_alf_scope_t *sc = &g->dom->schemas[o->schema].scope;
    ctx->n = 0;
    for (uint8_t i = 0; i < o->n_params && i < PV_ALF_MAX_BIND; i++) {
        ctx->name[ctx->n] = sc->var_name[i];
        ctx->type[ctx->n] = sc->var_type[i];
        ctx->ent[ctx->n] = g->op_params[o->params + i];
        ctx->n++;
    }
}

/* ---------------------------------------------------------------- queries */

typedef struct s_q {
    const pv_alf_view_t *view;
    const pv_alf_query_t *q;
    pv_alf_ctx_t ctx;             /* grows with the query's new placeholders */
    int8_t slot[PV_ALF_MAX_BIND]; /* placeholder -> ctx index, -1 unbound */
    int32_t type[PV_ALF_MAX_BIND];
    bool (*fn)(void *u, const pv_alf_ctx_t *ctx); /* false stops the enumeration */
    void *u;
    bool stop;
} s_q_t;

static bool s_used(const s_q_t *s, uint32_t e)
{
    for (uint8_t i = 0; i < s->ctx.n; i++)
        if (s->ctx.ent[i] == e)
            return true;
    return false;
}

static void s_solve(s_q_t *s, uint16_t k)
{
    if (s->stop)
        return;
    if (k == s->q->n_lits) {
        if (!s->fn(s->u, &s->ctx))
            s->stop = true;
        return;
    }
    const pv_alf_game_t *g = s->view->g;
    const pv_alf_qlit_t *l = &s->q->lits[k];
    if (l->pred < 0)
        return;
    const uint64_t *bits = l->neg ? s->view->neg : s->view->fd;
    /* candidates: atoms of a bound argument's entity, else all atoms of the predicate */
    const uint32_t *cand = g->by_pred + g->by_pred_off[l->pred];
    uint32_t n = g->by_pred_off[l->pred + 1] - g->by_pred_off[l->pred];
    for (uint8_t i = 0; i < l->n; i++)
        if (s->slot[l->ph[i]] >= 0) {
            uint32_t e = s->ctx.ent[s->slot[l->ph[i]]];
            cand = g->by_ent + g->by_ent_off[e];
            n = g->by_ent_off[e + 1] - g->by_ent_off[e];
            break;
        }
    for (uint32_t c = 0; c < n && !s->stop; c++) {
        uint32_t id = cand[c];
        const pv_alf_atom_t *a = &g->atoms[id];
        if (a->pred != l->pred || !pv_alf_bit(bits, id))
            continue;
        uint8_t saved_n = s->ctx.n;
        int8_t saved_slot[PV_ALF_MAX_BIND];
        memcpy(saved_slot, s->slot, sizeof saved_slot);
        bool ok = true;
        for (uint8_t i = 0; i < l->n && ok; i++) {
            uint8_t ph = l->ph[i];
            uint32_t e = a->args[i];
            if (s->type[ph] < 0 || !((g->ent_types[e] >> s->type[ph]) & 1u)) {
                ok = false;
            } else if (s->slot[ph] >= 0) {
                ok = s->ctx.ent[s->slot[ph]] == e;
            } else if (s_used(s, e) || s->ctx.n >= PV_ALF_MAX_BIND) {
                ok = false;
            } else {
                s->slot[ph] = (int8_t)s->ctx.n;
                s->ctx.name[s->ctx.n] = s->q->ph_name[ph];
                s->ctx.type[s->ctx.n] = s->q->ph_type[ph];
                s->ctx.ent[s->ctx.n] = e;
                s->ctx.n++;
            }
        }
        if (ok)
            s_solve(s, (uint16_t)(k + 1));
        s->ctx.n = saved_n;
        memcpy(s->slot, saved_slot, sizeof saved_slot);
    }
}

/* Enumerate solutions of `q` in `ctx`, calling fn with each extended context. */
static void s_query(const pv_alf_view_t *view, const pv_alf_query_t *q, const pv_alf_ctx_t *ctx,
                    bool (*fn)(void *, const pv_alf_ctx_t *), void *u)
{
    s_q_t s = {.view = view, .q = q, .ctx = *ctx, .fn = fn, .u = u};
    for (uint8_t p = 0; p < q->n_ph; p++) {
        s.slot[p] = -1;
        s.type[p] = q->ph_tid[p] >= 0 ? q->ph_tid[p] : pv_alf_game_type(view->g, q->ph_type[p]);
        for (int i = (int)ctx->n - 1; i >= 0; i--)
            if (strcmp(ctx->name[i], q->ph_name[p]) == 0 &&
                strcmp(ctx->type[i], q->ph_type[p]) == 0) {
                s.slot[p] = (int8_t)i;
                break;
            }
    }
    s_solve(&s, 0);
}

static bool s_found(void *u, const pv_alf_ctx_t *ctx)
{
    (void)ctx;
    *(bool *)u = true;
    return false;
}

bool pv_alf_query_any(const pv_alf_view_t *view, const pv_alf_query_t *q, const pv_alf_ctx_t *ctx)
{
    bool any = false;
    s_query(view, q, ctx, s_found, &any);
    return any;
}

/* ---------------------------------------------------------------- derivation */

typedef struct s_lk {
    const pv_alf_view_t *view;
    const pv_alf_ctx_t *ctx;
} s_lk_t;

/* EntityInfo attributes as PddlEnv sets them: name (demangled), id, definite "the",
 * indefinite "a". */
static const char *s_lookup(void *u, const char *var, const char *attr)
{
    const s_lk_t *lk = u;
    for (int i = (int)lk->ctx->n - 1; i >= 0; i--)
        if (strcmp(lk->ctx->name[i], var) == 0) {
            uint32_t e = lk->ctx->ent[i];
            const pv_alf_game_t *g = lk->view->g;
            if (strcmp(attr, "name") == 0)
                return g->ent_name[e];
            if (strcmp(attr, "id") == 0)
                return g->prob->ent_id[e];
            if (strcmp(attr, "indefinite") == 0)
                return "a";
            return "the";
        }
    return NULL;
}

static void s_text(const pv_alf_view_t *view, const char *t, pv_alf_out_t *out)
{
    const char *ov = view->g->task_override;
    const char *m = ov ? strstr(t, "UNKNOWN GOAL") : NULL;
    if (!m) {
        pv_alf_out_put(out, t, strlen(t));
        return;
    }
    /* add_task_to_grammar(): the task sentence replaces "UNKNOWN GOAL" */
    pv_alf_out_put(out, t, (size_t)(m - t));
    pv_alf_out_put(out, ov, strlen(ov));
    s_text(view, m + strlen("UNKNOWN GOAL"), out);
}

static void s_rule(const pv_alf_view_t *view, int32_t rule, const pv_alf_ctx_t *ctx,
                   pv_alf_out_t *out, int depth);
static void s_sym(const pv_alf_view_t *view, const pv_alf_sym_t *s, const pv_alf_ctx_t *ctx,
                  pv_alf_out_t *out, int depth);

typedef struct s_items {
    const pv_alf_view_t *view;
    const pv_alf_sym_t *sym;
    const pv_alf_ctx_t *list_ctx;
    pv_alf_out_t *out;
    int depth;
    uint32_t n, i; /* n: items counted in the first pass */
    bool render, sep;
} s_items_t;

static bool s_item(void *u, const pv_alf_ctx_t *ctx)
{
    s_items_t *it = u;
    if (!it->render) {
        it->n++;
        return true;
    }
    const pv_alf_grammar_t *gram = it->view->g->gram;
    if (it->sep && it->i > 0)
        s_rule(it->view, it->i + 1 == it->n ? gram->list_last : gram->list_sep, it->list_ctx,
               it->out, it->depth);
    s_sym(it->view, it->sym, ctx, it->out, it->depth);
    it->i++;
    return it->i < it->n && !it->out->truncated;
}

static void s_sym(const pv_alf_view_t *view, const pv_alf_sym_t *s, const pv_alf_ctx_t *ctx,
                  pv_alf_out_t *out, int depth)
{
    if (depth > S_MAX_DEPTH || out->truncated)
        return;
    switch (s->kind) {
    case PV_SYM_TEXT:
        s_text(view, s->text, out);
        break;
    case PV_SYM_NONTERM:
        s_rule(view, s->rule, ctx, out, depth + 1);
        break;
    case PV_SYM_EVAL: {
        s_lk_t lk = {view, ctx};
        pv_alf_expr_eval(s->expr, s_lookup, &lk, out);
        break;
    }
    case PV_SYM_COND:
        if (!s->given) {
            s_sym(view, s->inner, ctx, out, depth + 1);
        } else {
            /* no separators: every solution renders back to back */
            s_items_t it = {.view = view,
                            .sym = s->inner,
                            .list_ctx = ctx,
                            .out = out,
                            .depth = depth + 1,
                            .n = UINT32_MAX,
                            .render = true};
            s_query(view, s->given, ctx, s_item, &it);
        }
        break;
    case PV_SYM_LIST: {
        const pv_alf_sym_t *c = s->inner;
        s_items_t it = {.view = view,
                        .sym = c->inner,
                        .list_ctx = ctx,
                        .out = out,
                        .depth = depth + 1,
                        .sep = true};
        if (c->given)
            s_query(view, c->given, ctx, s_item, &it);
        else
            it.n = 1;
        if (it.n == 0) {
            s_rule(view, view->g->gram->list_empty, ctx, out, depth + 1);
        } else if (!c->given) {
            s_sym(view, c->inner, ctx, out, depth + 1);
        } else {
            it.render = true;
            s_query(view, c->given, ctx, s_item, &it);
        }
        break;
    }
    default:
        break;
    }
}

static void s_rule(const pv_alf_view_t *view, int32_t rule, const pv_alf_ctx_t *ctx,
                   pv_alf_out_t *out, int depth)
{
    const pv_alf_grammar_t *gram = view->g->gram;
    if (rule < 0 || (uint32_t)rule >= gram->n_rules || depth > S_MAX_DEPTH)
        return;
    const pv_alf_rule_t *r = &gram->rules[rule];
    for (uint16_t a = 0; a < r->n_alts; a++) {
        const pv_alf_alt_t *alt = &r->alts[a];
        if (alt->cond && !pv_alf_query_any(view, alt->cond, ctx))
            continue;
        for (uint16_t i = 0; i < alt->n_syms; i++)
            s_sym(view, &alt->syms[i], ctx, out, depth);
        return;
    }
}

void pv_alf_derive_rule(const pv_alf_view_t *view, int32_t rule, const pv_alf_ctx_t *ctx,
                        pv_alf_out_t *out)
{
    s_rule(view, rule, ctx, out, 0);
}

void pv_alf_derive_syms(const pv_alf_view_t *view, const pv_alf_sym_t *syms, uint16_t n,
                        const pv_alf_ctx_t *ctx, pv_alf_out_t *out)
{
    for (uint16_t i = 0; i < n; i++)
        s_sym(view, &syms[i], ctx, out, 0);
}
