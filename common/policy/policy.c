/* policy.c - dispatch of the policy interface to its kinds; see policy.h. */
#include "common/policy/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/policy/policy_impl.h"

static const pv_policy_ops_t *const s_kinds[] = {
    &pv_policy_bow_mlp_ops,
};
#define S_N_KINDS (sizeof s_kinds / sizeof s_kinds[0])

pv_err_t pv_policy_new(const pv_policy_spec_t *spec, pv_policy_t **out, pv_errmsg_t *em)
{
    if (!spec || !spec->kind || !out)
        return pv_errf(em, PV_ERR_INVAL, "policy spec without a kind");
    const pv_policy_ops_t *ops = NULL;
    for (size_t i = 0; i < S_N_KINDS; i++)
        if (strcmp(s_kinds[i]->kind, spec->kind) == 0)
            ops = s_kinds[i];
    if (!ops)
        return pv_errf(em, PV_ERR_INVAL, "unknown policy kind '%s' (known: bow_mlp)", spec->kind);
    pv_policy_t *self = calloc(1, sizeof *self);
    if (!self)
        return PV_ERR_NOMEM;
    self->ops = ops;
    self->spec = *spec;
    self->spec.kind = ops->kind;
    if (self->spec.temperature == 0.0f)
        self->spec.temperature = 1.0f;
    if (!(self->spec.temperature > 0.0f) || !isfinite(self->spec.temperature)) {
        free(self);
        return pv_errf(em, PV_ERR_INVAL, "policy temperature must be a finite number > 0, got %g",
                       (double)spec->temperature);
    }
    pv_err_t rc = ops->resolve(&self->spec, em);
    if (rc != PV_OK) {
        free(self);
        return rc;
    }
    ops->tensors(&self->spec, self->table, &self->n_tensors);
    size_t off = 0;
    for (size_t i = 0; i < self->n_tensors; i++) {
        pv_policy_tensor_t *t = &self->table[i];
        t->numel = 1;
        for (uint32_t d = 0; d < t->ndim; d++)
            t->numel *= (size_t)t->shape[d];
        t->offset = off;
        off += t->numel;
    }
    self->n_params = off;
    self->params = calloc(off, sizeof(float));
    if (!self->params) {
        free(self);
        return pv_errf(em, PV_ERR_NOMEM, "no memory for %zu policy parameters", off);
    }
    ops->init(self);
    *out = self;
    return PV_OK;
}

void pv_policy_destroy(pv_policy_t **p)
{
    if (!p || !*p)
        return;
    free((*p)->params);
    free(*p);
    *p = NULL;
}

const pv_policy_spec_t *pv_policy_spec(const pv_policy_t *p)
{
    return &p->spec;
}

float *pv_policy_params(pv_policy_t *p)
{
    return p->params;
}

const float *pv_policy_params_const(const pv_policy_t *p)
{
    return p->params;
}

size_t pv_policy_n_params(const pv_policy_t *p)
{
    return p->n_params;
}

size_t pv_policy_n_tensors(const pv_policy_t *p)
{
    return p->n_tensors;
}

const pv_policy_tensor_t *pv_policy_tensor(const pv_policy_t *p, size_t i)
{
    return i < p->n_tensors ? &p->table[i] : NULL;
}

uint64_t pv_policy_version(const pv_policy_t *p)
{
    return p->version;
}

void pv_policy_set_version(pv_policy_t *p, uint64_t version)
{
    p->version = version;
}

pv_err_t pv_policy_work_new(const pv_policy_t *p, pv_policy_work_t **out)
{
    pv_policy_work_t *w = calloc(1, sizeof *w);
    if (!w)
        return PV_ERR_NOMEM;
    w->ops = p->ops;
    pv_err_t rc = p->ops->work_new(p, &w->impl);
    if (rc != PV_OK) {
        free(w);
        return rc;
    }
    *out = w;
    return PV_OK;
}

void pv_policy_work_destroy(pv_policy_work_t **w)
{
    if (!w || !*w)
        return;
    (*w)->ops->work_destroy((*w)->impl);
    free(*w);
    *w = NULL;
}

/* Arguments every kind shares. */
static pv_err_t s_check(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                        size_t n, const pv_policy_work_t *work)
{
    if (!ctx || !ctx->task_text || !ctx->history || ctx->n_history == 0 || !cands || !work ||
        work->ops != p->ops)
        return PV_ERR_INVAL;
    for (size_t i = 0; i < ctx->n_history; i++)
        if (!ctx->history[i])
            return PV_ERR_INVAL;
    if (n == 0)
        return PV_ERR_INVAL;
    if (n > p->spec.max_cands)
        return PV_ERR_LIMIT;
    for (size_t i = 0; i < n; i++)
        if (!cands[i])
            return PV_ERR_INVAL;
    return PV_OK;
}

pv_err_t pv_policy_act(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                       size_t n_cands, pv_rng_t *rng, pv_policy_work_t *work, pv_policy_step_t *out)
{
    pv_err_t rc = s_check(p, ctx, cands, n_cands, work);
    if (rc != PV_OK || !out)
        return rc != PV_OK ? rc : PV_ERR_INVAL;
    return p->ops->act(p, ctx, cands, n_cands, rng, work->impl, out);
}

pv_err_t pv_policy_logprobs(const pv_policy_t *p, const pv_policy_ctx_t *ctx,
                            const char *const *cands, size_t n_cands, pv_policy_work_t *work,
                            float *logp_out, float *entropy)
{
    pv_err_t rc = s_check(p, ctx, cands, n_cands, work);
    if (rc != PV_OK || !logp_out)
        return rc != PV_OK ? rc : PV_ERR_INVAL;
    return p->ops->logprobs(p, ctx, cands, n_cands, work->impl, logp_out, entropy);
}

pv_err_t pv_policy_forward(const pv_policy_t *p, const pv_policy_ctx_t *ctx,
                           const char *const *cands, size_t n_cands, const uint32_t *tokens,
                           size_t n_tokens, pv_policy_work_t *work, float *logp_out, float *ent_out)
{
    pv_err_t rc = s_check(p, ctx, cands, n_cands, work);
    if (rc != PV_OK || !tokens || !logp_out)
        return rc != PV_OK ? rc : PV_ERR_INVAL;
    return p->ops->forward(p, ctx, cands, n_cands, tokens, n_tokens, work->impl, logp_out, ent_out);
}

pv_err_t pv_policy_backward(const pv_policy_t *p, pv_policy_work_t *work, const float *dlogp,
                            const float *dent, float *grad)
{
    if (!work || work->ops != p->ops || !dlogp || !grad)
        return PV_ERR_INVAL;
    return p->ops->backward(p, work->impl, dlogp, dent, grad);
}
