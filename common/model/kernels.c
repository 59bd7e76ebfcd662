/* kernels.c - transformer ops, forward and backward; see kernels.h. */
#include "common/model/kernels.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* expf on 4 floats from glibc's libmvec (-lmvec): the x86-64 vector function ABI's SSE2
 * variant, an ifunc that picks glibc's SSE4.1 or SSE2 code; at most 1 ulp from expf (glibc's
 * libm-test-ulps). SSE2 is x86-64's baseline, so no CPU check is needed. The softmax and
 * SwiGLU loops below go 4 lanes at a time through it and finish their tails with expf; on
 * other processors (S_SSE2 0) the scalar loops do all of the work. */
#if defined(__x86_64__) && defined(__SSE2__)
#define S_SSE2 1
#include <emmintrin.h>
extern __m128 _ZGVbN4v_expf(__m128 x);
#else
#define S_SSE2 0
#endif

/* Causal attention works in blocks of query rows: block [r0, r1) needs only the keys
 * 0 .. p0 + r1 - 1, so the products skip most of the masked upper triangle. */
#define S_ATT_BLOCK 64

int pv_k_blas_threads(int n)
{
    openblas_set_num_threads(n > 0 ? n : 1);
    return openblas_get_num_threads();
}

void pv_k_embed_fwd(float *out, const float *table, const uint32_t *tokens, size_t N, size_t C)
{
    for (size_t i = 0; i < N; i++)
        memcpy(out + i * C, table + (size_t)tokens[i] * C, C * sizeof *out);
}

void pv_k_embed_bwd(float *dtable, const float *dout, const uint32_t *tokens, size_t N, size_t C)
{
    for (size_t i = 0; i < N; i++) {
        float *row = dtable + (size_t)tokens[i] * C;
        const float *g = dout + i * C;
        for (size_t c = 0; c < C; c++)
            row[c] += g[c];
    }
}

void pv_k_rmsnorm_fwd(float *out, float *rstd, const float *x, const float *w, size_t N, size_t C,
                      float eps)
{
    for (size_t i = 0; i < N; i++) {
        const float *xi = x + i * C;
        double ss = 0.0;
        for (size_t c = 0; c < C; c++)
            ss += (double)xi[c] * xi[c];
        float r = (float)(1.0 / sqrt(ss / (double)C + (double)eps));
        rstd[i] = r;
        float *oi = out + i * C;
        for (size_t c = 0; c < C; c++)
            oi[c] = w[c] * (xi[c] * r);
    }
}

void pv_k_rmsnorm_bwd(float *dx, float *dw, const float *dout, const float *x, const float *w,
                      const float *rstd, size_t N, size_t C)
{
    for (size_t i = 0; i < N; i++) {
        const float *xi = x + i * C, *gi = dout + i * C;
        float r = rstd[i];
        double m = 0.0;
        for (size_t c = 0; c < C; c++)
            m += (double)(gi[c] * w[c]) * (xi[c] * r);
        float mf = (float)(m / (double)C);
        float *di = dx + i * C;
        for (size_t c = 0; c < C; c++) {
            float xh = xi[c] * r;
            di[c] += r * (gi[c] * w[c] - xh * mf);
            if (dw)
                dw[c] += gi[c] * xh;
        }
    }
}

void pv_k_matmul_fwd(float *out, const float *x, const float *W, const float *b, size_t N, size_t K,
                     size_t O)
{
    if (N == 0)
        return;
    if (b)
        for (size_t i = 0; i < N; i++)
            memcpy(out + i * O, b, O * sizeof *out);
    if (N == 1) /* one token (decode): sgemv streams W once; sgemm would first copy (pack) it */
        cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)O, (int)K, 1.0f, W, (int)K, x, 1,
                    b ? 1.0f : 0.0f, out, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)N, (int)O, (int)K, 1.0f, x,
                    (int)K, W, (int)K, b ? 1.0f : 0.0f, out, (int)O);
}

void pv_k_matmul_bwd(float *dx, float *dW, float *db, const float *dout, const float *x,
                     const float *W, size_t N, size_t K, size_t O)
{
    if (N == 0)
        return;
    if (dx)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)N, (int)K, (int)O, 1.0f, dout,
                    (int)O, W, (int)K, 1.0f, dx, (int)K);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)O, (int)K, (int)N, 1.0f, dout, (int)O,
                x, (int)K, 1.0f, dW, (int)K);
    if (db)
        for (size_t i = 0; i < N; i++)
            for (size_t o = 0; o < O; o++)
                db[o] += dout[i * O + o];
}

