/* test_actor_group.c - prover-actor's pieces on real ALFWorld episodes (generated games,
 * untrained policy): actors share the training tasks without overlap, new weights land
 * between episodes only and every step carries the version that chose it, and the group's
 * ROLLOUT_GROUP bytes carry the saved states exactly when the prover estimator needs them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "actor/actor_group.h"
#include "common/wire/job_ids.h"
#include "roles_fixture.h"

typedef struct s_fix {
    rf_world_t w;
    pv_arena_t *wire_arena;
    pv_wire_dec_t *dec;
    pv_rng_t rng;
    uint32_t hook_calls;
    size_t steps_before_hook; /* env steps seen by the hook: the episodes are whole */
    pv_cost_t cost;
} s_fix_t;

static s_fix_t s_f;

static int s_setup(void **state)
{
    s_fix_t *f = &s_f;
    if (rf_open(&f->w) != 0 || pv_arena_new(0, 0, &f->wire_arena) != PV_OK ||
        pv_wire_dec_new(NULL, &f->dec) != PV_OK)
        return -1;
    pv_rng_seed(&f->rng, 2, 2);
    *state = f;
    return 0;
}

static int s_teardown(void **state)
{
    s_fix_t *f = *state;
    pv_wire_dec_destroy(&f->dec);
    pv_arena_destroy(&f->wire_arena);
    rf_close(&f->w);
    return 0;
}

static int s_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Three actors, 200 groups each: together they play tasks 0 .. 599 once each. */
static void test_task_schedule(void **state)
{
    (void)state;
    enum { A = 3, N = 200 };
    static uint64_t ids[A * N];
    for (uint32_t a = 0; a < A; a++) {
        pv_actor_sched_t s = {.index = a, .count = A, .n_tasks = UINT64_MAX, .run_seed = 9};
        for (uint64_t n = 0; n < N; n++) {
            pv_task_t t = pv_actor_task(&s, n);
            assert_int_equal(t.split, PV_SPLIT_TRAIN);
            assert_int_equal(t.seed, pv_rng_mix(9, t.task_id));
            ids[a * N + n] = t.task_id;
        }
    }
    qsort(ids, A * N, sizeof *ids, s_cmp);
    for (uint64_t i = 0; i < A * N; i++)
        assert_int_equal(ids[i], i);
    /* a finite split (loaded data) in file order wraps around */
    pv_actor_sched_t s = {.index = 1, .count = 4, .n_tasks = 10, .run_seed = 9};
    assert_int_equal(pv_actor_task(&s, 0).task_id, 1);
    assert_int_equal(pv_actor_task(&s, 2).task_id, 9);
    assert_int_equal(pv_actor_task(&s, 3).task_id, 3);
}

/* env.shuffle_tasks on a finite split of 50 tasks: three actors together play every task once
 * in each pass of 50 positions, each pass in an order other than the file's and other than
 * the pass before, the same order for the same run seed, another for another seed. */
static void test_task_schedule_shuffled(void **state)
{
    (void)state;
    enum { A = 3, N = 50, PASSES = 3 };
    uint64_t order[2][PASSES][N];
    for (uint64_t seed = 0; seed < 2; seed++) {
        for (uint64_t p = 0; p < (uint64_t)PASSES * N; p++) { /* position p = actor a's group n */
            pv_actor_sched_t s = {.index = (uint32_t)(p % A),
                                  .count = A,
                                  .n_tasks = N,
                                  .run_seed = seed,
                                  .shuffle = true};
            pv_task_t t = pv_actor_task(&s, p / A);
            assert_true(t.task_id < N);
            assert_int_equal(t.seed, pv_rng_mix(seed, t.task_id));
            order[seed][p / N][p % N] = t.task_id;
        }
        for (int pass = 0; pass < PASSES; pass++) {
            unsigned char seen[N] = {0};
            size_t in_place = 0, as_before = 0;
            for (uint64_t k = 0; k < N; k++) {
                uint64_t id = order[seed][pass][k];
                assert_int_equal(seen[id], 0);
                seen[id] = 1;
                in_place += id == k;
                as_before += pass > 0 && id == order[seed][pass - 1][k];
            }
            assert_true(in_place < N / 2);
            assert_true(as_before < N / 2);
        }
    }
    size_t same = 0;
    for (uint64_t k = 0; k < N; k++)
        same += order[0][0][k] == order[1][0][k];
    assert_true(same < N / 2);
    /* generated tasks (an unbounded split) are not reordered */
    pv_actor_sched_t g = {
        .index = 2, .count = 3, .n_tasks = UINT64_MAX, .run_seed = 4, .shuffle = true};
    assert_int_equal(pv_actor_task(&g, 5).task_id, 17);
}

/* The hook plays the learner: each call publishes a new version (new parameters too). */
static pv_err_t s_new_weights(void *user)
{
    s_fix_t *f = user;
    f->hook_calls++;
    f->steps_before_hook = f->cost.env_steps;
    pv_policy_t *p = f->w.policy;
    float *w = pv_policy_params(p);
    for (size_t i = 0; i < pv_policy_n_params(p); i += 97)
        w[i] += 0.01f;
    pv_policy_set_version(p, pv_policy_version(p) + 1);
    return f->hook_calls > 100 ? PV_ERR_INTERRUPTED : PV_OK;
}

