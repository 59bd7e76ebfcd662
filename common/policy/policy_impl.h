/* policy_impl.h - what a policy kind provides to policy.c (internal to common/policy).
 *
 * policy.c owns the parameter buffer, the tensor table and the version, validates the
 * arguments every kind shares (candidate count, context, tokens) and dispatches to the
 * kind's ops, which mirror the public calls. A kind keeps its own work scratch.
 */
#ifndef PV_POLICY_IMPL_H
#define PV_POLICY_IMPL_H

#include "common/policy/policy.h"

#define PV_POLICY_MAX_TENSORS 16

typedef struct pv_policy_ops pv_policy_ops_t;

struct pv_policy {
    const pv_policy_ops_t *ops;
    pv_policy_spec_t spec; /* resolved: defaults filled in */
    float *params;         /* (n_params) */
    size_t n_params;
    pv_policy_tensor_t table[PV_POLICY_MAX_TENSORS];
    size_t n_tensors;
    uint64_t version;
};

struct pv_policy_work {
    const pv_policy_ops_t *ops;
    void *impl;
};

struct pv_policy_ops {
    const char *kind;
    /* Fill defaults into *spec and validate it. */
    pv_err_t (*resolve)(pv_policy_spec_t *spec, pv_errmsg_t *em);
    /* Declare the tensors (name, ndim, shape) for the resolved spec; offsets are assigned
     * by policy.c in declaration order. */
    void (*tensors)(const pv_policy_spec_t *spec, pv_policy_tensor_t *table, size_t *n);
    /* Initialise p->params deterministically from p->spec.seed. */
    void (*init)(pv_policy_t *p);
    pv_err_t (*work_new)(const pv_policy_t *p, void **work);
    void (*work_destroy)(void *work);
    pv_err_t (*act)(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                    size_t n, pv_rng_t *rng, void *work, pv_policy_step_t *out);
    pv_err_t (*logprobs)(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                         size_t n, void *work, float *logp, float *entropy);
    pv_err_t (*forward)(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                        size_t n, const uint32_t *tokens, size_t n_tokens, void *work,
                        float *logp_out, float *ent_out);
    pv_err_t (*backward)(const pv_policy_t *p, void *work, const float *dlogp, const float *dent,
                         float *grad);
};

/* The kinds this build knows (bow_mlp.c). */
extern const pv_policy_ops_t pv_policy_bow_mlp_ops;

#endif
