/* test_model_cache.c - generation with the KV cache gives the logits of the full forward
 * (prefill in one go or in chunks, one token at a time, an extension scoring every position,
 * batched decode of sequences sharing a prompt, a batched prefill of sequences of several
 * lengths), and sampling is deterministic from its seed with
 * the forward's log-probs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/model/kernels.h"
#include "common/model/transformer.h"

#define S_TOL 1e-5f /* absolute, on logits up to about 5 (initializer_range 0.2; checked) */

static pv_tf_t *s_model(pv_tf_family_t fam, int tied, int bias)
{
    pv_tf_config_t c;
    pv_tf_config_default(&c);
    c.family = fam;
    c.vocab_size = 50;
    c.hidden_size = 32;
    c.intermediate_size = 48;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.head_dim = 8;
    c.max_position_embeddings = 256;
    c.initializer_range = 0.2;
    c.tie_word_embeddings = tied;
    c.attention_bias = bias;
    c.qk_norm = fam == PV_TF_QWEN3;
    pv_tf_t *m = NULL;
    pv_tf_opts_t o = {.seed = 3};
    assert_int_equal(pv_tf_new(&c, &o, &m, NULL), PV_OK);
    /* nonzero biases so the cache path must apply them too */
    pv_rng_t rng;
    pv_rng_seed(&rng, 4, 4);
    for (size_t t = 0; t < pv_tf_n_tensors(m); t++) {
        const pv_tf_tensor_t *tt = pv_tf_tensor(m, t);
        for (size_t i = 0; tt->ndim == 1 && i < tt->numel; i++)
            pv_tf_params(m)[tt->offset + i] += (float)(0.2 * pv_rng_normal(&rng));
    }
    return m;
}

static float s_maxdiff(const float *a, const float *b, size_t n)
{
    float d = 0;
    for (size_t i = 0; i < n; i++)
        d = fabsf(a[i] - b[i]) > d ? fabsf(a[i] - b[i]) : d;
    return d;
}

static void s_tokens(uint32_t *t, size_t n, uint64_t seed)
{
    pv_rng_t rng;
    pv_rng_seed(&rng, seed, 9);
    for (size_t i = 0; i < n; i++)
        t[i] = pv_rng_bounded(&rng, 50);
}

/* prefill P tokens, then decode the rest one by one, or extend by all of them at once: every
 * position's logits match */
static void s_prefill_decode(pv_tf_t *m, size_t T, size_t P)
{
    size_t V = 50;
    uint32_t tok[200];
    s_tokens(tok, T, T * 31 + P);
    pv_tf_work_t *w = NULL;
    pv_tf_cache_t *c = NULL;
    assert_int_equal(pv_tf_work_new(m, 1, T, &w, NULL), PV_OK);
    assert_int_equal(pv_tf_cache_new(m, 1, T, &c, NULL), PV_OK);
    float *full = malloc(T * V * sizeof *full), lg[50];
    assert_int_equal(pv_tf_logits(m, w, tok, 1, T, full, NULL), PV_OK);
    float big = 0;
    for (size_t i = 0; i < T * V; i++)
        big = fabsf(full[i]) > big ? fabsf(full[i]) : big;
    assert_true(big > 1.0f); /* logits of order one: the absolute tolerance means something */
    assert_int_equal(pv_tf_prefill(m, c, 0, tok, P, lg, NULL), PV_OK);
    assert_int_equal(pv_tf_cache_len(c, 0), P);
    float worst = s_maxdiff(lg, full + (P - 1) * V, V);
    for (size_t t = P; t < T; t++) {
        size_t slot = 0;
        assert_int_equal(pv_tf_decode(m, c, &slot, tok + t, 1, lg, NULL), PV_OK);
        float d = s_maxdiff(lg, full + t * V, V);
        worst = d > worst ? d : worst;
    }
    /* the rest appended in one pv_tf_extend: every position's logits */
    pv_tf_cache_reset(c, 0);
    assert_int_equal(pv_tf_prefill(m, c, 0, tok, P, lg, NULL), PV_OK);
    float *ext = malloc(T * V * sizeof *ext);
    if (T > P) {
        assert_int_equal(pv_tf_extend(m, c, 0, tok + P, T - P, ext, NULL), PV_OK);
        float d = s_maxdiff(ext, full + P * V, (T - P) * V);
        worst = d > worst ? d : worst;
    }
    free(ext);
    print_message("  T %zu, prompt %zu: max |logit diff| %.2e (max |logit| %.1f)\n", T, P, worst,
                  big);
    assert_true(worst < S_TOL);
    free(full);
    pv_tf_cache_destroy(&c);
    pv_tf_work_destroy(&w);
}

