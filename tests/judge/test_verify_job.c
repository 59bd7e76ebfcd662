/* test_verify_job.c - the verifier's work on VERIFY_JOBs built by the judge from a real
 * ALFWorld rollout group and sent through the wire: the trajectory view continues exactly as
 * the original trajectory does (same state, history, policy and seed give the same
 * continuations), hostile jobs are refused without a crash, and the language model's
 * continuations sampled in lockstep are counted as they are. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/wire/job_ids.h"
#include "judge/judge_group.h"
#include "judge/verify_job.h"
#include "lm_fixture.h"
#include "roles_fixture.h"

typedef struct s_fix {
    rf_wired_t x; /* the mixed group, decoded */
    pv_arena_t *garena, *jarena, *arena, *ref_arena;
    pv_vjob_ctx_t ctx;
    pv_jgroup_t g; /* the judge's exhaustive plan of the group */
    pv_jg_opts_t o;
    pv_wire_buf_t bytes; /* a job's bytes */
} s_fix_t;

static s_fix_t s_f;

static int s_setup(void **state)
{
    s_fix_t *f = &s_f;
    pv_wire_buf_init(&f->bytes, 0);
    if (rf_wired_open(&f->x, 42) != 0 || pv_arena_new(0, 0, &f->garena) != PV_OK ||
        pv_arena_new(0, 0, &f->jarena) != PV_OK || pv_arena_new(0, 0, &f->arena) != PV_OK ||
        pv_arena_new(0, 0, &f->ref_arena) != PV_OK)
        return -1;
    /* the judge's exhaustive plan: a job for every step of every trajectory */
    f->o = (pv_jg_opts_t){.prover = true,
                          .judge = PV_JUDGE_EXHAUSTIVE,
                          .k = 3,
                          .verify_failures = true,
                          .max_steps = pv_env_model_max_steps(f->x.w.model),
                          .run_seed = 11,
                          .timeout_ms = 1000};
    pv_rng_t rng;
    pv_rng_seed(&rng, 1, 1);
    if (pv_jgroup_open(&f->g, &f->o, &f->x.msg.rollout_group, 0, f->garena, NULL) != PV_OK)
        return -1;
    f->ctx = (pv_vjob_ctx_t){.model = f->x.w.model,
                             .env = f->x.w.env,
                             .policy = f->x.w.policy,
                             .work = f->x.w.work,
                             .arena = f->arena,
                             .verifier_id = 3};
    *state = f;
    return 0;
}

static int s_teardown(void **state)
{
    s_fix_t *f = *state;
    pv_arena_destroy(&f->ref_arena);
    pv_arena_destroy(&f->arena);
    pv_wire_buf_free(&f->bytes);
    pv_arena_destroy(&f->jarena);
    pv_arena_destroy(&f->garena);
    rf_wired_close(&f->x);
    return 0;
}

/* Job j of the judge's plan, encoded and decoded as the verifier receives it. */
static pv_wire_verify_job_t s_job(s_fix_t *f, size_t j)
{
    pv_wire_msg_t m = {.type = PV_MSG_VERIFY_JOB};
    pv_jgroup_job_msg(&f->g, &f->o, j, pv_verify_job_id(1, 1, (uint32_t)j), &m.verify_job);
    assert_int_equal(pv_wire_encode(&m, NULL, &f->bytes, NULL), PV_OK);
    pv_arena_reset(f->jarena);
    pv_wire_msg_t back;
    assert_int_equal(pv_wire_decode(f->x.dec, f->bytes.data, f->bytes.len, f->jarena, &back, NULL),
                     PV_OK);
    assert_int_equal(back.type, PV_MSG_VERIFY_JOB);
    return back.verify_job;
}

/* The continuation start is the job's history and state at step t. */
static void test_start(void **state)
{
    s_fix_t *f = *state;
    const pv_jgroup_t *g = &f->g;
    for (size_t j = 0; j < g->n_jobs; j += 7) {
        pv_wire_verify_job_t job = s_job(f, j);
        pv_rollout_start_t st;
        size_t t;
        assert_int_equal(pv_vjob_start(&job, &st, &t, NULL), PV_OK);
        const pv_traj_t *tr = &f->x.w.trajs[g->jobs[j].traj];
        assert_int_equal(t, g->jobs[j].t);
        assert_int_equal(st.n_history, 2 * t + 1);
        for (size_t h = 0; h <= 2 * t; h++)
            assert_string_equal(st.history[h], tr->texts[h]);
        assert_int_equal(st.state_len, tr->state_len[t]);
        assert_memory_equal(st.state, tr->states[t], tr->state_len[t]);
        assert_string_equal(st.task_text, tr->task_text);
    }
}

