/* test_lm_policy.c - the language-model policy kind (common/policy/lm_*.c): prompts (window
 * rule, a context is a token-prefix of the next, the budget cut, the benchmarks' reply
 * parsing), generation deterministic from its seed, every behaviour log-prob reproduced by
 * the training forward (batched and one step at a time), the batched backward equal to the
 * sum of one-step backwards, the KV cache giving what a fresh prefill gives, ranking, a batch
 * of decisions giving what each gives alone, and a Hugging Face directory read back
 * bit-identically. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/policy/lm_prompt.h"
#include "common/policy/policy.h"
#include "tests/support/lm_fixture.h"
#include "tests/support/pv_test.h"

typedef lm_fixture_t s_fix_t;

static int s_setup(void **state)
{
    static s_fix_t f;
    memset(&f, 0, sizeof f);
    if (lm_fixture_setup(5, PV_POLICY_DECODE_GENERATE, 0, &f.json, &f.len, &f.p, &f.w) != 0)
        return -1;
    *state = &f;
    return 0;
}

#define S_NC (sizeof lm_fixture_cands / sizeof lm_fixture_cands[0])

static void test_prompt(void **state)
{
    (void)state;
    size_t len = 0;
    char *json = lm_fixture_vocab(&len);
    assert_non_null(json);
    pv_tokenizer_t *tok = NULL;
    assert_int_equal(pv_tokenizer_from_json(json, len, "t", &tok, NULL), PV_OK);
    pv_lmp_t lmp;
    assert_int_equal(pv_lmp_init(&lmp, PV_LMP_ALFWORLD, 2, false, 480, tok, NULL), PV_OK);
    /* the window: W = 2 keeps 2..3 earlier turns, restarting every 2 steps from t = 4 */
    size_t want[] = {0, 0, 0, 0, 2, 2, 4, 4, 6};
    for (size_t t = 0; t < 9; t++)
        assert_int_equal(pv_lmp_window_start(&lmp, t), want[t]);
    pv_lmp_ids_t a = {0}, b = {0}, act = {0};
    pv_lmp_t each = lmp; /* the task restated in every later turn: still a growing prompt */
    each.task_each_turn = true;
    for (size_t i = 0; i < 10; i++) {
        size_t t = i % 5;
        const pv_lmp_t *L = i < 5 ? &lmp : &each;
        pv_policy_ctx_t c0 = lm_fixture_ctx(t), c1 = lm_fixture_ctx(t + 1);
        assert_int_equal(pv_lmp_context(L, tok, &c0, NULL, 0, &a, NULL), PV_OK);
        assert_int_equal(pv_lmp_context(L, tok, &c1, NULL, 0, &b, NULL), PV_OK);
        act.n = 0;
        assert_int_equal(pv_lmp_encode(tok, lm_fixture_hist[2 * t + 1],
                                       strlen(lm_fixture_hist[2 * t + 1]), &act),
                         PV_OK);
        bool restart = pv_lmp_window_start(&lmp, t + 1) != pv_lmp_window_start(&lmp, t);
        /* within a window: step t's context, its action, then the next turn */
        bool prefix = b.n > a.n + act.n && memcmp(b.ids, a.ids, a.n * sizeof *a.ids) == 0 &&
                      memcmp(b.ids + a.n, act.ids, act.n * sizeof *act.ids) == 0 &&
                      b.ids[a.n + act.n] == lmp.im_end;
        assert_true(prefix == !restart);
        assert_int_equal(a.ids[a.n - 1] != lmp.im_end, true); /* ends with "assistant\n" */
    }
    char text[4096];
    size_t tl = 0;
    pv_policy_ctx_t c3 = lm_fixture_ctx(3);
    assert_int_equal(pv_lmp_context(&each, tok, &c3, NULL, 0, &b, NULL), PV_OK);
    assert_int_equal(pv_tokenizer_decode(tok, b.ids, b.n, false, text, sizeof text, &tl, NULL),
                     PV_OK);
    assert_non_null(strstr(text, "you see nothing.\nYour task is to: " LM_FIXTURE_TASK
                                 "<|im_end|>\n<|im_start|>assistant\n"));
    assert_non_null(strstr(text, "a mug 2.\nYour task is to: " LM_FIXTURE_TASK "<|im_end|>"));
    size_t times = 0; /* o_0 holds it as the game writes it, then once per later turn */
    for (const char *q = strstr(text, "Your task is to: "); q;
         q = strstr(q + 1, "Your task is to: "))
        times++;
    assert_int_equal(times, 4);
    /* the budget: a context that does not fit starts again at its own step, then is cut */
    pv_policy_ctx_t c5 = lm_fixture_ctx(5);
    assert_int_equal(pv_lmp_context(&lmp, tok, &c5, NULL, 0, &a, NULL), PV_OK);
    size_t full = a.n;
    pv_lmp_t small = lmp;
    small.budget = full - 1;
    assert_int_equal(pv_lmp_context(&small, tok, &c5, NULL, 0, &b, NULL), PV_OK);
    assert_true(b.n <= small.budget && b.n < full);
    size_t one_turn = b.n; /* the conversation of step 5 alone */
    small.budget = one_turn - 3;
    assert_int_equal(pv_lmp_context(&small, tok, &c5, NULL, 0, &b, NULL), PV_OK);
    assert_int_equal(b.n, one_turn - 3); /* its observation cut by 3 tokens */
    small.budget = 5;
    assert_int_equal(pv_lmp_context(&small, tok, &c5, NULL, 0, &b, NULL), PV_ERR_LIMIT);
    /* admissible actions listed after the current observation only */
    pv_lmp_t adm = lmp;
    adm.admissible = true;
    assert_int_equal(pv_lmp_context(&adm, tok, &c5, lm_fixture_cands, S_NC, &b, NULL), PV_OK);
    assert_true(b.n > full);
    assert_int_equal(pv_tokenizer_decode(tok, b.ids, b.n, false, text, sizeof text, &tl, NULL),
                     PV_OK);
    assert_non_null(strstr(text, "admissible actions of the current situation are: [go to fridge "
                                 "1, open fridge 1,"));
    assert_non_null(strstr(text, "<|im_start|>system\nYou are an expert agent"));
    assert_non_null(strstr(text, "<|im_start|>assistant\n"));
    /* a restarted conversation says where it is */
    assert_int_equal(pv_lmp_context(&lmp, tok, &c5, NULL, 0, &b, NULL), PV_OK);
    assert_int_equal(pv_tokenizer_decode(tok, b.ids, b.n, false, text, sizeof text, &tl, NULL),
                     PV_OK);
    assert_non_null(strstr(text, "Your task is to: " LM_FIXTURE_TASK
                                 "\nPrior to this step, you have already taken 2 step(s).\n"));
    free(a.ids);
    free(b.ids);
    free(act.ids);
    pv_tokenizer_destroy(&tok);
    free(json);
}

