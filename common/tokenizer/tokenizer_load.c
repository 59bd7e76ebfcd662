/* tokenizer_load.c - read and validate a Hugging Face tokenizer.json (byte-level BPE).
 *
 * The file is untrusted: every field is type-checked before use, ids are bounded before
 * anything is sized by them, and every error names the field. */
#include "common/tokenizer/tokenizer_int.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistr.h>

#include "common/fs.h"
#include "common/tokenizer/bytelevel.h"

/* An id field: an integer in [0, PV_TOKENIZER_MAX_IDS). */
static pv_err_t s_id(pv_tok_ld_t *ld, json_t *v, const char *field, const char *tok, uint32_t *id)
{
    if (!json_is_integer(v))
        return pv_tok_err(ld, PV_ERR_TYPE, "%s: the id of \"%.80s\" must be an integer", field,
                          tok);
    json_int_t x = json_integer_value(v);
    if (x < 0 || x >= (json_int_t)PV_TOKENIZER_MAX_IDS)
        return pv_tok_err(ld, PV_ERR_RANGE, "%s: id %lld of \"%.80s\" is outside [0, %u)", field,
                          (long long)x, tok, PV_TOKENIZER_MAX_IDS);
    *id = (uint32_t)x;
    return PV_OK;
}

/* First pass over model.vocab and added_tokens: types, ids, the id count, pool sizes. */
static pv_err_t s_size(pv_tok_ld_t *ld, json_t *vocab, json_t *added, size_t *pool)
{
    uint32_t top = 0, id = 0; /* set by s_id; gcc -O2 cannot see it (maybe-uninitialized) */
    const char *key;
    json_t *v;
    pv_err_t err;
    *pool = 0;
    json_object_foreach(vocab, key, v)
    {
        if ((err = s_id(ld, v, "model.vocab", key, &id)))
            return err;
        if (!*key)
            return pv_tok_err(ld, PV_ERR_DATA, "model.vocab: the empty string is not a token");
        if (strlen(key) > PV_TOK_MAX_NAME)
            return pv_tok_err(ld, PV_ERR_LIMIT,
                              "model.vocab: token \"%.40s...\" is longer than %d bytes", key,
                              PV_TOK_MAX_NAME);
        top = id + 1 > top ? id + 1 : top;
        *pool += strlen(key) + 1;
    }
    if (added && !json_is_null(added) && !json_is_array(added))
        return pv_tok_err(ld, PV_ERR_TYPE, "added_tokens must be an array");
    if (json_array_size(added) > 65536)
        return pv_tok_err(ld, PV_ERR_LIMIT, "added_tokens: more than 65536 tokens");
    for (size_t i = 0; i < json_array_size(added); i++) {
        json_t *a = json_array_get(added, i), *c = json_object_get(a, "content");
        char field[48];
        snprintf(field, sizeof field, "added_tokens[%zu]", i);
        if (!json_is_object(a) || !json_is_string(c) || !*json_string_value(c))
            return pv_tok_err(ld, PV_ERR_TYPE, "%s must be an object with a non-empty \"content\"",
                              field);
        if ((err = s_id(ld, json_object_get(a, "id"), field, json_string_value(c), &id)))
            return err;
        if (strlen(json_string_value(c)) > PV_TOK_MAX_NAME)
            return pv_tok_err(ld, PV_ERR_LIMIT, "%s: content longer than %d bytes", field,
                              PV_TOK_MAX_NAME);
        top = id + 1 > top ? id + 1 : top;
        *pool += 2 * (strlen(json_string_value(c)) + 1); /* its bytes and, apart, its text */
    }
    if (top == 0)
        return pv_tok_err(ld, PV_ERR_DATA, "model.vocab is empty");
    ld->t->n_ids = top;
    ld->t->n_vocab = (uint32_t)json_object_size(vocab);
    return PV_OK;
}

/* Store token `id`: its written form and its bytes. */
static void s_put(pv_tok_ld_t *ld, uint32_t id, const char *name, const char *bytes, size_t n)
{
    pv_tokenizer_t *t = ld->t;
    size_t nl = strlen(name);
    t->name_off[id] = (uint32_t)ld->names_len;
    memcpy(t->names + ld->names_len, name, nl + 1);
    ld->names_len += nl + 1;
    t->raw_off[id] = (uint32_t)ld->raw_len;
    t->raw_len[id] = (uint32_t)n;
    memcpy(t->raw + ld->raw_len, bytes, n);
    ld->raw_len += n;
}

/* The bytes a vocabulary token stands for (its characters through GPT-2's byte alphabet)
 * into out (room for strlen(name) bytes). */
