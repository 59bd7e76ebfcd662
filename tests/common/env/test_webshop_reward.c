/* test_webshop_reward.c - WebShop's reward (engine/goal.py) against the cases of WebShop's
 * own tests (tests/web-agent-site/engine/test_goal.py), whose expected numbers were set by
 * the Python with spaCy en_core_web_lg, plus cases computed by hand from the definition. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/env/webshop.h"

#define CAT_ABC "a \xe2\x80\xba b \xe2\x80\xba c"

static pv_webshop_item_t s_item(const char *name, const char *query, const char *cat)
{
    return (pv_webshop_item_t){.name = name,
                               .query = query,
                               .product_category = cat,
                               .title = "",
                               .bullets = "",
                               .description = ""};
}

static pv_webshop_target_t s_goal(const char *name, const char *query, const char *cat)
{
    return (pv_webshop_target_t){
        .name = name, .query = query, .product_category = cat, .price_upper = 40.0};
}

static pv_webshop_score_t s_score(const pv_webshop_item_t *it, const pv_webshop_target_t *g)
{
    pv_webshop_score_t s;
    pv_webshop_score(it, g, 35.0, NULL, NULL, 0, &s);
    return s;
}

static void test_type_reward(void **state)
{
    (void)state;
    pv_webshop_item_t it = s_item("Name 1", "Query 1", CAT_ABC);
    pv_webshop_target_t g = s_goal("Name 1", "Query 1", CAT_ABC);
    pv_webshop_score_t s = s_score(&it, &g);
    assert_true(s.query_match && s.category_match);
    assert_true(s.r_type == 1.0 && s.title_score == 1.0);
    it.query = "Query 2";
    assert_false(s_score(&it, &g).query_match);
    /* out of order / non-matching / partially matching / duplicate categories */
    static const struct {
        const char *cat;
        bool match;
    } cats[] = {{"b \xe2\x80\xba c \xe2\x80\xba a", true},
                {"d \xe2\x80\xba e \xe2\x80\xba f", false},
                {"a \xe2\x80\xba d \xe2\x80\xba b", true},
                {"a \xe2\x80\xba a \xe2\x80\xba b", true},
                {"a \xe2\x80\xba a \xe2\x80\xba d", false}};
    for (size_t i = 0; i < sizeof cats / sizeof cats[0]; i++) {
        it.product_category = cats[i].cat;
        assert_int_equal(s_score(&it, &g).category_match, cats[i].match);
    }
    /* title scores WebShop's test expects from spaCy */
    static const struct {
        const char *goal, *bought;
        double want, tol;
    } titles[] = {
        {"adidas Unisex-Adult D.o.n. Issue 2 Basketball Shoe",
         "adidas Unisex-Adult D.o.n. Issue 2 Indoor Court Shoe", 0.85, 0.01},
        {"Saireed UL Listed 2 Prong Power Cord for JBL Bar 3.1 Bar 2.1 Channel 4K Ultra HD "
         "Soundbar Home Theater System Subwoofer",
         "BRST AC Power Cord Outlet Socket Cable Plug Lead for Panasonic SC-HT830V DVD/VCR Combo "
         "Home Theater System",
         0.31, 0.01},
        {"Saireed UL Listed 2 Prong Power Cord for JBL Bar 3.1 Bar 2.1 Channel 4K Ultra HD "
         "Soundbar",
         "BRST AC Power Cord Outlet Socket Cable Plug Lead for Panasonic SC-HT830V DVD/VCR Combo "
         "Home Theater System",
         0.17, 0.01},
    };
    for (size_t i = 0; i < sizeof titles / sizeof titles[0]; i++) {
        g.name = titles[i].goal;
        it.name = titles[i].bought;
        double ts = s_score(&it, &g).title_score;
        if (fabs(ts - titles[i].want) > titles[i].tol)
            fail_msg("title_score %g, WebShop's test expects %g", ts, titles[i].want);
    }
    g.name = "Rusticware 921ORB Kitchen and Bath Cabinet Knob";
    it.name = "Minkissy 2pcs Stainless Steel Eyebrow Tweezers Blackhead Acne Remover Portable "
              "Makeup Tweezers (Silver)";
    s = s_score(&it, &g);
    assert_true(s.title_score < 0.05);
    assert_true(s.r_type == 0.0); /* title_score == 0 -> r_type 0 */
}

