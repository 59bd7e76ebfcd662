/* test_alfworld.c - the alfworld family on real ALFWorld data (../shared/data/alfworld):
 * the README human play-through replayed in both grammar eras, TextWorld's own ALFWorld-format
 * test game, ALFWorld wording from the ReAct transcripts, the step limit, save/restore at
 * every step, and what a loaded state must refuse. Every case skips without ../shared. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/common/env/alf_test.h"

#define OBS_CAP 16384

typedef struct fixture {
    pv_env_model_t *m;
    pv_env_t *e;
} fixture_t;

static bool s_open(const char *rel, uint32_t max_steps, fixture_t *f)
{
    char path[1024];
    if (!pv_test_shared(rel, path, sizeof path))
        return false;
    f->m = alf_model(path, max_steps);
    assert_non_null(f->m);
    assert_int_equal(pv_env_new(f->m, &f->e), PV_OK);
    return true;
}

static void s_close(fixture_t *f)
{
    pv_env_destroy(&f->e);
    pv_env_model_destroy(&f->m);
}

static void s_expect_obs(const char *got, const char *want)
{
    static char a[OBS_CAP], b[OBS_CAP];
    alf_canon(got, a, sizeof a);
    alf_canon(want, b, sizeof b);
    if (strcmp(a, b) != 0)
        fail_msg("observation differs\n got:  %s\n want: %s", a, b);
}

/* ---------------------------------------------------------------- README transcript */

/* The transcript prints "You arrive at loc N." (json_2.1.1 grammar) and then types the 0.5.0
 * command "move potato 1 to sinkbasin 1"; the script prints "You won!" instead of the last
 * feedback. In the old era every observation must match; its spelling of the final PutObject
 * is the grammar's "put {o} in/on {r}". */
static void test_readme_transcript_old_era(void **state)
{
    (void)state;
    char tp[1024];
    fixture_t f;
    if (!pv_test_shared(ALF_README, tp, sizeof tp) || !s_open(ALF_GAME_OLD, 0, &f))
        skip();
    alf_transcript_t t;
    assert_true(alf_read_transcript(tp, &t));
    assert_int_equal(t.n, 7);
    pv_step_result_t r;
    pv_task_t task = {0};
    assert_int_equal(pv_env_reset(f.e, &task, &r), PV_OK);
    s_expect_obs(r.obs, t.intro);
    assert_string_equal(pv_env_task_text(f.e), "put a hot potato in sinkbasin.");
    for (int i = 0; i < 6; i++) {
        assert_true(alf_admissible_has(f.e, t.cmd[i]));
        assert_int_equal(pv_env_step(f.e, t.cmd[i], &r), PV_OK);
        assert_true(r.admissible);
        assert_false(r.done);
        s_expect_obs(r.obs, t.obs[i]);
    }
    assert_string_equal(t.cmd[6], "move potato 1 to sinkbasin 1");
    assert_false(alf_admissible_has(f.e, t.cmd[6])); /* not this era's wording */
    assert_true(strstr(t.obs[6], "You won!") != NULL);
    assert_int_equal(pv_env_step(f.e, "put potato 1 in/on sinkbasin 1", &r), PV_OK);
    assert_true(r.won && r.done);
    assert_true(r.reward == 1.0f);
    assert_int_equal(r.n_steps, 7);
    assert_string_equal(r.obs, "You put the potato 1 in/on the sinkbasin 1.");
    alf_free_transcript(&t);
    s_close(&f);
}

/* The 0.5.0 grammar says "You arrive at {r.name}." where the old one said "loc N"; with that
 * substitution every observation matches, and the transcript's own last command wins. */
