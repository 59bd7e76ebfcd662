/* text_util.c - see text_util.h. */
#include "common/env/text_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pv_sbuf_init(pv_sbuf_t *b, char *buf, size_t cap)
{
    b->p = buf;
    b->len = 0;
    b->cap = cap;
    b->overflow = false;
    if (cap)
        buf[0] = '\0';
}

void pv_sbuf_putn(pv_sbuf_t *b, const char *s, size_t n)
{
    if (b->cap == 0)
        return;
    size_t room = b->cap - 1 - b->len;
    if (n > room) {
        n = room;
        b->overflow = true;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void pv_sbuf_put(pv_sbuf_t *b, const char *s)
{
    pv_sbuf_putn(b, s, strlen(s));
}

void pv_sbuf_printf(pv_sbuf_t *b, const char *fmt, ...)
{
    if (b->cap == 0)
        return;
    size_t room = b->cap - b->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->p + b->len, room, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= room) {
        b->len = b->cap - 1;
        b->overflow = true;
    } else {
        b->len += (size_t)n;
    }
}

uint64_t pv_fnv1a64(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

bool pv_text_is_alnum(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool pv_text_in_list(const char *w, size_t n, const char *const *list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (strlen(list[i]) == n && strncmp(list[i], w, n) == 0)
            return true;
    return false;
}

static int s_lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

size_t pv_text_lower(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    if (!cap)
        return 0;
    for (; src[n] && n + 1 < cap; n++)
        dst[n] = (char)s_lower((unsigned char)src[n]);
    dst[n] = '\0';
    return n;
}

/* ---- token_set_ratio ---------------------------------------------------------------------- */

typedef struct s_tok {
    const char *p;
    size_t n;
} s_tok_t;

/* thefuzz full_process(s, force_ascii=True) into out (cap PV_TEXT_RATIO_MAX + 1). */
static size_t s_full_process(char *out, const char *s)
{
    size_t n = 0;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; u[i] && n < PV_TEXT_RATIO_MAX; i++) {
        unsigned c = u[i];
        if ((c == 0xc2 || c == 0xc3) && u[i + 1] >= 0x80 && u[i + 1] < 0xc0) {
            i++; /* U+0080..U+00FF: asciidammit drops it */
            continue;
        }
        if (c < 0x80 && !pv_text_is_alnum((int)c) && c != '_')
            out[n++] = ' ';
        else
            out[n++] = (char)s_lower((int)c);
    }
    /* strip */
    size_t a = 0;
    while (a < n && out[a] == ' ')
        a++;
    while (n > a && out[n - 1] == ' ')
        n--;
    memmove(out, out + a, n - a);
    n -= a;
    out[n] = '\0';
    return n;
}

static int s_tok_cmp(const void *x, const void *y)
{
    const s_tok_t *a = x, *b = y;
    size_t m = a->n < b->n ? a->n : b->n;
    int c = memcmp(a->p, b->p, m);
    if (c)
        return c;
    return (a->n > b->n) - (a->n < b->n);
}

/* Sorted, de-duplicated tokens of a processed string; returns the count. */
static size_t s_token_set(const char *s, s_tok_t *toks, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; s[i];) {
        while (s[i] == ' ')
            i++;
        size_t j = i;
        while (s[j] && s[j] != ' ')
            j++;
        if (j > i && n < max)
            toks[n++] = (s_tok_t){s + i, j - i};
        i = j;
    }
    qsort(toks, n, sizeof *toks, s_tok_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || s_tok_cmp(&toks[k - 1], &toks[i]) != 0)
            toks[k++] = toks[i];
    return k;
}

/* Length of the longest common subsequence (the indel distance is |a| + |b| - 2 LCS). */
static size_t s_lcs(const char *a, size_t na, const char *b, size_t nb)
{
    uint16_t row[2 * PV_TEXT_RATIO_MAX + 2];
    if (nb > 2 * PV_TEXT_RATIO_MAX + 1)
        nb = 2 * PV_TEXT_RATIO_MAX + 1;
    memset(row, 0, (nb + 1) * sizeof row[0]);
    for (size_t i = 0; i < na; i++) {
        uint16_t diag = 0;
        for (size_t j = 0; j < nb; j++) {
            uint16_t up = row[j + 1];
            uint16_t v;
            if (a[i] == b[j])
                v = (uint16_t)(diag + 1);
            else
                v = up > row[j] ? up : row[j];
            diag = up;
            row[j + 1] = v;
        }
    }
    return row[nb];
}

/* thefuzz ratio() with python-Levenshtein's matcher. */
static int s_ratio(const char *a, size_t na, const char *b, size_t nb)
{
    if (na == nb && memcmp(a, b, na) == 0)
        return 100;
    if (na == 0 || nb == 0)
        return 0;
    size_t sum = na + nb;
    size_t dist = sum - 2 * s_lcs(a, na, b, nb);
    double r = (double)(sum - dist) / (double)sum;
    return (int)nearbyint(100.0 * r); /* Python round(): half to even */
}

static size_t s_join(char *out, size_t cap, const s_tok_t *toks, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        if (len && len < cap)
            out[len++] = ' ';
        size_t m = toks[i].n < cap - len ? toks[i].n : cap - len;
        memcpy(out + len, toks[i].p, m);
        len += m;
    }
    return len;
}

