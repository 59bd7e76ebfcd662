/* alfworld_twl.c - TextWorld twl2 logic files and their context-sensitive grammar.
 *
 * The file syntax is textworld/envs/pddl/logic/logic.ebnf: a top-level
 *     grammar :: """{ json rules }""";
 * and actions
 *     action NAME { template :: "..."; feedback :: "#rule#"; grammar :: """{ json }"""; }
 * with '#' comments between tokens. Rules from every block are merged into one dictionary in
 * document order (later names replace earlier ones), as the _ModelConverter does; lines of an
 * action's grammar block that start with '#' are dropped before JSON parsing.
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
#include <jansson.h>
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

typedef struct s_tw {
    pv_arena_t *arena;
    const pv_alf_domain_t *dom;
    const char *what;
    pv_errmsg_t *em;
    /* merged rule dictionary: names and JSON arrays (borrowed from the json roots) */
    uint32_t n, cap;
    const char **names;
    json_t **vals;
    json_t *roots[256];
    uint32_t n_roots;
} s_tw_t;

/* ---------------------------------------------------------------- twl2 tokens */

typedef struct s_tok {
    int kind; /* 0 end, 'n' name, 's' string, 'b' block, ':' "::", ';', '{', '}' */
    const char *p;
    size_t len;
    uint32_t line;
} s_tok_t;

static void s_skip_ws(const char **p, uint32_t *line)
{
    for (;;) {
        char c = **p;
        if (c == '\n') {
            (*line)++;
            (*p)++;
        } else if (c == '#') {
            while (**p && **p != '\n')
                (*p)++;
        } else if (c && isspace((unsigned char)c)) {
            (*p)++;
        } else {
            return;
        }
    }
}

static pv_err_t s_next(s_tw_t *tw, const char **p, uint32_t *line, s_tok_t *t)
{
    s_skip_ws(p, line);
    const char *s = *p;
    t->p = s;
    t->line = *line;
    t->len = 0;
    if (!*s) {
        t->kind = 0;
        return PV_OK;
    }
    if (s[0] == ':' && s[1] == ':') {
        t->kind = ':';
        *p += 2;
        return PV_OK;
    }
    if (*s == ';' || *s == '{' || *s == '}') {
        t->kind = *s;
        (*p)++;
        return PV_OK;
    }
    if (strncmp(s, "\"\"\"", 3) == 0) {
        const char *e = strstr(s + 3, "\"\"\"");
        if (!e)
            return pv_errf(tw->em, PV_ERR_PARSE, "%s:%u: unterminated \"\"\" block", tw->what,
                           *line);
        for (const char *q = s; q < e; q++)
            *line += *q == '\n';
        t->kind = 'b';
        t->p = s + 3;
        t->len = (size_t)(e - s - 3);
        *p = e + 3;
        return PV_OK;
    }
    if (*s == '"') {
        const char *e = strchr(s + 1, '"');
        if (!e)
            return pv_errf(tw->em, PV_ERR_PARSE, "%s:%u: unterminated string", tw->what, *line);
        for (const char *q = s; q < e; q++)
            *line += *q == '\n';
        t->kind = 's';
        t->p = s + 1;
        t->len = (size_t)(e - s - 1);
        *p = e + 1;
        return PV_OK;
    }
    if (isalnum((unsigned char)*s) || *s == '_' || *s == '/' || *s == '-') {
        while (isalnum((unsigned char)**p) || **p == '_' || **p == '/' || **p == '-')
            (*p)++;
        t->kind = 'n';
        t->len = (size_t)(*p - s);
        return PV_OK;
    }
    return pv_errf(tw->em, PV_ERR_PARSE, "%s:%u: unexpected character '%c'", tw->what, *line, *s);
}

static pv_err_t s_expect(s_tw_t *tw, const char **p, uint32_t *line, int kind, s_tok_t *t,
                         const char *what_expected)
{
    pv_err_t rc = s_next(tw, p, line, t);
    if (rc == PV_OK && t->kind != kind)
        rc = pv_errf(tw->em, PV_ERR_PARSE, "%s:%u: expected %s", tw->what, t->line, what_expected);
    return rc;
}

