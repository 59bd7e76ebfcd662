/* webshop_reward.c - WebShop's reward (engine/goal.py get_reward) in C; see webshop.h. */
#include <stdbool.h>
#include <string.h>

#include "common/env/text_util.h"
#include "common/env/webshop.h"

/* engine/normalize.py COLOR_SET, in its order (the first substring wins). */
static const char *const s_colors[] = {
    "alabaster",  "apricot",   "aqua",      "ash",     "asphalt",   "azure",     "banana",
    "beige",      "black",     "blue",      "blush",   "bordeaux",  "bronze",    "brown",
    "burgundy",   "camel",     "camo",      "caramel", "champagne", "charcoal",  "cheetah",
    "chestnut",   "chocolate", "christmas", "coffee",  "cognac",    "copper",    "coral",
    "cranberry",  "cream",     "crystal",   "dark",    "denim",     "eggplant",  "elephant",
    "espresso",   "fuchsia",   "gold",      "granite", "grape",     "graphite",  "grass",
    "gray",       "green",     "grey",      "heather", "indigo",    "ivory",     "ivy",
    "khaki",      "lavender",  "lemon",     "leopard", "light",     "lilac",     "lime",
    "magenta",    "maroon",    "mauve",     "merlot",  "midnight",  "mint",      "mocha",
    "multicolor", "mushroom",  "mustard",   "natural", "navy",      "nude",      "olive",
    "orange",     "peach",     "pewter",    "pink",    "plum",      "purple",    "rainbow",
    "red",        "rose",      "royal",     "rust",    "sand",      "sapphire",  "seashell",
    "silver",     "skull",     "slate",     "steel",   "stone",     "stonewash", "sunflower",
    "tan",        "taupe",     "teal",      "tiger",   "turquoise", "violet",    "walnut",
    "wheat",      "white",     "wine",      "yellow",
};

const char *pv_webshop_normalize_color(const char *s)
{
    for (size_t i = 0; i < sizeof s_colors / sizeof s_colors[0]; i++)
        if (strstr(s, s_colors[i]))
            return s_colors[i];
    return s;
}

/* ---- noun tagging approximation ----------------------------------------------------------- */

static const char *const s_function_words[] = {
    "a",       "an",      "the",   "and",     "or",     "nor",    "but",   "for",     "with",
    "without", "of",      "in",    "on",      "at",     "by",     "to",    "from",    "into",
    "onto",    "over",    "under", "up",      "down",   "out",    "off",   "about",   "above",
    "below",   "between", "among", "through", "during", "before", "after", "against", "per",
    "via",     "vs",      "plus",  "x",       "this",   "that",   "these", "those",   "it",
    "its",     "is",      "are",   "be",      "was",    "were",   "been",  "being",   "has",
    "have",    "had",     "do",    "does",    "did",    "can",    "will",  "would",   "should",
    "may",     "might",   "must",  "not",     "no",     "all",    "any",   "each",    "every",
    "both",    "either",  "some",  "more",    "most",   "less",   "than",  "then",    "as",
    "if",      "when",    "where", "while",   "which",  "who",    "whom",  "whose",   "what",
    "how",     "why",     "there", "here",    "i",      "me",     "my",    "we",      "our",
    "you",     "your",    "he",    "him",     "his",    "she",    "her",   "they",    "them",
    "their",   "one",     "two",   "three",   "four",   "five",   "six",   "seven",   "eight",
    "nine",    "ten",     "very",  "so",      "too",    "also",   "just",  "only",    "s",
};

static const char *const s_participles[] = {
    "listed",    "made",        "designed",    "certified", "based",   "powered",   "inspired",
    "upgraded",  "renewed",     "refurbished", "assorted",  "scented", "unscented", "flavored",
    "sweetened", "unsweetened", "roasted",     "dried",     "wrapped", "fitted",    "lined",
    "padded",    "printed",     "insulated",   "sealed",    "rated",   "approved",  "included",
};