static pv_err_t s_bytes(pv_tok_ld_t *ld, const char *field, const char *name, size_t nl, char *out,
                        size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < nl;) {
        ucs4_t c;
        int l = u8_mbtouc(&c, (const uint8_t *)name + i, nl - i);
        int b = pv_bytelevel_byte(c);
        if (b < 0)
            return pv_tok_err(ld, PV_ERR_DATA,
                              "%s: token \"%.*s\" has U+%04X, which is not in GPT-2's byte "
                              "alphabet; " PV_TOK_FAMILY,
                              field, (int)(nl < 80 ? nl : 80), name, (unsigned)c);
        out[(*n)++] = (char)b;
        i += (size_t)(l > 0 ? l : 1);
    }
    return PV_OK;
}

static pv_err_t s_alloc(pv_tokenizer_t *t, size_t pool, size_t n_merges)
{
    uint32_t vcap = pv_idx_table_cap(t->n_vocab);
    t->raw_off = malloc(t->n_ids * sizeof *t->raw_off);
    t->raw_len = calloc(t->n_ids, sizeof *t->raw_len);
    t->name_off = calloc(t->n_ids, sizeof *t->name_off);
    t->flags = calloc(t->n_ids, 1);
    t->raw = malloc(pool + 1);
    t->names = malloc(pool + 1);
    t->vocab_slot = vcap ? calloc(vcap, sizeof *t->vocab_slot) : NULL;
    t->merge_id = malloc((n_merges + 1) * sizeof *t->merge_id);
    if (!t->raw_off || !t->raw_len || !t->name_off || !t->flags || !t->raw || !t->names ||
        !t->vocab_slot || !t->merge_id || pv_key_index_init(&t->merges, (uint32_t)n_merges))
        return PV_ERR_NOMEM;
    memset(t->raw_off, 0xFF, t->n_ids * sizeof *t->raw_off);
    memset(t->byte_id, 0xFF, sizeof t->byte_id);
    pv_idx_table_init(&t->vocab, t->vocab_slot, vcap);
    return PV_OK;
}

/* Second pass over model.vocab: bytes, duplicates, the byte-to-id map. */
static pv_err_t s_vocab(pv_tok_ld_t *ld, json_t *vocab, char *tmp)
{
    pv_tokenizer_t *t = ld->t;
    const char *key;
    json_t *v;
    json_object_foreach(vocab, key, v)
    {
        uint32_t id = (uint32_t)json_integer_value(v);
        size_t n;
        pv_err_t err = s_bytes(ld, "model.vocab", key, strlen(key), tmp, &n);
        if (err)
            return err;
        if (t->raw_off[id] != PV_TOK_NONE)
            return pv_tok_err(ld, PV_ERR_DATA,
                              "model.vocab: \"%.80s\" and \"%.80s\" both have id %u",
                              t->names + t->name_off[id], key, id);
        s_put(ld, id, key, tmp, n);
        pv_tok_vocab_add(t, id);
        if (n == 1)
            t->byte_id[(uint8_t)tmp[0]] = id;
    }
    for (int b = 0; b < 256; b++) {
        if (t->byte_id[b] == PV_TOK_NONE) {
            char c[3] = {0};
            pv_bytelevel_utf8((uint8_t)b, c);
            return pv_tok_err(ld, PV_ERR_DATA,
                              "model.vocab lacks the token of byte 0x%02X (\"%s\"); a byte-level "
                              "BPE vocabulary has all 256",
                              b, c);
        }
    }
    return PV_OK;
}