static void test_parse(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(pv_lmp_parse(PV_LMP_ALFWORLD, "  Go to Fridge 1 \nmore", 22, out, sizeof out),
                     14);
    assert_string_equal(out, "go to fridge 1");
    const char *tagged = "<think>hm</think><action> Open Fridge 1 </action>";
    pv_lmp_parse(PV_LMP_ALFWORLD, tagged, strlen(tagged), out, sizeof out);
    assert_string_equal(out, "open fridge 1");
    assert_int_equal(pv_lmp_parse(PV_LMP_ALFWORLD, " \n ", 3, out, sizeof out), 0);
    pv_lmp_parse(PV_LMP_WEBSHOP, "click[Buy Now]", 14, out, sizeof out);
    assert_string_equal(out, "click[buy now]");
    const char *sq = "<think>x</think> <search> who </search> then <answer>y</answer>";
    pv_lmp_parse(PV_LMP_SEARCHQA, sq, strlen(sq), out, sizeof out);
    assert_string_equal(out, "<think>x</think> <search> who </search>");
    assert_int_equal(pv_lmp_parse(PV_LMP_ALFWORLD, "abcdefgh", 8, out, 4), 3); /* cut */
}

/* A reply decoded token by token is made valid UTF-8 byte for byte: a character cut at the
 * end, a stray continuation byte, an overlong form, a surrogate and a NUL become '?'; valid
 * multi-byte characters are kept. */
