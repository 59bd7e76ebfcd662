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
 * Right-hand sides and queries are read by alfworld_csg.c.
 */
#include <ctype.h>
#include <jansson.h>
#include <string.h>

#include "common/env/alfworld_int.h"

typedef struct s_tw {
    pv_alf_pctx_t pc; /* for the right-hand side and query readers */
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
            tw->names[tw->n] = pv_arena_strdup(tw->arena, key);
            if (!tw->names[tw->n])
                return PV_ERR_NOMEM;
            tw->n++;
        }
        tw->vals[i] = val;
    }
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
            pv_err_t rc = pv_alf_csg_rhs(&tw->pc, json_string_value(rhs), &r->alts[k].syms,
                                         &r->alts[k].n_syms);
            if (rc == PV_OK && json_is_string(cond) && json_string_length(cond) > 0)
                rc = pv_alf_csg_query(&tw->pc, json_string_value(cond), json_string_length(cond),
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
    s_tw_t tw = {.pc = {arena, dom, what, em}, .arena = arena, .dom = dom, .what = what, .em = em};
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
        if ((rc = pv_alf_csg_rhs(&tw.pc, tmpl[i], &acts[i].tmpl, &acts[i].n_tmpl)) != PV_OK ||
            (rc = pv_alf_csg_rhs(&tw.pc, fb[i], &acts[i].fb, &acts[i].n_fb)) != PV_OK ||
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
