/* lm_prompt.c - the language model's prompts and reply parsing; see lm_prompt.h. */
#include "common/policy/lm_prompt.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/env/searchqa.h"
#include "common/env/text_util.h"
#include "common/vec.h"

/* The instructions, in the words of verl-agent's templates (shortened: a model trained here
 * reads them at the start of every conversation). */
static const char s_sys_alfworld[] =
    "You are an expert agent operating in the ALFRED Embodied Environment. Reply to each "
    "observation with one admissible action.";
static const char s_sys_webshop[] =
    "You are an expert autonomous agent operating in the WebShop e-commerce environment. Reply "
    "to each observation with one admissible action, search[keywords] or click[value].";

static const char *const s_env_names[] = {"alfworld", "webshop", "searchqa"};

static const char s_adm_head[] = "\nYour admissible actions of the current situation are: [";
static const char s_task_head[] = "Your task is to: ";
static const char s_prior_head[] = "\nPrior to this step, you have already taken ";

const char *const *pv_lmp_fixed_texts(pv_lmp_env_t env, size_t *n)
{
    static const char *const fixed[3][8] = {
        {s_sys_alfworld, "system\n", "user\n", "assistant\n", s_adm_head, s_task_head, s_prior_head,
         " step(s).\n"},
        {s_sys_webshop, "system\n", "user\n", "assistant\n", s_adm_head, s_task_head, s_prior_head,
         " step(s).\n"},
        {"system\n", "user\n", "assistant\n", s_adm_head, s_task_head, s_prior_head, " step(s).\n",
         "\n"},
    };
    *n = 8;
    return fixed[(unsigned)env < 3 ? env : 0];
}

pv_err_t pv_lmp_env_parse(const char *name, pv_lmp_env_t *out)
{
    if (!name || !*name) {
        *out = PV_LMP_ALFWORLD;
        return PV_OK;
    }
    for (int i = 0; i < 3; i++)
        if (strcmp(name, s_env_names[i]) == 0) {
            *out = (pv_lmp_env_t)i;
            return PV_OK;
        }
    return PV_ERR_INVAL;
}

const char *pv_lmp_env_name(pv_lmp_env_t env)
{
    return (unsigned)env < 3 ? s_env_names[env] : "?";
}

pv_err_t pv_lmp_init(pv_lmp_t *lmp, pv_lmp_env_t env, uint32_t window, bool admissible,
                     size_t budget, const pv_tokenizer_t *tok, pv_errmsg_t *em)
{
    memset(lmp, 0, sizeof *lmp);
    if (window == 0)
        return pv_errf(em, PV_ERR_INVAL, "prompt window must be >= 1");
    lmp->env = env;
    lmp->window = window;
    lmp->admissible = admissible;
    lmp->budget = budget;
    lmp->system = env == PV_LMP_ALFWORLD  ? s_sys_alfworld
                  : env == PV_LMP_WEBSHOP ? s_sys_webshop
                                          : NULL; /* Search-R1 has none: its prompt is the user's */
    if (pv_tokenizer_token_to_id(tok, "<|im_start|>", &lmp->im_start) != PV_OK)
        return pv_errf(em, PV_ERR_NOTFOUND, "the tokenizer has no <|im_start|> (ChatML) token");
    if (pv_tokenizer_token_to_id(tok, "<|im_end|>", &lmp->im_end) != PV_OK)
        return pv_errf(em, PV_ERR_NOTFOUND, "the tokenizer has no <|im_end|> (ChatML) token");
    return PV_OK;
}

size_t pv_lmp_window_start(const pv_lmp_t *lmp, size_t t)
{
    size_t W = lmp->window;
    return t < 2 * W ? 0 : (t / W - 1) * W;
}

pv_err_t pv_lmp_push(pv_lmp_ids_t *out, uint32_t id)
{
    if (pv_grow((void **)&out->ids, &out->cap, out->n + 1, sizeof *out->ids) != PV_OK)
        return PV_ERR_NOMEM;
    out->ids[out->n++] = id;
    return PV_OK;
}