static void test_utf8_fix(void **state)
{
    (void)state;
    char ok[] = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
    assert_int_equal(pv_lmp_utf8_fix(ok, strlen(ok)), 0);
    assert_string_equal(ok, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    char bad[] = "a\x80"
                 "b\xc0\xaf"
                 "c\xed\xa0\x80"
                 "d\xe2\x82";
    size_t n = sizeof bad - 1;
    assert_int_equal(pv_lmp_utf8_fix(bad, n), 8);
    assert_string_equal(bad, "a?b??c???d??");
    char nul[3] = {'x', '\0', 'y'};
    assert_int_equal(pv_lmp_utf8_fix(nul, 3), 1);
    assert_memory_equal(nul, "x?y", 3);
}

/* Generation: the same seed, the same tokens and log-probs; the end token ends an action. */
static void test_generate_deterministic(void **state)
{
    s_fix_t *f = *state;
    pv_policy_work_t *w2 = NULL;
    assert_int_equal(pv_policy_work_new(f->p, &w2), PV_OK);
    pv_policy_ctx_t ctx = lm_fixture_ctx(2);
    int differ = 0;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        pv_rng_t r1, r2, r3;
        pv_rng_seed(&r1, seed, 0);
        pv_rng_seed(&r2, seed, 0);
        pv_rng_seed(&r3, seed + 100, 0);
        pv_policy_step_t a, b, c;
        assert_int_equal(pv_policy_act(f->p, &ctx, lm_fixture_cands, S_NC, &r1, f->w, &a), PV_OK);
        uint32_t ta[64];
        float la[64];
        size_t na = a.n_tokens;
        assert_true(na >= 1 && na <= 12);
        memcpy(ta, a.tokens, na * sizeof *ta);
        memcpy(la, a.token_logprobs, na * sizeof *la);
        assert_int_equal(pv_policy_act(f->p, &ctx, lm_fixture_cands, S_NC, &r2, w2, &b), PV_OK);
        assert_int_equal(b.n_tokens, na);
        assert_memory_equal(b.tokens, ta, na * sizeof *ta);
        float sum = 0;
        for (size_t k = 0; k < na; k++) {
            assert_true(fabsf(b.token_logprobs[k] - la[k]) < 1e-5f);
            assert_true(la[k] <= 0.0f);
            sum += la[k];
        }
        assert_true(fabsf(sum - a.logprob) < 1e-4f);
        assert_non_null(b.action);
        assert_int_equal(pv_policy_act(f->p, &ctx, lm_fixture_cands, S_NC, &r3, f->w, &c), PV_OK);
        differ += c.n_tokens != na || memcmp(c.tokens, ta, na * sizeof *ta) != 0;
    }
    assert_true(differ > 0); /* an untrained model samples nearly uniformly: seeds matter */
    /* greedy is deterministic and needs no RNG */
    pv_policy_step_t g1, g2;
    assert_int_equal(pv_policy_act(f->p, &ctx, lm_fixture_cands, S_NC, NULL, f->w, &g1), PV_OK);
    uint32_t t1[64];
    size_t n1 = g1.n_tokens;
    memcpy(t1, g1.tokens, n1 * sizeof *t1);
    assert_int_equal(pv_policy_act(f->p, &ctx, lm_fixture_cands, S_NC, NULL, w2, &g2), PV_OK);
    assert_int_equal(g2.n_tokens, n1);
    assert_memory_equal(g2.tokens, t1, n1 * sizeof *t1);
    pv_policy_work_destroy(&w2);
}

/* Play the fixture's history step by step (the KV cache carried across steps), then score
 * the same steps with the training forward: every behaviour log-prob is reproduced. */
static void test_logprobs_reproduced(void **state)
{
    s_fix_t *f = *state;
    enum { NS = 5 };
    uint32_t toks[NS][64];
    float blp[NS][64];
    size_t nt[NS], total = 0;
    pv_policy_item_t items[NS];
    pv_rng_t rng;
    pv_rng_seed(&rng, 42, 0);
    for (size_t t = 0; t < NS; t++) {
        pv_policy_ctx_t ctx = lm_fixture_ctx(t);
        pv_policy_step_t st;
        assert_int_equal(pv_policy_act(f->p, &ctx, lm_fixture_cands, S_NC, &rng, f->w, &st), PV_OK);
        nt[t] = st.n_tokens;
        memcpy(toks[t], st.tokens, nt[t] * sizeof(uint32_t));
        memcpy(blp[t], st.token_logprobs, nt[t] * sizeof(float));
        items[t] = (pv_policy_item_t){.ctx = ctx,
                                      .cands = lm_fixture_cands,
                                      .n_cands = S_NC,
                                      .tokens = toks[t],
                                      .n_tokens = nt[t]};
        total += nt[t];
    }
    float lp[NS * 64], ent[NS * 64];
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_policy_forward_items(f->p, items, NS, f->w, lp, ent, &em), PV_OK);
    double worst = 0;
    for (size_t t = 0, at = 0; t < NS; t++)
        for (size_t k = 0; k < nt[t]; k++, at++) {
            double d = fabs((double)lp[at] - (double)blp[t][k]);
            worst = d > worst ? d : worst;
            assert_true(ent[at] >= 0.0f);
        }
    print_message("behaviour vs training log-prob: worst |diff| %.2e over %zu tokens\n", worst,
                  total);
    assert_true(worst < 1e-5);
    /* one step at a time, the same numbers */
    for (size_t t = 0, at = 0; t < NS; t++) {
        float l1[64];
        assert_int_equal(pv_policy_forward(f->p, &items[t].ctx, lm_fixture_cands, S_NC, toks[t],
                                           nt[t], f->w, l1, NULL),
                         PV_OK);
        for (size_t k = 0; k < nt[t]; k++, at++)
            assert_true(fabsf(l1[k] - lp[at]) < 1e-5f);
    }
    /* a token outside the vocabulary is refused */
    uint32_t bad = pv_policy_token_space(f->p);
    assert_int_equal(pv_policy_forward(f->p, &items[0].ctx, NULL, 0, &bad, 1, f->w, lp, NULL),
                     PV_ERR_RANGE);
}

