/* test_lm_constrain.c - decode = constrain of the language-model policy (lm_constrain.c,
 * lm_policy.c, lm_train.c): every emitted action is an admissible one, written with its own
 * tokens; each token's behaviour log-prob is that of the distribution renormalised over the
 * trie's continuations (checked against an independent trie built here from the candidates'
 * tokens: forced tokens have log-prob exactly 0); the learner's recomputation reproduces
 * them on sampled episodes; the choice follows the candidates' constrained probabilities;
 * acting is deterministic from its seed. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/policy/policy.h"
#include "tests/support/lm_fixture.h"
#include "tests/support/pv_test.h"

/* Candidates with shared token prefixes and one a prefix of another ("examine potato 1" /
 * "examine potato 1 with sinkbasin 1"), so the trie has branches, forced runs and an end
 * token beside a continuation. */
static const char *const s_cands[] = {
    "go to fridge 1",
    "go to cabinet 1",
    "go to countertop 1",
    "open fridge 1",
    "examine potato 1",
    "examine potato 1 with sinkbasin 1",
    "take potato 1 from countertop 1",
    "look",
    "inventory",
};
#define S_NC (sizeof s_cands / sizeof s_cands[0])

typedef struct s_fix {
    lm_fixture_t lm;       /* first: lm_fixture_teardown reads it */
    uint32_t ct[S_NC][32]; /* every candidate's tokens (text and end token) */
    size_t cn[S_NC];
} s_fix_t;

static int s_setup(void **state)
{
    static s_fix_t f;
    memset(&f, 0, sizeof f);
    /* 24 new tokens: every candidate fits, its end token included */
    if (lm_fixture_setup(7, PV_POLICY_DECODE_CONSTRAIN, 24, &f.lm.json, &f.lm.len, &f.lm.p,
                         &f.lm.w) != 0)
        return -1;
    for (size_t c = 0; c < S_NC; c++)
        if (pv_policy_action_tokens(f.lm.p, s_cands[c], NULL, 0, f.lm.w, f.ct[c], 32, &f.cn[c]) !=
            PV_OK)
            return -1;
    *state = &f;
    return 0;
}

/* The distinct ids that follow prefix[0 .. k) in some candidate (an independent trie). */
static size_t s_next_ids(const s_fix_t *f, const uint32_t *prefix, size_t k)
{
    uint32_t seen[S_NC];
    size_t n = 0;
    for (size_t c = 0; c < S_NC; c++) {
        if (f->cn[c] <= k || memcmp(f->ct[c], prefix, k * sizeof *prefix) != 0)
            continue;
        size_t j = 0;
        while (j < n && seen[j] != f->ct[c][k])
            j++;
        if (j == n)
            seen[n++] = f->ct[c][k];
    }
    return n;
}

/* Many seeds and contexts: every action is a candidate, written with exactly its tokens;
 * forced tokens have log-prob 0, branching ones below 0; the step's log-prob is their sum. */
static void test_admissible_and_forced(void **state)
{
    s_fix_t *f = *state;
    size_t forced = 0, branch = 0, acts = 0, prefix_ends = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        pv_rng_t rng;
        pv_rng_seed(&rng, seed, 3);
        for (size_t t = 0; t < 5; t++) {
            pv_policy_ctx_t ctx = lm_fixture_ctx(t);
            pv_policy_step_t st;
            assert_int_equal(
                pv_policy_act(f->lm.p, &ctx, s_cands, S_NC, seed % 8 ? &rng : NULL, f->lm.w, &st),
                PV_OK);
            acts++;
            assert_true(st.choice < S_NC);
            assert_string_equal(st.action, s_cands[st.choice]);
            assert_int_equal(st.n_tokens, f->cn[st.choice]);
            assert_memory_equal(st.tokens, f->ct[st.choice], st.n_tokens * sizeof(uint32_t));
            double sum = 0;
            for (size_t k = 0; k < st.n_tokens; k++) {
                size_t na = s_next_ids(f, st.tokens, k);
                assert_true(na >= 1);
                if (na == 1) {
                    assert_true(st.token_logprobs[k] == 0.0f);
                    forced++;
                } else {
                    assert_true(st.token_logprobs[k] < 0.0f);
                    branch++;
                }
                sum += st.token_logprobs[k];
            }
            prefix_ends += st.choice == 4;
            assert_true(fabs(sum - st.logprob) < 1e-4);
            assert_true(st.entropy >= 0.0f);
        }
    }
    print_message("%zu actions: %zu forced tokens, %zu branching; the prefix candidate %zu times\n",
                  acts, forced, branch, prefix_ends);
    assert_true(forced > 0 && branch > 0);
    /* no candidate: nothing to constrain to */
    pv_policy_ctx_t ctx = lm_fixture_ctx(0);
    pv_policy_step_t st;
    assert_int_equal(pv_policy_act(f->lm.p, &ctx, NULL, 0, NULL, f->lm.w, &st), PV_ERR_INVAL);
}

