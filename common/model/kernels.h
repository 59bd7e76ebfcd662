/* kernels.h - the transformer's ops as free functions, forward and backward (llm.c's habit).
 *
 * Conventions.
 * - Every tensor is float32, row-major, contiguous unless a stride is given; the shape of each
 *   pointer is in the comment beside it: N rows (tokens), C hidden size, O/K a linear layer's
 *   out/in features, H query heads, KV key/value heads, D head size, V vocabulary, F MLP size.
 * - Nothing here allocates, prints or fails: sizes are the caller's responsibility (asserted
 *   only in debug builds). Scratch memory a kernel needs is passed in.
 * - Backward functions ACCUMULATE (+=) into their gradient outputs, so a gradient that flows
 *   into a tensor from two places (the residual stream, a tied embedding) is a sum of two
 *   calls and the caller zeroes a buffer once. A gradient pointer may be NULL where noted.
 * - Matrix products go through OpenBLAS's cblas_sgemm. Summation orders are fixed, so the
 *   results are deterministic for a given BLAS thread count.
 * - The same kernel serves training (N = B*T rows, one sequence after another) and
 *   generation with a KV cache (attention's queries at positions p0.., keys 0..p0+n-1).
 *
 * Formulas follow Hugging Face transformers' modeling_llama.py / modeling_qwen2.py /
 * modeling_qwen3.py (RMSNorm, rotate_half RoPE, repeat_kv GQA, SwiGLU, q/k norm), computed in
 * float32 as those are; tests/common/model checks every backward by finite differences and
 * the whole forward against an independent numpy implementation.
 */
#ifndef PV_MODEL_KERNELS_H
#define PV_MODEL_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* ---- BLAS ---------------------------------------------------------------------------- */

/* Set OpenBLAS's thread count for the whole process (openblas_set_num_threads); n <= 0
 * means 1. With 1, every product runs on the calling thread and OpenBLAS's worker threads
 * get no work, so they sleep on a condition variable instead of spinning (they spin-yield
 * only for OpenBLAS's THREAD_TIMEOUT, about 2^28 cycles, after a multi-threaded call).
 * Setting OPENBLAS_NUM_THREADS=1 in the environment before the process starts avoids even
 * creating them. Returns the count now in force. */
int pv_k_blas_threads(int n);

/* ---- embedding ----------------------------------------------------------------------- */

/* out (N, C) = table[tokens[i]] (table (V, C)). Tokens must be < V. */
void pv_k_embed_fwd(float *out, const float *table, const uint32_t *tokens, size_t N, size_t C);
/* dtable[tokens[i]] += dout[i] (dtable (V, C), dout (N, C)). */
void pv_k_embed_bwd(float *dtable, const float *dout, const uint32_t *tokens, size_t N, size_t C);

/* ---- RMSNorm ------------------------------------------------------------------------- */

/* out (N, C) = w * x / sqrt(mean(x^2) + eps) per row; rstd (N) = 1 / sqrt(mean(x^2) + eps)
 * kept for the backward (the mean is summed in double). Also the Qwen3 per-head q/k norm
 * with N = tokens * heads and C = D. out may alias x. */
void pv_k_rmsnorm_fwd(float *out, float *rstd, const float *x, const float *w, size_t N, size_t C,
                      float eps);
/* With xhat = x * rstd: dw += sum_rows dout * xhat (dw may be NULL),
 * dx += rstd * (g - xhat * mean(g * xhat)) with g = dout * w. */
void pv_k_rmsnorm_bwd(float *dx, float *dw, const float *dout, const float *x, const float *w,
                      const float *rstd, size_t N, size_t C);

/* ---- linear layers ------------------------------------------------------------------- */

/* out (N, O) = x (N, K) W^T + b, W (O, K) as torch.nn.Linear stores it, b (O) or NULL.
 * Also the output projection (W = the embedding table when the embedding is tied). */
void pv_k_matmul_fwd(float *out, const float *x, const float *W, const float *b, size_t N, size_t K,
                     size_t O);
/* dx (N, K) += dout W (dx may be NULL), dW (O, K) += dout^T x, db (O) += column sums of dout
 * (db may be NULL). */
void pv_k_matmul_bwd(float *dx, float *dW, float *db, const float *dout, const float *x,
                     const float *W, size_t N, size_t K, size_t O);

/* ---- rotary position embedding --------------------------------------------------------- */

/* HF's default inverse frequencies, in float32 as it computes them: inv_freq[i] =
 * 1 / theta^(2i / D) for i < D/2 (D even). */
void pv_k_rope_inv_freq(float *inv_freq, size_t D, double theta);
/* Llama 3's rescaling of them (transformers' _compute_llama3_parameters, rope_type
 * "llama3"), in place, in float32: with wavelen = 2 pi / inv_freq, lo = old_ctx / low_ff and
 * hi = old_ctx / high_ff, frequencies with wavelen > lo are divided by `factor`, those with
 * hi <= wavelen <= lo interpolate (1 - s) f / factor + s f with
 * s = (old_ctx / wavelen - low_ff) / (high_ff - low_ff), shorter wavelengths stay. */
void pv_k_rope_llama3(float *inv_freq, size_t D, double factor, double low_ff, double high_ff,
                      double old_ctx);