/* The batched backward (steps merged into sequences) equals the one-step backwards summed. */
static void test_backward_items(void **state)
{
    s_fix_t *f = *state;
    enum { NS = 5 };
    pv_policy_item_t items[NS];
    uint32_t toks[NS][16];
    float dlp[NS * 16], dent[NS * 16];
    size_t at = 0;
    pv_tokenizer_t *tok = NULL;
    (void)tok;
    for (size_t t = 0; t < NS; t++) {
        size_t n = 0;
        assert_int_equal(pv_policy_action_tokens(f->p, lm_fixture_hist[2 * t + 1], NULL, 0, f->w,
                                                 toks[t], 16, &n),
                         PV_OK);
        items[t] = (pv_policy_item_t){.ctx = lm_fixture_ctx(t), .tokens = toks[t], .n_tokens = n};
        for (size_t k = 0; k < n; k++, at++) {
            dlp[at] = (float)(0.1 * ((at % 5) + 1)) * (t == 3 ? 0.0f : 1.0f);
            dent[at] = t == 3 ? 0.0f : 0.03f * (float)(k + 1);
        }
    }
    size_t P = pv_policy_n_params(f->p);
    float *g1 = calloc(P, sizeof *g1), *g2 = calloc(P, sizeof *g2);
    assert_non_null(g1);
    assert_non_null(g2);
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_policy_backward_items(f->p, items, NS, f->w, dlp, dent, g1, NULL, &em),
                     PV_OK);
    float lp[16], en[16];
    at = 0;
    for (size_t t = 0; t < NS; t++) {
        assert_int_equal(pv_policy_forward(f->p, &items[t].ctx, NULL, 0, toks[t], items[t].n_tokens,
                                           f->w, lp, en),
                         PV_OK);
        assert_int_equal(pv_policy_backward(f->p, f->w, dlp + at, dent + at, g2), PV_OK);
        at += items[t].n_tokens;
    }
    double num = 0, den = 0, mx = 0;
    for (size_t i = 0; i < P; i++) {
        num += ((double)g1[i] - g2[i]) * ((double)g1[i] - g2[i]);
        den += (double)g2[i] * g2[i];
        mx = fabs(g2[i]) > mx ? fabs(g2[i]) : mx;
    }
    print_message("batched vs one-step gradients: relative error %.2e (max |g| %.3g)\n",
                  sqrt(num / den), mx);
    assert_true(den > 0);
    assert_true(sqrt(num / den) < 1e-4);
    free(g1);
    free(g2);
}

/* policy.train_threads: the chunks shared among 3 lanes give the log-probs of one lane
 * exactly and its gradient up to the order of float additions. */
static void test_train_lanes(void **state)
{
    s_fix_t *f = *state;
    enum { NI = 24 };
    static char tasks[NI][64];
    pv_policy_item_t items[NI];
    uint32_t toks[NI][16];
    float dlp[NI * 16];
    size_t at = 0;
    for (size_t i = 0; i < NI; i++) { /* distinct tasks: a sequence each, several chunks */
        snprintf(tasks[i], sizeof tasks[i], "put a clean potato in fridge %zu.", i);
        size_t t = i % 5, n = 0;
        assert_int_equal(pv_policy_action_tokens(f->p, lm_fixture_hist[2 * t + 1], NULL, 0, f->w,
                                                 toks[i], 16, &n),
                         PV_OK);
        items[i] = (pv_policy_item_t){
            .ctx = {tasks[i], lm_fixture_hist, 2 * t + 1}, .tokens = toks[i], .n_tokens = n};
        for (size_t k = 0; k < n; k++, at++)
            dlp[at] = (float)(0.05 * (double)((at % 7) + 1)) * (i % 4 == 3 ? 0.0f : 1.0f);
    }
    pv_policy_spec_t sp = *pv_policy_spec(f->p);
    sp.train_threads = 3;
    pv_policy_t *p3 = NULL;
    pv_policy_work_t *w3 = NULL;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_policy_new(&sp, &p3, &em), PV_OK);
    assert_int_equal(pv_policy_work_new(p3, &w3), PV_OK);
    size_t P = pv_policy_n_params(f->p);
    memcpy(pv_policy_params(p3), pv_policy_params_const(f->p), P * sizeof(float));
    float lp1[NI * 16], lp3[NI * 16], e1[NI * 16], e3[NI * 16], o1[NI * 16], o3[NI * 16];
    assert_int_equal(pv_policy_forward_items(f->p, items, NI, f->w, lp1, e1, &em), PV_OK);
    assert_int_equal(pv_policy_forward_items(p3, items, NI, w3, lp3, e3, &em), PV_OK);
    assert_memory_equal(lp1, lp3, at * sizeof(float));
    assert_memory_equal(e1, e3, at * sizeof(float));
    float *g1 = calloc(P, sizeof *g1), *g3 = calloc(P, sizeof *g3);
    assert_non_null(g1);
    assert_non_null(g3);
    for (int rep = 0; rep < 2; rep++) { /* the lanes' gradients are cleared after each call */
        assert_int_equal(pv_policy_backward_items(f->p, items, NI, f->w, dlp, NULL, g1, o1, &em),
                         PV_OK);
        assert_int_equal(pv_policy_backward_items(p3, items, NI, w3, dlp, NULL, g3, o3, &em),
                         PV_OK);
        assert_memory_equal(o1, o3, at * sizeof(float));
        assert_memory_equal(o1, lp1, at * sizeof(float)); /* zero-gradient items too */
    }
    double num = 0, den = 0;
    for (size_t i = 0; i < P; i++) {
        num += ((double)g1[i] - g3[i]) * ((double)g1[i] - g3[i]);
        den += (double)g1[i] * g1[i];
    }
    print_message("1 lane vs 3 lanes over %d items: gradient relative difference %.2e\n", NI,
                  sqrt(num / den));
    assert_true(den > 0);
    assert_true(sqrt(num / den) < 1e-6);
    free(g1);
    free(g3);
    pv_policy_work_destroy(&w3);
    pv_policy_destroy(&p3);
}

