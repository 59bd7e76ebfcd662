/* test_webshop.c - the webshop family: WebShop's page texts and navigation rules, step
 * limit, expert, determinism, save/restore round trips and refusal of bad states (the atom
 * traces: test_webshop_trace.c), data files (malformed ones name file and line), and the real
 * WebShop data when ../shared is present (goal counts computed in Python from goal.py's rule: 6,910
 * synthetic goals of 415 products; 13 human goals). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/env/env.h"
#include "env_test_util.h"
#include "webshop_trace_util.h"
#include "tests/support/pv_test.h"

static bool s_has_action(pv_env_t *e, const char *a)
{
    const char *const *acts;
    size_t n;
    assert_int_equal(pv_env_admissible(e, &acts, &n), PV_OK);
    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++)
        if (strcmp(acts[i], a) == 0)
            return true;
    return false;
}

/* The n-th "[SEP]"-separated field of an observation. */
static void s_field(const char *obs, int n, char *out, size_t cap)
{
    const char *p = obs;
    for (int i = 0; i < n && p; i++) {
        p = strstr(p, " [SEP] ");
        if (p)
            p += 7;
    }
    assert_non_null(p);
    const char *end = strstr(p, " [SEP] ");
    size_t len = end ? (size_t)(end - p) : strlen(p);
    snprintf(out, cap, "%.*s", (int)len, p);
}

static void test_pages_and_navigation(void **state)
{
    (void)state;
    pv_env_model_t *m = wt_model(NULL, 3);
    assert_int_equal(pv_env_model_kind(m), PV_ENV_WEBSHOP);
    assert_int_equal(pv_env_model_max_steps(m), 15);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    pv_task_t task = {.split = PV_SPLIT_TRAIN, .task_id = 5};
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    char want[2048];
    snprintf(want, sizeof want, "WebShop [SEP] Instruction: [SEP] %s [SEP] Search",
             pv_env_task_text(e));
    assert_string_equal(r.obs, want);
    assert_non_null(strstr(pv_env_task_text(e), ", and price lower than "));
    /* the search page offers search candidates only, no click */
    const char *const *acts;
    size_t na;
    assert_int_equal(pv_env_admissible(e, &acts, &na), PV_OK);
    assert_true(na >= 1 && na <= 5); /* ws_search_queries: at most WS_QUERIES */
    for (size_t i = 0; i < na; i++)
        assert_int_equal(strncmp(acts[i], "search[", 7), 0);
    /* a click on the search page changes nothing but counts as a step */
    assert_int_equal(pv_env_step(e, "click[search]", &r), PV_OK);
    assert_false(r.admissible);
    assert_string_equal(r.obs, want);
    assert_int_equal(r.n_steps, 1);
    /* search: page 1 of at most 50 results, 10 per page, "< Prev" only from page 2 */
    assert_int_equal(pv_env_step(e, "search[Shampoo LIP balm speaker]", &r), PV_OK);
    assert_true(r.admissible);
    char f[512];
    s_field(r.obs, 2, f, sizeof f);
    assert_string_equal(f, "Back to Search");
    s_field(r.obs, 3, f, sizeof f);
    unsigned page, total;
    assert_int_equal(sscanf(f, "Page %u (Total results: %u)", &page, &total), 2);
    assert_int_equal(page, 1);
    assert_true(total > 20 && total <= 50);
    s_field(r.obs, 4, f, sizeof f);
    assert_string_equal(f, "Next >");
    assert_null(strstr(r.obs, "< Prev"));
    assert_true(s_has_action(e, "click[back to search]"));
    assert_true(s_has_action(e, "click[next >]"));
    assert_false(s_has_action(e, "click[< prev]"));
    char asin1[32];
    s_field(r.obs, 5, asin1, sizeof asin1);
    assert_int_equal(pv_env_admissible(e, &acts, &na), PV_OK);
    assert_int_equal(na, 2 + 10);
    assert_int_equal(pv_env_step(e, "click[next >]", &r), PV_OK);
    assert_non_null(strstr(r.obs, "Page 2 (Total results"));
    assert_non_null(strstr(r.obs, "[SEP] < Prev [SEP] Next >"));
    assert_null(strstr(r.obs, asin1)); /* page 2 shows other products */
    assert_int_equal(pv_env_step(e, "click[< prev]", &r), PV_OK);
    assert_non_null(strstr(r.obs, asin1));
    /* open the first product (its ASIN lower-cased), pick an option */
    char click[64];
    for (char *c = asin1; *c; c++)
        *c = (char)((*c >= 'A' && *c <= 'Z') ? *c + 32 : *c);
    snprintf(click, sizeof click, "click[%s]", asin1);
    assert_int_equal(pv_env_step(e, click, &r), PV_OK);
    assert_true(r.admissible);
    assert_non_null(strstr(r.obs, "[SEP] Back to Search [SEP] < Prev [SEP] "));
    assert_non_null(strstr(r.obs, "[SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now"));
    assert_non_null(strstr(r.obs, "[SEP] Price: $"));
    assert_non_null(strstr(r.obs, "[SEP] Rating: N.A."));
    assert_true(s_has_action(e, "click[buy now]"));
    assert_false(s_has_action(e, "click[next >]"));
    assert_int_equal(pv_env_step(e, "CLICK[buy now]", &r), PV_OK); /* names are lower-case */
    assert_false(r.admissible);
    assert_int_equal(pv_env_step(e, "click[Features]", &r), PV_OK); /* arguments are not */
    assert_true(r.admissible);
    assert_non_null(strstr(r.obs, "< Prev [SEP] "));
    assert_null(strstr(r.obs, "Buy Now"));
    assert_int_equal(pv_env_step(e, "click[< prev]", &r), PV_OK);
    assert_non_null(strstr(r.obs, "Buy Now"));
    assert_int_equal(pv_env_step(e, "click[< prev]", &r), PV_OK);
    assert_non_null(strstr(r.obs, "Page 1 (Total results"));
    assert_int_equal(pv_env_step(e, "click[back to search]", &r), PV_OK);
    assert_string_equal(r.obs, want);
    assert_int_equal(r.n_steps, 10);
    assert_false(r.done);
    pv_env_destroy(&e);
    assert_null(e);
    pv_env_model_destroy(&m);
    assert_null(m);
}

