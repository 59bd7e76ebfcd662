/* test_traj_wire.c - real ALFWorld rollouts (untrained policy) -> ROLLOUT_GROUP -> bytes ->
 * decoded -> trajectories again: every field survives; hostile steps are refused. The same
 * for a language model's steps (several tokens, one behaviour log-prob each, checked
 * against the vocabulary). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/traj/rollout.h"
#include "common/traj/traj_wire.h"
#include "lm_fixture.h"
#include "wire_edit.h"

enum { G = 4 };

typedef struct s_fix {
    pv_env_model_t *model;
    pv_env_t *env;
    pv_policy_t *policy;
    pv_policy_work_t *work;
    pv_arena_t *arena, *arena2;
    pv_wire_dec_t *dec;
    pv_traj_t trajs[G];
} s_fix_t;

static int s_setup(void **state)
{
    static s_fix_t f;
    pv_env_spec_t es = {.name = "alfworld", .max_steps = 12};
    pv_policy_spec_t ps = {.kind = "bow_mlp", .n_buckets = 1024, .seed = 3};
    if (pv_env_model_new(&es, &f.model, NULL) || pv_env_new(f.model, &f.env) ||
        pv_policy_new(&ps, &f.policy, NULL) || pv_policy_work_new(f.policy, &f.work) ||
        pv_arena_new(0, 0, &f.arena) || pv_arena_new(0, 0, &f.arena2) ||
        pv_wire_dec_new(NULL, &f.dec))
        return -1;
    pv_policy_set_version(f.policy, 7);
    pv_rng_t rng;
    pv_rng_seed(&rng, 1, 2);
    pv_rollout_opts_t ro = {.save_states = true};
    pv_task_t task = {PV_SPLIT_TRAIN, 5, 99};
    for (int i = 0; i < G; i++) {
        pv_cost_t cost = {0};
        if (pv_rollout_episode(f.model, f.env, &task, f.policy, f.work, &rng, &ro, 5, f.arena,
                               &f.trajs[i], &cost, NULL) != PV_OK)
            return -1;
    }
    *state = &f;
    return 0;
}

static int s_teardown(void **state)
{
    s_fix_t *f = *state;
    pv_wire_dec_destroy(&f->dec);
    pv_arena_destroy(&f->arena);
    pv_arena_destroy(&f->arena2);
    pv_policy_work_destroy(&f->work);
    pv_policy_destroy(&f->policy);
    pv_env_destroy(&f->env);
    pv_env_model_destroy(&f->model);
    return 0;
}

static void test_round_trip(void **state)
{
    s_fix_t *f = *state;
    pv_group_meta_t meta = {.group_id = 1234,
                            .actor_id = 2,
                            .kind = PV_ENV_ALFWORLD,
                            .env_name = "alfworld",
                            .task = {PV_SPLIT_TRAIN, 5, 99},
                            .created_unix_ms = 1700000000000ULL};
    pv_wire_msg_t msg = {.type = PV_MSG_ROLLOUT_GROUP};
    pv_errmsg_t em = {{0}};
    assert_int_equal(
        pv_traj_group_to_wire(f->trajs, G, &meta, true, f->arena2, &msg.rollout_group, &em), PV_OK);
    pv_wire_buf_t buf;
    pv_wire_buf_init(&buf, 0);
    assert_int_equal(pv_wire_encode(&msg, NULL, &buf, &em), PV_OK);
    pv_wire_msg_t back;
    assert_int_equal(pv_wire_decode(f->dec, buf.data, buf.len, f->arena2, &back, &em), PV_OK);
    assert_int_equal(back.type, PV_MSG_ROLLOUT_GROUP);
    const pv_wire_rollout_group_t *g = &back.rollout_group;
    assert_int_equal(g->group_id, 1234);
    assert_int_equal(g->actor_id, 2);
    assert_int_equal(g->task.task_id, 5);
    assert_int_equal(g->task.seed, 99);
    assert_int_equal(g->policy_version, 7);
    assert_string_equal(g->task_text, f->trajs[0].task_text);
    pv_traj_t *out = NULL;
    size_t n = 0;
    assert_int_equal(pv_traj_group_from_wire(g, true, f->arena2, &out, &n, &em), PV_OK);
    assert_int_equal(n, G);
    size_t edges = 0;
    for (size_t i = 0; i < G; i++) {
        const pv_traj_t *a = &f->trajs[i], *b = &out[i];
        assert_non_null(a->traces); /* ALFWorld records atom traces */
        assert_non_null(b->traces);
        assert_int_equal(a->n_steps, b->n_steps);
        assert_true(a->won == b->won);
        assert_true((float)a->reward == (float)b->reward);
        assert_int_equal(b->group, 1234);
        for (size_t t = 0; t < a->n_steps; t++) {
            assert_string_equal(a->texts[2 * t], b->texts[2 * t]);
            assert_string_equal(a->texts[2 * t + 1], b->texts[2 * t + 1]);
            assert_int_equal(a->steps[t].n_cands, b->steps[t].n_cands);
            for (size_t c = 0; c < a->steps[t].n_cands; c++)
                assert_string_equal(a->steps[t].cands[c], b->steps[t].cands[c]);
            assert_int_equal(a->steps[t].token, b->steps[t].token);
            assert_true(a->steps[t].behav_logprob == b->steps[t].behav_logprob);
            assert_int_equal(a->steps[t].policy_version, 7);
            assert_int_equal(b->steps[t].policy_version, 7);
            assert_true(a->state_keys[t] == b->state_keys[t]);
            assert_int_equal(a->state_len[t], b->state_len[t]);
            assert_memory_equal(a->states[t], b->states[t], a->state_len[t]);
            /* the atom traces, field by field */
            const pv_env_trace_t *x = &a->traces[t], *y = &b->traces[t];
            assert_int_equal(x->n_made, y->n_made);
            assert_int_equal(x->n_unmade, y->n_unmade);
            assert_int_equal(x->n_deps, y->n_deps);
            assert_int_equal(x->n_dropped, y->n_dropped);
            assert_memory_equal(x->made, y->made, x->n_made * sizeof *x->made);
            assert_memory_equal(x->unmade, y->unmade, x->n_unmade * sizeof *x->unmade);
            assert_memory_equal(x->deps, y->deps, x->n_deps * sizeof *x->deps);
            edges += x->n_deps;
        }
        assert_true(a->state_keys[a->n_steps] == b->state_keys[b->n_steps]);
    }
    assert_true(edges > 0); /* 4 x 12 random steps take, open or go somewhere and act there */
    /* without states the learner's copy carries none */
    assert_int_equal(
        pv_traj_group_to_wire(f->trajs, G, &meta, false, f->arena2, &msg.rollout_group, &em),
        PV_OK);
    assert_int_equal(msg.rollout_group.trajectories[0].steps[0].state.len, 0);
    pv_wire_buf_free(&buf);
}

