/* test_qa_feat.c - question classes, candidate shapes and mentions (qa_feat.h) on cases
 * worked by hand, HotpotQA's questions among them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/policy/featurize.h"
#include "common/policy/qa_feat.h"

static void s_class(const char *q, bool is_q, pv_qa_class_t cls, bool choice)
{
    pv_qa_question_t out;
    pv_qa_question(q, &out);
    if (out.is_question != is_q || out.cls != cls || out.choice != choice)
        fail_msg("'%s': question %d class %d choice %d, want %d %d %d", q, out.is_question, out.cls,
                 out.choice, is_q, cls, choice);
    assert_true((out.fine != 0) == (cls != PV_QA_NONE && cls != PV_QA_OTHER) || cls == PV_QA_OTHER);
}

static void test_question_classes(void **state)
{
    (void)state;
    s_class("Who directed the 1940 film in which John Arledge appeared?", true, PV_QA_PERSON,
            false);
    s_class("Kam Heskin plays Paige Morgan in a 2004 film directed by who?", true, PV_QA_PERSON,
            false);
    s_class("In what year was the singer who popularized it born?", true, PV_QA_TIME, false);
    s_class("When was the  Argentine former footballer born?", true, PV_QA_TIME, false);
    s_class("In what state is the manufacturer of Bisquick headquartered?", true, PV_QA_PLACE,
            false);
    s_class("Where was the first governor from?", true, PV_QA_PLACE, false);
    s_class("How many different schools does the university have?", true, PV_QA_COUNT, false);
    s_class("Are both Coldplay and Pierre Bouvier from the same country?", true, PV_QA_YESNO,
            false);
    s_class("Which movie was filmed first \"The Guest\" or \"You're Next\"?", true, PV_QA_WHAT,
            true);
    s_class("whats the famous bavagheet by arun date?", true, PV_QA_WHAT, false);
    /* a wh-word first without a question mark; a statement is no question */
    s_class("who is a British physicist and also a chief scientific adviser", true, PV_QA_PERSON,
            false);
    s_class("Your task is to: put a clean potato in fridge.", false, PV_QA_NONE, false);
    s_class("i need a desk which is white, and price lower than 50.00 dollars", false, PV_QA_NONE,
            false);
    s_class("can you get me a blue one", false, PV_QA_NONE, false); /* no '?' */
    s_class("", false, PV_QA_NONE, false);
    /* the fine class is the wh-word and the next word */
    pv_qa_question_t a, b, c;
    pv_qa_question("Which film won?", &a);
    pv_qa_question("Which film did he direct?", &b);
    pv_qa_question("Which award did it win?", &c);
    assert_true(a.fine == b.fine && a.fine != c.fine);
}

static void s_shape(const char *text, pv_qa_shape_t want, size_t words)
{
    size_t n;
    pv_qa_shape_t got = pv_qa_shape(text, strlen(text), &n);
    if (got != want || n != words)
        fail_msg("'%s': shape %d (%zu words), want %d (%zu)", text, got, n, want, words);
}

static void test_shapes(void **state)
{
    (void)state;
    s_shape("yes", PV_QA_YESNO_WORD, 1);
    s_shape("No", PV_QA_YESNO_WORD, 1);
    s_shape("1988", PV_QA_YEAR, 1);
    s_shape("2004", PV_QA_YEAR, 1);
    s_shape("393", PV_QA_NUMBER, 1);
    s_shape("3000", PV_QA_NUMBER, 1); /* not 1000-2099 */
    s_shape("1,000", PV_QA_NUMBER, 2);
    s_shape("six", PV_QA_NUMBER, 1);
    s_shape("2 March 1972", PV_QA_DATE, 3);
    s_shape("March 26, 1986", PV_QA_DATE, 3);
    s_shape("22 November", PV_QA_DATE, 2);
    s_shape("March", PV_QA_NAME, 1); /* a month alone is a name */
    s_shape("Bath, Maine", PV_QA_NAME, 2);
    s_shape("Teen Titans Go!", PV_QA_NAME, 3);
    s_shape("World War II", PV_QA_NAME, 3);
    s_shape("Mark Masons' Hall", PV_QA_NAME, 3);
    s_shape("Papa Gino's", PV_QA_NAME, 2); /* a possessive "s" is no word */
    s_shape("New York and New Jersey campaign", PV_QA_PHRASE, 6);
    s_shape("a failed coup attempt", PV_QA_PHRASE, 4);
    s_shape("", PV_QA_PHRASE, 0);
}

static void test_mentions_and_titles(void **state)
{
    (void)state;
    const char *obs = "\n\n<information>Doc 1(Title: \"Paul Walker\") Paul Walker was born in "
                      "Glendale. paul walker's films\nDoc 2(Title: \"Glendale\") Glendale is a "
                      "city; Glendalers live there.</information>\n\n";
    size_t first;
    assert_int_equal(pv_qa_count(obs, "Paul Walker", 11, &first), 3); /* title, text, lower */
    assert_int_equal(first, strstr(obs, "Paul Walker") - obs);
    assert_int_equal(pv_qa_count(obs, "Glendale", 8, NULL), 3); /* "Glendalers" is another word */
    assert_int_equal(pv_qa_count(obs, "Walk", 4, &first), 0);
    assert_int_equal(first, SIZE_MAX);
    assert_int_equal(pv_qa_count(obs, "", 0, NULL), 0);
    assert_int_equal(pv_qa_count("born 1971.", "1971", 4, NULL), 1);
    assert_int_equal(pv_qa_count("abc", "abcd", 4, NULL), 0); /* needle past the end */
    assert_true(pv_qa_is_title(obs, "Paul Walker", 11));
    assert_true(pv_qa_is_title(obs, "glendale", 8));
    assert_false(pv_qa_is_title(obs, "Paul", 4));
    assert_false(pv_qa_is_title(obs, "Los Angeles", 11));
    assert_false(pv_qa_is_title(NULL, "x", 1));
}

