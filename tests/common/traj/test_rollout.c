/* test_rollout.c - episodes on generated ALFWorld games (common/traj): expert demonstrations
 * win, a greedy continuation from any saved state replays the original trajectory exactly
 * (environment save/restore + deterministic policy), a continuation from a bare state (the
 * verifier's primitive) equals one from the trajectory, malformed starts are refused, a
 * greedy evaluation is reproducible, and the held-out evaluation samples at its own
 * temperature. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/traj/episodes.h"

typedef struct s_world {
    pv_env_model_t *model;
    pv_env_t *env;
    pv_arena_t *arena, *arena2;
    pv_policy_t *p;
    pv_policy_work_t *work;
    pv_episodes_t E;
} s_world_t;

static int s_setup(void **state)
{
    static s_world_t w;
    memset(&w, 0, sizeof w);
    pv_env_spec_t es = {.name = "alfworld", .seed = 3};
    pv_policy_spec_t ps = {.kind = "bow_mlp", .n_buckets = 8192, .seed = 3};
    if (pv_env_model_new(&es, &w.model, NULL) != PV_OK || pv_env_new(w.model, &w.env) != PV_OK ||
        pv_arena_new(1 << 20, 0, &w.arena) != PV_OK ||
        pv_arena_new(1 << 20, 0, &w.arena2) != PV_OK || pv_policy_new(&ps, &w.p, NULL) != PV_OK ||
        pv_policy_work_new(w.p, &w.work) != PV_OK)
        return -1;
    w.E = (pv_episodes_t){.model = w.model,
                          .env = w.env,
                          .policy = w.p,
                          .work = w.work,
                          .arena = w.arena,
                          .task_seed = 3};
    *state = &w;
    return 0;
}

static int s_teardown(void **state)
{
    s_world_t *w = *state;
    pv_policy_work_destroy(&w->work);
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
    assert_int_equal(pv_episodes_expert(&w->E, 0, 10, &demos, &c, NULL), PV_OK);
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
    assert_int_equal(pv_rollout_episode(w->model, w->env, &task, w->p, w->work, NULL, &ro, 0,
                                        w->arena, &tr, &c, NULL),
                     PV_OK);
    assert_int_equal(c.env_steps, tr.n_steps);
    assert_int_equal(c.decisions, tr.n_steps);
    for (size_t t = 0; t <= tr.n_steps; t++) {
        bool won;
        double reward = -1;
        pv_cost_t before = vc;
        pv_arena_reset(w->arena2);
        assert_int_equal(pv_rollout_continue(w->model, w->env, &tr, t, w->p, w->work, NULL, &ro,
                                             w->arena2, &won, &reward, &vc, NULL),
                         PV_OK);
        assert_int_equal(won, tr.won);
        assert_true(reward == tr.reward); /* greedy: the same ending, the same reward */
        assert_int_equal(vc.env_steps - before.env_steps, tr.n_steps - t);
    }
    pv_traj_t no_states = tr;
    no_states.states = NULL;
    bool won;
    assert_int_equal(pv_rollout_continue(w->model, w->env, &no_states, 0, w->p, w->work, NULL, &ro,
                                         w->arena2, &won, NULL, &vc, NULL),
                     PV_ERR_STATE);
}

/* The verifier's primitive: from a bare state and history, sampled continuations with a
 * seeded RNG equal those from the trajectory itself; malformed starts are refused. */