/* sect + " " + diff, then strip (sect and diff have no outer spaces). */
static size_t s_combine(char *out, size_t cap, const char *sect, size_t ns, const char *diff,
                        size_t nd)
{
    size_t len = 0;
    memcpy(out, sect, ns);
    len = ns;
    if (ns && nd)
        out[len++] = ' ';
    if (nd > cap - len)
        nd = cap - len;
    memcpy(out + len, diff, nd);
    return len + nd;
}

int pv_text_token_set_ratio(const char *a, const char *b)
{
    char p1[PV_TEXT_RATIO_MAX + 1], p2[PV_TEXT_RATIO_MAX + 1];
    if (s_full_process(p1, a) == 0 || s_full_process(p2, b) == 0)
        return 0;
    s_tok_t t1[PV_TEXT_RATIO_MAX / 2 + 1], t2[PV_TEXT_RATIO_MAX / 2 + 1];
    size_t n1 = s_token_set(p1, t1, PV_TEXT_RATIO_MAX / 2 + 1);
    size_t n2 = s_token_set(p2, t2, PV_TEXT_RATIO_MAX / 2 + 1);
    s_tok_t sect[PV_TEXT_RATIO_MAX / 2 + 1], d12[PV_TEXT_RATIO_MAX / 2 + 1],
        d21[PV_TEXT_RATIO_MAX / 2 + 1];
    size_t ns = 0, nd12 = 0, nd21 = 0, i = 0, j = 0;
    while (i < n1 || j < n2) { /* merge of two sorted sets */
        int c = i >= n1 ? 1 : j >= n2 ? -1 : s_tok_cmp(&t1[i], &t2[j]);
        if (c == 0) {
            sect[ns++] = t1[i++];
            j++;
        } else if (c < 0) {
            d12[nd12++] = t1[i++];
        } else {
            d21[nd21++] = t2[j++];
        }
    }
    enum { CAP = PV_TEXT_RATIO_MAX + 1 };
    char s_sect[CAP], s12[CAP], s21[CAP], c12[2 * CAP], c21[2 * CAP];
    size_t ls = s_join(s_sect, CAP, sect, ns);
    size_t l12 = s_join(s12, CAP, d12, nd12);
    size_t l21 = s_join(s21, CAP, d21, nd21);
    size_t lc12 = s_combine(c12, sizeof c12, s_sect, ls, s12, l12);
    size_t lc21 = s_combine(c21, sizeof c21, s_sect, ls, s21, l21);
    int r = s_ratio(s_sect, ls, c12, lc12);
    int r2 = s_ratio(s_sect, ls, c21, lc21);
    int r3 = s_ratio(c12, lc12, c21, lc21);
    if (r2 > r)
        r = r2;
    if (r3 > r)
        r = r3;
    return r;
}

/* ---- normalize_answer -------------------------------------------------------------------- */

static bool s_is_punct(int c)
{
    return c < 0x80 && c > ' ' && c != 0x7f && !pv_text_is_alnum(c);
}

/* Bytes of a non-word UTF-8 sequence at p (dash, curly quote), 0 otherwise. */
static size_t s_nonword_utf8(const unsigned char *p)
{
    if (p[0] == 0xe2 && p[1] == 0x80 &&
        (p[2] == 0x93 || p[2] == 0x94 || p[2] == 0x98 || p[2] == 0x99 || p[2] == 0x9c ||
         p[2] == 0x9d))
        return 3;
    return 0;
}

static bool s_is_space(const unsigned char *p, size_t *n)
{
    if (*p == ' ' || (*p >= '\t' && *p <= '\r') || (*p >= 0x1c && *p <= 0x1f)) {
        *n = 1;
        return true;
    }
    if (p[0] == 0xc2 && p[1] == 0xa0) {
        *n = 2;
        return true;
    }
    return false;
}

