/* test_llm_label.c - TRIAGE's labels through the LLM judge without a network
 * (judge/llm_label.h): the prompt shows every turn of every trajectory, the schema, and the
 * validator on good answers, malformed replies, wrong role counts, unknown role names, bad
 * trajectory ids and duplicates, each turn's label checked against the answer given. The
 * group is llm_fixture.h's (trajectories of 6, 7, 6 and 20 turns). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "judge/llm_label.h"
#include "llm_fixture.h"

static const char *const s_names[] = {"decisive", "exploration", "no_progress", "regression"};

static pv_llm_ctx_t s_ctx(fx_group_t *g)
{
    fx_build(g);
    pv_llm_ctx_t ctx;
    pv_llm_limits_t lim = pv_llm_limits_default();
    assert_int_equal(pv_llm_label_ctx_init(&ctx, 41, "put a clean mug in coffeemachine.", g->trajs,
                                           FX_N, &lim, NULL),
                     PV_OK);
    return ctx;
}

/* An answer labelling turn t of trajectory i with role (i + t + shift) % 4, as JSON text
 * (malloc'd); trajectory `short_traj` (or none: -1) gets one role fewer. */
static char *s_answer(const fx_group_t *g, int shift, int short_traj)
{
    json_t *list = json_array();
    for (size_t i = 0; i < FX_N; i++) {
        json_t *roles = json_array();
        size_t n = g->trajs[i].n_steps - ((int)i == short_traj ? 1 : 0);
        for (size_t t = 0; t < n; t++)
            json_array_append_new(roles, json_string(s_names[(i + t + (size_t)shift) % 4]));
        json_array_append_new(list,
                              json_pack("{s:I, s:o}", "traj_id", (json_int_t)i, "roles", roles));
    }
    json_t *a = json_pack("{s:o}", "trajectories", list);
    char *text = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return text;
}

static pv_llm_refusal_t s_check(const pv_llm_ctx_t *ctx, const char *text, uint8_t *roles,
                                pv_llm_label_counts_t *c, char *why)
{
    return pv_llm_label_check(ctx, text, strlen(text), roles, c, why, 512);
}

static void test_prompt_shows_every_turn(void **state)
{
    (void)state;
    fx_group_t g;
    pv_llm_ctx_t ctx = s_ctx(&g);
    assert_int_equal(pv_llm_label_turns(&ctx), 6 + 7 + 6 + 20);
    pv_llm_buf_t sys, user;
    pv_llm_buf_init(&sys, 16u << 10);
    pv_llm_buf_init(&user, ctx.lim.max_prompt_bytes);
    pv_llm_label_system(&sys);
    assert_int_equal(pv_llm_label_user(&ctx, &user), PV_OK);
    for (int r = 0; r < 4; r++)
        assert_non_null(strstr(sys.data, s_names[r]));
    assert_non_null(strstr(sys.data, "\"trajectories\""));
    assert_non_null(strstr(user.data, "Group 41. Task: put a clean mug in coffeemachine."));
    assert_non_null(strstr(user.data, "trajectory 0 (failed, 6 turns):"));
    assert_non_null(strstr(user.data, "trajectory 1 (success, 7 turns):"));
    assert_non_null(strstr(user.data, "trajectory 2 (success, 6 turns):"));
    assert_non_null(strstr(user.data, "trajectory 3 (failed, 20 turns):"));
    /* every turn of every trajectory, with its answer; refused ones marked */
    assert_non_null(strstr(user.data, "turn 2 [refused]: examine sinkbasin 9 -> Nothing happens."));
    assert_non_null(strstr(user.data, "turn 17: put mug 1 in/on coffeemachine 1 -> You put"));
    assert_non_null(strstr(user.data, "turn 9 [refused]: fly to the moon"));
    size_t lines = 0;
    for (const char *p = user.data; (p = strstr(p, "\nturn ")) != NULL; p++)
        lines++;
    assert_int_equal(lines, pv_llm_label_turns(&ctx));
    pv_llm_buf_free(&sys);
    pv_llm_buf_free(&user);
    /* a tight bound cuts the observations; too tight a bound is an error, never a cut prompt */
    ctx.lim.max_prompt_bytes = 5000;
    pv_llm_buf_init(&user, ctx.lim.max_prompt_bytes);
    assert_int_equal(pv_llm_label_user(&ctx, &user), PV_OK);
    assert_true(user.len <= 5000);
    assert_non_null(strstr(user.data, "turn 17: put mug 1 in/on coffeemachine 1"));
    pv_llm_buf_free(&user);
    ctx.lim.max_prompt_bytes = 1024;
    pv_llm_buf_init(&user, ctx.lim.max_prompt_bytes);
    assert_int_equal(pv_llm_label_user(&ctx, &user), PV_ERR_LIMIT);
    pv_llm_buf_free(&user);
}

