/* test_searchqa.c - the searchqa family: Search-R1's observation formats, action forms
 * (brackets and tags), exact-match reward, turn limit, candidates, expert, save/restore
 * round trips and refusal of bad states, malformed files naming file and line, and the
 * real 100-question HotpotQA sample when ../shared is present. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/env/env.h"
#include "common/env/searchqa.h"
#include "env_test_util.h"
#include "tests/support/pv_test.h"

static pv_env_model_t *s_model(const char *data, uint32_t top_k, uint32_t max_steps)
{
    pv_env_spec_t spec = {
        .name = "searchqa", .data_path = data, .seed = 9, .top_k = top_k, .max_steps = max_steps};
    return et_model_ok(&spec);
}

static char s_dir[256];

static void s_tmpdir(void)
{
    et_tmpdir(s_dir, sizeof s_dir, "searchqa");
}

static void s_rmdir(void)
{
    et_rmdir(s_dir);
}

#define CORPUS                                                                                     \
    "{\"id\": \"0\", \"contents\": \"\\\"Paul Walker\\\"\\nPaul Walker was an American actor "     \
    "born in Glendale.\"}\n"                                                                       \
    "{\"id\": \"1\", \"contents\": \"\\\"Glendale\\\"\\nGlendale is a city in Los Angeles "        \
    "County, California.\"}\n"                                                                     \
    "{\"id\": \"2\", \"contents\": \"\\\"Fast Five\\\"\\nFast Five is a 2011 film starring Paul "  \
    "Walker.\"}\n"                                                                                 \
    "{\"id\": \"3\", \"contents\": \"\\\"Vin Diesel\\\"\\nVin Diesel is an actor.\"}\n"
#define QUESTIONS                                                                                  \
    "{\"id\": \"q0\", \"question\": \"In which county was the star of Fast Five born?\", "         \
    "\"golden_answers\": [\"Los Angeles County\", \"LA County\"], "                                \
    "\"supporting_titles\": [\"Fast Five\", \"Paul Walker\", \"Glendale\"]}\n"                     \
    "{\"id\": \"q1\", \"question\": \"Is Vin Diesel an actor?\", \"golden_answers\": "             \
    "[\"yes\"]}\n"                                                                                 \
    "{\"id\": \"q2\", \"question\": \"Who starred in Fast Five?\", \"golden_answers\": \"Paul "    \
    "Walker\"}\n"                                                                                  \
    "{\"id\": \"q3\", \"question\": \"What year was Fast Five released?\", "                       \
    "\"golden_answers\": [\"2011\"]}\n"

/* Find the task whose question text is `q`. */
static pv_task_t s_find(pv_env_model_t *m, pv_env_t *e, const char *q)
{
    for (uint32_t split = 0; split < 2; split++)
        for (uint64_t t = 0; t < pv_env_model_n_tasks(m, split); t++) {
            pv_task_t task = {.split = split, .task_id = t};
            pv_step_result_t r;
            assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
            if (strcmp(pv_env_task_text(e), q) == 0)
                return task;
        }
    fail_msg("question '%s' not found", q);
    return (pv_task_t){0};
}

/* Is act among the admissible candidates of e's current state? */
static bool s_admissible(pv_env_t *e, const char *act)
{
    const char *const *acts;
    size_t na;
    assert_int_equal(pv_env_admissible(e, &acts, &na), PV_OK);
    for (size_t i = 0; i < na; i++)
        if (strcmp(acts[i], act) == 0)
            return true;
    return false;
}

/* Reference for the admissible expert, through the public API only: can `searches` more
 * admissible searches (each a step, the state restored with save/load after) and then an
 * admissible answer win from e's state? The first such plan in candidate order goes into
 * plan[0..]. Exhaustive: no pruning, no cache. */
static bool s_ref_dfs(pv_env_t *e, int searches, char plan[][512])
{
    const char *const *acts;
    size_t na;
    assert_int_equal(pv_env_admissible(e, &acts, &na), PV_OK);
    char(*copy)[512] = malloc(na * sizeof *copy);
    for (size_t i = 0; i < na; i++)
        snprintf(copy[i], sizeof copy[i], "%s", acts[i]);
    uint8_t st[16384];
    size_t len;
    assert_int_equal(pv_env_save(e, st, sizeof st, &len), PV_OK);
    bool found = false;
    for (size_t i = 0; i < na && !found; i++) {
        bool answer = strncmp(copy[i], "answer[", 7) == 0;
        if (answer != (searches == 0))
            continue;
        pv_step_result_t r;
        assert_int_equal(pv_env_step(e, copy[i], &r), PV_OK);
        found = answer ? r.won : !r.done && s_ref_dfs(e, searches - 1, plan + 1);
        pv_errmsg_t em;
        assert_int_equal(pv_env_load(e, st, len, &em), PV_OK);
        if (found)
            snprintf(plan[0], sizeof plan[0], "%s", copy[i]);
    }
    free(copy);
    return found;
}