static void test_step_limit_and_errors(void **state)
{
    (void)state;
    pv_env_model_t *m = wt_model("", 3);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    pv_step_result_t r;
    char act[256];
    assert_int_equal(pv_env_step(e, "search[x]", &r), PV_ERR_STATE);
    assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_ERR_STATE);
    pv_task_t bad = {.split = PV_SPLIT_TEST, .task_id = pv_env_model_n_tasks(m, PV_SPLIT_TEST)};
    assert_int_equal(pv_env_reset(e, &bad, &r), PV_ERR_RANGE);
    pv_task_t task = {.split = PV_SPLIT_TEST, .task_id = 0};
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    for (int i = 1; i <= 15; i++) {
        assert_int_equal(pv_env_step(e, i % 2 ? "hello" : "search[]", &r), PV_OK);
        assert_false(r.admissible);
        assert_int_equal(r.done, i == 15);
    }
    assert_true(r.reward == 0.0f && !r.won);
    assert_int_equal(pv_env_step(e, "search[shoes]", &r), PV_ERR_STATE);
    assert_int_equal(pv_env_expert_plan_len(e), -1);
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
}

/* The expert wins every generated goal, and its plan length counts down to the end. */
static void test_expert_generated(void **state)
{
    (void)state;
    pv_env_model_t *m = wt_model(NULL, 11);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    for (uint32_t split = 0; split < 2; split++) {
        uint64_t n = pv_env_model_n_tasks(m, split);
        assert_true(n > 20);
        for (uint64_t t = 0; t < n; t++) {
            pv_task_t task = {.split = split, .task_id = t};
            pv_step_result_t r;
            assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
            int plan = pv_env_expert_plan_len(e), steps = 0;
            assert_true(plan >= 4);
            while (!r.done) {
                char act[512];
                assert_int_equal(pv_env_expert_plan_len(e), plan - steps);
                assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
                assert_int_equal(pv_env_step(e, act, &r), PV_OK);
                assert_true(r.admissible);
                steps++;
            }
            assert_int_equal(steps, plan);
            assert_true(r.won);
            assert_true(r.reward == 1.0f);
        }
    }
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
}

