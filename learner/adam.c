/* adam.c - AdamW with global-norm clipping; see adam.h. */
#include "learner/adam.h"

#include <math.h>
#include <stdlib.h>

struct pv_adam {
    pv_adam_opts_t opts;
    size_t n;
    uint64_t t;
    float *m; /* (n) first moment */
    float *v; /* (n) second moment */
};

pv_adam_opts_t pv_adam_opts_default(double lr)
{
    pv_adam_opts_t o = {.lr = lr, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .max_grad_norm = 1.0};
    return o;
}

pv_err_t pv_adam_new(size_t n, const pv_adam_opts_t *opts, pv_adam_t **out, pv_errmsg_t *em)
{
    if (n == 0 || !(opts->lr >= 0) || !(opts->beta1 >= 0 && opts->beta1 < 1) ||
        !(opts->beta2 >= 0 && opts->beta2 < 1) || !(opts->eps >= 0) || !(opts->weight_decay >= 0))
        return pv_errf(em, PV_ERR_INVAL,
                       "adam: need n > 0, lr >= 0, betas in [0, 1), eps >= 0, weight_decay >= 0");
    pv_adam_t *self = calloc(1, sizeof *self);
    if (self)
        self->m = calloc(2 * n, sizeof(float));
    if (!self || !self->m) {
        free(self);
        return pv_errf(em, PV_ERR_NOMEM, "adam: no memory for %zu parameters", n);
    }
    self->v = self->m + n;
    self->n = n;
    self->opts = *opts;
    *out = self;
    return PV_OK;
}

void pv_adam_destroy(pv_adam_t **self)
{
    if (!self || !*self)
        return;
    free((*self)->m);
    free(*self);
    *self = NULL;
}

double pv_grad_norm(const float *g, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += (double)g[i] * (double)g[i];
    return sqrt(s);
}

pv_err_t pv_adam_step(pv_adam_t *self, float *params, float *grad, double *grad_norm)
{
    const pv_adam_opts_t *o = &self->opts;
    double norm = pv_grad_norm(grad, self->n);
    if (grad_norm)
        *grad_norm = norm;
    if (!isfinite(norm))
        return PV_ERR_RANGE;
    if (o->max_grad_norm > 0) {
        double coef = o->max_grad_norm / (norm + 1e-6);
        if (coef < 1.0) {
            float c = (float)coef;
            for (size_t i = 0; i < self->n; i++)
                grad[i] *= c;
        }
    }
    self->t++;
    float b1 = (float)o->beta1, b2 = (float)o->beta2;
    double bc1 = 1.0 - pow(o->beta1, (double)self->t);
    double bc2 = 1.0 - pow(o->beta2, (double)self->t);
    float step = (float)(o->lr / bc1);
    float bc2s = (float)sqrt(bc2);
    float decay = (float)(1.0 - o->lr * o->weight_decay);
    float eps = (float)o->eps;
    float *m = self->m, *v = self->v;
    for (size_t i = 0; i < self->n; i++) {
        float g = grad[i];
        if (o->weight_decay > 0)
            params[i] *= decay;
        m[i] = b1 * m[i] + (1.0f - b1) * g;
        v[i] = b2 * v[i] + (1.0f - b2) * g * g;
        params[i] -= step * m[i] / (sqrtf(v[i]) / bc2s + eps);
    }
    return PV_OK;
}

void pv_adam_set_lr(pv_adam_t *self, double lr)
{
    self->opts.lr = lr;
}

const pv_adam_opts_t *pv_adam_opts(const pv_adam_t *self)
{
    return &self->opts;
}

size_t pv_adam_n(const pv_adam_t *self)
{
    return self->n;
}

float *pv_adam_m(pv_adam_t *self)
{
    return self->m;
}

float *pv_adam_v(pv_adam_t *self)
{
    return self->v;
}

uint64_t pv_adam_t_step(const pv_adam_t *self)
{
    return self->t;
}

void pv_adam_set_t_step(pv_adam_t *self, uint64_t t)
{
    self->t = t;
}