/* From the job alone the verifier reproduces what continuing the actor's own trajectory at
 * step t gives with the same policy and seed: same successes, same cost. */
static void test_continuations_match_the_trajectory(void **state)
{
    s_fix_t *f = *state;
    const pv_jgroup_t *g = &f->g;
    for (size_t j = 0; j < g->n_jobs; j += 3) {
        pv_wire_verify_job_t job = s_job(f, j);
        pv_wire_verify_result_t r;
        pv_errmsg_t em = {{0}};
        assert_int_equal(pv_vjob_run(&f->ctx, &job, &r, &em), PV_OK);
        /* reference: the original trajectory, the seed the job carries */
        const pv_traj_t *tr = &f->x.w.trajs[g->jobs[j].traj];
        pv_rng_t rng;
        pv_rng_seed(&rng, job.seed, 0);
        pv_rollout_opts_t ro = {.max_steps = job.max_steps};
        pv_cost_t cost = {0};
        uint32_t wins = 0;
        double rewards = 0;
        for (uint32_t i = 0; i < job.k; i++) {
            pv_arena_reset(f->ref_arena);
            bool won;
            double reward;
            assert_int_equal(pv_rollout_continue(f->x.w.model, f->x.w.env, tr, g->jobs[j].t,
                                                 f->x.w.policy, f->x.w.work, &rng, &ro,
                                                 f->ref_arena, &won, &reward, &cost, NULL),
                             PV_OK);
            wins += won;
            rewards += reward;
        }
        assert_int_equal(r.job_id, job.job_id);
        assert_int_equal(r.group_id, 42);
        assert_int_equal(r.segment_id, job.segment_id);
        assert_int_equal(r.side, job.side);
        assert_int_equal(r.k, 3);
        assert_int_equal(r.successes, wins);
        assert_true(r.reward_sum == (float)rewards);
        assert_true(r.reward_sum == (float)r.successes); /* ALFWorld pays 1 on success only */
        assert_int_equal(r.env_steps, cost.env_steps);
        assert_int_equal(r.policy_tokens, cost.decisions);
        assert_true(r.env_steps > 0);
        assert_int_equal(r.verifier_id, 3);
        assert_int_equal(r.policy_version, pv_policy_version(f->x.w.policy));
        /* the result passes the wire's own checks (successes <= k, ...) */
        pv_wire_msg_t m = {.type = PV_MSG_VERIFY_RESULT, .verify_result = r};
        assert_int_equal(pv_wire_encode(&m, NULL, &f->bytes, NULL), PV_OK);
    }
}

/* Hostile jobs: refused with an error, never a crash. */
static void test_hostile_jobs(void **state)
{
    s_fix_t *f = *state;
    const pv_jgroup_t *g = &f->g;
    pv_wire_verify_job_t good = s_job(f, g->n_jobs / 2), job;
    pv_wire_verify_result_t r;
    pv_errmsg_t em = {{0}};
    job = good;
    job.n_history = good.n_history - 1; /* ends with an action */
    assert_int_equal(pv_vjob_run(&f->ctx, &job, &r, &em), PV_ERR_DATA);
    assert_non_null(strstr(em.text, "history"));
    job = good;
    job.n_history = 0;
    assert_int_equal(pv_vjob_run(&f->ctx, &job, &r, &em), PV_ERR_DATA);
    job = good;
    job.state = (pv_wire_bin_t){NULL, 0};
    assert_int_equal(pv_vjob_run(&f->ctx, &job, &r, &em), PV_ERR_DATA);
    job = good;
    job.k = 0;
    assert_int_equal(pv_vjob_run(&f->ctx, &job, &r, &em), PV_ERR_DATA);
    job = good;
    job.env.kind = PV_ENV_WEBSHOP;
    assert_int_equal(pv_vjob_run(&f->ctx, &job, &r, &em), PV_ERR_INVAL);
    assert_non_null(strstr(em.text, "alfworld"));
    /* damaged state bytes: truncated, and every byte flipped in turn (sampled) */
    uint8_t copy[1 << 16];
    assert_true(good.state.len <= sizeof copy);
    job = good;
    job.state.len = good.state.len / 2;
    assert_true(pv_vjob_run(&f->ctx, &job, &r, &em) != PV_OK);
    size_t refused = 0;
    for (size_t i = 0; i < good.state.len; i += 13) {
        memcpy(copy, good.state.ptr, good.state.len);
        copy[i] ^= 0xA5;
        job = good;
        job.state = (pv_wire_bin_t){copy, good.state.len};
        job.k = 1;
        if (pv_vjob_run(&f->ctx, &job, &r, &em) != PV_OK)
            refused++;
        else
            assert_true(r.successes <= 1);
    }
    assert_true(refused > 0);
}

