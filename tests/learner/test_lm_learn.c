/* test_lm_learn.c - the learner with multi-token steps (a language model's actions):
 * the batch's token layout (learner/batch.h), GRPO's advantage on every token and ProVer's
 * credit on every token of the segment's steps (batch_adv.h), behaviour cloning as token
 * cross-entropy (bc.h) and the PPO update (update.h) of the tiny transformer policy
 * (tests/support/lm_fixture.h): its recomputed log-probs match the behaviour log-probs of
 * the same version, and the update moves the log-probs the way the advantages say. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/traj/episodes.h"
#include "common/traj/rollout.h"
#include "learner/adam.h"
#include "learner/batch_adv.h"
#include "learner/bc.h"
#include "learner/update.h"
#include "tests/support/lm_fixture.h"

/* Two trajectories of one group by hand: row 0 has steps of 2, 3, 1 tokens, row 1 of 4, 2. */
static const uint32_t s_tok[] = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static const float s_lp[] = {-0.1f, -0.2f, -0.3f, -0.4f, -0.5f, -0.6f,
                             -0.7f, -0.8f, -0.9f, -1.0f, -1.1f, -1.2f};

static void s_hand(pv_traj_t tr[2], pv_step_rec_t st[5])
{
    const size_t n[5] = {2, 3, 1, 4, 2};
    size_t at = 0;
    for (int s = 0; s < 5; s++) {
        float sum = 0.0f;
        for (size_t k = 0; k < n[s]; k++)
            sum += s_lp[at + k];
        st[s] = (pv_step_rec_t){.tokens = s_tok + at,
                                .token_logprobs = s_lp + at,
                                .n_tokens = n[s],
                                .token = s_tok[at],
                                .behav_logprob = sum};
        at += n[s];
    }
    memset(tr, 0, 2 * sizeof *tr);
    tr[0] = (pv_traj_t){.steps = st, .n_steps = 3, .reward = 1.0, .won = true, .group = 4};
    tr[1] = (pv_traj_t){.steps = st + 3, .n_steps = 2, .reward = 0.0, .group = 4};
}

/* Columns are tokens, steps one after another; the outcome sits on the last token; GRPO's
 * advantage is on every token of a row; a segment's credit covers its steps' tokens only. */
static void test_batch_tokens(void **state)
{
    (void)state;
    pv_traj_t tr[2];
    pv_step_rec_t st[5];
    s_hand(tr, st);
    pv_batch_t b;
    assert_int_equal(pv_batch_build(tr, 2, &b, NULL), PV_OK);
    assert_true(b.multi);
    assert_int_equal(b.L, 6);
    assert_int_equal(b.S, 3);
    const size_t col0[4] = {0, 2, 5, 6}, col1[4] = {0, 4, 6, 6};
    for (size_t s = 0; s <= 3; s++) {
        assert_int_equal(pv_batch_col(&b, 0, s), col0[s]);
        assert_int_equal(pv_batch_col(&b, 1, s), col1[s]);
    }
    for (size_t c = 0; c < 6; c++) {
        assert_true(b.response_mask[c] == 1.0);
        assert_true(b.old_log_prob[c] == (double)s_lp[c]);
        assert_true(b.response_mask[6 + c] == 1.0);
        assert_true(b.old_log_prob[6 + c] == (double)s_lp[6 + c]);
    }
    assert_true(b.token_level_rewards[5] == 1.0);
    for (size_t c = 0; c < 5; c++)
        assert_true(b.token_level_rewards[c] == 0.0);
    pv_adv_cfg_t cfg = pv_adv_cfg_plain(PV_ADV_GRPO);
    assert_int_equal(pv_batch_advantages(&b, tr, 2, &cfg, NULL, 0, NULL, NULL), PV_OK);
    /* rewards 1, 0: mean 0.5, unbiased std 0.7071: A = +-0.7071 on every token */
    for (size_t c = 0; c < 6; c++) {
        assert_true(fabs(b.advantages[c] - 0.70710678) < 1e-6);
        assert_true(fabs(b.advantages[6 + c] + 0.70710678) < 1e-6);
    }
    /* ProVer: a verified segment, steps [1, 2) of row 0, delta 0.5: its 3 tokens get +0.5 */
    cfg.prover = true;
    pv_verified_seg_t seg = {.row = 0, .t0 = 1, .t1 = 2, .delta = 0.5};
    pv_adv_stats_t as;
    assert_int_equal(pv_batch_advantages(&b, tr, 2, &cfg, &seg, 1, &as, NULL), PV_OK);
    assert_int_equal(as.n_credited, 3);
    for (size_t c = 0; c < 6; c++) {
        double want = 0.70710678 + (c >= 2 && c < 5 ? cfg.credit.lambda * 0.5 : 0.0);
        assert_true(fabs(b.advantages[c] - want) < 1e-6);
        assert_true(fabs(b.advantages[6 + c] + 0.70710678) < 1e-6);
    }
    /* a segment past the batch's steps is refused, not applied to other tokens */
    seg = (pv_verified_seg_t){.row = 1, .t0 = 1, .t1 = 4, .delta = 0.5};
    assert_int_equal(pv_batch_advantages(&b, tr, 2, &cfg, &seg, 1, &as, NULL), PV_ERR_RANGE);
    pv_batch_free(&b);
    /* the step view: one column per step, a step's log-prob the sum of its tokens' */
    assert_int_equal(pv_batch_build_steps(tr, 2, &b, NULL), PV_OK);
    assert_int_equal(b.L, 3);
    assert_true(fabs(b.old_log_prob[1] - (-0.3 - 0.4 - 0.5)) < 1e-6);
    assert_true(b.response_mask[3 + 2] == 0.0);
    pv_batch_free(&b);
}

