/* test_intake.c - the learner's intake (learner/intake.h) on hand-built groups: a
 * CREDITED_GROUP's verified segments become batch segments and the judge's health numbers
 * (acceptance rate, the share expected by noise, segment length, delta's standard error)
 * match a hand computation, in the metrics line and the summary too; the actor's
 * ROLLOUT_GROUP is taken straight; duplicates, stale groups and other messages are refused
 * and counted; TRIAGE roles from the judge's model become the trajectories' judge_roles, the
 * entries that do not fit counted. Also pv_prover_delta_stats against hand-computed binomial
 * sums. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/traj/traj_wire.h"
#include "common/traj/triage.h"
#include "learner/intake.h"
#include "learner/report.h"

#define S_G 3
#define S_T 4

static const char *const s_cands[] = {"go north", "go south", "take key"};

typedef struct s_fix {
    pv_traj_t trajs[S_G];
    pv_step_rec_t steps[S_G][S_T];
    const char *texts[S_G][2 * S_T + 1];
    pv_arena_t *arena;
    pv_wire_buf_t buf;
} s_fix_t;

static int s_setup(void **state)
{
    static s_fix_t f;
    memset(&f, 0, sizeof f);
    for (int i = 0; i < S_G; i++) {
        for (int t = 0; t < S_T; t++) {
            f.steps[i][t] = (pv_step_rec_t){.cands = s_cands,
                                            .n_cands = 3,
                                            .token = (uint32_t)(t % 3),
                                            .behav_logprob = -1.0f,
                                            .policy_version = 7};
            f.texts[i][2 * t] = "You are in a room.";
            f.texts[i][2 * t + 1] = s_cands[t % 3];
        }
        f.texts[i][2 * S_T] = "";
        f.trajs[i] = (pv_traj_t){.task_text = "find the key",
                                 .texts = f.texts[i],
                                 .steps = f.steps[i],
                                 .n_steps = S_T,
                                 .reward = i == 0,
                                 .won = i == 0};
    }
    if (pv_arena_new(0, 0, &f.arena) != PV_OK)
        return -1;
    pv_wire_buf_init(&f.buf, 0);
    *state = &f;
    return 0;
}

static int s_teardown(void **state)
{
    s_fix_t *f = *state;
    pv_wire_buf_free(&f->buf);
    pv_arena_destroy(&f->arena);
    return 0;
}

static void s_group(s_fix_t *f, uint64_t id, pv_wire_rollout_group_t *g)
{
    pv_group_meta_t meta = {
        .group_id = id, .actor_id = 1, .env_name = "alfworld", .kind = PV_ENV_ALFWORLD};
    assert_int_equal(pv_traj_group_to_wire(f->trajs, S_G, &meta, false, f->arena, g, NULL), PV_OK);
}

/* Segments: A [0, 2) 0.25 -> 0.75 (+0.5), B [1, 2) of trajectory 1, 0.5 -> 0.25 (-0.25),
 * C [2, 4) of trajectory 0 terminal, 0.5 -> 1 (+0.5), D unverified, E [0, 9) out of bounds. */
static void s_credited_by(s_fix_t *f, uint64_t id, const char *judge, uint32_t n_segments)
{
    pv_wire_msg_t m = {.type = PV_MSG_CREDITED_GROUP};
    pv_wire_credited_group_t *c = &m.credited_group;
    s_group(f, id, &c->group);
    static pv_wire_segment_t segs[5] = {
        {.traj = 0,
         .t0 = 0,
         .t1 = 2,
         .p_before = 0.25f,
         .p_after = 0.75f,
         .delta = 0.5f,
         .k = 4,
         .verified = true},
        {.traj = 1,
         .t0 = 1,
         .t1 = 2,
         .p_before = 0.5f,
         .p_after = 0.25f,
         .delta = -0.25f,
         .k = 4,
         .verified = true},
        {.traj = 0,
         .t0 = 2,
         .t1 = 4,
         .p_before = 0.5f,
         .p_after = 1.0f,
         .delta = 0.5f,
         .k = 4,
         .verified = true},
        {.traj = 2, .t0 = 0, .t1 = 1, .k = 4, .verified = false},
        {.traj = 2,
         .t0 = 0,
         .t1 = 9,
         .p_before = 0.0f,
         .p_after = 1.0f,
         .delta = 1.0f,
         .k = 4,
         .verified = true},
    };
    c->judge = judge;
    c->segments = segs;
    c->n_segments = n_segments;
    c->proposals = n_segments;
    c->verify_env_steps = 123;
    assert_int_equal(pv_wire_encode(&m, NULL, &f->buf, NULL), PV_OK);
}