static void test_nouns(void **state)
{
    (void)state;
    char buf[512];
    /* possessive 's goes, hyphen between letters splits, numbers are no nouns */
    size_t n = pv_webshop_name_nouns("Women's Slim-Fit 2-Pack T-Shirt, 100% Cotton (Navy)", buf,
                                     sizeof buf);
    const char *want[] = {"women", "slim", "fit", "t", "shirt", "cotton", "navy"};
    assert_int_equal(n, sizeof want / sizeof want[0]);
    const char *p = buf;
    for (size_t i = 0; i < n; i++, p += strlen(p) + 1)
        assert_string_equal(p, want[i]);
    /* lower-case adjectives are not nouns; title-case words are (spaCy tags them PROPN) */
    assert_int_equal(pv_webshop_name_nouns("portable speaker", buf, sizeof buf), 1);
    assert_int_equal(pv_webshop_name_nouns("Portable Speaker", buf, sizeof buf), 2);
}

static void test_attribute_reward(void **state)
{
    (void)state;
    const char *goal_attrs[] = {"tea tree", "essential oils", "natural ingredients"};
    pv_webshop_target_t g = s_goal("x", "q", CAT_ABC);
    g.attributes = goal_attrs;
    g.n_attributes = 3;
    /* exact match (fuzzy: "essential oil" ~ "essential oils" scores 96) */
    const char *a1[] = {"tea tree", "essential oil", "natural ingredients"};
    pv_webshop_item_t it = s_item("x", "q", CAT_ABC);
    it.attributes = a1;
    it.n_attributes = 3;
    assert_int_equal(s_score(&it, &g).n_attr_match, 3);
    /* partial match */
    it.attributes = a1 + 1;
    it.n_attributes = 2;
    assert_int_equal(s_score(&it, &g).n_attr_match, 2);
    /* goal attributes found in the product's text */
    it.n_attributes = 0;
    it.bullets = "This shampoo has essential oils and smells like lemons";
    it.description = "Best shampoo on the market, made with natural ingredients";
    assert_int_equal(s_score(&it, &g).n_attr_match, 2);
    /* no match */
    const char *a2[] = {"tea bag", "earl gray", "lipton"};
    it = s_item("x", "q", CAT_ABC);
    it.attributes = a2;
    it.n_attributes = 3;
    it.title = "English tea for breakfast";
    it.bullets = "Soothing aroma Calming, great feeling";
    it.description = "Best tea made by Lipton, great to pair with breakfast";
    assert_int_equal(s_score(&it, &g).n_attr_match, 0);
    /* the text search lower-cases the product text, not the goal attribute */
    it.title = "TEA TREE oil";
    assert_int_equal(s_score(&it, &g).n_attr_match, 1);
}

static uint32_t s_options(const char *const *goal, size_t ng, const char *const *names,
                          const char *const *vals, size_t np)
{
    pv_webshop_target_t g = s_goal("x", "q", CAT_ABC);
    g.options = goal;
    g.n_options = ng;
    pv_webshop_item_t it = s_item("x", "q", CAT_ABC);
    pv_webshop_score_t s;
    pv_webshop_score(&it, &g, 1.0, names, vals, np, &s);
    return s.n_option_match;
}