static void test_prefill_decode(void **state)
{
    (void)state;
    pv_tf_family_t fams[] = {PV_TF_QWEN3, PV_TF_QWEN2, PV_TF_LLAMA};
    for (int f = 0; f < 3; f++) {
        pv_tf_t *m = s_model(fams[f], f != 1, f != 0);
        print_message(" %s\n", pv_tf_family_name(fams[f]));
        s_prefill_decode(m, 12, 1);    /* all but the first token decoded */
        s_prefill_decode(m, 12, 7);    /* a prompt, then decoding */
        s_prefill_decode(m, 150, 140); /* a prompt of three prefill chunks */
        s_prefill_decode(m, 150, 5);   /* an extension of three chunks */
        pv_tf_destroy(&m);
    }
}

/* A prompt prefilled once, copied to B slots, then B continuations decoded together (each
 * with its own tokens, one of them stopping early): each matches its own full forward. */
static void test_batched_shared_prompt(void **state)
{
    (void)state;
    pv_tf_t *m = s_model(PV_TF_QWEN3, 1, 0);
    enum { B = 4, P = 9, G = 6, T = P + G, V = 50 };
    uint32_t seq[B][T];
    s_tokens(seq[0], P, 77);
    for (int b = 0; b < B; b++) {
        memcpy(seq[b], seq[0], P * sizeof(uint32_t));
        s_tokens(seq[b] + P, G, 100 + b);
    }
    pv_tf_work_t *w = NULL;
    pv_tf_cache_t *c = NULL;
    assert_int_equal(pv_tf_work_new(m, B, T, &w, NULL), PV_OK);
    assert_int_equal(pv_tf_cache_new(m, B + 1, T, &c, NULL), PV_OK);
    float *full = malloc((size_t)B * T * V * sizeof *full), lg[(B + 1) * V], first[V];
    assert_int_equal(pv_tf_logits(m, w, &seq[0][0], B, T, full, NULL), PV_OK);
    /* the prompt goes to slot B, then is copied into slots 0..B-1 */
    assert_int_equal(pv_tf_prefill(m, c, B, seq[0], P, first, NULL), PV_OK);
    for (size_t b = 0; b < B; b++) {
        pv_tf_cache_copy(c, b, B);
        assert_int_equal(pv_tf_cache_len(c, b), P);
        assert_true(s_maxdiff(first, full + ((size_t)b * T + P - 1) * V, V) < S_TOL);
    }
    float worst = 0;
    for (size_t t = P; t < T; t++) {
        size_t slots[B], n = 0;
        uint32_t tk[B];
        for (size_t b = 0; b < B; b++) {
            if (b == 2 && t >= T - 2) /* sequence 2 ends early: the batch shrinks */
                continue;
            slots[n] = b;
            tk[n++] = seq[b][t];
        }
        assert_int_equal(pv_tf_decode(m, c, slots, tk, n, lg, NULL), PV_OK);
        for (size_t i = 0; i < n; i++) {
            float d = s_maxdiff(lg + i * V, full + (slots[i] * T + t) * V, V);
            worst = d > worst ? d : worst;
        }
    }
    print_message("  %d sequences sharing a %d-token prompt: max |logit diff| %.2e\n", B, P, worst);
    assert_true(worst < S_TOL);
    assert_int_equal(pv_tf_cache_len(c, 2), T - 2);
    assert_int_equal(pv_tf_cache_len(c, 0), T);
    /* errors: a full slot, a repeated slot, a bad token, a bad slot */
    pv_errmsg_t em;
    size_t s2[2] = {0, 0}, s1 = 1;
    uint32_t t2[2] = {1, 2}, bad = 50;
    assert_int_equal(pv_tf_decode(m, c, s2, t2, 1, lg, &em), PV_ERR_LIMIT);
    pv_tf_cache_reset(c, 1);
    assert_int_equal(pv_tf_cache_len(c, 1), 0);
    s2[0] = s2[1] = 1;
    assert_int_equal(pv_tf_decode(m, c, s2, t2, 2, lg, &em), PV_ERR_INVAL);
    assert_non_null(strstr(em.text, "twice"));
    assert_int_equal(pv_tf_decode(m, c, &s1, &bad, 1, lg, &em), PV_ERR_RANGE);
    s1 = B + 1;
    assert_int_equal(pv_tf_decode(m, c, &s1, t2, 1, lg, &em), PV_ERR_INVAL);
    assert_int_equal(pv_tf_prefill(m, c, 1, seq[0], T + 1, lg, &em), PV_ERR_LIMIT);
    free(full);
    pv_tf_cache_destroy(&c);
    pv_tf_work_destroy(&w);
    pv_tf_destroy(&m);
}