void pv_k_rope_inv_freq(float *inv_freq, size_t D, double theta)
{
    for (size_t j = 0; j < D / 2; j++)
        inv_freq[j] = 1.0f / powf((float)theta, (float)(2 * j) / (float)D);
}

void pv_k_rope_llama3(float *inv_freq, size_t D, double factor, double low_ff, double high_ff,
                      double old_ctx)
{
    float lo = (float)(old_ctx / low_ff), hi = (float)(old_ctx / high_ff), fac = (float)factor;
    for (size_t j = 0; j < D / 2; j++) {
        float f = inv_freq[j], wl = 2.0f * (float)M_PI / f;
        float scaled = wl > lo ? f / fac : f;
        if (!(wl < hi) && !(wl > lo)) {
            float s = ((float)old_ctx / wl - (float)low_ff) / (float)(high_ff - low_ff);
            scaled = (1.0f - s) * scaled / fac + s * scaled;
        }
        inv_freq[j] = scaled;
    }
}

void pv_k_rope_tables(float *cos_t, float *sin_t, size_t P, size_t D, const float *inv_freq)
{
    size_t h = D / 2;
    for (size_t j = 0; j < h; j++)
        for (size_t p = 0; p < P; p++) {
            float a = (float)p * inv_freq[j];
            cos_t[p * h + j] = cosf(a);
            sin_t[p * h + j] = sinf(a);
        }
}

/* One rotation for both directions: sign +1 is the forward R, -1 its transpose. */
static void s_rope(float *out, const float *x, const float *cos_t, const float *sin_t, size_t n,
                   size_t p0, size_t nh, size_t D, float sign, int accumulate)
{
    size_t h = D / 2;
    for (size_t i = 0; i < n; i++) {
        const float *c = cos_t + (p0 + i) * h, *s = sin_t + (p0 + i) * h;
        for (size_t k = 0; k < nh; k++) {
            const float *xi = x + (i * nh + k) * D;
            float *oi = out + (i * nh + k) * D;
            for (size_t j = 0; j < h; j++) {
                float a = xi[j], b = xi[j + h], sn = sign * s[j];
                float ra = a * c[j] - b * sn, rb = b * c[j] + a * sn;
                oi[j] = accumulate ? oi[j] + ra : ra;
                oi[j + h] = accumulate ? oi[j + h] + rb : rb;
            }
        }
    }
}

void pv_k_rope_fwd(float *out, const float *x, const float *cos_t, const float *sin_t, size_t n,
                   size_t p0, size_t nh, size_t D)
{
    s_rope(out, x, cos_t, sin_t, n, p0, nh, D, 1.0f, 0);
}

void pv_k_rope_bwd(float *dx, const float *dout, const float *cos_t, const float *sin_t, size_t n,
                   size_t p0, size_t nh, size_t D)
{
    s_rope(dx, dout, cos_t, sin_t, n, p0, nh, D, -1.0f, 1);
}

/* Softmax of row[0..valid) in place (max-shifted, summed in double), zeros to n_ctx. The
 * exponentials go 4 lanes at a time through libmvec (the sum in two double accumulators of
 * two lanes each), the tail in scalar code; the max and the scaling are plain loops. */
static void s_softmax_row(float *row, size_t valid, size_t n_ctx)
{
    float mx = row[0];
    for (size_t j = 1; j < valid; j++)
        mx = row[j] > mx ? row[j] : mx;
    size_t j = 0;
    double z = 0.0;
#if S_SSE2
    __m128 vm = _mm_set1_ps(mx);
    __m128d z0 = _mm_setzero_pd(), z1 = _mm_setzero_pd();
    for (size_t v4 = valid & ~(size_t)3; j < v4; j += 4) {
        __m128 e = _ZGVbN4v_expf(_mm_sub_ps(_mm_loadu_ps(row + j), vm));
        _mm_storeu_ps(row + j, e);
        z0 = _mm_add_pd(z0, _mm_cvtps_pd(e));
        z1 = _mm_add_pd(z1, _mm_cvtps_pd(_mm_movehl_ps(e, e)));
    }
    double zl[2];
    _mm_storeu_pd(zl, _mm_add_pd(z0, z1));
    z = zl[0] + zl[1];
#endif
    for (; j < valid; j++) {
        row[j] = expf(row[j] - mx);
        z += row[j];
    }
    float inv = (float)(1.0 / z);
    for (j = 0; j < valid; j++)
        row[j] *= inv;
    if (n_ctx > valid)
        memset(row + valid, 0, (n_ctx - valid) * sizeof *row);
}