static void s_credited(s_fix_t *f, uint64_t id)
{
    s_credited_by(f, id, "contrast", 5);
}

/* P(Binomial(4, p) pair: X_after > X_before) by brute force over both counts. */
static double s_noise(double p, unsigned k)
{
    double pmf[16], q = 0;
    for (unsigned a = 0; a <= k; a++) {
        double c = 1;
        for (unsigned j = 0; j < a; j++)
            c = c * (double)(k - j) / (double)(j + 1);
        pmf[a] = c * pow(p, a) * pow(1 - p, k - a);
    }
    for (unsigned a = 0; a <= k; a++)
        for (unsigned b = a + 1; b <= k; b++)
            q += pmf[a] * pmf[b];
    return q;
}

/* A fresh folder (dir, a mkdtemp template) with metrics.jsonl (its path into path) open. */
static pv_metrics_t *s_metrics_in(char *dir, char *path, size_t cap)
{
    assert_non_null(mkdtemp(dir));
    snprintf(path, cap, "%s/metrics.jsonl", dir);
    pv_metrics_t *mx;
    assert_int_equal(pv_metrics_open(path, 0, &mx, NULL), PV_OK);
    return mx;
}

/* Run totals of a run without evaluations. */
static pv_run_totals_t s_no_run(void)
{
    return (pv_run_totals_t){.eval_first = {.greedy = -1, .sampled = -1},
                             .eval_last = {.greedy = -1, .sampled = -1},
                             .train_first = -1,
                             .train_last = -1};
}

static void test_credited_group_and_acceptance(void **state)
{
    s_fix_t *f = *state;
    pv_intake_t *in;
    assert_int_equal(pv_intake_new(4, &in), PV_OK);
    pv_intake_verdict_t v;
    s_credited(f, 11);
    assert_int_equal(pv_intake_add(in, f->buf.data, f->buf.len, 8, 2, &v, NULL), PV_OK);
    assert_int_equal(v, PV_INTAKE_ACCEPTED);
    size_t n = 0, ns = 0;
    pv_intake_trajs(in, &n);
    const pv_verified_seg_t *segs = pv_intake_segments(in, &ns);
    assert_int_equal(n, S_G);
    assert_int_equal(ns, 3); /* A, B, C: D is not verified, E does not fit */
    assert_int_equal(segs[0].row, 0);
    assert_int_equal(segs[1].row, 1);
    assert_true(segs[2].t0 == 2 && segs[2].t1 == 4);
    const pv_intake_stats_t *b = pv_intake_stats(in);
    assert_int_equal(b->verified, 3);
    assert_int_equal(b->positive, 2);
    assert_int_equal(b->bad_segments, 1);
    assert_int_equal(b->turns_sum, 2 + 1 + 2);
    double se = sqrt(0.25 * 0.75 / 4 + 0.75 * 0.25 / 4) + sqrt(0.5 * 0.5 / 4 + 0.25 * 0.75 / 4) +
                sqrt(0.5 * 0.5 / 4); /* C's after side is its known outcome */
    assert_float_equal(b->delta_se_sum, se, 1e-9);
    double noise = s_noise(0.5, 4) + s_noise(0.375, 4) + 0.0;
    assert_float_equal(b->noise_pos_sum, noise, 1e-9);
    assert_int_equal(b->lag_max, 1);

    /* the metrics line and the summary show them */
    char dir[] = "/tmp/test_intake.XXXXXX", path[64];
    pv_metrics_t *mx = s_metrics_in(dir, path, sizeof path);
    pv_update_stats_t up = {0};
    pv_run_totals_t run = s_no_run();
    assert_int_equal(pv_report_iteration(mx, 1, 1, 8, b, pv_intake_totals(in), &up, &run), PV_OK);
    pv_metrics_close(&mx);
    json_t *line = json_load_file(path, JSON_DISABLE_EOF_CHECK, NULL);
    assert_non_null(line);
    assert_float_equal(json_real_value(json_object_get(line, "acceptance_rate")), 2.0 / 3, 1e-12);
    assert_float_equal(json_real_value(json_object_get(line, "acceptance_rate_noise")), noise / 3,
                       1e-9);
    assert_float_equal(json_real_value(json_object_get(line, "segment_turns")), 5.0 / 3, 1e-12);
    assert_float_equal(json_real_value(json_object_get(line, "delta_se")), se / 3, 1e-9);
    json_decref(line);
    char *text = NULL;
    assert_int_equal(pv_report_summary(dir, "alfworld", "prover", "contrast", pv_intake_totals(in),
                                       &run, &text, NULL),
                     PV_OK);
    assert_non_null(strstr(text, "judge acceptance rate 0.667"));
    /* of the 5 proposals, D was not verified and E did not fit: 2 without a usable delta */
    assert_non_null(strstr(text, "segments unverified 2 of 5 proposed (40%"));
    free(text);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *sum = json_load_file(path, 0, NULL);
    assert_float_equal(json_real_value(json_object_get(sum, "acceptance_rate")), 2.0 / 3, 1e-12);
    assert_int_equal(json_integer_value(json_object_get(sum, "proposals")), 5);
    assert_int_equal(json_integer_value(json_object_get(sum, "segments_unverified")), 2);
    json_decref(sum);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    pv_intake_destroy(&in);
}