/* Length (searches + the answer) of the shortest admissible winning plan with at most
 * max_searches searches, -1 when there is none. */
static int s_ref_len(pv_env_t *e, int max_searches)
{
    char plan[8][512];
    for (int d = 0; d <= max_searches; d++)
        if (s_ref_dfs(e, d, plan))
            return d + 1;
    return -1;
}

static void test_protocol_on_small_corpus(void **state)
{
    (void)state;
    s_tmpdir();
    et_write(s_dir, "tiny_corpus.jsonl", CORPUS);
    et_write(s_dir, "tiny_questions.jsonl", QUESTIONS);
    pv_env_model_t *m = s_model(s_dir, 2, 0);
    assert_int_equal(pv_env_model_kind(m), PV_ENV_SEARCHQA);
    assert_int_equal(pv_env_model_max_steps(m), 4);
    assert_int_equal(pv_env_model_n_tasks(m, 0) + pv_env_model_n_tasks(m, 1), 4);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    pv_task_t task = s_find(m, e, "In which county was the star of Fast Five born?");
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_string_equal(r.obs, "Question: In which county was the star of Fast Five born?");
    /* Search-R1's passage format, top-k = 2, the title keeps the corpus' quotes; "Paul
     * Walker" twice in a short passage beats once in the film's */
    assert_int_equal(pv_env_step(e, "search[Paul Walker]", &r), PV_OK);
    assert_true(r.admissible && !r.done);
    assert_string_equal(r.obs, "\n\n<information>Doc 1(Title: \"Paul Walker\") Paul Walker was "
                               "an American actor born in Glendale.\nDoc 2(Title: \"Fast Five\") "
                               "Fast Five is a 2011 film starring Paul Walker.</information>\n\n");
    /* the tag form of Search-R1 works too */
    assert_int_equal(pv_env_step(e, "<think>hmm</think> <search> Glendale </search>", &r), PV_OK);
    assert_true(r.admissible);
    assert_int_equal(strncmp(r.obs, "\n\n<information>Doc 1(Title: \"Glendale\") Glendale is", 51),
                     0);
    /* candidates: queries from the question and passages, answers from passages */
    const char *const *acts;
    size_t na;
    assert_int_equal(pv_env_admissible(e, &acts, &na), PV_OK);
    assert_true(na <= 64);
    bool q_fast = false, a_county = false, a_year = false;
    for (size_t i = 0; i < na; i++) {
        q_fast |= strcmp(acts[i], "search[Fast Five]") == 0;
        a_county |= strcmp(acts[i], "answer[Los Angeles County]") == 0;
        a_year |= strcmp(acts[i], "answer[2011]") == 0;
    }
    assert_true(q_fast && a_county && a_year);
    /* an invalid action: Search-R1's text, still a turn */
    assert_int_equal(pv_env_step(e, "I think it is LA", &r), PV_OK);
    assert_false(r.admissible);
    assert_string_equal(r.obs, pv_searchr1_invalid_obs);
    assert_int_equal(strncmp(r.obs, "\nMy previous action is invalid.", 31), 0);
    assert_int_equal(r.n_steps, 3);
    /* the answer is scored by exact match after normalisation, against any golden answer */
    assert_int_equal(pv_env_step(e, "answer[the  la county!]", &r), PV_OK);
    assert_true(r.done && r.won && r.reward == 1.0f);
    assert_string_equal(r.obs, "");
    assert_int_equal(pv_env_step(e, "answer[x]", &r), PV_ERR_STATE);
    /* a wrong answer ends the episode with 0 */
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_int_equal(pv_env_step(e, "<answer>Glendale</answer>", &r), PV_OK);
    assert_true(r.done && !r.won && r.reward == 0.0f);
    /* a response is cut after its first </search> (Search-R1's _postprocess_responses), so
     * the answer behind it is never read; an answer in full, article and case aside */
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_int_equal(pv_env_step(e, "<search>Paul</search> <answer>LA County</answer>", &r), PV_OK);
    assert_true(r.admissible && !r.done);
    assert_int_equal(strncmp(r.obs, "\n\n<information>", 15), 0);
    assert_int_equal(pv_env_step(e, "<think>so</think>\n<answer>\n The LA COUNTY\n</answer>", &r),
                     PV_OK);
    assert_true(r.done && r.won);
    /* four turns without an answer end it with 0 */
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    for (int i = 1; i <= 4; i++) {
        assert_int_equal(pv_env_step(e, "search[actor]", &r), PV_OK);
        assert_int_equal(r.done, i == 4);
    }
    assert_true(r.reward == 0.0f);
    /* yes/no candidates for a question starting with an auxiliary verb */
    task = s_find(m, e, "Is Vin Diesel an actor?");
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_int_equal(pv_env_admissible(e, &acts, &na), PV_OK);
    bool yes = false;
    for (size_t i = 0; i < na; i++)
        yes |= strcmp(acts[i], "answer[yes]") == 0;
    assert_true(yes);
    /* the expert plans over the admissible candidates: searching the question with top-k 2
     * brings "Glendale" (Los Angeles County) along, so one search and the answer */
    task = s_find(m, e, "In which county was the star of Fast Five born?");
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    char act[512];
    int plan = pv_env_expert_plan_len(e);
    assert_int_equal(plan, s_ref_len(e, 3));
    int steps = 0;
    while (!r.done) {
        assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
        assert_true(s_admissible(e, act));
        assert_int_equal(pv_env_step(e, act, &r), PV_OK);
        steps++;
    }
    assert_int_equal(steps, plan);
    assert_string_equal(act, "answer[Los Angeles County]");
    assert_true(r.won);
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
    s_rmdir();
}

