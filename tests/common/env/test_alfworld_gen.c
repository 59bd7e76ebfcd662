/* test_alfworld_gen.c - generated ALFWorld games and the expert: every game is solvable by
 * the expert within the step limit (and its plan really wins), train and test tasks never
 * coincide, the knobs do what they say, the embedded rules and wording play exactly like
 * ALFWorld 0.5.0's own alfred.pddl / alfred.twl2 (when ../shared has them), the pruned
 * expert search finds plans as short as the unrestricted one, and the searching expert
 * (env.expert = search) wins while acting only on objects the game's text has shown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/env/alfworld_expert.h"
#include "common/env/alfworld_gen.h"
#include "common/env/alfworld_int.h"
#include "common/env/alfworld_vocab.h"
#include "tests/common/env/alf_test.h"

/* ---------------------------------------------------------------- task sentences */

typedef struct triple {
    int type;
    char obj[80], recep[80];
} triple_t;

/* Parse a goal sentence written with gen/goal_library.py's templates. */
static bool s_parse_task(const char *text, triple_t *t)
{
    char w[12][64];
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    size_t len = strlen(buf);
    if (len && buf[len - 1] == '.')
        buf[len - 1] = 0;
    for (char *tok = strtok(buf, " "); tok && n < 12; tok = strtok(NULL, " "))
        snprintf(w[n++], 64, "%s", tok);
    for (int type = 1; type <= 6; type++)
        for (int v = 0; v < 2; v++) {
            char tb[128];
            snprintf(tb, sizeof tb, "%s", pv_alf_vocab_templates[type][v]);
            char *pw[12];
            int m = 0;
            for (char *tok = strtok(tb, " "); tok && m < 12; tok = strtok(NULL, " "))
                pw[m++] = tok;
            if (m != n)
                continue;
            bool ok = true;
            memset(t, 0, sizeof *t);
            for (int i = 0; i < n && ok; i++) {
                if (strcmp(pw[i], "{obj}") == 0)
                    memcpy(t->obj, w[i], sizeof w[i]);
                else if (strcmp(pw[i], "{recep}") == 0 || strcmp(pw[i], "{toggle}") == 0)
                    memcpy(t->recep, w[i], sizeof w[i]);
                else
                    ok = strcmp(pw[i], w[i]) == 0;
            }
            if (ok) {
                t->type = type;
                return true;
            }
        }
    return false;
}

static pv_env_model_t *s_gen_model_x(uint32_t recep, uint32_t distract, uint32_t mask,
                                     pv_env_expert_t expert)
{
    pv_env_spec_t spec = {.name = "alfworld",
                          .gen_receptacles = recep,
                          .gen_distractors = distract,
                          .gen_task_types = mask,
                          .seed = 5,
                          .expert = expert};
    pv_env_model_t *m = NULL;
    pv_errmsg_t em;
    assert_int_equal(pv_env_model_new(&spec, &m, &em), PV_OK);
    return m;
}

static pv_env_model_t *s_gen_model(uint32_t recep, uint32_t distract, uint32_t mask)
{
    return s_gen_model_x(recep, distract, mask, PV_ENV_EXPERT_PLANNER);
}

/* ---------------------------------------------------------------- solvability */

/* Follow the expert from reset: every action is admissible, the episode is won, and it takes
 * exactly the plan length reported at reset (<= 50 steps). */
static void s_solve(pv_env_t *e, const pv_task_t *t, int *types_seen)
{
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, t, &r), PV_OK);
    assert_false(r.done);
    triple_t tr;
    if (!s_parse_task(pv_env_task_text(e), &tr))
        fail_msg("unparsed task '%s'", pv_env_task_text(e));
    types_seen[tr.type]++;
    /* the type read from the goal's predicates names the template the task text came from */
    static const char *const names[7] = {"",
                                         "pick_and_place_simple",
                                         "look_at_obj_in_light",
                                         "pick_clean_then_place_in_recep",
                                         "pick_heat_then_place_in_recep",
                                         "pick_cool_then_place_in_recep",
                                         "pick_two_obj_and_place"};
    assert_string_equal(pv_env_task_type(e), names[tr.type]);
    int plan = pv_env_expert_plan_len(e);
    if (plan <= 0 || plan > 50)
        fail_msg("task %llu '%s': plan length %d", (unsigned long long)t->task_id,
                 pv_env_task_text(e), plan);
    assert_int_equal(alf_follow_expert(e, &r), plan);
    assert_true(r.won && r.reward == 1.0f);
}