/* A demonstration's action longer than acting writes (max_new_tokens) still fits: its
 * context is built within the room the action leaves; one longer than the whole context is
 * refused with a message. */
static void test_long_action_context(void **state)
{
    s_fix_t *f = *state;
    pv_policy_spec_t sp = *pv_policy_spec(f->p);
    sp.max_context = 200;
    pv_policy_t *p = NULL;
    pv_policy_work_t *w = NULL;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_policy_new(&sp, &p, &em), PV_OK);
    assert_int_equal(pv_policy_work_new(p, &w), PV_OK);
    static const char act[] = "take potato 1 from countertop 1 and then take mug 2 from "
                              "countertop 1 and then go to sinkbasin 1 and clean potato 1";
    uint32_t toks[256];
    size_t nt = 0;
    assert_int_equal(pv_policy_action_tokens(p, act, NULL, 0, w, toks, 256, &nt), PV_OK);
    assert_true(nt > sp.max_new_tokens);
    pv_policy_item_t it = {.ctx = lm_fixture_ctx(4), .tokens = toks, .n_tokens = nt};
    float lp[256], g[256], *grad = calloc(pv_policy_n_params(p), sizeof(float));
    assert_non_null(grad);
    for (size_t k = 0; k < nt; k++)
        g[k] = -1.0f;
    assert_int_equal(pv_policy_forward_items(p, &it, 1, w, lp, NULL, &em), PV_OK);
    assert_int_equal(pv_policy_backward_items(p, &it, 1, w, g, NULL, grad, NULL, &em), PV_OK);
    it.n_tokens = 0; /* too long for any context */
    uint32_t many[256];
    for (size_t k = 0; k < 201; k++)
        many[k] = toks[k % nt];
    it.tokens = many;
    it.n_tokens = 201;
    assert_int_equal(pv_policy_forward_items(p, &it, 1, w, lp, NULL, &em), PV_ERR_LIMIT);
    assert_non_null(strstr(em.text, "pass 200"));
    free(grad);
    pv_policy_work_destroy(&w);
    pv_policy_destroy(&p);
}

/* The KV cache carried across steps gives the tokens a fresh work gives (greedy). */
static void test_cache_reuse(void **state)
{
    s_fix_t *f = *state;
    for (size_t t = 0; t < 6; t++) {
        pv_policy_ctx_t ctx = lm_fixture_ctx(t);
        pv_policy_step_t a, b;
        assert_int_equal(pv_policy_act(f->p, &ctx, lm_fixture_cands, S_NC, NULL, f->w, &a), PV_OK);
        uint32_t ta[64];
        float la[64];
        size_t na = a.n_tokens;
        memcpy(ta, a.tokens, na * sizeof *ta);
        memcpy(la, a.token_logprobs, na * sizeof *la);
        pv_policy_work_t *fresh = NULL;
        assert_int_equal(pv_policy_work_new(f->p, &fresh), PV_OK);
        assert_int_equal(pv_policy_act(f->p, &ctx, lm_fixture_cands, S_NC, NULL, fresh, &b), PV_OK);
        assert_int_equal(b.n_tokens, na);
        assert_memory_equal(b.tokens, ta, na * sizeof *ta);
        for (size_t k = 0; k < na; k++)
            assert_true(fabsf(b.token_logprobs[k] - la[k]) < 1e-5f);
        pv_policy_work_destroy(&fresh);
    }
    /* back to the first step (another episode of a group), then on again */
    for (size_t t = 0; t < 3; t++) {
        pv_policy_ctx_t ctx = lm_fixture_ctx(t);
        pv_policy_step_t a;
        assert_int_equal(pv_policy_act(f->p, &ctx, lm_fixture_cands, S_NC, NULL, f->w, &a), PV_OK);
    }
}