static void test_readme_transcript_new_era(void **state)
{
    (void)state;
    char tp[1024];
    fixture_t f;
    if (!pv_test_shared(ALF_README, tp, sizeof tp) || !s_open(ALF_GAME_NEW, 0, &f))
        skip();
    alf_transcript_t t;
    assert_true(alf_read_transcript(tp, &t));
    pv_step_result_t r;
    pv_task_t task = {0};
    assert_int_equal(pv_env_reset(f.e, &task, &r), PV_OK);
    s_expect_obs(r.obs, t.intro);
    for (int i = 0; i < 6; i++) {
        char want[OBS_CAP];
        alf_squash(t.obs[i], want, sizeof want);
        if (strncmp(want, "You arrive at loc ", 18) == 0 && strncmp(t.cmd[i], "go to ", 6) == 0) {
            char fixed[OBS_CAP];
            const char *rest = strchr(want + 18, '.');
            snprintf(fixed, sizeof fixed, "You arrive at %s%s", t.cmd[i] + 6, rest);
            snprintf(want, sizeof want, "%s", fixed);
        }
        assert_int_equal(pv_env_step(f.e, t.cmd[i], &r), PV_OK);
        s_expect_obs(r.obs, want);
    }
    assert_int_equal(pv_env_step(f.e, t.cmd[6], &r), PV_OK);
    assert_true(r.won && r.done && r.reward == 1.0f);
    assert_string_equal(r.obs, "You move the potato 1 to the sinkbasin 1.");
    alf_free_transcript(&t);
    s_close(&f);
}

/* ---------------------------------------------------------------- wording and rules */

/* Wording from ALFWorld games as the ReAct prompts quote them ("You open the microwave 1. The
 * microwave 1 is open. In it, you see nothing.", "Nothing happens.", "You are carrying: a
 * ..."), the help text of the 0.5.0 grammar, and Fast Downward's rule that an action changing
 * nothing is no action: "go to" a receptacle at the agent's own location is not admissible
 * (coffeemachine 1 shares countertop 2's location in this game), examining it is. */
static void test_wording_and_rules(void **state)
{
    (void)state;
    fixture_t f;
    if (!s_open(ALF_GAME_NEW, 0, &f))
        skip();
    pv_step_result_t r;
    pv_task_t task = {0};
    assert_int_equal(pv_env_reset(f.e, &task, &r), PV_OK);
    assert_int_equal(pv_env_step(f.e, "inventory", &r), PV_OK);
    assert_string_equal(r.obs, "You are not carrying anything.");
    assert_int_equal(pv_env_step(f.e, "go to microwave 1", &r), PV_OK);
    assert_string_equal(r.obs, "You arrive at microwave 1. The microwave 1 is closed.");
    assert_int_equal(pv_env_step(f.e, "open microwave 1", &r), PV_OK);
    assert_string_equal(
        r.obs, "You open the microwave 1. The microwave 1 is open. In it, you see nothing.");
    assert_int_equal(pv_env_step(f.e, "close microwave 1", &r), PV_OK);
    assert_string_equal(r.obs, "You close the microwave 1.");
    assert_int_equal(pv_env_step(f.e, "take potato 1 from countertop 2", &r), PV_OK);
    assert_string_equal(r.obs, "Nothing happens.");
    assert_false(r.admissible);
    assert_int_equal(r.n_steps, 5); /* a refused command still counts */
    assert_int_equal(pv_env_step(f.e, "  go to countertop 2 \n", &r), PV_OK); /* stripped */
    assert_true(r.admissible);
    assert_false(alf_admissible_has(f.e, "go to coffeemachine 1"));
    assert_false(alf_admissible_has(f.e, "go to countertop 2"));
    assert_true(alf_admissible_has(f.e, "examine coffeemachine 1"));
    assert_false(alf_admissible_has(f.e, "examine potato 1")); /* objects: only when held */
    assert_int_equal(pv_env_step(f.e, "take potato 1 from countertop 2", &r), PV_OK);
    assert_int_equal(pv_env_step(f.e, "inventory", &r), PV_OK);
    assert_string_equal(r.obs, "You are carrying: a potato 1.");
    assert_int_equal(pv_env_step(f.e, "examine potato 1", &r), PV_OK);
    assert_string_equal(r.obs, "There's nothing special about potato 1.");
    assert_int_equal(pv_env_step(f.e, "go to microwave 1", &r), PV_OK);
    assert_int_equal(pv_env_step(f.e, "heat potato 1 with microwave 1", &r), PV_OK);
    assert_int_equal(pv_env_step(f.e, "examine potato 1", &r), PV_OK);
    assert_string_equal(r.obs, "This is a hot potato 1.");
    assert_int_equal(pv_env_step(f.e, "look", &r), PV_OK);
    assert_string_equal(r.obs, "You are facing the microwave 1. Next to it, you see nothing.");
    assert_int_equal(pv_env_step(f.e, "help", &r), PV_OK);
    assert_true(strncmp(r.obs, "\nAvailable commands:\n  look:", 28) == 0);
    assert_true(strstr(r.obs, "  move (object) to (receptacle):  place an object in or on a "
                              "receptacle\n") != NULL);
    s_close(&f);
    /* the json_2.1.1 grammar has no help action */
    if (!s_open(ALF_GAME_OLD, 0, &f))
        skip();
    assert_int_equal(pv_env_reset(f.e, &task, &r), PV_OK);
    assert_false(alf_admissible_has(f.e, "help"));
    assert_int_equal(pv_env_step(f.e, "help", &r), PV_OK);
    assert_string_equal(r.obs, "Nothing happens.");
    s_close(&f);
}