static void test_ctx_errors(void **state)
{
    (void)state;
    fx_group_t g;
    fx_build(&g);
    pv_llm_limits_t lim = pv_llm_limits_default();
    pv_llm_ctx_t ctx;
    /* all failures or all successes are labelled too (no contrast needed) */
    assert_int_equal(pv_llm_label_ctx_init(&ctx, 1, NULL, g.trajs, 1, &lim, NULL), PV_OK);
    assert_string_equal(ctx.task_text, "");
    pv_traj_t none = g.trajs[0];
    none.n_steps = 0;
    assert_int_equal(pv_llm_label_ctx_init(&ctx, 1, NULL, &none, 1, &lim, NULL), PV_ERR_NOTFOUND);
    g.texts[1][3] = NULL;
    assert_int_equal(pv_llm_label_ctx_init(&ctx, 1, NULL, g.trajs, FX_N, &lim, NULL), PV_ERR_INVAL);
    assert_int_equal(pv_llm_label_ctx_init(&ctx, 1, NULL, NULL, 0, &lim, NULL), PV_ERR_INVAL);
}

static void test_valid_answer(void **state)
{
    (void)state;
    fx_group_t g;
    pv_llm_ctx_t ctx = s_ctx(&g);
    uint8_t roles[64];
    pv_llm_label_counts_t c;
    char why[512];
    char *text = s_answer(&g, 1, -1);
    assert_int_equal(s_check(&ctx, text, roles, &c, why), PV_LLM_REFUSAL_OK);
    free(text);
    assert_int_equal(c.labelled, 39);
    assert_int_equal(c.unlabelled, 0);
    assert_int_equal(c.bad_trajs, 0);
    assert_int_equal(c.bad_roles, 0);
    for (size_t i = 0, k = 0; i < FX_N; i++)
        for (size_t t = 0; t < g.trajs[i].n_steps; t++, k++)
            assert_int_equal(roles[k], (i + t + 1) % 4);
    /* a ``` fence, case, spellings, extra fields and entries in any order */
    const char *loose =
        "```json\n{\"trajectories\": [{\"traj_id\": 2.0, \"roles\": [\"Decisive\", "
        "\"NO-PROGRESS\", \"no progress\", \" regression \", \"exploration\", \"decisive\"], "
        "\"why\": \"...\"}]}\n```";
    assert_int_equal(s_check(&ctx, loose, roles, &c, why), PV_LLM_REFUSAL_OK);
    assert_int_equal(c.labelled, 6);
    assert_int_equal(c.unlabelled, 33);
    assert_int_equal(c.bad_trajs, 3); /* 0, 1 and 3 have no entry */
    const uint8_t want2[] = {PV_TRIAGE_DECISIVE,   PV_TRIAGE_NO_PROGRESS, PV_TRIAGE_NO_PROGRESS,
                             PV_TRIAGE_REGRESSION, PV_TRIAGE_EXPLORATION, PV_TRIAGE_DECISIVE};
    assert_memory_equal(roles + 13, want2, 6);
    for (size_t k = 0; k < 13; k++)
        assert_int_equal(roles[k], PV_LLM_ROLE_NONE);
    for (size_t k = 19; k < 39; k++)
        assert_int_equal(roles[k], PV_LLM_ROLE_NONE);
}