/* From a detour (another product's features page) the expert finds its way back. */
static void test_expert_recovers(void **state)
{
    (void)state;
    pv_env_model_t *m = wt_model(NULL, 11);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    pv_task_t task = {.split = 0, .task_id = 3};
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    char act[512];
    assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
    assert_int_equal(pv_env_step(e, act, &r), PV_OK); /* the expert's search */
    const char *const *acts;
    size_t na;
    assert_int_equal(pv_env_admissible(e, &acts, &na), PV_OK);
    char expert_click[512];
    assert_int_equal(pv_env_expert_action(e, expert_click, sizeof expert_click), PV_OK);
    const char *other = NULL; /* a product the expert would not open */
    for (size_t i = 0; i < na && !other; i++)
        if (strncmp(acts[i], "click[b0", 8) == 0 && strcmp(acts[i], expert_click) != 0)
            other = acts[i];
    assert_non_null(other);
    snprintf(act, sizeof act, "%s", other);
    assert_int_equal(pv_env_step(e, act, &r), PV_OK);
    assert_int_equal(pv_env_step(e, "click[features]", &r), PV_OK);
    int plan = pv_env_expert_plan_len(e);
    assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
    assert_string_equal(act, "click[< prev]");
    int steps = 0;
    while (!r.done) {
        assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
        assert_int_equal(pv_env_step(e, act, &r), PV_OK);
        steps++;
    }
    assert_int_equal(steps, plan);
    assert_true(r.won);
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
}

static void test_save_restore_round_trips(void **state)
{
    (void)state;
    pv_env_model_t *m = wt_model(NULL, 5);
    pv_env_model_t *m2 = wt_model(NULL, 5); /* an equal model built separately */
    pv_env_t *a = NULL, *b = NULL;
    assert_int_equal(pv_env_new(m, &a), PV_OK);
    assert_int_equal(pv_env_new(m2, &b), PV_OK);
    for (uint64_t t = 0; t < 12; t++) {
        pv_task_t task = {.split = t % 2, .task_id = t};
        et_traj_t tr;
        et_play(a, m, &task, 100 + t, t % 3 == 0 ? 0.9 : 0.4, &tr);
        assert_true(tr.n >= 1);
        et_check_replay(b, m2, &tr);
        et_check_truncations(b, tr.state[tr.n - 1], tr.state_len[tr.n - 1]);
        et_check_mutations(b, m2, tr.state[tr.n / 2], tr.state_len[tr.n / 2], t, 300);
        et_free(&tr);
    }
    pv_env_destroy(&a);
    pv_env_destroy(&b);
    pv_env_model_destroy(&m);
    pv_env_model_destroy(&m2);
}