static void test_from_state(void **state)
{
    s_world_t *w = *state;
    pv_rollout_opts_t ro = {.max_steps = 20, .save_states = true};
    pv_task_t task = pv_episode_task(3, PV_SPLIT_TRAIN, 9);
    pv_traj_t tr;
    pv_cost_t c = {0};
    pv_rng_t rng;
    pv_rng_seed(&rng, 9, 9);
    pv_arena_reset(w->arena);
    assert_int_equal(pv_rollout_episode(w->model, w->env, &task, w->p, w->work, &rng, &ro, 0,
                                        w->arena, &tr, &c, NULL),
                     PV_OK);
    for (size_t t = 0; t < tr.n_steps; t += 3) {
        pv_rollout_start_t st = {.state = tr.states[t],
                                 .state_len = tr.state_len[t],
                                 .task_text = tr.task_text,
                                 .history = tr.texts,
                                 .n_history = 2 * t + 1};
        for (int k = 0; k < 3; k++) {
            pv_rng_t r1, r2;
            pv_rng_seed(&r1, 100 + t, (uint64_t)k);
            r2 = r1;
            bool won1, won2;
            double rw1 = -1, rw2 = -2;
            pv_cost_t c1 = {0}, c2 = {0};
            pv_traj_t cont;
            pv_arena_reset(w->arena2);
            assert_int_equal(pv_rollout_from_state(w->model, w->env, &st, w->p, w->work, &r1, &ro,
                                                   w->arena2, &won1, &rw1, &c1, &cont, NULL),
                             PV_OK);
            /* the continuation as a trajectory: its own steps after the history */
            assert_int_equal(cont.first_step, t);
            assert_int_equal(cont.n_steps, c1.env_steps);
            assert_int_equal(cont.won, won1);
            for (size_t h = 0; h <= 2 * t; h++)
                assert_string_equal(cont.texts[h], tr.texts[h]);
            pv_arena_reset(w->arena2);
            assert_int_equal(pv_rollout_continue(w->model, w->env, &tr, t, w->p, w->work, &r2, &ro,
                                                 w->arena2, &won2, &rw2, &c2, NULL),
                             PV_OK);
            assert_int_equal(won1, won2);
            assert_true(rw1 == rw2);
            assert_int_equal(c1.env_steps, c2.env_steps);
            assert_true(c1.env_steps + t <= 20); /* the budget counts from the episode start */
        }
    }
    bool won;
    pv_errmsg_t em = {{0}};
    pv_rollout_start_t bad = {.state = tr.states[0],
                              .state_len = tr.state_len[0],
                              .task_text = tr.task_text,
                              .history = tr.texts,
                              .n_history = 2};
    assert_int_equal(pv_rollout_from_state(w->model, w->env, &bad, w->p, w->work, NULL, &ro,
                                           w->arena2, &won, NULL, &c, NULL, &em),
                     PV_ERR_INVAL);
    assert_non_null(strstr(em.text, "odd"));
    bad.n_history = 1;
    bad.state_len = 0;
    assert_int_equal(pv_rollout_from_state(w->model, w->env, &bad, w->p, w->work, NULL, &ro,
                                           w->arena2, &won, NULL, &c, NULL, &em),
                     PV_ERR_INVAL);
    uint8_t junk[16] = {1, 2, 3};
    bad.state = junk;
    bad.state_len = sizeof junk;
    assert_int_not_equal(pv_rollout_from_state(w->model, w->env, &bad, w->p, w->work, NULL, &ro,
                                               w->arena2, &won, NULL, &c, NULL, &em),
                         PV_OK);
}

/* A greedy evaluation plays the same games the same way twice; a sampled one with the same
 * RNG too. */
static void test_eval_reproducible(void **state)
{
    s_world_t *w = *state;
    pv_rollout_opts_t ro = {.max_steps = 30};
    double a = -1, b = -2, s1 = -1, s2 = -2;
    pv_cost_t c1 = {0}, c2 = {0};
    assert_int_equal(pv_episodes_eval(&w->E, PV_SPLIT_TEST, 0, 12, NULL, &ro, &a, &c1, NULL),
                     PV_OK);
    assert_int_equal(pv_episodes_eval(&w->E, PV_SPLIT_TEST, 0, 12, NULL, &ro, &b, &c2, NULL),
                     PV_OK);
    assert_true(a == b);
    assert_int_equal(c1.env_steps, c2.env_steps);
    pv_rng_t r1, r2;
    pv_rng_seed(&r1, 5, 5);
    r2 = r1;
    c1 = c2 = (pv_cost_t){0};
    assert_int_equal(pv_episodes_eval(&w->E, PV_SPLIT_TEST, 0, 12, &r1, &ro, &s1, &c1, NULL),
                     PV_OK);
    assert_int_equal(pv_episodes_eval(&w->E, PV_SPLIT_TEST, 0, 12, &r2, &ro, &s2, &c2, NULL),
                     PV_OK);
    assert_true(s1 == s2 && s1 >= 0 && s1 <= 1);
    assert_int_equal(c1.env_steps, c2.env_steps);
}