/* Generation is deterministic from the seed; each emitted token's behaviour log-prob is what
 * the training forward computes for it at the same temperature. */
/* A batched prefill of sequences of several lengths (one longer than a step's per-sequence
 * chunk, one of a single token, on top of slots already holding a prefix) gives every
 * sequence the full forward's next-token logits, and leaves caches that decode as the
 * one-by-one prefill's do; bad batches are refused before anything is appended. */
static void test_prefill_batch(void **state)
{
    (void)state;
    pv_tf_t *m = s_model(PV_TF_QWEN3, 1, 0);
    enum { B = 4, T = 200 };
    size_t V = 50, pre[B] = {0, 20, 3, 0}, len[B] = {150, 1, 70, 9}, slots[B] = {3, 0, 2, 4};
    uint32_t tok[B][T];
    pv_tf_work_t *w = NULL;
    pv_tf_cache_t *c = NULL, *c1 = NULL;
    assert_int_equal(pv_tf_work_new(m, 1, T, &w, NULL), PV_OK);
    assert_int_equal(pv_tf_cache_new(m, 6, T, &c, NULL), PV_OK);
    assert_int_equal(pv_tf_cache_new(m, 1, T, &c1, NULL), PV_OK);
    float *full = malloc(T * V * sizeof *full), *lg = malloc(B * V * sizeof *lg), one[50], d1[50];
    const uint32_t *runs[B];
    for (size_t b = 0; b < B; b++) {
        s_tokens(tok[b], pre[b] + len[b], 70 + b);
        if (pre[b])
            assert_int_equal(pv_tf_prefill(m, c, slots[b], tok[b], pre[b], NULL, NULL), PV_OK);
        runs[b] = tok[b] + pre[b];
    }
    assert_int_equal(pv_tf_prefill_batch(m, c, slots, runs, len, B, lg, NULL), PV_OK);
    for (size_t b = 0; b < B; b++) {
        size_t n = pre[b] + len[b];
        assert_int_equal(pv_tf_cache_len(c, slots[b]), n);
        assert_int_equal(pv_tf_logits(m, w, tok[b], 1, n, full, NULL), PV_OK);
        assert_true(s_maxdiff(lg + b * V, full + (n - 1) * V, V) < S_TOL);
        /* decoding one more token from the batch's cache and from a one-by-one prefill */
        pv_tf_cache_reset(c1, 0);
        assert_int_equal(pv_tf_prefill(m, c1, 0, tok[b], n, one, NULL), PV_OK);
        assert_true(s_maxdiff(lg + b * V, one, V) < S_TOL);
        uint32_t next = (uint32_t)(7 * b + 1);
        size_t s0 = 0;
        assert_int_equal(pv_tf_decode(m, c1, &s0, &next, 1, d1, NULL), PV_OK);
        assert_int_equal(pv_tf_decode(m, c, &slots[b], &next, 1, one, NULL), PV_OK);
        assert_true(s_maxdiff(d1, one, V) < S_TOL);
    }
    /* five sequences of 60 new tokens: the fifth is cut by the step's 256 rows */
    size_t s5[5] = {0, 1, 2, 3, 4}, n5[5] = {60, 60, 60, 60, 60};
    const uint32_t *r5[5];
    float *lg5 = malloc(5 * V * sizeof *lg5);
    for (size_t b = 0; b < 5; b++) {
        pv_tf_cache_reset(c, s5[b]);
        s_tokens(tok[b % B], 60, 90 + b);
        r5[b] = tok[b % B];
        if (b == 4) /* its own tokens: tok[0] is sequence 0's */
            r5[b] = tok[1] + 60;
    }
    s_tokens(tok[1] + 60, 60, 94);
    assert_int_equal(pv_tf_prefill_batch(m, c, s5, r5, n5, 5, lg5, NULL), PV_OK);
    for (size_t b = 0; b < 5; b++) {
        assert_int_equal(pv_tf_cache_len(c, s5[b]), 60);
        assert_int_equal(pv_tf_logits(m, w, r5[b], 1, 60, full, NULL), PV_OK);
        assert_true(s_maxdiff(lg5 + b * V, full + 59 * V, V) < S_TOL);
    }
    free(lg5);
    for (size_t b = 0; b < 6; b++)
        pv_tf_cache_reset(c, b);
    /* refused: a slot twice, an empty sequence, a sequence past the cache, B = 0 */
    size_t twice[2] = {1, 1}, l2[2] = {2, 2}, bad_n[2] = {2, 0}, big[2] = {2, T + 1};
    size_t sl2[2] = {1, 5};
    const uint32_t *r2[2] = {tok[0], tok[0]};
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_tf_prefill_batch(m, c, twice, r2, l2, 2, lg, &em), PV_ERR_INVAL);
    assert_non_null(strstr(em.text, "twice"));
    assert_int_equal(pv_tf_prefill_batch(m, c, sl2, r2, bad_n, 2, lg, NULL), PV_ERR_INVAL);
    assert_int_equal(pv_tf_prefill_batch(m, c, sl2, r2, big, 2, lg, NULL), PV_ERR_LIMIT);
    assert_int_equal(pv_tf_prefill_batch(m, c, sl2, r2, l2, 0, lg, NULL), PV_ERR_INVAL);
    assert_int_equal(pv_tf_cache_len(c, 1), 0); /* nothing appended by the refused calls */
    assert_int_equal(pv_tf_cache_len(c, 5), 0);
    free(full);
    free(lg);
    pv_tf_cache_destroy(&c);
    pv_tf_cache_destroy(&c1);
    pv_tf_work_destroy(&w);
    pv_tf_destroy(&m);
}

