/* test_golden.c - advantage estimators, policy loss, aggregation and KL against the numbers
 * produced by running verl's and verl-agent's own code (../shared/golden, see its README).
 *
 * Tolerance (golden_cmp.h): rtol = 1e-6 (float64) or 1e-5 (float32) relative, plus rtol
 * times the tensor's largest value for entries that are zero up to rounding.
 * Skips cleanly when ../shared/golden is absent.
 */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "learner/advantage.h"
#include "learner/verl_case.h"
#include "tests/support/pv_test.h"
#include "tests/learner/golden_cmp.h"

#define S_ASSERT_NEAR(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol))

/* Run every case of one golden file in both precisions; returns the number of compared
 * outputs (asserts on mismatches). */
static int s_run_file(const char *file, const char *estimator)
{
    json_t *cases = s_golden_load(file, NULL, 0);
    if (!cases)
        return -1;
    int compared = 0, bad = 0;
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *name = json_string_value(json_object_get(c, "name"));
        json_t *outs = json_object_get(c, "outputs");
        if (json_object_get(outs, "emulated_after_upstream_fix")) /* k3+: see kl.h */
            outs = json_object_get(outs, "emulated_after_upstream_fix");
        static const char *const dtypes[] = {"float64", "float32"};
        bool any_dtype = false;
        for (int d = 0; d < 2; d++) {
            json_t *ref = json_object_get(outs, dtypes[d]);
            if (!ref)
                continue;
            any_dtype = true;
            json_t *got = NULL;
            pv_errmsg_t em = {{0}};
            pv_err_t rc = pv_verl_case_eval(c, estimator, d == 1, &got, &em);
            if (rc != PV_OK)
                print_error("%s/%s: %s\n", name, dtypes[d], em.text);
            assert_int_equal(rc, PV_OK);
            char what[256];
            snprintf(what, sizeof what, "%s/%s", name, dtypes[d]);
            bad += s_compare(what, got, ref, d == 0 ? 1e-6 : 1e-5, 0);
            compared++;
            json_decref(got);
        }
        if (!any_dtype) { /* dtype-free outputs (step groups) */
            json_t *got = NULL;
            pv_errmsg_t em = {{0}};
            assert_int_equal(pv_verl_case_eval(c, estimator, false, &got, &em), PV_OK);
            bad += s_compare(name, got, outs, 1e-12, 0);
            compared++;
            json_decref(got);
        }
    }
    json_decref(cases);
    assert_int_equal(bad, 0);
    return compared;
}

#define S_FILE_TEST(fn, file, est, min_cases)                                                      \
    static void fn(void **state)                                                                   \
    {                                                                                              \
        (void)state;                                                                               \
        int n = s_run_file(file, est);                                                             \
        if (n < 0)                                                                                 \
            skip();                                                                                \
        assert_true(n >= (min_cases));                                                             \
    }

S_FILE_TEST(test_grpo, "verl_grpo_outcome_advantage.json", NULL, 28)
S_FILE_TEST(test_rloo, "verl_rloo_outcome_advantage.json", "rloo", 14)
S_FILE_TEST(test_rpp_baseline, "verl_reinforce_plus_plus_baseline_outcome_advantage.json",
            "reinforce_plus_plus_baseline", 14)
S_FILE_TEST(test_policy_loss, "verl_policy_loss_vanilla.json", NULL, 14)
S_FILE_TEST(test_agg_loss, "verl_agg_loss.json", NULL, 16)
S_FILE_TEST(test_kl, "verl_kl_penalty.json", NULL, 10)
S_FILE_TEST(test_gigpo, "gigpo_outcome_advantage.json", "gigpo", 18)
S_FILE_TEST(test_gigpo_returns, "gigpo_step_discounted_returns.json", NULL, 2)
S_FILE_TEST(test_gigpo_step_groups, "gigpo_build_step_group.json", NULL, 3)

/* difflib ratios recorded by the golden file for the similarity case. */
static void test_seqmatch_ratio(void **state)
{
    (void)state;
    json_t *cases = s_golden_load("gigpo_build_step_group.json", NULL, 0);
    if (!cases)
        skip();
    int checked = 0;
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c)
    {
        json_t *pr =
            json_object_get(json_object_get(c, "outputs"), "pairwise_SequenceMatcher_ratio");
        json_t *obs = json_object_get(json_object_get(c, "inputs"), "anchor_obs");
        for (size_t a = 0; pr && a < json_array_size(obs); a++)
            for (size_t b = 0; b < json_array_size(obs); b++) {
                const char *sa = json_string_value(json_array_get(obs, a));
                const char *sb = json_string_value(json_array_get(obs, b));
                double r;
                assert_int_equal(pv_seqmatch_ratio(sa, strlen(sa), sb, strlen(sb), &r), PV_OK);
                double want = json_number_value(json_array_get(json_array_get(pr, a), b));
                S_ASSERT_NEAR(r, want, 1e-15);
                checked++;
            }
    }
    json_decref(cases);
    assert_true(checked >= 9);
}

/* difflib's documented examples (Python docs, difflib.SequenceMatcher). */
static void test_seqmatch_doc_examples(void **state)
{
    (void)state;
    double r;
    /* SequenceMatcher(None, "abcd", "bcde").ratio() == 0.75 */
    assert_int_equal(pv_seqmatch_ratio("abcd", 4, "bcde", 4, &r), PV_OK);
    S_ASSERT_NEAR(r, 0.75, 1e-15);
    /* SequenceMatcher(lambda x: x == " ", "private Thread currentThread;",
     *   "private volatile Thread currentThread;") gives 0.866 with junk; without the junk
     * function the matching blocks are [(0,0,8),(8,17,21)] -> 2*29/67 */
    const char *a = "private Thread currentThread;", *b = "private volatile Thread currentThread;";
    assert_int_equal(pv_seqmatch_ratio(a, strlen(a), b, strlen(b), &r), PV_OK);
    S_ASSERT_NEAR(r, 2.0 * 29 / (double)(strlen(a) + strlen(b)), 1e-15);
    assert_int_equal(pv_seqmatch_ratio("", 0, "", 0, &r), PV_OK);
    S_ASSERT_NEAR(r, 1.0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grpo),
        cmocka_unit_test(test_rloo),
        cmocka_unit_test(test_rpp_baseline),
        cmocka_unit_test(test_policy_loss),
        cmocka_unit_test(test_agg_loss),
        cmocka_unit_test(test_kl),
        cmocka_unit_test(test_gigpo),
        cmocka_unit_test(test_gigpo_returns),
        cmocka_unit_test(test_gigpo_step_groups),
        cmocka_unit_test(test_seqmatch_ratio),
        cmocka_unit_test(test_seqmatch_doc_examples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
