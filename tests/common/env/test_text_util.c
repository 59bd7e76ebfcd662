/* test_text_util.c - the text helpers against their Python references: thefuzz 0.19
 * token_set_ratio (numbers printed by Debian's python3-thefuzz 0.19.0 with
 * python3-levenshtein), Search-R1's normalize_answer (outputs of the function in
 * verl/utils/reward_score/qa_em.py run under Python 3.11), WebShop's normalize_color suite
 * (tests of web_agent_site/engine/normalize.py), and the FTS5 query builder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/env/text_util.h"
#include "common/env/webshop.h"

static void test_token_set_ratio_matches_thefuzz(void **state)
{
    (void)state;
    static const struct {
        const char *a, *b;
        int want;
    } cases[] = {
        {"essential oil", "essential oils", 96},
        {"cool powder snow", "powder snow", 100},
        {"grey", "gray", 75},
        {"tea bag", "tea tree", 60},
        {"natural ingredients", "natural ingredient", 97},
        {"long lasting", "long-lasting", 100},
        {"Rose Gold", "rose gold", 100},
        {"x-large", "large", 100},
        {"pack of 12", "12 pack", 100},
        {"easy clean", "easy to clean", 100},
        {"", "abc", 0},
        {"!!!", "abc", 0},
        {"high quality", "quality high", 100},
        {"8 fl oz", "8 fl oz (pack of 2)", 100},
        {"noise cancelling", "noise canceling", 97},
        {"fluoride free", "fluoride", 100},
        {"caf\xc3\xa9 latte", "cafe latte", 95}, /* 'é' is dropped by asciidammit */
        {"leak_proof", "leak proof", 90},        /* '_' is a word character */
        {"dark brown", "brown", 100},
        {"machine wash", "hand wash", 67},
        {"bpa free", "free bpa plastic", 100},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int got = pv_text_token_set_ratio(cases[i].a, cases[i].b);
        if (got != cases[i].want)
            fail_msg("token_set_ratio('%s', '%s') = %d, thefuzz says %d", cases[i].a, cases[i].b,
                     got, cases[i].want);
        /* the ratio is symmetric */
        assert_int_equal(pv_text_token_set_ratio(cases[i].b, cases[i].a), got);
    }
}

static void test_token_set_ratio_by_hand(void **state)
{
    (void)state;
    /* "tea bag" vs "tea tree": sect = "tea", c12 = "tea bag", c21 = "tea tree".
     * ratio(sect, c12) = 200*3/10 = 60; ratio(sect, c21) = 200*3/11 = 54.5 -> 55;
     * ratio(c12, c21): LCS = 4 ("tea "; "bag" and "tree" share nothing) -> 200*4/15 = 53.3
     * -> 53. The maximum is 60. */
    assert_int_equal(pv_text_token_set_ratio("tea bag", "tea tree"), 60);
    /* one token each, nothing in common: sect = "" so only ratio(c12, c21) counts:
     * "abcd" vs "abce": LCS 3 -> 200*3/8 = 75 */
    assert_int_equal(pv_text_token_set_ratio("abcd", "abce"), 75);
    /* an exact half: LCS 5 of 8 + 8 -> 62.5, and Python's round() goes to even: 62 */
    assert_int_equal(pv_text_token_set_ratio("abcdefgh", "abcdexyz"), 62);
}

static void test_normalize_answer_matches_search_r1(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"The Beatles", "beatles"},
        {"Jonny\" Craig", "jonny craig"},
        {"  A  tale of Two  Cities!", "tale of two cities"},
        {"an apple a day", "apple day"},
        {"The-Who", "thewho"},
        {"U.S.A.", "usa"},
        {"Gesellschaft mit beschr\xc3\xa4nkter Haftung",
         "gesellschaft mit beschr\xc3\xa4nkter haftung"},
        {"\xc3\x89"
         "COLE Normale",
         "\xc3\xa9"
         "cole normale"},
        {"theatre anthem", "theatre anthem"},
        {"a-b the_c", "ab thec"},
        {"3,677 seated", "3677 seated"},
        {"x\xe2\x80\x93the\xe2\x80\x93y", "x\xe2\x80\x93 \xe2\x80\x93y"},
        {"\xc3\x87"
         "a va",
         "\xc3\xa7"
         "a va"},
        {"\xc5\x81\xc3\xb3"
         "d\xc5\xba",
         "\xc5\x82\xc3\xb3"
         "d\xc5\xba"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[256];
        size_t n = pv_text_normalize_answer(out, sizeof out, cases[i].in);
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("normalize_answer('%s') = '%s', Search-R1 gives '%s'", cases[i].in, out,
                     cases[i].want);
        assert_int_equal(n, strlen(out));
    }
    assert_true(pv_text_em("the Beatles.", "Beatles"));
    assert_true(pv_text_em("Jonny Craig", "Jonny\" Craig"));
    assert_false(pv_text_em("Beatle", "The Beatles"));
    assert_false(pv_text_em("1", "one"));
    assert_true(pv_text_em("the", "a")); /* both normalise to "" (so does Search-R1's) */
}

static void test_normalize_color_suite(void **state)
{
    (void)state;
    /* engine/normalize.py test_normalize_color suite */
    static const char *const cases[][2] = {{"", ""},
                                           {"black forest", "black"},
                                           {"violet lavender", "lavender"},
                                           {"steelivy fuchsia", "fuchsia"},
                                           {"123alabaster", "alabaster"},
                                           {"webshop", "webshop"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        assert_string_equal(pv_webshop_normalize_color(cases[i][0]), cases[i][1]);
}

static void test_fts_query(void **state)
{
    (void)state;
    char q[256];
    assert_int_equal(pv_text_fts_query(q, sizeof q, "Red SHOES, red shoes; size-9!", 10), 4);
    assert_string_equal(q, "\"red\" OR \"shoes\" OR \"size\" OR \"9\"");
    assert_int_equal(pv_text_fts_query(q, sizeof q, "  ,;!  ", 10), 0);
    assert_string_equal(q, "");
    /* FTS5 syntax characters never reach the expression unquoted */
    assert_int_equal(pv_text_fts_query(q, sizeof q, "x\" OR NEAR(b* c:d", 10), 5);
    assert_null(strstr(q, "*"));
    assert_null(strstr(q, "("));
    /* the term limit and a small buffer never produce half a term */
    assert_int_equal(pv_text_fts_query(q, sizeof q, "one two three", 2), 2);
    assert_int_equal(pv_text_fts_query(q, 12, "alpha beta gamma", 10), 1);
    assert_string_equal(q, "\"alpha\"");
}

static void test_sbuf_bounds(void **state)
{
    (void)state;
    char buf[8];
    pv_sbuf_t b;
    pv_sbuf_init(&b, buf, sizeof buf);
    pv_sbuf_put(&b, "abc");
    pv_sbuf_printf(&b, "%d", 12345);
    assert_true(b.overflow);
    assert_int_equal(b.len, 7);
    assert_string_equal(buf, "abc1234");
    pv_sbuf_put(&b, "more");
    assert_string_equal(buf, "abc1234");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_set_ratio_matches_thefuzz),
        cmocka_unit_test(test_token_set_ratio_by_hand),
        cmocka_unit_test(test_normalize_answer_matches_search_r1),
        cmocka_unit_test(test_normalize_color_suite),
        cmocka_unit_test(test_fts_query),
        cmocka_unit_test(test_sbuf_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