/* Atom traces (env.h): goal atom 0 is the answer, made by a correct answer[...] and
 * depending on the searches that first retrieved a passage holding the (normalised) answer;
 * a search whose query is not in the question depends on the searches that first retrieved a
 * passage holding the query (the bridge). Here search[Paul Walker] (step 0) returns the Paul
 * Walker and Fast Five passages, neither with "los angeles county"; search[Glendale] (step
 * 1) returns the Glendale passage, which has it, and depends on step 0 (the Paul Walker
 * passage says "Glendale"); step 2 is invalid. The answer (step 3) depends on step 1 only.
 * "LA County", the other golden answer, is in no passage: no edge. A wrong answer makes no
 * atom. */
static void test_atom_trace(void **state)
{
    (void)state;
    s_tmpdir();
    et_write(s_dir, "tiny_corpus.jsonl", CORPUS);
    et_write(s_dir, "tiny_questions.jsonl", QUESTIONS);
    pv_env_model_t *m = s_model(s_dir, 2, 0);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    pv_task_t task = s_find(m, e, "In which county was the star of Fast Five born?");
    const char *answers[3] = {"answer[Los Angeles County]", "answer[LA County]",
                              "answer[Glendale]"};
    const int deps[3] = {1, -1, -1};
    for (int k = 0; k < 3; k++) {
        pv_step_result_t r;
        assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
        assert_null(r.trace);
        const char *cmds[3] = {"search[Paul Walker]", "search[Glendale]", "no action"};
        for (int t = 0; t < 3; t++) {
            assert_int_equal(pv_env_step(e, cmds[t], &r), PV_OK);
            assert_non_null(r.trace);
            assert_int_equal(r.trace->n_made, 0);
            assert_int_equal(r.trace->n_deps, t == 1);
            if (t == 1)
                assert_int_equal(r.trace->deps[0], 0); /* "glendale" came from step 0 */
        }
        assert_int_equal(pv_env_step(e, answers[k], &r), PV_OK);
        assert_int_equal(r.won, k < 2);
        assert_int_equal(r.trace->n_made, k < 2);
        assert_int_equal(r.trace->n_deps, deps[k] >= 0);
        if (deps[k] >= 0)
            assert_int_equal(r.trace->deps[0], deps[k]);
    }
    /* a repeated search retrieves nothing new: the answer depends on the first one; the
     * repeat's query is in the passages of steps 0 and 1, so it depends on both; a query in
     * the question's own words ("Fast Five", whose passage step 0 retrieved) depends on
     * nothing */
    {
        pv_step_result_t r;
        assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
        const char *cmds[4] = {"search[Paul Walker]", "search[Glendale]", "search[Glendale]",
                               "search[Fast Five]"};
        const unsigned n_want[4] = {0, 1, 2, 0};
        for (int t = 0; t < 4; t++) {
            assert_int_equal(pv_env_step(e, cmds[t], &r), PV_OK);
            assert_int_equal(r.trace->n_made, 0);
            assert_int_equal(r.trace->n_deps, n_want[t]);
            for (unsigned k = 0; k < n_want[t]; k++)
                assert_int_equal(r.trace->deps[k], k); /* steps 0 (and 1) */
        }
        assert_true(r.done); /* four turns */
        assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
        for (int t = 0; t < 3; t++)
            assert_int_equal(pv_env_step(e, cmds[t], &r), PV_OK);
        assert_int_equal(pv_env_step(e, "answer[Los Angeles County]", &r), PV_OK);
        assert_true(r.won);
        assert_int_equal(r.trace->n_deps, 1);
        assert_int_equal(r.trace->deps[0], 1);
    }
    char name[64];
    assert_int_equal(pv_env_atom_name(e, 0, name, sizeof name), PV_OK);
    assert_string_equal(name, "answer(Los Angeles County)");
    assert_int_equal(pv_env_atom_name(e, 1, name, sizeof name), PV_ERR_RANGE);
    /* after a load the searches before it are no step of this episode: no edge */
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_int_equal(pv_env_step(e, "search[Glendale]", &r), PV_OK);
    uint8_t buf[1 << 14];
    size_t len = 0;
    assert_int_equal(pv_env_save(e, buf, sizeof buf, &len), PV_OK);
    assert_int_equal(pv_env_step(e, "answer[Los Angeles County]", &r), PV_OK);
    assert_int_equal(r.trace->n_deps, 1);
    assert_int_equal(pv_env_load(e, buf, len, NULL), PV_OK);
    assert_int_equal(pv_env_step(e, "answer[Los Angeles County]", &r), PV_OK);
    assert_true(r.won && r.trace->n_made == 1 && r.trace->n_deps == 0);
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
    s_rmdir();
}

