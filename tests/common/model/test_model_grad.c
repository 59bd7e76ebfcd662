/* test_model_grad.c - the transformer's tensor table (HF names and shapes, sizes of the two
 * named configs), deterministic init, and the gradient of the whole training loss against
 * finite differences for every parameter of tiny Llama / Qwen2 / Qwen3 models, and of the
 * masked loss of constrained decoding (pv_tf_forward_masked). */
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
#include "tests/common/model/fd.h"

/* Whole-model finite differences in float32. Plain central differences cannot get below
 * about 1e-3 of the gradient's scale here (h = 1e-2: truncation 1.3e-2 on the embedding;
 * h = 1e-3: rounding noise 3e-3 on the q biases); Richardson's extrapolation (fd.h) at
 * h = 1e-2 gives a worst tensor near 7e-4 (measured). A gradient 2% off must fail the same
 * comparison. */
#define S_H   1e-2f
#define S_TOL 5e-3

/* A tiny model: H*D (16) differs from C (8) as in Qwen3, two query heads per kv head. */
static void s_tiny(pv_tf_config_t *c, pv_tf_family_t fam, int tied, int bias)
{
    pv_tf_config_default(c);
    c->family = fam;
    c->vocab_size = 13;
    c->hidden_size = 8;
    c->intermediate_size = 12;
    c->num_hidden_layers = 2;
    c->num_attention_heads = 4;
    c->num_key_value_heads = 2;
    c->head_dim = 4;
    c->max_position_embeddings = 32;
    c->initializer_range = 0.3; /* far enough from linear for the FD to see every term */
    c->tie_word_embeddings = tied;
    c->attention_bias = bias;
    c->qk_norm = fam == PV_TF_QWEN3;
}

static void test_table(void **state)
{
    (void)state;
    pv_tf_config_t c;
    pv_tf_t *m = NULL;
    pv_errmsg_t em;
    pv_tf_config_default(&c);
    assert_int_equal(pv_tf_new(&c, NULL, &m, &em), PV_OK);
    assert_int_equal(pv_tf_n_params(m), 1771456);
    assert_non_null(pv_tf_find(m, "model.layers.3.self_attn.q_norm.weight"));
    assert_null(pv_tf_find(m, "lm_head.weight")); /* tied */
    assert_null(pv_tf_find(m, "model.layers.0.self_attn.q_proj.bias"));
    const pv_tf_tensor_t *t = pv_tf_find(m, "model.layers.1.self_attn.k_proj.weight");
    assert_non_null(t);
    assert_true(t->ndim == 2 && t->shape[0] == 64 && t->shape[1] == 192);
    t = pv_tf_find(m, "model.layers.2.mlp.down_proj.weight");
    assert_true(t && t->shape[0] == 192 && t->shape[1] == 512);
    /* the table tiles the buffer in order */
    size_t at = 0;
    for (size_t i = 0; i < pv_tf_n_tensors(m); i++) {
        assert_int_equal(pv_tf_tensor(m, i)->offset, at);
        at += pv_tf_tensor(m, i)->numel;
    }
    assert_int_equal(at, pv_tf_n_params(m));
    assert_string_equal(pv_tf_tensor(m, 0)->name, "model.embed_tokens.weight");
    pv_tf_destroy(&m);
    assert_null(m);
    pv_tf_config_20m(&c);
    assert_int_equal(pv_tf_new(&c, NULL, &m, &em), PV_OK);
    assert_int_equal(pv_tf_n_params(m), 19799296);
    pv_tf_destroy(&m);
    /* qwen2: q/k/v biases, no o_proj bias; untied: lm_head */
    s_tiny(&c, PV_TF_QWEN2, 0, 1);
    assert_int_equal(pv_tf_new(&c, NULL, &m, &em), PV_OK);
    assert_non_null(pv_tf_find(m, "model.layers.1.self_attn.v_proj.bias"));
    assert_null(pv_tf_find(m, "model.layers.1.self_attn.o_proj.bias"));
    assert_null(pv_tf_find(m, "model.layers.1.self_attn.q_norm.weight"));
    t = pv_tf_find(m, "lm_head.weight");
    assert_true(t && t->shape[0] == 13 && t->shape[1] == 8);
    pv_tf_destroy(&m);
    /* llama with attention_bias: o_proj has one too */
    s_tiny(&c, PV_TF_LLAMA, 1, 1);
    assert_int_equal(pv_tf_new(&c, NULL, &m, &em), PV_OK);
    assert_non_null(pv_tf_find(m, "model.layers.0.self_attn.o_proj.bias"));
    pv_tf_destroy(&m);
}