static pv_actor_ctx_t s_ctx(s_fix_t *f, bool save_states)
{
    return (pv_actor_ctx_t){.model = f->w.model,
                            .env = f->w.env,
                            .policy = f->w.policy,
                            .work = f->w.work,
                            .rng = &f->rng,
                            .arena = f->w.arena,
                            .save_states = save_states,
                            .max_steps = 12,
                            .between = s_new_weights,
                            .user = f};
}

static void test_weights_between_episodes(void **state)
{
    s_fix_t *f = *state;
    pv_policy_set_version(f->w.policy, 10);
    f->hook_calls = 0;
    memset(&f->cost, 0, sizeof f->cost);
    pv_actor_ctx_t ctx = s_ctx(f, false);
    pv_task_t task = {PV_SPLIT_TRAIN, 4, 44};
    assert_int_equal(pv_actor_play_group(&ctx, &task, 5, 123, f->w.trajs, &f->cost, NULL), PV_OK);
    assert_int_equal(f->hook_calls, 5);
    size_t steps = 0;
    for (int i = 0; i < 5; i++) {
        const pv_traj_t *t = &f->w.trajs[i];
        assert_true(t->n_steps >= 1 && t->n_steps <= 12);
        assert_int_equal(t->group, 123);
        for (size_t s = 0; s < t->n_steps; s++) /* one version for a whole episode */
            assert_int_equal(t->steps[s].policy_version, 11 + i);
        steps += t->n_steps;
    }
    assert_int_equal(f->cost.env_steps, steps);
    assert_int_equal(f->steps_before_hook, steps - f->w.trajs[4].n_steps);
    /* the group's version is the oldest that acted */
    pv_group_meta_t meta = {.group_id = 123, .env_name = "alfworld", .kind = PV_ENV_ALFWORLD};
    pv_wire_msg_t m;
    assert_int_equal(
        pv_traj_group_to_wire(f->w.trajs, 5, &meta, false, f->wire_arena, &m.rollout_group, NULL),
        PV_OK);
    assert_int_equal(m.rollout_group.policy_version, 11);
    /* a stop from the hook ends the group */
    f->hook_calls = 99;
    assert_int_equal(pv_actor_play_group(&ctx, &task, 5, 124, f->w.trajs, &f->cost, NULL),
                     PV_ERR_INTERRUPTED);
    assert_int_equal(f->hook_calls, 101);
}

/* The bytes an actor submits: states for the prover estimator, none otherwise. */
static void test_encoded_group(void **state)
{
    s_fix_t *f = *state;
    f->hook_calls = 0;
    pv_task_t task = {PV_SPLIT_TRAIN, 6, 66};
    pv_wire_buf_t buf;
    pv_wire_buf_init(&buf, 0);
    for (int with = 0; with < 2; with++) {
        pv_actor_ctx_t ctx = s_ctx(f, with);
        assert_int_equal(pv_actor_play_group(&ctx, &task, 4, 7, f->w.trajs, &f->cost, NULL), PV_OK);
        uint64_t id = pv_actor_job_id(2, 7);
        pv_group_meta_t meta = {.group_id = id,
                                .actor_id = 2,
                                .kind = PV_ENV_ALFWORLD,
                                .env_name = "alfworld",
                                .task = task,
                                .created_unix_ms = 5};
        pv_arena_reset(f->wire_arena);
        assert_int_equal(
            pv_actor_encode_group(f->w.trajs, 4, &meta, with, f->wire_arena, &buf, NULL), PV_OK);
        pv_wire_msg_t m;
        assert_int_equal(pv_wire_decode(f->dec, buf.data, buf.len, f->wire_arena, &m, NULL), PV_OK);
        const pv_wire_rollout_group_t *g = &m.rollout_group;
        assert_int_equal(g->group_id, id);
        assert_int_equal(g->actor_id, 2);
        assert_int_equal(g->task.task_id, 6);
        assert_int_equal(g->n_trajectories, 4);
        for (uint32_t i = 0; i < 4; i++) {
            const pv_traj_t *t = &f->w.trajs[i];
            assert_int_equal(g->trajectories[i].n_steps, t->n_steps);
            for (uint32_t s = 0; s < t->n_steps; s++) {
                const pv_wire_step_t *ws = &g->trajectories[i].steps[s];
                assert_int_equal(ws->state_key, t->state_keys[s]);
                if (with) {
                    assert_int_equal(ws->state.len, t->state_len[s]);
                    assert_memory_equal(ws->state.ptr, t->states[s], t->state_len[s]);
                } else {
                    assert_int_equal(ws->state.len, 0);
                }
            }
        }
    }
    pv_wire_buf_free(&buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_task_schedule),
        cmocka_unit_test(test_task_schedule_shuffled),
        cmocka_unit_test(test_weights_between_episodes),
        cmocka_unit_test(test_encoded_group),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
