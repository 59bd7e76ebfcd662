/* test_rollout_batch.c - episodes and continuations played in lockstep (common/traj/rollout.h
 * pv_rollout_episodes, pv_rollout_from_state_n) on generated ALFWorld games: with the
 * language model (one batched decision per round) and with bow_mlp (one decision after the
 * other), episode i of a batch is the episode pv_rollout_episode plays alone from the same
 * stream (actions, tokens, outcome; log-probs to 1e-5), and so is every continuation; the
 * environment pool holds an instance per episode only for a policy that batches; bad
 * batch sizes are refused. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/traj/episodes.h"
#include "tests/support/lm_fixture.h"

enum { S_N = 3, S_STEPS = 8 };

typedef struct s_world {
    pv_env_model_t *model;
    pv_env_t *env;
    pv_env_pool_t pool;
    pv_arena_t *arena, *arena2;
    char *json;
    size_t len;
    pv_policy_t *lm, *bow;
    pv_policy_work_t *lw, *bw;
} s_world_t;

static int s_setup(void **state)
{
    static s_world_t w;
    memset(&w, 0, sizeof w);
    pv_env_spec_t es = {.name = "alfworld", .seed = 3};
    pv_policy_spec_t bs = {.kind = "bow_mlp", .n_buckets = 8192, .seed = 3};
    if (!(w.json = lm_fixture_vocab(&w.len)))
        return -1;
    pv_policy_spec_t ls = lm_fixture_spec(w.json, w.len, 7);
    ls.decode = PV_POLICY_DECODE_CONSTRAIN;
    ls.max_context = 1024;
    if (pv_env_model_new(&es, &w.model, NULL) != PV_OK || pv_env_new(w.model, &w.env) != PV_OK ||
        pv_arena_new(1 << 20, 0, &w.arena) != PV_OK ||
        pv_arena_new(1 << 20, 0, &w.arena2) != PV_OK || pv_policy_new(&bs, &w.bow, NULL) != PV_OK ||
        pv_policy_work_new(w.bow, &w.bw) != PV_OK || pv_policy_new(&ls, &w.lm, NULL) != PV_OK ||
        pv_policy_work_new(w.lm, &w.lw) != PV_OK ||
        pv_env_pool_init(&w.pool, w.model, w.env, w.lm, S_N) != PV_OK)
        return -1;
    *state = &w;
    return 0;
}

static int s_teardown(void **state)
{
    s_world_t *w = *state;
    pv_env_pool_free(&w->pool);
    pv_policy_work_destroy(&w->lw);
    pv_policy_work_destroy(&w->bw);
    pv_policy_destroy(&w->lm);
    pv_policy_destroy(&w->bow);
    pv_arena_destroy(&w->arena);
    pv_arena_destroy(&w->arena2);
    pv_env_destroy(&w->env);
    pv_env_model_destroy(&w->model);
    free(w->json);
    return 0;
}

/* Two trajectories are the same episode: texts, tokens, outcome; log-probs to 1e-5. */
static void s_same(const pv_traj_t *a, const pv_traj_t *b)
{
    assert_int_equal(a->n_steps, b->n_steps);
    assert_int_equal(a->won, b->won);
    assert_true(a->reward == b->reward);
    for (size_t h = 0; h <= 2 * (a->first_step + a->n_steps); h++)
        assert_string_equal(a->texts[h], b->texts[h]);
    for (size_t s = 0; s < a->n_steps; s++) {
        const pv_step_rec_t *x = &a->steps[s], *y = &b->steps[s];
        assert_int_equal(x->n_tokens, y->n_tokens);
        assert_int_equal(x->token, y->token);
        if (x->n_tokens)
            assert_memory_equal(x->tokens, y->tokens, x->n_tokens * sizeof *x->tokens);
        for (size_t k = 0; k < x->n_tokens; k++)
            assert_true(fabsf(x->token_logprobs[k] - y->token_logprobs[k]) < 1e-5f);
        assert_true(fabsf(x->behav_logprob - y->behav_logprob) < 1e-4f);
    }
}

/* S_N episodes of one task at once against each alone, for policy p. Returns how many
 * episodes differ from episode 0 (the streams differ, so the episodes should). */
