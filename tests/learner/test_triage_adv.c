/* test_triage_adv.c - the triage estimator (learner/triage_adv.h) on a hand-worked group:
 * GRPO's advantage plus lambda times the role rewards of model-free labels, through the
 * learner's entry point (pv_batch_advantages), and its input check; and the same group with
 * roles a judge gave (algorithm.triage_labels = llm) replacing the model-free ones. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/traj/triage.h"
#include "learner/batch_adv.h"

/* T0 wins through states 1 2 3: a new state (exploration, +0.5), then the winning action
 * (decisive, +1). T1 fails through 1 1 2 1: a refused action (no progress, -0.1), a new state
 * (exploration), back to state 1 (no progress). GRPO: outcomes 1 0, mean 1/2, unbiased std
 * sqrt(1/2): +-0.5 / (0.70710678 + 1e-6). lambda 0.2. */
static void test_hand_group(void **state)
{
    (void)state;
    const char *tx[] = {"o", "a", "o", "a", "o", "a", "o"};
    uint64_t k0[] = {1, 2, 3}, k1[] = {1, 1, 2, 1};
    pv_step_rec_t s0[2] = {{.behav_logprob = -1}, {.behav_logprob = -1}};
    pv_step_rec_t s1[3] = {
        {.behav_logprob = -1, .refused = true}, {.behav_logprob = -1}, {.behav_logprob = -1}};
    pv_traj_t tr[2] = {
        {.texts = tx, .steps = s0, .n_steps = 2, .reward = 1, .won = true, .state_keys = k0},
        {.texts = tx, .steps = s1, .n_steps = 3, .reward = 0, .state_keys = k1},
    };
    pv_batch_t b;
    assert_int_equal(pv_batch_build(tr, 2, &b, NULL), PV_OK);
    pv_adv_cfg_t cfg = pv_adv_cfg_plain(PV_ADV_TRIAGE);
    pv_adv_stats_t st;
    assert_int_equal(pv_batch_advantages(&b, tr, 2, &cfg, NULL, 0, &st, NULL), PV_OK);
    double g = 0.5 / (sqrt(0.5) + 1e-6);
    const double want[] = {g + 0.1, g + 0.2, 0, -g - 0.02, -g + 0.1, -g - 0.02};
    for (int k = 0; k < 6; k++)
        if (fabs(b.advantages[k] - want[k]) > 1e-12)
            fail_msg("cell %d: %.12g, by hand %.12g", k, b.advantages[k], want[k]);
    assert_int_equal(st.triage.roles[0], 1); /* decisive */
    assert_int_equal(st.triage.roles[1], 2); /* exploration */
    assert_int_equal(st.triage.roles[2], 2); /* no progress */
    assert_int_equal(st.triage.roles[3], 0); /* regression: never without a planner */
    /* no state keys: refused */
    tr[1].state_keys = NULL;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_batch_advantages(&b, tr, 2, &cfg, NULL, 0, NULL, &em), PV_ERR_INVAL);
    pv_batch_free(&b);
}

/* The same group with a judge's roles (algorithm.triage_labels = llm): T0's first step
 * labelled regression (-0.5 in place of exploration's +0.5), its second left unlabelled (the
 * model-free decisive); T1's three labelled decisive, an unknown value and regression. Each
 * judged step takes the judge's role, every other the model-free one, counted apart. */
static void test_judge_roles(void **state)
{
    (void)state;
    const char *tx[] = {"o", "a", "o", "a", "o", "a", "o"};
    uint64_t k0[] = {1, 2, 3}, k1[] = {1, 1, 2, 1};
    pv_step_rec_t s0[2] = {{.behav_logprob = -1}, {.behav_logprob = -1}};
    pv_step_rec_t s1[3] = {
        {.behav_logprob = -1, .refused = true}, {.behav_logprob = -1}, {.behav_logprob = -1}};
    const uint8_t j0[] = {PV_TRIAGE_REGRESSION, PV_TRIAGE_ROLE_NONE};
    const uint8_t j1[] = {PV_TRIAGE_DECISIVE, 7, PV_TRIAGE_REGRESSION};
    pv_traj_t tr[2] = {
        {.texts = tx,
         .steps = s0,
         .n_steps = 2,
         .reward = 1,
         .won = true,
         .state_keys = k0,
         .judge_roles = j0},
        {.texts = tx, .steps = s1, .n_steps = 3, .reward = 0, .state_keys = k1, .judge_roles = j1},
    };
    pv_batch_t b;
    assert_int_equal(pv_batch_build(tr, 2, &b, NULL), PV_OK);
    pv_adv_cfg_t cfg = pv_adv_cfg_plain(PV_ADV_TRIAGE);
    pv_adv_stats_t st;
    assert_int_equal(pv_batch_advantages(&b, tr, 2, &cfg, NULL, 0, &st, NULL), PV_OK);
    double g = 0.5 / (sqrt(0.5) + 1e-6);
    /* T0: regression (judge) -0.1, decisive (model-free) +0.2; T1: decisive (judge) +0.2,
     * exploration (model-free: 7 is no role) +0.1, regression (judge) -0.1 */
    const double want[] = {g - 0.1, g + 0.2, 0, -g + 0.2, -g + 0.1, -g - 0.1};
    for (int k = 0; k < 6; k++)
        if (fabs(b.advantages[k] - want[k]) > 1e-12)
            fail_msg("cell %d: %.12g, by hand %.12g", k, b.advantages[k], want[k]);
    assert_int_equal(st.triage.judged, 3);
    assert_int_equal(st.triage.model_free, 2);
    assert_int_equal(st.triage.roles[PV_TRIAGE_DECISIVE], 2);
    assert_int_equal(st.triage.roles[PV_TRIAGE_EXPLORATION], 1);
    assert_int_equal(st.triage.roles[PV_TRIAGE_NO_PROGRESS], 0);
    assert_int_equal(st.triage.roles[PV_TRIAGE_REGRESSION], 2);
    pv_batch_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_hand_group),
                                       cmocka_unit_test(test_judge_roles)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