/* Acceptance split by the judge that proposed: groups 21 and 22 by "llm" (A, B, C each:
 * 3 verified, 2 positive, 5 turns), group 23 by "contrast-fallback" with A only (1 verified,
 * 1 positive, 2 turns): llm 4 / 6, fallback 1 / 1 - in the batch, the run, the train line,
 * the summary and the learner's RUN_STATUS. */
static void test_acceptance_by_judge(void **state)
{
    s_fix_t *f = *state;
    pv_intake_t *in;
    assert_int_equal(pv_intake_new(8, &in), PV_OK);
    pv_intake_verdict_t v;
    const char *who[3] = {"llm", "llm", "contrast-fallback"};
    uint32_t nseg[3] = {5, 5, 1};
    for (int g = 0; g < 3; g++) {
        s_credited_by(f, 21 + (uint64_t)g, who[g], nseg[g]);
        assert_int_equal(pv_intake_add(in, f->buf.data, f->buf.len, 8, 2, &v, NULL), PV_OK);
        assert_int_equal(v, PV_INTAKE_ACCEPTED);
    }
    size_t n = 0;
    const pv_judge_tally_t *t = pv_intake_judges(in, true, &n);
    assert_int_equal(n, 2);
    assert_string_equal(t[0].judge, "llm");
    assert_int_equal(t[0].groups, 2);
    assert_int_equal(t[0].verified, 6);
    assert_int_equal(t[0].positive, 4);
    assert_int_equal(t[0].turns_sum, 10);
    assert_float_equal(t[0].noise_pos_sum, 2 * (s_noise(0.5, 4) + s_noise(0.375, 4)), 1e-9);
    assert_string_equal(t[1].judge, "contrast-fallback");
    assert_int_equal(t[1].verified, 1);
    assert_int_equal(t[1].positive, 1);
    assert_int_equal(t[1].turns_sum, 2);
    pv_intake_judges(in, false, &n);
    assert_int_equal(n, 2);
    pv_intake_reset(in); /* a new batch: its split is empty, the run's stays */
    pv_intake_judges(in, false, &n);
    assert_int_equal(n, 0);
    s_credited_by(f, 24, "llm", 1);
    assert_int_equal(pv_intake_add(in, f->buf.data, f->buf.len, 8, 2, &v, NULL), PV_OK);
    const pv_judge_tally_t *bt = pv_intake_judges(in, false, &n);
    assert_int_equal(n, 1);
    assert_int_equal(bt[0].verified, 1);
    t = pv_intake_judges(in, true, &n);
    assert_int_equal(t[0].verified, 7);
    assert_int_equal(t[0].positive, 5);

    char dir[] = "/tmp/test_intake.XXXXXX", path[64];
    pv_metrics_t *mx = s_metrics_in(dir, path, sizeof path);
    pv_update_stats_t up = {0};
    pv_run_totals_t run = s_no_run();
    run.judges_batch = pv_intake_judges(in, false, &run.n_judges_batch);
    run.judges_run = pv_intake_judges(in, true, &run.n_judges_run);
    /* a policy-lag histogram: 6 tokens at lag 0 (3 clipped), 2 at lag 16+ (none) */
    up.lag.tokens[0] = 6;
    up.lag.clipped[0] = 3;
    up.lag.tokens[6] = 2;
    run.lag_hist = up.lag;
    assert_int_equal(
        pv_report_iteration(mx, 2, 2, 8, pv_intake_stats(in), pv_intake_totals(in), &up, &run),
        PV_OK);
    pv_metrics_close(&mx);
    json_t *line = json_load_file(path, JSON_DISABLE_EOF_CHECK, NULL);
    json_t *bj = json_object_get(json_object_get(line, "acceptance_by_judge"), "llm");
    assert_int_equal(json_integer_value(json_object_get(bj, "verified")), 1);
    assert_float_equal(json_real_value(json_object_get(bj, "acceptance_rate")), 1.0, 1e-12);
    json_t *lag = json_object_get(line, "policy_lag_hist");
    assert_int_equal(json_object_size(lag), 2); /* empty buckets left out */
    assert_float_equal(json_real_value(json_object_get(json_object_get(lag, "0"), "clip_frac")),
                       0.5, 1e-12);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(lag, "16+"), "tokens")), 2);
    json_decref(line);
    char *text = NULL;
    assert_int_equal(pv_report_summary(dir, "alfworld", "prover", "llm", pv_intake_totals(in), &run,
                                       &text, NULL),
                     PV_OK);
    assert_non_null(strstr(text, "proposed by llm: 3 groups, acceptance 0.714 of 7 verified"));
    assert_non_null(strstr(text, "proposed by contrast-fallback: 1 groups, acceptance 1.000 of 1"));
    assert_non_null(strstr(text, "policy lag of the trained tokens (share, PPO clip fraction): 0: "
                                 "0.750, 0.500; 16+: 0.250, 0.000\n"));
    free(text);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *sum = json_load_file(path, 0, NULL);
    json_t *sj = json_object_get(sum, "acceptance_by_judge");
    assert_float_equal(
        json_real_value(json_object_get(json_object_get(sj, "llm"), "acceptance_rate")), 5.0 / 7,
        1e-12);
    assert_float_equal(
        json_real_value(json_object_get(json_object_get(sj, "contrast-fallback"), "segment_turns")),
        2.0, 1e-12);
    json_decref(sum);

    /* the learner's RUN_STATUS carries the same split */
    pv_wire_run_status_t st;
    assert_int_equal(
        pv_health_status(2, 40, 8, "demo", run.judges_run, run.n_judges_run, f->arena, &st), PV_OK);
    assert_string_equal(st.source, "learner");
    assert_int_equal(st.iteration, 2);
    assert_int_equal(st.n_judges, 2);
    assert_string_equal(st.judges[0].judge, "llm");
    assert_int_equal(st.judges[0].positive, 5);
    assert_float_equal(st.judges[0].acceptance_rate, 5.0 / 7, 1e-6);
    assert_float_equal(st.judges[0].segment_turns, 12.0 / 7, 1e-6);
    assert_float_equal(st.judges[1].acceptance_rate, 1.0, 1e-6);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    pv_intake_destroy(&in);
}