pv_err_t pv_lmp_encode(pv_tokenizer_t *tok, const char *text, size_t len, pv_lmp_ids_t *out)
{
    if (len == 0)
        return PV_OK;
    size_t need = pv_tokenizer_encode_bound(tok, len), n = 0;
    if (pv_grow((void **)&out->ids, &out->cap, out->n + need, sizeof *out->ids) != PV_OK)
        return PV_ERR_NOMEM;
    pv_err_t rc = pv_tokenizer_encode(tok, text, len, out->ids + out->n, out->cap - out->n, &n);
    if (rc != PV_OK)
        return rc == PV_ERR_LIMIT ? PV_ERR_INTERNAL : rc; /* the bound always holds */
    out->n += n;
    return PV_OK;
}

static pv_err_t s_str(pv_tokenizer_t *tok, const char *s, pv_lmp_ids_t *out)
{
    return pv_lmp_encode(tok, s, strlen(s), out);
}

/* <|im_start|>role\n */
static pv_err_t s_open(const pv_lmp_t *lmp, pv_tokenizer_t *tok, const char *role,
                       pv_lmp_ids_t *out)
{
    pv_err_t rc = pv_lmp_push(out, lmp->im_start);
    return rc ? rc : s_str(tok, role, out);
}

/* <|im_end|>\n */
static pv_err_t s_close(const pv_lmp_t *lmp, pv_tokenizer_t *tok, pv_lmp_ids_t *out)
{
    pv_err_t rc = pv_lmp_push(out, lmp->im_end);
    return rc ? rc : s_str(tok, "\n", out);
}

/* The first turn's text of a conversation that starts at step s0 (o_s0 = obs). */
static pv_err_t s_first_turn(const pv_lmp_t *lmp, pv_tokenizer_t *tok, const char *task,
                             const char *obs, size_t s0, pv_lmp_ids_t *out)
{
    pv_err_t rc = PV_OK;
    if (lmp->env == PV_LMP_SEARCHQA) { /* Search-R1's make_prefix holds the question */
        size_t cap = strlen(task) + 4096;
        char *buf = malloc(cap);
        if (!buf)
            return PV_ERR_NOMEM;
        pv_sbuf_t b;
        pv_sbuf_init(&b, buf, cap);
        pv_searchr1_prompt(&b, task);
        rc = pv_lmp_encode(tok, b.p, b.len, out);
        free(buf);
        if (rc != PV_OK || s0 == 0)
            return rc;
    } else if (s0 > 0) {
        if ((rc = s_str(tok, s_task_head, out)) || (rc = s_str(tok, task, out)))
            return rc;
    }
    if (s0 > 0) {
        char line[96];
        snprintf(line, sizeof line, "%s%zu step(s).\n", s_prior_head, s0);
        if ((rc = s_str(tok, line, out)))
            return rc;
    }
    if (lmp->env != PV_LMP_SEARCHQA || s0 > 0)
        rc = s_str(tok, obs, out);
    return rc;
}

/* The admissible list after the current observation. */
static pv_err_t s_admissible(pv_tokenizer_t *tok, const char *const *cands, size_t n,
                             pv_lmp_ids_t *out)
{
    pv_err_t rc = s_str(tok, s_adm_head, out);
    for (size_t i = 0; rc == PV_OK && i < n; i++) {
        if (i > 0)
            rc = s_str(tok, ", ", out);
        if (rc == PV_OK)
            rc = s_str(tok, cands[i], out);
    }
    return rc ? rc : s_str(tok, "].", out);
}

/* The conversation from s0 to step t; the last user turn's own tokens are cut to `cut`
 * (SIZE_MAX: whole). */
static pv_err_t s_build(const pv_lmp_t *lmp, pv_tokenizer_t *tok, const pv_policy_ctx_t *ctx,
                        const char *const *cands, size_t n_cands, size_t s0, size_t cut,
                        pv_lmp_ids_t *out, size_t *last_turn)
{
    size_t t = (ctx->n_history - 1) / 2;
    const char *const *h = ctx->history;
    pv_err_t rc = PV_OK;
    out->n = 0;
    if (lmp->system && ((rc = s_open(lmp, tok, "system\n", out)) ||
                        (rc = s_str(tok, lmp->system, out)) || (rc = s_close(lmp, tok, out))))
        return rc;
    for (size_t k = s0; k <= t; k++) {
        if (k > s0 && ((rc = s_open(lmp, tok, "assistant\n", out)) ||
                       (rc = s_str(tok, h[2 * k - 1], out)) || (rc = s_close(lmp, tok, out))))
            return rc;
        if ((rc = s_open(lmp, tok, "user\n", out)))
            return rc;
        size_t at = out->n;
        rc = k == s0 ? s_first_turn(lmp, tok, ctx->task_text, h[2 * k], s0, out)
                     : s_str(tok, h[2 * k], out);
        if (rc == PV_OK && k > s0 && lmp->task_each_turn && lmp->env != PV_LMP_SEARCHQA &&
            (rc = s_str(tok, "\n", out)) == PV_OK && (rc = s_str(tok, s_task_head, out)) == PV_OK)
            rc = s_str(tok, ctx->task_text, out);
        if (rc == PV_OK && k == t && lmp->admissible && n_cands)
            rc = s_admissible(tok, cands, n_cands, out);
        if (rc != PV_OK)
            return rc;
        if (k == t) {
            *last_turn = out->n - at;
            if (out->n - at > cut)
                out->n = at + cut;
        }
        if ((rc = s_close(lmp, tok, out)))
            return rc;
    }
    return s_open(lmp, tok, "assistant\n", out);
}