/* A model of the files in s_dir (top-k 1), an instance, and the task of question q reset
 * into *r. */
static pv_task_t s_start(pv_env_model_t **m, pv_env_t **e, const char *q, pv_step_result_t *r)
{
    *m = s_model(s_dir, 1, 0);
    *e = NULL;
    assert_int_equal(pv_env_new(*m, e), PV_OK);
    pv_task_t task = s_find(*m, *e, q);
    assert_int_equal(pv_env_reset(*e, &task, r), PV_OK);
    return task;
}

/* The admissible expert on a scripted case (top-k 1): the film's passage names its star,
 * the star's names the town, so the shortest admissible plan is two searches and the
 * answer; it is the first such plan in candidate order (the reference's); every action is
 * admissible. A question whose answer no candidate offers ("actor" is lower case: no name)
 * falls back to the supporting-title expert, whose answer is not admissible. */
static void test_admissible_expert(void **state)
{
    (void)state;
    s_tmpdir();
    et_write(s_dir, "chain_corpus.jsonl",
             "{\"id\": \"0\", \"contents\": \"\\\"Zorblax\\\"\\nZorblax is a film starring "
             "Quentin Marlowe.\"}\n"
             "{\"id\": \"1\", \"contents\": \"\\\"Quentin Marlowe\\\"\\nQuentin Marlowe is an "
             "actor born in Vexford.\"}\n"
             "{\"id\": \"2\", \"contents\": \"\\\"Vexford\\\"\\nVexford is a town.\"}\n");
    et_write(s_dir, "chain_questions.jsonl",
             "{\"id\": \"c0\", \"question\": \"Where was the star of Zorblax born?\", "
             "\"golden_answers\": [\"Vexford\"], \"supporting_titles\": [\"Zorblax\", "
             "\"Quentin Marlowe\"]}\n"
             "{\"id\": \"c1\", \"question\": \"What is the job of Quentin Marlowe?\", "
             "\"golden_answers\": [\"actor\"], \"supporting_titles\": [\"Quentin Marlowe\"]}\n");
    pv_env_model_t *m;
    pv_env_t *e;
    pv_step_result_t r;
    pv_task_t task = s_start(&m, &e, "Where was the star of Zorblax born?", &r);
    char ref[8][512], act[512];
    assert_int_equal(s_ref_len(e, 3), 3);
    assert_true(s_ref_dfs(e, 2, ref));
    assert_string_equal(ref[1], "search[Quentin Marlowe]"); /* by hand: the only way on */
    assert_string_equal(ref[2], "answer[Vexford]");
    for (int i = 0; i < 3; i++) {
        assert_int_equal(pv_env_expert_plan_len(e), 3 - i);
        assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
        assert_string_equal(act, ref[i]);
        assert_true(s_admissible(e, act));
        assert_int_equal(pv_env_step(e, act, &r), PV_OK);
    }
    assert_true(r.done && r.won);
    /* off the plan (an invalid action first): it plans again from there, one turn fewer */
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_int_equal(pv_env_step(e, "hmm", &r), PV_OK);
    assert_int_equal(pv_env_expert_plan_len(e), 3);
    assert_int_equal(pv_env_step(e, "search[Zorblax]", &r), PV_OK);
    assert_int_equal(pv_env_expert_plan_len(e), 2);
    assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
    assert_string_equal(act, "search[Quentin Marlowe]");
    /* too few turns left for two searches: no admissible plan, the title expert answers */
    assert_int_equal(pv_env_step(e, "hmm", &r), PV_OK);
    assert_int_equal(pv_env_expert_plan_len(e), 1);
    assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
    assert_string_equal(act, "answer[Vexford]");
    assert_false(s_admissible(e, act));
    /* no candidate wins: the title expert (search the title, answer), not admissible */
    task = s_find(m, e, "What is the job of Quentin Marlowe?");
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_int_equal(s_ref_len(e, 3), -1);
    assert_int_equal(pv_env_expert_plan_len(e), 2);
    assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
    assert_string_equal(act, "search[Quentin Marlowe]");
    assert_int_equal(pv_env_step(e, act, &r), PV_OK);
    assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
    assert_string_equal(act, "answer[actor]");
    assert_false(s_admissible(e, act));
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
    s_rmdir();
}

