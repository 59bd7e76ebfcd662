/* test_local_loop.c - the single-process loop on generated ALFWorld games: expert
 * demonstrations win, a greedy continuation from any saved state replays the original
 * trajectory exactly (environment save/restore + deterministic policy), the verifier's delta
 * on an expert trajectory, behaviour cloning improving the held-out success, and one RL
 * iteration with ProVer verification updating the policy. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "learner/bc.h"
#include "learner/local_loop.h"

typedef struct s_world {
    pv_env_model_t *model;
    pv_env_t *env;
    pv_arena_t *arena, *arena2;
    pv_policy_t *p;
    pv_adam_t *adam;
    pv_trainer_t t;
    pv_rng_t rng;
    pv_local_t L;
} s_world_t;

static int s_setup(void **state)
{
    static s_world_t w;
    memset(&w, 0, sizeof w);
    pv_env_spec_t es = {.name = "alfworld", .seed = 3};
    pv_policy_spec_t ps = {.kind = "bow_mlp", .n_buckets = 8192, .seed = 3};
    pv_adam_opts_t ao = pv_adam_opts_default(3e-3);
    if (pv_env_model_new(&es, &w.model, NULL) != PV_OK || pv_env_new(w.model, &w.env) != PV_OK ||
        pv_arena_new(1 << 20, 0, &w.arena) != PV_OK ||
        pv_arena_new(1 << 20, 0, &w.arena2) != PV_OK || pv_policy_new(&ps, &w.p, NULL) != PV_OK ||
        pv_adam_new(pv_policy_n_params(w.p), &ao, &w.adam, NULL) != PV_OK ||
        pv_trainer_init(&w.t, w.p, NULL, w.adam, NULL) != PV_OK)
        return -1;
    pv_rng_seed(&w.rng, 3, 3);
    w.L = (pv_local_t){.model = w.model,
                       .env = w.env,
                       .trainer = &w.t,
                       .arena = w.arena,
                       .rng = &w.rng,
                       .task_seed = 3};
    *state = &w;
    return 0;
}

static int s_teardown(void **state)
{
    s_world_t *w = *state;
    pv_trainer_fini(&w->t);
    pv_adam_destroy(&w->adam);
    pv_policy_destroy(&w->p);
    pv_arena_destroy(&w->arena);
    pv_arena_destroy(&w->arena2);
    pv_env_destroy(&w->env);
    pv_env_model_destroy(&w->model);
    return 0;
}

static void test_demos_win(void **state)
{
    s_world_t *w = *state;
    pv_traj_t *demos;
    pv_cost_t c = {0};
    assert_int_equal(pv_local_demos(&w->L, 0, 10, &demos, &c, NULL), PV_OK);
    size_t steps = 0;
    for (int i = 0; i < 10; i++) {
        assert_true(demos[i].won);
        assert_true(demos[i].n_steps > 0);
        for (size_t s = 0; s < demos[i].n_steps; s++) { /* token = index of the action text */
            const pv_step_rec_t *st = &demos[i].steps[s];
            assert_true(st->token < st->n_cands);
            assert_string_equal(st->cands[st->token], demos[i].texts[2 * s + 1]);
        }
        steps += demos[i].n_steps;
    }
    assert_int_equal(c.env_steps, steps);
}

/* Greedy rollout with saved states; a greedy continuation from every state t replays the
 * rest of the trajectory: same outcome, same number of steps. */