pv_err_t pv_lmp_context(const pv_lmp_t *lmp, pv_tokenizer_t *tok, const pv_policy_ctx_t *ctx,
                        const char *const *cands, size_t n_cands, pv_lmp_ids_t *out,
                        pv_errmsg_t *em)
{
    size_t t = (ctx->n_history - 1) / 2, turn = 0;
    size_t s0 = pv_lmp_window_start(lmp, t);
    pv_err_t rc = s_build(lmp, tok, ctx, cands, n_cands, s0, SIZE_MAX, out, &turn);
    if (rc == PV_OK && out->n > lmp->budget && s0 < t)
        rc = s_build(lmp, tok, ctx, cands, n_cands, s0 = t, SIZE_MAX, out, &turn);
    if (rc == PV_OK && out->n > lmp->budget) {
        size_t over = out->n - lmp->budget;
        if (over >= turn)
            return pv_errf(em, PV_ERR_LIMIT,
                           "prompt: even one turn of step %zu needs more than %zu tokens", t,
                           lmp->budget);
        rc = s_build(lmp, tok, ctx, cands, n_cands, s0, turn - over, out, &turn);
    }
    if (rc != PV_OK)
        return pv_errf(em, rc, "prompt of step %zu: %s", t, pv_strerror(rc));
    return PV_OK;
}

/* [a, b) with ASCII whitespace stripped from both ends. */
static void s_strip(const char **a, const char **b)
{
    while (*a < *b && isspace((unsigned char)**a))
        (*a)++;
    while (*b > *a && isspace((unsigned char)(*b)[-1]))
        (*b)--;
}

/* Needle in text[0..n) (not NUL-terminated), or NULL. */
static const char *s_find(const char *text, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(text + i, needle, k) == 0)
            return text + i;
    return NULL;
}

/* Length of the valid UTF-8 sequence starting at s[0 .. n), or 0 (RFC 3629 table 3.7). */
static size_t s_utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c >= 0x01 && c < 0x80)
        return 1;
    size_t k;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        k = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        k = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        k = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else
        return 0;
    if (n < k || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < k; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return k;
}

size_t pv_lmp_utf8_fix(char *text, size_t len)
{
    size_t fixed = 0;
    for (size_t i = 0; i < len;) {
        size_t k = s_utf8_seq((const unsigned char *)text + i, len - i);
        if (k == 0) {
            text[i++] = '?';
            fixed++;
        } else {
            i += k;
        }
    }
    return fixed;
}

size_t pv_lmp_parse(pv_lmp_env_t env, const char *reply, size_t len, char *out, size_t cap)
{
    const char *a = reply, *b = reply + len;
    if (env == PV_LMP_SEARCHQA) {
        b = reply + pv_searchr1_cut(reply, len);
    } else {
        const char *o = s_find(reply, len, "<action>"), *c = s_find(reply, len, "</action>");
        if (o && c && c >= o + 8) {
            a = o + 8;
            b = c;
        } else {
            s_strip(&a, &b);
            const char *nl = memchr(a, '\n', (size_t)(b - a));
            if (nl)
                b = nl;
        }
    }
    s_strip(&a, &b);
    size_t n = (size_t)(b - a);
    if (cap == 0)
        return 0;
    if (n > cap - 1)
        n = cap - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = env != PV_LMP_SEARCHQA ? (char)tolower((unsigned char)a[i]) : a[i];
    out[n] = '\0';
    return n;
}