static void test_load_rejects_bad_states(void **state)
{
    (void)state;
    pv_env_model_t *m = wt_model(NULL, 5), *other = wt_model(NULL, 6);
    pv_env_t *e = NULL, *eo = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    assert_int_equal(pv_env_new(other, &eo), PV_OK);
    pv_task_t task = {.split = 0, .task_id = 1};
    pv_step_result_t r;
    uint8_t buf[4096];
    size_t len;
    assert_int_equal(pv_env_save(e, buf, sizeof buf, &len), PV_ERR_STATE);
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    char act[512];
    assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
    assert_int_equal(pv_env_step(e, act, &r), PV_OK);
    assert_int_equal(pv_env_save(e, buf, 20, &len), PV_ERR_LIMIT);
    assert_int_equal(pv_env_save(e, buf, sizeof buf, &len), PV_OK);
    assert_true(len <= pv_env_state_max(m));
    pv_errmsg_t em = {{0}};
    /* another catalogue (other seed) refuses it */
    assert_int_equal(pv_env_load(eo, buf, len, &em), PV_ERR_INVAL);
    /* field corruptions: header version, payload version, product id, page, step count,
     * a result id, trailing bytes */
    struct {
        size_t at;
        uint8_t val;
        pv_err_t want;
    } bad[] = {
        {4, 9, PV_ERR_VERSION},                               /* env.c header version */
        {12, 7, PV_ERR_VERSION},                              /* payload version */
        {12 + 4 + 8, 5, PV_ERR_DATA},                         /* split 5 */
        {12 + 4 + 8 + 4 + 8 + 8 + 4, 200, PV_ERR_DATA},       /* 200 steps */
        {12 + 4 + 8 + 4 + 8 + 8 + 4 + 4 + 2, 9, PV_ERR_DATA}, /* page 9 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t copy[4096];
        memcpy(copy, buf, len);
        copy[bad[i].at] = bad[i].val;
        pv_errmsg_clear(&em);
        assert_int_equal(pv_env_load(e, copy, len, &em), bad[i].want);
        assert_true(strlen(em.text) > 0);
    }
    uint8_t copy[4096];
    memcpy(copy, buf, len);
    copy[len - 1] = 0xff; /* the last result id points past the catalogue */
    copy[len - 2] = 0xff;
    assert_int_equal(pv_env_load(e, copy, len, &em), PV_ERR_DATA);
    memcpy(copy, buf, len);
    copy[len] = 0;
    assert_int_equal(pv_env_load(e, copy, len + 1, &em), PV_ERR_DATA);
    /* after all that, the instance still has its state: the expert carries on and wins */
    while (!r.done) {
        assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
        assert_int_equal(pv_env_step(e, act, &r), PV_OK);
    }
    assert_true(r.won);
    /* and a good load brings the saved page back */
    assert_int_equal(pv_env_load(e, buf, len, &em), PV_OK);
    assert_int_equal(pv_env_step(e, "click[back to search]", &r), PV_OK);
    assert_true(r.admissible);
    pv_env_destroy(&e);
    pv_env_destroy(&eo);
    pv_env_model_destroy(&m);
    pv_env_model_destroy(&other);
}

/* Clicks, invalid actions, admissible lists, save and load allocate nothing. */
static void test_steps_allocate_nothing(void **state)
{
    (void)state;
#ifndef PV_COUNT_ALLOC
    skip();
#else
    pv_env_model_t *m = wt_model(NULL, 4);
    assert_true(et_allocs > 0); /* the counter works: building the model allocated */
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    pv_task_t task = {.split = 0, .task_id = 7};
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_int_equal(pv_env_step(e, "search[shampoo speaker hoodie]", &r), PV_OK);
    uint8_t buf[4096];
    size_t len;
    assert_int_equal(pv_env_save(e, buf, sizeof buf, &len), PV_OK);
    size_t before = et_allocs;
    pv_errmsg_t em;
    for (int round = 0; round < 20; round++) {
        assert_int_equal(pv_env_load(e, buf, len, &em), PV_OK);
        for (int k = 0; k < 6; k++) {
            const char *const *acts;
            size_t na;
            assert_int_equal(pv_env_admissible(e, &acts, &na), PV_OK);
            char act[256];
            snprintf(act, sizeof act, "%s", acts[(size_t)(round + k) % na]);
            if (strncmp(act, "search[", 7) == 0 || strcmp(act, "click[back to search]") == 0)
                snprintf(act, sizeof act, "click[features]");
            assert_int_equal(pv_env_step(e, act, &r), PV_OK);
            if (r.done)
                break;
        }
        size_t len2;
        assert_int_equal(pv_env_save(e, buf + 2048, 2048, &len2), PV_OK);
    }
    assert_int_equal(et_allocs, before);
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
#endif
}

/* ---- data files ---------------------------------------------------------------------------- */

static char s_dir[256];

static void s_tmpdir(void)
{
    et_tmpdir(s_dir, sizeof s_dir, "webshop");
}

static void s_rmdir(void)
{
    et_rmdir(s_dir);
}

#define P1                                                                                         \
    "{\"id\": \"B000000001\", \"contents\": \"red shoes\", \"product\": {\"asin\": "               \
    "\"B000000001\", "                                                                             \
    "\"name\": \"Red Shoes\", \"Title\": \"Red Shoes\", \"Description\": \"d\", "                  \
    "\"BulletPoints\": [\"b\"], \"Attributes\": [\"arch support\"], \"query\": \"shoes\", "        \
    "\"product_category\": \"A \\u203a B\", \"pricing\": [12.5], \"Price\": \"$12.5\", "           \
    "\"options\": {\"size\": [\"7\", \"8\", \"9\"], \"color\": [\"red\", \"blue\"]}}}\n"
#define P2                                                                                         \
    "{\"product\": {\"asin\": \"B000000002\", \"name\": \"Blue Hat\", \"pricing\": [5, 9], "       \
    "\"Attributes\": [\"wool\"], \"options\": {}}}\n"
#define G1                                                                                         \
    "{\n  \"B000000001\": {\"attributes\": [\"arch support\"],\n"                                  \
    "    \"instruction\": \"Find me shoes with arch support\",\n"                                  \
    "    \"instruction_attributes\": [\"arch support\"]},\n"                                       \
    "  \"B000000002\": {\"attributes\": [\"wool\"]}\n}\n"

static pv_err_t s_load_dir(pv_errmsg_t *em)
{
    pv_env_spec_t spec = {.name = "webshop", .data_path = s_dir};
    pv_env_model_t *m = NULL;
    pv_err_t rc = pv_env_model_new(&spec, &m, em);
    pv_env_model_destroy(&m);
    return rc;
}

static void s_expect(pv_err_t want, const char *where)
{
    pv_errmsg_t em = {{0}};
    pv_err_t rc = s_load_dir(&em);
    if (rc != want || !strstr(em.text, where))
        fail_msg("got %s '%s', want %s with '%s'", pv_errname(rc), em.text, pv_errname(want),
                 where);
}

static void test_small_catalogue(void **state)
{
    (void)state;
    s_tmpdir();
    et_write(s_dir, "products_small.jsonl", P1 "\n" P2);
    et_write(s_dir, "items_ins_v2_small.json", G1);
    pv_env_spec_t spec = {.name = "webshop", .data_path = s_dir};
    pv_env_model_t *m = NULL;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_env_model_new(&spec, &m, &em), PV_OK);
    /* get_synthetic_goals: 3 sizes x 2 colors = 6 goals for product 1, none for product 2 */
    assert_int_equal(pv_env_model_n_tasks(m, 0) + pv_env_model_n_tasks(m, 1), 6);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    pv_task_t task = {.split = pv_env_model_n_tasks(m, 0) ? 0 : 1, .task_id = 0};
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    /* option names sorted (color < size), itertools.product order, price limit: the larger
     * of two of the first four multiples of 10 above 12.5 */
    const char *t = pv_env_task_text(e);
    assert_int_equal(strncmp(t,
                             "Find me shoes with arch support with color: red, and size: 7, "
                             "and price lower than ",
                             83),
                     0);
    double limit = atof(t + 83);
    assert_true(limit == 30.0 || limit == 40.0 || limit == 50.0);
    int steps = 0;
    while (!r.done) {
        char act[256];
        assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
        assert_int_equal(pv_env_step(e, act, &r), PV_OK);
        steps++;
    }
    assert_int_equal(steps, 5); /* search, open, color, size, buy */
    assert_true(r.won);
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
    s_rmdir();
}

