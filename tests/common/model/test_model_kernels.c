/* test_model_kernels.c - every kernel's backward against central finite differences of its
 * forward (common/model/kernels.h), plus exact identities the forwards must satisfy. */
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
#include "tests/common/model/fd.h"

#define S_TOL 1e-3 /* see fd.h */
#define S_H   1e-2f

/* One op under test: inputs, its output (n_out) and the fixed loss weights r (n_out). */
typedef struct s_op {
    int kind;
    size_t N, C, K, O, H, KV, D, n, p0;
    float eps, inv_temp;
    float *x, *w, *b, *q, *k, *v;
    float *out, *aux, *r, *r2;
    uint32_t *tok;
    const float *cos_t, *sin_t;
} s_op_t;

enum { K_EMBED, K_RMSNORM, K_MATMUL, K_ROPE, K_ATTN, K_SWIGLU, K_ADD, K_LOGSOFTMAX };

static double s_loss(void *vctx)
{
    s_op_t *o = vctx;
    size_t n_out = 0;
    switch (o->kind) {
    case K_EMBED:
        pv_k_embed_fwd(o->out, o->w, o->tok, o->N, o->C);
        n_out = o->N * o->C;
        break;
    case K_RMSNORM:
        pv_k_rmsnorm_fwd(o->out, o->aux, o->x, o->w, o->N, o->C, o->eps);
        n_out = o->N * o->C;
        break;
    case K_MATMUL:
        pv_k_matmul_fwd(o->out, o->x, o->w, o->b, o->N, o->K, o->O);
        n_out = o->N * o->O;
        break;
    case K_ROPE:
        pv_k_rope_fwd(o->out, o->x, o->cos_t, o->sin_t, o->n, o->p0, o->H, o->D);
        n_out = o->n * o->H * o->D;
        break;
    case K_ATTN:
        pv_k_attn_fwd(o->out, o->aux, o->q, o->k, o->v, o->n, o->p0, o->H, o->KV, o->D);
        n_out = o->n * o->H * o->D;
        break;
    case K_SWIGLU:
        pv_k_swiglu_fwd(o->out, o->x, o->w, o->n);
        n_out = o->n;
        break;
    case K_ADD:
        pv_k_add_fwd(o->out, o->x, o->w, o->n);
        n_out = o->n;
        break;
    case K_LOGSOFTMAX: {
        /* L = sum r lp + r2 ent, from a copy (the kernel works in place) */
        memcpy(o->out, o->x, o->N * o->O * sizeof(float));
        float lp[64], ent[64];
        pv_k_logsoftmax_fwd(o->out, lp, ent, o->tok, o->N, o->O, o->inv_temp);
        return pv_fd_dot(o->r, lp, o->N) + pv_fd_dot(o->r2, ent, o->N);
    }
    }
    return pv_fd_dot(o->r, o->out, n_out);
}

static float *s_new(size_t n, double sd, pv_rng_t *rng)
{
    float *p = calloc(n ? n : 1, sizeof *p);
    assert_non_null(p);
    pv_fd_fill(p, n, sd, rng);
    return p;
}

/* The FD error for x, and that the same comparison rejects the gradient 1% off. */
static void s_expect(s_op_t *o, float *x, const float *g, size_t n, const char *what)
{
    double e = pv_fd_err(s_loss, o, x, g, n, S_H);
    double bad = pv_fd_err_scaled(s_loss, o, x, g, n, S_H, 1.01);
    print_message("  %-28s fd err %.2e (a 1%% wrong gradient: %.2e)\n", what, e, bad);
    assert_true(e < S_TOL);
    assert_true(bad > S_TOL);
}

static void test_embed(void **state)
{
    (void)state;
    pv_rng_t rng;
    pv_rng_seed(&rng, 1, 1);
    uint32_t tok[] = {3, 0, 3, 2};
    s_op_t o = {.kind = K_EMBED, .N = 4, .C = 5, .tok = tok};
    o.w = s_new(4 * 5, 1, &rng);
    o.out = s_new(4 * 5, 0, &rng);
    o.r = s_new(4 * 5, 1, &rng);
    float *dw = s_new(4 * 5, 0, &rng);
    pv_k_embed_bwd(dw, o.r, tok, 4, 5);
    s_expect(&o, o.w, dw, 20, "embedding table");
    free(o.w), free(o.out), free(o.r), free(dw);
}

