/* qa_feat.c - question classes and candidate shapes; see qa_feat.h. */
#include "common/policy/qa_feat.h"

#include <string.h>

#include "common/policy/featurize.h"

#define S_WORD_MAX 24

static bool s_alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static char s_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* The next word of [*p, end) lower-cased into w (cut to S_WORD_MAX - 1); false at the end. */
static bool s_word(const char **p, const char *end, char w[S_WORD_MAX], const char **start)
{
    const char *s = *p;
    while (s < end && !s_alnum((unsigned char)*s))
        s++;
    if (s == end)
        return false;
    *start = s;
    size_t n = 0;
    for (; s < end && s_alnum((unsigned char)*s); s++)
        if (n + 1 < S_WORD_MAX)
            w[n++] = s_lower(*s);
    w[n] = '\0';
    *p = s;
    return true;
}

static bool s_in(const char *w, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(w, *list) == 0)
            return true;
    return false;
}

static const char *const s_aux[] = {"is",  "are",   "was", "were", "do",  "does", "did",
                                    "can", "could", "has", "have", "had", NULL};
static const char *const s_wh[] = {"who",   "whom",  "whose", "when", "where", "what",
                                   "whats", "which", "how",   "why",  NULL};
static const char *const s_time[] = {"year", "years",   "date",   "month",
                                     "day",  "century", "decade", NULL};
static const char *const s_place[] = {"city",     "country", "state",  "county",    "town", "place",
                                      "location", "region",  "island", "continent", NULL};

void pv_qa_question(const char *task, pv_qa_question_t *out)
{
    memset(out, 0, sizeof *out);
    if (!task)
        return;
    const char *end = task + strlen(task), *p = task, *start;
    const char *last = end;
    while (last > task && (unsigned char)last[-1] <= ' ')
        last--;
    bool mark = last > task && last[-1] == '?';
    char w[S_WORD_MAX], next[S_WORD_MAX];
    bool first = true, wh_first = false;
    while (s_word(&p, end, w, &start)) {
        if (first && s_in(w, s_aux)) {
            out->cls = PV_QA_YESNO;
            out->fine = pv_feat_hash(w, strlen(w));
            break;
        }
        bool wh = s_in(w, s_wh);
        wh_first = wh_first || (first && wh);
        first = false;
        if (!wh)
            continue;
        const char *q = p;
        if (!s_word(&q, end, next, &start))
            next[0] = '\0';
        uint64_t h[2] = {pv_feat_hash(w, strlen(w)), pv_feat_hash(next, strlen(next))};
        out->fine = pv_feat_hash(h, sizeof h);
        if (w[0] == 'w' && w[1] == 'h' && w[2] == 'o') /* who, whom, whose */
            out->cls = PV_QA_PERSON;
        else if (strcmp(w, "when") == 0)
            out->cls = PV_QA_TIME;
        else if (strcmp(w, "where") == 0)
            out->cls = PV_QA_PLACE;
        else if (strcmp(w, "how") == 0)
            out->cls =
                strcmp(next, "many") == 0 || strcmp(next, "much") == 0 ? PV_QA_COUNT : PV_QA_OTHER;
        else if (strcmp(w, "why") == 0)
            out->cls = PV_QA_OTHER;
        else /* what, whats, which */
            out->cls = s_in(next, s_time)    ? PV_QA_TIME
                       : s_in(next, s_place) ? PV_QA_PLACE
                                             : PV_QA_WHAT;
        break;
    }
    /* a question: a question mark at the end, or a wh-word first */
    out->is_question = mark || wh_first;
    if (!out->is_question) {
        out->cls = PV_QA_NONE;
        out->fine = 0;
    } else if (out->cls == PV_QA_NONE) {
        out->cls = PV_QA_OTHER;
    }
    out->choice = strstr(task, " or ") != NULL;
}

static const char *const s_months[] = {"january",  "february", "march",  "april",     "may",
                                       "june",     "july",     "august", "september", "october",
                                       "november", "december", NULL};