static void test_malformed_files(void **state)
{
    (void)state;
    s_tmpdir();
    pv_env_spec_t spec = {.name = "searchqa", .data_path = s_dir};
    static const struct {
        const char *corpus, *questions, *where;
        pv_err_t want;
    } cases[] = {
        {CORPUS "{\"id\": \"4\"}\n", QUESTIONS, "tiny_corpus.jsonl:5: passage has no 'contents'",
         PV_ERR_DATA},
        {CORPUS "\n{\"id\": 5, \"contents\": }\n", QUESTIONS, "tiny_corpus.jsonl:6: column",
         PV_ERR_DATA},
        {CORPUS, QUESTIONS "{\"question\": \"q?\"}\n",
         "tiny_questions.jsonl:5: question has no 'golden_answers'", PV_ERR_DATA},
        {CORPUS, "{\"question\": \"q?\", \"golden_answers\": [1]}\n",
         "tiny_questions.jsonl:1: 'golden_answers' item 0 is not a string", PV_ERR_DATA},
        {CORPUS, "[1, 2]\n", "tiny_questions.jsonl:1: not a JSON object", PV_ERR_DATA},
        {"", QUESTIONS, "tiny_corpus.jsonl:0: the corpus has no passages", PV_ERR_DATA},
        /* wrong JSON types name file and line */
        {CORPUS, QUESTIONS "{\"question\": 5, \"golden_answers\": [\"x\"]}\n",
         "tiny_questions.jsonl:5: question has no 'question' string", PV_ERR_DATA},
        {CORPUS, "{\"question\": \"q?\", \"golden_answers\": 5}\n",
         "tiny_questions.jsonl:1: 'golden_answers' is not a list of strings", PV_ERR_DATA},
        {CORPUS,
         "\n{\"question\": \"q?\", \"golden_answers\": [\"a\"], \"supporting_titles\": "
         "\"Glendale\"}\n",
         "tiny_questions.jsonl:2: 'supporting_titles' is not a list of strings", PV_ERR_DATA},
        {CORPUS, "{\"id\": 1.5, \"question\": \"q?\", \"golden_answers\": [\"a\"]}\n",
         "tiny_questions.jsonl:1: question 'id' is neither a string nor an integer", PV_ERR_DATA},
        {"{\"id\": \"0\", \"contents\": [\"t\", \"x\"]}\n", QUESTIONS,
         "tiny_corpus.jsonl:1: passage has no 'contents' string", PV_ERR_DATA},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        et_write(s_dir, "tiny_corpus.jsonl", cases[i].corpus);
        et_write(s_dir, "tiny_questions.jsonl", cases[i].questions);
        pv_env_model_t *m = NULL;
        pv_errmsg_t em = {{0}};
        pv_err_t rc = pv_env_model_new(&spec, &m, &em);
        if (rc != cases[i].want || !strstr(em.text, cases[i].where))
            fail_msg("case %zu: got %s '%s'", i, pv_errname(rc), em.text);
        assert_null(m);
    }
    spec.data_path = "/nonexistent/pv_searchqa";
    pv_env_model_t *m = NULL;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_env_model_new(&spec, &m, &em), PV_ERR_IO);
    assert_non_null(strstr(em.text, "/nonexistent/pv_searchqa"));
    spec.data_path = NULL;
    spec.top_k = 99;
    assert_int_equal(pv_env_model_new(&spec, &m, &em), PV_ERR_INVAL);
    s_rmdir();
}

/* A question longer than the wire's task_text (a 72 KB one once killed every actor that
 * drew it) and a passage too long for an observation are skipped, counted and reported;
 * the rest loads. */