/* Merge one JSON grammar block into the dictionary. */
static pv_err_t s_merge_json(s_tw_t *tw, const char *text, size_t len, bool drop_comments,
                             uint32_t line)
{
    char *buf = pv_arena_strndup(tw->arena, text, len);
    if (!buf)
        return PV_ERR_NOMEM;
    if (drop_comments) { /* blank out lines whose first non-blank character is '#' */
        for (char *q = buf; *q;) {
            while (*q == ' ' || *q == '\t')
                q++;
            if (*q == '#')
                while (*q && *q != '\n')
                    *q++ = ' ';
            while (*q && *q != '\n')
                q++;
            if (*q)
                q++;
        }
    }
    json_error_t jerr;
    json_t *root = json_loads(buf, 0, &jerr);
    if (!root)
        return pv_errf(tw->em, PV_ERR_PARSE, "%s:%u: grammar JSON: %s (block line %d)", tw->what,
                       line, jerr.text, jerr.line);
    if (!json_is_object(root) || tw->n_roots >= 256) {
        json_decref(root);
        return pv_errf(tw->em, PV_ERR_PARSE, "%s:%u: a grammar block must be a JSON object",
                       tw->what, line);
    }
    tw->roots[tw->n_roots++] = root;
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val)
    {
        uint32_t i = 0;
        while (i < tw->n && strcmp(tw->names[i], key) != 0)
            i++;
        if (i == tw->n) {
            if (tw->n == tw->cap) {
                uint32_t cap = tw->cap ? 2 * tw->cap : 64;
                const char **nn = pv_arena_alloc(tw->arena, cap * sizeof *nn, 0);
                json_t **nv = pv_arena_alloc(tw->arena, cap * sizeof *nv, 0);
                if (!nn || !nv)
                    return PV_ERR_NOMEM;
                if (tw->n) {
                    memcpy(nn, tw->names, tw->n * sizeof *nn);
                    memcpy(nv, tw->vals, tw->n * sizeof *nv);
                }
                tw->names = nn;
                tw->vals = nv;
                tw->cap = cap;
            }
            tw->names[tw->n] = pv_alf_strdup(tw->arena, key);
            if (!tw->names[tw->n])
                return PV_ERR_NOMEM;
            tw->n++;
        }
        tw->vals[i] = val;
    }
    return PV_OK;
}

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
static pv_err_t s_query(s_tw_t *tw, const char *src, size_t len, pv_alf_query_t **out)
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
                ty = pv_alf_strdup(tw->arena, ph);
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

static pv_err_t s_expr(s_tw_t *tw, const char *src, size_t len, pv_alf_expr_t **out)
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

static pv_alf_sym_t *s_sym_new(s_tw_t *tw, uint8_t kind)
{
    pv_alf_sym_t *s = pv_arena_calloc(tw->arena, 1, sizeof *s);
    if (s) {
        s->kind = kind;
        s->rule = -1;
    }
    return s;
}

/* #tag#: tag = [\w()/!<>\-\s,.]+ */
static const char *s_nonterm(s_tw_t *tw, const char *p, pv_alf_sym_t **out)
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
static const char *s_cond(s_tw_t *tw, const char *p, pv_alf_sym_t **out, pv_err_t *rc)
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
        if ((*rc = s_query(tw, s, (size_t)(q - s), &c->given)) != PV_OK)
            return NULL;
        p = q;
    }
    if (*p != '}')
        return NULL;
    *out = c;
    return p + 1;
}

static pv_err_t s_push_sym(s_tw_t *tw, s_syms_t *v, const pv_alf_sym_t *s)
{
    if (v->n == UINT16_MAX ||
        !pv_alf_arena_grow(tw->arena, (void **)&v->v, v->n, &v->cap, sizeof *v->v))
        return PV_ERR_NOMEM;
    v->v[v->n++] = *s;
    return PV_OK;
}

static pv_err_t s_rhs(s_tw_t *tw, const char *src, pv_alf_sym_t **out, uint16_t *n_out)
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

/* ---------------------------------------------------------------- resolution */

static int32_t s_rule_index(const pv_alf_grammar_t *g, const char *name)
{
    for (uint32_t i = 0; i < g->n_rules; i++)
        if (strcmp(g->rules[i].name, name) == 0)
            return (int32_t)i;
    return -1;
}

static pv_err_t s_resolve(s_tw_t *tw, const pv_alf_grammar_t *g, pv_alf_sym_t *syms, uint16_t n,
                          const char *where)
{
    for (uint16_t i = 0; i < n; i++) {
        pv_alf_sym_t *s = &syms[i];
        for (pv_alf_sym_t *t = s; t; t = t->inner) {
            if (t->kind == PV_SYM_NONTERM) {
                t->rule = s_rule_index(g, t->text);
                if (t->rule < 0)
                    return pv_errf(tw->em, PV_ERR_DATA, "%s: %s uses unknown grammar symbol '#%s#'",
                                   tw->what, where, t->text);
            }
        }
    }
    return PV_OK;
}