static const char *const s_numbers[] = {
    "one",     "two",     "three",     "four",     "five",     "six",      "seven",
    "eight",   "nine",    "ten",       "eleven",   "twelve",   "thirteen", "fourteen",
    "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty",   NULL};

pv_qa_shape_t pv_qa_shape(const char *text, size_t n, size_t *n_words)
{
    const char *p = text, *end = text + n, *start;
    char w[S_WORD_MAX];
    size_t words = 0, digit_words = 0, caps = 0, year = 0;
    bool month = false;
    while (s_word(&p, end, w, &start)) {
        if (strcmp(w, "s") == 0 && start > text && start[-1] == '\'')
            continue; /* the possessive of "Papa Gino's" */
        words++;
        bool digits = true;
        for (const char *c = w; *c; c++)
            digits = digits && *c >= '0' && *c <= '9';
        digit_words += digits;
        year += digits && strlen(w) == 4 && (w[0] == '1' || (w[0] == '2' && w[1] == '0'));
        month = month || s_in(w, s_months);
        caps += (*start >= 'A' && *start <= 'Z') || digits || (unsigned char)*start >= 0x80;
    }
    if (n_words)
        *n_words = words;
    if (words == 1 && (strcmp(w, "yes") == 0 || strcmp(w, "no") == 0))
        return PV_QA_YESNO_WORD;
    if (month && digit_words > 0 && words <= 4)
        return PV_QA_DATE;
    if (words == 1 && year == 1)
        return PV_QA_YEAR;
    if (words > 0 && digit_words == words) /* "1,000" is two runs of digits */
        return PV_QA_NUMBER;
    if (words == 1 && s_in(w, s_numbers))
        return PV_QA_NUMBER;
    if (words > 0 && caps == words)
        return PV_QA_NAME;
    return PV_QA_PHRASE;
}

/* ASCII case-insensitive compare of n bytes. */
static bool s_eq_ci(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s_lower(a[i]) != s_lower(b[i]))
            return false;
    return true;
}

size_t pv_qa_count(const char *hay, const char *needle, size_t n, size_t *first)
{
    size_t count = 0;
    if (first)
        *first = SIZE_MAX;
    if (!hay || n == 0)
        return 0;
    char c0 = s_lower(needle[0]);
    for (const char *p = hay; *p; p++) {
        if (s_lower(*p) != c0 || !s_eq_ci(p, needle, n)) /* stops at the NUL: it differs */
            continue;
        bool left = p == hay || !s_alnum((unsigned char)p[-1]) || !s_alnum((unsigned char)*p);
        bool right = !s_alnum((unsigned char)p[n]) || !s_alnum((unsigned char)p[n - 1]);
        if (!left || !right)
            continue;
        if (first && count == 0)
            *first = (size_t)(p - hay);
        count++;
        p += n - 1;
    }
    return count;
}

bool pv_qa_is_title(const char *hay, const char *needle, size_t n)
{
    static const char key[] = "Title: \"";
    const size_t kl = sizeof key - 1;
    for (const char *p = hay ? strstr(hay, key) : NULL; p; p = strstr(p + kl, key))
        if (s_eq_ci(p + kl, needle, n) && p[kl + n] == '"')
            return true;
    return false;
}

static const char *const s_qstop[] = {
    "who",   "whom", "whose", "when", "where", "what", "whats", "which", "how",   "why",   "is",
    "are",   "was",  "were",  "do",   "does",  "did",  "can",   "could", "has",   "have",  "had",
    "be",    "been", "being", "the",  "an",    "of",   "in",    "on",    "at",    "to",    "for",
    "from",  "by",   "with",  "as",   "into",  "and",  "or",    "but",   "that",  "this",  "these",
    "those", "it",   "its",   "he",   "she",   "his",  "her",   "they",  "their", "them",  "him",
    "there", "both", "than",  "same", "also",  "name", "named", "not",   "after", "about", "other",
    "any",   "one",  "first", "will", "would", "so",   "such",  "if",    "then",  "most",  "more",
    "s",     "we",   "you",   NULL};