/* An environment of `name` (seed 3), an arena and a fresh scorer with its scratch. */
static void s_eval_setup(const char *name, pv_env_model_t **model, pv_env_t **env,
                         pv_arena_t **arena, pv_policy_t **p, pv_policy_work_t **work)
{
    pv_env_spec_t es = {.name = name, .seed = 3};
    pv_policy_spec_t ps = {.kind = "bow_mlp", .n_buckets = 8192, .seed = 3};
    assert_int_equal(pv_env_model_new(&es, model, NULL), PV_OK);
    assert_int_equal(pv_env_new(*model, env), PV_OK);
    assert_int_equal(pv_arena_new(1 << 20, 0, arena), PV_OK);
    assert_int_equal(pv_policy_new(&ps, p, NULL), PV_OK);
    assert_int_equal(pv_policy_work_new(*p, work), PV_OK);
}

/* The sampled held-out pass by hand: task i of `split` from `first` alone, on its own stream
 * seeded (mix(seed, first + i), "eval"), summed. */
static void s_sampled_ref(const pv_episodes_t *E, pv_env_split_t split, uint64_t first, size_t n,
                          uint64_t seed, const pv_rollout_opts_t *ro, pv_eval_detail_t *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        pv_rng_t rng;
        pv_eval_detail_t d;
        pv_cost_t c = {0};
        pv_rng_seed(&rng, pv_rng_mix(seed, first + i), 0x6576616cu);
        assert_int_equal(pv_episodes_eval_detail(E, split, first + i, 1, &rng, ro, &d, &c, NULL),
                         PV_OK);
        out->n += d.n;
        out->wins += d.wins;
        out->reward_sum += d.reward_sum;
    }
}

/* learner.eval_split = train on the generated ALFWorld: new games of the training task kinds,
 * from PV_EPISODES_SEEN_FIRST on, played like any other evaluation; none of their task
 * sentences (type, object, destination) is a test game's. */
static void test_eval_heldout_seen(void **state)
{
    (void)state;
    pv_env_model_t *model = NULL;
    pv_env_t *env = NULL;
    pv_arena_t *arena = NULL;
    pv_policy_t *p = NULL;
    pv_policy_work_t *work = NULL;
    s_eval_setup("alfworld", &model, &env, &arena, &p, &work);
    pv_episodes_t E = {
        .model = model, .env = env, .policy = p, .work = work, .arena = arena, .task_seed = 3};
    pv_rollout_opts_t ro = {.max_steps = 10};
    enum { n = 24 };
    pv_eval_detail_t g, sm1, g_ref;
    pv_cost_t c = {0};
    assert_int_equal(
        pv_episodes_eval_heldout(&E, 1, p, PV_SPLIT_TRAIN, n, &ro, 9, 0.0f, &g, &sm1, &c, NULL),
        PV_OK);
    assert_int_equal(g.n, n);
    assert_int_equal(g.split, PV_SPLIT_TRAIN);
    assert_int_equal(sm1.split, PV_SPLIT_TRAIN);
    assert_int_equal(pv_episodes_eval_detail(&E, PV_SPLIT_TRAIN, PV_EPISODES_SEEN_FIRST, n, NULL,
                                             &ro, &g_ref, &c, NULL),
                     PV_OK);
    assert_true(g.wins == g_ref.wins && g.reward_sum == g_ref.reward_sum);
    char test_tasks[n][160];
    pv_step_result_t r;
    for (size_t i = 0; i < n; i++) {
        pv_task_t t = pv_episode_task(3, PV_SPLIT_TEST, i);
        assert_int_equal(pv_env_reset(env, &t, &r), PV_OK);
        snprintf(test_tasks[i], sizeof test_tasks[i], "%s", pv_env_task_text(env));
    }
    for (size_t i = 0; i < n; i++) {
        pv_task_t t = pv_episode_task(3, PV_SPLIT_TRAIN, PV_EPISODES_SEEN_FIRST + i);
        assert_int_equal(pv_env_reset(env, &t, &r), PV_OK);
        for (size_t j = 0; j < n; j++)
            assert_string_not_equal(pv_env_task_text(env), test_tasks[j]);
    }

    /* and a test game's sentence is never a training game's either (the splits' kinds) */
    pv_task_t t0 = pv_episode_task(3, PV_SPLIT_TRAIN, 0);
    assert_int_equal(pv_env_reset(env, &t0, &r), PV_OK);
    for (size_t j = 0; j < n; j++)
        assert_string_not_equal(pv_env_task_text(env), test_tasks[j]);
    pv_policy_work_destroy(&work);
    pv_policy_destroy(&p);
    pv_arena_destroy(&arena);
    pv_env_destroy(&env);
    pv_env_model_destroy(&model);
}

