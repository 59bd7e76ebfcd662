/* llm_text.h - text helpers of the LLM judge: a bounded growable string, clipping untrusted
 * text for a prompt or a tool result, and the words a lexical search compares.
 *
 * Everything here treats its input as untrusted bytes: clipping never splits a UTF-8
 * sequence, replaces invalid UTF-8 bytes with '?' and control characters (but newline) with
 * spaces, so the result is always valid UTF-8 that JSON (jansson) accepts.
 */
#ifndef PV_LLM_TEXT_H
#define PV_LLM_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common/err.h"

/* A growable string that never exceeds `max` bytes (plus the NUL): appends past the bound
 * are cut and set `over`. data is NUL-terminated whenever it is not NULL. */
typedef struct pv_llm_buf {
    char *data;
    size_t len, cap, max;
    bool over; /* something was cut at the bound */
    bool oom;  /* an allocation failed: the content is incomplete */
} pv_llm_buf_t;

/* Start an empty buffer bounded by max_bytes (> 0). Allocates on first append. */
void pv_llm_buf_init(pv_llm_buf_t *b, size_t max_bytes);

/* Free the buffer's memory and reset it to empty (the bound stays). NULL-safe. */
void pv_llm_buf_free(pv_llm_buf_t *b);

/* Append n bytes / a NUL-terminated string / printf-style text, cut at the bound. */
void pv_llm_buf_putn(pv_llm_buf_t *b, const char *s, size_t n);
void pv_llm_buf_put(pv_llm_buf_t *b, const char *s);
void pv_llm_buf_printf(pv_llm_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append `s` made safe (see above), at most max_bytes of it; when cut, " [...]" follows.
 * Newlines become spaces when `one_line`. NULL s appends nothing. */
void pv_llm_buf_put_clipped(pv_llm_buf_t *b, const char *s, size_t max_bytes, bool one_line);

/* The error of a buffer: PV_ERR_NOMEM after a failed allocation, PV_ERR_LIMIT when cut,
 * PV_OK otherwise. */
pv_err_t pv_llm_buf_status(const pv_llm_buf_t *b);

/* A NUL-terminated malloc'd copy of `s` made safe and clipped as pv_llm_buf_put_clipped;
 * NULL when out of memory. The caller frees it. */
char *pv_llm_clip_dup(const char *s, size_t max_bytes, bool one_line);

/* Words of a lexical match: maximal runs of ASCII letters and digits and of non-ASCII bytes,
 * lower-cased (ASCII only), at least 2 bytes, at most PV_LLM_WORD_MAX - 1 bytes (longer
 * runs are cut). pv_llm_next_word() reads the next word of *p into word[] and advances *p;
 * returns false at the end. */
#define PV_LLM_WORD_MAX 48
bool pv_llm_next_word(const char **p, char word[PV_LLM_WORD_MAX]);

/* True when `text` contains the word `word` (as pv_llm_next_word splits it). */
bool pv_llm_has_word(const char *text, const char *word);

/* True when a and b are equal ignoring ASCII case, leading/trailing whitespace and runs of
 * whitespace inside (an action a model copies back). */
bool pv_llm_same_action(const char *a, const char *b);

/* An integer from untrusted JSON: a JSON integer, or a real with an integral value below
 * 1e15 in magnitude (models write 3.0). Returns false for anything else. */
bool pv_llm_json_int(const json_t *v, long long *out);

/* Trim an untrusted answer in place: surrounding whitespace and one Markdown ``` fence (with
 * its info string, e.g. ```json). *text and *len are moved to what is left. */
void pv_llm_unfence(const char **text, size_t *len);

#endif
