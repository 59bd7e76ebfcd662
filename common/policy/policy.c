/* policy.c - dispatch of the policy interface to its kinds; see policy.h. */
#include "common/policy/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/policy/policy_impl.h"

static const pv_policy_ops_t *const s_kinds[] = {
    &pv_policy_bow_mlp_ops,
    &pv_policy_transformer_ops,
};
#define S_N_KINDS (sizeof s_kinds / sizeof s_kinds[0])

/* Copy the spec's strings into one block the policy owns (the resolved spec points there). */
static pv_err_t s_own_strings(pv_policy_t *self, const pv_policy_spec_t *spec)
{
    size_t lp = spec->path ? strlen(spec->path) : 0, le = spec->env ? strlen(spec->env) : 0;
    size_t lt = spec->tokenizer_json ? spec->tokenizer_json_len : 0;
    self->strs = malloc(lp + le + lt + 3);
    if (!self->strs)
        return PV_ERR_NOMEM;
    char *at = self->strs;
    self->spec.path = spec->path ? memcpy(at, spec->path, lp + 1) : NULL;
    at += lp + 1;
    self->spec.env = spec->env ? memcpy(at, spec->env, le + 1) : NULL;
    at += le + 1;
    if (spec->tokenizer_json) {
        memcpy(at, spec->tokenizer_json, lt);
        at[lt] = '\0';
        self->spec.tokenizer_json = at;
    }
    self->spec.tokenizer_json_len = lt;
    return PV_OK;
}

/* The tensor-table kinds: policy.c lays the declared tensors out and allocates the buffer. */
static pv_err_t s_layout(pv_policy_t *self, pv_errmsg_t *em)
{
    self->table = calloc(PV_POLICY_MAX_TENSORS, sizeof *self->table);
    if (!self->table)
        return PV_ERR_NOMEM;
    self->own_params = true;
    self->ops->tensors(&self->spec, self->table, &self->n_tensors);
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
    if (!self->params)
        return pv_errf(em, PV_ERR_NOMEM, "no memory for %zu policy parameters", off);
    self->ops->init(self);
    return PV_OK;
}

pv_err_t pv_policy_new(const pv_policy_spec_t *spec, pv_policy_t **out, pv_errmsg_t *em)
{
    if (!spec || !spec->kind || !out)
        return pv_errf(em, PV_ERR_INVAL, "policy spec without a kind");
    const pv_policy_ops_t *ops = NULL;
    for (size_t i = 0; i < S_N_KINDS; i++)
        if (strcmp(s_kinds[i]->kind, spec->kind) == 0)
            ops = s_kinds[i];
    if (!ops)
        return pv_errf(em, PV_ERR_INVAL, "unknown policy kind '%s' (known: bow_mlp, transformer)",
                       spec->kind);
    pv_policy_t *self = calloc(1, sizeof *self);
    if (!self)
        return PV_ERR_NOMEM;
    self->ops = ops;
    self->spec = *spec;
    self->spec.kind = ops->kind;
    pv_err_t rc = s_own_strings(self, spec);
    if (rc != PV_OK) {
        pv_policy_destroy(&self);
        return rc;
    }
    if (self->spec.temperature == 0.0f)
        self->spec.temperature = 1.0f;
    if (!(self->spec.temperature > 0.0f) || !isfinite(self->spec.temperature)) {
        pv_policy_destroy(&self);
        return pv_errf(em, PV_ERR_INVAL, "policy temperature must be a finite number > 0, got %g",
                       (double)spec->temperature);
    }
    rc = ops->resolve(&self->spec, em);
    if (rc == PV_OK)
        rc = ops->build ? ops->build(self, em) : s_layout(self, em);
    if (rc != PV_OK) {
        pv_policy_destroy(&self);
        return rc;
    }
    *out = self;
    return PV_OK;
}

void pv_policy_destroy(pv_policy_t **p)
{
    if (!p || !*p)
        return;
    pv_policy_t *self = *p;
    if (self->ops->free)
        self->ops->free(self);
    if (self->own_params) {
        free(self->params);
        free(self->table);
    }
    free(self->strs);
    free(self);
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
    if (version != p->version)
        p->generation++; /* new parameters: what a work derived from the old ones is stale */
    p->version = version;
}

pv_err_t pv_policy_set_temperature(pv_policy_t *p, float temperature)
{
    if (!(temperature > 0.0f) || !isfinite(temperature))
        return PV_ERR_INVAL;
    p->spec.temperature = temperature;
    return PV_OK;
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
    if (n == 0 && !p->ops->generative)
        return PV_ERR_INVAL;
    if (n > p->spec.max_cands)
        return PV_ERR_LIMIT;
    for (size_t i = 0; i < n; i++)
        if (!cands[i])
            return PV_ERR_INVAL;
    return PV_OK;
}