static void test_option_reward(void **state)
{
    (void)state;
    const char *goal[] = {"grey", "xl", "pack of 12"};
    const char *names[] = {"count", "color", "size"};
    const char *v1[] = {"pack of 12", "grey", "xl"};
    assert_int_equal(s_options(goal, 3, names, v1, 3), 3);
    const char *v2[] = {"pack of 12", "blue", "xl"};
    assert_int_equal(s_options(goal, 3, names, v2, 3), 2);
    const char *goal2[] = {"cool powder snow", "xl", "pack of 12"};
    const char *v3[] = {"pack of 12", "powder snow", "xl"};
    assert_int_equal(s_options(goal2, 3, names, v3, 3), 3);
    assert_int_equal(s_options(goal, 0, names, v1, 3), 0);
    assert_int_equal(s_options(goal, 3, names, v1, 0), 0);
    /* "size" needs equality after normalize_color: "x-large" is no "large" for size, but
     * for another option name the fuzzy ratio (100) accepts it */
    const char *g4[] = {"large"};
    const char *size[] = {"size"}, *style[] = {"style"}, *xl[] = {"x-large"};
    assert_int_equal(s_options(g4, 1, size, xl, 1), 0);
    assert_int_equal(s_options(g4, 1, style, xl, 1), 1);
    /* normalize_color maps both "black forest" and "jet black" to "black" */
    const char *g5[] = {"black forest"};
    const char *color[] = {"color"}, *jet[] = {"jet black"};
    assert_int_equal(s_options(g5, 1, color, jet, 1), 1);
}

static void test_total_reward(void **state)
{
    (void)state;
    const char *attrs[] = {"tea tree", "essential oils", "natural ingredients"};
    const char *p_attrs[] = {"tea tree", "essential oil", "natural ingredients"};
    const char *opts[] = {"grey", "XL"};
    const char *names[] = {"color", "size"};
    const char *name = "Mens D.O.N. Issue 2 Gca Basketball Sneakers Shoes Casual - Off White";
    pv_webshop_target_t g = s_goal(name, "Query 1", CAT_ABC);
    g.attributes = attrs;
    g.n_attributes = 3;
    g.options = opts;
    g.n_options = 2;
    pv_webshop_item_t it = s_item(name, "Query 1", CAT_ABC);
    it.attributes = p_attrs;
    it.n_attributes = 3;
    pv_webshop_score_t s;
    pv_webshop_score(&it, &g, 35, names, opts, 2, &s);
    assert_true(s.reward == 1.0);
    /* attributes only from the text: WebShop's test passes BulletPoints as a string, which
     * ' '.join() spreads out letter by letter, so only the description matches:
     * (1 + 2 + 1) / (3 + 2 + 1) = 2/3 */
    it.n_attributes = 0;
    it.bullets = "T h i s   s h a m p o o   h a s   e s s e n t i a l   o i l s";
    it.description = "Best shampoo on the market, made with natural ingredients";
    pv_webshop_score(&it, &g, 35, names, opts, 2, &s);
    assert_true(fabs(s.reward - 2.0 / 3.0) < 1e-12);
    /* a third goal option that was not bought: 4 / 7 = 0.5714 */
    const char *opts3[] = {"grey", "XL", "pack of 12"};
    g.options = opts3;
    g.n_options = 3;
    pv_webshop_score(&it, &g, 35, names, opts, 2, &s);
    assert_true(fabs(s.reward - 4.0 / 7.0) < 1e-12);
    /* another product type: query and category differ, title_score 2/12 -> r_type 0.5:
     * 4/7 * 0.5 = 0.2857 */
    g.name = "Saireed UL Listed 2 Prong Power Cord for JBL Bar 3.1 Bar 2.1 Channel 4K Ultra HD "
             "Soundbar";
    it.name = "BRST AC Power Cord Outlet Socket Cable Plug Lead for Panasonic SC-HT830V DVD/VCR "
              "Combo Home Theater System";
    it.query = "Query 2";
    it.product_category = "a \xe2\x80\xba d \xe2\x80\xba e";
    pv_webshop_score(&it, &g, 35, names, opts, 2, &s);
    assert_true(s.r_type == 0.5);
    assert_true(fabs(s.reward - 2.0 / 7.0) < 1e-12);
    /* over the price limit: the price term drops: (1 + 2 + 0) / 7 * 0.5 */
    pv_webshop_score(&it, &g, 40.01, names, opts, 2, &s);
    assert_false(s.price_ok);
    assert_true(fabs(s.reward - 3.0 / 14.0) < 1e-12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_reward),      cmocka_unit_test(test_nouns),
        cmocka_unit_test(test_attribute_reward), cmocka_unit_test(test_option_reward),
        cmocka_unit_test(test_total_reward),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