static void test_malformed_files(void **state)
{
    (void)state;
    s_tmpdir();
    s_expect(PV_ERR_IO, "no file named *products*.jsonl");
    et_write(s_dir, "products_small.jsonl", P1 "\n{\"product\": {\"asin\": 7}}\n");
    et_write(s_dir, "items_ins_v2_small.json", G1);
    s_expect(PV_ERR_DATA, "products_small.jsonl:3: product has no 'asin' string");
    et_write(s_dir, "products_small.jsonl", P1 P2 "{\"product\": {\"asin\": \"B3\",,}}\n");
    s_expect(PV_ERR_DATA, "products_small.jsonl:3: column");
    et_write(s_dir, "products_small.jsonl",
             P1 "{\"product\": {\"asin\": \"B3\", \"options\": [\"red\"]}}\n");
    s_expect(PV_ERR_DATA, "products_small.jsonl:2: product field 'options'");
    et_write(s_dir, "products_small.jsonl",
             "{\"product\": {\"asin\": \"B3\", \"pricing\": [\"$5\"]}}\n");
    s_expect(PV_ERR_DATA, "products_small.jsonl:1: product 'pricing' item 0");
    et_write(s_dir, "products_small.jsonl", P1 P2);
    et_write(s_dir, "items_ins_v2_small.json", "{\n \"B000000001\": {\"attributes\": [}\n}");
    s_expect(PV_ERR_DATA, "items_ins_v2_small.json:2:");
    et_write(s_dir, "items_ins_v2_small.json",
             "{\n\n \"B000000001\": {\"attributes\": [], \"instruction\": \"x\"}\n}");
    s_expect(PV_ERR_DATA, "items_ins_v2_small.json:3: goal 'B000000001' has an instruction "
                          "but no instruction_attributes");
    et_write(s_dir, "items_ins_v2_small.json", "{\"B000000001\": 5}");
    s_expect(PV_ERR_DATA, "items_ins_v2_small.json:1: goal 'B000000001' is not an object");
    /* wrong JSON types name file and line: a number for a name, a string for a list */
    et_write(s_dir, "items_ins_v2_small.json", G1);
    et_write(s_dir, "products_small.jsonl", P1 "{\"product\": {\"asin\": \"B3\", \"name\": 5}}\n");
    s_expect(PV_ERR_DATA, "products_small.jsonl:2: product field 'name' is not a string");
    et_write(s_dir, "products_small.jsonl",
             P1 "{\"product\": {\"asin\": \"B3\", \"Attributes\": \"wool\"}}\n");
    s_expect(PV_ERR_DATA, "products_small.jsonl:2: 'Attributes' is not a list of strings");
    et_write(s_dir, "products_small.jsonl",
             P1 "{\"product\": {\"asin\": \"B3\", \"options\": {\"size\": \"7\"}}}\n");
    s_expect(PV_ERR_DATA, "products_small.jsonl:2: 'size' is not a list of strings");
    et_write(s_dir, "products_small.jsonl",
             P1 "{\"product\": {\"asin\": \"B3\", \"product_category\": [\"A\"]}}\n");
    s_expect(PV_ERR_DATA, "products_small.jsonl:2: product field 'product_category' is not");
    et_write(s_dir, "products_small.jsonl", P1 P2);
    et_write(s_dir, "items_ins_v2_small.json",
             "{\n \"B000000001\": {\"attributes\": [], \"instruction\": \"x\",\n"
             "  \"instruction_attributes\": \"arch support\"}\n}");
    s_expect(PV_ERR_DATA, "items_ins_v2_small.json:2: 'instruction_attributes' is not a list");
    /* a lone BulletPoints string is a list of one, as load_products makes it */
    et_write(s_dir, "items_ins_v2_small.json", G1);
    et_write(s_dir, "products_small.jsonl",
             P1 "{\"product\": {\"asin\": \"B3\", \"BulletPoints\": \"soft\"}}\n");
    s_expect(PV_OK, "");
    et_write(s_dir, "products_small.jsonl", P1 P2);
    et_write(s_dir, "items_ins_v2_copy.json", G1);
    s_expect(PV_ERR_DATA, "files match");
    s_rmdir();
}