static void test_continuation_replays(void **state)
{
    s_world_t *w = *state;
    pv_rollout_opts_t ro = {.max_steps = 12, .save_states = true};
    pv_task_t task = {.split = PV_SPLIT_TRAIN, .task_id = 5, .seed = 5};
    pv_traj_t tr;
    pv_cost_t c = {0}, vc = {0};
    pv_arena_reset(w->arena);
    assert_int_equal(pv_rollout_episode(w->model, w->env, &task, w->p, w->t.work, NULL, &ro, 0,
                                        w->arena, &tr, &c, NULL),
                     PV_OK);
    assert_int_equal(c.env_steps, tr.n_steps);
    assert_int_equal(c.decisions, tr.n_steps);
    for (size_t t = 0; t <= tr.n_steps; t++) {
        bool won;
        double reward = -1;
        pv_cost_t before = vc;
        pv_arena_reset(w->arena2);
        assert_int_equal(pv_rollout_continue(w->model, w->env, &tr, t, w->p, w->t.work, NULL, &ro,
                                             w->arena2, &won, &reward, &vc, NULL),
                         PV_OK);
        assert_int_equal(won, tr.won);
        assert_true(reward == tr.reward); /* greedy: the same ending, the same reward */
        assert_int_equal(vc.env_steps - before.env_steps, tr.n_steps - t);
    }
    pv_traj_t no_states = tr;
    no_states.states = NULL;
    bool won;
    assert_int_equal(pv_rollout_continue(w->model, w->env, &no_states, 0, w->p, w->t.work, NULL,
                                         &ro, w->arena2, &won, NULL, &vc, NULL),
                     PV_ERR_STATE);
}

/* BC on expert demonstrations, then one GRPO + ProVer iteration. */
static void test_bc_then_prover_iteration(void **state)
{
    s_world_t *w = *state;
    pv_rollout_opts_t ro = {.max_steps = 50};
    double before, after;
    pv_cost_t c = {0};
    assert_int_equal(pv_local_eval(&w->L, PV_SPLIT_TEST, 0, 40, true, &ro, &before, &c, NULL),
                     PV_OK);
    pv_traj_t *demos;
    assert_int_equal(pv_local_demos(&w->L, 100, 120, &demos, &c, NULL), PV_OK);
    double loss0 = 0, loss = 0, acc = -1;
    assert_int_equal(pv_bc_step(&w->t, demos, 30, &loss0, NULL, NULL), PV_OK);
    assert_int_equal(pv_bc_train(&w->t, demos, 120, 15, 30, &loss, &acc, NULL), PV_OK);
    assert_true(loss < 0.5 * loss0);
    assert_true(acc > 0.5 && acc <= 1.0); /* the last batch's share of expert choices */
    assert_int_equal(pv_bc_train(&w->t, demos, 120, 1, 0, &loss, NULL, NULL), PV_ERR_INVAL);
    assert_int_equal(pv_local_eval(&w->L, PV_SPLIT_TEST, 0, 40, true, &ro, &after, &c, NULL),
                     PV_OK);
    print_message("held-out greedy success: untrained %.2f, after BC %.2f\n", before, after);
    assert_true(after > before);
    pv_local_cfg_t cfg = {.estimator = PV_ADV_GRPO,
                          .epsilon = 1e-6,
                          .groups = 3,
                          .group_size = 6,
                          .rollout = ro,
                          .update = {.loss = {.pg = pv_pg_opts_default()}},
                          .prover = true,
                          .prover_opts = {.lambda = 1.0},
                          .prover_k = 2,
                          .prover_max_segments = 2};
    uint64_t v0 = pv_policy_version(w->p);
    pv_local_stats_t st;
    assert_int_equal(pv_local_iteration(&w->L, &cfg, &st, NULL), PV_OK);
    assert_int_equal(pv_policy_version(w->p), v0 + 1);
    assert_true(st.rollout.env_steps > 0);
    assert_true(st.n_segments == 0 || st.verify.env_steps > 0);
    assert_true(st.mean_delta >= -1.0 && st.mean_delta <= 1.0);
    print_message("iteration: success %.2f, %zu segments, %llu verification steps\n", st.success,
                  st.n_segments, (unsigned long long)st.verify.env_steps);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demos_win),
        cmocka_unit_test(test_continuation_replays),
        cmocka_unit_test(test_bc_then_prover_iteration),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
