/* nn.c - policy layers; see nn.h. */
#include "common/policy/nn.h"

#include <math.h>
#include <string.h>

void pv_nn_embed_mean_fwd(float *out, const float *table, const uint32_t *ids, size_t n, size_t D)
{
    memset(out, 0, D * sizeof *out);
    for (size_t i = 0; i < n; i++) {
        const float *row = table + (size_t)ids[i] * D;
        for (size_t d = 0; d < D; d++)
            out[d] += row[d];
    }
    if (n > 1) {
        float inv = 1.0f / (float)n;
        for (size_t d = 0; d < D; d++)
            out[d] *= inv;
    }
}

void pv_nn_embed_mean_bwd(float *dtable, const float *dout, const uint32_t *ids, size_t n, size_t D)
{
    if (n == 0)
        return;
    float inv = 1.0f / (float)n;
    for (size_t i = 0; i < n; i++) {
        float *row = dtable + (size_t)ids[i] * D;
        for (size_t d = 0; d < D; d++)
            row[d] += dout[d] * inv;
    }
}

void pv_nn_linear_fwd(float *out, const float *W, size_t ld, const float *b, const float *x,
                      size_t O, size_t I)
{
    for (size_t o = 0; o < O; o++)
        out[o] = (b ? b[o] : 0.0f) + pv_nn_dot(W + o * ld, x, I);
}

void pv_nn_linear_bwd(float *dx, float *dW, float *db, const float *W, size_t ld, const float *x,
                      const float *dout, size_t O, size_t I)
{
    for (size_t o = 0; o < O; o++) {
        float g = dout[o];
        if (g == 0.0f)
            continue;
        float *dw = dW + o * ld;
        const float *w = W + o * ld;
        for (size_t i = 0; i < I; i++)
            dw[i] += g * x[i];
        if (db)
            db[o] += g;
        if (dx)
            for (size_t i = 0; i < I; i++)
                dx[i] += g * w[i];
    }
}

void pv_nn_relu_fwd(float *y, const float *z, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = z[i] > 0.0f ? z[i] : 0.0f;
}

void pv_nn_relu_bwd(float *dz, const float *z, const float *dy, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dz[i] += z[i] > 0.0f ? dy[i] : 0.0f;
}

void pv_nn_mul_fwd(float *y, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] * b[i];
}

void pv_nn_mul_bwd(float *da, float *db, const float *a, const float *b, const float *dy, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (da)
            da[i] += dy[i] * b[i];
        if (db)
            db[i] += dy[i] * a[i];
    }
}

float pv_nn_dot(const float *a, const float *b, size_t n)
{
    /* eight independent partial sums: the compiler can keep them in one vector register
     * (a single running sum is a serial dependency it may not reorder); the summation order
     * is fixed, so results stay deterministic */
    float p[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            p[k] += a[i + k] * b[i + k];
    float tail = 0.0f;
    for (; i < n; i++)
        tail += a[i] * b[i];
    return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7])) + tail;
}

float pv_nn_log_softmax_fwd(float *logp, const float *s, size_t n)
{
    float mx = s[0];
    for (size_t i = 1; i < n; i++)
        mx = s[i] > mx ? s[i] : mx;
    double z = 0.0;
    for (size_t i = 0; i < n; i++)
        z += exp((double)(s[i] - mx));
    double lz = log(z) + (double)mx, ent = 0.0;
    for (size_t i = 0; i < n; i++) {
        double lp = (double)s[i] - lz;
        logp[i] = (float)lp;
        ent -= exp(lp) * lp;
    }
    return (float)ent;
}

void pv_nn_log_softmax_bwd(float *ds, const float *logp, size_t n, size_t chosen, float dlogp,
                           float dent, float entropy)
{
    for (size_t i = 0; i < n; i++) {
        float p = expf(logp[i]);
        ds[i] += dlogp * ((i == chosen ? 1.0f : 0.0f) - p) - dent * p * (logp[i] + entropy);
    }
}