static void test_verdicts(void **state)
{
    s_fix_t *f = *state;
    pv_intake_t *in;
    assert_int_equal(pv_intake_new(3, &in), PV_OK);
    pv_intake_verdict_t v;
    /* the actor's ROLLOUT_GROUP, straight to the learner (no judge in the run plan) */
    pv_wire_msg_t m = {.type = PV_MSG_ROLLOUT_GROUP};
    s_group(f, 21, &m.rollout_group);
    assert_int_equal(pv_wire_encode(&m, NULL, &f->buf, NULL), PV_OK);
    assert_int_equal(pv_intake_add(in, f->buf.data, f->buf.len, 7, 2, &v, NULL), PV_OK);
    assert_int_equal(v, PV_INTAKE_ACCEPTED);
    assert_int_equal(pv_intake_stats(in)->verified, 0);
    /* the same group again: a duplicate */
    assert_int_equal(pv_intake_add(in, f->buf.data, f->buf.len, 7, 2, &v, NULL), PV_OK);
    assert_int_equal(v, PV_INTAKE_DUPLICATE);
    /* version 7 steps at learner version 10 with max lag 2: stale */
    s_group(f, 22, &m.rollout_group);
    assert_int_equal(pv_wire_encode(&m, NULL, &f->buf, NULL), PV_OK);
    assert_int_equal(pv_intake_add(in, f->buf.data, f->buf.len, 10, 2, &v, NULL), PV_OK);
    assert_int_equal(v, PV_INTAKE_STALE);
    /* another message type: malformed, with the reason */
    pv_wire_msg_t hb = {.type = PV_MSG_HEARTBEAT};
    assert_int_equal(pv_wire_encode(&hb, NULL, &f->buf, NULL), PV_OK);
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_intake_add(in, f->buf.data, f->buf.len, 7, 2, &v, &em), PV_OK);
    assert_int_equal(v, PV_INTAKE_MALFORMED);
    assert_non_null(strstr(em.text, "expected CREDITED_GROUP or ROLLOUT_GROUP"));
    const pv_intake_stats_t *t = pv_intake_totals(in);
    assert_int_equal(t->groups, 1);
    assert_int_equal(t->duplicates, 1);
    assert_int_equal(t->stale, 1);
    assert_int_equal(t->malformed, 1);
    assert_int_equal(t->dropped_steps, S_G * S_T); /* the stale group's steps were spent */
    pv_intake_destroy(&in);
}

