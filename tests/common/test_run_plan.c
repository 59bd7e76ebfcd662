/* test_run_plan.c - the run plan every role reads (common/run_plan.h): what each estimator
 * means for actors, judge and learner, and the names of the choices. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/run_plan.h"

static pv_run_plan_t s_plan(const char *const *kv, size_t n)
{
    pv_config_t cfg;
    pv_config_defaults(&cfg);
    for (size_t i = 0; i < n; i += 2)
        assert_int_equal(pv_config_set(&cfg, kv[i], kv[i + 1], NULL), PV_OK);
    pv_run_plan_t p;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_run_plan_from_config(&cfg, &p, &em), PV_OK);
    return p;
}

static void test_prover_plan(void **state)
{
    (void)state;
    pv_run_plan_t p = s_plan(NULL, 0); /* the default: prover, contrast, task keys */
    assert_true(p.prover && p.needs_judge && p.save_states);
    assert_string_equal(p.name, "prover");
    assert_string_equal(p.group_service, "judge");
    assert_int_equal(p.estimator, PV_ADV_GRPO);
    assert_int_equal(p.keys, PV_STATE_KEY_TASK);
    assert_int_equal(p.judge, PV_JUDGE_CONTRAST);
    assert_false(p.verify_failures);
    assert_true(p.credit.lambda == 1.0);
    const char *kv[] = {"prover.contrast_key",
                        "state",
                        "prover.sign",
                        "both",
                        "prover.judge",
                        "oracle",
                        "algorithm.norm_adv_by_std_in_grpo",
                        "false"};
    p = s_plan(kv, 8);
    assert_int_equal(p.keys, PV_STATE_KEY_STATE);
    assert_int_equal(p.credit.sign, PV_PROVER_SIGN_BOTH);
    assert_true(p.verify_failures); /* negative deltas are used, so failures are verified */
    assert_int_equal(p.judge, PV_JUDGE_ORACLE);
    assert_int_equal(p.estimator, PV_ADV_DRGRPO);
}

static void test_plans_without_judge(void **state)
{
    (void)state;
    const char *names[] = {"grpo",   "rloo", "gigpo", "reinforce_plus_plus_baseline",
                           "drgrpo", "pgpo", "spopp", "triage",
                           "vict"};
    const pv_adv_estimator_t want[] = {PV_ADV_GRPO,         PV_ADV_RLOO,   PV_ADV_GIGPO,
                                       PV_ADV_RPP_BASELINE, PV_ADV_DRGRPO, PV_ADV_PGPO,
                                       PV_ADV_SPOPP,        PV_ADV_TRIAGE, PV_ADV_VICT};
    for (size_t i = 0; i < 9; i++) {
        const char *kv[] = {"algorithm.adv_estimator", names[i]};
        pv_run_plan_t p = s_plan(kv, 2);
        assert_false(p.prover || p.needs_judge || p.save_states);
        assert_string_equal(p.group_service, "learn");
        assert_string_equal(p.name, names[i]);
        assert_int_equal(p.estimator, want[i]);
        assert_int_equal(p.keys, PV_STATE_KEY_STATE); /* GiGPO's state anchors need it */
        assert_false(pv_run_plan_judges_group(&p, 3, 8));
    }
}

/* TRIAGE labelled by the judge's model: groups go through the judge (no states, no ProVer
 * credit, no group the ProVer protocol judges); the choice means nothing for other
 * estimators (a config shared by several runs may set it), so they ignore it. */