/* The cos/sin tables (P, D/2) for positions 0..P-1: angle = pos * inv_freq[i] (float32). */
void pv_k_rope_tables(float *cos_t, float *sin_t, size_t P, size_t D, const float *inv_freq);
/* Rows i < n of x (n, nh, D) sit at positions p0 + i; each head vector is rotated as
 * HF's apply_rotary_pos_emb with rotate_half: for j < D/2 and h = D/2,
 * out[j] = x[j] cos - x[j+h] sin, out[j+h] = x[j+h] cos + x[j] sin (angle of pair j).
 * out may alias x. */
void pv_k_rope_fwd(float *out, const float *x, const float *cos_t, const float *sin_t, size_t n,
                   size_t p0, size_t nh, size_t D);
/* dx += R^T dout (the inverse rotation): dx[j] += g[j] cos + g[j+h] sin,
 * dx[j+h] += g[j+h] cos - g[j] sin. */
void pv_k_rope_bwd(float *dx, const float *dout, const float *cos_t, const float *sin_t, size_t n,
                   size_t p0, size_t nh, size_t D);

/* ---- grouped-query causal attention --------------------------------------------------- */

/* n queries at positions p0 .. p0+n-1 attend to the keys 0 .. p0+i of a context of
 * n_ctx = p0 + n positions. q (n, H*D), k and v (n_ctx, KV*D); query head h reads key/value
 * head h / (H / KV) (HF's repeat_kv; H must be a multiple of KV). Scale 1/sqrt(D):
 * att[h, i, j] = softmax_j(q_i . k_j / sqrt(D)) for j <= p0 + i, 0 beyond;
 * out (n, H*D) [i, h] = sum_j att[h, i, j] v_j. att (H, n, n_ctx) is written (kept for the
 * backward in training; scratch in generation). Training calls it per sequence with p0 = 0. */
void pv_k_attn_fwd(float *out, float *att, const float *q, const float *k, const float *v, size_t n,
                   size_t p0, size_t H, size_t KV, size_t D);
/* Accumulates dq (n, H*D), dk and dv (n_ctx, KV*D) from dout (n, H*D) and the forward's att.
 * datt (n, n_ctx) is scratch. With P = att, dP = dout V^T: dV += P^T dout,
 * dS = P * (dP - rowsum(P * dP)) / sqrt(D), dQ += dS K, dK += dS^T Q (per head). */
void pv_k_attn_bwd(float *dq, float *dk, float *dv, float *datt, const float *dout,
                   const float *att, const float *q, const float *k, const float *v, size_t n,
                   size_t p0, size_t H, size_t KV, size_t D);

/* ---- SwiGLU MLP ---------------------------------------------------------------------- */

/* h (n) = silu(gate) * up, silu(z) = z / (1 + e^-z) (HF's "silu" act with gate/up/down:
 * down_proj(act(gate_proj(x)) * up_proj(x))). */
void pv_k_swiglu_fwd(float *h, const float *gate, const float *up, size_t n);
/* dgate += dh * up * silu'(gate), silu'(z) = s (1 + z (1 - s)) with s = sigmoid(z);
 * dup += dh * silu(gate). */
void pv_k_swiglu_bwd(float *dgate, float *dup, const float *dh, const float *gate, const float *up,
                     size_t n);

/* ---- residual ------------------------------------------------------------------------ */

/* out (n) = a + b (out may alias a or b). */
void pv_k_add_fwd(float *out, const float *a, const float *b, size_t n);
/* da += dout, db += dout (either may be NULL). */
void pv_k_add_bwd(float *da, float *db, const float *dout, size_t n);

/* ---- log-softmax with a temperature ------------------------------------------------- */

/* log sum_j exp(z_j / T) of one row z (V), with inv_temp = 1/T; max-shifted, summed in
 * double. The one normaliser used by training and sampling alike. */
double pv_k_logsumexp(const float *z, size_t V, float inv_temp);
/* Per row i of z (N, V): logp_row = log_softmax(z_i / T) overwrites z_i (in place),
 * ent[i] = -sum_j p_j log p_j (nats), lp[i] = logp_row[targets[i]]. ent and lp may be NULL.
 * Targets must be < V. A row masked by pv_k_mask (-inf outside its allowed ids, at least one
 * allowed) gives the log-softmax renormalised over the allowed ids: -inf elsewhere (p = 0,
 * no entropy term); a row with one allowed id gives exactly 0 for it. */
void pv_k_logsoftmax_fwd(float *z, float *lp, float *ent, const uint32_t *targets, size_t N,
                         size_t V, float inv_temp);
/* The gradient of L = sum_i dlp[i] lp[i] + dent[i] ent[i] w.r.t. the logits, from the
 * forward's log-probs (N, V), written (=) into dz, which may alias logp:
 * dz_ij = (dlp_i (1[j = t_i] - p_ij) - dent_i p_ij (logp_ij + ent_i)) / T.
 * dent may be NULL (no entropy term; ent is then not read). */
void pv_k_logsoftmax_bwd(float *dz, const float *logp, const float *ent, const float *dlp,
                         const float *dent, const uint32_t *targets, size_t N, size_t V,
                         float inv_temp);

/* Constrained decoding: z (V) keeps its values at the ids allow[0 .. n_allow) (each < V,
 * duplicates allowed) and every other entry becomes -INFINITY, so softmax(z / T) is
 * renormalised over the allowed ids (pv_k_logsumexp, pv_k_logsoftmax_fwd/_bwd and
 * pv_tf_sample read such a row: disallowed ids get p = 0 and gradient 0). keep (n_allow) is
 * the caller's scratch. n_allow >= 1. */
void pv_k_mask(float *z, float *keep, size_t V, const uint32_t *allow, size_t n_allow);

#endif