/* New parameters make the cache stale: after the weights change and get a new version (as
 * after an optimiser step or a weight broadcast), a work that acted before gives exactly
 * what a fresh work gives, not what the old keys and values say. */
static void test_cache_after_update(void **state)
{
    s_fix_t *f = *state;
    pv_policy_ctx_t ctx = lm_fixture_ctx(3);
    pv_policy_step_t a, b;
    assert_int_equal(pv_policy_act(f->p, &ctx, lm_fixture_cands, S_NC, NULL, f->w, &a), PV_OK);
    size_t n = pv_policy_n_params(f->p);
    float *keep = malloc(n * sizeof *keep), *w = pv_policy_params(f->p);
    assert_non_null(keep);
    memcpy(keep, w, n * sizeof *keep);
    for (size_t i = 0; i < n; i++)
        w[i] *= (i % 3) ? 1.5f : -0.5f;
    uint64_t v = pv_policy_version(f->p);
    pv_policy_set_version(f->p, v + 1);
    assert_int_equal(pv_policy_act(f->p, &ctx, lm_fixture_cands, S_NC, NULL, f->w, &a), PV_OK);
    uint32_t ta[64];
    float la[64];
    size_t na = a.n_tokens;
    memcpy(ta, a.tokens, na * sizeof *ta);
    memcpy(la, a.token_logprobs, na * sizeof *la);
    pv_policy_work_t *fresh = NULL;
    assert_int_equal(pv_policy_work_new(f->p, &fresh), PV_OK);
    assert_int_equal(pv_policy_act(f->p, &ctx, lm_fixture_cands, S_NC, NULL, fresh, &b), PV_OK);
    assert_int_equal(b.n_tokens, na);
    assert_memory_equal(b.tokens, ta, na * sizeof *ta);
    for (size_t k = 0; k < na; k++)
        assert_true(fabsf(b.token_logprobs[k] - la[k]) < 1e-5f);
    pv_policy_work_destroy(&fresh);
    memcpy(pv_policy_params(f->p), keep, n * sizeof *keep);
    pv_policy_set_version(f->p, v);
    free(keep);
}

/* decode = rank: the argmax of the sequence log-probs, the candidate's tokens and theirs. */
static void test_rank(void **state)
{
    s_fix_t *f = *state;
    pv_policy_spec_t sp = lm_fixture_spec(f->json, f->len, 5);
    sp.temperature = 0.9f;
    sp.decode = PV_POLICY_DECODE_RANK;
    pv_policy_t *r = NULL;
    pv_policy_work_t *w = NULL;
    assert_int_equal(pv_policy_new(&sp, &r, NULL), PV_OK);
    assert_int_equal(pv_policy_work_new(r, &w), PV_OK);
    pv_policy_ctx_t ctx = lm_fixture_ctx(4);
    float lp[S_NC], ent;
    assert_int_equal(pv_policy_logprobs(r, &ctx, lm_fixture_cands, S_NC, w, lp, &ent), PV_OK);
    size_t best = 0;
    for (size_t i = 1; i < S_NC; i++)
        best = lp[i] > lp[best] ? i : best;
    assert_true(ent > 0.0f);
    pv_policy_step_t st;
    assert_int_equal(pv_policy_act(r, &ctx, lm_fixture_cands, S_NC, NULL, w, &st), PV_OK);
    assert_int_equal(st.choice, best);
    assert_string_equal(st.action, lm_fixture_cands[best]);
    uint32_t want[32];
    size_t nw = 0;
    assert_int_equal(pv_policy_action_tokens(r, lm_fixture_cands[best], NULL, 0, w, want, 32, &nw),
                     PV_OK);
    assert_int_equal(st.n_tokens, nw);
    assert_memory_equal(st.tokens, want, nw * sizeof *want);
    assert_true(fabsf(st.logprob - lp[best]) < 1e-5f);
    /* the training forward reproduces the rank's per-token log-probs */
    float tl[32];
    uint32_t tk[32];
    float bl[32];
    memcpy(tk, st.tokens, nw * sizeof *tk);
    memcpy(bl, st.token_logprobs, nw * sizeof *bl);
    assert_int_equal(pv_policy_forward(r, &ctx, lm_fixture_cands, S_NC, tk, nw, w, tl, NULL),
                     PV_OK);
    for (size_t k = 0; k < nw; k++)
        assert_true(fabsf(tl[k] - bl[k]) < 1e-5f);
    /* sampling among candidates follows the scores */
    size_t hits[S_NC] = {0};
    pv_rng_t rng;
    pv_rng_seed(&rng, 9, 0);
    for (int i = 0; i < 300; i++) {
        assert_int_equal(pv_policy_act(r, &ctx, lm_fixture_cands, S_NC, &rng, w, &st), PV_OK);
        assert_true(st.choice < S_NC);
        hits[st.choice]++;
    }
    double z = 0;
    for (size_t i = 0; i < S_NC; i++)
        z += exp((double)lp[i] - lp[best]);
    double want_best = 300.0 / z;
    assert_true(fabs((double)hits[best] - want_best) < 5 * sqrt(want_best) + 3);
    assert_int_equal(pv_policy_act(r, &ctx, NULL, 0, NULL, w, &st), PV_ERR_INVAL);
    pv_policy_work_destroy(&w);
    pv_policy_destroy(&r);
}