static const char *const s_adjectives[] = {
    "new",       "compatible",  "portable",    "adjustable", "rechargeable", "waterproof",
    "wireless",  "natural",     "organic",     "premium",    "professional", "small",
    "large",     "medium",      "big",         "mini",       "extra",        "super",
    "high",      "low",         "long",        "short",      "soft",         "hard",
    "heavy",     "light",       "lightweight", "durable",    "reusable",     "disposable",
    "free",      "easy",        "best",        "great",      "perfect",      "cute",
    "beautiful", "comfortable", "casual",      "classic",    "modern",       "vintage",
    "elegant",   "stylish",     "sexy",        "slim",       "loose",        "non",
    "stainless", "multi",       "full",        "warm",       "cool",         "cold",
    "hot",       "fresh",       "healthy",     "safe",       "clean",        "clear",
    "dry",       "wet",         "thin",        "thick",      "wide",         "narrow",
    "black",     "white",       "red",         "blue",       "green",        "yellow",
    "pink",      "purple",      "gray",        "grey",       "brown",        "orange",
    "gold",      "silver",      "dark",        "bright",     "double",       "single",
    "triple",    "daily",       "anti",        "electric",   "digital",      "smart",
    "universal", "outdoor",     "indoor",      "womens",     "mens",         "pure",
};

#define S_IN(w, list) PV_TEXT_IN(w, strlen(w), list)

/* Code point of the UTF-8 sequence at p; *len receives its byte count. */
static unsigned s_utf8(const unsigned char *p, size_t *len)
{
    if (p[0] < 0x80) {
        *len = 1;
        return p[0];
    }
    if ((p[0] & 0xe0) == 0xc0 && p[1]) {
        *len = 2;
        return ((p[0] & 0x1fu) << 6) | (p[1] & 0x3fu);
    }
    if ((p[0] & 0xf0) == 0xe0 && p[1] && p[2]) {
        *len = 3;
        return ((p[0] & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
    }
    *len = 1;
    return 0xfffd;
}

/* A separator for the tokenizer: white space and punctuation that spaCy splits off. */
static bool s_is_sep(unsigned cp)
{
    if (cp <= ' ')
        return true;
    if (cp < 0x80)
        return strchr(",;:!?()[]{}\"/|&+*#<>=~^`@$%\\", (int)cp) != NULL;
    return (cp >= 0xa0 && cp <= 0xbf) || (cp >= 0x2000 && cp <= 0x206f) ||
           (cp >= 0x2100 && cp <= 0x214f) || (cp >= 0x3000 && cp <= 0x303f) ||
           (cp >= 0xff00 && cp <= 0xff0f) || (cp >= 0xff1a && cp <= 0xff20);
}

static bool s_is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Decide whether one raw token (no separators inside) is a noun; write it lower-cased. */
static bool s_noun(const char *t, size_t n, char *out, size_t cap)
{
    /* possessive 's / ’s and surrounding periods, hyphens, apostrophes */
    if (n >= 2 && t[n - 2] == '\'' && (t[n - 1] == 's' || t[n - 1] == 'S'))
        n -= 2;
    if (n >= 4 && (unsigned char)t[n - 4] == 0xe2 && (unsigned char)t[n - 3] == 0x80 &&
        (unsigned char)t[n - 2] == 0x99 && (t[n - 1] == 's' || t[n - 1] == 'S'))
        n -= 4;
    while (n && (t[0] == '.' || t[0] == '-' || t[0] == '\'')) {
        t++;
        n--;
    }
    bool inner_dot = false;
    for (size_t i = 0; i + 1 < n; i++)
        if (t[i] == '.')
            inner_dot = true;
    while (n && ((!inner_dot && t[n - 1] == '.') || t[n - 1] == '-' || t[n - 1] == '\''))
        n--;
    if (n == 0 || n >= cap)
        return false;
    bool letter = false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c >= '0' && c <= '9')
            return false; /* NUM-like: 2, 3.1, 4K, 2pcs */
        if (s_is_alpha(c) || c >= 0x80)
            letter = true;
    }
    if (pv_text_py_lower(out, cap, t, n) == PV_TEXT_TOO_LONG) /* t.text.lower() */
        return false;
    if (!letter || S_IN(out, s_function_words) || S_IN(out, s_participles))
        return false;
    bool lower_written = t[0] >= 'a' && t[0] <= 'z';
    return !(lower_written && S_IN(out, s_adjectives));
}