static void test_triage_llm_plan(void **state)
{
    (void)state;
    const char *kv[] = {"algorithm.adv_estimator", "triage", "algorithm.triage_labels", "llm"};
    pv_run_plan_t p = s_plan(kv, 4);
    assert_true(p.triage_llm && p.needs_judge);
    assert_false(p.prover || p.save_states);
    assert_string_equal(p.group_service, "judge");
    assert_int_equal(p.estimator, PV_ADV_TRIAGE);
    assert_int_equal(p.keys, PV_STATE_KEY_STATE);
    assert_false(pv_run_plan_judges_group(&p, 3, 8));
    p = s_plan(kv, 2); /* triage_labels = env, the default */
    assert_false(p.triage_llm || p.needs_judge);
    const char *prover[] = {"algorithm.triage_labels", "llm"};
    p = s_plan(prover, 2); /* the default estimator, prover: as without the key */
    assert_true(p.prover && p.needs_judge && p.save_states);
    assert_false(p.triage_llm);
    const char *grpo[] = {"algorithm.adv_estimator", "grpo", "algorithm.triage_labels", "llm"};
    p = s_plan(grpo, 4);
    assert_false(p.triage_llm || p.needs_judge);
    pv_config_t cfg;
    pv_config_defaults(&cfg);
    assert_int_equal(pv_config_set(&cfg, "algorithm.triage_labels", "gpt", NULL), PV_ERR_CONFIG);
}

static void test_judged_groups(void **state)
{
    (void)state;
    pv_run_plan_t p = s_plan(NULL, 0);
    /* the paper's protocol: 1 .. 3 successes of G = 8 */
    assert_true(pv_run_plan_judges_group(&p, 1, 8));
    assert_true(pv_run_plan_judges_group(&p, 3, 8));
    assert_false(pv_run_plan_judges_group(&p, 4, 8)); /* ineligible: plain GRPO */
    assert_false(pv_run_plan_judges_group(&p, 0, 8)); /* no contrast: no proposals */
    assert_false(pv_run_plan_judges_group(&p, 8, 8));
    const char *kv[] = {"prover.min_successes", "2", "prover.max_successes", "7"};
    p = s_plan(kv, 4);
    assert_false(pv_run_plan_judges_group(&p, 1, 8));
    assert_true(pv_run_plan_judges_group(&p, 7, 8));
    assert_false(pv_run_plan_judges_group(&p, 8, 8)); /* a failure is always needed */
    pv_config_t cfg;
    pv_config_defaults(&cfg);
    assert_int_equal(pv_config_set(&cfg, "prover.min_successes", "4", NULL), PV_OK);
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_run_plan_from_config(&cfg, &p, &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "prover.max_successes"));
}

static void test_names(void **state)
{
    (void)state;
    pv_adv_estimator_t e;
    pv_judge_kind_t k;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_adv_estimator_parse("dr_grpo", &e, NULL), PV_OK);
    assert_string_equal(pv_adv_estimator_name(e), "drgrpo");
    assert_int_equal(pv_adv_estimator_parse("ppo", &e, &em), PV_ERR_INVAL);
    assert_non_null(strstr(em.text, "known: grpo"));
    assert_int_equal(pv_adv_estimator_select(PV_ADV_GRPO, false), PV_ADV_DRGRPO);
    assert_int_equal(pv_adv_estimator_select(PV_ADV_RLOO, false), PV_ADV_RLOO);
    assert_int_equal(pv_judge_kind_parse("exhaustive", &k), PV_OK);
    assert_string_equal(pv_judge_kind_name(k), "exhaustive");
    assert_int_equal(pv_judge_kind_parse("llm", &k), PV_OK);
    assert_int_equal(k, PV_JUDGE_LLM);
    assert_string_equal(pv_judge_kind_name(k), "llm");
    assert_int_equal(pv_judge_kind_parse("gpt", &k), PV_ERR_INVAL);
    assert_string_equal(pv_judge_kind_name((pv_judge_kind_t)99), "unknown");
    pv_prover_sign_t s;
    assert_int_equal(pv_prover_sign_parse("negative", &s, &em), PV_ERR_INVAL);
    assert_non_null(strstr(em.text, "prover.sign"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prover_plan),     cmocka_unit_test(test_plans_without_judge),
        cmocka_unit_test(test_triage_llm_plan), cmocka_unit_test(test_judged_groups),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