static void test_malformed_replies(void **state)
{
    (void)state;
    fx_group_t g;
    pv_llm_ctx_t ctx = s_ctx(&g);
    uint8_t roles[64];
    pv_llm_label_counts_t c;
    char why[512];
    const struct {
        const char *text;
        pv_llm_refusal_t want;
    } cases[] = {
        {"Sure! Turn 0 is decisive.", PV_LLM_REFUSAL_NOT_JSON},
        {"[{\"traj_id\": 0, \"roles\": []}]", PV_LLM_REFUSAL_NOT_JSON},
        {"{\"trajectories\": [{\"traj_id\": 0", PV_LLM_REFUSAL_NOT_JSON},
        {"{\"labels\": []}", PV_LLM_REFUSAL_MISSING},
        {"{\"trajectories\": null}", PV_LLM_REFUSAL_MISSING},
        {"{\"trajectories\": {\"0\": [\"decisive\"]}}", PV_LLM_REFUSAL_TYPE},
        {"{\"trajectories\": []}", PV_LLM_REFUSAL_LABELS},
        {"{\"trajectories\": [1, \"x\", null]}", PV_LLM_REFUSAL_LABELS},
        {"", PV_LLM_REFUSAL_NOT_JSON},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memset(roles, 7, sizeof roles);
        pv_llm_refusal_t r = s_check(&ctx, cases[k].text, roles, &c, why);
        if (r != cases[k].want)
            fail_msg("case %zu: %s, want %s (%s)", k, pv_llm_refusal_name(r),
                     pv_llm_refusal_name(cases[k].want), why);
        /* the repair message starts with the reason's text; nothing is labelled */
        assert_memory_equal(why, pv_llm_refusal_text(r), strlen(pv_llm_refusal_text(r)));
        assert_int_equal(c.labelled, 0);
        assert_int_equal(c.unlabelled, 39);
        for (size_t i = 0; i < 39; i++)
            assert_int_equal(roles[i], PV_LLM_ROLE_NONE);
    }
}

static void test_wrong_counts(void **state)
{
    (void)state;
    fx_group_t g;
    pv_llm_ctx_t ctx = s_ctx(&g);
    uint8_t roles[64];
    pv_llm_label_counts_t c;
    char why[512];
    /* trajectory 3 one role short: its 20 turns get none, the others theirs */
    char *text = s_answer(&g, 0, 3);
    assert_int_equal(s_check(&ctx, text, roles, &c, why), PV_LLM_REFUSAL_OK);
    free(text);
    assert_int_equal(c.labelled, 19);
    assert_int_equal(c.unlabelled, 20);
    assert_int_equal(c.bad_trajs, 1);
    for (size_t k = 0; k < 19; k++)
        assert_int_not_equal(roles[k], PV_LLM_ROLE_NONE);
    for (size_t k = 19; k < 39; k++)
        assert_int_equal(roles[k], PV_LLM_ROLE_NONE);
    /* one role too many for trajectory 0 (6 turns): none of its turns */
    const char *longer = "{\"trajectories\": [{\"traj_id\": 0, \"roles\": [\"decisive\", "
                         "\"decisive\", \"decisive\", \"decisive\", \"decisive\", \"decisive\", "
                         "\"decisive\"]}, {\"traj_id\": 2, \"roles\": [\"exploration\", "
                         "\"exploration\", \"exploration\", \"exploration\", \"exploration\", "
                         "\"regression\"]}]}";
    assert_int_equal(s_check(&ctx, longer, roles, &c, why), PV_LLM_REFUSAL_OK);
    assert_int_equal(c.labelled, 6);
    assert_int_equal(roles[0], PV_LLM_ROLE_NONE);
    assert_int_equal(roles[13], PV_TRIAGE_EXPLORATION);
    assert_int_equal(roles[18], PV_TRIAGE_REGRESSION);
    /* every entry miscounted: nothing usable, refused */
    const char *all_short = "{\"trajectories\": [{\"traj_id\": 1, \"roles\": [\"decisive\"]}]}";
    assert_int_equal(s_check(&ctx, all_short, roles, &c, why), PV_LLM_REFUSAL_LABELS);
}