size_t pv_webshop_name_nouns(const char *name, char *buf, size_t cap)
{
    const unsigned char *u = (const unsigned char *)name;
    size_t count = 0, used = 0;
    size_t i = 0;
    while (u[i]) {
        size_t len;
        unsigned cp = s_utf8(u + i, &len);
        if (s_is_sep(cp)) {
            i += len;
            continue;
        }
        size_t j = i;
        for (;;) { /* token end: a separator, or a hyphen between letters */
            size_t l2;
            if (!u[j] || s_is_sep(s_utf8(u + j, &l2)))
                break;
            if (u[j] == '-' && j > i && s_is_alpha(u[j - 1]) && s_is_alpha(u[j + 1]))
                break;
            j += l2;
        }
        char word[256];
        if (s_noun(name + i, j - i, word, sizeof word)) {
            size_t wl = strlen(word);
            if (used + wl + 1 <= cap) {
                memcpy(buf + used, word, wl + 1);
                used += wl + 1;
                count++;
            }
        }
        i = u[j] == '-' ? j + 1 : j;
    }
    return count;
}

/* ---- the reward terms ------------------------------------------------------------------- */

/* `needle in text` on an already lower-cased text. */
static bool s_in_text(const pv_webshop_item_t *item, const char *needle)
{
    return strstr(item->title_lower, needle) || strstr(item->bullets_lower, needle) ||
           strstr(item->description_lower, needle);
}

#define S_MAX_LEVELS 32

/* Split "A › B › C" on '›' and strip each level; returns the count. */
static size_t s_levels(const char *s, const char **start, size_t *len)
{
    size_t n = 0;
    const char *p = s;
    while (n < S_MAX_LEVELS) {
        const char *q = strstr(p, "\xe2\x80\xba");
        const char *end = q ? q : p + strlen(p);
        size_t skip;
        len[n] = pv_text_py_strip(p, (size_t)(end - p), &skip); /* x.strip() */
        start[n++] = p + skip;
        if (!q)
            break;
        p = q + 3;
    }
    return n;
}

static bool s_category_match(const char *purchased, const char *goal)
{
    const char *ps[S_MAX_LEVELS], *gs[S_MAX_LEVELS];
    size_t pl[S_MAX_LEVELS], gl[S_MAX_LEVELS];
    size_t np = s_levels(purchased, ps, pl), ng = s_levels(goal, gs, gl);
    size_t common = 0;
    for (size_t i = 0; i < np; i++) {
        bool dup = false;
        for (size_t k = 0; k < i && !dup; k++)
            dup = pl[k] == pl[i] && !memcmp(ps[k], ps[i], pl[i]);
        if (dup)
            continue;
        for (size_t j = 0; j < ng; j++)
            if (gl[j] == pl[i] && !memcmp(gs[j], ps[i], pl[i])) {
                common++;
                break;
            }
    }
    return common >= 2;
}

static double s_title_score(const char *purchased, const char *goal)
{
    char pb[2048], gb[2048];
    size_t np = pv_webshop_name_nouns(purchased, pb, sizeof pb);
    size_t ng = pv_webshop_name_nouns(goal, gb, sizeof gb);
    if (ng == 0)
        return 0.2;
    /* |set(desired) & set(purchased)| / len(desired) */
    size_t inter = 0;
    const char *g = gb;
    for (size_t i = 0; i < ng; i++, g += strlen(g) + 1) {
        bool seen = false;
        const char *g2 = gb;
        for (size_t k = 0; k < i && !seen; k++, g2 += strlen(g2) + 1)
            seen = strcmp(g2, g) == 0;
        if (seen)
            continue;
        const char *p = pb;
        for (size_t j = 0; j < np; j++, p += strlen(p) + 1)
            if (strcmp(p, g) == 0) {
                inter++;
                break;
            }
    }
    return (double)inter / (double)ng;
}

