/* searchqa_cand.c - candidate actions of the searchqa family; see searchqa.h. */
#include <string.h>

#include "common/env/searchqa_model.h"
#include "common/env/text_util.h"

#define S_MAX_ANSWERS PV_SEARCHQA_MAX_ACTIONS

typedef struct s_span {
    const char *p;
    size_t n;
} s_span_t;

typedef struct s_list {
    s_span_t items[PV_SEARCHQA_MAX_ACTIONS];
    char keys[PV_SEARCHQA_MAX_ACTIONS][PV_SEARCHQA_CAND_MAX + 1];
    size_t n, cap;
} s_list_t;

/* Add a candidate unless empty, too long, or equal to one already listed after
 * normalize_answer. */
static void s_add(s_list_t *l, const char *p, size_t n)
{
    while (n && (unsigned char)*p <= ' ') {
        p++;
        n--;
    }
    while (n && (unsigned char)p[n - 1] <= ' ')
        n--;
    if (!n || n > PV_SEARCHQA_CAND_MAX || l->n >= l->cap)
        return;
    char raw[PV_SEARCHQA_CAND_MAX + 1], key[PV_SEARCHQA_CAND_MAX + 1];
    memcpy(raw, p, n);
    raw[n] = '\0';
    if (!pv_text_normalize_answer(key, sizeof key, raw))
        return;
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->keys[i], key) == 0)
            return;
    memcpy(l->keys[l->n], key, sizeof key);
    l->items[l->n++] = (s_span_t){p, n};
}

static const char *const s_connectors[] = {"of", "de", "the", "and", "von", "van", "der",
                                           "la", "le", "du",  "del", "da",  "di",  "y"};
static const char *const s_lead_stop[] = {
    "The",   "A",     "An",      "He",       "She",     "It",      "In",        "On",     "At",
    "After", "As",    "For",     "From",     "With",    "During",  "However",   "Its",    "Their",
    "There", "When",  "While",   "Which",    "Who",     "What",    "Where",     "Is",     "Was",
    "This",  "These", "They",    "His",      "Her",     "By",      "Since",     "Born",   "Both",
    "Are",   "Were",  "Did",     "Does",     "Do",      "How",     "Why",       "And",    "But",
    "Of",    "To",    "If",      "Although", "Other",   "Some",    "Many",      "Each",   "One",
    "All",   "Also",  "Because", "Before",   "Between", "Despite", "Following", "Having", "Here",
    "Later", "Most",  "Not",     "Now",      "Over",    "Several", "So",        "Such",   "That",
    "Then",  "Those", "Through", "Thus",     "Today",   "Under",   "Unlike",    "Upon",   "We",
    "I",     "You",   "Our",     "Until",    "Within",  "Like",    "Yet"};
#define S_IN(w, n, list) PV_TEXT_IN(w, n, list)

static bool s_cap_start(const unsigned char *p)
{
    return (*p >= 'A' && *p <= 'Z') || (p[0] == 0xc3 && p[1] >= 0x80 && p[1] <= 0x9e);
}

static bool s_is_digits(const char *p, size_t n)
{
    bool digit = false;
    for (size_t i = 0; i < n; i++) {
        if (p[i] >= '0' && p[i] <= '9')
            digit = true;
        else if (!(p[i] == ',' || p[i] == '.') || i == 0 || i + 1 == n)
            return false;
    }
    return digit;
}

static const char *const s_months[] = {"January",   "February", "March",    "April",
                                       "May",       "June",     "July",     "August",
                                       "September", "October",  "November", "December"};

/* The start of [a, b) after its leading sentence words ("The", "He") and connectors, or
 * NULL when nothing else is left. */
static const char *s_strip_lead(const char *a, const char *b)
{
    for (;;) {
        const char *sp = memchr(a, ' ', (size_t)(b - a));
        size_t wl = sp ? (size_t)(sp - a) : (size_t)(b - a);
        if (!S_IN(a, wl, s_lead_stop) && !S_IN(a, wl, s_connectors))
            return a;
        if (!sp)
            return NULL;
        a = sp + 1;
    }
}

/* Add [a, b) after its leading words (s_strip_lead) unless it is a month alone (a month is
 * a candidate only within a date: s_date). */
static const char *s_add_name(s_list_t *l, const char *a, const char *b)
{
    if (!(a = s_strip_lead(a, b)) || S_IN(a, (size_t)(b - a), s_months))
        return NULL;
    s_add(l, a, (size_t)(b - a));
    return a;
}

/* Emit a span of capitalised words (s_add_name); a span joined by "and" also gives its
 * parts ("Jonny Craig and Pete Doherty"), each after its leading words ("Oklahoma Sooners
 * and the AAU" gives "AAU", not "the AAU"). Returns the start actually emitted (NULL when
 * nothing was). */
static const char *s_emit(s_list_t *l, const char *a, const char *b)
{
    if (!(a = s_add_name(l, a, b)))
        return NULL;
    for (const char *part = a, *and; (and = strstr(part, " and ")) && and < b; part = and+5) {
        s_add_name(l, part, and);
        if (!strstr(and+5, " and ") || strstr(and+5, " and ") >= b)
            s_add_name(l, and+5, b);
    }
    return a;
}