static void test_sample(void **state)
{
    (void)state;
    pv_tf_t *m = s_model(PV_TF_LLAMA, 0, 0);
    enum { P = 5, G = 20, V = 50 };
    const float temp = 0.7f;
    uint32_t run[2][P + G];
    float lps[2][G];
    for (int r = 0; r < 2; r++) {
        pv_tf_cache_t *c = NULL;
        assert_int_equal(pv_tf_cache_new(m, 1, P + G, &c, NULL), PV_OK);
        pv_rng_t rng;
        pv_rng_seed(&rng, 42, 1);
        s_tokens(run[r], P, 5);
        float lg[V];
        assert_int_equal(pv_tf_prefill(m, c, 0, run[r], P, lg, NULL), PV_OK);
        for (size_t t = 0; t < G; t++) {
            pv_tf_sample(lg, V, temp, &rng, &run[r][P + t], &lps[r][t]);
            size_t slot = 0;
            if (t + 1 < G)
                assert_int_equal(pv_tf_decode(m, c, &slot, &run[r][P + t], 1, lg, NULL), PV_OK);
        }
        pv_tf_cache_destroy(&c);
    }
    assert_memory_equal(run[0], run[1], sizeof run[0]);
    assert_memory_equal(lps[0], lps[1], sizeof lps[0]);
    /* the learner's recomputation: targets are the generated tokens */
    pv_tf_work_t *w = NULL;
    assert_int_equal(pv_tf_work_new(m, 1, P + G, &w, NULL), PV_OK);
    uint32_t tgt[P + G];
    float lp[P + G];
    for (size_t t = 0; t < P + G; t++)
        tgt[t] = t + 1 >= P && t + 1 < P + G ? run[0][t + 1] : PV_TF_NO_TARGET;
    assert_int_equal(pv_tf_forward(m, w, run[0], tgt, 1, P + G, temp, lp, NULL, NULL), PV_OK);
    float worst = 0;
    for (size_t t = 0; t < G; t++) {
        float d = fabsf(lp[P - 1 + t] - lps[0][t]);
        worst = d > worst ? d : worst;
    }
    print_message("  behaviour vs recomputed log-prob: max diff %.2e\n", worst);
    assert_true(worst < 1e-5f);
    /* greedy is the argmax; the sampled frequencies follow softmax(logits / T) */
    float lg[4] = {0.0f, 1.0f, 2.0f, -1.0f}, lpg;
    uint32_t tk;
    pv_tf_sample(lg, 4, 1.0f, NULL, &tk, &lpg);
    assert_int_equal(tk, 2);
    double z = exp(0.0) + exp(1.0) + exp(2.0) + exp(-1.0);
    assert_true(fabs(lpg - (2.0 - log(z))) < 1e-6);
    pv_rng_t rng;
    pv_rng_seed(&rng, 1, 2);
    int count[4] = {0};
    for (int i = 0; i < 40000; i++) {
        pv_tf_sample(lg, 4, 1.0f, &rng, &tk, NULL);
        count[tk]++;
    }
    for (int j = 0; j < 4; j++)
        assert_true(fabs(count[j] / 40000.0 - exp(lg[j]) / z) < 0.01);
    pv_tf_work_destroy(&w);
    pv_tf_destroy(&m);
}

int main(void)
{
    pv_k_blas_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefill_decode),
        cmocka_unit_test(test_batched_shared_prompt),
        cmocka_unit_test(test_prefill_batch),
        cmocka_unit_test(test_sample),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