/* normalize_color of a (name, value) tuple: `c in tuple` tests equality with an element, so
 * only a name or value that is exactly a colour maps; NULL when none does. */
static const char *s_color_of_pair(const char *name, const char *value)
{
    for (size_t i = 0; i < sizeof s_colors / sizeof s_colors[0]; i++)
        if (strcmp(name, s_colors[i]) == 0 || strcmp(value, s_colors[i]) == 0)
            return s_colors[i];
    return NULL;
}

uint64_t pv_webshop_option_matches(const pv_webshop_target_t *goal, const char *value)
{
    uint64_t mask = 0;
    const char *pv = pv_webshop_normalize_color(value);
    for (size_t g = 0; g < goal->n_options && g < 64; g++) {
        const char *name = goal->option_names ? goal->option_names[g] : NULL;
        const char *gv = goal->options[g];
        const char *gs = name ? s_color_of_pair(name, gv) : pv_webshop_normalize_color(gv);
        int score =
            gs ? pv_text_token_set_ratio(pv, gs) : pv_text_token_set_ratio_pair(pv, name, gv);
        if (score > PV_WEBSHOP_MATCH_MIN)
            mask |= (uint64_t)1 << g;
    }
    return mask;
}

/* get_option_reward(purchased_options, goal_options): each goal option counts once when a
 * purchased value matches it with token_set_ratio > 85, both sides through normalize_color
 * (goals of more than 64 options are compared on their first 64). */
static uint64_t s_option_matches(const pv_webshop_target_t *goal, const char *const *bought,
                                 size_t n_bought)
{
    uint64_t mask = 0;
    for (size_t k = 0; k < n_bought; k++)
        mask |= pv_webshop_option_matches(goal, bought[k]);
    return mask;
}

void pv_webshop_score(const pv_webshop_item_t *item, const pv_webshop_target_t *goal, double price,
                      const char *const *bought, size_t n_bought, pv_webshop_score_t *out)
{
    memset(out, 0, sizeof *out);
    /* get_type_reward */
    out->query_match = strcmp(item->query, goal->query) == 0;
    out->category_match = s_category_match(item->product_category, goal->product_category);
    out->title_score = s_title_score(item->name, goal->name);
    double r_type = 1.0;
    if (!(out->query_match || out->category_match || out->title_score > 0.2))
        r_type = 0.5;
    if (out->title_score < 0.1)
        r_type = 0.1;
    if (out->title_score == 0.0)
        r_type = 0.0;
    out->r_type = r_type;
    out->price_ok = price <= goal->price_upper;

    /* get_attribute_reward */
    for (size_t g = 0; g < goal->n_attributes; g++) {
        const char *ga = goal->attributes[g];
        bool matched = false;
        for (size_t p = 0; p < item->n_attributes && !matched; p++)
            matched = pv_text_token_set_ratio(item->attributes[p], ga) > PV_WEBSHOP_MATCH_MIN;
        if (matched || s_in_text(item, ga)) {
            out->n_attr_match++;
            if (g < 64)
                out->attr_matched |= (uint64_t)1 << g;
        }
    }

    out->option_matched = s_option_matches(goal, bought, n_bought);
    out->n_option_match = (uint32_t)__builtin_popcountll(out->option_matched);

    /* (num_attr_matches + num_option_matches + r_price) / (len(attributes) +
     * len(goal_options) + 1) * r_type */
    double num = (double)out->n_attr_match + (double)out->n_option_match + (out->price_ok ? 1 : 0);
    double den = (double)goal->n_attributes + (double)goal->n_options + 1.0;
    out->reward = num / den * r_type;
}