/* The staleness check reads the steps, not the header (issue 15, item 5): a group whose
 * header says v1729 while its steps say v1 is refused, as is one whose steps claim a version
 * the learner never published; old steps under a header of their oldest version are stale. */
static void test_step_versions(void **state)
{
    s_fix_t *f = *state;
    pv_intake_t *in;
    assert_int_equal(pv_intake_new(4, &in), PV_OK);
    pv_intake_verdict_t v;
    pv_errmsg_t em = {{0}};
    for (int i = 0; i < S_G; i++)
        for (int t = 0; t < S_T; t++)
            f->steps[i][t].policy_version = 1;
    pv_wire_msg_t m = {.type = PV_MSG_ROLLOUT_GROUP};
    /* a lying header: v1729 over steps of v1, at learner v10 with max lag 2 */
    s_group(f, 31, &m.rollout_group);
    m.rollout_group.policy_version = 1729;
    assert_int_equal(pv_wire_encode(&m, NULL, &f->buf, NULL), PV_OK);
    assert_int_equal(pv_intake_add(in, f->buf.data, f->buf.len, 10, 2, &v, &em), PV_OK);
    assert_int_equal(v, PV_INTAKE_MALFORMED);
    assert_non_null(strstr(em.text, "oldest step was played by v1"));
    /* a header below the steps' oldest version is a lie too */
    f->steps[1][2].policy_version = 9;
    s_group(f, 32, &m.rollout_group);
    m.rollout_group.policy_version = 0;
    assert_int_equal(pv_wire_encode(&m, NULL, &f->buf, NULL), PV_OK);
    assert_int_equal(pv_intake_add(in, f->buf.data, f->buf.len, 10, 2, &v, &em), PV_OK);
    assert_int_equal(v, PV_INTAKE_MALFORMED);
    /* an honest header (the oldest, v1): stale at v10 though one step is v9 */
    s_group(f, 33, &m.rollout_group);
    assert_int_equal(m.rollout_group.policy_version, 1);
    assert_int_equal(pv_wire_encode(&m, NULL, &f->buf, NULL), PV_OK);
    assert_int_equal(pv_intake_add(in, f->buf.data, f->buf.len, 10, 2, &v, &em), PV_OK);
    assert_int_equal(v, PV_INTAKE_STALE);
    /* a step of a version newer than the learner's: nobody could have played it */
    for (int i = 0; i < S_G; i++)
        for (int t = 0; t < S_T; t++)
            f->steps[i][t].policy_version = 11;
    s_group(f, 34, &m.rollout_group);
    assert_int_equal(pv_wire_encode(&m, NULL, &f->buf, NULL), PV_OK);
    assert_int_equal(pv_intake_add(in, f->buf.data, f->buf.len, 10, 2, &v, &em), PV_OK);
    assert_int_equal(v, PV_INTAKE_MALFORMED);
    assert_non_null(strstr(em.text, "newer than the learner's v10"));
    const pv_intake_stats_t *t = pv_intake_totals(in);
    assert_int_equal(t->groups, 0);
    assert_int_equal(t->malformed, 3);
    assert_int_equal(t->stale, 1);
    for (int i = 0; i < S_G; i++)
        for (int t2 = 0; t2 < S_T; t2++)
            f->steps[i][t2].policy_version = 7;
    pv_intake_destroy(&in);
}

