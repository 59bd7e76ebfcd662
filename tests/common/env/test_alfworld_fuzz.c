/* test_alfworld_fuzz.c - a million random actions, admissible and not (mutated commands, word
 * salad, white space, empty, long, non-ASCII bytes), on generated games and the real game:
 * no step fails or crashes, every observation is text, refused commands answer "Nothing
 * happens.", and save/load round trips stay exact along the way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/common/env/alf_test.h"

#define N_STEPS 1000000
#define N_ENVS  8

static const char *const s_words[] = {
    "go",    "to",   "take",      "from",  "put",    "in/on",     "move",    "open",
    "close", "heat", "cool",      "clean", "with",   "use",       "examine", "look",
    "help",  "1",    "2",         "12",    "potato", "fridge",    "desk",    "countertop",
    "loc",   "a",    "inventory", "slice", "knife",  "sinkbasin", "drawer",  "-1",
};
#define S_N_WORDS (sizeof s_words / sizeof s_words[0])

static void s_make_action(pv_rng_t *rng, const char *const *adm, size_t n, char *out, size_t cap)
{
    uint32_t kind = pv_rng_bounded(rng, 20);
    const char *base = n ? adm[pv_rng_bounded(rng, (uint32_t)n)] : "look";
    size_t len;
    switch (kind) {
    case 0: /* empty */
        out[0] = 0;
        break;
    case 1: /* long random bytes, non-ASCII included */
        len = cap - 1;
        for (size_t i = 0; i < len; i++)
            out[i] = (char)(1 + pv_rng_bounded(rng, 255));
        out[len] = 0;
        break;
    case 2:
    case 3: /* word salad */
        len = 0;
        out[0] = 0;
        for (uint32_t w = 1 + pv_rng_bounded(rng, 6); w > 0; w--)
            len += (size_t)snprintf(out + len, cap - len, "%s%s", len ? " " : "",
                                    s_words[pv_rng_bounded(rng, S_N_WORDS)]);
        break;
    case 4:
    case 5: { /* one character changed, dropped or doubled */
        snprintf(out, cap, "%s", base);
        len = strlen(out);
        if (len) {
            size_t at = pv_rng_bounded(rng, (uint32_t)len);
            if (kind == 4)
                out[at] = (char)(32 + pv_rng_bounded(rng, 95));
            else
                memmove(out + at, out + at + 1, len - at);
        }
        break;
    }
    case 6: /* surrounding white space (stripped) or upper case (not admissible) */
        if (pv_rng_bounded(rng, 2))
            snprintf(out, cap, " \t%s \n", base);
        else
            for (size_t i = 0; (out[i] = (char)toupper((unsigned char)base[i])) != 0; i++)
                ;
        break;
    case 7: /* a prefix */
        len = strlen(base);
        snprintf(out, cap, "%.*s", (int)pv_rng_bounded(rng, (uint32_t)len + 1), base);
        break;
    default:
        snprintf(out, cap, "%s", base);
        break;
    }
}

static void test_million_random_actions(void **state)
{
    (void)state;
    pv_env_model_t *gen = alf_model(NULL, 0), *real = NULL;
    assert_non_null(gen);
    char path[1024];
    if (pv_test_shared(ALF_GAME_OLD, path, sizeof path))
        real = alf_model(path, 0);
    pv_env_t *env[N_ENVS];
    pv_task_t task[N_ENVS];
    for (int i = 0; i < N_ENVS; i++) {
        assert_int_equal(pv_env_new(i == 0 && real ? real : gen, &env[i]), PV_OK);
        task[i] = (pv_task_t){.split = (uint32_t)(i % 2), .task_id = (uint64_t)i, .seed = 17};
        pv_step_result_t r;
        assert_int_equal(pv_env_reset(env[i], &task[i], &r), PV_OK);
    }
    size_t cap = pv_env_state_max(gen);
    if (real && pv_env_state_max(real) > cap)
        cap = pv_env_state_max(real);
    uint8_t *buf = malloc(cap);
    pv_rng_t rng;
    pv_rng_seed(&rng, 2024, 1);
    char action[4096];
    uint64_t taken = 0, refused = 0, won = 0, resets = 0;
    for (uint32_t s = 0; s < N_STEPS; s++) {
        int i = (int)(s % N_ENVS);
        const char *const *adm;
        size_t n;
        assert_int_equal(pv_env_admissible(env[i], &adm, &n), PV_OK);
        assert_true(n > 0);
        s_make_action(&rng, adm, n, action, sizeof action);
        bool listed = false;
        for (size_t k = 0; k < n && !listed; k++)
            listed = strcmp(adm[k], action) == 0;
        pv_step_result_t r;
        assert_int_equal(pv_env_step(env[i], action, &r), PV_OK);
        assert_non_null(r.obs);
        assert_true(r.obs[0] != 0);
        if (listed)
            assert_true(r.admissible);
        if (!r.admissible) {
            assert_string_equal(r.obs, "Nothing happens.");
            refused++;
        } else {
            taken++;
        }
        if (s % 997 == 0) { /* round trip through bytes */
            size_t len;
            pv_errmsg_t em;
            assert_int_equal(pv_env_save(env[i], buf, cap, &len), PV_OK);
            assert_int_equal(pv_env_load(env[i], buf, len, &em), PV_OK);
        }
        if (r.done) {
            won += r.won;
            resets++;
            assert_int_equal(pv_env_step(env[i], "look", &r), PV_ERR_STATE);
            assert_int_equal(pv_env_reset(env[i], &task[i], &r), PV_OK);
        }
    }
    assert_true(taken > N_STEPS / 3 && refused > N_STEPS / 5);
    assert_true(resets > 1000);
    free(buf);
    for (int i = 0; i < N_ENVS; i++)
        pv_env_destroy(&env[i]);
    pv_env_model_destroy(&gen);
    pv_env_model_destroy(&real);
    (void)won;
}