static void test_long_items_are_skipped(void **state)
{
    (void)state;
    s_tmpdir();
    char head[1024];
    snprintf(head, sizeof head, "%s{\"question\": \"", QUESTIONS);
    char *q = et_padded(head, 'x', 72 * 1024, "?\", \"golden_answers\": [\"y\"]}\n");
    snprintf(head, sizeof head, "%s\n{\"id\": \"9\", \"contents\": \"\\\"Long\\\"\\n", CORPUS);
    char *c = et_padded(head, 'z', 72 * 1024, "\"}\n");
    et_write(s_dir, "tiny_corpus.jsonl", c);
    et_write(s_dir, "tiny_questions.jsonl", q);
    pv_env_info_t info;
    pv_env_model_t *m = et_load_ok("searchqa", s_dir, &info);
    assert_int_equal(pv_env_model_n_tasks(m, 0) + pv_env_model_n_tasks(m, 1), 4);
    assert_int_equal(info.n_skipped, 2);
    char want[512];
    snprintf(want, sizeof want, "searchqa: 4 passages, 4 questions (%llu train, %llu test) from %s",
             (unsigned long long)pv_env_model_n_tasks(m, 0),
             (unsigned long long)pv_env_model_n_tasks(m, 1), s_dir);
    assert_string_equal(info.summary, want);
    snprintf(
        want, sizeof want,
        "searchqa: skipped 1 passages longer than 65472 bytes (first: %s/tiny_corpus.jsonl:6, ",
        s_dir);
    assert_non_null(strstr(info.warnings, want));
    snprintf(want, sizeof want,
             "searchqa: skipped 1 questions longer than 65536 bytes (first: "
             "%s/tiny_questions.jsonl:5, ",
             s_dir);
    assert_non_null(strstr(info.warnings, want));
    pv_env_model_destroy(&m);
    free(q);
    free(c);
    s_rmdir();
}

static void test_generated_corpus(void **state)
{
    (void)state;
    pv_env_model_t *m = s_model(NULL, 0, 0);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    uint64_t total = 0;
    for (uint32_t split = 0; split < 2; split++) {
        uint64_t n = pv_env_model_n_tasks(m, split);
        assert_true(n >= 10);
        for (uint64_t t = 0; t < n; t++, total++) {
            pv_task_t task = {.split = split, .task_id = t};
            pv_step_result_t r;
            assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
            char first[1024];
            snprintf(first, sizeof first, "search[%s]", pv_env_task_text(e));
            int plan = pv_env_expert_plan_len(e);
            assert_int_equal(plan, s_ref_len(e, 3)); /* the shortest admissible plan */
            assert_true(plan == 2 || plan == 3);     /* one or two searches, then the answer */
            int steps = 0;
            while (!r.done) {
                char act[512];
                assert_int_equal(pv_env_expert_plan_len(e), plan - steps);
                assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
                assert_true(s_admissible(e, act)); /* a demonstration for cloning */
                assert_int_equal(pv_env_step(e, act, &r), PV_OK);
                steps++;
            }
            assert_int_equal(steps, plan);
            assert_true(r.won);
            /* from a state the expert did not choose (the question searched): still the
             * shortest admissible plan */
            assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
            assert_int_equal(pv_env_step(e, first, &r), PV_OK);
            assert_int_equal(pv_env_expert_plan_len(e), s_ref_len(e, 2));
        }
    }
    assert_true(total >= 100);
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
}

static void test_save_restore(void **state)
{
    (void)state;
    pv_env_model_t *m = s_model(NULL, 0, 6), *m2 = s_model(NULL, 0, 6);
    pv_env_model_t *other = s_model(NULL, 5, 6); /* other top-k: another model */
    pv_env_t *a = NULL, *b = NULL, *o = NULL;
    assert_int_equal(pv_env_new(m, &a), PV_OK);
    assert_int_equal(pv_env_new(m2, &b), PV_OK);
    assert_int_equal(pv_env_new(other, &o), PV_OK);
    for (uint64_t t = 0; t < 16; t++) {
        pv_task_t task = {.split = t % 2, .task_id = t};
        et_traj_t tr;
        et_play(a, m, &task, 40 + t, 0.3, &tr);
        et_check_replay(b, m2, &tr);
        et_check_truncations(b, tr.state[tr.n - 1], tr.state_len[tr.n - 1]);
        et_check_mutations(b, m2, tr.state[tr.n / 2], tr.state_len[tr.n / 2], t, 300);
        pv_errmsg_t em = {{0}};
        assert_int_equal(pv_env_load(o, tr.state[0], tr.state_len[0], &em), PV_ERR_INVAL);
        et_free(&tr);
    }
    pv_env_destroy(&a);
    pv_env_destroy(&b);
    pv_env_destroy(&o);
    pv_env_model_destroy(&m);
    pv_env_model_destroy(&m2);
    pv_env_model_destroy(&other);
}