/* ALFWorld's default episode length is 50 steps: the 50th step ends the episode unwon, and a
 * further step is refused. */
static void test_step_limit(void **state)
{
    (void)state;
    fixture_t f;
    if (!s_open(ALF_GAME_OLD, 0, &f))
        skip();
    assert_int_equal(pv_env_model_max_steps(f.m), 50);
    pv_step_result_t r;
    pv_task_t task = {0};
    assert_int_equal(pv_env_reset(f.e, &task, &r), PV_OK);
    for (int i = 0; i < 50; i++) {
        assert_false(r.done);
        assert_int_equal(pv_env_step(f.e, i % 2 ? "look" : "jump", &r), PV_OK);
    }
    assert_true(r.done);
    assert_false(r.won);
    assert_int_equal(r.n_steps, 50);
    assert_int_equal(pv_env_step(f.e, "look", &r), PV_ERR_STATE);
    s_close(&f);
}

/* TextWorld's textworld/envs/pddl/tests/test_pddl.py on its hand-written game: the intro starts
 * with the ALFRED banner, the planner's walkthrough reaches reward 1, "dummy" does nothing. */
static void test_textworld_test_game(void **state)
{
    (void)state;
    alf_path_t tmp;
    const char *path = alf_tw_game(&tmp);
    if (!path)
        skip();
    pv_env_model_t *m = alf_model(path, 0);
    assert_non_null(m);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    pv_step_result_t r;
    pv_task_t task = {0};
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_true(strncmp(r.obs, "-= Welcome to TextWorld, ALFRED! =-", 35) == 0);
    assert_string_equal(pv_env_task_text(e), "examine a CD under a light source.");
    int plan = pv_env_expert_plan_len(e);
    assert_true(plan > 0);
    assert_int_equal(alf_follow_expert(e, &r), plan);
    assert_true(r.won && r.reward == 1.0f);
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_int_equal(pv_env_step(e, "dummy", &r), PV_OK);
    assert_string_equal(r.obs, "Nothing happens.");
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
    unlink(path);
}

/* ---------------------------------------------------------------- save / restore */

typedef struct rec {
    char obs[2048];
    float reward;
    bool done, adm;
} rec_t;

/* Save at every step of random episodes; restoring any saved state into another instance and
 * replaying the same actions reproduces the rest of the episode exactly. */
