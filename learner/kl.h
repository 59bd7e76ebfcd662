/* kl.h - per-token KL estimators between the policy and a reference policy.
 *
 * verl's kl_penalty(logprob, ref_logprob, kl_penalty) (verl/trainer/ppo/core_algos.py), after
 * J. Schulman, "Approximating KL Divergence" (2020), with d = logprob - ref_logprob:
 *   "kl" / "k1"           d
 *   "abs"                 |d|
 *   "mse" / "k2"          0.5 d^2
 *   "low_var_kl" / "k3"   r - log r - 1 with log r = clamp(-d, -20, 20), the result clamped
 *                         to [-10, 10]
 *   "k1+", "k3+", "low_var_kl+", "abs+"  straight-through: the value of the base estimator,
 *                         the gradient of k2 (d). (At the verl commit of ../shared/golden the
 *                         "+" names raised NotImplementedError; we implement the intended
 *                         behaviour, which the golden file records separately.)
 * Gradients are d(value)/d(logprob), following torch's conventions: clamp passes the gradient
 * only inside [min, max] (bounds included), |x|' = sign(x) with sign(0) = 0.
 */
#ifndef PV_LEARNER_KL_H
#define PV_LEARNER_KL_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

typedef enum pv_kl_type {
    PV_KL_K1 = 0,
    PV_KL_ABS,
    PV_KL_K2,
    PV_KL_K3,
} pv_kl_type_t;

typedef struct pv_kl_spec {
    pv_kl_type_t type;
    bool straight_through; /* "+" suffix: k2's gradient */
} pv_kl_spec_t;

/* Parse a verl kl_penalty name (see above). Errors: PV_ERR_INVAL ("full" needs the whole
 * distribution and is not supported; unknown names). */
pv_err_t pv_kl_parse(const char *name, pv_kl_spec_t *out, pv_errmsg_t *em);

/* n per-token values into kl_out, and d(kl)/d(logprob) into grad_out when not NULL. */
void pv_kl_f64(pv_kl_spec_t spec, size_t n, const double *logprob, const double *ref_logprob,
               double *kl_out, double *grad_out);
void pv_kl_f32(pv_kl_spec_t spec, size_t n, const float *logprob, const float *ref_logprob,
               float *kl_out, float *grad_out);

#endif