/* featurize.h hash of the word [a, b), lower-cased (cut at PV_FEAT_WORD_MAX bytes). */
static uint64_t s_word_hash(const char *a, const char *b)
{
    char buf[PV_FEAT_WORD_MAX];
    size_t bl = 0;
    for (const char *c = a; c < b && bl < sizeof buf; c++)
        buf[bl++] = s_lower(*c);
    return pv_feat_hash(buf, bl);
}

/* The word of hay just before *p (*p moves to its start) or just after it (*p moves to its
 * end), not across a line break: [*a, *b). false when there is none. */
static bool s_word_next(const char *hay, const char **p, bool before, const char **a,
                        const char **b)
{
    const char *q = *p;
    if (before) {
        while (q > hay && !s_alnum((unsigned char)q[-1]) && q[-1] != '\n')
            q--;
        if (q == hay || q[-1] == '\n')
            return false;
        *b = q;
        while (q > hay && s_alnum((unsigned char)q[-1]))
            q--;
        *a = q;
    } else {
        while (*q && !s_alnum((unsigned char)*q) && *q != '\n')
            q++;
        if (!*q || *q == '\n')
            return false;
        *a = q;
        while (s_alnum((unsigned char)*q))
            q++;
        *b = q;
    }
    *p = q;
    return true;
}

size_t pv_qa_content_words(const char *text, uint64_t *out, size_t cap)
{
    size_t n = 0;
    if (!text)
        return 0;
    const char *p = text, *end = text + strlen(text), *start;
    char w[S_WORD_MAX];
    while (n < cap && s_word(&p, end, w, &start)) {
        size_t len = (size_t)(p - start);
        if (len < 2 || s_in(w, s_qstop))
            continue;
        uint64_t h = s_word_hash(start, p);
        bool seen = false;
        for (size_t i = 0; i < n && !seen; i++)
            seen = out[i] == h;
        if (!seen)
            out[n++] = h;
    }
    return n;
}

/* The bit of q that the word [a, b) of hay hits, or 0. */
static uint64_t s_qbit(const char *a, const char *b, const uint64_t *q, size_t n_q)
{
    uint64_t h = s_word_hash(a, b);
    for (size_t i = 0; i < n_q; i++)
        if (q[i] == h)
            return 1ULL << i;
    return 0;
}

size_t pv_qa_window_overlap(const char *hay, const char *needle, size_t n, const uint64_t *q,
                            size_t n_q, size_t window)
{
    size_t best = 0;
    if (!hay || n == 0 || n_q == 0)
        return 0;
    if (n_q > 64)
        n_q = 64;
    size_t off = 0, len = strlen(hay);
    for (;;) {
        size_t first;
        if (off >= len || pv_qa_count(hay + off, needle, n, &first) == 0)
            break;
        const char *m = hay + off + first, *me = m + n;
        /* a match inside a word at hay + off's left edge is no mention: pv_qa_count checked
         * only the bytes it sees, so look one byte back */
        bool inside = m > hay && m == hay + off && s_alnum((unsigned char)m[-1]) &&
                      s_alnum((unsigned char)m[0]);
        uint64_t hit = 0;
        /* the words before: walk back over `window` words, stopping at a line break */
        const char *p = m, *a, *b;
        for (size_t k = 0; !inside && k < window && s_word_next(hay, &p, true, &a, &b); k++)
            hit |= s_qbit(a, b, q, n_q);
        p = me;
        for (size_t k = 0; !inside && k < window && s_word_next(hay, &p, false, &a, &b); k++)
            hit |= s_qbit(a, b, q, n_q);
        size_t c = (size_t)__builtin_popcountll(hit);
        best = c > best ? c : best;
        off = (size_t)(me - hay);
    }
    return best;
}

uint64_t pv_qa_next_word(const char *hay, size_t off, bool before)
{
    if (!hay)
        return 0;
    const char *a, *b, *p = hay + off;
    return s_word_next(hay, &p, before, &a, &b) ? s_word_hash(a, b) : 0;
}