static void test_load_rejects_bad_states(void **state)
{
    (void)state;
    pv_env_model_t *m = s_model(NULL, 0, 0);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    pv_task_t task = {.split = 0, .task_id = 2};
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    char act[512];
    assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
    assert_int_equal(pv_env_step(e, act, &r), PV_OK);
    uint8_t buf[8192];
    size_t len;
    assert_int_equal(pv_env_save(e, buf, sizeof buf, &len), PV_OK);
    assert_true(len <= pv_env_state_max(m));
    /* offsets after env.c's 12-byte header: version 12, fingerprint 16, split 24, task 28,
     * seed 36, question 44, turns 48, done 52, won 53, last 54, reward 55, last_n 59,
     * n_retrieved 63, ids from 67 */
    static const struct {
        size_t at;
        uint8_t val;
        pv_err_t want;
    } bad[] = {
        {12, 2, PV_ERR_VERSION},     {16, 0x5a, PV_ERR_INVAL}, {24, 3, PV_ERR_DATA},
        {44, 0x77, PV_ERR_DATA},     {48, 99, PV_ERR_DATA},    {53, 1, PV_ERR_DATA},
        {54, 7, PV_ERR_DATA},        {56, 0x40, PV_ERR_DATA},  {59, 9, PV_ERR_DATA},
        {63, 200, PV_ERR_TRUNCATED}, {69, 0x7f, PV_ERR_DATA},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t copy[8192];
        memcpy(copy, buf, len);
        copy[bad[i].at] ^= bad[i].val;
        pv_errmsg_t em = {{0}};
        pv_err_t rc = pv_env_load(e, copy, len, &em);
        if (rc != bad[i].want)
            fail_msg("byte %zu: got %s '%s', want %s", bad[i].at, pv_errname(rc), em.text,
                     pv_errname(bad[i].want));
        assert_true(strlen(em.text) > 0);
    }
    /* every turn taken but not over: a step from it would take one turn more than the
     * model allows (and a search retrieve past retrieved[]); the expert would plan with
     * max_turns - n_turns - 1 = UINT32_MAX turns left */
    {
        uint8_t copy[8192];
        memcpy(copy, buf, len);
        uint32_t turns = pv_env_model_max_steps(m);
        for (int k = 0; k < 4; k++)
            copy[48 + k] = (uint8_t)(turns >> (8 * k));
        pv_errmsg_t em = {{0}};
        pv_err_t rc = pv_env_load(e, copy, len, &em);
        if (rc != PV_ERR_DATA)
            fail_msg("all %u turns taken, not done: got %s '%s', want PV_ERR_DATA", turns,
                     pv_errname(rc), em.text);
    }
    /* the instance kept its state: the expert still wins from here */
    while (!r.done) {
        assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
        assert_int_equal(pv_env_step(e, act, &r), PV_OK);
    }
    assert_true(r.won);
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
}

/* Answers, invalid actions, candidate lists, save and load allocate nothing. */
static void test_steps_allocate_nothing(void **state)
{
    (void)state;
#ifndef PV_COUNT_ALLOC
    skip();
#else
    pv_env_model_t *m = s_model(NULL, 0, 0);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    assert_true(et_allocs > 0); /* the counter works: building the model allocated */
    pv_task_t task = {.split = 0, .task_id = 3};
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_int_equal(pv_env_step(e, "search[company founded]", &r), PV_OK);
    uint8_t buf[8192];
    size_t len;
    assert_int_equal(pv_env_save(e, buf, sizeof buf, &len), PV_OK);
    size_t before = et_allocs;
    pv_errmsg_t em;
    for (int round = 0; round < 50; round++) {
        assert_int_equal(pv_env_load(e, buf, len, &em), PV_OK);
        const char *const *acts;
        size_t na;
        assert_int_equal(pv_env_admissible(e, &acts, &na), PV_OK);
        assert_int_equal(pv_env_step(e, round % 2 ? "what?" : acts[na - 1], &r), PV_OK);
        assert_int_equal(pv_env_admissible(e, &acts, &na), PV_OK);
    }
    assert_int_equal(et_allocs, before);
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
#endif
}

/* Is answer[text] among e's candidates? */
static bool s_offers(pv_env_t *e, const char *text)
{
    char act[256];
    snprintf(act, sizeof act, "answer[%s]", text);
    return s_admissible(e, act);
}

/* Answer candidates from a passage (searchqa.h "Admissible actions"): an initial stays in
 * its name, a possessive and curly quotes are cut off, a date is offered whole (with a
 * year, not its shorter forms; its day and month not alone), sentence words ("Having",
 * "Because") and the leading "the" of a part of an "and" span are no names. */