static void test_hostile_steps_are_refused(void **state)
{
    s_fix_t *f = *state;
    pv_group_meta_t meta = {.group_id = 9, .env_name = "alfworld", .kind = PV_ENV_ALFWORLD};
    pv_wire_rollout_group_t g;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_traj_group_to_wire(f->trajs, G, &meta, false, f->arena2, &g, &em), PV_OK);
    pv_wire_step_t *st = we_step(f->arena2, &g, 1, 0);
    assert_non_null(st);
    uint32_t bad = st->n_candidates; /* one past the last candidate */
    st->action_tokens = &bad;
    pv_traj_t *out = NULL;
    size_t n = 0;
    assert_int_equal(pv_traj_group_from_wire(&g, false, f->arena2, &out, &n, &em), PV_ERR_DATA);
    assert_non_null(strstr(em.text, "trajectory 1 step 0"));
    uint32_t ok = 0;
    st->action_tokens = &ok;
    st->n_action_tokens = 2;
    assert_int_equal(pv_traj_group_from_wire(&g, false, f->arena2, &out, &n, &em), PV_ERR_DATA);
    st->n_action_tokens = 1;
    st->n_candidates = 0;
    assert_int_equal(pv_traj_group_from_wire(&g, false, f->arena2, &out, &n, &em), PV_ERR_DATA);
    st->n_candidates = 1;
    assert_int_equal(pv_traj_group_from_wire(&g, false, f->arena2, &out, &n, &em), PV_OK);
    /* atom traces: an edge to the step itself or later, edges out of order, too many atoms */
    pv_wire_step_t *s2 = we_step(f->arena2, &g, 1, 2);
    assert_non_null(s2);
    uint32_t fwd[1] = {2}, order[2] = {1, 0}, atoms[PV_ENV_TRACE_ATOMS + 1] = {0};
    s2->deps = fwd;
    s2->n_deps = 1;
    assert_int_equal(pv_traj_group_from_wire(&g, false, f->arena2, &out, &n, &em), PV_ERR_DATA);
    assert_non_null(strstr(em.text, "trajectory 1 step 2: atom trace"));
    s2->deps = order;
    s2->n_deps = 2;
    assert_int_equal(pv_traj_group_from_wire(&g, false, f->arena2, &out, &n, &em), PV_ERR_DATA);
    s2->n_deps = 1; /* step 1: fine */
    assert_int_equal(pv_traj_group_from_wire(&g, false, f->arena2, &out, &n, &em), PV_OK);
    assert_int_equal(out[1].traces[2].deps[0], 1);
    s2->goal_made = atoms;
    s2->n_goal_made = PV_ENV_TRACE_ATOMS + 1;
    assert_int_equal(pv_traj_group_from_wire(&g, false, f->arena2, &out, &n, &em), PV_ERR_DATA);
    assert_int_equal(pv_traj_group_to_wire(f->trajs, 0, &meta, false, f->arena2, &g, &em),
                     PV_ERR_INVAL);
}