static void test_rmsnorm(void **state)
{
    (void)state;
    pv_rng_t rng;
    pv_rng_seed(&rng, 2, 1);
    size_t N = 3, C = 7;
    s_op_t o = {.kind = K_RMSNORM, .N = N, .C = C, .eps = 1e-5f};
    o.x = s_new(N * C, 1, &rng);
    o.w = s_new(C, 1, &rng);
    o.out = s_new(N * C, 0, &rng);
    o.aux = s_new(N, 0, &rng);
    o.r = s_new(N * C, 1, &rng);
    float *dx = s_new(N * C, 0, &rng), *dw = s_new(C, 0, &rng);
    s_loss(&o);
    pv_k_rmsnorm_bwd(dx, dw, o.r, o.x, o.w, o.aux, N, C);
    s_expect(&o, o.x, dx, N * C, "rmsnorm x");
    s_expect(&o, o.w, dw, C, "rmsnorm weight");
    /* identity: with w = 1 every output row has mean square 1 / (1 + eps / ms) */
    for (size_t c = 0; c < C; c++)
        o.w[c] = 1.0f;
    s_loss(&o);
    double ms = 0, msx = 0;
    for (size_t c = 0; c < C; c++)
        ms += (double)o.out[c] * o.out[c], msx += (double)o.x[c] * o.x[c];
    ms /= (double)C, msx /= (double)C;
    assert_true(fabs(ms - msx / (msx + 1e-5)) < 1e-5);
    free(o.x), free(o.w), free(o.out), free(o.aux), free(o.r), free(dx), free(dw);
}

static void test_matmul(void **state)
{
    (void)state;
    pv_rng_t rng;
    pv_rng_seed(&rng, 3, 1);
    size_t N = 4, K = 6, O = 5;
    s_op_t o = {.kind = K_MATMUL, .N = N, .K = K, .O = O};
    o.x = s_new(N * K, 1, &rng);
    o.w = s_new(O * K, 1, &rng);
    o.b = s_new(O, 1, &rng);
    o.out = s_new(N * O, 0, &rng);
    o.r = s_new(N * O, 1, &rng);
    float *dx = s_new(N * K, 0, &rng), *dw = s_new(O * K, 0, &rng), *db = s_new(O, 0, &rng);
    pv_k_matmul_bwd(dx, dw, db, o.r, o.x, o.w, N, K, O);
    s_expect(&o, o.x, dx, N * K, "matmul x");
    s_expect(&o, o.w, dw, O * K, "matmul W");
    s_expect(&o, o.b, db, O, "matmul bias");
    /* out[0][0] is the dot product of x row 0 and W row 0 plus b[0] */
    s_loss(&o);
    double d = o.b[0];
    for (size_t k = 0; k < K; k++)
        d += (double)o.x[k] * o.w[k];
    assert_true(fabs(d - o.out[0]) < 1e-5);
    free(o.x), free(o.w), free(o.b), free(o.out), free(o.r), free(dx), free(dw), free(db);
}

static void test_rope(void **state)
{
    (void)state;
    pv_rng_t rng;
    pv_rng_seed(&rng, 4, 1);
    size_t n = 3, p0 = 5, H = 2, D = 8, P = 16;
    float cs[16 * 4], sn[16 * 4], inv[4];
    pv_k_rope_inv_freq(inv, D, 10000.0);
    pv_k_rope_tables(cs, sn, P, D, inv);
    /* HF: inv_freq = 1 / 10000^(2j/D); position 5, pair 1: angle 5 / 10000^(1/4) = 0.5 */
    assert_true(fabsf(cs[5 * 4 + 1] - cosf(0.5f)) < 1e-6f);
    assert_true(fabsf(sn[5 * 4 + 1] - sinf(0.5f)) < 1e-6f);
    s_op_t o = {.kind = K_ROPE, .n = n, .p0 = p0, .H = H, .D = D, .cos_t = cs, .sin_t = sn};
    o.x = s_new(n * H * D, 1, &rng);
    o.out = s_new(n * H * D, 0, &rng);
    o.r = s_new(n * H * D, 1, &rng);
    float *dx = s_new(n * H * D, 0, &rng);
    pv_k_rope_bwd(dx, o.r, cs, sn, n, p0, H, D);
    s_expect(&o, o.x, dx, n * H * D, "rope x");
    /* a rotation keeps each pair's norm; position 0 is the identity */
    s_loss(&o);
    for (size_t j = 0; j < D / 2; j++) {
        double a = hypot(o.x[j], o.x[j + D / 2]), b = hypot(o.out[j], o.out[j + D / 2]);
        assert_true(fabs(a - b) < 1e-5);
    }
    o.p0 = 0;
    s_loss(&o);
    assert_memory_equal(o.out, o.x, H * D * sizeof(float));
    free(o.x), free(o.out), free(o.r), free(dx);
}