/* The featurize.h hash of a lower-case word, as pv_qa_content_words gives it. */
static uint64_t s_h(const char *w)
{
    return pv_feat_hash(w, strlen(w));
}

static void test_content_words(void **state)
{
    (void)state;
    uint64_t q[16];
    /* a HotpotQA test question: stop words, wh-words and auxiliaries out, order kept */
    size_t n = pv_qa_content_words(
        "Jaclyn Stapp is married to the former frontman of a band that disbanded in what year?", q,
        16);
    const char *want[] = {"jaclyn",   "stapp", "married",   "former",
                          "frontman", "band",  "disbanded", "year"};
    assert_int_equal(n, 8);
    for (size_t i = 0; i < n; i++)
        if (q[i] != s_h(want[i]))
            fail_msg("word %zu is not '%s'", i, want[i]);
    /* distinct words only, case folded; cap respected */
    n = pv_qa_content_words("Band BAND band? Which band, Love or Theft?", q, 16);
    assert_int_equal(n, 3); /* band, love, theft */
    assert_true(q[0] == s_h("band") && q[1] == s_h("love") && q[2] == s_h("theft"));
    assert_int_equal(pv_qa_content_words("Jaclyn Stapp married former", q, 2), 2);
    assert_int_equal(pv_qa_content_words("Who is it?", q, 16), 0);
    assert_int_equal(pv_qa_content_words(NULL, q, 16), 0);
}

/* The passage of the HotpotQA sample's corpus (id 73) as Search-R1's observation shows it. */
static const char s_passage[] =
    "Doc 1(Title: \"Love and Theft (Love and Theft album)\") Love and Theft is the second studio "
    "album by Eric Gunderson and Stephen Barker Liles in the American country music duo Love and "
    "Theft. It was released on July 24, 2012 via RCA Nashville. The album's third single, \"If "
    "You Ever Get Lonely\", was released to country radio on June 3, 2013.\n"
    "Doc 2(Title: \"John Waite\") This song was covered by John Waite on his 2011 album.";

static void test_window_overlap(void **state)
{
    (void)state;
    uint64_t q[32];
    size_t nq = pv_qa_content_words(
        "If You Ever Get Lonely was covered by what Lyric Street Records-affiliated band?", q, 32);
    assert_int_equal(nq, 9); /* ever get lonely covered lyric street records affiliated band */
    /* "June 3, 2013" follows "If You Ever Get Lonely" within 10 words: ever, get, lonely */
    assert_int_equal(pv_qa_window_overlap(s_passage, "June 3, 2013", 12, q, nq, 10), 3);
    /* a narrower window reaches fewer of them: "Lonely", was, released, to, country, radio,
     * on | June: 7 words back to "Lonely", 9 to "Ever" */
    assert_int_equal(pv_qa_window_overlap(s_passage, "June 3, 2013", 12, q, nq, 7), 1);
    /* the best of several mentions; the line break ends a window: "covered" is on the next
     * passage's line, so Love and Theft's mentions never see it */
    size_t lt = pv_qa_window_overlap(s_passage, "Love and Theft", 14, q, nq, 10);
    assert_int_equal(lt, 0);
    assert_int_equal(pv_qa_window_overlap(s_passage, "John Waite", 10, q, nq, 10), 1);
    /* words of the mention itself do not count; no mention, an empty needle: 0 */
    assert_int_equal(pv_qa_window_overlap("covered band", "covered band", 12, q, nq, 10), 0);
    assert_int_equal(pv_qa_window_overlap(s_passage, "Pulitzer Prize", 14, q, nq, 10), 0);
    assert_int_equal(pv_qa_window_overlap(s_passage, "", 0, q, nq, 10), 0);
    /* a match inside a word is no mention */
    assert_int_equal(pv_qa_window_overlap("lonely xband covered", "band", 4, q, nq, 10), 0);
    assert_int_equal(pv_qa_window_overlap("lonely x band covered", "band", 4, q, nq, 10), 2);
}

static void test_next_word(void **state)
{
    (void)state;
    const char *m = strstr(s_passage, "duo Love and Theft");
    assert_non_null(m);
    size_t at = (size_t)(m - s_passage) + 4, n = 14;
    assert_true(pv_qa_next_word(s_passage, at, true) == s_h("duo"));
    assert_true(pv_qa_next_word(s_passage, at + n, false) == s_h("it")); /* ". It was" */
    /* a line break ends the search; the start and end of the text give 0 */
    const char *nl = strchr(s_passage, '\n');
    size_t off = (size_t)(nl - s_passage);
    assert_true(pv_qa_next_word(s_passage, off, false) == 0);
    assert_true(pv_qa_next_word(s_passage, off + 1, true) == 0);
    assert_true(pv_qa_next_word("Theft", 0, true) == 0);
    assert_true(pv_qa_next_word("Theft", 5, false) == 0);
    assert_true(pv_qa_next_word("The BAND, covered", 3, false) == s_h("band"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_question_classes),    cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_mentions_and_titles), cmocka_unit_test(test_content_words),
        cmocka_unit_test(test_window_overlap),      cmocka_unit_test(test_next_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