typedef struct s_lm {
    char *json;
    pv_policy_t *p;
    pv_adam_t *adam;
    pv_trainer_t t;
    pv_env_model_t *model;
    pv_env_t *env;
    pv_arena_t *arena;
} s_lm_t;

static void s_lm_new(s_lm_t *s, double lr)
{
    memset(s, 0, sizeof *s);
    size_t len = 0;
    s->json = lm_fixture_vocab(&len);
    assert_non_null(s->json);
    pv_policy_spec_t ps = lm_fixture_spec(s->json, len, 21);
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_policy_new(&ps, &s->p, &em), PV_OK);
    pv_adam_opts_t ao = pv_adam_opts_default(lr);
    assert_int_equal(pv_adam_new(pv_policy_n_params(s->p), &ao, &s->adam, &em), PV_OK);
    assert_int_equal(pv_trainer_init(&s->t, s->p, NULL, s->adam, &em), PV_OK);
    pv_env_spec_t es = {.name = "alfworld", .max_steps = 8};
    assert_int_equal(pv_env_model_new(&es, &s->model, NULL), PV_OK);
    assert_int_equal(pv_env_new(s->model, &s->env), PV_OK);
    assert_int_equal(pv_arena_new(0, 0, &s->arena), PV_OK);
}

static void s_lm_free(s_lm_t *s)
{
    pv_arena_destroy(&s->arena);
    pv_env_destroy(&s->env);
    pv_env_model_destroy(&s->model);
    pv_trainer_fini(&s->t);
    pv_adam_destroy(&s->adam);
    pv_policy_destroy(&s->p);
    free(s->json);
}

/* Behaviour cloning of expert ALFWorld steps: the token NLL falls from about log V to well
 * below it, and the demonstrations' every token becomes the likeliest (accuracy). */
static void test_bc_tokens(void **state)
{
    (void)state;
    s_lm_t s;
    s_lm_new(&s, 3e-3);
    pv_episodes_t E = {.model = s.model, .env = s.env, .arena = s.arena, .task_seed = 1};
    pv_traj_t *demos = NULL;
    pv_cost_t cost = {0};
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_episodes_expert(&E, 0, 2, &demos, &cost, &em), PV_OK);
    double loss0 = 0, acc0 = 0, loss = 0, acc = 0;
    for (int it = 0; it < 60; it++) {
        assert_int_equal(pv_bc_step(&s.t, demos, 2, &loss, &acc, &em), PV_OK);
        if (it == 0)
            loss0 = loss, acc0 = acc;
    }
    print_message("bc tokens: nll %.3f -> %.3f, accuracy %.2f -> %.2f\n", loss0, loss, acc0, acc);
    assert_true(loss0 > 4.0);         /* about log 512 = 6.2 */
    assert_true(loss < 0.25 * loss0); /* memorised */
    assert_true(acc > acc0 && acc >= 0.5);
    assert_int_equal(pv_policy_version(s.p), 60);
    s_lm_free(&s);
}

/* Cloning ignores the rollout temperature: a policy at T = 2 takes the same BC steps (same
 * loss, same parameters after) as its twin at T = 1, and is left at T = 2. */
static void test_bc_temperature(void **state)
{
    (void)state;
    s_lm_t a, b;
    s_lm_new(&a, 3e-3);
    s_lm_new(&b, 3e-3);
    assert_int_equal(pv_policy_set_temperature(b.p, 2.0f), PV_OK);
    pv_episodes_t E = {.model = a.model, .env = a.env, .arena = a.arena, .task_seed = 1};
    pv_traj_t *demos = NULL;
    pv_cost_t cost = {0};
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_episodes_expert(&E, 0, 2, &demos, &cost, &em), PV_OK);
    for (int it = 0; it < 3; it++) {
        double la = 0, lb = 0;
        assert_int_equal(pv_bc_step(&a.t, demos, 2, &la, NULL, &em), PV_OK);
        assert_int_equal(pv_bc_step(&b.t, demos, 2, &lb, NULL, &em), PV_OK);
        assert_true(la == lb);
    }
    assert_true(pv_policy_spec(b.p)->temperature == 2.0f);
    size_t n = pv_policy_n_params(a.p);
    assert_int_equal(n, pv_policy_n_params(b.p));
    assert_memory_equal(pv_policy_params(a.p), pv_policy_params(b.p), n * sizeof(float));
    s_lm_free(&a);
    s_lm_free(&b);
}