static void test_generated_games_are_solvable(void **state)
{
    (void)state;
    pv_env_model_t *m = s_gen_model(0, 0, 0);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    assert_true(pv_env_model_n_tasks(m, PV_SPLIT_TRAIN) == UINT64_MAX);
    int seen[7] = {0};
    for (uint64_t i = 0; i < 240; i++) {
        pv_task_t t = {.split = (uint32_t)(i % 2), .task_id = i, .seed = i * 7};
        s_solve(e, &t, seen);
    }
    for (int type = 1; type <= 6; type++)
        assert_true(seen[type] >= 10); /* every task type was exercised */
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
}

/* Big rooms and many distractors too. */
static void test_generated_extremes_are_solvable(void **state)
{
    (void)state;
    uint32_t knobs[][2] = {{3, 1}, {5, 40}, {40, 120}, {60, 200}};
    int seen[7] = {0};
    for (int k = 0; k < 4; k++) {
        pv_env_model_t *m = s_gen_model(knobs[k][0], knobs[k][1], 0);
        pv_env_t *e = NULL;
        assert_int_equal(pv_env_new(m, &e), PV_OK);
        for (uint64_t i = 0; i < 12; i++) {
            pv_task_t t = {.split = (uint32_t)(i % 2), .task_id = i};
            s_solve(e, &t, seen);
        }
        pv_env_destroy(&e);
        pv_env_model_destroy(&m);
    }
}

/* ---------------------------------------------------------------- splits and knobs */

static void test_train_and_test_never_coincide(void **state)
{
    (void)state;
    pv_env_model_t *m = s_gen_model(0, 0, 0);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    enum { N = 300 };
    static triple_t tr[2][N];
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < N; i++) {
            pv_task_t t = {.split = (uint32_t)s, .task_id = (uint64_t)i, .seed = 1};
            pv_step_result_t r;
            assert_int_equal(pv_env_reset(e, &t, &r), PV_OK);
            assert_true(s_parse_task(pv_env_task_text(e), &tr[s][i]));
        }
    int distinct_train = 0;
    for (int i = 0; i < N; i++) {
        for (int j = 0; j < N; j++)
            if (tr[0][i].type == tr[1][j].type && !strcmp(tr[0][i].obj, tr[1][j].obj) &&
                !strcmp(tr[0][i].recep, tr[1][j].recep))
                fail_msg("train task %d and test task %d are both %d/%s/%s", i, j, tr[0][i].type,
                         tr[0][i].obj, tr[0][i].recep);
        distinct_train += i == 0 || strcmp(tr[0][i].obj, tr[0][i - 1].obj) != 0;
    }
    assert_true(distinct_train > N / 4); /* tasks vary */
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
}

static void test_knobs(void **state)
{
    (void)state;
    /* task-type mask: only that type */
    for (int type = 1; type <= 6; type++) {
        pv_env_model_t *m = s_gen_model(0, 0, 1u << type);
        pv_env_t *e = NULL;
        assert_int_equal(pv_env_new(m, &e), PV_OK);
        for (uint64_t i = 0; i < 15; i++) {
            pv_task_t t = {.split = (uint32_t)(i % 2), .task_id = i};
            pv_step_result_t r;
            triple_t tr;
            assert_int_equal(pv_env_reset(e, &t, &r), PV_OK);
            assert_true(s_parse_task(pv_env_task_text(e), &tr));
            assert_int_equal(tr.type, type);
        }
        pv_env_destroy(&e);
        pv_env_model_destroy(&m);
    }
    /* receptacles: the room listing has exactly that many */
    for (uint32_t n = 6; n <= 30; n += 8) {
        pv_env_model_t *m = s_gen_model(n, 0, 0);
        pv_env_t *e = NULL;
        assert_int_equal(pv_env_new(m, &e), PV_OK);
        for (uint64_t i = 0; i < 10; i++) {
            pv_task_t t = {.task_id = i};
            pv_step_result_t r;
            assert_int_equal(pv_env_reset(e, &t, &r), PV_OK);
            const char *list = strstr(r.obs, "you see ");
            assert_non_null(list);
            uint32_t items = 1;
            for (const char *p = list; *p && *p != '\n'; p++)
                items += *p == ',';
            if (n >= 6)
                assert_int_equal(items, n);
        }
        pv_env_destroy(&e);
        pv_env_model_destroy(&m);
    }
    /* knobs out of range are refused */
    pv_env_spec_t bad[] = {{.name = "alfworld", .gen_receptacles = 2},
                           {.name = "alfworld", .gen_receptacles = 61},
                           {.name = "alfworld", .gen_distractors = 201},
                           {.name = "alfworld", .gen_task_types = 0x81}};
    for (int i = 0; i < 4; i++) {
        pv_env_model_t *m = NULL;
        pv_errmsg_t em = {{0}};
        assert_int_equal(pv_env_model_new(&bad[i], &m, &em), PV_ERR_INVAL);
        assert_true(strlen(em.text) > 0);
    }
}

