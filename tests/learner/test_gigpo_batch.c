/* test_gigpo_batch.c - GiGPO as a pipeline estimator (learner/gigpo_batch.h): advantages of
 * a trajectory batch (rows = trajectories, one token per step).
 *
 * References from outside the code under test:
 *   - ../shared/golden/gigpo_outcome_advantage.json (verl-agent's own
 *     compute_gigpo_outcome_advantage on step rows): every case whose step rows are
 *     trajectories of our kind (one outcome per trajectory, step rewards = the discounted
 *     return gamma^(T-1-t) R with verl-agent's ALFWorld gamma 0.95, exact-match anchors) is
 *     turned into trajectories, run through pv_batch_gigpo and compared step by step with the
 *     golden advantages (skipped when ../shared is absent);
 *   - a direct implementation of the paper's formulas in this file (s_reference: episode
 *     mean/std over a group's steps, closed-form discounted returns, anchor groups by
 *     scanning), on hand-built batches with interleaved groups, padding, a group whose steps
 *     all have distinct anchors (step part 0), a group with shared anchor states and a group
 *     of one trajectory.
 */
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "learner/gigpo_batch.h"
#include "tests/learner/golden_cmp.h"

#define S_MAX_STEPS 8
#define S_MAX_TRAJ  16
#define S_GAMMA     0.95

typedef struct s_tr {
    const char *texts[2 * S_MAX_STEPS + 1];
    uint64_t keys[S_MAX_STEPS + 1];
    pv_step_rec_t steps[S_MAX_STEPS];
    pv_traj_t traj;
} s_tr_t;

/* A trajectory of n steps with outcome R; obs[t] is the observation before step t, keys[t]
 * (may be NULL: no state keys) its state key. */
static void s_make(s_tr_t *t, int64_t group, double R, size_t n, const char *const *obs,
                   const uint64_t *keys)
{
    assert_true(n >= 1 && n <= S_MAX_STEPS);
    memset(t, 0, sizeof *t);
    for (size_t s = 0; s < n; s++) {
        t->texts[2 * s] = obs[s];
        t->texts[2 * s + 1] = "act";
        t->keys[s] = keys ? keys[s] : 0;
        t->steps[s].behav_logprob = -1.0f;
    }
    t->texts[2 * n] = "end";
    t->traj = (pv_traj_t){.texts = t->texts,
                          .steps = t->steps,
                          .n_steps = n,
                          .reward = R,
                          .won = R > 0,
                          .group = group,
                          .state_keys = keys ? t->keys : NULL};
}

static bool s_same_anchor(const pv_traj_t *a, size_t ta, const pv_traj_t *b, size_t tb, bool state)
{
    return state ? a->state_keys[ta] == b->state_keys[tb]
                 : strcmp(a->texts[2 * ta], b->texts[2 * tb]) == 0;
}

/* The paper's Eq. 3 (episode part, statistics over the group's step rows as verl-agent's
 * compute_mean_std_cross_steps), Eq. 5 (G_t = gamma^(T-1-t) R for a reward paid at the end),
 * Eq. 6-7 (step part over equal anchors; a step alone in its anchor group has mean = its own
 * return, std 1), Eq. 8 (A = episode + w * step), straight from the definitions. */
