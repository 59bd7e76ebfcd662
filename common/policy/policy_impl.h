/* policy_impl.h - what a policy kind provides to policy.c (internal to common/policy).
 *
 * policy.c owns the tensor table and the version, validates the arguments every kind shares
 * (candidate count, context, tokens) and dispatches to the kind's ops, which mirror the
 * public calls. A kind keeps its own work scratch.
 *
 * Two ways to make the parameters:
 * - `tensors` + `init`: policy.c allocates the buffer and lays the declared tensors out in
 *   order (bow_mlp);
 * - `build`: the kind makes its model and points p->params and p->table at it (the
 *   transformer, whose buffer and Hugging Face tensor names belong to its pv_tf_t); `free`
 *   releases what build made.
 * Ops left NULL get policy.c's generic behaviour: forward_items / backward_items run
 * forward (and backward) item by item, train_items is unsupported (callers use the two),
 * action_tokens looks the action up among the candidates, token_space is 0, save_dir is
 * unsupported.
 */
#ifndef PV_POLICY_IMPL_H
#define PV_POLICY_IMPL_H

#include "common/policy/policy.h"

#define PV_POLICY_MAX_TENSORS 16 /* kinds laid out by policy.c (`tensors`) */

typedef struct pv_policy_ops pv_policy_ops_t;

struct pv_policy {
    const pv_policy_ops_t *ops;
    pv_policy_spec_t spec; /* resolved: defaults filled in, strings owned (below) */
    char *strs;            /* the spec's strings, one block */
    float *params;         /* (n_params) */
    size_t n_params;
    pv_policy_tensor_t *table; /* (n_tensors) */
    size_t n_tensors;
    uint64_t version;
    uint64_t generation; /* bumped when the parameters change (a new version, a load): a
                            work's KV cache filled at another generation is dropped
                            (lm_policy.c) */
    bool own_params;     /* params and table were allocated by policy.c */
    void *impl;          /* the kind's model (build) */
};

struct pv_policy_work {
    const pv_policy_ops_t *ops;
    void *impl;
};

struct pv_policy_ops {
    const char *kind;
    bool generative; /* acts without candidates (the language model) */
    /* Fill defaults into *spec and validate it. */
    pv_err_t (*resolve)(pv_policy_spec_t *spec, pv_errmsg_t *em);
    /* Declare the tensors (name, ndim, shape) for the resolved spec; offsets are assigned
     * by policy.c in declaration order (at most PV_POLICY_MAX_TENSORS). */
    void (*tensors)(const pv_policy_spec_t *spec, pv_policy_tensor_t *table, size_t *n);
    /* Initialise p->params deterministically from p->spec.seed. */
    void (*init)(pv_policy_t *p);
    /* Instead of tensors + init: make the model, set p->params, n_params, table, n_tensors
     * and p->impl. */
    pv_err_t (*build)(pv_policy_t *p, pv_errmsg_t *em);
    void (*free)(pv_policy_t *p);
    pv_err_t (*work_new)(const pv_policy_t *p, void **work);
    void (*work_destroy)(void *work);
    pv_err_t (*act)(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                    size_t n, pv_rng_t *rng, void *work, pv_policy_step_t *out);
    /* Optional: B decisions at once (pv_policy_act_batch), out[b] valid until the next call
     * on the work; NULL for kinds that decide one at a time. */
    pv_err_t (*act_batch)(const pv_policy_t *p, const pv_policy_ctx_t *ctxs,
                          const char *const *const *cands, const size_t *n, pv_rng_t *const *rngs,
                          size_t B, void *work, pv_policy_step_t *out);
    pv_err_t (*logprobs)(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                         size_t n, void *work, float *logp, float *entropy);
    pv_err_t (*forward)(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                        size_t n, const uint32_t *tokens, size_t n_tokens, void *work,
                        float *logp_out, float *ent_out);
    pv_err_t (*backward)(const pv_policy_t *p, void *work, const float *dlogp, const float *dent,
                         float *grad);
    pv_err_t (*forward_items)(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                              void *work, float *logp_out, float *ent_out, pv_errmsg_t *em);
    pv_err_t (*backward_items)(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                               void *work, const float *dlogp, const float *dent, float *grad,
                               float *logp_out, pv_errmsg_t *em);
    pv_err_t (*train_items)(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                            void *work, pv_policy_token_grad_fn fn, void *user, float *grad,
                            float *logp_out, float *ent_out, pv_errmsg_t *em);
    uint32_t (*token_space)(const pv_policy_t *p);
    pv_err_t (*action_tokens)(const pv_policy_t *p, const char *action, void *work,
                              uint32_t *tokens, size_t cap, size_t *n);
    pv_err_t (*save_dir)(const pv_policy_t *p, const char *dir, pv_errmsg_t *em);
    pv_err_t (*load_dir)(pv_policy_t *p, const char *dir, pv_errmsg_t *em);
};

/* The kinds this build knows (bow_mlp.c, lm_policy.c). */
extern const pv_policy_ops_t pv_policy_bow_mlp_ops;
extern const pv_policy_ops_t pv_policy_transformer_ops;

#endif