/* Goals whose instruction exceeds the wire's task_text and products whose pages exceed an
 * observation are skipped and counted (the product is never found by a search); the rest
 * loads and says what it loaded. */
static void test_long_items_are_skipped(void **state)
{
    (void)state;
    s_tmpdir();
    char *g = et_padded("{\n  \"B000000001\": {\"attributes\": [\"arch support\"],\n"
                        "    \"instruction\": \"Find me shoes with arch support\",\n"
                        "    \"instruction_attributes\": [\"arch support\"]},\n"
                        "  \"B000000002\": {\"attributes\": [\"wool\"], \"instruction\": \"",
                        'w', 70 * 1024,
                        "\", \"instruction_attributes\": [\"wool\"]},\n"
                        "  \"B000000003\": {\"attributes\": [\"wool\"], \"instruction\": "
                        "\"hat\", \"instruction_attributes\": [\"wool\"]}\n}\n");
    char *p = et_padded(P1 P2 "{\"product\": {\"asin\": \"B000000003\", \"name\": \"Big Hat\", "
                              "\"Description\": \"",
                        'd', 1100 * 1024, "\", \"Attributes\": [\"wool\"], \"options\": {}}}\n");
    et_write(s_dir, "products_small.jsonl", p);
    et_write(s_dir, "items_ins_v2_small.json", g);
    pv_env_info_t info;
    pv_env_model_t *m = et_load_ok("webshop", s_dir, &info);
    assert_int_equal(pv_env_model_n_tasks(m, 0) + pv_env_model_n_tasks(m, 1), 6);
    assert_int_equal(info.n_skipped, 2);
    char want[600];
    snprintf(want, sizeof want,
             "webshop: 2 products, 6 synthetic goals of 1 products (%llu train, %llu test) from %s",
             (unsigned long long)pv_env_model_n_tasks(m, 0),
             (unsigned long long)pv_env_model_n_tasks(m, 1), s_dir);
    assert_string_equal(info.summary, want);
    snprintf(want, sizeof want,
             "webshop: skipped 1 products whose pages are longer than 950 KiB (first: "
             "%s/products_small.jsonl:3, ",
             s_dir);
    assert_non_null(strstr(info.warnings, want));
    snprintf(want, sizeof want,
             "webshop: skipped 1 goals whose instruction is longer than 65536 bytes (first: "
             "%s/products_small.jsonl:2, ",
             s_dir);
    assert_non_null(strstr(info.warnings, want));
    /* the hidden product is never a search result */
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    pv_task_t task = {.split = pv_env_model_n_tasks(m, 0) ? 0 : 1, .task_id = 0};
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_int_equal(pv_env_step(e, "search[big hat wool]", &r), PV_OK);
    assert_null(strstr(r.obs, "B000000003"));
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
    free(g);
    free(p);
    s_rmdir();
}