static void s_reference(const pv_traj_t *tr, size_t n, size_t L, bool state, double w, bool msn,
                        double eps, double *ref)
{
    for (size_t i = 0; i < n; i++)
        for (size_t t = 0; t < L; t++) {
            ref[i * L + t] = 0;
            if (t >= tr[i].n_steps)
                continue;
            double es = 0, ec = 0, ss = 0, sc = 0;
            for (size_t j = 0; j < n; j++) {
                if (tr[j].group != tr[i].group)
                    continue;
                for (size_t u = 0; u < tr[j].n_steps; u++) {
                    es += tr[j].reward, ec += 1;
                    if (s_same_anchor(&tr[i], t, &tr[j], u, state))
                        ss += pow(S_GAMMA, (double)(tr[j].n_steps - 1 - u)) * tr[j].reward, sc += 1;
                }
            }
            double em = es / ec, sm = ss / sc, ev = 0, sv = 0;
            for (size_t j = 0; j < n; j++) {
                if (tr[j].group != tr[i].group)
                    continue;
                for (size_t u = 0; u < tr[j].n_steps; u++) {
                    ev += (tr[j].reward - em) * (tr[j].reward - em);
                    double g = pow(S_GAMMA, (double)(tr[j].n_steps - 1 - u)) * tr[j].reward;
                    if (s_same_anchor(&tr[i], t, &tr[j], u, state))
                        sv += (g - sm) * (g - sm);
                }
            }
            double estd = ec > 1 ? sqrt(ev / (ec - 1)) : 1, sstd = sc > 1 ? sqrt(sv / (sc - 1)) : 1;
            if (ec == 1)
                em = 0;
            double gi = pow(S_GAMMA, (double)(tr[i].n_steps - 1 - t)) * tr[i].reward;
            double ep = msn ? (tr[i].reward - em) / (estd + eps) : tr[i].reward - em;
            double st = msn ? (gi - sm) / (sstd + eps) : gi - sm;
            ref[i * L + t] = ep + w * st;
        }
}

static void s_assert_close(const double *got, const double *want, size_t n, double rtol)
{
    double scale = 0;
    for (size_t k = 0; k < n; k++)
        scale = fabs(want[k]) > scale ? fabs(want[k]) : scale;
    for (size_t k = 0; k < n; k++)
        if (!(fabs(got[k] - want[k]) <= rtol * fabs(want[k]) + rtol * scale)) {
            print_error("cell %zu: got %.17g want %.17g\n", k, got[k], want[k]);
            fail();
        }
}

/* The hand batch: rows interleave three groups.
 *   group 3 (shared anchors): s0 s1 s2 (R 1) | s0 s1 (R 0) | s0 s3 s1 s2 (R 1) | s0 (R 0)
 *   group 7 (all anchors distinct): 3 steps (R 1) | 2 steps (R 0) | 4 steps (R 0.5)
 *   group 9 (one trajectory): 2 steps (R 1)
 * State keys deliberately disagree with the texts: in group 3 they are all distinct, in
 * group 7 every trajectory's step u has key 100 + u (shared across trajectories). */
#define S_HAND_N 8
static const char *const g3a[] = {"s0", "s1", "s2"}, *const g3b[] = {"s0", "s1"},
                         *const g3c[] = {"s0", "s3", "s1", "s2"}, *const g3d[] = {"s0"};
static const char *const g7a[] = {"a0", "a1", "a2"}, *const g7b[] = {"b0", "b1"},
                         *const g7c[] = {"c0", "c1", "c2", "c3"}, *const g9[] = {"x", "y"};
static const uint64_t k3a[] = {1, 2, 3}, k3b[] = {4, 5}, k3c[] = {6, 7, 8, 9}, k3d[] = {10};
static const uint64_t k7[] = {100, 101, 102, 103}, k9[] = {200, 201};

static void s_hand(s_tr_t *h, pv_traj_t *tr)
{
    s_make(&h[0], 3, 1.0, 3, g3a, k3a);
    s_make(&h[1], 7, 1.0, 3, g7a, k7);
    s_make(&h[2], 3, 0.0, 2, g3b, k3b);
    s_make(&h[3], 9, 1.0, 2, g9, k9);
    s_make(&h[4], 7, 0.0, 2, g7b, k7);
    s_make(&h[5], 3, 1.0, 4, g3c, k3c);
    s_make(&h[6], 7, 0.5, 4, g7c, k7);
    s_make(&h[7], 3, 0.0, 1, g3d, k3d);
    for (size_t i = 0; i < S_HAND_N; i++)
        tr[i] = h[i].traj;
}