static pv_err_t s_build_rules(s_tw_t *tw, pv_alf_grammar_t *g)
{
    g->n_rules = tw->n;
    g->rules = pv_arena_calloc(tw->arena, tw->n ? tw->n : 1, sizeof *g->rules);
    if (!g->rules)
        return PV_ERR_NOMEM;
    for (uint32_t i = 0; i < tw->n; i++) {
        pv_alf_rule_t *r = &g->rules[i];
        r->name = tw->names[i];
        json_t *arr = tw->vals[i];
        if (!json_is_array(arr))
            return pv_errf(tw->em, PV_ERR_DATA, "%s: grammar rule '%s' must be a list", tw->what,
                           r->name);
        r->n_alts = (uint16_t)json_array_size(arr);
        r->alts = pv_arena_calloc(tw->arena, r->n_alts ? r->n_alts : 1, sizeof *r->alts);
        if (!r->alts)
            return PV_ERR_NOMEM;
        for (uint16_t k = 0; k < r->n_alts; k++) {
            json_t *alt = json_array_get(arr, k);
            json_t *rhs = json_object_get(alt, "rhs");
            json_t *cond = json_object_get(alt, "condition");
            if (!json_is_string(rhs))
                return pv_errf(tw->em, PV_ERR_DATA,
                               "%s: grammar rule '%s' alternative %u has no "
                               "\"rhs\" string",
                               tw->what, r->name, k + 1);
            pv_err_t rc = s_rhs(tw, json_string_value(rhs), &r->alts[k].syms, &r->alts[k].n_syms);
            if (rc == PV_OK && json_is_string(cond) && json_string_length(cond) > 0)
                rc = s_query(tw, json_string_value(cond), json_string_length(cond),
                             &r->alts[k].cond);
            if (rc != PV_OK)
                return rc;
        }
    }
    for (uint32_t i = 0; i < g->n_rules; i++)
        for (uint16_t k = 0; k < g->rules[i].n_alts; k++) {
            pv_err_t rc = s_resolve(tw, g, g->rules[i].alts[k].syms, g->rules[i].alts[k].n_syms,
                                    g->rules[i].name);
            if (rc != PV_OK)
                return rc;
        }
    return PV_OK;
}

/* The goal sentence: the text of rule "task" without "Your task is to" and the colon. */
static const char *s_task_text(pv_arena_t *a, const pv_alf_grammar_t *g)
{
    int32_t r = s_rule_index(g, "task");
    if (r < 0 || g->rules[r].n_alts == 0)
        return "";
    const pv_alf_alt_t *alt = &g->rules[r].alts[0];
    pv_alf_out_t out = {.buf = pv_arena_alloc(a, 1024, 1), .cap = 1024};
    if (!out.buf)
        return "";
    out.buf[0] = 0;
    for (uint16_t i = 0; i < alt->n_syms; i++)
        if (alt->syms[i].kind == PV_SYM_TEXT)
            pv_alf_out_put(&out, alt->syms[i].text, strlen(alt->syms[i].text));
    const char *s = out.buf;
    const char *pre = "Your task is to";
    if (strncmp(s, pre, strlen(pre)) == 0) {
        s += strlen(pre);
        if (*s == ':')
            s++;
        while (*s == ' ')
            s++;
    }
    return s;
}

static void s_free_roots(s_tw_t *tw)
{
    for (uint32_t i = 0; i < tw->n_roots; i++)
        json_decref(tw->roots[i]);
    tw->n_roots = 0;
}