static void test_config_check(void **state)
{
    (void)state;
    pv_tf_config_t c;
    pv_errmsg_t em;
    pv_tf_t *m = NULL;
    s_tiny(&c, PV_TF_QWEN2, 0, 0);
    assert_int_equal(pv_tf_new(&c, NULL, &m, &em), PV_ERR_INVAL); /* qwen2 needs its biases */
    assert_non_null(strstr(em.text, "qwen2"));
    s_tiny(&c, PV_TF_LLAMA, 0, 0);
    c.num_key_value_heads = 3;
    assert_int_equal(pv_tf_config_check(&c, &em), PV_ERR_INVAL);
    assert_non_null(strstr(em.text, "num_key_value_heads"));
    s_tiny(&c, PV_TF_LLAMA, 0, 0);
    c.head_dim = 5;
    assert_int_equal(pv_tf_config_check(&c, &em), PV_ERR_INVAL);
    s_tiny(&c, PV_TF_LLAMA, 0, 0);
    c.hidden_size = 0;
    assert_int_equal(pv_tf_config_check(&c, &em), PV_ERR_INVAL);
    assert_non_null(strstr(em.text, "hidden_size"));
    s_tiny(&c, PV_TF_QWEN3, 0, 0);
    c.qk_norm = 0;
    assert_int_equal(pv_tf_config_check(&c, &em), PV_ERR_INVAL);
    assert_null(m);
}

static void test_init_deterministic(void **state)
{
    (void)state;
    pv_tf_config_t c;
    s_tiny(&c, PV_TF_QWEN3, 1, 0);
    pv_tf_t *a = NULL, *b = NULL;
    pv_tf_opts_t o1 = {.seed = 7}, o2 = {.seed = 8};
    assert_int_equal(pv_tf_new(&c, &o1, &a, NULL), PV_OK);
    assert_int_equal(pv_tf_new(&c, &o1, &b, NULL), PV_OK);
    size_t n = pv_tf_n_params(a);
    assert_memory_equal(pv_tf_params(a), pv_tf_params(b), n * sizeof(float));
    pv_tf_destroy(&b);
    assert_int_equal(pv_tf_new(&c, &o2, &b, NULL), PV_OK);
    assert_memory_not_equal(pv_tf_params(a), pv_tf_params(b), n * sizeof(float));
    /* norms start at one, weights have std initializer_range */
    const pv_tf_tensor_t *t = pv_tf_find(a, "model.norm.weight");
    assert_true(pv_tf_params(a)[t->offset] == 1.0f);
    t = pv_tf_find(a, "model.embed_tokens.weight");
    double ss = 0;
    for (size_t i = 0; i < t->numel; i++)
        ss += (double)pv_tf_params(a)[t->offset + i] * pv_tf_params(a)[t->offset + i];
    assert_true(fabs(sqrt(ss / (double)t->numel) - 0.3) < 0.05);
    pv_tf_destroy(&a);
    pv_tf_destroy(&b);
}

/* The loss L = sum a logp + b ent over a batch, for the finite differences. */
typedef struct s_loss_ctx {
    pv_tf_t *m;
    pv_tf_work_t *w;
    uint32_t tok[12], tgt[12];
    float a[12], b[12], lp[12], ent[12];
    size_t B, T;
    float temp;
    const pv_tf_allow_t *allow; /* NULL: the whole vocabulary */
} s_loss_ctx_t;

static double s_loss(void *vctx)
{
    s_loss_ctx_t *x = vctx;
    assert_int_equal(pv_tf_forward_masked(x->m, x->w, x->tok, x->tgt, x->B, x->T, x->temp, x->allow,
                                          x->lp, x->ent, NULL),
                     PV_OK);
    return pv_fd_dot(x->a, x->lp, x->B * x->T) + pv_fd_dot(x->b, x->ent, x->B * x->T);
}

/* The masks of the masked case (targets filled in by s_masks): position i allows s_an[i] ids
 * from s_aids + s_abeg[i]; 0 = all. */
static uint32_t s_aids[12 * 4];
static size_t s_abeg[12];
static uint32_t s_an[12];

/* Per position with a target: i % 3 == 0 forced (the target alone), 1 the target and two
 * other ids, 2 the whole vocabulary. */