/* Distractors: the problem has that many objects besides the targets and a lamp. */
static void test_distractor_count(void **state)
{
    (void)state;
    pv_arena_t *a = NULL;
    assert_int_equal(pv_arena_new(1 << 20, 0, &a), PV_OK);
    pv_errmsg_t em;
    pv_alf_domain_t *dom;
    assert_int_equal(pv_alf_domain_parse(a, pv_alf_embedded_domain, "d", &dom, &em), PV_OK);
    for (uint32_t want = 5; want <= 125; want += 40) {
        pv_alf_gen_cfg_t cfg = {.n_distract = want};
        assert_int_equal(pv_alf_gen_check(&cfg, &em), PV_OK);
        for (uint64_t s = 0; s < 8; s++) {
            pv_alf_problem_t *p;
            const char *task;
            assert_int_equal(pv_alf_generate(a, dom, &cfg, s, 0, &p, &task, &em), PV_OK);
            uint32_t objects = 0;
            for (uint32_t i = 0; i < p->n_ent; i++)
                objects += strcmp(p->ent_type[i], "object") == 0;
            assert_true(objects >= want + 1 && objects <= want + 4); /* + 1..3 targets, lamp */
        }
    }
    pv_arena_destroy(&a);
}

/* Same task, same game; other task ids, other games. */
static void test_determinism(void **state)
{
    (void)state;
    pv_env_model_t *m = s_gen_model(0, 0, 0);
    pv_env_t *e1 = NULL, *e2 = NULL;
    assert_int_equal(pv_env_new(m, &e1), PV_OK);
    assert_int_equal(pv_env_new(m, &e2), PV_OK);
    int differ = 0;
    for (uint64_t i = 0; i < 20; i++) {
        pv_task_t t = {.task_id = i, .seed = 3}, u = {.task_id = i + 1, .seed = 3};
        pv_step_result_t r1, r2;
        assert_int_equal(pv_env_reset(e1, &t, &r1), PV_OK);
        assert_int_equal(pv_env_reset(e2, &t, &r2), PV_OK);
        assert_string_equal(r1.obs, r2.obs);
        assert_int_equal(pv_env_reset(e2, &u, &r2), PV_OK);
        differ += strcmp(r1.obs, r2.obs) != 0;
    }
    assert_true(differ >= 18);
    pv_env_destroy(&e1);
    pv_env_destroy(&e2);
    pv_env_model_destroy(&m);
}

/* Save at every step of random generated episodes; load each state into an instance that is
 * playing another task (so the game is rebuilt from the saved task) and replay the same
 * actions: the future is identical. A state from another generator setting is refused. */
static void test_save_restore_generated(void **state)
{
    (void)state;
    pv_env_model_t *m = s_gen_model(0, 0, 0), *other_m = s_gen_model(9, 0, 0);
    pv_env_t *e = NULL, *f = NULL, *g = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    assert_int_equal(pv_env_new(m, &f), PV_OK);
    assert_int_equal(pv_env_new(other_m, &g), PV_OK);
    size_t cap = pv_env_state_max(m), len[50];
    uint8_t *saved = malloc(cap * 50);
    static char acts[50][256], obs[50][4096];
    bool done[50];
    pv_rng_t rng;
    pv_rng_seed(&rng, 77, 1);
    for (uint64_t ep = 0; ep < 10; ep++) {
        pv_task_t t = {.split = (uint32_t)(ep % 2), .task_id = 100 + ep, .seed = ep};
        pv_task_t elsewhere = {.task_id = 999};
        pv_step_result_t r;
        assert_int_equal(pv_env_reset(e, &t, &r), PV_OK);
        int n = 0;
        while (!r.done && n < 50) {
            assert_int_equal(pv_env_save(e, saved + cap * n, cap, &len[n]), PV_OK);
            const char *const *a;
            size_t k;
            assert_int_equal(pv_env_admissible(e, &a, &k), PV_OK);
            /* a third of the time the expert's move (progress), else any admissible one */
            if (pv_rng_bounded(&rng, 3) != 0 || pv_env_expert_action(e, acts[n], 256) != PV_OK)
                snprintf(acts[n], 256, "%s", a[pv_rng_bounded(&rng, (uint32_t)k)]);
            assert_int_equal(pv_env_step(e, acts[n], &r), PV_OK);
            snprintf(obs[n], sizeof obs[n], "%s", r.obs);
            done[n] = r.done;
            n++;
        }
        for (int t0 = 0; t0 < n; t0 += 3) {
            pv_step_result_t q;
            pv_errmsg_t em;
            assert_int_equal(pv_env_reset(f, &elsewhere, &q), PV_OK);
            assert_int_equal(pv_env_load(f, saved + cap * t0, len[t0], &em), PV_OK);
            assert_int_equal(pv_env_load(g, saved + cap * t0, len[t0], &em), PV_ERR_INVAL);
            for (int t1 = t0; t1 < n; t1++) {
                assert_int_equal(pv_env_step(f, acts[t1], &q), PV_OK);
                assert_string_equal(q.obs, obs[t1]);
                assert_int_equal(q.done, done[t1]);
            }
        }
    }
    free(saved);
    pv_env_destroy(&e);
    pv_env_destroy(&f);
    pv_env_destroy(&g);
    pv_env_model_destroy(&m);
    pv_env_model_destroy(&other_m);
}