/* attention over n queries at p0.. with H heads on KV key/value heads */
static void s_attn_case(size_t n, size_t p0, size_t H, size_t KV, size_t D, uint64_t seed)
{
    pv_rng_t rng;
    pv_rng_seed(&rng, seed, 1);
    size_t nc = p0 + n;
    s_op_t o = {.kind = K_ATTN, .n = n, .p0 = p0, .H = H, .KV = KV, .D = D};
    o.q = s_new(n * H * D, 1, &rng);
    o.k = s_new(nc * KV * D, 1, &rng);
    o.v = s_new(nc * KV * D, 1, &rng);
    o.out = s_new(n * H * D, 0, &rng);
    o.aux = s_new(H * n * nc, 0, &rng);
    o.r = s_new(n * H * D, 1, &rng);
    float *dq = s_new(n * H * D, 0, &rng), *dk = s_new(nc * KV * D, 0, &rng);
    float *dv = s_new(nc * KV * D, 0, &rng), *datt = s_new(n * nc, 0, &rng);
    s_loss(&o);
    /* causal: row i's weights sum to 1 over j <= p0 + i and are 0 after */
    for (size_t h = 0; h < H; h++)
        for (size_t i = 0; i < n; i++) {
            double s = 0;
            for (size_t j = 0; j < nc; j++) {
                float a = o.aux[(h * n + i) * nc + j];
                if (j > p0 + i)
                    assert_true(a == 0.0f);
                s += a;
            }
            assert_true(fabs(s - 1.0) < 1e-5);
        }
    pv_k_attn_bwd(dq, dk, dv, datt, o.r, o.aux, o.q, o.k, o.v, n, p0, H, KV, D);
    char what[64];
    snprintf(what, sizeof what, "attn n%zu p0 %zu H%zu/KV%zu q", n, p0, H, KV);
    s_expect(&o, o.q, dq, n * H * D, what);
    s_expect(&o, o.k, dk, nc * KV * D, "  k");
    s_expect(&o, o.v, dv, nc * KV * D, "  v");
    free(o.q), free(o.k), free(o.v), free(o.out), free(o.aux), free(o.r);
    free(dq), free(dk), free(dv), free(datt);
}

static void test_attention(void **state)
{
    (void)state;
    s_attn_case(5, 0, 4, 2, 4, 5);  /* training: a whole sequence, GQA 2 heads per kv head */
    s_attn_case(3, 4, 2, 2, 6, 6);  /* queries after a cached prefix (prefill continuation) */
    s_attn_case(1, 6, 4, 1, 4, 7);  /* one decode step, multi-query */
    s_attn_case(70, 0, 2, 1, 2, 8); /* more rows than one causal block (64) */
}

