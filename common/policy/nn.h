/* nn.h - the layers of the policy models: forward and backward as free functions that never
 * allocate (llm.c's habit). Shapes in comments; matrices are row-major; every backward
 * ACCUMULATES (+=) into its gradient outputs so callers can sum over candidates and steps.
 * tests/common/policy/test_nn.c checks each backward against finite differences.
 */
#ifndef PV_POLICY_NN_H
#define PV_POLICY_NN_H

#include <stddef.h>
#include <stdint.h>

/* out (D) = mean over i of table[ids[i]] (table (V, D)); zeros when n == 0. */
void pv_nn_embed_mean_fwd(float *out, const float *table, const uint32_t *ids, size_t n, size_t D);
/* dtable[ids[i]] += dout / n. */
void pv_nn_embed_mean_bwd(float *dtable, const float *dout, const uint32_t *ids, size_t n,
                          size_t D);

/* out (O) = b + W x, with W an (O, I) block of a matrix whose rows are `ld` floats apart
 * (ld >= I; a column block of a wider matrix). b may be NULL (no bias). */
void pv_nn_linear_fwd(float *out, const float *W, size_t ld, const float *b, const float *x,
                      size_t O, size_t I);
/* dW += dout x^T, db += dout (db may be NULL), dx += W^T dout (dx may be NULL). */
void pv_nn_linear_bwd(float *dx, float *dW, float *db, const float *W, size_t ld, const float *x,
                      const float *dout, size_t O, size_t I);

/* y = max(z, 0); dz += dy * [z > 0]. */
void pv_nn_relu_fwd(float *y, const float *z, size_t n);
void pv_nn_relu_bwd(float *dz, const float *z, const float *dy, size_t n);

/* y = a * b elementwise; da += dy * b, db += dy * a (either may be NULL). */
void pv_nn_mul_fwd(float *y, const float *a, const float *b, size_t n);
void pv_nn_mul_bwd(float *da, float *db, const float *a, const float *b, const float *dy, size_t n);

/* a . b */
float pv_nn_dot(const float *a, const float *b, size_t n);

/* logp (n) = log_softmax(s) (max-shifted, sums in double); returns the entropy
 * -sum p log p. */
float pv_nn_log_softmax_fwd(float *logp, const float *s, size_t n);
/* Gradient of L = dlogp * logp[chosen] + dent * entropy w.r.t. the scores:
 * ds_i += dlogp (1[i = chosen] - p_i) - dent p_i (logp_i + entropy). */
void pv_nn_log_softmax_bwd(float *ds, const float *logp, size_t n, size_t chosen, float dlogp,
                           float dent, float entropy);

#endif