/* pv_policy_act_batch gives every decision what pv_policy_act gives it alone (tokens exactly,
 * log-probs to 1e-5), under generate, constrain and rank, over two calls (the second extends
 * the first's conversations, so each finds its own slot again) with two decisions on the same
 * context (the second copies the first's prefix to a slot of its own); the training forward
 * reproduces the batch's behaviour log-probs. */
static void test_act_batch(void **state)
{
    s_fix_t *f = *state;
    const pv_policy_decode_t modes[] = {PV_POLICY_DECODE_GENERATE, PV_POLICY_DECODE_CONSTRAIN,
                                        PV_POLICY_DECODE_RANK};
    enum { B = 4 };
    const size_t first[B] = {1, 2, 2, 3}, second[B] = {2, 3, 3, 4};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        pv_policy_spec_t sp = lm_fixture_spec(f->json, f->len, 5);
        sp.decode = modes[m];
        pv_policy_t *p = NULL;
        pv_policy_work_t *wb = NULL, *w1 = NULL;
        assert_int_equal(pv_policy_new(&sp, &p, NULL), PV_OK);
        assert_true(pv_policy_batches(p));
        assert_int_equal(pv_policy_work_new(p, &wb), PV_OK);
        assert_int_equal(pv_policy_work_new(p, &w1), PV_OK);
        size_t differ = 0;
        for (int call = 0; call < 2; call++) {
            const size_t *at = call ? second : first;
            pv_policy_ctx_t ctxs[B];
            const char *const *cands[B];
            size_t n[B];
            pv_rng_t r[B], *rp[B];
            for (size_t b = 0; b < B; b++) {
                ctxs[b] = lm_fixture_ctx(at[b]);
                cands[b] = lm_fixture_cands;
                n[b] = S_NC;
                pv_rng_seed(&r[b], 100 * (uint64_t)call + b + 1, 0);
                rp[b] = &r[b];
            }
            pv_policy_step_t st[B];
            assert_int_equal(pv_policy_act_batch(p, ctxs, cands, n, rp, B, wb, st), PV_OK);
            uint32_t tk[B][64];
            float lp[B][64];
            pv_policy_item_t items[B];
            for (size_t b = 0; b < B; b++) {
                memcpy(tk[b], st[b].tokens, st[b].n_tokens * sizeof(uint32_t));
                memcpy(lp[b], st[b].token_logprobs, st[b].n_tokens * sizeof(float));
                items[b] = (pv_policy_item_t){.ctx = ctxs[b],
                                              .cands = lm_fixture_cands,
                                              .n_cands = S_NC,
                                              .tokens = tk[b],
                                              .n_tokens = st[b].n_tokens};
            }
            differ += st[1].n_tokens != st[2].n_tokens ||
                      memcmp(tk[1], tk[2], st[1].n_tokens * sizeof(uint32_t)) != 0;
            for (size_t b = 0; b < B; b++) {
                pv_rng_t r1;
                pv_rng_seed(&r1, 100 * (uint64_t)call + b + 1, 0);
                pv_policy_step_t one;
                assert_int_equal(pv_policy_act(p, &ctxs[b], lm_fixture_cands, S_NC, &r1, w1, &one),
                                 PV_OK);
                assert_int_equal(one.n_tokens, items[b].n_tokens);
                assert_memory_equal(one.tokens, tk[b], one.n_tokens * sizeof(uint32_t));
                assert_int_equal(one.choice, st[b].choice);
                for (size_t k = 0; k < one.n_tokens; k++)
                    assert_true(fabsf(one.token_logprobs[k] - lp[b][k]) < 1e-5f);
            }
            float tl[B * 64];
            pv_errmsg_t em = {{0}};
            assert_int_equal(pv_policy_forward_items(p, items, B, w1, tl, NULL, &em), PV_OK);
            for (size_t b = 0, o = 0; b < B; b++)
                for (size_t k = 0; k < items[b].n_tokens; k++, o++)
                    assert_true(fabsf(tl[o] - lp[b][k]) < 1e-5f);
        }
        if (modes[m] != PV_POLICY_DECODE_RANK) /* the same context, two streams */
            assert_true(differ > 0);
        pv_policy_step_t st[2];
        pv_policy_ctx_t c2[2] = {lm_fixture_ctx(1), lm_fixture_ctx(1)};
        const char *const *k2[2] = {lm_fixture_cands, lm_fixture_cands};
        size_t n2[2] = {S_NC, S_NC};
        assert_int_equal(pv_policy_act_batch(p, c2, k2, n2, NULL, 0, wb, st), PV_ERR_INVAL);
        assert_int_equal(pv_policy_act_batch(p, c2, k2, n2, NULL, PV_POLICY_MAX_BATCH + 1, wb, st),
                         PV_ERR_INVAL);
        pv_policy_work_destroy(&w1);
        pv_policy_work_destroy(&wb);
        pv_policy_destroy(&p);
    }
}