/* PPO on a sampled group: the learner's recomputation reproduces every behaviour log-prob of
 * the version that acted (mismatch ~0, verl's rollout/training mismatch), and after a few
 * updates the tokens of the trajectory with a positive advantage are likelier and those of
 * the one with a negative advantage less likely. */
static void test_ppo_tokens(void **state)
{
    (void)state;
    s_lm_t s;
    s_lm_new(&s, 1e-3);
    pv_policy_set_version(s.p, 1);
    pv_rng_t rng;
    pv_rng_seed(&rng, 8, 9);
    pv_rollout_opts_t ro = {.max_steps = 3};
    pv_task_t task = {PV_SPLIT_TRAIN, 1, 3};
    pv_traj_t tr[2];
    pv_errmsg_t em = {{0}};
    for (int i = 0; i < 2; i++) {
        pv_cost_t cost = {0};
        assert_int_equal(pv_rollout_episode(s.model, s.env, &task, s.p, s.t.work, &rng, &ro, 0,
                                            s.arena, &tr[i], &cost, &em),
                         PV_OK);
        tr[i].group = 0;
    }
    tr[0].reward = 1.0; /* as if the first had won */
    tr[1].reward = 0.0;
    pv_batch_t b;
    assert_int_equal(pv_batch_build(tr, 2, &b, NULL), PV_OK);
    assert_true(b.multi);
    pv_adv_cfg_t cfg = pv_adv_cfg_plain(PV_ADV_GRPO);
    assert_int_equal(pv_batch_advantages(&b, tr, 2, &cfg, NULL, 0, NULL, NULL), PV_OK);
    size_t n_tok = pv_batch_col(&b, 0, tr[0].n_steps) + pv_batch_col(&b, 1, tr[1].n_steps);
    double before[2] = {0, 0}, after[2] = {0, 0};
    for (int r = 0; r < 2; r++)
        for (size_t c = 0; c < pv_batch_col(&b, (size_t)r, tr[r].n_steps); c++)
            before[r] += b.old_log_prob[(size_t)r * b.L + c];
    pv_update_opts_t uo = {.loss = {.pg = pv_pg_opts_default()}, .ppo_epochs = 1};
    pv_update_stats_t us;
    assert_int_equal(pv_update_ppo(&s.t, tr, &b, &uo, &us, &em), PV_OK);
    print_message("ppo tokens: %zu tokens, mismatch mean %.2e max %.2e\n", us.mismatch_tokens,
                  us.mismatch_mean, us.mismatch_max);
    assert_int_equal(us.mismatch_tokens, n_tok); /* every token was acted with version 1 */
    assert_true(us.mismatch_max < 1e-4);
    assert_int_equal(us.n_updates, 1);
    for (int k = 0; k < 4; k++)
        assert_int_equal(pv_update_ppo(&s.t, tr, &b, &uo, &us, &em), PV_OK);
    assert_int_equal(us.mismatch_tokens, 0); /* the policy moved on: no token of its version */
    /* the log-probs now, by the training forward */
    pv_policy_item_t items[16];
    size_t ni = 0;
    for (int r = 0; r < 2; r++)
        for (size_t t = 0; t < tr[r].n_steps; t++)
            items[ni++] = (pv_policy_item_t){
                .ctx = {tr[r].task_text, tr[r].texts, 2 * t + 1},
                .cands = tr[r].steps[t].cands,
                .n_cands = tr[r].steps[t].n_cands,
                .tokens = pv_step_tokens(&tr[r].steps[t]),
                .n_tokens = pv_step_n_tokens(&tr[r].steps[t]),
            };
    float *lp = malloc(n_tok * sizeof *lp);
    assert_non_null(lp);
    assert_int_equal(pv_policy_forward_items(s.p, items, ni, s.t.work, lp, NULL, &em), PV_OK);
    size_t n0 = pv_batch_col(&b, 0, tr[0].n_steps);
    for (size_t k = 0; k < n_tok; k++)
        after[k < n0 ? 0 : 1] += lp[k];
    print_message("ppo tokens: row log-probs %.3f -> %.3f (A > 0), %.3f -> %.3f (A < 0)\n",
                  before[0], after[0], before[1], after[1]);
    assert_true(after[0] > before[0] + 0.1);
    assert_true(after[1] < before[1] - 0.1);
    free(lp);
    pv_batch_free(&b);
    s_lm_free(&s);
}