size_t pv_text_normalize_answer(char *dst, size_t cap, const char *src)
{
    /* Pass 1: lower-case, drop ASCII punctuation, white space -> ' '. */
    char tmp[4096];
    size_t n = 0;
    const unsigned char *u = (const unsigned char *)src;
    for (size_t i = 0; u[i] && n + 4 < sizeof tmp;) {
        size_t k;
        if (s_is_space(u + i, &k)) {
            tmp[n++] = ' ';
            i += k;
        } else if (s_is_punct(u[i])) {
            i++;
        } else if (u[i] == 0xc3 && u[i + 1] >= 0x80 && u[i + 1] <= 0x9e && u[i + 1] != 0x97) {
            tmp[n++] = (char)0xc3; /* U+00C0..U+00DE -> +0x20 */
            tmp[n++] = (char)(u[i + 1] + 0x20);
            i += 2;
        } else if ((u[i] == 0xc4 || u[i] == 0xc5) && u[i + 1] >= 0x80 && u[i + 1] < 0xc0) {
            unsigned cp = ((u[i] & 0x1fu) << 6) | (u[i + 1] & 0x3fu);
            bool upper = (cp >= 0x100 && cp <= 0x137 && cp % 2 == 0) ||
                         (cp >= 0x139 && cp <= 0x148 && cp % 2 == 1) ||
                         (cp >= 0x14a && cp <= 0x177 && cp % 2 == 0) ||
                         (cp >= 0x179 && cp <= 0x17e && cp % 2 == 1);
            if (upper)
                cp++;
            tmp[n++] = (char)(0xc0 | (cp >> 6));
            tmp[n++] = (char)(0x80 | (cp & 0x3f));
            i += 2;
        } else {
            tmp[n++] = (char)s_lower(u[i]);
            i++;
        }
    }
    tmp[n] = '\0';
    /* Pass 2: a word run (between non-word characters) that is a / an / the becomes a
     * space, as re.sub(r"\b(a|an|the)\b", " ", text). */
    char mid[4096];
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t k = s_nonword_utf8((const unsigned char *)tmp + i);
        if (tmp[i] == ' ' || k) {
            size_t step = k ? k : 1;
            memcpy(mid + m, tmp + i, step);
            m += step;
            i += step;
            continue;
        }
        size_t j = i;
        while (j < n && tmp[j] != ' ' && !s_nonword_utf8((const unsigned char *)tmp + j))
            j++;
        size_t len = j - i;
        bool article = (len == 1 && tmp[i] == 'a') || (len == 2 && !memcmp(tmp + i, "an", 2)) ||
                       (len == 3 && !memcmp(tmp + i, "the", 3));
        if (article) {
            mid[m++] = ' ';
        } else {
            memcpy(mid + m, tmp + i, len);
            m += len;
        }
        i = j;
    }
    /* Pass 3: " ".join(text.split()). */
    pv_sbuf_t b;
    pv_sbuf_init(&b, dst, cap);
    for (size_t i = 0; i < m;) {
        while (i < m && mid[i] == ' ')
            i++;
        size_t j = i;
        while (j < m && mid[j] != ' ')
            j++;
        if (j > i) {
            if (b.len)
                pv_sbuf_put(&b, " ");
            pv_sbuf_putn(&b, mid + i, j - i);
        }
        i = j;
    }
    return b.len;
}

bool pv_text_em(const char *pred, const char *gold)
{
    char a[2048], g[2048];
    pv_text_normalize_answer(a, sizeof a, pred);
    pv_text_normalize_answer(g, sizeof g, gold);
    return strcmp(a, g) == 0;
}

/* ---- FTS5 query ------------------------------------------------------------------------- */

/* Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (Pyserini's default analyser). */
static const char *const s_lucene_stop[] = {

    "a",   "an",    "and",  "are",   "as",    "at",   "be",   "but", "by",  "for",  "if",
    "in",  "into",  "is",   "it",    "no",    "not",  "of",   "on",  "or",  "such", "that",
    "the", "their", "then", "there", "these", "they", "this", "to",  "was", "will", "with"};

size_t pv_text_fts_query(char *dst, size_t cap, const char *src, size_t max_terms)
{
    pv_sbuf_t b;
    pv_sbuf_init(&b, dst, cap);
    size_t terms = 0;
    const unsigned char *u = (const unsigned char *)src;
    for (size_t i = 0; u[i] && terms < max_terms;) {
        if (!(u[i] >= 0x80 || pv_text_is_alnum(u[i]))) {
            i++;
            continue;
        }
        size_t j = i;
        while (u[j] && (u[j] >= 0x80 || pv_text_is_alnum(u[j])))
            j++;
        char word[128];
        size_t len = j - i < sizeof word - 1 ? j - i : sizeof word - 1;
        for (size_t k = 0; k < len; k++)
            word[k] = (char)s_lower(u[i + k]);
        word[len] = '\0';
        i = j;
        if (PV_TEXT_IN(word, len, s_lucene_stop))
            continue;
        /* duplicate? look for "word" in what was written */
        char quoted[132];
        snprintf(quoted, sizeof quoted, "\"%s\"", word);
        if (strstr(b.p, quoted))
            continue;
        size_t before = b.len;
        if (terms)
            pv_sbuf_put(&b, " OR ");
        pv_sbuf_put(&b, quoted);
        if (b.overflow) { /* never leave half a term */
            b.len = before;
            b.p[before] = '\0';
            break;
        }
        terms++;
    }
    return terms;
}