static void test_swiglu_add(void **state)
{
    (void)state;
    pv_rng_t rng;
    pv_rng_seed(&rng, 9, 1);
    size_t n = 13; /* three 4-lane blocks and a scalar tail */
    s_op_t o = {.kind = K_SWIGLU, .n = n};
    o.x = s_new(n, 2, &rng);
    o.w = s_new(n, 1, &rng);
    o.out = s_new(n, 0, &rng);
    o.r = s_new(n, 1, &rng);
    float *dg = s_new(n, 0, &rng), *du = s_new(n, 0, &rng);
    pv_k_swiglu_bwd(dg, du, o.r, o.x, o.w, n);
    s_expect(&o, o.x, dg, n, "swiglu gate");
    s_expect(&o, o.w, du, n, "swiglu up");
    /* silu(0) = 0, silu(z) -> z for large z, -> 0 (not NaN) for very negative z, in the
     * 4-lane part and in the tail alike */
    float z[10] = {0.0f, 30.0f, -200.0f, 1.0f, 0.0f, 30.0f, -200.0f, 1.0f, -200.0f, 1.0f};
    float one[10], h[10];
    for (int i = 0; i < 10; i++)
        one[i] = 1.0f;
    pv_k_swiglu_fwd(h, z, one, 10);
    for (int i = 0; i < 10; i++) {
        double want = (double)z[i] / (1.0 + exp(-(double)z[i]));
        assert_true(fabs(h[i] - want) <= 1e-6 * (1.0 + fabs(want)));
    }
    o.kind = K_ADD;
    memset(dg, 0, n * sizeof *dg);
    memset(du, 0, n * sizeof *du);
    pv_k_add_bwd(dg, du, o.r, n);
    s_expect(&o, o.x, dg, n, "add a");
    s_expect(&o, o.w, du, n, "add b");
    free(o.x), free(o.w), free(o.out), free(o.r), free(dg), free(du);
}

static void test_logsoftmax(void **state)
{
    (void)state;
    pv_rng_t rng;
    pv_rng_seed(&rng, 10, 1);
    size_t N = 3, V = 9;
    uint32_t tgt[] = {0, 8, 4};
    for (int tc = 0; tc < 2; tc++) {
        float temp = tc ? 0.7f : 1.0f;
        s_op_t o = {.kind = K_LOGSOFTMAX, .N = N, .O = V, .tok = tgt, .inv_temp = 1.0f / temp};
        o.x = s_new(N * V, 2, &rng);
        o.out = s_new(N * V, 0, &rng);
        o.r = s_new(N, 1, &rng);
        o.r2 = s_new(N, 1, &rng);
        float lp[3], ent[3], *dz = s_new(N * V, 0, &rng);
        memcpy(dz, o.x, N * V * sizeof *dz);
        pv_k_logsoftmax_fwd(dz, lp, ent, tgt, N, V, o.inv_temp);
        /* probabilities sum to one; the entropy is -sum p log p */
        for (size_t i = 0; i < N; i++) {
            double s = 0, e = 0;
            for (size_t j = 0; j < V; j++)
                s += exp(dz[i * V + j]), e -= exp(dz[i * V + j]) * dz[i * V + j];
            assert_true(fabs(s - 1) < 1e-6 && fabs(e - ent[i]) < 1e-5);
            assert_true(lp[i] == dz[i * V + tgt[i]]);
        }
        pv_k_logsoftmax_bwd(dz, dz, ent, o.r, o.r2, tgt, N, V, o.inv_temp);
        s_expect(&o, o.x, dz, N * V, tc ? "log-softmax T 0.7" : "log-softmax T 1");
        /* without the entropy term the gradient of each row sums to zero */
        memcpy(dz, o.x, N * V * sizeof *dz);
        pv_k_logsoftmax_fwd(dz, lp, ent, tgt, N, V, o.inv_temp);
        pv_k_logsoftmax_bwd(dz, dz, ent, o.r, NULL, tgt, N, V, o.inv_temp);
        double s = 0;
        for (size_t j = 0; j < V; j++)
            s += dz[j];
        assert_true(fabs(s) < 1e-6);
        free(o.x), free(o.out), free(o.r), free(o.r2), free(dz);
    }
    /* a logsumexp that would overflow without the max shift */
    float big[3] = {1000.0f, 1000.0f, -1000.0f};
    assert_true(fabs(pv_k_logsumexp(big, 3, 1.0f) - (1000.0 + log(2.0))) < 1e-4);
}

int main(void)
{
    pv_k_blas_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_embed),      cmocka_unit_test(test_rmsnorm),
        cmocka_unit_test(test_matmul),     cmocka_unit_test(test_rope),
        cmocka_unit_test(test_attention),  cmocka_unit_test(test_swiglu_add),
        cmocka_unit_test(test_logsoftmax),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