static void s_masks(const uint32_t *tgt, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        s_abeg[i] = 4 * i;
        s_an[i] = 0;
        if (tgt[i] == PV_TF_NO_TARGET || i % 3 == 2)
            continue;
        s_aids[4 * i] = (tgt[i] + 5) % 13; /* the target not first */
        s_aids[4 * i + 1] = tgt[i];
        s_aids[4 * i + 2] = (tgt[i] + 9) % 13;
        s_an[i] = i % 3 == 0 ? 1 : 3;
        if (i % 3 == 0)
            s_aids[4 * i] = tgt[i];
    }
}

static void s_grad_case_m(pv_tf_family_t fam, int tied, int bias, int masked, const char *label)
{
    pv_tf_config_t c;
    s_tiny(&c, fam, tied, bias);
    s_loss_ctx_t x = {.B = 2, .T = 6, .temp = 0.8f};
    pv_tf_allow_t allow = {.ids = s_aids, .begin = s_abeg, .n = s_an};
    pv_tf_opts_t o = {.seed = 11};
    assert_int_equal(pv_tf_new(&c, &o, &x.m, NULL), PV_OK);
    assert_int_equal(pv_tf_work_new(x.m, 2, 8, &x.w, NULL), PV_OK);
    pv_rng_t rng;
    pv_rng_seed(&rng, 12, 1);
    for (size_t i = 0; i < 12; i++) {
        x.tok[i] = pv_rng_bounded(&rng, 13);
        x.a[i] = (float)pv_rng_normal(&rng);
        x.b[i] = (float)pv_rng_normal(&rng);
    }
    for (size_t i = 0; i < 12; i++) /* next-token targets; the first two and the last none */
        x.tgt[i] = (i % 6 < 2 || i % 6 == 5) ? PV_TF_NO_TARGET : x.tok[i + 1];
    if (masked) {
        s_masks(x.tgt, 12);
        x.allow = &allow;
    }
    size_t n = pv_tf_n_params(x.m);
    /* biases and norm weights away from 0 and 1, so a backward that forgot one shows */
    for (size_t t = 0; t < pv_tf_n_tensors(x.m); t++) {
        const pv_tf_tensor_t *tt = pv_tf_tensor(x.m, t);
        for (size_t i = 0; tt->ndim == 1 && i < tt->numel; i++)
            pv_tf_params(x.m)[tt->offset + i] += (float)(0.3 * pv_rng_normal(&rng));
    }
    float *g = calloc(n, sizeof *g);
    s_loss(&x);
    for (size_t i = 0; i < 12; i++)
        if (x.tgt[i] == PV_TF_NO_TARGET)
            assert_true(x.lp[i] == 0.0f && x.ent[i] == 0.0f);
    if (masked) /* forced positions: log-prob and entropy exactly 0 */
        for (size_t i = 0; i < 12; i++)
            if (x.tgt[i] != PV_TF_NO_TARGET && s_an[i] == 1)
                assert_true(x.lp[i] == 0.0f && x.ent[i] == 0.0f);
    assert_int_equal(pv_tf_backward(x.m, x.w, x.a, x.b, g), PV_OK);
    print_message("  %s\n", label);
    double worst = 0;
    for (size_t t = 0; t < pv_tf_n_tensors(x.m); t++) {
        const pv_tf_tensor_t *tt = pv_tf_tensor(x.m, t);
        float *p = pv_tf_params(x.m) + tt->offset;
        double e = pv_fd_err(s_loss, &x, p, g + tt->offset, tt->numel, S_H);
        double bad = pv_fd_err_scaled(s_loss, &x, p, g + tt->offset, tt->numel, S_H, 1.02);
        worst = e > worst ? e : worst;
        if (getenv("PV_FD_VERBOSE") || e > S_TOL || bad < S_TOL)
            print_message("    %-44s fd err %.2e (2%% off: %.2e)\n", tt->name, e, bad);
        assert_true(e < S_TOL);
        assert_true(bad > S_TOL);
    }
    print_message("    %zu parameters, worst tensor fd err %.2e\n", n, worst);
    /* backward adds: a second call doubles the gradient */
    float *g2 = calloc(n, sizeof *g2);
    memcpy(g2, g, n * sizeof *g);
    s_loss(&x);
    assert_int_equal(pv_tf_backward(x.m, x.w, x.a, x.b, g2), PV_OK);
    for (size_t i = 0; i < n; i++)
        assert_true(fabsf(g2[i] - 2 * g[i]) <= 1e-6f * (1 + fabsf(g[i])));
    free(g);
    free(g2);
    pv_tf_work_destroy(&x.w);
    pv_tf_destroy(&x.m);
}

