/* qa_feat.h - what a candidate scorer needs to know about a question and a candidate
 * answer, beyond bags of words: the question's class (its wh-word or leading auxiliary),
 * the candidate's shape (yes/no, year, number, date, name, phrase) and where the candidate
 * occurs in a text (mentions, position, as a document title). Plain text functions, ASCII
 * case folding, no allocation; bow_mlp.c turns them into hashed cross features.
 *
 * The classes follow the answer types QA systems have long keyed on (Li & Roth 2002,
 * "Learning Question Classifiers": HUMAN, LOCATION, NUMERIC:date / count, ...): a question
 * is classed by its first wh-word and the word after it, or as yes/no when it starts with
 * an auxiliary verb (is, are, was, were, do, does, did, can, could, has, have, had).
 */
#ifndef PV_POLICY_QA_FEAT_H
#define PV_POLICY_QA_FEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum pv_qa_class {
    PV_QA_NONE = 0,   /* not a question */
    PV_QA_PERSON = 1, /* who, whom, whose */
    PV_QA_TIME = 2,   /* when; what / which + year, date, month, day, century, decade */
    PV_QA_PLACE = 3,  /* where; what / which + city, country, state, county, town, place,
                         location, region, island, continent */
    PV_QA_COUNT = 4,  /* how many, how much */
    PV_QA_YESNO = 5,  /* starts with an auxiliary verb */
    PV_QA_WHAT = 6,   /* what / which + anything else ("which film", "what award") */
    PV_QA_OTHER = 7,  /* how (other), why, or a question mark without a wh-word */
} pv_qa_class_t;

typedef struct pv_qa_question {
    bool is_question; /* ends with '?' or starts with a wh-word */
    pv_qa_class_t cls;
    uint64_t fine; /* featurize.h hash of the wh-word and the next word ("which film");
                      of the auxiliary alone for yes/no; 0 when none */
    bool choice;   /* the question offers alternatives: " or " occurs in it */
} pv_qa_question_t;

/* Class `task` (a NUL-terminated question, any case) into *out. Never fails; a text that is
 * no question gets is_question false and class PV_QA_NONE. */
void pv_qa_question(const char *task, pv_qa_question_t *out);

typedef enum pv_qa_shape {
    PV_QA_PHRASE = 0, /* anything else (lower-case words) */
    PV_QA_YESNO_WORD = 1,
    PV_QA_YEAR = 2,   /* four digits, 1000-2099 */
    PV_QA_NUMBER = 3, /* other digits (with , or . inside), or a number word one..twenty */
    PV_QA_DATE = 4,   /* a month name with a day or a year ("2 March 1972", "July 1934") */
    PV_QA_NAME = 5,   /* every word starts with a capital letter or a digit */
} pv_qa_shape_t;

/* Shape of text[0..n) (an answer candidate's argument); *n_words (may be NULL) gets its
 * number of words (runs of ASCII letters and digits; a possessive "'s" is none). Bytes
 * outside ASCII separate words, so "Rémi" reads as "R" and "mi". */
pv_qa_shape_t pv_qa_shape(const char *text, size_t n, size_t *n_words);

/* Occurrences of needle[0..n) in hay as whole words (ASCII case-insensitive; the bytes
 * around a match are not letters or digits). *first (may be NULL) gets the offset of the
 * first one, or SIZE_MAX. 0 for an empty needle. */
size_t pv_qa_count(const char *hay, const char *needle, size_t n, size_t *first);

/* Does hay name needle[0..n) as a document title, `Title: "needle"` (Search-R1's
 * observation format: `Doc 1(Title: "Paul Walker") ...`), ASCII case-insensitive? */
bool pv_qa_is_title(const char *hay, const char *needle, size_t n);

/* The content words of a question: the distinct featurize.h word hashes (XXH3 of the
 * lower-cased word, as pv_feat_words) of text's words that are neither stop words (wh-words,
 * auxiliaries, articles, prepositions, pronouns, conjunctions: a fixed list of 80) nor
 * shorter than 2 bytes, in order of first occurrence, at most cap (the rest are dropped)
 * into out. Returns their number. "Jaclyn Stapp is married to the former frontman of a
 * band that disbanded in what year?" gives jaclyn, stapp, married, former, frontman, band,
 * disbanded, year. */
size_t pv_qa_content_words(const char *text, uint64_t *out, size_t cap);

/* The question-word overlap around a candidate's mentions (the sliding-window answer
 * selection of Richardson et al. 2013, MCTest, and Rajpurkar et al. 2016, SQuAD's
 * baseline): for each whole-word mention of needle[0..n) in hay (as pv_qa_count), the
 * number of distinct words of q[0..n_q) (pv_qa_content_words hashes, n_q <= 64) among the
 * `window` words before and the `window` words after the mention, a window never crossing
 * a line break (a passage of Search-R1's observation is one line); words inside the
 * mention do not count. Returns the largest over the mentions, 0 when there is none. */
size_t pv_qa_window_overlap(const char *hay, const char *needle, size_t n, const uint64_t *q,
                            size_t n_q, size_t window);

/* The word next to a mention: the featurize.h hash of the lower-cased word that ends
 * before hay[off] (before = true) or starts at or after hay[off] (before = false), on the
 * same line (a passage of Search-R1's observation is one line); 0 when there is none.
 * With a mention at hay[m .. m + n): before uses off = m, after off = m + n. In "the duo
 * Love and Theft covered it", the words around "Love and Theft" are "duo" and "covered". */
uint64_t pv_qa_next_word(const char *hay, size_t off, bool before);

#endif