/* Our advantages and the reference for the hand batch under one setting. */
static void s_run_hand(bool state, double w, bool msn, double *got, double *want, size_t *cells,
                       pv_gigpo_stats_t *st)
{
    s_tr_t h[S_HAND_N];
    pv_traj_t tr[S_HAND_N];
    s_hand(h, tr);
    pv_batch_t b;
    assert_int_equal(pv_batch_build(tr, S_HAND_N, &b, NULL), PV_OK);
    assert_int_equal(b.L, 4);
    pv_gigpo_opts_t o = pv_gigpo_opts_default();
    o.step_weight = w, o.mean_std_norm = msn;
    o.anchor = state ? PV_GIGPO_ANCHOR_STATE : PV_GIGPO_ANCHOR_OBSERVATION;
    for (size_t k = 0; k < b.rows * b.L; k++)
        b.advantages[k] = 99.0; /* padding must be overwritten with 0 */
    pv_errmsg_t em = {{0}};
    pv_err_t rc = pv_batch_gigpo(&b, tr, S_HAND_N, &o, st, &em);
    if (rc != PV_OK)
        print_error("%s\n", em.text);
    assert_int_equal(rc, PV_OK);
    memcpy(got, b.advantages, b.rows * b.L * sizeof *got);
    s_reference(tr, S_HAND_N, b.L, state, w, msn, o.epsilon, want);
    *cells = b.rows * b.L;
    pv_batch_free(&b);
}

static void test_hand_observation_anchors(void **state)
{
    (void)state;
    static const double ws[] = {1.0, 0.5};
    for (int msn = 0; msn < 2; msn++)
        for (size_t wi = 0; wi < 2; wi++) {
            double got[S_HAND_N * 4], want[S_HAND_N * 4], ep[S_HAND_N * 4];
            size_t cells;
            pv_gigpo_stats_t st;
            s_run_hand(false, ws[wi], msn, got, want, &cells, &st);
            s_assert_close(got, want, cells, 1e-6);
            /* group 7's anchors are all distinct: its steps get the episode part only, the
             * reference with w = 0 */
            s_run_hand(false, 0.0, msn, ep, want, &cells, &st);
            for (size_t i = 0; i < S_HAND_N; i++)
                if (i == 1 || i == 4 || i == 6)
                    for (size_t t = 0; t < 4; t++)
                        assert_true(fabs(got[i * 4 + t] - want[i * 4 + t]) <= 1e-12);
            /* padding cells stay 0: row 7 has one step */
            for (size_t t = 1; t < 4; t++)
                assert_true(got[7 * 4 + t] == 0.0);
        }
}

static void test_hand_state_anchors(void **state)
{
    (void)state;
    double got[S_HAND_N * 4], want[S_HAND_N * 4], obs[S_HAND_N * 4], ref_obs[S_HAND_N * 4];
    size_t cells;
    pv_gigpo_stats_t st;
    s_run_hand(true, 1.0, true, got, want, &cells, &st);
    s_assert_close(got, want, cells, 1e-6);
    /* the anchors decide: keys and texts group the steps differently here */
    s_run_hand(false, 1.0, true, obs, ref_obs, &cells, &st);
    size_t differ = 0;
    for (size_t k = 0; k < cells; k++)
        differ += fabs(want[k] - ref_obs[k]) > 1e-3 && fabs(got[k] - obs[k]) > 1e-3;
    assert_true(differ >= 4);
}

/* Counts: step rows, distinct (group, anchor) pairs, steps sharing their anchor. */
static void test_stats(void **state)
{
    (void)state;
    double got[S_HAND_N * 4], want[S_HAND_N * 4];
    size_t cells;
    pv_gigpo_stats_t st;
    for (int a = 0; a < 2; a++) {
        s_run_hand(a == 1, 1.0, true, got, want, &cells, &st);
        s_tr_t h[S_HAND_N];
        pv_traj_t tr[S_HAND_N];
        s_hand(h, tr);
        size_t steps = 0, groups = 0, grouped = 0;
        for (size_t i = 0; i < S_HAND_N; i++)
            for (size_t t = 0; t < tr[i].n_steps; t++) {
                steps++;
                size_t same = 0, first = 1;
                for (size_t j = 0; j < S_HAND_N; j++)
                    for (size_t u = 0; u < tr[j].n_steps; u++)
                        if (tr[j].group == tr[i].group && s_same_anchor(&tr[i], t, &tr[j], u, a)) {
                            same++;
                            if (j < i || (j == i && u < t))
                                first = 0;
                        }
                groups += first;
                grouped += same > 1;
            }
        assert_int_equal(st.steps, steps);
        assert_int_equal(st.step_groups, groups);
        assert_int_equal(st.grouped_steps, grouped);
    }
}