/* Play sampled episodes (the KV cache carried across steps, several seeds); the training
 * forward reproduces every behaviour log-prob (1e-5), gives forced tokens log-prob and
 * entropy 0, and differs from the unmasked forward (full_vocab) where the token branches. */
static void test_learner_reproduces(void **state)
{
    s_fix_t *f = *state;
    enum { NS = 5, NE = 4 };
    uint32_t toks[NE * NS][32];
    float blp[NE * NS][32];
    pv_policy_item_t items[NE * NS];
    size_t total = 0;
    for (size_t e = 0; e < NE; e++) {
        pv_rng_t rng;
        pv_rng_seed(&rng, 100 + e, 0);
        for (size_t t = 0; t < NS; t++) {
            size_t i = e * NS + t;
            pv_policy_ctx_t ctx = lm_fixture_ctx(t);
            pv_policy_step_t st;
            assert_int_equal(pv_policy_act(f->lm.p, &ctx, s_cands, S_NC, &rng, f->lm.w, &st),
                             PV_OK);
            memcpy(toks[i], st.tokens, st.n_tokens * sizeof(uint32_t));
            memcpy(blp[i], st.token_logprobs, st.n_tokens * sizeof(float));
            items[i] = (pv_policy_item_t){.ctx = ctx,
                                          .cands = s_cands,
                                          .n_cands = S_NC,
                                          .tokens = toks[i],
                                          .n_tokens = st.n_tokens};
            total += st.n_tokens;
        }
    }
    float *lp = calloc(total, sizeof *lp), *ent = calloc(total, sizeof *ent);
    float *full = calloc(total, sizeof *full);
    assert_non_null(lp);
    assert_non_null(ent);
    assert_non_null(full);
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_policy_forward_items(f->lm.p, items, NE * NS, f->lm.w, lp, ent, &em),
                     PV_OK);
    double worst = 0;
    size_t differ = 0;
    for (size_t i = 0; i < NE * NS; i++)
        items[i].full_vocab = true;
    assert_int_equal(pv_policy_forward_items(f->lm.p, items, NE * NS, f->lm.w, full, NULL, &em),
                     PV_OK);
    for (size_t i = 0, at = 0; i < NE * NS; i++)
        for (size_t k = 0; k < items[i].n_tokens; k++, at++) {
            double d = fabs((double)lp[at] - blp[i][k]);
            worst = d > worst ? d : worst;
            if (s_next_ids(f, toks[i], k) == 1)
                assert_true(lp[at] == 0.0f && ent[at] == 0.0f);
            else
                assert_true(ent[at] > 0.0f);
            assert_true(full[at] <= lp[at] + 1e-6f); /* the mask only adds probability */
            differ += full[at] < lp[at] - 1e-3f;
        }
    print_message("behaviour vs training log-prob (constrain): worst |diff| %.2e over %zu tokens\n",
                  worst, total);
    assert_true(worst < 1e-5);
    assert_true(differ > 0);
    /* one step at a time: the same numbers */
    float l1[32];
    assert_int_equal(pv_policy_forward(f->lm.p, &items[3].ctx, s_cands, S_NC, toks[3],
                                       items[3].n_tokens, f->lm.w, l1, NULL),
                     PV_OK);
    for (size_t k = 0; k < items[3].n_tokens; k++)
        assert_true(fabsf(l1[k] - blp[3][k]) < 1e-5f);
    /* tokens that leave the trie (an action that is none of the candidates) are refused */
    uint32_t odd[32];
    size_t no = 0;
    assert_int_equal(
        pv_policy_action_tokens(f->lm.p, "go to sinkbasin 1", NULL, 0, f->lm.w, odd, 32, &no),
        PV_OK);
    items[0] = (pv_policy_item_t){
        .ctx = lm_fixture_ctx(0), .cands = s_cands, .n_cands = S_NC, .tokens = odd, .n_tokens = no};
    assert_int_equal(pv_policy_forward_items(f->lm.p, items, 1, f->lm.w, lp, NULL, &em),
                     PV_ERR_RANGE);
    assert_non_null(strstr(em.text, "candidates"));
    items[0].full_vocab = true; /* unless scored over the whole vocabulary */
    assert_int_equal(pv_policy_forward_items(f->lm.p, items, 1, f->lm.w, lp, NULL, &em), PV_OK);
    free(lp);
    free(ent);
    free(full);
}