/* Day (1-31) as a whole token? */
static bool s_day(const char *a, const char *b)
{
    size_t n = (size_t)(b - a);
    return (n == 1 || n == 2) && a[0] >= '0' && a[0] <= '9' &&
           (n == 1 || (a[1] >= '0' && a[1] <= '9'));
}

/* Dates around a month word at [a, b): "2 March 1972", "March 26, 1986", "22 November",
 * "July 1934": the longest form present only (with a year, the forms without it are left
 * out; the year is a number candidate of its own). */
static void s_date(s_list_t *l, const char *text, const char *a, const char *b)
{
    const char *start = a, *end = b;
    /* a day before: "2 March" */
    const char *q = a;
    while (q > text && q[-1] == ' ')
        q--;
    const char *d = q;
    while (d > text && d[-1] >= '0' && d[-1] <= '9')
        d--;
    if (d < q && s_day(d, q) && (d == text || (unsigned char)d[-1] <= ' '))
        start = d;
    /* after: a day with a comma ("26,") and / or a year */
    const char *p = b;
    while (*p == ' ')
        p++;
    const char *e = p;
    while (*e >= '0' && *e <= '9')
        e++;
    if (start == a && s_day(p, e) && *e == ',') {
        end = e + 1;
        p = end;
        while (*p == ' ')
            p++;
        e = p;
        while (*e >= '0' && *e <= '9')
            e++;
    }
    const char *day_end = end > b && end[-1] == ',' ? end - 1 : end; /* "March 26" */
    if (e - p == 4)
        end = e;
    else
        end = day_end;
    if (start != a || end != b)
        s_add(l, start, (size_t)(end - start));
}

/* Curly quotes (UTF-8 "\u201c" / "\u2018" opening, "\u201d" / "\u2019" closing) at the
 * start / end of [*a, *b): strip them; true when there was one. */
static bool s_curly_open(const char **a, const char *b)
{
    if (b - *a >= 3 && memcmp(*a, "\xe2\x80", 2) == 0 && ((*a)[2] == '\x9c' || (*a)[2] == '\x98')) {
        *a += 3;
        return true;
    }
    return false;
}

static bool s_curly_close(const char *a, const char **b)
{
    if (*b - a >= 3 && memcmp(*b - 3, "\xe2\x80", 2) == 0 &&
        ((*b)[-1] == '\x9d' || (*b)[-1] == '\x99')) {
        *b -= 3;
        return true;
    }
    return false;
}

/* The word after p (spaces skipped, leading quotes and brackets kept, trailing punctuation
 * cut) into [*a, *b); false at the end of the text. */
static bool s_peek(const char *p, const char **a, const char **b)
{
    while (*p && (unsigned char)*p <= ' ')
        p++;
    if (!*p)
        return false;
    const char *e = p;
    while (*e && (unsigned char)*e > ' ')
        e++;
    while (e > p && strchr("\"'.,;:!?)]}", e[-1]))
        e--;
    *a = p;
    *b = e;
    return true;
}

/* Does an initial ("M." of "M. Night Shyamalan") at [a, b), its full stop at b, go on to
 * the next word p points after: a capitalised word that is no sentence word ("He")? */
static bool s_initial(const char *a, const char *b, const char *p)
{
    const char *na, *nb;
    return b - a == 1 && *a >= 'A' && *a <= 'Z' && *b == '.' && p == b + 1 && s_peek(p, &na, &nb) &&
           s_cap_start((const unsigned char *)na) && !S_IN(na, (size_t)(nb - na), s_lead_stop);
}

/* Is [a, b) a day (1-31) next to a month word ("17 March", "March 17,")? A date is a
 * candidate as a whole (s_date), its day alone is not. */
static bool s_date_day(const char *a, const char *b, bool after_month)
{
    const char *na, *nb;
    return s_day(a, b) &&
           (after_month || (s_peek(b, &na, &nb) && S_IN(na, (size_t)(nb - na), s_months)));
}

/* Names (runs of capitalised words joined by connectors; "Bath, Maine" pairs too), dates
 * and, when nums is set, numbers in `text`. */