/* Added tokens: flags, their bytes, the table encode matches them with. */
static pv_err_t s_added(pv_tok_ld_t *ld, json_t *added, char *tmp)
{
    pv_tokenizer_t *t = ld->t;
    size_t n = json_array_size(added);
    if (!n)
        return PV_OK;
    t->added = calloc(n, sizeof *t->added);
    if (!t->added)
        return PV_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *a = json_array_get(added, i);
        const char *content = json_string_value(json_object_get(a, "content"));
        uint32_t id = (uint32_t)json_integer_value(json_object_get(a, "id"));
        size_t cl = strlen(content), bn = 0;
        char field[48];
        snprintf(field, sizeof field, "added_tokens[%zu]", i);
        bool special = false, single = false, norm = false;
        pv_tok_added_t *at = &t->added[t->n_added++];
        pv_err_t err = pv_tok_bool(ld, a, "special", field, &special);
        if (!err)
            err = pv_tok_bool(ld, a, "single_word", field, &single);
        if (!err)
            err = pv_tok_bool(ld, a, "lstrip", field, &at->lstrip);
        if (!err)
            err = pv_tok_bool(ld, a, "rstrip", field, &at->rstrip);
        if (!err)
            err = pv_tok_bool(ld, a, "normalized", field, &norm);
        if (err)
            return err;
        if (single)
            return pv_tok_err(ld, PV_ERR_UNSUPPORTED, "%s: single_word=true is not supported",
                              field);
        if (t->flags[id] & PV_TOK_ADDED)
            return pv_tok_err(ld, PV_ERR_DATA, "%s: id %u is already the added token \"%.80s\"",
                              field, id, t->names + t->name_off[id]);
        uint32_t in_vocab = PV_TOK_NONE;
        pv_errmsg_t ignore;
        pv_tok_ld_t quiet = {ld->what, &ignore, t, 0, 0};
        if (s_bytes(&quiet, field, content, cl, tmp, &bn) == PV_OK)
            in_vocab = pv_tok_vocab_find(t, tmp, bn);
        if (t->raw_off[id] != PV_TOK_NONE) {
            /* GPT-2's <|endoftext|>: a vocabulary token that is also an added token */
            if (in_vocab != id)
                return pv_tok_err(ld, PV_ERR_DATA,
                                  "%s: id %u is \"%.80s\" in model.vocab, not \"%.80s\"", field, id,
                                  t->names + t->name_off[id], content);
            memcpy(t->raw + ld->raw_len, content, cl);
            at->text = t->raw + ld->raw_len;
            ld->raw_len += cl;
        } else {
            if (in_vocab != PV_TOK_NONE)
                return pv_tok_err(ld, PV_ERR_DATA,
                                  "%s: \"%.80s\" has id %u here but %u in model.vocab", field,
                                  content, id, in_vocab);
            s_put(ld, id, content, content, cl);
            at->text = t->raw + t->raw_off[id];
        }
        at->id = id;
        at->len = (uint32_t)cl;
        t->flags[id] |= PV_TOK_ADDED | (special ? PV_TOK_SPECIAL : 0);
    }
    return PV_OK;
}

/* Order of the match table: by first byte, longer first, then bytes. */
static int s_added_cmp(const void *pa, const void *pb)
{
    const pv_tok_added_t *a = pa, *b = pb;
    if ((uint8_t)a->text[0] != (uint8_t)b->text[0])
        return (uint8_t)a->text[0] < (uint8_t)b->text[0] ? -1 : 1;
    if (a->len != b->len)
        return a->len > b->len ? -1 : 1;
    return memcmp(a->text, b->text, a->len);
}

static pv_err_t s_added_table(pv_tok_ld_t *ld)
{
    pv_tokenizer_t *t = ld->t;
    if (t->n_added)
        qsort(t->added, t->n_added, sizeof *t->added, s_added_cmp);
    for (uint32_t k = 1; k < t->n_added; k++)
        if (s_added_cmp(&t->added[k - 1], &t->added[k]) == 0)
            return pv_tok_err(
                ld, PV_ERR_DATA, "added_tokens: \"%.80s\" appears twice (ids %u and %u)",
                t->names + t->name_off[t->added[k].id], t->added[k - 1].id, t->added[k].id);
    uint32_t k = 0;
    for (int b = 0; b <= 256; b++) {
        while (k < t->n_added && (uint8_t)t->added[k].text[0] < b)
            k++;
        t->by_byte[b] = k;
    }
    return PV_OK;
}

/* One side of a merge: its id, its bytes appended to tmp[*at..). */
static pv_err_t s_merge_side(pv_tok_ld_t *ld, const char *field, const char *name, size_t nl,
                             char *tmp, size_t *at, uint32_t *id)
{
    size_t n;
    pv_err_t err = s_bytes(ld, field, name, nl, tmp + *at, &n);
    if (err)
        return err;
    *id = pv_tok_vocab_find(ld->t, tmp + *at, n);
    if (*id == PV_TOK_NONE)
        return pv_tok_err(ld, PV_ERR_DATA, "%s: \"%.*s\" is not in model.vocab", field,
                          (int)(nl < 80 ? nl : 80), name);
    *at += n;
    return PV_OK;
}