void pv_k_attn_fwd(float *out, float *att, const float *q, const float *k, const float *v, size_t n,
                   size_t p0, size_t H, size_t KV, size_t D)
{
    size_t n_ctx = p0 + n, rep = H / KV, ldq = H * D, ldk = KV * D;
    float scale = 1.0f / sqrtf((float)D);
    for (size_t h = 0; h < H; h++) {
        const float *Q = q + h * D, *K = k + (h / rep) * D, *Vh = v + (h / rep) * D;
        float *A = att + h * n * n_ctx;
        for (size_t r0 = 0; r0 < n; r0 += S_ATT_BLOCK) {
            size_t r1 = r0 + S_ATT_BLOCK < n ? r0 + S_ATT_BLOCK : n, c = p0 + r1;
            float *Ab = A + r0 * n_ctx;
            /* scores (r1 - r0, c) = scale Q K^T */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)(r1 - r0), (int)c, (int)D,
                        scale, Q + r0 * ldq, (int)ldq, K, (int)ldk, 0.0f, Ab, (int)n_ctx);
            for (size_t i = r0; i < r1; i++)
                s_softmax_row(A + i * n_ctx, p0 + i + 1, n_ctx);
            /* out rows (r1 - r0, D) of head h = P V */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(r1 - r0), (int)D, (int)c,
                        1.0f, Ab, (int)n_ctx, Vh, (int)ldk, 0.0f, out + r0 * ldq + h * D, (int)ldq);
        }
    }
}

void pv_k_attn_bwd(float *dq, float *dk, float *dv, float *datt, const float *dout,
                   const float *att, const float *q, const float *k, const float *v, size_t n,
                   size_t p0, size_t H, size_t KV, size_t D)
{
    size_t n_ctx = p0 + n, rep = H / KV, ldq = H * D, ldk = KV * D;
    float scale = 1.0f / sqrtf((float)D);
    for (size_t h = 0; h < H; h++) {
        size_t g = h / rep;
        const float *A = att + h * n * n_ctx;
        for (size_t r0 = 0; r0 < n; r0 += S_ATT_BLOCK) {
            size_t r1 = r0 + S_ATT_BLOCK < n ? r0 + S_ATT_BLOCK : n, c = p0 + r1, rb = r1 - r0;
            const float *Pb = A + r0 * n_ctx, *dO = dout + r0 * ldq + h * D;
            float *dS = datt + r0 * n_ctx;
            /* dP (rb, c) = dO V^T */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rb, (int)c, (int)D, 1.0f, dO,
                        (int)ldq, v + g * D, (int)ldk, 0.0f, dS, (int)n_ctx);
            /* dV (c, D) += P^T dO */
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)c, (int)D, (int)rb, 1.0f, Pb,
                        (int)n_ctx, dO, (int)ldq, 1.0f, dv + g * D, (int)ldk);
            for (size_t i = r0; i < r1; i++) {
                const float *p = A + i * n_ctx;
                float *ds = datt + i * n_ctx;
                size_t valid = p0 + i + 1;
                double s = 0.0;
                for (size_t j = 0; j < valid; j++)
                    s += (double)p[j] * ds[j];
                float sf = (float)s;
                for (size_t j = 0; j < valid; j++)
                    ds[j] = p[j] * (ds[j] - sf) * scale;
                for (size_t j = valid; j < c; j++)
                    ds[j] = 0.0f;
            }
            /* dQ (rb, D) += dS K; dK (c, D) += dS^T Q */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rb, (int)D, (int)c, 1.0f,
                        dS, (int)n_ctx, k + g * D, (int)ldk, 1.0f, dq + r0 * ldq + h * D, (int)ldq);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)c, (int)D, (int)rb, 1.0f, dS,
                        (int)n_ctx, q + r0 * ldq + h * D, (int)ldq, 1.0f, dk + g * D, (int)ldk);
        }
    }
}

#if S_SSE2
/* sigmoid(z) = 1 / (1 + e^-z) of 4 lanes (libmvec's expf). */
static inline __m128 s_sigmoid4(__m128 z)
{
    __m128 one = _mm_set1_ps(1.0f);
    return _mm_div_ps(one, _mm_add_ps(one, _ZGVbN4v_expf(_mm_sub_ps(_mm_setzero_ps(), z))));
}
#endif