/* s_check without the candidate list a generative kind may go without. */
static pv_err_t s_check_c(const pv_policy_t *p, const pv_policy_ctx_t *ctx,
                          const char *const *cands, size_t n, const pv_policy_work_t *work)
{
    static const char *const none[1] = {""};
    return s_check(p, ctx, cands ? cands : (n == 0 && p->ops->generative ? none : NULL), n, work);
}

pv_err_t pv_policy_act(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                       size_t n_cands, pv_rng_t *rng, pv_policy_work_t *work, pv_policy_step_t *out)
{
    pv_err_t rc = s_check_c(p, ctx, cands, n_cands, work);
    if (rc != PV_OK || !out)
        return rc != PV_OK ? rc : PV_ERR_INVAL;
    return p->ops->act(p, ctx, cands, n_cands, rng, work->impl, out);
}

bool pv_policy_batches(const pv_policy_t *p)
{
    return p->ops->act_batch != NULL;
}

pv_err_t pv_policy_act_batch(const pv_policy_t *p, const pv_policy_ctx_t *ctxs,
                             const char *const *const *cands, const size_t *n_cands,
                             pv_rng_t *const *rngs, size_t B, pv_policy_work_t *work,
                             pv_policy_step_t *out)
{
    if (B == 0 || B > PV_POLICY_MAX_BATCH || !ctxs || !cands || !n_cands || !out ||
        (B > 1 && !p->ops->act_batch))
        return PV_ERR_INVAL;
    for (size_t b = 0; b < B; b++) {
        pv_err_t rc = s_check_c(p, &ctxs[b], cands[b], n_cands[b], work);
        if (rc != PV_OK)
            return rc;
    }
    if (!p->ops->act_batch)
        return p->ops->act(p, ctxs, cands[0], n_cands[0], rngs ? rngs[0] : NULL, work->impl, out);
    return p->ops->act_batch(p, ctxs, cands, n_cands, rngs, B, work->impl, out);
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
    pv_err_t rc = s_check_c(p, ctx, cands, n_cands, work);
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

/* Every item of a training batch as s_check_c checks a context, with its tokens present;
 * the error names `what` and the item. */
static pv_err_t s_check_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                              const pv_policy_work_t *work, const char *what, pv_errmsg_t *em)
{
    for (size_t i = 0; i < n; i++) {
        pv_err_t rc = s_check_c(p, &items[i].ctx, items[i].cands, items[i].n_cands, work);
        if (rc == PV_OK && (!items[i].tokens || !items[i].n_tokens))
            rc = PV_ERR_INVAL;
        if (rc != PV_OK)
            return pv_errf(em, rc, "%s: item %zu: %s", what, i, pv_strerror(rc));
    }
    return PV_OK;
}

pv_err_t pv_policy_forward_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                                 pv_policy_work_t *work, float *logp_out, float *ent_out,
                                 pv_errmsg_t *em)
{
    if (!work || work->ops != p->ops || (n && (!items || !logp_out)))
        return pv_errf(em, PV_ERR_INVAL, "policy forward: bad arguments");
    pv_err_t checked = s_check_items(p, items, n, work, "policy forward", em);
    if (checked != PV_OK)
        return checked;
    if (p->ops->forward_items)
        return p->ops->forward_items(p, items, n, work->impl, logp_out, ent_out, em);
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const pv_policy_item_t *it = &items[i];
        pv_err_t rc = p->ops->forward(p, &it->ctx, it->cands, it->n_cands, it->tokens, it->n_tokens,
                                      work->impl, logp_out + at, ent_out ? ent_out + at : NULL);
        if (rc != PV_OK)
            return pv_errf(em, rc, "policy forward: item %zu: %s", i, pv_strerror(rc));
        at += it->n_tokens;
    }
    return PV_OK;
}

pv_err_t pv_policy_train_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                               pv_policy_work_t *work, pv_policy_token_grad_fn fn, void *user,
                               float *grad, float *logp_out, float *ent_out, pv_errmsg_t *em)
{
    if (!p->ops->train_items)
        return PV_ERR_UNSUPPORTED;
    if (!work || work->ops != p->ops || !grad || !fn || (n && !items))
        return pv_errf(em, PV_ERR_INVAL, "policy training pass: bad arguments");
    pv_err_t checked = s_check_items(p, items, n, work, "policy training pass", em);
    if (checked != PV_OK)
        return checked;
    return p->ops->train_items(p, items, n, work->impl, fn, user, grad, logp_out, ent_out, em);
}