/* The candidates' constrained log-probs (pv_policy_logprobs) form a distribution over the
 * candidates, act's step log-prob is the chosen one's, and sampled choices follow it. */
static void test_choice_distribution(void **state)
{
    s_fix_t *f = *state;
    pv_policy_ctx_t ctx = lm_fixture_ctx(4);
    float lp[S_NC], ent;
    assert_int_equal(pv_policy_logprobs(f->lm.p, &ctx, s_cands, S_NC, f->lm.w, lp, &ent), PV_OK);
    double z = 0;
    for (size_t c = 0; c < S_NC; c++)
        z += exp((double)lp[c]);
    print_message("sum over candidates of p(c) = %.6f\n", z);
    assert_true(fabs(z - 1.0) < 1e-4);
    size_t hits[S_NC] = {0};
    pv_rng_t rng;
    pv_rng_seed(&rng, 5, 0);
    enum { N = 400 };
    for (int i = 0; i < N; i++) {
        pv_policy_step_t st;
        assert_int_equal(pv_policy_act(f->lm.p, &ctx, s_cands, S_NC, &rng, f->lm.w, &st), PV_OK);
        assert_true(fabsf(st.logprob - lp[st.choice]) < 1e-4f);
        hits[st.choice]++;
    }
    for (size_t c = 0; c < S_NC; c++) {
        double want = N * exp((double)lp[c]);
        assert_true(fabs((double)hits[c] - want) < 5 * sqrt(want) + 3);
    }
}

/* The same seed, the same actions, tokens and log-probs (two works); other seeds differ. */
static void test_deterministic(void **state)
{
    s_fix_t *f = *state;
    pv_policy_work_t *w2 = NULL;
    assert_int_equal(pv_policy_work_new(f->lm.p, &w2), PV_OK);
    int differ = 0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        pv_rng_t r1, r2, r3;
        pv_rng_seed(&r1, seed, 0);
        pv_rng_seed(&r2, seed, 0);
        pv_rng_seed(&r3, seed + 50, 0);
        for (size_t t = 0; t < 3; t++) {
            pv_policy_ctx_t ctx = lm_fixture_ctx(t);
            pv_policy_step_t a, b, c;
            assert_int_equal(pv_policy_act(f->lm.p, &ctx, s_cands, S_NC, &r1, f->lm.w, &a), PV_OK);
            uint32_t ta[32];
            float la[32];
            size_t na = a.n_tokens, ca = a.choice;
            memcpy(ta, a.tokens, na * sizeof *ta);
            memcpy(la, a.token_logprobs, na * sizeof *la);
            assert_int_equal(pv_policy_act(f->lm.p, &ctx, s_cands, S_NC, &r2, w2, &b), PV_OK);
            assert_int_equal(b.choice, ca);
            assert_int_equal(b.n_tokens, na);
            assert_memory_equal(b.tokens, ta, na * sizeof *ta);
            for (size_t k = 0; k < na; k++) /* a warm cache vs a fresh prefill: 1e-5 */
                assert_true(fabsf(b.token_logprobs[k] - la[k]) < 1e-5f);
            assert_int_equal(pv_policy_act(f->lm.p, &ctx, s_cands, S_NC, &r3, f->lm.w, &c), PV_OK);
            differ += c.choice != ca;
        }
    }
    assert_true(differ > 0);
    pv_policy_ctx_t ctx = lm_fixture_ctx(2);
    pv_policy_step_t g1, g2;
    assert_int_equal(pv_policy_act(f->lm.p, &ctx, s_cands, S_NC, NULL, f->lm.w, &g1), PV_OK);
    size_t c1 = g1.choice;
    assert_int_equal(pv_policy_act(f->lm.p, &ctx, s_cands, S_NC, NULL, w2, &g2), PV_OK);
    assert_int_equal(g2.choice, c1);
    pv_policy_work_destroy(&w2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admissible_and_forced),
        cmocka_unit_test(test_learner_reproduces),
        cmocka_unit_test(test_choice_distribution),
        cmocka_unit_test(test_deterministic),
    };
    return cmocka_run_group_tests(tests, s_setup, lm_fixture_teardown);
}
