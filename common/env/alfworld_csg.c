/* alfworld_csg.c - right-hand sides, expressions and queries of TextWorld's context-sensitive
 * grammar.
 *
 * A rule's right-hand side follows textworld/envs/pddl/textgen/textgen.ebnf:
 *     [ {expr | query} ]   list       {expr | query}   conditional
 *     #name#               nonterminal  text             terminal
 * where expr is a Python expression over the context (only `x.name`, `x.id`, `x.indefinite`,
 * `x.definite`, quoted strings, `+` and `or` occur in ALFWorld grammars) and a query is a
 * conjunction "pred(ph:type, ...) & ...". Like the tatsu parser, text the grammar cannot read
 * ends the right-hand side (the stray '}' of ALFWorld's "overview(o, r)" rule).
 */
#include <ctype.h>
#include <string.h>

#include "common/env/alfworld_int.h"

/* An expression: alternatives joined by "or", each a concatenation of terms. */
typedef struct s_term {
    const char *var; /* NULL: literal */
    const char *attr_or_text;
} s_term_t;

typedef struct s_cat {
    uint8_t n;
    s_term_t terms[8];
} s_cat_t;

struct pv_alf_expr {
    uint8_t n;
    s_cat_t alts[4];
};

/* ---------------------------------------------------------------- queries and expressions */

static char *s_trim(pv_arena_t *a, const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return pv_arena_strndup(a, s, n);
}

/* "pred(ph:type, ...) & pred2(...)"; `not_pred` reads TextWorld's negated facts. */
pv_err_t pv_alf_csg_query(const pv_alf_pctx_t *tw, const char *src, size_t len,
                          pv_alf_query_t **out)
{
    pv_alf_query_t *q = pv_arena_calloc(tw->arena, 1, sizeof *q);
    uint16_t cap = 1;
    for (size_t i = 0; i < len; i++)
        cap += src[i] == '&';
    q->lits = pv_arena_calloc(tw->arena, cap, sizeof *q->lits);
    if (!q || !q->lits)
        return PV_ERR_NOMEM;
    const char *p = src, *end = src + len;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *e = amp ? amp : end;
        const char *lp = memchr(p, '(', (size_t)(e - p));
        const char *rp = lp ? memchr(lp, ')', (size_t)(e - lp)) : NULL;
        if (!lp || !rp)
            return pv_errf(tw->em, PV_ERR_PARSE, "%s: bad query '%.*s'", tw->what, (int)len, src);
        char *name = s_trim(tw->arena, p, (size_t)(lp - p));
        if (!name)
            return PV_ERR_NOMEM;
        pv_alf_qlit_t *l = &q->lits[q->n_lits++];
        if (strncmp(name, "not_", 4) == 0) {
            l->neg = 1;
            name += 4;
        }
        l->pred = pv_alf_domain_pred(tw->dom, name);
        const char *a = lp + 1;
        while (a < rp) {
            const char *c = memchr(a, ',', (size_t)(rp - a));
            const char *ae = c ? c : rp;
            const char *colon = memchr(a, ':', (size_t)(ae - a));
            char *ph = s_trim(tw->arena, a, (size_t)((colon ? colon : ae) - a));
            char *ty = colon ? s_trim(tw->arena, colon + 1, (size_t)(ae - colon - 1)) : NULL;
            if (!ph || (colon && !ty))
                return PV_ERR_NOMEM;
            if (!ty) { /* Placeholder(name): type = name without trailing apostrophes */
                ty = pv_arena_strdup(tw->arena, ph);
                if (!ty)
                    return PV_ERR_NOMEM;
                for (size_t k = strlen(ty); k && ty[k - 1] == '\''; k--)
                    ty[k - 1] = 0;
            }
            if (l->n >= PV_ALF_MAX_ARITY)
                return pv_errf(tw->em, PV_ERR_PARSE, "%s: too many arguments in '%s'", tw->what,
                               name);
            uint8_t k = 0;
            while (k < q->n_ph && strcmp(q->ph_name[k], ph) != 0)
                k++;
            if (k == q->n_ph) {
                if (q->n_ph >= PV_ALF_MAX_BIND)
                    return pv_errf(tw->em, PV_ERR_PARSE, "%s: too many placeholders in a query",
                                   tw->what);
                q->ph_name[k] = ph;
                q->ph_type[k] = ty;
                q->ph_tid[k] = (int16_t)pv_alf_domain_type(tw->dom, ty);
                q->n_ph++;
            }
            l->ph[l->n++] = k;
            a = c ? c + 1 : rp;
        }
        if (l->pred >= 0 && l->n != tw->dom->pred_arity[l->pred])
            l->pred = -1; /* a signature no fact has: never true */
        p = amp ? amp + 1 : end;
    }
    *out = q;
    return PV_OK;
}