static size_t s_episodes(s_world_t *w, const pv_policy_t *p, pv_policy_work_t *work)
{
    pv_rollout_opts_t ro = {.max_steps = S_STEPS, .save_states = true};
    pv_task_t task = pv_episode_task(3, PV_SPLIT_TRAIN, 4);
    pv_traj_t tr[S_N], one;
    pv_rng_t r[S_N], *rp[S_N];
    for (size_t i = 0; i < S_N; i++) {
        pv_rng_seed(&r[i], 50 + i, 1);
        rp[i] = &r[i];
    }
    pv_cost_t c = {0}, c1 = {0};
    pv_arena_reset(w->arena);
    assert_int_equal(pv_rollout_episodes(w->model, w->pool.envs, S_N, &task, p, work, rp, &ro, 7,
                                         w->arena, tr, &c, NULL),
                     PV_OK);
    size_t steps = 0, differ = 0;
    for (size_t i = 0; i < S_N; i++) {
        pv_rng_t r1;
        pv_rng_seed(&r1, 50 + i, 1);
        pv_arena_reset(w->arena2);
        assert_int_equal(pv_rollout_episode(w->model, w->env, &task, p, work, &r1, &ro, 7,
                                            w->arena2, &one, &c1, NULL),
                         PV_OK);
        assert_int_equal(tr[i].group, 7);
        s_same(&tr[i], &one);
        steps += tr[i].n_steps;
        differ += tr[i].n_steps != tr[0].n_steps || strcmp(tr[i].texts[1], tr[0].texts[1]) != 0 ||
                  (tr[i].n_steps > 1 && strcmp(tr[i].texts[3], tr[0].texts[3]) != 0);
        /* every saved state is the environment's state after those steps */
        assert_non_null(tr[i].states[tr[i].n_steps]);
    }
    assert_int_equal(c.env_steps, steps);
    assert_int_equal(c1.env_steps, steps);
    assert_int_equal(c.decisions, c1.decisions);
    /* continuations from state 2 of episode 0: S_N at once against each alone */
    size_t t = tr[0].n_steps < 2 ? tr[0].n_steps : 2;
    pv_rollout_start_t st = {.state = tr[0].states[t],
                             .state_len = tr[0].state_len[t],
                             .task_text = tr[0].task_text,
                             .history = tr[0].texts,
                             .n_history = 2 * t + 1};
    bool won[S_N], won1;
    double rw[S_N], rw1;
    pv_traj_t cont[S_N], cone;
    for (size_t i = 0; i < S_N; i++)
        pv_rng_seed(&r[i], 80 + i, 2);
    pv_arena_reset(w->arena2);
    assert_int_equal(pv_rollout_from_state_n(w->model, w->pool.envs, S_N, &st, p, work, rp, &ro,
                                             w->arena2, won, rw, &c, cont, NULL),
                     PV_OK);
    pv_arena_t *a3 = NULL;
    assert_int_equal(pv_arena_new(1 << 20, 0, &a3), PV_OK);
    for (size_t i = 0; i < S_N; i++) {
        pv_rng_t r1;
        pv_rng_seed(&r1, 80 + i, 2);
        pv_arena_reset(a3);
        assert_int_equal(pv_rollout_from_state(w->model, w->env, &st, p, work, &r1, &ro, a3, &won1,
                                               &rw1, &c1, &cone, NULL),
                         PV_OK);
        assert_int_equal(won[i], won1);
        assert_true(rw[i] == rw1);
        assert_int_equal(cont[i].first_step, t);
        s_same(&cont[i], &cone);
    }
    pv_arena_destroy(&a3);
    return differ;
}

static void test_lm_lockstep(void **state)
{
    s_world_t *w = *state;
    assert_int_equal(w->pool.n, S_N);
    assert_true(w->pool.envs[0] == w->env);
    assert_true(s_episodes(w, w->lm, w->lw) > 0);
}

static void test_bow_lockstep(void **state)
{
    s_world_t *w = *state;
    assert_true(s_episodes(w, w->bow, w->bw) > 0);
}

static void test_pool_and_errors(void **state)
{
    s_world_t *w = *state;
    pv_env_pool_t p1;
    assert_int_equal(pv_env_pool_init(&p1, w->model, w->env, w->bow, 8), PV_OK);
    assert_int_equal(p1.n, 1); /* nothing gained for a policy that decides one at a time */
    pv_env_pool_free(&p1);
    assert_int_equal(pv_env_pool_init(&p1, w->model, w->env, w->lm, 1000), PV_OK);
    assert_int_equal(p1.n, PV_ROLLOUT_MAX_BATCH);
    pv_env_pool_free(&p1);
    pv_env_pool_free(&p1); /* safe twice */
    assert_int_equal(pv_rollout_batch(0, 8), 8);
    assert_int_equal(pv_rollout_batch(3, 8), 3);
    assert_int_equal(pv_rollout_batch(20, 8), 8);
    assert_int_equal(pv_rollout_batch(0, 500), PV_ROLLOUT_MAX_BATCH);
    pv_rollout_opts_t ro = {.max_steps = 4};
    pv_task_t task = pv_episode_task(3, PV_SPLIT_TRAIN, 4);
    pv_traj_t tr[1];
    pv_cost_t c = {0};
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_rollout_episodes(w->model, w->pool.envs, 0, &task, w->lm, w->lw, NULL, &ro,
                                         0, w->arena, tr, &c, &em),
                     PV_ERR_INVAL);
    assert_non_null(strstr(em.text, "at once"));
    bool won[1];
    pv_rollout_start_t st = {.history = NULL};
    assert_int_equal(pv_rollout_from_state_n(w->model, w->pool.envs, PV_ROLLOUT_MAX_BATCH + 1, &st,
                                             w->lm, w->lw, NULL, &ro, w->arena, won, NULL, &c, NULL,
                                             &em),
                     PV_ERR_INVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lm_lockstep),
        cmocka_unit_test(test_bow_lockstep),
        cmocka_unit_test(test_pool_and_errors),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