/* The held-out evaluation plays greedy, then sampled on the learner's "eval" stream at the
 * evaluation temperature: 0 leaves the policy's own T; T = 5 plays as a policy built at T = 5
 * with the same parameters (and not as the T = 1 one: WebShop's partial rewards tell them
 * apart), and the policy's T is put back. */
static void test_eval_heldout_temperature(void **state)
{
    (void)state;
    pv_policy_spec_t ps = {.kind = "bow_mlp", .n_buckets = 8192, .seed = 3};
    pv_env_model_t *model = NULL;
    pv_env_t *env = NULL;
    pv_arena_t *arena = NULL;
    pv_policy_t *p = NULL, *hot = NULL;
    pv_policy_work_t *work = NULL, *hot_work = NULL;
    s_eval_setup("webshop", &model, &env, &arena, &p, &work);
    ps.temperature = 5.0f; /* the same parameters at T = 5 in a policy of their own */
    assert_int_equal(pv_policy_new(&ps, &hot, NULL), PV_OK);
    assert_int_equal(pv_policy_work_new(hot, &hot_work), PV_OK);
    /* scores twice an initialisation's: at T = 1 they are sharp enough that T = 5 draws other
     * actions from the same uniform numbers (each task has its own stream, so one differing
     * draw no longer shifts every later episode's) */
    for (size_t i = 0; i < pv_policy_n_params(p); i++)
        pv_policy_params(p)[i] *= 4.0f;
    memcpy(pv_policy_params(hot), pv_policy_params_const(p), pv_policy_n_params(p) * sizeof(float));
    pv_episodes_t E = {
        .model = model, .env = env, .policy = p, .work = work, .arena = arena, .task_seed = 3};
    pv_episodes_t E_hot = E;
    E_hot.policy = hot;
    E_hot.work = hot_work;
    pv_rollout_opts_t ro = {.max_steps = 10};
    const size_t n = 24;

    pv_eval_detail_t g, g_ref, sm1, sm5, ref1, ref5;
    pv_cost_t c = {0};
    assert_int_equal(
        pv_episodes_eval_heldout(&E, 1, p, PV_SPLIT_TEST, n, &ro, 9, 0.0f, &g, &sm1, &c, NULL),
        PV_OK);
    assert_int_equal(pv_episodes_eval_detail(&E, PV_SPLIT_TEST, 0, n, NULL, &ro, &g_ref, &c, NULL),
                     PV_OK);
    s_sampled_ref(&E, PV_SPLIT_TEST, 0, n, 9, &ro, &ref1);
    assert_true(g.wins == g_ref.wins && g.reward_sum == g_ref.reward_sum);
    assert_true(sm1.wins == ref1.wins && sm1.reward_sum == ref1.reward_sum);

    assert_int_equal(
        pv_episodes_eval_heldout(&E, 1, p, PV_SPLIT_TEST, n, &ro, 9, 5.0f, &g, &sm5, &c, NULL),
        PV_OK);
    assert_true(pv_policy_spec(p)->temperature == 1.0f);
    assert_true(g.wins == g_ref.wins && g.reward_sum == g_ref.reward_sum); /* argmax: any T */
    s_sampled_ref(&E_hot, PV_SPLIT_TEST, 0, n, 9, &ro, &ref5);
    assert_true(sm5.wins == ref5.wins && sm5.reward_sum == ref5.reward_sum);
    assert_true(ref5.reward_sum != ref1.reward_sum); /* T = 5 plays other episodes than T = 1 */

    assert_int_equal(
        pv_episodes_eval_heldout(&E, 1, p, PV_SPLIT_TEST, n, &ro, 9, -1.0f, &g, &sm5, &c, NULL),
        PV_ERR_INVAL);
    /* WebShop's train split is finite and training plays all of it: no "new" training games */
    pv_errmsg_t em = {{0}};
    assert_int_equal(
        pv_episodes_eval_heldout(&E, 1, p, PV_SPLIT_TRAIN, n, &ro, 9, 0.0f, &g, &sm5, &c, &em),
        PV_ERR_INVAL);
    assert_non_null(strstr(em.text, "finite"));
    assert_int_equal(pv_policy_set_temperature(p, 0.0f), PV_ERR_INVAL);
    assert_true(pv_policy_spec(p)->temperature == 1.0f);
    pv_policy_work_destroy(&hot_work);
    pv_policy_work_destroy(&work);
    pv_policy_destroy(&hot);
    pv_policy_destroy(&p);
    pv_arena_destroy(&arena);
    pv_env_destroy(&env);
    pv_env_model_destroy(&model);
}