static void test_save_restore_every_step(void **state)
{
    (void)state;
    fixture_t f;
    if (!s_open(ALF_GAME_OLD, 0, &f))
        skip();
    pv_env_t *other = NULL;
    assert_int_equal(pv_env_new(f.m, &other), PV_OK);
    size_t cap = pv_env_state_max(f.m);
    enum { T = 50 };
    uint8_t *saved = malloc(cap * T);
    size_t len[T];
    char acts[T][256];
    rec_t *rec = malloc(sizeof *rec * T);
    pv_rng_t rng;
    pv_rng_seed(&rng, 11, 3);
    for (int ep = 0; ep < 12; ep++) {
        pv_step_result_t r;
        pv_task_t task = {0};
        assert_int_equal(pv_env_reset(f.e, &task, &r), PV_OK);
        int n = 0;
        while (!r.done && n < T) {
            assert_int_equal(pv_env_save(f.e, saved + cap * n, cap, &len[n]), PV_OK);
            const char *const *a;
            size_t k;
            assert_int_equal(pv_env_admissible(f.e, &a, &k), PV_OK);
            if (pv_rng_bounded(&rng, 8) == 0)
                snprintf(acts[n], sizeof acts[n], "take nothing from nowhere");
            else
                snprintf(acts[n], sizeof acts[n], "%s", a[pv_rng_bounded(&rng, (uint32_t)k)]);
            assert_int_equal(pv_env_step(f.e, acts[n], &r), PV_OK);
            snprintf(rec[n].obs, sizeof rec[n].obs, "%s", r.obs);
            rec[n].reward = r.reward;
            rec[n].done = r.done;
            rec[n].adm = r.admissible;
            n++;
        }
        for (int t0 = 0; t0 < n; t0++) {
            pv_errmsg_t em;
            pv_env_t *dst = (t0 & 1) ? other : f.e;
            assert_int_equal(pv_env_load(dst, saved + cap * t0, len[t0], &em), PV_OK);
            for (int t1 = t0; t1 < n; t1++) {
                pv_step_result_t q;
                assert_int_equal(pv_env_step(dst, acts[t1], &q), PV_OK);
                assert_string_equal(q.obs, rec[t1].obs);
                assert_true(q.reward == rec[t1].reward);
                assert_int_equal(q.done, rec[t1].done);
                assert_int_equal(q.admissible, rec[t1].adm);
            }
        }
    }
    free(saved);
    free(rec);
    pv_env_destroy(&other);
    s_close(&f);
}

/* A loaded state is never trusted: every truncation, a changed version, a fact no action can
 * change, and flags that contradict the facts are refused, and the instance carries on with
 * its own episode as if nothing happened. */
static void test_load_refuses_bad_bytes(void **state)
{
    (void)state;
    fixture_t f;
    if (!s_open(ALF_GAME_OLD, 0, &f))
        skip();
    pv_env_t *ctl = NULL;
    assert_int_equal(pv_env_new(f.m, &ctl), PV_OK);
    pv_step_result_t r, q;
    pv_task_t task = {0};
    assert_int_equal(pv_env_reset(f.e, &task, &r), PV_OK);
    assert_int_equal(pv_env_reset(ctl, &task, &q), PV_OK);
    const char *path[] = {"go to countertop 2", "take potato 1 from countertop 2"};
    for (int i = 0; i < 2; i++) {
        pv_env_step(f.e, path[i], &r);
        pv_env_step(ctl, path[i], &q);
    }
    size_t cap = pv_env_state_max(f.m), len;
    uint8_t *good = malloc(cap), *bad = malloc(cap);
    assert_int_equal(pv_env_save(f.e, good, cap, &len), PV_OK);
    pv_errmsg_t em;
    for (size_t k = 0; k < len; k++) /* every truncation */
        assert_int_not_equal(pv_env_load(f.e, good, k, &em), PV_OK);
    memcpy(bad, good, len);
    bad[12] ^= 1; /* payload version (after env.c's 12-byte header) */
    assert_int_equal(pv_env_load(f.e, bad, len, &em), PV_ERR_VERSION);
    memcpy(bad, good, len);
    bad[16] ^= 1; /* model fingerprint */
    assert_int_equal(pv_env_load(f.e, bad, len, &em), PV_ERR_INVAL);
    memcpy(bad, good, len);
    bad[48] |= 2; /* "done" without having won or run out of steps */
    assert_int_equal(pv_env_load(f.e, bad, len, &em), PV_ERR_DATA);
    memcpy(bad, good, len);
    bad[60] ^= 0x01; /* atom 0: an initial receptacleType fact, which no action changes */
    assert_int_equal(pv_env_load(f.e, bad, len, &em), PV_ERR_DATA);
    assert_true(strstr(em.text, "no action can change") != NULL);
    assert_int_equal(pv_env_load(f.e, good, len + 1, &em), PV_ERR_DATA); /* trailing byte */
    /* still the same episode as the control instance */
    const char *rest[] = {"go to microwave 1", "heat potato 1 with microwave 1",
                          "go to sinkbasin 1", "put potato 1 in/on sinkbasin 1"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pv_env_step(f.e, rest[i], &r), PV_OK);
        assert_int_equal(pv_env_step(ctl, rest[i], &q), PV_OK);
        assert_string_equal(r.obs, q.obs);
    }
    assert_true(r.won);
    free(good);
    free(bad);
    pv_env_destroy(&ctl);
    s_close(&f);
}