static pv_err_t s_expr(const pv_alf_pctx_t *tw, const char *src, size_t len, pv_alf_expr_t **out)
{
    pv_alf_expr_t *x = pv_arena_calloc(tw->arena, 1, sizeof *x);
    if (!x)
        return PV_ERR_NOMEM;
    const char *p = src, *end = src + len;
    s_cat_t *cat = &x->alts[x->n++];
    while (p < end) {
        while (p < end && isspace((unsigned char)*p))
            p++;
        if (p >= end)
            break;
        if (*p == '+') {
            p++;
            continue;
        }
        if (*p == '\'' || *p == '"') {
            const char *e = memchr(p + 1, *p, (size_t)(end - p - 1));
            if (!e)
                return pv_errf(tw->em, PV_ERR_PARSE, "%s: unterminated string in '{%.*s}'",
                               tw->what, (int)len, src);
            if (cat->n >= 8)
                return pv_errf(tw->em, PV_ERR_PARSE, "%s: expression too long", tw->what);
            s_term_t *t = &cat->terms[cat->n++];
            t->var = NULL;
            t->attr_or_text = pv_arena_strndup(tw->arena, p + 1, (size_t)(e - p - 1));
            p = e + 1;
            continue;
        }
        const char *s = p;
        while (p < end && (isalnum((unsigned char)*p) || *p == '_' || *p == '.'))
            p++;
        if (p == s)
            return pv_errf(tw->em, PV_ERR_UNSUPPORTED, "%s: unsupported expression '{%.*s}'",
                           tw->what, (int)len, src);
        if ((size_t)(p - s) == 2 && strncmp(s, "or", 2) == 0) {
            if (x->n >= 4)
                return pv_errf(tw->em, PV_ERR_PARSE, "%s: expression too long", tw->what);
            cat = &x->alts[x->n++];
            continue;
        }
        if (cat->n >= 8)
            return pv_errf(tw->em, PV_ERR_PARSE, "%s: expression too long", tw->what);
        s_term_t *t = &cat->terms[cat->n++];
        const char *dot = memchr(s, '.', (size_t)(p - s));
        t->var = pv_arena_strndup(tw->arena, s, (size_t)((dot ? dot : p) - s));
        t->attr_or_text =
            dot ? pv_arena_strndup(tw->arena, dot + 1, (size_t)(p - dot - 1)) : "name";
        if (!t->var || !t->attr_or_text)
            return PV_ERR_NOMEM;
        if (strcmp(t->attr_or_text, "name") && strcmp(t->attr_or_text, "id") &&
            strcmp(t->attr_or_text, "indefinite") && strcmp(t->attr_or_text, "definite"))
            return pv_errf(tw->em, PV_ERR_UNSUPPORTED, "%s: unsupported attribute '%s' in '{%.*s}'",
                           tw->what, t->attr_or_text, (int)len, src);
    }
    *out = x;
    return PV_OK;
}

/* Evaluate an expression: the first alternative whose text is non-empty (Python's `or`). */
void pv_alf_expr_eval(const pv_alf_expr_t *x,
                      const char *(*lookup)(void *, const char *, const char *), void *u,
                      pv_alf_out_t *out)
{
    for (uint8_t a = 0; a < x->n; a++) {
        size_t mark = out->len;
        const s_cat_t *c = &x->alts[a];
        for (uint8_t i = 0; i < c->n; i++) {
            const char *s = c->terms[i].var ? lookup(u, c->terms[i].var, c->terms[i].attr_or_text)
                                            : c->terms[i].attr_or_text;
            if (s)
                pv_alf_out_put(out, s, strlen(s));
        }
        if (out->len > mark || a + 1 == x->n)
            return;
    }
}

static uint32_t s_name_bit(const char *v, const char *const *names, uint32_t n_names)
{
    for (uint32_t i = 0; i < n_names && i < 32; i++)
        if (strcmp(names[i], v) == 0)
            return 1u << i;
    return 0;
}

uint32_t pv_alf_syms_vars(const pv_alf_sym_t *syms, uint16_t n, const char *const *names,
                          uint32_t n_names)
{
    uint32_t m = 0;
    for (uint16_t i = 0; i < n; i++)
        for (const pv_alf_sym_t *t = &syms[i]; t; t = t->inner) {
            if (t->expr)
                for (uint8_t a = 0; a < t->expr->n; a++)
                    for (uint8_t k = 0; k < t->expr->alts[a].n; k++)
                        if (t->expr->alts[a].terms[k].var)
                            m |= s_name_bit(t->expr->alts[a].terms[k].var, names, n_names);
            if (t->given)
                for (uint8_t p = 0; p < t->given->n_ph; p++)
                    m |= s_name_bit(t->given->ph_name[p], names, n_names);
            if (t->kind == PV_SYM_NONTERM)
                m = ~0u; /* a rule may read anything */
        }
    return m;
}

/* ---------------------------------------------------------------- right-hand sides */

static bool s_in(char c, const char *set)
{
    return c && strchr(set, c) != NULL;
}

typedef struct s_syms {
    pv_alf_sym_t *v;
    uint32_t n, cap;
} s_syms_t;