/* Damage the real game file at random (spans deleted or repeated, characters replaced by
 * PDDL/grammar punctuation): building a model either succeeds and the game plays, or fails
 * with a message that names the file. Nothing crashes. */
static void test_damaged_game_files(void **state)
{
    (void)state;
    json_t *root = NULL;
    const char *orig[3];
    if (!alf_game_parts(ALF_GAME_NEW, &root, orig))
        skip();
    static const char punct[] = "()?;#{}[]|\"'- :&\nabcxyz019";
    pv_rng_t rng;
    pv_rng_seed(&rng, 31337, 5);
    int built = 0, refused = 0;
    for (int trial = 0; trial < 150; trial++) {
        char *text[3];
        for (int k = 0; k < 3; k++)
            text[k] = strdup(orig[k]);
        int part = (int)pv_rng_bounded(&rng, 3);
        size_t n = strlen(text[part]);
        char *t = malloc(2 * n + 64);
        memcpy(t, text[part], n + 1);
        for (uint32_t edits = 1 + pv_rng_bounded(&rng, 3); edits > 0; edits--) {
            size_t at = pv_rng_bounded(&rng, (uint32_t)n), span = 1 + pv_rng_bounded(&rng, 20);
            if (at + span > n)
                span = n - at;
            switch (pv_rng_bounded(&rng, 3)) {
            case 0: /* delete */
                memmove(t + at, t + at + span, n - at - span + 1);
                n -= span;
                break;
            case 1: /* repeat */
                memmove(t + at + span, t + at, n - at + 1);
                n += span;
                break;
            default: /* replace one character */
                t[at] = punct[pv_rng_bounded(&rng, sizeof punct - 1)];
                break;
            }
            if (n == 0)
                break;
        }
        free(text[part]);
        text[part] = t;
        alf_path_t tmp;
        const char *path = alf_write_game(text[0], text[1], text[2], &tmp);
        assert_non_null(path);
        pv_env_spec_t spec = {.name = "alfworld", .data_path = path};
        pv_env_model_t *m = NULL;
        pv_errmsg_t em = {{0}};
        pv_err_t rc = pv_env_model_new(&spec, &m, &em);
        if (rc == PV_OK) {
            pv_env_t *e = NULL;
            assert_int_equal(pv_env_new(m, &e), PV_OK);
            pv_task_t task = {0};
            pv_step_result_t r;
            assert_int_equal(pv_env_reset(e, &task, &r), PV_OK);
            for (int s = 0; s < 20 && !r.done; s++) {
                const char *const *a;
                size_t k;
                assert_int_equal(pv_env_admissible(e, &a, &k), PV_OK);
                assert_int_equal(
                    pv_env_step(e, k ? a[pv_rng_bounded(&rng, (uint32_t)k)] : "look", &r), PV_OK);
                assert_non_null(r.obs);
            }
            (void)pv_env_expert_plan_len(e);
            pv_env_destroy(&e);
            pv_env_model_destroy(&m);
            built++;
        } else {
            if (!strstr(em.text, path))
                fail_msg("error without the file name: %s", em.text);
            refused++;
        }
        unlink(path);
        for (int k = 0; k < 3; k++)
            free(text[k]);
    }
    assert_true(refused > 20);
    assert_true(built > 5);
    json_decref(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_million_random_actions),
        cmocka_unit_test(test_damaged_game_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