/* The room tables name receptacles by enum: check the enum matches the names. */
static void test_room_tables(void **state)
{
    (void)state;
    const pv_alf_vocab_room_t *k = &pv_alf_vocab_room[0];
    assert_string_equal(k->name, "Kitchen");
    const char *need[] = {"Fridge", "Microwave", "SinkBasin", "StoveBurner", "Toaster"};
    for (int i = 0; i < 5; i++) {
        bool found = false;
        for (int s = 0; s < k->n_slots; s++)
            found |= strcmp(pv_alf_vocab_rec[k->slots[s].rec].name, need[i]) == 0;
        assert_true(found);
    }
    const pv_alf_vocab_room_t *b = &pv_alf_vocab_room[3];
    assert_string_equal(b->name, "Bathroom");
    bool toilet = false;
    for (int s = 0; s < b->n_slots; s++)
        toilet |= strcmp(pv_alf_vocab_rec[b->slots[s].rec].name, "Toilet") == 0;
    assert_true(toilet);
}

/* ---------------------------------------------------------------- embedded rules */

typedef struct side {
    pv_alf_domain_t *dom;
    pv_alf_grammar_t *gram;
    pv_alf_game_t *g;
    uint64_t fd[1200], neg[1200];
    uint32_t ranks[8192];
} side_t;

/* Generated games played under our embedded copy and under ALFWorld 0.5.0's alfred.pddl and
 * alfred.twl2: the same admissible lists and the same text at every step of random walks. */
static void test_embedded_rules_match_alfworld(void **state)
{
    (void)state;
    char dp[1024], gp[1024];
    if (!pv_test_shared(ALF_DIR "logic/current_0.5.0/alfred.pddl", dp, sizeof dp) ||
        !pv_test_shared(ALF_DIR "logic/current_0.5.0/alfred.twl2", gp, sizeof gp))
        skip();
    char *dtext = alf_slurp(dp), *gtext = alf_slurp(gp);
    pv_arena_t *a = NULL;
    assert_int_equal(pv_arena_new(1 << 20, 0, &a), PV_OK);
    static side_t side[2];
    pv_errmsg_t em;
    assert_int_equal(pv_alf_domain_parse(a, pv_alf_embedded_domain, "emb", &side[0].dom, &em),
                     PV_OK);
    assert_int_equal(
        pv_alf_grammar_parse(a, side[0].dom, pv_alf_embedded_grammar, "emb", &side[0].gram, &em),
        PV_OK);
    assert_int_equal(pv_alf_domain_parse(a, dtext, dp, &side[1].dom, &em), PV_OK);
    assert_int_equal(pv_alf_grammar_parse(a, side[1].dom, gtext, gp, &side[1].gram, &em), PV_OK);
    pv_alf_gen_cfg_t cfg = {0};
    assert_int_equal(pv_alf_gen_check(&cfg, &em), PV_OK);
    pv_rng_t rng;
    pv_rng_seed(&rng, 9, 9);
    char o0[8192], o1[8192];
    for (uint64_t seed = 0; seed < 30; seed++) {
        for (int s = 0; s < 2; s++) {
            pv_alf_problem_t *p;
            const char *task;
            assert_int_equal(
                pv_alf_generate(a, side[s].dom, &cfg, seed, (int)(seed % 2), &p, &task, &em),
                PV_OK);
            assert_int_equal(
                pv_alf_ground(NULL, a, side[s].dom, side[s].gram, p, task, "g", &side[s].g, &em),
                PV_OK);
            memcpy(side[s].fd, side[s].g->init_bits, side[s].g->n_words * 8);
            memset(side[s].neg, 0, sizeof side[s].neg);
        }
        assert_int_equal(side[0].g->n_cmds, side[1].g->n_cmds);
        pv_alf_out_t out0 = {.buf = o0, .cap = sizeof o0}, out1 = {.buf = o1, .cap = sizeof o1};
        pv_alf_view_t v0 = {side[0].g, side[0].fd, side[0].neg};
        pv_alf_view_t v1 = {side[1].g, side[1].fd, side[1].neg};
        pv_alf_intro(&v0, &out0);
        pv_alf_intro(&v1, &out1);
        assert_string_equal(o0, o1);
        for (int step = 0; step < 60; step++) {
            uint32_t n0 = pv_alf_admissible_ranks(side[0].g, side[0].fd, side[0].ranks);
            uint32_t n1 = pv_alf_admissible_ranks(side[1].g, side[1].fd, side[1].ranks);
            assert_int_equal(n0, n1);
            for (uint32_t i = 0; i < n0; i++)
                assert_string_equal(side[0].g->cmd[side[0].ranks[i]],
                                    side[1].g->cmd[side[1].ranks[i]]);
            const char *cmd = side[0].g->cmd[side[0].ranks[pv_rng_bounded(&rng, n0)]];
            int32_t op0 = pv_alf_find_op(side[0].g, side[0].fd, cmd);
            int32_t op1 = pv_alf_find_op(side[1].g, side[1].fd, cmd);
            assert_true(op0 >= 0 && op1 >= 0);
            pv_alf_op_apply(side[0].g, (uint32_t)op0, side[0].fd, side[0].neg);
            pv_alf_op_apply(side[1].g, (uint32_t)op1, side[1].fd, side[1].neg);
            out0.len = out1.len = 0;
            o0[0] = o1[0] = 0;
            pv_alf_feedback(&v0, (uint32_t)op0, &out0);
            pv_alf_feedback(&v1, (uint32_t)op1, &out1);
            assert_string_equal(o0, o1);
            assert_int_equal(pv_alf_goal_holds(side[0].g, side[0].fd),
                             pv_alf_goal_holds(side[1].g, side[1].fd));
        }
    }
    pv_arena_destroy(&a);
    free(dtext);
    free(gtext);
}