static pv_alf_sym_t *s_sym_new(const pv_alf_pctx_t *tw, uint8_t kind)
{
    pv_alf_sym_t *s = pv_arena_calloc(tw->arena, 1, sizeof *s);
    if (s) {
        s->kind = kind;
        s->rule = -1;
    }
    return s;
}

/* #tag#: tag = [\w()/!<>\-\s,.]+ */
static const char *s_nonterm(const pv_alf_pctx_t *tw, const char *p, pv_alf_sym_t **out)
{
    const char *s = ++p;
    while (*p && (isalnum((unsigned char)*p) || s_in(*p, "_()/!<>- \t\n\r,.")))
        p++;
    if (*p != '#' || p == s)
        return NULL;
    pv_alf_sym_t *sym = s_sym_new(tw, PV_SYM_NONTERM);
    if (!sym || !(sym->text = pv_arena_strndup(tw->arena, s, (size_t)(p - s))))
        return NULL;
    *out = sym;
    return p + 1;
}

/* {expr | given} */
static const char *s_cond(const pv_alf_pctx_t *tw, const char *p, pv_alf_sym_t **out, pv_err_t *rc)
{
    p++;
    while (*p == '\t')
        p++;
    pv_alf_sym_t *inner = NULL;
    if (*p == '#') {
        p = s_nonterm(tw, p, &inner);
        if (!p)
            return NULL;
    } else {
        const char *s = p;
        while (*p && !s_in(*p, "|[]{}\n<>"))
            p++;
        if (p == s)
            return NULL;
        inner = s_sym_new(tw, PV_SYM_EVAL);
        if (!inner)
            return NULL;
        inner->text = pv_arena_strndup(tw->arena, s, (size_t)(p - s));
        if ((*rc = s_expr(tw, s, (size_t)(p - s), &inner->expr)) != PV_OK)
            return NULL;
    }
    pv_alf_sym_t *c = s_sym_new(tw, PV_SYM_COND);
    if (!c)
        return NULL;
    c->inner = inner;
    const char *q = p;
    while (isspace((unsigned char)*q))
        q++;
    if (*q == '|') {
        q++;
        while (isspace((unsigned char)*q))
            q++;
        const char *s = q;
        while (*q && !s_in(*q, ";|{}\n[]#"))
            q++;
        if (q == s)
            return NULL;
        if ((*rc = pv_alf_csg_query(tw, s, (size_t)(q - s), &c->given)) != PV_OK)
            return NULL;
        p = q;
    }
    if (*p != '}')
        return NULL;
    *out = c;
    return p + 1;
}

static pv_err_t s_push_sym(const pv_alf_pctx_t *tw, s_syms_t *v, const pv_alf_sym_t *s)
{
    if (v->n == UINT16_MAX ||
        !pv_alf_arena_grow(tw->arena, (void **)&v->v, v->n, &v->cap, sizeof *v->v))
        return PV_ERR_NOMEM;
    v->v[v->n++] = *s;
    return PV_OK;
}

pv_err_t pv_alf_csg_rhs(const pv_alf_pctx_t *tw, const char *src, pv_alf_sym_t **out,
                        uint16_t *n_out)
{
    s_syms_t v = {0};
    const char *p = src;
    while (*p) {
        while (*p == '\t')
            p++;
        if (!*p)
            break;
        pv_alf_sym_t *sym = NULL;
        pv_err_t rc = PV_OK;
        const char *next = NULL;
        if (*p == '[') {
            pv_alf_sym_t *c = NULL;
            const char *q = p + 1;
            if (*q == '{')
                q = s_cond(tw, q, &c, &rc);
            else
                q = NULL;
            if (q && *q == ']') {
                sym = s_sym_new(tw, PV_SYM_LIST);
                if (sym)
                    sym->inner = c;
                next = q + 1;
            }
        } else if (*p == '{') {
            next = s_cond(tw, p, &sym, &rc);
        } else if (*p == '#') {
            next = s_nonterm(tw, p, &sym);
        } else if (*p == '"') {
            const char *e = p + 1;
            while (*e && !s_in(*e, ";|\"<>[]#{}"))
                e++;
            if (*e == '"') {
                sym = s_sym_new(tw, PV_SYM_TEXT);
                if (sym)
                    sym->text = pv_arena_strndup(tw->arena, p + 1, (size_t)(e - p - 1));
                next = e + 1;
            }
        } else {
            const char *e = p;
            while (*e && !s_in(*e, ";|\"<>[]#{}"))
                e++;
            if (e > p) {
                sym = s_sym_new(tw, PV_SYM_TEXT);
                if (sym)
                    sym->text = pv_arena_strndup(tw->arena, p, (size_t)(e - p));
                next = e;
            }
        }
        if (rc != PV_OK)
            return rc;
        if (!next || !sym)
            break; /* the parser stops where the grammar cannot continue */
        if ((rc = s_push_sym(tw, &v, sym)) != PV_OK)
            return rc;
        p = next;
    }
    *out = v.v;
    *n_out = (uint16_t)v.n;
    return PV_OK;
}