static void test_delta_stats(void **state)
{
    (void)state;
    /* K = 8 at p = 1/2 on both sides: se = sqrt(2 * 0.25 / 8) = 0.25 (METHODS.md), and
     * P(X_a > X_b) = (1 - sum_a pmf(a)^2) / 2 = (1 - C(16, 8) / 2^16) / 2 */
    pv_delta_stats_t st = pv_prover_delta_stats(0.5, 0.5, 8, 8);
    assert_float_equal(st.se, 0.25, 1e-12);
    assert_float_equal(st.noise_pos, (1.0 - 12870.0 / 65536.0) / 2.0, 1e-12);
    st = pv_prover_delta_stats(0.5, 0.5, 1, 1); /* P(X_b = 0, X_a = 1) */
    assert_float_equal(st.noise_pos, 0.25, 1e-12);
    st = pv_prover_delta_stats(0.25, 0.75, 2, 2); /* pooled 1/2: 0.25 * 0.75 + 0.5 * 0.25 */
    assert_float_equal(st.noise_pos, 0.3125, 1e-12);
    st = pv_prover_delta_stats(0.0, 0.0, 8, 8); /* both certain: no noise */
    assert_float_equal(st.noise_pos, 0.0, 1e-12);
    assert_float_equal(st.se, 0.0, 1e-12);
    st = pv_prover_delta_stats(0.5, 1.0, 8, 0); /* a terminal side */
    assert_float_equal(st.se, sqrt(0.25 / 8), 1e-12);
    assert_float_equal(st.noise_pos, 0.0, 1e-12);
}

/* The run totals survive a checkpoint exactly (text form) and a resumed run's totals are
 * those of every leg: sums add, the delta range and the largest lag merge (issue 15, item
 * 7). */
static void test_totals_across_legs(void **state)
{
    (void)state;
    pv_intake_stats_t a = {.groups = 24,
                           .stale = 3,
                           .duplicates = 1,
                           .malformed = 2,
                           .verified = 5,
                           .positive = 2,
                           .delta_sum = 0.1,
                           .delta_min = -0.7,
                           .delta_max = 0.3,
                           .lag_max = 2,
                           .noise_pos_sum = 1.0 / 3.0,
                           .steps = 1000,
                           .dropped_steps = 17,
                           .verify_env_steps = 99};
    char text[PV_INTAKE_STATS_TEXT_MAX];
    assert_int_equal(pv_intake_stats_format(&a, text, sizeof text), PV_OK);
    assert_non_null(strstr(text, "groups=24 "));
    pv_intake_stats_t back;
    assert_int_equal(pv_intake_stats_parse(text, &back, NULL), PV_OK);
    assert_memory_equal(&back, &a, sizeof a); /* doubles in hex: bit for bit */
    char small[16];
    assert_int_equal(pv_intake_stats_format(&a, small, sizeof small), PV_ERR_LIMIT);
    /* unknown names are a later version's: ignored; missing ones are zero */
    assert_int_equal(pv_intake_stats_parse("groups=3 future_counter=9", &back, NULL), PV_OK);
    assert_int_equal(back.groups, 3);
    assert_int_equal(back.stale, 0);
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_intake_stats_parse("groups=x", &back, &em), PV_ERR_DATA);
    assert_non_null(strstr(em.text, "groups"));
    assert_int_equal(pv_intake_stats_parse("groups=-1", &back, NULL), PV_ERR_DATA);
    assert_int_equal(pv_intake_stats_parse("delta_sum=nan", &back, NULL), PV_ERR_DATA);
    assert_int_equal(pv_intake_stats_parse("groups", &back, NULL), PV_ERR_DATA);
    /* a second leg: one group counted, then the first leg's totals merged in */
    pv_intake_t *in;
    assert_int_equal(pv_intake_new(4, &in), PV_OK);
    pv_intake_verdict_t v;
    assert_int_equal(pv_intake_add(in, (const uint8_t *)"junk", 4, 1, 2, &v, NULL), PV_OK);
    assert_int_equal(v, PV_INTAKE_MALFORMED);
    pv_intake_resume(in, &a);
    const pv_intake_stats_t *t = pv_intake_totals(in);
    assert_int_equal(t->groups, 24);
    assert_int_equal(t->malformed, 3);
    assert_int_equal(t->stale, 3);
    assert_int_equal(t->verified, 5);
    assert_int_equal(t->lag_max, 2);
    assert_int_equal(t->steps, 1000);
    assert_int_equal(t->dropped_steps, 17);
    assert_true(t->delta_min == -0.7 && t->delta_max == 0.3); /* none verified in this leg */
    pv_intake_destroy(&in);
}