/* A language model's episode: every step's tokens and per-token log-probs survive the wire
 * (its generated action texts are valid UTF-8, or the encoder would refuse them), the step's
 * log-prob is their sum; tokens outside the vocabulary, a log-prob count that is not the
 * token count, and several tokens where a candidate index is expected are refused. */
static void test_lm_steps(void **state)
{
    s_fix_t *f = *state;
    size_t len = 0;
    char *json = lm_fixture_vocab(&len);
    assert_non_null(json);
    pv_policy_spec_t ps = lm_fixture_spec(json, len, 11);
    pv_policy_t *lm = NULL;
    pv_policy_work_t *w = NULL;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_policy_new(&ps, &lm, &em), PV_OK);
    assert_int_equal(pv_policy_work_new(lm, &w), PV_OK);
    pv_policy_set_version(lm, 3);
    uint32_t V = pv_policy_token_space(lm);
    assert_true(V > 256);
    pv_rng_t rng;
    pv_rng_seed(&rng, 4, 5);
    pv_rollout_opts_t ro = {.max_steps = 4};
    pv_task_t task = {PV_SPLIT_TRAIN, 2, 7};
    pv_traj_t tr;
    pv_cost_t cost = {0};
    assert_int_equal(
        pv_rollout_episode(f->model, f->env, &task, lm, w, &rng, &ro, 5, f->arena, &tr, &cost, &em),
        PV_OK);
    assert_int_equal(tr.n_steps, 4);
    size_t multi = 0;
    for (size_t t = 0; t < tr.n_steps; t++) {
        assert_non_null(tr.steps[t].tokens);
        multi += tr.steps[t].n_tokens > 1;
    }
    assert_true(multi > 0);
    pv_group_meta_t meta = {.group_id = 77, .env_name = "alfworld", .kind = PV_ENV_ALFWORLD};
    pv_wire_msg_t msg = {.type = PV_MSG_ROLLOUT_GROUP};
    assert_int_equal(
        pv_traj_group_to_wire(&tr, 1, &meta, false, f->arena2, &msg.rollout_group, &em), PV_OK);
    pv_wire_buf_t buf;
    pv_wire_buf_init(&buf, 0);
    assert_int_equal(pv_wire_encode(&msg, NULL, &buf, &em), PV_OK);
    pv_wire_msg_t back;
    assert_int_equal(pv_wire_decode(f->dec, buf.data, buf.len, f->arena2, &back, &em), PV_OK);
    pv_traj_t *out = NULL;
    size_t n = 0;
    assert_int_equal(
        pv_traj_group_from_wire_ts(&back.rollout_group, false, V, f->arena2, &out, &n, &em), PV_OK);
    assert_int_equal(n, 1);
    for (size_t t = 0; t < tr.n_steps; t++) {
        const pv_step_rec_t *a = &tr.steps[t], *b = &out[0].steps[t];
        assert_string_equal(tr.texts[2 * t + 1], out[0].texts[2 * t + 1]);
        assert_int_equal(pv_step_n_tokens(a), pv_step_n_tokens(b));
        assert_memory_equal(pv_step_tokens(a), pv_step_tokens(b), a->n_tokens * sizeof(uint32_t));
        assert_memory_equal(pv_step_logprobs(a), pv_step_logprobs(b), a->n_tokens * sizeof(float));
        float sum = 0.0f;
        for (size_t k = 0; k < b->n_tokens; k++)
            sum += b->token_logprobs[k];
        assert_true(b->behav_logprob == sum);
        assert_int_equal(b->policy_version, 3);
    }
    /* the candidate scorer's decoder refuses the language model's steps */
    if (tr.steps[0].n_tokens > 1 || tr.steps[0].tokens[0] >= tr.steps[0].n_cands)
        assert_int_equal(
            pv_traj_group_from_wire(&back.rollout_group, false, f->arena2, &out, &n, &em),
            PV_ERR_DATA);
    pv_wire_step_t *st = we_step(f->arena2, &back.rollout_group, 0, 1);
    assert_non_null(st);
    uint32_t tk[64];
    assert_true(st->n_action_tokens <= 64);
    memcpy(tk, st->action_tokens, st->n_action_tokens * sizeof *tk);
    const uint32_t *keep = st->action_tokens;
    st->action_tokens = tk;
    tk[0] = V; /* outside the vocabulary */
    assert_int_equal(
        pv_traj_group_from_wire_ts(&back.rollout_group, false, V, f->arena2, &out, &n, &em),
        PV_ERR_DATA);
    assert_non_null(strstr(em.text, "step 1"));
    assert_int_equal(pv_traj_group_from_wire_ts(&back.rollout_group, false, PV_TRAJ_ANY_TOKENS,
                                                f->arena2, &out, &n, &em),
                     PV_OK); /* the judge's decoder does not know V */
    st->action_tokens = keep;
    st->n_behaviour_logprobs = st->n_action_tokens + 1;
    assert_int_equal(
        pv_traj_group_from_wire_ts(&back.rollout_group, false, V, f->arena2, &out, &n, &em),
        PV_ERR_DATA);
    st->n_behaviour_logprobs = st->n_action_tokens;
    st->n_action_tokens = st->n_behaviour_logprobs = 0;
    assert_int_equal(
        pv_traj_group_from_wire_ts(&back.rollout_group, false, V, f->arena2, &out, &n, &em),
        PV_ERR_DATA);
    pv_wire_buf_free(&buf);
    pv_policy_work_destroy(&w);
    pv_policy_destroy(&lm);
    free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_hostile_steps_are_refused),
        cmocka_unit_test(test_lm_steps),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