/* With the language model and a pool of environments the job's k continuations are sampled
 * in lockstep: the result counts them as they are (successes, reward, steps and tokens are
 * the kept continuations' own), each continues from the job's step, and the same job gives
 * the same result again. */
static void test_lockstep_continuations(void **state)
{
    s_fix_t *f = *state;
    size_t len = 0;
    char *json = lm_fixture_vocab(&len);
    assert_non_null(json);
    pv_policy_spec_t sp = lm_fixture_spec(json, len, 3);
    sp.decode = PV_POLICY_DECODE_CONSTRAIN;
    sp.max_context = 1024;
    pv_policy_t *p = NULL;
    pv_policy_work_t *w = NULL;
    pv_env_pool_t pool;
    pv_arena_t *keep = NULL;
    assert_int_equal(pv_policy_new(&sp, &p, NULL), PV_OK);
    assert_int_equal(pv_policy_work_new(p, &w), PV_OK);
    assert_int_equal(pv_env_pool_init(&pool, f->x.w.model, f->x.w.env, p, f->o.k), PV_OK);
    assert_int_equal(pool.n, f->o.k);
    assert_int_equal(pv_arena_new(0, 0, &keep), PV_OK);
    pv_vjob_ctx_t ctx = f->ctx;
    ctx.policy = p;
    ctx.work = w;
    ctx.keep = keep;
    ctx.envs = pool.envs;
    ctx.n_envs = pool.n;
    const pv_jgroup_t *g = &f->g;
    for (size_t j = 0; j < g->n_jobs; j += 11) {
        pv_wire_verify_job_t job = s_job(f, j);
        job.want_continuations = true;
        pv_wire_verify_result_t r, again;
        pv_arena_reset(keep);
        assert_int_equal(pv_vjob_run(&ctx, &job, &r, NULL), PV_OK);
        assert_int_equal(r.k, job.k);
        assert_int_equal(r.n_continuations, job.k);
        uint32_t wins = 0;
        uint64_t steps = 0, tokens = 0;
        double reward = 0;
        for (uint32_t i = 0; i < r.n_continuations; i++) {
            const pv_wire_trajectory_t *c = &r.continuations[i];
            wins += c->success;
            reward += c->reward;
            steps += c->n_steps;
            for (uint32_t s = 0; s < c->n_steps; s++) {
                assert_true(c->steps[s].n_action_tokens >= 1);
                tokens += c->steps[s].n_action_tokens;
            }
        }
        assert_int_equal(r.successes, wins);
        assert_true(fabs(r.reward_sum - reward) < 1e-4);
        assert_int_equal(r.env_steps, steps);
        assert_int_equal(r.policy_tokens, tokens);
        /* the same job again: the same continuations */
        uint32_t n0 = r.continuations[0].n_steps;
        assert_int_equal(pv_vjob_run(&ctx, &job, &again, NULL), PV_OK);
        assert_int_equal(again.successes, r.successes);
        assert_int_equal(again.env_steps, r.env_steps);
        assert_int_equal(again.policy_tokens, r.policy_tokens);
        assert_int_equal(again.continuations[0].n_steps, n0);
    }
    pv_arena_destroy(&keep);
    pv_env_pool_free(&pool);
    pv_policy_work_destroy(&w);
    pv_policy_destroy(&p);
    free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_start),
        cmocka_unit_test(test_continuations_match_the_trajectory),
        cmocka_unit_test(test_hostile_jobs),
        cmocka_unit_test(test_lockstep_continuations),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