/* ---------------------------------------------------------------- the searching expert */

/* The object a command picks up or uses ("take plate 1 from ...", "use desklamp 1"), or "". */
static void s_acted_object(const char *cmd, char *obj, size_t cap)
{
    obj[0] = 0;
    char w0[32], w1[64], w2[32];
    if (sscanf(cmd, "%31s %63s %31s", w0, w1, w2) == 3 && strcmp(w0, "take") == 0)
        snprintf(obj, cap, "%s %s", w1, w2);
    else if (sscanf(cmd, "%31s %63s %31s", w0, w1, w2) >= 3 && strcmp(w0, "use") == 0)
        snprintf(obj, cap, "%s %s", w1, w2);
}

/* Play `expert`'s actions from reset; *blind counts the take/use actions naming an object
 * ("plate 1") that no earlier observation's text contained. Returns the steps, -1 when an
 * action was not admissible or the episode was lost. */
static int s_play_expert(pv_env_t *e, const pv_task_t *t, int *blind)
{
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, t, &r), PV_OK);
    static char shown[1 << 16];
    snprintf(shown, sizeof shown, "%s", r.obs);
    int steps = 0;
    while (!r.done) {
        char a[256], obj[128];
        if (pv_env_expert_action(e, a, sizeof a) != PV_OK || !alf_admissible_has(e, a))
            return -1;
        s_acted_object(a, obj, sizeof obj);
        if (obj[0]) { /* whole word: "plate 1" is not "plate 10" */
            bool found = false;
            size_t n = strlen(obj);
            for (const char *p = strstr(shown, obj); p && !found; p = strstr(p + 1, obj))
                found = !isdigit((unsigned char)p[n]);
            *blind += !found;
        }
        assert_int_equal(pv_env_step(e, a, &r), PV_OK);
        size_t len = strlen(shown);
        snprintf(shown + len, sizeof shown - len, "\n%s", r.obs);
        steps++;
    }
    return r.won ? steps : -1;
}