static void test_human_goals_file(void **state)
{
    (void)state;
    s_tmpdir();
    /* two human goals on product 1; human_goals.json puts the second at index 3 (< 500: test)
     * and does not list the first (split by hash) */
    et_write(s_dir, "products_h.jsonl",
             "{\"product\": {\"asin\": \"B000000001\", \"name\": \"Red Shoes\", "
             "\"pricing\": [12.5], \"Attributes\": [\"arch support\"], "
             "\"options\": {\"size\": [\"7\", \"8\"]}, \"instructions\": ["
             "{\"instruction\": \"i want red shoes.\", \"instruction_attributes\": [\"arch "
             "support\"], \"instruction_options\": [\"8\"]},"
             "{\"instruction\": \"shoes in size 7\", \"instruction_attributes\": [\"arch "
             "support\"], \"instruction_options\": [\"7\"]},"
             "{\"instruction\": \"no attributes\", \"instruction_attributes\": [], "
             "\"instruction_options\": []}]}}\n");
    et_write(s_dir, "human_goals.json", "[\"a\", \"b\", \"c\", \"shoes in size 7\"]");
    char path[512];
    snprintf(path, sizeof path, "%s#human", s_dir);
    pv_env_spec_t spec = {.name = "webshop", .data_path = path};
    pv_env_model_t *m = NULL;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_env_model_new(&spec, &m, &em), PV_OK);
    /* get_human_goals skips the goal without attributes */
    assert_int_equal(pv_env_model_n_tasks(m, 0) + pv_env_model_n_tasks(m, 1), 2);
    assert_true(pv_env_model_n_tasks(m, 1) >= 1);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    pv_task_t task = {.split = 1, .task_id = 0};
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
    assert_int_equal(strncmp(pv_env_task_text(e), "shoes in size 7, and price lower than ", 38), 0);
    et_expert_finish(e, &r);
    assert_true(r.won);
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
    s_rmdir();
}

/* ---- real data ------------------------------------------------------------------------------ */