/* One golden step-row case as trajectories, when it is of our kind; returns 1 when it was
 * compared, 0 when it is not representable. */
static int s_golden_case(const json_t *c)
{
    const json_t *in = json_object_get(c, "inputs");
    if (json_is_true(json_object_get(in, "enable_similarity")))
        return 0;
    const json_t *tlr = json_object_get(in, "token_level_rewards"),
                 *sr = json_object_get(in, "step_rewards"),
                 *mask = json_object_get(in, "response_mask"),
                 *obs = json_object_get(in, "anchor_obs"), *idx = json_object_get(in, "index"),
                 *tix = json_object_get(in, "traj_index");
    const json_t *ref =
        json_object_get(json_object_get(json_object_get(c, "outputs"), "float64"), "advantages");
    size_t R = json_array_size(tlr);
    if (!R || R > S_MAX_TRAJ * S_MAX_STEPS || !ref)
        return 0;
    /* trajectories in first-appearance order, their rows in order */
    size_t n = 0, rows_of[S_MAX_TRAJ][S_MAX_STEPS], len[S_MAX_TRAJ] = {0};
    const char *names[S_MAX_TRAJ];
    for (size_t r = 0; r < R; r++) {
        const char *name = json_string_value(json_array_get(tix, r));
        size_t i = 0;
        while (i < n && strcmp(names[i], name) != 0)
            i++;
        if (i == n) {
            if (n == S_MAX_TRAJ)
                return 0;
            names[n++] = name;
        }
        if (len[i] == S_MAX_STEPS)
            return 0;
        rows_of[i][len[i]++] = r;
    }
    /* group ids and state keys: first-appearance numbers of the index and anchor strings */
    s_tr_t h[S_MAX_TRAJ];
    pv_traj_t tr[S_MAX_TRAJ];
    const char *anchors[S_MAX_TRAJ][S_MAX_STEPS];
    uint64_t keys[S_MAX_TRAJ][S_MAX_STEPS];
    size_t tok[S_MAX_TRAJ][S_MAX_STEPS];
    for (size_t i = 0; i < n; i++) {
        size_t r0 = rows_of[i][0];
        double score = 0;
        for (size_t k = 0; k < json_array_size(json_array_get(tlr, r0)); k++)
            score += json_number_value(json_array_get(json_array_get(tlr, r0), k));
        const char *g = json_string_value(json_array_get(idx, r0));
        int64_t gid = 0;
        while (strcmp(json_string_value(json_array_get(idx, (size_t)gid)), g) != 0)
            gid++;
        for (size_t t = 0; t < len[i]; t++) {
            size_t r = rows_of[i][t];
            double s = 0, G = pow(S_GAMMA, (double)(len[i] - 1 - t)) * score;
            const json_t *row = json_array_get(tlr, r), *mrow = json_array_get(mask, r);
            for (size_t k = 0; k < json_array_size(row); k++)
                s += json_number_value(json_array_get(row, k));
            tok[i][t] = SIZE_MAX;
            for (size_t k = 0; k < json_array_size(mrow) && tok[i][t] == SIZE_MAX; k++)
                if (json_number_value(json_array_get(mrow, k)) != 0.0)
                    tok[i][t] = k;
            double step_r = json_number_value(json_array_get(sr, r));
            if (s != score || strcmp(json_string_value(json_array_get(idx, r)), g) != 0 ||
                fabs(step_r - G) > 1e-9 * (1 + fabs(G)) || tok[i][t] == SIZE_MAX)
                return 0; /* not one outcome paid at the end of a trajectory */
            anchors[i][t] = json_string_value(json_array_get(obs, r));
            keys[i][t] = 0;
            while (strcmp(json_string_value(json_array_get(obs, (size_t)keys[i][t])),
                          anchors[i][t]) != 0)
                keys[i][t]++;
        }
        s_make(&h[i], gid, score, len[i], anchors[i], keys[i]);
        tr[i] = h[i].traj;
    }
    pv_gigpo_opts_t o = pv_gigpo_opts_default();
    o.gamma = S_GAMMA;
    o.epsilon = json_number_value(json_object_get(in, "epsilon"));
    o.step_weight = json_number_value(json_object_get(in, "step_advantage_w"));
    assert_int_equal(
        pv_gigpo_mode_parse(json_string_value(json_object_get(in, "mode")), &o.mean_std_norm, NULL),
        PV_OK);
    double want[S_MAX_TRAJ * S_MAX_STEPS], got[S_MAX_TRAJ * S_MAX_STEPS];
    for (int a = 0; a < 2; a++) {
        o.anchor = a ? PV_GIGPO_ANCHOR_STATE : PV_GIGPO_ANCHOR_OBSERVATION;
        pv_batch_t b;
        assert_int_equal(pv_batch_build(tr, n, &b, NULL), PV_OK);
        pv_errmsg_t em = {{0}};
        pv_err_t rc = pv_batch_gigpo(&b, tr, n, &o, NULL, &em);
        if (rc != PV_OK)
            print_error("%s: %s\n", json_string_value(json_object_get(c, "name")), em.text);
        assert_int_equal(rc, PV_OK);
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t t = 0; t < len[i]; t++, m++) {
                got[m] = b.advantages[i * b.L + t];
                want[m] = json_number_value(
                    json_array_get(json_array_get(ref, rows_of[i][t]), tok[i][t]));
            }
        assert_int_equal(m, R);
        s_assert_close(got, want, m, 1e-6);
        pv_batch_free(&b);
    }
    return 1;
}