/* The fused pass (one forward, each token's gradient from its log-prob, the backward) gives
 * the two-pass update's gradient and loss bit for bit: token-mean, seq-mean-token-mean with
 * an entropy bonus, and a k3 KL to a reference; on rows [1, 3) of four as well. */
static void test_fused_update(void **state)
{
    (void)state;
    s_lm_t a, b;
    s_lm_new(&a, 1e-3);
    s_lm_new(&b, 1e-3);
    b.t.two_pass = true;
    pv_policy_set_version(a.p, 1);
    pv_policy_set_version(b.p, 1);
    pv_policy_t *ra = NULL, *rb = NULL;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_trainer_freeze_reference(&a.t, &ra, &em), PV_OK);
    assert_int_equal(pv_trainer_freeze_reference(&b.t, &rb, &em), PV_OK);
    /* the reference differs from the policy: one Adam step away on both */
    pv_rng_t rng;
    pv_rng_seed(&rng, 3, 4);
    pv_rollout_opts_t ro = {.max_steps = 4};
    pv_traj_t tr[4];
    for (int i = 0; i < 4; i++) {
        pv_task_t task = {PV_SPLIT_TRAIN, (uint64_t)(i / 2), 5};
        pv_cost_t cost = {0};
        assert_int_equal(pv_rollout_episode(a.model, a.env, &task, a.p, a.t.work, &rng, &ro, 0,
                                            a.arena, &tr[i], &cost, &em),
                         PV_OK);
        tr[i].group = i / 2;
        tr[i].reward = (double)(i % 2 == 0);
    }
    pv_batch_t bt;
    assert_int_equal(pv_batch_build(tr, 4, &bt, NULL), PV_OK);
    pv_adv_cfg_t cfg = pv_adv_cfg_plain(PV_ADV_GRPO);
    assert_int_equal(pv_batch_advantages(&bt, tr, 4, &cfg, NULL, 0, NULL, NULL), PV_OK);
    size_t n = pv_policy_n_params(a.p);
    for (int c = 0; c < 4; c++) {
        pv_actor_loss_opts_t lo = {.pg = pv_pg_opts_default()};
        size_t r0 = 0, r1 = 4;
        if (c == 1) {
            lo.pg.agg.mode = PV_AGG_SEQ_MEAN_TOKEN_MEAN;
            lo.entropy_coeff = 0.01;
        } else if (c == 2) {
            lo.use_kl = true;
            lo.kl_coef = 0.1;
            assert_int_equal(pv_kl_parse("k3", &lo.kl, &em), PV_OK);
        } else if (c == 3) {
            r0 = 1, r1 = 3;
        }
        pv_actor_loss_out_t oa, ob;
        memset(a.t.grad, 0, n * sizeof(float));
        memset(b.t.grad, 0, n * sizeof(float));
        assert_int_equal(pv_update_loss_grad(&a.t, tr, &bt, r0, r1, &lo, &oa, &em), PV_OK);
        assert_int_equal(pv_update_loss_grad(&b.t, tr, &bt, r0, r1, &lo, &ob, &em), PV_OK);
        double gn = 0;
        for (size_t i = 0; i < n; i++)
            gn += (double)a.t.grad[i] * a.t.grad[i];
        print_message("fused vs two-pass, case %d: loss %.6f, |grad| %.4f\n", c, oa.loss, sqrt(gn));
        assert_true(gn > 0);
        assert_memory_equal(a.t.grad, b.t.grad, n * sizeof(float));
        assert_true(oa.loss == ob.loss && oa.pg_loss == ob.pg_loss && oa.kl == ob.kl &&
                    oa.entropy == ob.entropy && oa.pg.pg_clipfrac == ob.pg.pg_clipfrac);
        if (c == 0) { /* a step away from the reference, for the KL case */
            pv_adam_step(a.adam, pv_policy_params(a.p), a.t.grad, NULL);
            pv_adam_step(b.adam, pv_policy_params(b.p), b.t.grad, NULL);
        }
    }
    assert_true(a.t.mm_n > 0 && a.t.mm_n == b.t.mm_n && a.t.mm_max == b.t.mm_max);
    pv_batch_free(&bt);
    s_lm_free(&a);
    s_lm_free(&b);
    pv_policy_destroy(&ra);
    pv_policy_destroy(&rb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_tokens),   cmocka_unit_test(test_bc_tokens),
        cmocka_unit_test(test_bc_temperature), cmocka_unit_test(test_ppo_tokens),
        cmocka_unit_test(test_fused_update),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
