/* test_nn.c - every policy layer's backward against central finite differences of its
 * forward, through a random linear read-out L = r . y. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "common/policy/nn.h"
#include "common/rng.h"

#define S_EPS 1e-2f

static void s_fill(pv_rng_t *r, float *x, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)pv_rng_normal(r) * scale;
}

static double s_readout(const float *r, const float *y, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)r[i] * y[i];
    return s;
}

/* |fd - an| small relative to the gradient's size */
static void s_check(double fd, double an, const char *what, size_t i)
{
    double tol = 2e-3 + 2e-3 * fabs(an);
    if (fabs(fd - an) > tol)
        print_error("%s[%zu]: finite difference %.6g, backward %.6g\n", what, i, fd, an);
    assert_true(fabs(fd - an) <= tol);
}

static void test_linear(void **state)
{
    (void)state;
    enum { O = 5, I = 7, LD = 9 };
    pv_rng_t rng;
    pv_rng_seed(&rng, 1, 2);
    float W[O * LD], b[O], x[I], r[O], y[O];
    float dW[O * LD] = {0}, db[O] = {0}, dx[I] = {0};
    s_fill(&rng, W, O * LD, 1), s_fill(&rng, b, O, 1), s_fill(&rng, x, I, 1), s_fill(&rng, r, O, 1);
    pv_nn_linear_bwd(dx, dW, db, W, LD, x, r, O, I);
    float *vars[3] = {W, b, x}, *grads[3] = {dW, db, dx};
    size_t ns[3] = {O * LD, O, I};
    for (int v = 0; v < 3; v++)
        for (size_t i = 0; i < ns[v]; i++) {
            if (v == 0 && i % LD >= I) { /* outside the block: untouched */
                assert_true(grads[v][i] == 0.0f);
                continue;
            }
            float keep = vars[v][i];
            vars[v][i] = keep + S_EPS;
            pv_nn_linear_fwd(y, W, LD, b, x, O, I);
            double lp = s_readout(r, y, O);
            vars[v][i] = keep - S_EPS;
            pv_nn_linear_fwd(y, W, LD, b, x, O, I);
            double lm = s_readout(r, y, O);
            vars[v][i] = keep;
            s_check((lp - lm) / (2 * S_EPS), grads[v][i], v == 0 ? "W" : v == 1 ? "b" : "x", i);
        }
}

static void test_embed_mean(void **state)
{
    (void)state;
    enum { V = 6, D = 4, N = 5 };
    pv_rng_t rng;
    pv_rng_seed(&rng, 3, 4);
    uint32_t ids[N] = {1, 4, 1, 0, 5}; /* a repeated id counts twice */
    float E[V * D], dE[V * D] = {0}, r[D], y[D];
    s_fill(&rng, E, V * D, 1), s_fill(&rng, r, D, 1);
    pv_nn_embed_mean_bwd(dE, r, ids, N, D);
    for (size_t i = 0; i < V * D; i++) {
        float keep = E[i];
        E[i] = keep + S_EPS;
        pv_nn_embed_mean_fwd(y, E, ids, N, D);
        double lp = s_readout(r, y, D);
        E[i] = keep - S_EPS;
        pv_nn_embed_mean_fwd(y, E, ids, N, D);
        double lm = s_readout(r, y, D);
        E[i] = keep;
        s_check((lp - lm) / (2 * S_EPS), dE[i], "E", i);
    }
    pv_nn_embed_mean_fwd(y, E, ids, 0, D); /* empty list: zeros */
    for (int d = 0; d < D; d++)
        assert_true(y[d] == 0.0f);
}

enum { S_N = 8 };
typedef struct s_rm {
    float z[S_N], a[S_N], b[S_N], r[S_N];
} s_rm_t;

static double s_relu_loss(const s_rm_t *x)
{
    float y[S_N];
    pv_nn_relu_fwd(y, x->z, S_N);
    return s_readout(x->r, y, S_N);
}

static double s_mul_loss(const s_rm_t *x)
{
    float y[S_N];
    pv_nn_mul_fwd(y, x->a, x->b, S_N);
    return s_readout(x->r, y, S_N);
}

/* Central difference of loss(x) in coordinate v[i] (v points into x). */
static double s_fd(s_rm_t *x, float *v, size_t i, double (*loss)(const s_rm_t *))
{
    float keep = v[i];
    v[i] = keep + S_EPS;
    double lp = loss(x);
    v[i] = keep - S_EPS;
    double lm = loss(x);
    v[i] = keep;
    return (lp - lm) / (2 * S_EPS);
}

static void test_relu_mul(void **state)
{
    (void)state;
    pv_rng_t rng;
    pv_rng_seed(&rng, 5, 6);
    s_rm_t x;
    float dz[S_N] = {0}, da[S_N] = {0}, db[S_N] = {0};
    s_fill(&rng, x.z, S_N, 1), s_fill(&rng, x.a, S_N, 1), s_fill(&rng, x.b, S_N, 1);
    s_fill(&rng, x.r, S_N, 1);
    for (int i = 0; i < S_N; i++) /* keep away from the kink */
        x.z[i] += x.z[i] > 0 ? 0.1f : -0.1f;
    pv_nn_relu_bwd(dz, x.z, x.r, S_N);
    pv_nn_mul_bwd(da, db, x.a, x.b, x.r, S_N);
    for (size_t i = 0; i < S_N; i++) {
        s_check(s_fd(&x, x.z, i, s_relu_loss), dz[i], "relu", i);
        s_check(s_fd(&x, x.a, i, s_mul_loss), da[i], "mul.a", i);
        s_check(s_fd(&x, x.b, i, s_mul_loss), db[i], "mul.b", i);
    }
}

/* L = g logp[c] + h entropy through log_softmax. */
static void test_log_softmax(void **state)
{
    (void)state;
    enum { N = 6 };
    pv_rng_t rng;
    pv_rng_seed(&rng, 7, 8);
    float s[N], logp[N], ds[N] = {0};
    s_fill(&rng, s, N, 2);
    const size_t c = 2;
    const float g = -0.7f, h = 0.3f;
    float ent = pv_nn_log_softmax_fwd(logp, s, N);
    double psum = 0, eref = 0;
    for (int i = 0; i < N; i++) {
        psum += exp(logp[i]);
        eref -= exp(logp[i]) * logp[i];
    }
    assert_true(fabs(psum - 1) < 1e-6);
    assert_true(fabs(eref - ent) < 1e-6);
    pv_nn_log_softmax_bwd(ds, logp, N, c, g, h, ent);
    for (size_t i = 0; i < N; i++) {
        float keep = s[i];
        s[i] = keep + 1e-3f;
        float e1 = pv_nn_log_softmax_fwd(logp, s, N);
        double lp = g * logp[c] + h * e1;
        s[i] = keep - 1e-3f;
        float e2 = pv_nn_log_softmax_fwd(logp, s, N);
        double lm = g * logp[c] + h * e2;
        s[i] = keep;
        s_check((lp - lm) / 2e-3, ds[i], "scores", i);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear),
        cmocka_unit_test(test_embed_mean),
        cmocka_unit_test(test_relu_mul),
        cmocka_unit_test(test_log_softmax),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