static void test_real_catalogue(void **state)
{
    (void)state;
    char dir[1024];
    if (!pv_test_shared("data/webshop/items_ins_v2_1000.json", dir, sizeof dir))
        skip();
    *strrchr(dir, '/') = '\0';
    pv_env_model_t *m = wt_model(dir, 0);
    assert_int_equal(pv_env_model_n_tasks(m, 0) + pv_env_model_n_tasks(m, 1), 6910);
    assert_int_equal(pv_env_model_n_tasks(m, 1), 303);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    /* the expert over every test goal and every 25th training goal: it buys the goal
     * product with the goal's options, which WebShop's main-branch reward scores 1 unless an
     * option value holds a colour word without being one (the purchased side is
     * colour-normalised, the goal's (name, value) pair is not: webshop.h) */
    int episodes = 0, won = 0, no_plan = 0, dropped = 0, typed = 0;
    for (uint32_t split = 0; split < 2; split++)
        for (uint64_t t = 0; t < pv_env_model_n_tasks(m, split); t += split ? 1 : 25) {
            pv_task_t task = {.split = split, .task_id = t};
            pv_step_result_t r;
            assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
            /* the expert searches only with the page's admissible queries: a goal whose
             * product none of them retrieves has no plan */
            char act[4096];
            pv_err_t rc = pv_env_expert_action(e, act, sizeof act);
            if (rc == PV_ERR_NOTFOUND) {
                no_plan++;
                continue;
            }
            assert_int_equal(rc, PV_OK);
            const char *const *acts;
            size_t na, k = 0;
            assert_int_equal(pv_env_admissible(e, &acts, &na), PV_OK);
            while (k < na && strcmp(acts[k], act) != 0)
                k++;
            assert_true(k < na);
            pv_env_trace_t rec[32];
            int n = 0;
            while (!r.done && n < 32) {
                assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
                assert_int_equal(pv_env_step(e, act, &r), PV_OK);
                assert_true(r.admissible);
                rec[n++] = *r.trace;
                dropped += r.trace->n_dropped;
            }
            assert_true(r.done);
            /* the atoms the trace leaves satisfied are the reward's terms: with the type
             * matched, (attributes + options + price) / (their count) is the reward */
            char kind[WT_ATOMS];
            int maker[WT_ATOMS];
            uint32_t n_atoms = wt_atom_kinds(e, kind), sat = 0;
            wt_makers(rec, n, n_atoms, maker);
            assert_true(maker[0] == n - 1 && kind[1] == 'T');
            for (uint32_t a = 2; a < n_atoms; a++)
                sat += maker[a] >= 0;
            double frac = (double)sat / (double)(n_atoms - 2);
            if (maker[1] >= 0 ? fabs(frac - r.reward) > 1e-6 : r.reward > 0.5 * frac + 1e-6)
                fail_msg("task %u/%llu: reward %g, %u of %u terms satisfied, type %d", split,
                         (unsigned long long)t, (double)r.reward, sat, n_atoms - 2, maker[1]);
            typed += maker[1] >= 0;
            if (!r.won && r.reward < 0.5f)
                fail_msg("task %u/%llu: the expert's purchase scores %g", split,
                         (unsigned long long)t, (double)r.reward);
            episodes++;
            won += r.won;
        }
    print_message("expert: %d of %d goals won, %d without a plan\n", won, episodes + no_plan,
                  no_plan);
    assert_int_equal(episodes + no_plan, 568);
    print_message("atom traces: %d of %d purchases type-matched, %d atoms or edges dropped\n",
                  typed, episodes, dropped);
    assert_int_equal(dropped, 0);
    assert_true(no_plan <= 568 / 20); /* the queries find almost every goal product */
    /* 17 goals miss an option as in WebShop; the 2 without a plan were won when the expert
     * could search with the product title, which no shopper knows */
    assert_int_equal(won + no_plan, 551);
    /* round trips on real pages (long descriptions, several options) */
    pv_env_t *b = NULL;
    assert_int_equal(pv_env_new(m, &b), PV_OK);
    for (uint64_t t = 0; t < 6; t++) {
        pv_task_t task = {.split = 0, .task_id = t * 977};
        et_traj_t tr;
        et_play(e, m, &task, t, 0.5, &tr);
        et_check_replay(b, m, &tr);
        et_free(&tr);
    }
    pv_env_destroy(&b);
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
}

static void test_real_human_goals(void **state)
{
    (void)state;
    char dir[1024];
    if (!pv_test_shared("data/webshop/human_goals.json", dir, sizeof dir))
        skip();
    *strrchr(dir, '/') = '\0';
    strcat(dir, "#human");
    pv_env_model_t *m = wt_model(dir, 0);
    /* 13 products carry WebShop human instructions, all with attributes; none of the texts
     * is among the first 500 of human_goals.json, so all are training goals */
    assert_int_equal(pv_env_model_n_tasks(m, 0), 13);
    assert_int_equal(pv_env_model_n_tasks(m, 1), 0);
    pv_env_model_destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pages_and_navigation),
        cmocka_unit_test(test_step_limit_and_errors),
        cmocka_unit_test(test_expert_generated),
        cmocka_unit_test(test_expert_recovers),
        cmocka_unit_test(test_save_restore_round_trips),
        cmocka_unit_test(test_load_rejects_bad_states),
        cmocka_unit_test(test_steps_allocate_nothing),
        cmocka_unit_test(test_small_catalogue),
        cmocka_unit_test(test_malformed_files),
        cmocka_unit_test(test_long_items_are_skipped),
        cmocka_unit_test(test_human_goals_file),
        cmocka_unit_test(test_real_catalogue),
        cmocka_unit_test(test_real_human_goals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
