/* text_util.h - small text helpers shared by the webshop and searchqa environments.
 *
 * Everything here works on NUL-terminated UTF-8 bytes, allocates nothing and is safe to
 * call from any thread. Where a function imitates a Python reference, the comment names
 * the reference and says where the byte-level C version differs from Python's code-point
 * semantics (only for non-ASCII text).
 */
#ifndef PV_TEXT_UTIL_H
#define PV_TEXT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- bounded string builder ------------------------------------------------------------ */

/* Appends into a caller buffer of `cap` bytes; never writes past it, always NUL-terminates,
 * and records `overflow` when text had to be cut. */
typedef struct pv_sbuf {
    char *p;
    size_t len;
    size_t cap;
    bool overflow;
} pv_sbuf_t;

/* Start an empty string in buf[0..cap) (cap >= 1). */
void pv_sbuf_init(pv_sbuf_t *b, char *buf, size_t cap);

/* Append `n` bytes of `s` / the string `s` / printf-formatted text. */
void pv_sbuf_putn(pv_sbuf_t *b, const char *s, size_t n);
void pv_sbuf_put(pv_sbuf_t *b, const char *s);
void pv_sbuf_printf(pv_sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- hashing ----------------------------------------------------------------------------- */

/* FNV-1a 64-bit over `len` bytes, continuing from `h` (start with PV_FNV64_INIT). */
#define PV_FNV64_INIT 0xcbf29ce484222325ull
uint64_t pv_fnv1a64(uint64_t h, const void *data, size_t len);

/* ---- case and words ---------------------------------------------------------------------- */

/* Copy `src` into dst[0..cap) lower-casing ASCII letters (other bytes unchanged). Returns
 * the length written (the copy is cut at cap - 1 bytes). Python's str.lower() also lowers
 * non-ASCII letters; the callers only compare lowered texts with each other. */
size_t pv_text_lower(char *dst, size_t cap, const char *src);

/* True when `c` is an ASCII letter or digit. */
bool pv_text_is_alnum(int c);

/* True when the `n` bytes at w equal one of the `count` strings of `list`. */
bool pv_text_in_list(const char *w, size_t n, const char *const *list, size_t count);
#define PV_TEXT_IN(w, n, list) pv_text_in_list(w, n, list, sizeof list / sizeof list[0])

/* ---- thefuzz token_set_ratio ------------------------------------------------------------- */

/* Longest input (bytes) the fuzzy ratio looks at; longer inputs are cut there. WebShop
 * compares attributes and option values, which are far shorter. */
#define PV_TEXT_RATIO_MAX 512

/* fuzz.token_set_ratio(a, b) of thefuzz 0.19 with python-Levenshtein (Debian's
 * python3-thefuzz), the matcher WebShop's reward uses (web_agent_site/engine/goal.py):
 *   full_process: drop characters U+0080..U+00FF, every non-word character -> space,
 *                 lower-case, strip;  empty -> 0
 *   token sets T1, T2; sect = sorted(T1 & T2), d12 = sorted(T1 - T2), d21 = sorted(T2 - T1)
 *   c12 = (sect + " " + d12).strip(), c21 = (sect + " " + d21).strip()
 *   result = max(ratio(sect, c12), ratio(sect, c21), ratio(c12, c21))
 *   ratio(x, y) = 100 if x == y, 0 if either is empty, else
 *                 round_half_even(100 * (|x| + |y| - indel(x, y)) / (|x| + |y|))
 * where indel is the insertion/deletion edit distance (Levenshtein.ratio). Returns 0..100.
 * Byte-level: multi-byte characters above U+00FF count as several characters (Python
 * counts one), and only ASCII letters are lower-cased. */
int pv_text_token_set_ratio(const char *a, const char *b);

/* ---- Search-R1 answer normalisation ------------------------------------------------------ */

/* normalize_answer(s) of Search-R1 (verl/utils/reward_score/qa_em.py), the SQuAD rule:
 * lower-case, delete ASCII punctuation (Python's string.punctuation), replace the words
 * a / an / the with a space, collapse white space to single spaces and strip. Writes the
 * result into dst[0..cap) (cut at cap - 1) and returns its length.
 * Lower-casing covers ASCII and the 2-byte UTF-8 letters of Latin-1 and Latin Extended-A;
 * bytes >= 0x80 count as word characters except the dashes U+2013/U+2014 and the curly
 * quotes U+2018/2019/201C/201D, and U+00A0 counts as white space (Python: full Unicode). */
size_t pv_text_normalize_answer(char *dst, size_t cap, const char *src);

/* Search-R1's em_check for one golden answer: normalize_answer(pred) ==
 * normalize_answer(gold). Inputs longer than 2 KiB compare their first 2 KiB. */
bool pv_text_em(const char *pred, const char *gold);

/* ---- FTS5 query --------------------------------------------------------------------------- */

/* Turn free text into an FTS5 MATCH expression that ORs its words ("w1" OR "w2" ...), like
 * the bag-of-words query Lucene/Pyserini runs for WebShop and Search-R1's BM25 retriever.
 * Words are maximal runs of ASCII letters/digits or bytes >= 0x80, lower-cased; Lucene's
 * English stop words (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, which Pyserini's default
 * analyser drops) and duplicates are dropped; at most `max_terms`. Returns the number of
 * terms (0: nothing to search for; dst is then ""). */
size_t pv_text_fts_query(char *dst, size_t cap, const char *src, size_t max_terms);

#endif