/* ---------------------------------------------------------------- malformed files */

static void s_expect_model_error(const char *path, pv_err_t want, const char *needle)
{
    pv_env_spec_t spec = {.name = "alfworld", .data_path = path};
    pv_env_model_t *m = NULL;
    pv_errmsg_t em = {{0}};
    pv_err_t rc = pv_env_model_new(&spec, &m, &em);
    if (rc != want || !strstr(em.text, path) || !strstr(em.text, needle))
        fail_msg("file %s: got %s '%s', want %s with '%s'", path, pv_errname(rc), em.text,
                 pv_errname(want), needle);
    assert_null(m);
}

/* Each kind of damage is reported with the file, the part and what is wrong. */
static void test_malformed_files(void **state)
{
    (void)state;
    json_t *root = NULL;
    const char *parts[3];
    if (!alf_game_parts(ALF_GAME_NEW, &root, parts))
        skip();
    const char *dom = parts[0], *gram = parts[1], *prob = parts[2];
    const char *path;
    alf_path_t tmp;

    path = alf_write_game(dom, NULL, prob, &tmp);
    s_expect_model_error(path, PV_ERR_DATA, "missing string field \"grammar\"");
    unlink(path);

    char *p2 = strdup(prob); /* drop the problem's last ')' */
    *strrchr(p2, ')') = ' ';
    path = alf_write_game(dom, gram, p2, &tmp);
    s_expect_model_error(path, PV_ERR_PARSE, "missing ')' for the '(' opened on line 2");
    unlink(path);
    free(p2);

    char *p3 = malloc(strlen(prob) + 64); /* a fact of an undeclared predicate */
    const char *init = strstr(prob, "(:init");
    sprintf(p3, "%.*s(:init\n (isPurple agent1)%s", (int)(init - prob), prob, init + 6);
    path = alf_write_game(dom, gram, p3, &tmp);
    s_expect_model_error(path, PV_ERR_DATA, "undefined predicate 'ispurple'");
    unlink(path);

    sprintf(p3, "%.*s(:init\n (atLocation agent1)%s", (int)(init - prob), prob, init + 6);
    path = alf_write_game(dom, gram, p3, &tmp);
    s_expect_model_error(path, PV_ERR_DATA, "predicate 'atlocation' takes 2 arguments, 1 given");
    unlink(path);

    sprintf(p3, "%.*s(:init\n (atLocation agent1 nowhere)%s", (int)(init - prob), prob, init + 6);
    path = alf_write_game(dom, gram, p3, &tmp);
    s_expect_model_error(path, PV_ERR_DATA, "unknown object 'nowhere'");
    unlink(path);
    free(p3);

    char *g2 = strdup(gram); /* a feedback naming a rule that does not exist */
    char *fb = strstr(g2, "#CloseObject.feedback#\";");
    memcpy(fb + 1, "CloseObjekt", 11);
    path = alf_write_game(dom, g2, prob, &tmp);
    s_expect_model_error(path, PV_ERR_DATA, "unknown grammar symbol '#CloseObjekt.feedback#'");
    unlink(path);
    free(g2);

    char *g3 = strdup(gram); /* broken JSON inside the grammar block */
    char *brace = strstr(g3, "\"intro\"");
    brace[0] = '{';
    path = alf_write_game(dom, g3, prob, &tmp);
    s_expect_model_error(path, PV_ERR_PARSE, "grammar JSON");
    unlink(path);
    free(g3);

    path = alf_write_game(dom, gram, prob, &tmp);
    FILE *fp = fopen(path, "w");
    fputs("{\"pddl_domain\": \"(define\"", fp);
    fclose(fp);
    s_expect_model_error(path, PV_ERR_DATA, "not a JSON game file");
    unlink(path);
    s_expect_model_error("/nonexistent/game.tw-pddl", PV_ERR_IO, "No such file");
    json_decref(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readme_transcript_old_era),
        cmocka_unit_test(test_readme_transcript_new_era),
        cmocka_unit_test(test_wording_and_rules),
        cmocka_unit_test(test_step_limit),
        cmocka_unit_test(test_textworld_test_game),
        cmocka_unit_test(test_save_restore_every_step),
        cmocka_unit_test(test_load_refuses_bad_bytes),
        cmocka_unit_test(test_malformed_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