pv_err_t pv_alf_grammar_parse(pv_arena_t *arena, const pv_alf_domain_t *dom, const char *text,
                              const char *what, pv_alf_grammar_t **out, pv_errmsg_t *em)
{
    s_tw_t tw = {.arena = arena, .dom = dom, .what = what, .em = em};
    pv_alf_grammar_t *g = pv_arena_calloc(arena, 1, sizeof *g);
    /* actions are collected first; their count is bounded by the text size */
    uint32_t cap_act = 64, n_act = 0;
    pv_alf_gaction_t *acts = pv_arena_calloc(arena, cap_act, sizeof *acts);
    const char **tmpl = pv_arena_calloc(arena, cap_act, sizeof *tmpl);
    const char **fb = pv_arena_calloc(arena, cap_act, sizeof *fb);
    if (!g || !acts || !tmpl || !fb)
        return PV_ERR_NOMEM;
    const char *p = text ? text : "";
    uint32_t line = 1;
    pv_err_t rc = PV_OK;
    for (;;) {
        s_tok_t t;
        if ((rc = s_next(&tw, &p, &line, &t)) != PV_OK)
            goto out;
        if (t.kind == 0)
            break;
        if (t.kind == 'n' && t.len == 7 && strncmp(t.p, "grammar", 7) == 0) {
            s_tok_t b;
            if ((rc = s_expect(&tw, &p, &line, ':', &t, "'::'")) != PV_OK ||
                (rc = s_expect(&tw, &p, &line, 'b', &b, "a \"\"\" block")) != PV_OK ||
                (rc = s_expect(&tw, &p, &line, ';', &t, "';'")) != PV_OK ||
                (rc = s_merge_json(&tw, b.p, b.len, false, b.line)) != PV_OK)
                goto out;
        } else if (t.kind == 'n' && t.len == 6 && strncmp(t.p, "action", 6) == 0) {
            s_tok_t name;
            if ((rc = s_expect(&tw, &p, &line, 'n', &name, "an action name")) != PV_OK ||
                (rc = s_expect(&tw, &p, &line, '{', &t, "'{'")) != PV_OK)
                goto out;
            if (n_act >= cap_act) {
                rc = pv_errf(em, PV_ERR_LIMIT, "%s:%u: more than %u actions", what, name.line,
                             cap_act);
                goto out;
            }
            char *nm = pv_arena_strndup(arena, name.p, name.len);
            if (!nm) {
                rc = PV_ERR_NOMEM;
                goto out;
            }
            for (char *c = nm; *c; c++)
                *c = (char)tolower((unsigned char)*c);
            acts[n_act].name = nm;
            for (;;) {
                if ((rc = s_next(&tw, &p, &line, &t)) != PV_OK)
                    goto out;
                if (t.kind == '}')
                    break;
                s_tok_t v;
                if (t.kind != 'n' || (rc = s_expect(&tw, &p, &line, ':', &v, "'::'")) != PV_OK ||
                    (rc = s_next(&tw, &p, &line, &v)) != PV_OK) {
                    if (rc == PV_OK)
                        rc = pv_errf(em, PV_ERR_PARSE, "%s:%u: expected a field of action '%s'",
                                     what, t.line, nm);
                    goto out;
                }
                bool is_t = t.len == 8 && strncmp(t.p, "template", 8) == 0;
                bool is_f = t.len == 8 && strncmp(t.p, "feedback", 8) == 0;
                bool is_g = t.len == 7 && strncmp(t.p, "grammar", 7) == 0;
                bool is_p = t.len == 4 && strncmp(t.p, "pddl", 4) == 0;
                if ((is_t || is_f) && v.kind == 's') {
                    const char *s = pv_arena_strndup(arena, v.p, v.len);
                    if (!s) {
                        rc = PV_ERR_NOMEM;
                        goto out;
                    }
                    (is_t ? tmpl : fb)[n_act] = s;
                } else if (is_g && v.kind == 'b') {
                    if ((rc = s_merge_json(&tw, v.p, v.len, true, v.line)) != PV_OK)
                        goto out;
                } else if (!(is_p && v.kind == 'b')) {
                    rc = pv_errf(em, PV_ERR_PARSE, "%s:%u: bad field '%.*s' in action '%s'", what,
                                 t.line, (int)t.len, t.p, nm);
                    goto out;
                }
                if ((rc = s_expect(&tw, &p, &line, ';', &v, "';'")) != PV_OK)
                    goto out;
            }
            n_act++;
        } else {
            rc = pv_errf(em, PV_ERR_PARSE, "%s:%u: expected 'grammar' or 'action'", what, t.line);
            goto out;
        }
    }
    if ((rc = s_build_rules(&tw, g)) != PV_OK)
        goto out;
    g->n_actions = n_act;
    g->actions = acts;
    for (uint32_t i = 0; i < n_act; i++) {
        if (!tmpl[i] || !fb[i]) {
            rc = pv_errf(em, PV_ERR_DATA, "%s: action '%s' needs a template and a feedback", what,
                         acts[i].name);
            goto out;
        }
        if ((rc = s_rhs(&tw, tmpl[i], &acts[i].tmpl, &acts[i].n_tmpl)) != PV_OK ||
            (rc = s_rhs(&tw, fb[i], &acts[i].fb, &acts[i].n_fb)) != PV_OK ||
            (rc = s_resolve(&tw, g, acts[i].tmpl, acts[i].n_tmpl, acts[i].name)) != PV_OK ||
            (rc = s_resolve(&tw, g, acts[i].fb, acts[i].n_fb, acts[i].name)) != PV_OK)
            goto out;
    }
    g->intro = s_rule_index(g, "intro");
    if (g->intro < 0) {
        rc = pv_errf(em, PV_ERR_DATA, "%s: the grammar has no \"intro\" rule", what);
        goto out;
    }
    g->list_empty = s_rule_index(g, "list_empty");
    g->list_sep = s_rule_index(g, "list_separator");
    g->list_last = s_rule_index(g, "list_last_separator");
    g->task = s_task_text(arena, g);
    *out = g;
out:
    s_free_roots(&tw);
    return rc;
}