static void s_grad_case(pv_tf_family_t fam, int tied, int bias, const char *label)
{
    s_grad_case_m(fam, tied, bias, 0, label);
}

static void test_grad_qwen3_tied(void **state)
{
    (void)state;
    s_grad_case(PV_TF_QWEN3, 1, 0, "qwen3, q/k norm, tied embedding");
}

static void test_grad_qwen2_bias(void **state)
{
    (void)state;
    s_grad_case(PV_TF_QWEN2, 0, 1, "qwen2, q/k/v biases, lm_head");
}

static void test_grad_llama_bias(void **state)
{
    (void)state;
    s_grad_case(PV_TF_LLAMA, 0, 1, "llama, attention_bias (o_proj too), lm_head");
}

/* The masked loss (constrained decoding): finite differences as above, with forced,
 * three-id and unrestricted positions. */
static void test_grad_masked(void **state)
{
    (void)state;
    s_grad_case_m(PV_TF_QWEN3, 1, 0, 1, "qwen3, masked softmax (forced / 3 ids / all)");
}

/* The masked log-probs against the raw logits: log-softmax renormalised over the allowed ids
 * (computed here from pv_tf_logits); a forced position gets no gradient at all; a target
 * outside its allowed ids, or an allowed id past the vocabulary, is PV_ERR_RANGE. */
static void test_masked_values(void **state)
{
    (void)state;
    pv_tf_config_t c;
    s_tiny(&c, PV_TF_QWEN2, 0, 1);
    pv_tf_t *m = NULL;
    pv_tf_work_t *w = NULL;
    pv_tf_opts_t o = {.seed = 5};
    assert_int_equal(pv_tf_new(&c, &o, &m, NULL), PV_OK);
    assert_int_equal(pv_tf_work_new(m, 2, 8, &w, NULL), PV_OK);
    uint32_t tok[12], tgt[12];
    for (size_t i = 0; i < 12; i++)
        tok[i] = (uint32_t)(i * 7 + 3) % 13;
    for (size_t i = 0; i < 12; i++)
        tgt[i] = (i % 6 < 2 || i % 6 == 5) ? PV_TF_NO_TARGET : tok[i + 1];
    s_masks(tgt, 12);
    pv_tf_allow_t allow = {.ids = s_aids, .begin = s_abeg, .n = s_an};
    float lp[12], ent[12], z[12 * 13];
    const float T = 0.7f;
    assert_int_equal(pv_tf_logits(m, w, tok, 2, 6, z, NULL), PV_OK);
    assert_int_equal(pv_tf_forward_masked(m, w, tok, tgt, 2, 6, T, &allow, lp, ent, NULL), PV_OK);
    size_t n3 = 0;
    for (size_t i = 0; i < 12; i++) {
        if (tgt[i] == PV_TF_NO_TARGET)
            continue;
        const float *zi = z + i * 13;
        double mx = -INFINITY, s = 0, h = 0;
        size_t na = s_an[i] ? s_an[i] : 13;
        const uint32_t *ids = s_aids + s_abeg[i];
        for (size_t k = 0; k < na; k++)
            mx = fmax(mx, zi[s_an[i] ? ids[k] : k] / T);
        for (size_t k = 0; k < na; k++)
            s += exp(zi[s_an[i] ? ids[k] : k] / T - mx);
        for (size_t k = 0; k < na; k++) {
            double l = zi[s_an[i] ? ids[k] : k] / T - mx - log(s);
            h -= exp(l) * l;
        }
        double want = zi[tgt[i]] / T - mx - log(s);
        assert_true(fabs(lp[i] - want) < 1e-5);
        assert_true(fabs(ent[i] - h) < 1e-5);
        n3 += s_an[i] == 3;
        if (s_an[i] == 3) /* the mask matters: not the unmasked log-prob */
            assert_true(lp[i] > zi[tgt[i]] / T - pv_k_logsumexp(zi, 13, 1.0f / T) + 1e-3);
    }
    assert_true(n3 > 0);
    /* a loss only on forced positions has no gradient */
    size_t np = pv_tf_n_params(m);
    float *g = calloc(np, sizeof *g), dlp[12] = {0}, dent[12] = {0};
    assert_non_null(g);
    for (size_t i = 0; i < 12; i++)
        if (tgt[i] != PV_TF_NO_TARGET && s_an[i] == 1)
            dlp[i] = dent[i] = 1.5f;
    assert_int_equal(pv_tf_backward(m, w, dlp, dent, g), PV_OK);
    for (size_t i = 0; i < np; i++)
        assert_true(g[i] == 0.0f);
    free(g);
    pv_errmsg_t em = {{0}};
    s_aids[s_abeg[4] + 1] = (tgt[4] + 1) % 13; /* position 4 (three ids) loses its target */
    assert_int_equal(pv_tf_forward_masked(m, w, tok, tgt, 2, 6, T, &allow, lp, ent, &em),
                     PV_ERR_RANGE);
    assert_non_null(strstr(em.text, "allowed"));
    s_aids[s_abeg[4] + 1] = 13;
    assert_int_equal(pv_tf_forward_masked(m, w, tok, tgt, 2, 6, T, &allow, lp, ent, &em),
                     PV_ERR_RANGE);
    /* more allowed ids than the vocabulary (duplicates) would overrun the mask's scratch */
    uint32_t many[14];
    for (size_t k = 0; k < 14; k++)
        many[k] = tgt[4];
    size_t mbeg[12] = {0};
    uint32_t mn[12] = {0};
    mn[4] = 14;
    pv_tf_allow_t over = {.ids = many, .begin = mbeg, .n = mn};
    assert_int_equal(pv_tf_forward_masked(m, w, tok, tgt, 2, 6, T, &over, lp, ent, &em),
                     PV_ERR_RANGE);
    assert_non_null(strstr(em.text, "vocab_size"));
    pv_tf_work_destroy(&w);
    pv_tf_destroy(&m);
}