/* TRIAGE roles from the judge's model (CREDITED_GROUP.triage_labels): a fitting entry
 * becomes the trajectory's judge_roles (a value above 3 is "not labelled"), one naming no
 * trajectory, a second one for the same trajectory and one with another count than the
 * steps are dropped and counted; the group is kept. */
static void test_triage_labels(void **state)
{
    s_fix_t *f = *state;
    pv_wire_msg_t m = {.type = PV_MSG_CREDITED_GROUP};
    pv_wire_credited_group_t *c = &m.credited_group;
    s_group(f, 21, &c->group);
    static uint32_t r0[S_T] = {0, 3, 9, 2}, r1[S_T] = {1, 1, 1, 1}, r_short[S_T - 1] = {0, 0, 0},
                    r_dup[S_T] = {3, 3, 3, 3};
    pv_wire_turn_roles_t tl[] = {{.traj = 0, .roles = r0, .n_roles = S_T},
                                 {.traj = 7, .roles = r1, .n_roles = S_T},
                                 {.traj = 2, .roles = r_short, .n_roles = S_T - 1},
                                 {.traj = 1, .roles = r1, .n_roles = S_T},
                                 {.traj = 0, .roles = r_dup, .n_roles = S_T}};
    c->judge = "llm";
    c->triage_labels = tl;
    c->n_triage_labels = 5;
    assert_int_equal(pv_wire_encode(&m, NULL, &f->buf, NULL), PV_OK);
    pv_intake_t *in;
    assert_int_equal(pv_intake_new(4, &in), PV_OK);
    pv_intake_verdict_t v;
    assert_int_equal(pv_intake_add(in, f->buf.data, f->buf.len, 8, 2, &v, NULL), PV_OK);
    assert_int_equal(v, PV_INTAKE_ACCEPTED);
    size_t n;
    const pv_traj_t *tr = pv_intake_trajs(in, &n);
    assert_int_equal(n, S_G);
    const uint8_t want0[S_T] = {PV_TRIAGE_DECISIVE, PV_TRIAGE_REGRESSION, PV_TRIAGE_ROLE_NONE,
                                PV_TRIAGE_NO_PROGRESS};
    const uint8_t want1[S_T] = {1, 1, 1, 1};
    assert_non_null(tr[0].judge_roles);
    assert_memory_equal(tr[0].judge_roles, want0, S_T); /* the first entry for it counts */
    assert_non_null(tr[1].judge_roles);
    assert_memory_equal(tr[1].judge_roles, want1, S_T);
    assert_null(tr[2].judge_roles); /* its entry was one role short */
    const pv_intake_stats_t *b = pv_intake_stats(in);
    assert_int_equal(b->labelled_groups, 1);
    assert_int_equal(b->labelled_trajs, 2);
    assert_int_equal(b->bad_labels, 3);
    /* a group without labels: none on its trajectories, nothing counted */
    s_credited(f, 22);
    assert_int_equal(pv_intake_add(in, f->buf.data, f->buf.len, 8, 2, &v, NULL), PV_OK);
    tr = pv_intake_trajs(in, &n);
    assert_int_equal(n, 2 * S_G);
    for (size_t i = S_G; i < n; i++)
        assert_null(tr[i].judge_roles);
    assert_int_equal(pv_intake_stats(in)->labelled_groups, 1);
    assert_int_equal(pv_intake_totals(in)->bad_labels, 3);
    pv_intake_destroy(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_credited_group_and_acceptance),
        cmocka_unit_test(test_acceptance_by_judge),
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_step_versions),
        cmocka_unit_test(test_delta_stats),
        cmocka_unit_test(test_totals_across_legs),
        cmocka_unit_test(test_triage_labels),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