static void test_candidate_extraction(void **state)
{
    (void)state;
    s_tmpdir();
    et_write(s_dir, "names_corpus.jsonl",
             "{\"id\": \"0\", \"contents\": \"\\\"Wide Awake\\\"\\nWide Awake is a film by M. "
             "Night Shyamalan, released on 20 March 1998. Having seen Carr's review, "
             "the \xe2\x80\x9cScat\xe2\x80\x9d team of McNatt\xe2\x80\x99s sang on March 26, 1986. "
             "Because of it the Oklahoma Sooners and the AAU Phillips played 22 November.\"}\n");
    et_write(s_dir, "names_questions.jsonl",
             "{\"id\": \"n0\", \"question\": \"Who directed Wide Awake?\", "
             "\"golden_answers\": [\"M. Night Shyamalan\"]}\n");
    pv_env_model_t *m;
    pv_env_t *e;
    pv_step_result_t r;
    pv_task_t task = s_start(&m, &e, "Who directed Wide Awake?", &r);
    assert_int_equal(pv_env_step(e, "search[Wide Awake]", &r), PV_OK);
    static const char *const offered[] = {
        "M. Night Shyamalan", "20 March 1998",    "1998",         "Carr",       "Scat", "McNatt",
        "March 26, 1986",     "Oklahoma Sooners", "AAU Phillips", "22 November"};
    for (size_t i = 0; i < sizeof offered / sizeof offered[0]; i++)
        if (!s_offers(e, offered[i]))
            fail_msg("'%s' is not offered", offered[i]);
    static const char *const left_out[] = {"M",
                                           "Night Shyamalan",
                                           "20 March",
                                           "20",
                                           "March",
                                           "26",
                                           "March 26",
                                           "Carr's",
                                           "\xe2\x80\x9cScat\xe2\x80\x9d",
                                           "McNatt\xe2\x80\x99s",
                                           "Having",
                                           "Because",
                                           "the AAU Phillips",
                                           "November",
                                           "22"};
    for (size_t i = 0; i < sizeof left_out / sizeof left_out[0]; i++)
        if (s_offers(e, left_out[i]))
            fail_msg("'%s' is offered", left_out[i]);
    /* and the expert plans with the whole name */
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_int_equal(pv_env_expert_plan_len(e), s_ref_len(e, 3));
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
    s_rmdir();
}

static void test_real_hotpotqa(void **state)
{
    (void)state;
    char dir[1024];
    if (!pv_test_shared("data/searchqa/hotpot100_corpus_searchr1_format.jsonl", dir, sizeof dir))
        skip();
    *strrchr(dir, '/') = '\0';
    pv_env_model_t *m = s_model(dir, 0, 0);
    assert_int_equal(pv_env_model_n_tasks(m, 0) + pv_env_model_n_tasks(m, 1), 100);
    pv_env_t *e = NULL, *b = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    assert_int_equal(pv_env_new(m, &b), PV_OK);
    int won = 0, n = 0, by_len[2][5] = {{0}}; /* admissible wins by plan length, per split */
    for (uint32_t split = 0; split < 2; split++)
        for (uint64_t t = 0; t < pv_env_model_n_tasks(m, split); t++, n++) {
            pv_task_t task = {.split = split, .task_id = t};
            pv_step_result_t r;
            assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
            assert_int_equal(strncmp(r.obs, "Question: ", 10), 0);
            int plan = pv_env_expert_plan_len(e), steps = 0;
            bool admissible = true;
            while (!r.done) {
                char act[2048];
                assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
                admissible = admissible && s_admissible(e, act);
                steps++;
                assert_int_equal(pv_env_step(e, act, &r), PV_OK);
                if (strncmp(act, "search[", 7) == 0) /* Search-R1 passage format */
                    assert_int_equal(strncmp(r.obs, "\n\n<information>Doc 1(Title: \"", 29), 0);
            }
            won += r.won;
            if (admissible) {
                assert_int_equal(steps, plan);
                by_len[split][plan]++;
            }
            if (t % 10 == 0) {
                et_traj_t tr;
                et_play(e, m, &task, t, 0.5, &tr);
                et_check_replay(b, m, &tr);
                et_free(&tr);
            }
        }
    assert_int_equal(won, n);
    /* the admissible plans by length (answer only, 1, 2, 3 searches): the counts an
     * independent exhaustive search over the admissible actions (save/load, every query)
     * found on this sample, 59 of 80 training and 15 of 20 test questions (58 and 14 before
     * initials stayed in names and a date's shorter forms, its bare day and month, sentence
     * words and possessives left the candidates, 2026-12-03) */
    static const int want[2][5] = {{0, 4, 37, 13, 5}, {0, 1, 13, 1, 0}};
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 5; k++)
            if (by_len[s][k] != want[s][k])
                fail_msg("split %d: %d admissible plans of %d actions, want %d", s, by_len[s][k], k,
                         want[s][k]);
    pv_env_destroy(&e);
    pv_env_destroy(&b);
    pv_env_model_destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_protocol_on_small_corpus),
        cmocka_unit_test(test_atom_trace),
        cmocka_unit_test(test_admissible_expert),
        cmocka_unit_test(test_malformed_files),
        cmocka_unit_test(test_long_items_are_skipped),
        cmocka_unit_test(test_generated_corpus),
        cmocka_unit_test(test_save_restore),
        cmocka_unit_test(test_load_rejects_bad_states),
        cmocka_unit_test(test_steps_allocate_nothing),
        cmocka_unit_test(test_candidate_extraction),
        cmocka_unit_test(test_real_hotpotqa),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