/* model.merges, in rank order: "a b" strings or ["a", "b"] pairs. */
static pv_err_t s_merges(pv_tok_ld_t *ld, json_t *merges, char *tmp)
{
    pv_tokenizer_t *t = ld->t;
    for (size_t i = 0; i < json_array_size(merges); i++) {
        json_t *m = json_array_get(merges, i);
        const char *a = NULL, *b = NULL;
        size_t al = 0, bl = 0;
        char field[48];
        snprintf(field, sizeof field, "model.merges[%zu]", i);
        if (json_is_string(m)) {
            a = json_string_value(m);
            const char *sp = strchr(a, ' ');
            if (sp && !strchr(sp + 1, ' ')) {
                al = (size_t)(sp - a);
                b = sp + 1;
                bl = strlen(b);
            }
        } else if (json_is_array(m) && json_array_size(m) == 2 &&
                   json_is_string(json_array_get(m, 0)) && json_is_string(json_array_get(m, 1))) {
            a = json_string_value(json_array_get(m, 0));
            b = json_string_value(json_array_get(m, 1));
            al = strlen(a);
            bl = strlen(b);
        }
        if (!a || !b || !al || !bl || al > PV_TOK_MAX_NAME || bl > PV_TOK_MAX_NAME)
            return pv_tok_err(ld, PV_ERR_TYPE,
                              "%s must be \"a b\" (two tokens, one space) or [\"a\", \"b\"]",
                              field);
        size_t at = 0;
        uint32_t ia, ib;
        pv_err_t err = s_merge_side(ld, field, a, al, tmp, &at, &ia);
        if (!err)
            err = s_merge_side(ld, field, b, bl, tmp, &at, &ib);
        if (err)
            return err;
        uint32_t merged = pv_tok_vocab_find(t, tmp, at);
        if (merged == PV_TOK_NONE)
            return pv_tok_err(ld, PV_ERR_DATA,
                              "%s: \"%.*s\" + \"%.*s\" makes a token that is not in model.vocab",
                              field, (int)(al < 80 ? al : 80), a, (int)(bl < 80 ? bl : 80), b);
        int32_t seen = pv_key_get(&t->merges, pv_tok_pair(ia, ib));
        if (seen != PV_KEY_ABSENT)
            return pv_tok_err(ld, PV_ERR_DATA, "%s repeats model.merges[%d]", field, seen);
        if (pv_key_put(&t->merges, pv_tok_pair(ia, ib), (int32_t)i))
            return PV_ERR_NOMEM;
        t->merge_id[i] = merged;
        t->n_merges++;
    }
    return PV_OK;
}

/* Build the tokenizer from a parsed file (root NULL: je says why it did not parse). */
static pv_err_t s_from_root(json_t *root, const json_error_t *je, const char *what,
                            pv_tokenizer_t **out, pv_errmsg_t *em)
{
    *out = NULL;
    if (!root)
        return pv_errf(em, PV_ERR_PARSE, "%s:%d:%d: %s", what, je->line, je->column, je->text);
    pv_tok_ld_t ld = {what, em, NULL, 0, 0};
    char *tmp = NULL;
    pv_err_t err = PV_OK;
    if (!json_is_object(root)) {
        err = pv_tok_err(&ld, PV_ERR_TYPE, "the top level must be an object");
        goto out;
    }
    ld.t = calloc(1, sizeof *ld.t);
    if (!ld.t) {
        err = PV_ERR_NOMEM;
        goto out;
    }
    json_t *model = json_object_get(root, "model");
    json_t *added = json_object_get(root, "added_tokens");
    size_t pool = 0;
    if ((err = pv_tok_components(&ld, root)))
        goto out;
    json_t *vocab = json_object_get(model, "vocab"), *merges = json_object_get(model, "merges");
    if (json_array_size(merges) >= PV_TOKENIZER_MAX_IDS) {
        err = pv_tok_err(&ld, PV_ERR_LIMIT, "model.merges: more than %u merges",
                         PV_TOKENIZER_MAX_IDS);
        goto out;
    }
    if ((err = s_size(&ld, vocab, added, &pool)))
        goto out;
    if ((err = s_alloc(ld.t, pool, json_array_size(merges))) ||
        !(tmp = malloc(2 * PV_TOK_MAX_NAME + 1))) {
        err = PV_ERR_NOMEM;
        goto out;
    }
    if ((err = s_vocab(&ld, vocab, tmp)) || (err = s_added(&ld, added, tmp)) ||
        (err = s_added_table(&ld)) || (err = s_merges(&ld, merges, tmp)))
        goto out;
out:
    free(tmp);
    json_decref(root);
    if (err == PV_ERR_NOMEM)
        pv_errf(em, err, "%s: out of memory", what);
    if (err)
        pv_tokenizer_destroy(&ld.t);
    *out = ld.t;
    return err;
}

pv_err_t pv_tokenizer_from_json(const char *text, size_t len, const char *what,
                                pv_tokenizer_t **out, pv_errmsg_t *em)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    return s_from_root(root, &je, what, out, em);
}

pv_err_t pv_tokenizer_load(const char *path, pv_tokenizer_t **out, pv_errmsg_t *em)
{
    *out = NULL;
    FILE *f = NULL;
    pv_err_t orc = pv_open_read(path, &f, em);
    if (orc != PV_OK)
        return orc;
    json_error_t je;
    json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    fclose(f);
    return s_from_root(root, &je, path, out, em);
}