/* Right padding does not change the earlier positions (causal attention); errors. */
static void test_padding_and_errors(void **state)
{
    (void)state;
    pv_tf_config_t c;
    s_tiny(&c, PV_TF_QWEN3, 1, 0);
    pv_tf_t *m = NULL;
    pv_tf_work_t *w = NULL;
    pv_errmsg_t em;
    assert_int_equal(pv_tf_new(&c, NULL, &m, NULL), PV_OK);
    assert_int_equal(pv_tf_work_new(m, 2, 8, &w, NULL), PV_OK);
    uint32_t tok[16] = {1, 2, 3, 4, 5, 0, 0, 0, 7, 8, 9, 10, 11, 12, 1, 2};
    uint32_t tgt[16], tgt1[5];
    for (int i = 0; i < 16; i++)
        tgt[i] = (i % 8) < 4 ? tok[i + 1] : PV_TF_NO_TARGET;
    for (int i = 0; i < 4; i++)
        tgt1[i] = tok[i + 1];
    tgt1[4] = PV_TF_NO_TARGET;
    float lp[16], lp1[5], g[1] = {0};
    assert_int_equal(pv_tf_backward(m, w, lp, NULL, g), PV_ERR_STATE);
    assert_int_equal(pv_tf_forward(m, w, tok, tgt, 2, 8, 1.0f, lp, NULL, &em), PV_OK);
    assert_int_equal(pv_tf_forward(m, w, tok, tgt1, 1, 5, 1.0f, lp1, NULL, &em), PV_OK);
    for (int i = 0; i < 4; i++)
        assert_true(fabsf(lp[i] - lp1[i]) < 1e-6f);
    tok[3] = 13;
    assert_int_equal(pv_tf_forward(m, w, tok, tgt, 2, 8, 1.0f, lp, NULL, &em), PV_ERR_RANGE);
    assert_non_null(strstr(em.text, "vocab_size"));
    tok[3] = 4;
    tgt[0] = 99;
    assert_int_equal(pv_tf_forward(m, w, tok, tgt, 2, 8, 1.0f, lp, NULL, &em), PV_ERR_RANGE);
    tgt[0] = 2;
    assert_int_equal(pv_tf_forward(m, w, tok, tgt, 3, 8, 1.0f, lp, NULL, &em), PV_ERR_INVAL);
    assert_int_equal(pv_tf_forward(m, w, tok, tgt, 2, 8, 0.0f, lp, NULL, &em), PV_ERR_INVAL);
    assert_int_equal(pv_tf_work_new(m, 1, 33, &(pv_tf_work_t *){NULL}, &em), PV_ERR_INVAL);
    pv_tf_work_destroy(&w);
    pv_tf_destroy(&m);
}

int main(void)
{
    pv_k_blas_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_config_check),
        cmocka_unit_test(test_init_deterministic),
        cmocka_unit_test(test_grad_qwen3_tied),
        cmocka_unit_test(test_grad_qwen2_bias),
        cmocka_unit_test(test_grad_llama_bias),
        cmocka_unit_test(test_grad_masked),
        cmocka_unit_test(test_masked_values),
        cmocka_unit_test(test_padding_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