/* A Hugging Face directory: read back bit-identically, acting the same. */
static void test_save_dir(void **state)
{
    s_fix_t *f = *state;
    char dir[256];
    assert_int_equal(pv_test_tmpdir(dir, sizeof dir, "lmdir"), 0);
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_policy_save_dir(f->p, dir, &em), PV_OK);
    pv_policy_spec_t sp = {
        .kind = "transformer", .path = dir, .env = "alfworld", .temperature = 0.9f};
    pv_policy_t *q = NULL;
    pv_policy_work_t *w = NULL;
    assert_int_equal(pv_policy_new(&sp, &q, &em), PV_OK);
    assert_int_equal(pv_policy_work_new(q, &w), PV_OK);
    assert_int_equal(pv_policy_n_params(q), pv_policy_n_params(f->p));
    assert_memory_equal(pv_policy_params_const(q), pv_policy_params_const(f->p),
                        pv_policy_n_params(q) * sizeof(float));
    assert_int_equal(pv_policy_spec(q)->prompt_window, 2);
    assert_int_equal(pv_policy_spec(q)->max_new_tokens, 12);
    assert_int_equal(pv_policy_n_tensors(q), pv_policy_n_tensors(f->p));
    assert_string_equal(pv_policy_tensor(q, 0)->name, "model.embed_tokens.weight");
    pv_policy_ctx_t ctx = lm_fixture_ctx(1);
    pv_policy_step_t a, b;
    assert_int_equal(pv_policy_act(f->p, &ctx, lm_fixture_cands, S_NC, NULL, f->w, &a), PV_OK);
    uint32_t ta[64];
    size_t na = a.n_tokens;
    memcpy(ta, a.tokens, na * sizeof *ta);
    assert_int_equal(pv_policy_act(q, &ctx, lm_fixture_cands, S_NC, NULL, w, &b), PV_OK);
    assert_int_equal(b.n_tokens, na);
    assert_memory_equal(b.tokens, ta, na * sizeof *ta);
    pv_policy_work_destroy(&w);
    pv_policy_destroy(&q);
    /* bow_mlp has no such form */
    pv_policy_spec_t bs = {.kind = "bow_mlp", .n_buckets = 64};
    pv_policy_t *bp = NULL;
    assert_int_equal(pv_policy_new(&bs, &bp, NULL), PV_OK);
    assert_int_equal(pv_policy_save_dir(bp, dir, &em), PV_ERR_UNSUPPORTED);
    assert_int_equal(pv_policy_token_space(bp), 0);
    pv_policy_destroy(&bp);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_errors(void **state)
{
    s_fix_t *f = *state;
    pv_errmsg_t em = {{0}};
    pv_policy_t *q = NULL;
    pv_policy_spec_t sp = {.kind = "transformer"};
    assert_int_equal(pv_policy_new(&sp, &q, &em), PV_ERR_INVAL);
    assert_non_null(strstr(em.text, "vocabulary"));
    sp = lm_fixture_spec(f->json, f->len, 1);
    sp.env = "nethack";
    assert_int_equal(pv_policy_new(&sp, &q, &em), PV_ERR_INVAL);
    sp = lm_fixture_spec(f->json, f->len, 1);
    sp.max_context = 20;
    assert_int_equal(pv_policy_new(&sp, &q, &em), PV_ERR_INVAL);
    sp = (pv_policy_spec_t){.kind = "transformer", .path = "/nonexistent/model"};
    assert_int_equal(pv_policy_new(&sp, &q, &em), PV_ERR_IO);
    assert_non_null(strstr(em.text, "/nonexistent/model"));
    assert_null(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prompt),
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_utf8_fix),
        cmocka_unit_test(test_generate_deterministic),
        cmocka_unit_test(test_logprobs_reproduced),
        cmocka_unit_test(test_backward_items),
        cmocka_unit_test(test_train_lanes),
        cmocka_unit_test(test_long_action_context),
        cmocka_unit_test(test_cache_reuse),
        cmocka_unit_test(test_cache_after_update),
        cmocka_unit_test(test_rank),
        cmocka_unit_test(test_act_batch),
        cmocka_unit_test(test_save_dir),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, s_setup, lm_fixture_teardown);
}