static void test_search_expert_acts_on_what_it_saw(void **state)
{
    (void)state;
    pv_env_model_t *mp = s_gen_model_x(0, 0, 0, PV_ENV_EXPERT_PLANNER),
                   *ms = s_gen_model_x(0, 0, 0, PV_ENV_EXPERT_SEARCH);
    pv_env_t *ep = NULL, *es = NULL;
    assert_int_equal(pv_env_new(mp, &ep), PV_OK);
    assert_int_equal(pv_env_new(ms, &es), PV_OK);
    int blind_p = 0, blind_s = 0, steps_p = 0, steps_s = 0, longer = 0; /* blind_p: 0 too */
    for (uint64_t i = 0; i < 120; i++) {
        pv_task_t t = {.split = (uint32_t)(i % 2), .task_id = i, .seed = i * 3 + 1};
        int np = s_play_expert(ep, &t, &blind_p), ns = s_play_expert(es, &t, &blind_s);
        if (np < 0 || ns < 0)
            fail_msg("task %llu: planner %d steps, search %d steps (-1: not won)",
                     (unsigned long long)i, np, ns);
        /* the planner's plans are shortest: searching never beats them */
        assert_true(ns >= np);
        longer += ns > np;
        steps_p += np;
        steps_s += ns;
        /* the same game, the same planner: the oracle's plan length does not change */
        pv_step_result_t r;
        assert_int_equal(pv_env_reset(es, &t, &r), PV_OK);
        assert_int_equal(pv_env_reset(ep, &t, &r), PV_OK);
        assert_int_equal(pv_env_expert_plan_len(es), pv_env_expert_plan_len(ep));
    }
    print_message("search expert: %d steps against the planner's %d on 120 games (%d longer); "
                  "objects acted on unseen: planner %d, search %d\n",
                  steps_s, steps_p, longer, blind_p, blind_s);
    assert_int_equal(blind_s, 0); /* it only takes or uses what the text has shown */
    assert_true(longer > 0);
    pv_env_destroy(&ep);
    pv_env_destroy(&es);
    pv_env_model_destroy(&mp);
    pv_env_model_destroy(&ms);
}

/* Its knowledge is in the state: restored mid-episode, it goes on exactly as it would have. */
static void test_search_expert_after_restore(void **state)
{
    (void)state;
    pv_env_model_t *m = s_gen_model_x(8, 10, 0, PV_ENV_EXPERT_SEARCH);
    pv_env_t *a = NULL, *b = NULL;
    assert_int_equal(pv_env_new(m, &a), PV_OK);
    assert_int_equal(pv_env_new(m, &b), PV_OK);
    uint8_t buf[1 << 16];
    for (uint64_t i = 0; i < 20; i++) {
        pv_task_t t = {.task_id = i, .seed = 11};
        pv_step_result_t r;
        assert_int_equal(pv_env_reset(a, &t, &r), PV_OK);
        for (int k = 0; !r.done; k++) {
            char x[256], y[256];
            assert_int_equal(pv_env_expert_action(a, x, sizeof x), PV_OK);
            size_t len;
            assert_int_equal(pv_env_save(a, buf, sizeof buf, &len), PV_OK);
            assert_int_equal(pv_env_load(b, buf, len, NULL), PV_OK);
            assert_int_equal(pv_env_expert_action(b, y, sizeof y), PV_OK);
            assert_string_equal(x, y);
            assert_int_equal(pv_env_step(a, x, &r), PV_OK);
        }
        assert_true(r.won);
    }
    pv_env_destroy(&a);
    pv_env_destroy(&b);
    pv_env_model_destroy(&m);
}

/* The embedded domain and grammar parsed into arena a (reset first; NULL: a new arena,
 * returned). */
static pv_arena_t *s_embedded(pv_arena_t *a, pv_alf_domain_t **dom, pv_alf_grammar_t **gram)
{
    pv_errmsg_t em;
    if (!a)
        assert_int_equal(pv_arena_new(1 << 20, 0, &a), PV_OK);
    pv_arena_reset(a);
    assert_int_equal(pv_alf_domain_parse(a, pv_alf_embedded_domain, "d", dom, &em), PV_OK);
    assert_int_equal(pv_alf_grammar_parse(a, *dom, pv_alf_embedded_grammar, "g", gram, &em), PV_OK);
    return a;
}

/* Move object o from receptacle r1 to r2 in fd (inReceptacle and objectAtLocation); false
 * when the game has no atom for the new place. */
static bool s_move_object(const pv_alf_game_t *g, uint64_t *fd, uint32_t o, uint32_t r1,
                          uint32_t r2)
{
    int32_t in = pv_alf_domain_pred(g->dom, "inreceptacle"),
            oat = pv_alf_domain_pred(g->dom, "objectatlocation"),
            rat = pv_alf_domain_pred(g->dom, "receptacleatlocation");
    uint32_t l[2] = {UINT32_MAX, UINT32_MAX}, r[2] = {r1, r2};
    for (int k = 0; k < 2; k++)
        for (uint32_t j = g->by_pred_off[rat]; j < g->by_pred_off[rat + 1]; j++)
            if (g->atoms[g->by_pred[j]].args[0] == r[k] && pv_alf_bit(fd, g->by_pred[j]))
                l[k] = g->atoms[g->by_pred[j]].args[1];
    uint32_t a1[2] = {o, r1}, a2[2] = {o, r2}, b1[2] = {o, l[0]}, b2[2] = {o, l[1]};
    int32_t i1 = pv_alf_atom_find(g, in, 2, a1), i2 = pv_alf_atom_find(g, in, 2, a2),
            j1 = pv_alf_atom_find(g, oat, 2, b1), j2 = pv_alf_atom_find(g, oat, 2, b2);
    if (i1 < 0 || i2 < 0 || j1 < 0 || j2 < 0 || l[0] == l[1])
        return false;
    pv_alf_setbit(fd, (uint32_t)i1, false);
    pv_alf_setbit(fd, (uint32_t)j1, false);
    pv_alf_setbit(fd, (uint32_t)i2, true);
    pv_alf_setbit(fd, (uint32_t)j2, true);
    return true;
}