void pv_k_swiglu_fwd(float *h, const float *gate, const float *up, size_t n)
{
    size_t i = 0;
#if S_SSE2
    for (size_t n4 = n & ~(size_t)3; i < n4; i += 4) {
        __m128 z = _mm_loadu_ps(gate + i);
        _mm_storeu_ps(h + i, _mm_mul_ps(_mm_mul_ps(z, s_sigmoid4(z)), _mm_loadu_ps(up + i)));
    }
#endif
    for (; i < n; i++) {
        float z = gate[i];
        h[i] = z / (1.0f + expf(-z)) * up[i];
    }
}

void pv_k_swiglu_bwd(float *dgate, float *dup, const float *dh, const float *gate, const float *up,
                     size_t n)
{
    size_t i = 0;
#if S_SSE2
    __m128 one = _mm_set1_ps(1.0f);
    for (size_t n4 = n & ~(size_t)3; i < n4; i += 4) {
        __m128 z = _mm_loadu_ps(gate + i), s = s_sigmoid4(z), g = _mm_loadu_ps(dh + i);
        __m128 ds = _mm_mul_ps(s, _mm_add_ps(one, _mm_mul_ps(z, _mm_sub_ps(one, s))));
        __m128 dg = _mm_mul_ps(_mm_mul_ps(g, _mm_loadu_ps(up + i)), ds);
        _mm_storeu_ps(dgate + i, _mm_add_ps(_mm_loadu_ps(dgate + i), dg));
        _mm_storeu_ps(dup + i, _mm_add_ps(_mm_loadu_ps(dup + i), _mm_mul_ps(g, _mm_mul_ps(z, s))));
    }
#endif
    for (; i < n; i++) {
        float z = gate[i], s = 1.0f / (1.0f + expf(-z));
        dgate[i] += dh[i] * up[i] * s * (1.0f + z * (1.0f - s));
        dup[i] += dh[i] * z * s;
    }
}

void pv_k_add_fwd(float *out, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = a[i] + b[i];
}

void pv_k_add_bwd(float *da, float *db, const float *dout, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (da)
            da[i] += dout[i];
        if (db)
            db[i] += dout[i];
    }
}

double pv_k_logsumexp(const float *z, size_t V, float inv_temp)
{
    float mx = z[0];
    for (size_t j = 1; j < V; j++)
        mx = z[j] > mx ? z[j] : mx;
    double s = 0.0;
    for (size_t j = 0; j < V; j++)
        s += expf((z[j] - mx) * inv_temp);
    return (double)(mx * inv_temp) + log(s);
}

void pv_k_logsoftmax_fwd(float *z, float *lp, float *ent, const uint32_t *targets, size_t N,
                         size_t V, float inv_temp)
{
    for (size_t i = 0; i < N; i++) {
        float *row = z + i * V;
        double lse = pv_k_logsumexp(row, V, inv_temp), e = 0.0;
        for (size_t j = 0; j < V; j++) {
            float l = (float)((double)(row[j] * inv_temp) - lse);
            row[j] = l;
            if (l > -INFINITY) /* a masked id (pv_k_mask) has p = 0 and adds nothing */
                e -= (double)expf(l) * l;
        }
        if (ent)
            ent[i] = (float)e;
        if (lp)
            lp[i] = row[targets[i]];
    }
}

void pv_k_logsoftmax_bwd(float *dz, const float *logp, const float *ent, const float *dlp,
                         const float *dent, const uint32_t *targets, size_t N, size_t V,
                         float inv_temp)
{
    for (size_t i = 0; i < N; i++) {
        const float *l = logp + i * V;
        float *d = dz + i * V;
        float a = dlp[i] * inv_temp, b = dent ? dent[i] * inv_temp : 0.0f, H = dent ? ent[i] : 0.0f;
        for (size_t j = 0; j < V; j++) {
            float lj = l[j], p = expf(lj);
            d[j] = p > 0.0f ? -a * p - b * p * (lj + H) : 0.0f; /* a masked id: 0 */
        }
        d[targets[i]] += a;
    }
}

void pv_k_mask(float *z, float *keep, size_t V, const uint32_t *allow, size_t n_allow)
{
    for (size_t i = 0; i < n_allow; i++)
        keep[i] = z[allow[i]];
    for (size_t j = 0; j < V; j++)
        z[j] = -INFINITY;
    for (size_t i = 0; i < n_allow; i++)
        z[allow[i]] = keep[i];
}
