/* llm_text.c - bounded strings, safe clipping and words; see llm_text.h. */
#include "judge/llm_text.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pv_llm_buf_init(pv_llm_buf_t *b, size_t max_bytes)
{
    *b = (pv_llm_buf_t){.max = max_bytes ? max_bytes : 1};
}

void pv_llm_buf_free(pv_llm_buf_t *b)
{
    if (!b)
        return;
    free(b->data);
    *b = (pv_llm_buf_t){.max = b->max};
}

/* Room for `extra` more bytes and the NUL, within the bound: returns how many fit. */
static size_t s_reserve(pv_llm_buf_t *b, size_t extra)
{
    if (b->oom)
        return 0;
    size_t room = b->max - b->len;
    if (extra > room) {
        b->over = true;
        extra = room;
    }
    if (b->len + extra + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + extra + 1)
            cap *= 2;
        if (cap > b->max + 1)
            cap = b->max + 1;
        char *d = realloc(b->data, cap);
        if (!d) {
            b->oom = true;
            return 0;
        }
        b->data = d;
        b->cap = cap;
    }
    return extra;
}

void pv_llm_buf_putn(pv_llm_buf_t *b, const char *s, size_t n)
{
    size_t k = s_reserve(b, n);
    if (!b->data)
        return;
    memcpy(b->data + b->len, s, k);
    b->len += k;
    b->data[b->len] = '\0';
}

void pv_llm_buf_put(pv_llm_buf_t *b, const char *s)
{
    pv_llm_buf_putn(b, s, strlen(s));
}

void pv_llm_buf_printf(pv_llm_buf_t *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        pv_llm_buf_putn(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->oom = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    pv_llm_buf_putn(b, big, (size_t)n);
    free(big);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid. */
static size_t s_utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, min = 0x10000;
    else
        return 0;
    if (len > n)
        return 0;
    unsigned cp = c & (0x3Fu >> (len - 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

void pv_llm_buf_put_clipped(pv_llm_buf_t *b, const char *s, size_t max_bytes, bool one_line)
{
    if (!s)
        return;
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), used = 0;
    for (size_t i = 0; i < n;) {
        size_t k = s_utf8_len(p + i, n - i);
        if (used + (k ? k : 1) > max_bytes) {
            pv_llm_buf_put(b, " [...]");
            return;
        }
        if (k == 1 && (p[i] < 0x20 || p[i] == 0x7F)) {
            char c = p[i] == '\n' && !one_line ? '\n' : ' ';
            pv_llm_buf_putn(b, &c, 1);
        } else if (k == 0) {
            pv_llm_buf_putn(b, "?", 1);
        } else {
            pv_llm_buf_putn(b, s + i, k);
        }
        i += k ? k : 1;
        used += k ? k : 1;
    }
}

pv_err_t pv_llm_buf_status(const pv_llm_buf_t *b)
{
    return b->oom ? PV_ERR_NOMEM : b->over ? PV_ERR_LIMIT : PV_OK;
}

char *pv_llm_clip_dup(const char *s, size_t max_bytes, bool one_line)
{
    pv_llm_buf_t b;
    pv_llm_buf_init(&b, max_bytes + 16);
    pv_llm_buf_putn(&b, "", 0);
    pv_llm_buf_put_clipped(&b, s ? s : "", max_bytes, one_line);
    if (b.oom) {
        pv_llm_buf_free(&b);
        return NULL;
    }
    return b.data;
}

static bool s_word_byte(unsigned char c)
{
    return isalnum(c) || c >= 0x80;
}

bool pv_llm_next_word(const char **p, char word[PV_LLM_WORD_MAX])
{
    const unsigned char *s = (const unsigned char *)*p;
    for (;;) {
        while (*s && !s_word_byte(*s))
            s++;
        if (!*s) {
            *p = (const char *)s;
            return false;
        }
        size_t n = 0;
        while (*s && s_word_byte(*s)) {
            if (n < PV_LLM_WORD_MAX - 1)
                word[n++] = (char)(*s < 0x80 ? tolower(*s) : *s);
            s++;
        }
        word[n] = '\0';
        if (n >= 2) {
            *p = (const char *)s;
            return true;
        }
    }
}

bool pv_llm_has_word(const char *text, const char *word)
{
    char w[PV_LLM_WORD_MAX];
    const char *p = text ? text : "";
    while (pv_llm_next_word(&p, w))
        if (strcmp(w, word) == 0)
            return true;
    return false;
}

bool pv_llm_same_action(const char *a, const char *b)
{
    for (;;) {
        while (isspace((unsigned char)*a))
            a++;
        while (isspace((unsigned char)*b))
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        /* compare one word */
        while (*a && *b && !isspace((unsigned char)*a) && !isspace((unsigned char)*b)) {
            if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
                return false;
            a++, b++;
        }
        bool ea = !*a || isspace((unsigned char)*a), eb = !*b || isspace((unsigned char)*b);
        if (ea != eb)
            return false;
    }
}

bool pv_llm_json_int(const json_t *v, long long *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    double d = json_is_real(v) ? json_real_value(v) : NAN;
    if (isfinite(d) && d == floor(d) && fabs(d) < 1e15) {
        *out = (long long)d;
        return true;
    }
    return false;
}

void pv_llm_unfence(const char **text, size_t *len)
{
    const char *s = *text, *e = s + *len;
    while (s < e && isspace((unsigned char)*s))
        s++;
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    if (e - s >= 6 && strncmp(s, "```", 3) == 0 && strncmp(e - 3, "```", 3) == 0) {
        s += 3;
        e -= 3;
        while (s < e && *s != '\n' && !isspace((unsigned char)*s) && *s != '{')
            s++; /* the info string: json */
        while (s < e && isspace((unsigned char)*s))
            s++;
        while (e > s && isspace((unsigned char)e[-1]))
            e--;
    }
    *text = s;
    *len = (size_t)(e - s);
}