static void test_golden_as_trajectories(void **state)
{
    (void)state;
    json_t *cases = s_golden_load("gigpo_outcome_advantage.json", NULL, 0);
    if (!cases)
        skip();
    int mapped = 0;
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) mapped += s_golden_case(c);
    json_decref(cases);
    /* of the 9 cases, 5 are trajectories of our kind (A: shared anchors in both modes, D:
     * singleton step and episode groups, E: one-step trajectories in both modes); B and C
     * pay rewards before the end, F uses similarity grouping */
    assert_int_equal(mapped, 5);
}

static void test_errors(void **state)
{
    (void)state;
    s_tr_t h[S_HAND_N];
    pv_traj_t tr[S_HAND_N];
    s_hand(h, tr);
    pv_batch_t b;
    assert_int_equal(pv_batch_build(tr, S_HAND_N, &b, NULL), PV_OK);
    pv_gigpo_opts_t o = pv_gigpo_opts_default();
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_batch_gigpo(&b, tr, S_HAND_N - 1, &o, NULL, &em), PV_ERR_INVAL);
    tr[2].state_keys = NULL;
    o.anchor = PV_GIGPO_ANCHOR_STATE;
    assert_int_equal(pv_batch_gigpo(&b, tr, S_HAND_N, &o, NULL, &em), PV_ERR_INVAL);
    assert_non_null(strstr(em.text, "state keys"));
    o.anchor = PV_GIGPO_ANCHOR_OBSERVATION;
    assert_int_equal(pv_batch_gigpo(&b, tr, S_HAND_N, &o, NULL, &em), PV_OK);
    tr[4].texts = NULL;
    assert_int_equal(pv_batch_gigpo(&b, tr, S_HAND_N, &o, NULL, &em), PV_ERR_INVAL);
    tr[4] = h[4].traj;
    tr[5].n_steps = 3; /* the batch row has 4 real steps */
    assert_int_equal(pv_batch_gigpo(&b, tr, S_HAND_N, &o, NULL, &em), PV_ERR_INVAL);
    assert_non_null(strstr(em.text, "mask"));
    pv_batch_free(&b);
    bool msn;
    pv_gigpo_anchor_t a;
    assert_int_equal(pv_gigpo_mode_parse("mean_norm", &msn, &em), PV_OK);
    assert_false(msn);
    assert_int_equal(pv_gigpo_mode_parse("std", &msn, &em), PV_ERR_INVAL);
    assert_int_equal(pv_gigpo_anchor_parse("state", &a, &em), PV_OK);
    assert_int_equal(a, PV_GIGPO_ANCHOR_STATE);
    assert_int_equal(pv_gigpo_anchor_parse(NULL, &a, &em), PV_ERR_INVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_observation_anchors),
        cmocka_unit_test(test_hand_state_anchors),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_golden_as_trajectories),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