static void s_names(const char *text, s_list_t *names, s_list_t *nums)
{
    const char *span_a = NULL, *span_b = NULL; /* open span, end of its last capital word */
    const char *comma_a = NULL;                /* a span that just closed with a comma */
    bool month = false;                        /* the previous word was a month */
    const char *p = text;
    while (*p) {
        while (*p && (unsigned char)*p <= ' ')
            p++;
        if (!*p)
            break;
        const char *t = p;
        while (*p && (unsigned char)*p > ' ')
            p++;
        const char *a = t, *b = p;
        bool opens = false, closes = false, comma = false;
        for (;;) { /* opening quotes and brackets */
            if (a < b && strchr("\"'([{", *a))
                a++;
            else if (!s_curly_open(&a, b))
                break;
            opens = true;
        }
        for (;;) { /* closing quotes, brackets and punctuation */
            if (b > a && strchr("\"'.,;:!?)]}", b[-1])) {
                closes = closes || strchr(".,;:!?)]", b[-1]) != NULL;
                comma = comma || b[-1] == ',';
                b--;
            } else if (!s_curly_close(a, &b)) {
                break;
            }
        }
        /* a possessive ends a name: "Carr's book" gives "Carr" */
        if (b - a > 2 && b[-2] == '\'' && b[-1] == 's') {
            b -= 2;
            closes = true;
        } else if (b - a > 4 && memcmp(b - 4, "\xe2\x80\x99s", 4) == 0) {
            b -= 4;
            closes = true;
        }
        if (closes && !comma && s_initial(a, b, p)) { /* "M. Night": the span goes on */
            closes = false;
            b++;
        }
        if (opens && span_a) {
            s_emit(names, span_a, span_b);
            span_a = NULL;
        }
        if (a == b)
            continue;
        bool was_month = month;
        month = S_IN(a, (size_t)(b - a), s_months);
        if (nums && s_is_digits(a, (size_t)(b - a)) && !s_date_day(a, b, was_month))
            s_add(nums, a, (size_t)(b - a));
        if (nums && month)
            s_date(nums, text, a, b);
        bool cap = s_cap_start((const unsigned char *)a);
        if (cap) {
            if (!span_a)
                span_a = a;
            span_b = b;
        } else if (!(span_a && S_IN(a, (size_t)(b - a), s_connectors))) {
            if (span_a)
                s_emit(names, span_a, span_b);
            span_a = NULL;
            comma_a = NULL;
        }
        if (closes && span_a) {
            const char *emitted = s_emit(names, span_a, span_b);
            if (comma_a && emitted) /* "Bath, Maine" */
                s_add(names, comma_a, (size_t)(span_b - comma_a));
            comma_a = comma && !comma_a ? emitted : NULL;
            span_a = NULL;
        }
    }
    if (span_a) {
        const char *emitted = s_emit(names, span_a, span_b);
        if (comma_a && emitted)
            s_add(names, comma_a, (size_t)(span_b - comma_a));
    }
}

/* Quoted phrases "..." of a text. */
static void s_quoted(const char *text, s_list_t *l)
{
    for (const char *p = strchr(text, '"'); p; p = strchr(p + 1, '"')) {
        const char *q = strchr(p + 1, '"');
        if (!q)
            break;
        s_add(l, p + 1, (size_t)(q - p - 1));
        p = q;
    }
}

static bool s_seen(const sq_state_t *st, uint32_t upto, uint32_t id)
{
    for (uint32_t i = upto + 1; i < st->n_retrieved; i++)
        if (st->retrieved[i] == id)
            return true;
    return false;
}

static void s_write(sq_cands_t *out, pv_sbuf_t *b, const char *kind, const s_list_t *l)
{
    for (size_t i = 0; i < l->n && out->n < PV_SEARCHQA_MAX_ACTIONS; i++) {
        size_t start = b->len;
        pv_sbuf_printf(b, "%s[", kind);
        pv_sbuf_putn(b, l->items[i].p, l->items[i].n);
        pv_sbuf_put(b, "]");
        if (b->overflow || b->len + 1 >= b->cap) {
            b->len = start;
            b->p[start] = '\0';
            return;
        }
        out->acts[out->n++] = b->p + start;
        b->len++;
        b->p[b->len] = '\0';
    }
}

void sq_candidates(const sq_model_t *m, const sq_state_t *st, sq_cands_t *out)
{
    const char *question = sq_s(m, m->questions[st->question].question);
    static const char *const aux[] = {"is",  "are", "was",   "were", "do",   "does",
                                      "did", "can", "could", "has",  "have", "had"};
    s_list_t queries = {.cap = PV_SEARCHQA_MAX_QUERIES}, answers = {.cap = S_MAX_ANSWERS};
    s_add(&queries, question, strlen(question));
    s_names(question, &queries, NULL);
    s_quoted(question, &queries);
    size_t wl = strcspn(question, " ");
    char first[16] = "";
    if (wl < sizeof first)
        pv_text_lower(first, wl + 1, question);
    if (S_IN(first, strlen(first), aux)) {
        s_add(&answers, "yes", 3);
        s_add(&answers, "no", 2);
    }
    /* retrieved passages, most recent first, each once */
    for (uint32_t i = st->n_retrieved; i-- > 0;) {
        if (s_seen(st, i, st->retrieved[i]))
            continue;
        const char *title = sq_s(m, m->passages[st->retrieved[i]].title_plain);
        s_add(&queries, title, strlen(title));
        s_add(&answers, title, strlen(title));
    }
    for (uint32_t i = st->n_retrieved; i-- > 0;) {
        if (s_seen(st, i, st->retrieved[i]))
            continue;
        s_list_t *q = queries.n < queries.cap ? &queries : NULL;
        const char *text = sq_s(m, m->passages[st->retrieved[i]].text);
        s_names(text, &answers, &answers);
        if (q)
            s_names(text, q, NULL);
    }
    pv_sbuf_t b;
    pv_sbuf_init(&b, out->text, sizeof out->text);
    out->n = 0;
    s_write(out, &b, "search", &queries);
    s_write(out, &b, "answer", &answers);
}