/* The searching expert cannot know where unseen things are: along its own episodes, moving
 * an object it has not been shown (one in a receptacle whose location was never visited)
 * to another such receptacle never changes its action, while the planner's does change. */
static void test_search_expert_ignores_hidden_places(void **state)
{
    (void)state;
    pv_errmsg_t em;
    pv_alf_domain_t *dom;
    pv_alf_grammar_t *gram;
    pv_arena_t *a = s_embedded(NULL, &dom, &gram);
    pv_alf_expert_t *ex = NULL;
    assert_int_equal(pv_alf_expert_new(&ex), PV_OK);
    static uint64_t fd[1200], neg[1200], moved[1200];
    int checked = 0, planner_changed = 0;
    for (uint64_t seed = 0; seed < 40; seed++) {
        pv_alf_gen_cfg_t cfg = {.n_recep = 6, .n_distract = 4, .type_mask = 0};
        assert_int_equal(pv_alf_gen_check(&cfg, &em), PV_OK);
        pv_alf_problem_t *p;
        const char *task;
        pv_alf_game_t *g;
        assert_int_equal(pv_alf_generate(a, dom, &cfg, seed, 0, &p, &task, &em), PV_OK);
        assert_int_equal(pv_alf_ground(NULL, a, dom, gram, p, task, "g", &g, &em), PV_OK);
        memcpy(fd, g->init_bits, g->n_words * 8);
        memset(neg, 0, g->n_words * 8);
        int32_t at = pv_alf_domain_pred(dom, "atlocation"),
                in = pv_alf_domain_pred(dom, "inreceptacle"),
                rat = pv_alf_domain_pred(dom, "receptacleatlocation");
        for (int step = 0; step < 50 && !pv_alf_goal_holds(g, fd); step++) {
            int32_t op = -1;
            assert_int_equal(pv_alf_search_action(ex, g, fd, neg, 50, &op), PV_OK);
            /* an object in a receptacle at a location the agent never stood at */
            for (uint32_t j = g->by_pred_off[in]; j < g->by_pred_off[in + 1]; j++) {
                uint32_t id = g->by_pred[j];
                if (!pv_alf_bit(fd, id))
                    continue;
                uint32_t o = g->atoms[id].args[0], r1 = g->atoms[id].args[1];
                bool r1_seen = false;
                for (uint32_t q = g->by_pred_off[rat]; q < g->by_pred_off[rat + 1]; q++) {
                    const pv_alf_atom_t *ra = &g->atoms[g->by_pred[q]];
                    if (ra->args[0] != r1 || !pv_alf_bit(fd, g->by_pred[q]))
                        continue;
                    for (uint32_t u = g->by_pred_off[at]; u < g->by_pred_off[at + 1]; u++)
                        if (g->atoms[g->by_pred[u]].args[1] == ra->args[1] &&
                            (pv_alf_bit(fd, g->by_pred[u]) || pv_alf_bit(neg, g->by_pred[u])))
                            r1_seen = true;
                }
                if (r1_seen)
                    continue;
                /* to every other receptacle at an unvisited location */
                for (uint32_t q = g->by_pred_off[rat]; q < g->by_pred_off[rat + 1]; q++) {
                    const pv_alf_atom_t *ra = &g->atoms[g->by_pred[q]];
                    uint32_t r2 = ra->args[0];
                    bool r2_seen = false;
                    for (uint32_t u = g->by_pred_off[at]; u < g->by_pred_off[at + 1]; u++)
                        if (g->atoms[g->by_pred[u]].args[1] == ra->args[1] &&
                            (pv_alf_bit(fd, g->by_pred[u]) || pv_alf_bit(neg, g->by_pred[u])))
                            r2_seen = true;
                    memcpy(moved, fd, g->n_words * 8);
                    if (r2 == r1 || r2_seen || !s_move_object(g, moved, o, r1, r2) ||
                        pv_alf_goal_holds(g, moved)) /* a pan put in the fridge for it */
                        continue;
                    int32_t op2 = -1, f1 = -1, f2 = -1;
                    assert_int_equal(pv_alf_search_action(ex, g, moved, neg, 50, &op2), PV_OK);
                    if (g->ops[op].cmd != g->ops[op2].cmd)
                        fail_msg("seed %llu step %d ('%s'): moving unseen %s from %s to %s "
                                 "changed '%s' into '%s'",
                                 (unsigned long long)seed, step, task, g->ent_name[o],
                                 g->ent_name[r1], g->ent_name[r2], g->cmd[g->ops[op].cmd],
                                 g->cmd[g->ops[op2].cmd]);
                    checked++;
                    int l1 = pv_alf_expert_plan(ex, g, fd, 50, &f1),
                        l2 = pv_alf_expert_plan(ex, g, moved, 50, &f2);
                    planner_changed += l1 > 0 && l2 > 0 && g->ops[f1].cmd != g->ops[f2].cmd;
                }
            }
            pv_alf_op_apply(g, (uint32_t)op, fd, neg);
        }
        assert_true(pv_alf_goal_holds(g, fd));
        s_embedded(a, &dom, &gram);
    }
    print_message("%d hidden moves checked; the planner's action changed on %d\n", checked,
                  planner_changed);
    assert_true(checked > 100);
    assert_true(planner_changed > 0); /* the check can tell a privileged expert */
    pv_alf_expert_destroy(&ex);
    pv_arena_destroy(&a);
}

