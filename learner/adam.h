/* adam.h - Adam / AdamW with global-norm gradient clipping over one float32 buffer.
 *
 * The update is torch.optim.AdamW's single-tensor step (Loshchilov & Hutter 2019,
 * arXiv:1711.05101; Kingma & Ba 2015), which verl uses for the actor:
 *   p *= 1 - lr * weight_decay
 *   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
 *   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 * preceded by torch.nn.utils.clip_grad_norm_: with N = ||g||_2 over the whole buffer,
 * g *= min(1, max_grad_norm / (N + 1e-6)). Like verl's actor, a step whose gradient norm is
 * not finite is skipped (parameters and moments untouched) and reported.
 *
 * The moments m and v are float32 buffers of n values, exposed so a checkpoint can save
 * and restore them together with the step count t: resuming is then bit-identical.
 */
#ifndef PV_LEARNER_ADAM_H
#define PV_LEARNER_ADAM_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef struct pv_adam_opts {
    double lr;            /* learning rate */
    double beta1, beta2;  /* 0.9, 0.999 */
    double eps;           /* 1e-8 */
    double weight_decay;  /* decoupled (AdamW); 0 = plain Adam. verl: 0.01 */
    double max_grad_norm; /* global-norm clip; <= 0 = off. verl: 1.0 */
} pv_adam_opts_t;

typedef struct pv_adam pv_adam_t;

/* torch defaults with the given learning rate: betas (0.9, 0.999), eps 1e-8, no weight
 * decay, clip at 1.0. */
pv_adam_opts_t pv_adam_opts_default(double lr);

/* Optimiser state for n parameters (moments zeroed, t = 0). Errors: PV_ERR_INVAL (n == 0,
 * lr or betas out of range), PV_ERR_NOMEM. */
pv_err_t pv_adam_new(size_t n, const pv_adam_opts_t *opts, pv_adam_t **out, pv_errmsg_t *em);

/* Free; clears *self. NULL-safe. */
void pv_adam_destroy(pv_adam_t **self);

/* One step: clip `grad` (n, modified in place by the clip), then update `params` (n).
 * `grad_norm` (may be NULL) receives the norm before clipping. Errors: PV_ERR_RANGE when the
 * norm is not finite (step skipped, t unchanged). */
pv_err_t pv_adam_step(pv_adam_t *self, float *params, float *grad, double *grad_norm);

/* Change the learning rate (schedules). */
void pv_adam_set_lr(pv_adam_t *self, double lr);
const pv_adam_opts_t *pv_adam_opts(const pv_adam_t *self);

/* State access for checkpoints: first and second moments (n floats each), step count. */
size_t pv_adam_n(const pv_adam_t *self);
float *pv_adam_m(pv_adam_t *self);
float *pv_adam_v(pv_adam_t *self);
uint64_t pv_adam_t_step(const pv_adam_t *self);
void pv_adam_set_t_step(pv_adam_t *self, uint64_t t);

/* ||g||_2 of n floats, accumulated in double. */
double pv_grad_norm(const float *g, size_t n);

#endif