pv_err_t pv_policy_backward_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                                  pv_policy_work_t *work, const float *dlogp, const float *dent,
                                  float *grad, float *logp_out, pv_errmsg_t *em)
{
    if (!work || work->ops != p->ops || !grad || (n && (!items || !dlogp)))
        return pv_errf(em, PV_ERR_INVAL, "policy backward: bad arguments");
    pv_err_t checked = s_check_items(p, items, n, work, "policy backward", em);
    if (checked != PV_OK)
        return checked;
    if (p->ops->backward_items)
        return p->ops->backward_items(p, items, n, work->impl, dlogp, dent, grad, logp_out, em);
    /* item by item: forward again, then backward (an item without gradient is skipped) */
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const pv_policy_item_t *it = &items[i];
        const float *g = dlogp + at, *ge = dent ? dent + at : NULL;
        at += it->n_tokens;
        bool zero = true;
        for (size_t k = 0; k < it->n_tokens; k++)
            zero = zero && g[k] == 0.0f && (!ge || ge[k] == 0.0f);
        if (zero)
            continue;
        float l[1], e[1], *lb = it->n_tokens == 1 ? l : NULL, *eb = it->n_tokens == 1 ? e : NULL;
        float *heap = NULL;
        if (!lb) {
            heap = malloc(2 * it->n_tokens * sizeof *heap);
            if (!heap)
                return PV_ERR_NOMEM;
            lb = heap;
            eb = heap + it->n_tokens;
        }
        pv_err_t rc = p->ops->forward(p, &it->ctx, it->cands, it->n_cands, it->tokens, it->n_tokens,
                                      work->impl, lb, eb);
        if (rc == PV_OK)
            rc = p->ops->backward(p, work->impl, g, ge, grad);
        if (rc == PV_OK && logp_out)
            memcpy(logp_out + at - it->n_tokens, lb, it->n_tokens * sizeof *lb);
        free(heap);
        if (rc != PV_OK)
            return pv_errf(em, rc, "policy backward: item %zu: %s", i, pv_strerror(rc));
    }
    return PV_OK;
}

uint32_t pv_policy_token_space(const pv_policy_t *p)
{
    return p->ops->token_space ? p->ops->token_space(p) : 0;
}

pv_err_t pv_policy_action_tokens(const pv_policy_t *p, const char *action, const char *const *cands,
                                 size_t n_cands, pv_policy_work_t *work, uint32_t *tokens,
                                 size_t cap, size_t *n)
{
    if (!action || !n || !work || work->ops != p->ops)
        return PV_ERR_INVAL;
    if (p->ops->action_tokens)
        return p->ops->action_tokens(p, action, work->impl, tokens, cap, n);
    for (size_t i = 0; cands && i < n_cands; i++)
        if (cands[i] && strcmp(cands[i], action) == 0) {
            *n = 1;
            if (cap < 1)
                return PV_ERR_LIMIT;
            tokens[0] = (uint32_t)i;
            return PV_OK;
        }
    return PV_ERR_NOTFOUND;
}

pv_err_t pv_policy_load_dir(pv_policy_t *p, const char *dir, pv_errmsg_t *em)
{
    if (!p->ops->load_dir)
        return pv_errf(em, PV_ERR_DATA,
                       "%s is a directory, and policy kind %s reads no Hugging Face directory "
                       "(its checkpoint is a safetensors file)",
                       dir, p->ops->kind);
    float *keep = malloc(p->n_params * sizeof *keep);
    if (!keep)
        return pv_errf(em, PV_ERR_NOMEM, "no memory to keep %zu parameters", p->n_params);
    memcpy(keep, p->params, p->n_params * sizeof *keep);
    pv_err_t rc = p->ops->load_dir(p, dir, em);
    p->generation++;
    if (rc != PV_OK)
        memcpy(p->params, keep, p->n_params * sizeof *keep);
    free(keep);
    return rc;
}

pv_err_t pv_policy_save_dir(const pv_policy_t *p, const char *dir, pv_errmsg_t *em)
{
    if (!p->ops->save_dir)
        return pv_errf(em, PV_ERR_UNSUPPORTED,
                       "policy kind %s has no Hugging Face form (its checkpoint is a safetensors "
                       "file)",
                       p->ops->kind);
    return p->ops->save_dir(p, dir, em);
}