/* ---------------------------------------------------------------- expert optimality */

/* On small games, from the start and from states after random actions, the pruned search
 * finds plans exactly as short as breadth-first search over every operator. */
static void test_expert_pruning_keeps_plans_shortest(void **state)
{
    (void)state;
    pv_errmsg_t em;
    pv_alf_domain_t *dom;
    pv_alf_grammar_t *gram;
    pv_arena_t *a = s_embedded(NULL, &dom, &gram);
    pv_alf_expert_t *fast = NULL, *full = NULL;
    assert_int_equal(pv_alf_expert_new(&fast), PV_OK);
    assert_int_equal(pv_alf_expert_new(&full), PV_OK);
    pv_alf_expert_set_exhaustive(full, true);
    pv_rng_t rng;
    pv_rng_seed(&rng, 4, 4);
    static uint64_t fd[1200];
    static uint32_t ranks[4096];
    int compared = 0, longer = 0;
    for (uint64_t seed = 0; seed < 60; seed++) {
        pv_alf_gen_cfg_t cfg = {.n_recep = 3 + (uint32_t)(seed % 3), .n_distract = 2};
        assert_int_equal(pv_alf_gen_check(&cfg, &em), PV_OK);
        pv_alf_problem_t *p;
        const char *task;
        pv_alf_game_t *g;
        assert_int_equal(pv_alf_generate(a, dom, &cfg, seed, 0, &p, &task, &em), PV_OK);
        assert_int_equal(pv_alf_ground(NULL, a, dom, gram, p, task, "g", &g, &em), PV_OK);
        memcpy(fd, g->init_bits, g->n_words * 8);
        for (int k = 0; k < 4; k++) {
            int32_t f1, f2;
            int l1 = pv_alf_expert_plan(fast, g, fd, 50, &f1);
            int l2 = pv_alf_expert_plan(full, g, fd, 50, &f2);
            if (l2 == PV_ALF_EXPERT_LIMIT)
                continue;
            assert_int_equal(l1, l2);
            compared++;
            longer += l1 > 3;
            for (int r = 0; r < 3; r++) { /* wander off */
                uint32_t n = pv_alf_admissible_ranks(g, fd, ranks);
                int32_t op = pv_alf_find_op(g, fd, g->cmd[ranks[pv_rng_bounded(&rng, n)]]);
                pv_alf_op_apply(g, (uint32_t)op, fd, NULL);
            }
        }
    }
    assert_true(compared >= 100);
    assert_true(longer >= 50);
    pv_alf_expert_destroy(&fast);
    pv_alf_expert_destroy(&full);
    pv_arena_destroy(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated_games_are_solvable),
        cmocka_unit_test(test_generated_extremes_are_solvable),
        cmocka_unit_test(test_train_and_test_never_coincide),
        cmocka_unit_test(test_knobs),
        cmocka_unit_test(test_distractor_count),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_save_restore_generated),
        cmocka_unit_test(test_room_tables),
        cmocka_unit_test(test_embedded_rules_match_alfworld),
        cmocka_unit_test(test_expert_pruning_keeps_plans_shortest),
        cmocka_unit_test(test_search_expert_acts_on_what_it_saw),
        cmocka_unit_test(test_search_expert_after_restore),
        cmocka_unit_test(test_search_expert_ignores_hidden_places),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