static void test_unknown_roles_and_ids(void **state)
{
    (void)state;
    fx_group_t g;
    pv_llm_ctx_t ctx = s_ctx(&g);
    uint8_t roles[64];
    pv_llm_label_counts_t c;
    char why[512];
    /* trajectory 0: turn 1 "pivotal", turn 3 a number, turn 4 null; an entry for trajectory
     * 9 (none such), one with traj_id -1, one with a string id, and trajectory 2 twice (the
     * first counts) */
    const char *text =
        "{\"trajectories\": ["
        "{\"traj_id\": 0, \"roles\": [\"decisive\", \"pivotal\", \"exploration\", 3, null, "
        "\"no_progress\"]},"
        "{\"traj_id\": 9, \"roles\": [\"decisive\"]},"
        "{\"traj_id\": -1, \"roles\": [\"decisive\"]},"
        "{\"traj_id\": \"1\", \"roles\": [\"decisive\", \"decisive\", \"decisive\", \"decisive\", "
        "\"decisive\", \"decisive\", \"decisive\"]},"
        "{\"traj_id\": 2, \"roles\": [\"regression\", \"regression\", \"regression\", "
        "\"regression\", \"regression\", \"regression\"]},"
        "{\"traj_id\": 2, \"roles\": [\"decisive\", \"decisive\", \"decisive\", \"decisive\", "
        "\"decisive\", \"decisive\"]}]}";
    assert_int_equal(s_check(&ctx, text, roles, &c, why), PV_LLM_REFUSAL_OK);
    const uint8_t want0[] = {PV_TRIAGE_DECISIVE, PV_LLM_ROLE_NONE, PV_TRIAGE_EXPLORATION,
                             PV_LLM_ROLE_NONE,   PV_LLM_ROLE_NONE, PV_TRIAGE_NO_PROGRESS};
    assert_memory_equal(roles, want0, 6);
    for (size_t k = 6; k < 13; k++) /* trajectory 1: its only entry had a string id */
        assert_int_equal(roles[k], PV_LLM_ROLE_NONE);
    for (size_t k = 13; k < 19; k++)
        assert_int_equal(roles[k], PV_TRIAGE_REGRESSION);
    assert_int_equal(c.labelled, 3 + 6);
    assert_int_equal(c.unlabelled, 39 - 9);
    assert_int_equal(c.bad_roles, 3);
    assert_int_equal(c.bad_trajs, 2); /* 1 and 3 */
    /* every role unknown: refused */
    const char *unknown = "{\"trajectories\": [{\"traj_id\": 0, \"roles\": [\"pivotal\", \"a\", "
                          "\"b\", \"c\", \"d\", \"e\"]}]}";
    assert_int_equal(s_check(&ctx, unknown, roles, &c, why), PV_LLM_REFUSAL_LABELS);
    assert_int_equal(c.bad_roles, 6);
}

static void test_role_names(void **state)
{
    (void)state;
    for (int r = 0; r < 4; r++)
        assert_int_equal(pv_llm_role_parse(s_names[r]), r);
    assert_int_equal(pv_llm_role_parse("No Progress"), PV_TRIAGE_NO_PROGRESS);
    assert_int_equal(pv_llm_role_parse("  DECISIVE\n"), PV_TRIAGE_DECISIVE);
    assert_int_equal(pv_llm_role_parse("decisive!"), PV_LLM_ROLE_NONE);
    assert_int_equal(pv_llm_role_parse("decisively"), PV_LLM_ROLE_NONE);
    assert_int_equal(pv_llm_role_parse("no_progress_and_more_text"), PV_LLM_ROLE_NONE);
    assert_int_equal(pv_llm_role_parse(""), PV_LLM_ROLE_NONE);
    assert_int_equal(pv_llm_role_parse(NULL), PV_LLM_ROLE_NONE);
}

static void test_schema_and_constraint(void **state)
{
    (void)state;
    fx_group_t g;
    pv_llm_ctx_t ctx = s_ctx(&g);
    json_t *req = json_object();
    assert_int_equal(pv_llm_label_constrain(&ctx, PV_LLM_FORMAT_JSON_SCHEMA, req), PV_OK);
    const json_t *js = json_object_get(json_object_get(req, "response_format"), "json_schema");
    assert_string_equal(json_string_value(json_object_get(js, "name")), "triage_roles");
    const json_t *item = json_object_get(
        json_object_get(json_object_get(json_object_get(js, "schema"), "properties"),
                        "trajectories"),
        "items");
    const json_t *props = json_object_get(item, "properties");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(props, "traj_id"), "maximum")), 3);
    const json_t *en =
        json_object_get(json_object_get(json_object_get(props, "roles"), "items"), "enum");
    assert_int_equal(json_array_size(en), 4);
    for (size_t r = 0; r < 4; r++)
        assert_string_equal(json_string_value(json_array_get(en, r)), s_names[r]);
    json_decref(req);
    req = json_object();
    assert_int_equal(pv_llm_label_constrain(&ctx, PV_LLM_FORMAT_GUIDED_JSON, req), PV_OK);
    assert_non_null(json_object_get(req, "guided_json"));
    assert_int_equal(pv_llm_label_constrain(&ctx, PV_LLM_FORMAT_NONE, req), PV_OK);
    assert_int_equal(json_object_size(req), 1);
    json_decref(req);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prompt_shows_every_turn),
        cmocka_unit_test(test_ctx_errors),
        cmocka_unit_test(test_valid_answer),
        cmocka_unit_test(test_malformed_replies),
        cmocka_unit_test(test_wrong_counts),
        cmocka_unit_test(test_unknown_roles_and_ids),
        cmocka_unit_test(test_role_names),
        cmocka_unit_test(test_schema_and_constraint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