/* Three lanes play the held-out evaluation as one does: every task's episode is the same
 * (greedy, and sampled on the task's own stream), summed in task order, types included; the
 * environment steps are counted once each. */
static void test_eval_heldout_lanes(void **state)
{
    (void)state;
    enum { n_lanes = 3, n = 20 };
    pv_env_model_t *model = NULL;
    pv_env_t *env[n_lanes] = {NULL};
    pv_arena_t *arena[n_lanes] = {NULL};
    pv_policy_t *p = NULL;
    pv_policy_work_t *work[n_lanes] = {NULL};
    s_eval_setup("alfworld", &model, &env[0], &arena[0], &p, &work[0]);
    pv_episodes_t E[n_lanes];
    for (size_t l = 0; l < n_lanes; l++) {
        if (l > 0) {
            assert_int_equal(pv_env_new(model, &env[l]), PV_OK);
            assert_int_equal(pv_arena_new(1 << 20, 0, &arena[l]), PV_OK);
            assert_int_equal(pv_policy_work_new(p, &work[l]), PV_OK);
        }
        E[l] = (pv_episodes_t){.model = model,
                               .env = env[l],
                               .policy = p,
                               .work = work[l],
                               .arena = arena[l],
                               .task_seed = 5};
    }
    pv_rollout_opts_t ro = {.max_steps = 12};
    pv_eval_detail_t g1, s1, g3, s3;
    pv_cost_t c1 = {0}, c3 = {0};
    assert_int_equal(
        pv_episodes_eval_heldout(E, 1, p, PV_SPLIT_TEST, n, &ro, 4, 2.0f, &g1, &s1, &c1, NULL),
        PV_OK);
    assert_int_equal(pv_episodes_eval_heldout(E, n_lanes, p, PV_SPLIT_TEST, n, &ro, 4, 2.0f, &g3,
                                              &s3, &c3, NULL),
                     PV_OK);
    assert_int_equal(g3.n, n);
    assert_int_equal(c1.env_steps, c3.env_steps);
    assert_true(c1.env_steps > n); /* the episodes were played, not skipped */
    const pv_eval_detail_t *a[2] = {&g1, &s1}, *b[2] = {&g3, &s3};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(a[k]->wins, b[k]->wins);
        assert_true(a[k]->reward_sum == b[k]->reward_sum);
        assert_int_equal(a[k]->n_types, b[k]->n_types);
        assert_true(a[k]->n_types > 1);
        for (uint32_t t = 0; t < a[k]->n_types; t++) {
            assert_string_equal(a[k]->types[t].name, b[k]->types[t].name);
            assert_int_equal(a[k]->types[t].n, b[k]->types[t].n);
            assert_int_equal(a[k]->types[t].wins, b[k]->types[t].wins);
        }
    }
    assert_int_equal(
        pv_episodes_eval_heldout(E, 0, p, PV_SPLIT_TEST, n, &ro, 4, 2.0f, &g3, &s3, &c3, NULL),
        PV_ERR_INVAL);
    for (size_t l = 0; l < n_lanes; l++) {
        pv_policy_work_destroy(&work[l]);
        pv_arena_destroy(&arena[l]);
        pv_env_destroy(&env[l]);
    }
    pv_policy_destroy(&p);
    pv_env_model_destroy(&model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demos_win),
        cmocka_unit_test(test_continuation_replays),
        cmocka_unit_test(test_from_state),
        cmocka_unit_test(test_eval_reproducible),
        cmocka_unit_test(test_eval_heldout_temperature),
        cmocka_unit_test(test_eval_heldout_seen),
        cmocka_unit_test(test_eval_heldout_lanes),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
