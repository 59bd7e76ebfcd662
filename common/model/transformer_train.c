/* transformer_train.c - the training forward (activations kept), its backward and the
 * evaluation forward; see transformer.h. Rows are tokens: row b*T + t is token t of
 * sequence b, N = B*T. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/model/kernels.h"
#include "common/model/transformer.h"
#include "common/model/transformer_impl.h"

struct pv_tf_work {
    size_t max_B, max_T, max_N;
    size_t B, T, N, n_sel;
    int ready; /* a training forward is cached */
    float inv_temp;
    uint32_t *tok;          /* (N) */
    uint32_t *tsel;         /* (n_sel) targets of the rows with one */
    size_t *sel;            /* (n_sel) their rows */
    pv_tf_agroup_t *groups; /* (max_B) one attention group per sequence */
    float *mem;
    size_t n_floats;
    /* per layer l, each block `stride` floats apart (see s_carve) */
    float *res;           /* (L+1, N, C) residual stream: input of layer l, res[L] the output */
    float *mid;           /* (L, N, C) after the attention block */
    float *ln1, *ln2;     /* (L, N, C) */
    float *rstd1, *rstd2; /* (L, N) */
    float *qlin, *qrot;   /* (L, N, H*D) q_proj output; after q norm and RoPE */
    float *klin, *krot;   /* (L, N, KV*D) */
    float *v;             /* (L, N, KV*D) */
    float *qrstd, *krstd; /* (L, N*H), (L, N*KV) */
    float *y;             /* (L, N, H*D) attention output */
    float *att;           /* (L, B, H, T, T) */
    float *gate, *up, *h; /* (L, N, F) */
    float *lnf, *rstdf;   /* (N, C), (N) */
    float *xsel;          /* (n_sel, C) final-norm rows with a target */
    float *logits;        /* (n_sel, V) logits, then log-probs, then their gradient */
    float *lp, *ent;      /* (n_sel) */
    float *keep;          /* (V) pv_k_mask's scratch */
    float *dlp, *dent;    /* (n_sel) gathered upstream gradients */
    /* backward scratch */
    float *dres, *dln, *dsel;      /* (N, C) */
    float *dy, *dq, *dq2;          /* (N, H*D) */
    float *dk, *dk2, *dv;          /* (N, KV*D) */
    float *dg, *du, *dh;           /* (N, F) */
    float *datt;                   /* (T, T) */
    size_t s_nc, s_nq, s_nk, s_nf; /* per-layer strides: max_N * C, H*D, KV*D, F */
    size_t s_att;                  /* max_B * H * max_T^2 */
};

/* The float blocks of a work: name, floats. Two passes: count, then assign. */
static size_t s_carve(pv_tf_work_t *w, const pv_tf_config_t *c, float *base)
{
    size_t L = c->num_hidden_layers, N = w->max_N, C = c->hidden_size, F = c->intermediate_size;
    size_t QD = (size_t)c->num_attention_heads * c->head_dim;
    size_t KD = (size_t)c->num_key_value_heads * c->head_dim;
    w->s_nc = N * C;
    w->s_nq = N * QD;
    w->s_nk = N * KD;
    w->s_nf = N * F;
    w->s_att = w->max_B * c->num_attention_heads * w->max_T * w->max_T;
    struct {
        float **p;
        size_t n;
    } blocks[] = {
        {&w->res, (L + 1) * N * C},
        {&w->mid, L * N * C},
        {&w->ln1, L * N * C},
        {&w->ln2, L * N * C},
        {&w->rstd1, L * N},
        {&w->rstd2, L * N},
        {&w->qlin, L * N * QD},
        {&w->qrot, L * N * QD},
        {&w->klin, L * N * KD},
        {&w->krot, L * N * KD},
        {&w->v, L * N * KD},
        {&w->qrstd, L * N * c->num_attention_heads},
        {&w->krstd, L * N * c->num_key_value_heads},
        {&w->y, L * N * QD},
        {&w->att, L * w->s_att},
        {&w->gate, L * N * F},
        {&w->up, L * N * F},
        {&w->h, L * N * F},
        {&w->lnf, N * C},
        {&w->rstdf, N},
        {&w->xsel, N * C},
        {&w->logits, N * c->vocab_size},
        {&w->keep, c->vocab_size},
        {&w->lp, N},
        {&w->ent, N},
        {&w->dlp, N},
        {&w->dent, N},
        {&w->dres, N * C},
        {&w->dln, N * C},
        {&w->dsel, N * C},
        {&w->dy, N * QD},
        {&w->dq, N * QD},
        {&w->dq2, N * QD},
        {&w->dk, N * KD},
        {&w->dk2, N * KD},
        {&w->dv, N * KD},
        {&w->dg, N * F},
        {&w->du, N * F},
        {&w->dh, N * F},
        {&w->datt, w->max_T * w->max_T},
    };
    size_t at = 0;
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        if (base)
            *blocks[i].p = base + at;
        at += (blocks[i].n + 15) / 16 * 16; /* 64-byte aligned blocks */
    }
    return at;
}

pv_err_t pv_tf_work_new(const pv_tf_t *m, size_t max_B, size_t max_T, pv_tf_work_t **out,
                        pv_errmsg_t *em)
{
    if (max_B == 0 || max_T == 0 || max_T > m->n_pos || max_B > (1u << 20))
        return pv_errf(em, PV_ERR_INVAL,
                       "transformer work: need 1 <= B and 1 <= T <= %zu positions (got B %zu, T "
                       "%zu)",
                       m->n_pos, max_B, max_T);
    pv_tf_work_t *w = calloc(1, sizeof *w);
    if (!w)
        return PV_ERR_NOMEM;
    w->max_B = max_B;
    w->max_T = max_T;
    w->max_N = max_B * max_T;
    w->n_floats = s_carve(w, &m->cfg, NULL);
    w->mem = aligned_alloc(64, w->n_floats * sizeof(float));
    w->tok = calloc(w->max_N, sizeof *w->tok);
    w->tsel = calloc(w->max_N, sizeof *w->tsel);
    w->sel = calloc(w->max_N, sizeof *w->sel);
    w->groups = calloc(max_B, sizeof *w->groups);
    if (!w->mem || !w->tok || !w->tsel || !w->sel || !w->groups) {
        size_t mb = w->n_floats * sizeof(float) >> 20;
        pv_tf_work_destroy(&w);
        return pv_errf(em, PV_ERR_NOMEM, "transformer work: no memory for %zu MiB", mb);
    }
    s_carve(w, &m->cfg, w->mem);
    *out = w;
    return PV_OK;
}

void pv_tf_work_destroy(pv_tf_work_t **wp)
{
    if (!wp || !*wp)
        return;
    pv_tf_work_t *w = *wp;
    free(w->mem);
    free(w->tok);
    free(w->tsel);
    free(w->sel);
    free(w->groups);
    free(w);
    *wp = NULL;
}

size_t pv_tf_work_bytes(const pv_tf_work_t *w)
{
    return w->n_floats * sizeof(float) + w->max_N * (2 * sizeof(uint32_t) + sizeof(size_t));
}

static pv_err_t s_check(const pv_tf_t *m, const pv_tf_work_t *w, const uint32_t *tokens,
                        const uint32_t *targets, size_t B, size_t T, pv_errmsg_t *em)
{
    if (B == 0 || T == 0 || B > w->max_B || T > w->max_T)
        return pv_errf(em, PV_ERR_INVAL,
                       "transformer: batch %zu x %zu outside the work's %zu x %zu", B, T, w->max_B,
                       w->max_T);
    for (size_t i = 0; i < B * T; i++) {
        if (tokens[i] >= m->cfg.vocab_size)
            return pv_errf(em, PV_ERR_RANGE, "transformer: token %u at %zu >= vocab_size %u",
                           tokens[i], i, m->cfg.vocab_size);
        if (targets && targets[i] != PV_TF_NO_TARGET && targets[i] >= m->cfg.vocab_size)
            return pv_errf(em, PV_ERR_RANGE, "transformer: target %u at %zu >= vocab_size %u",
                           targets[i], i, m->cfg.vocab_size);
    }
    return PV_OK;
}

/* The forward up to the logits of the selected rows (w->sel, w->n_sel set by the caller). */
static void s_forward(const pv_tf_t *m, pv_tf_work_t *w, const uint32_t *tokens, size_t B, size_t T)
{
    const pv_tf_config_t *c = &m->cfg;
    size_t N = B * T, C = c->hidden_size, H = c->num_attention_heads;
    size_t KV = c->num_key_value_heads, KD = KV * c->head_dim;
    float eps = (float)c->rms_norm_eps, *P = m->params;
    w->B = B;
    w->T = T;
    w->N = N;
    memcpy(w->tok, tokens, N * sizeof *tokens);
    pv_k_embed_fwd(w->res, P + m->o_embed, tokens, N, C);
    for (size_t l = 0; l < c->num_hidden_layers; l++) {
        size_t oc = l * w->s_nc, oq = l * w->s_nq, ok = l * w->s_nk, of = l * w->s_nf;
        pv_tf_lbuf_t lb = {
            .x = w->res + oc,
            .ln1 = w->ln1 + oc,
            .ln2 = w->ln2 + oc,
            .rstd1 = w->rstd1 + l * w->max_N,
            .rstd2 = w->rstd2 + l * w->max_N,
            .q = w->qlin + oq,
            .qr = w->qrot + oq,
            .k = w->klin + ok,
            .kn = w->krot + ok,
            .v = w->v + ok,
            .qrstd = w->qrstd + l * w->max_N * H,
            .krstd = w->krstd + l * w->max_N * KV,
            .y = w->y + oq,
            .mid = w->mid + oc,
            .gate = w->gate + of,
            .up = w->up + of,
            .h = w->h + of,
            .out = w->res + oc + w->s_nc,
        };
        /* one group per sequence: its keys are RoPE'd in place in krot, values stay in v */
        for (size_t b = 0; b < B; b++)
            w->groups[b] = (pv_tf_agroup_t){.row = b * T,
                                            .n = T,
                                            .kc = lb.kn + b * T * KD,
                                            .vc = lb.v + b * T * KD,
                                            .att = w->att + l * w->s_att + b * H * T * T};
        pv_tf_layer_fwd(m, l, &lb, N, w->groups, B);
    }
    pv_k_rmsnorm_fwd(w->lnf, w->rstdf, w->res + c->num_hidden_layers * w->s_nc, P + m->o_norm, N, C,
                     eps);
    for (size_t i = 0; i < w->n_sel; i++)
        memcpy(w->xsel + i * C, w->lnf + w->sel[i] * C, C * sizeof(float));
    pv_k_matmul_fwd(w->logits, w->xsel, P + m->o_head, NULL, w->n_sel, C, c->vocab_size);
}

/* The allowed ids of every position with a target: each < V, the target among them. */
static pv_err_t s_check_allow(const pv_tf_t *m, const uint32_t *targets, size_t N,
                              const pv_tf_allow_t *a, pv_errmsg_t *em)
{
    for (size_t i = 0; i < N; i++) {
        if (targets[i] == PV_TF_NO_TARGET || a->n[i] == 0)
            continue;
        const uint32_t *ids = a->ids + a->begin[i];
        if (a->n[i] > m->cfg.vocab_size) /* the mask's scratch holds vocab_size ids */
            return pv_errf(em, PV_ERR_RANGE,
                           "transformer: %u allowed ids at %zu > vocab_size %u (ids are "
                           "distinct)",
                           a->n[i], i, m->cfg.vocab_size);
        bool in = false;
        for (uint32_t k = 0; k < a->n[i]; k++) {
            if (ids[k] >= m->cfg.vocab_size)
                return pv_errf(em, PV_ERR_RANGE,
                               "transformer: allowed id %u at %zu >= vocab_size %u", ids[k], i,
                               m->cfg.vocab_size);
            in = in || ids[k] == targets[i];
        }
        if (!in)
            return pv_errf(em, PV_ERR_RANGE,
                           "transformer: target %u at %zu is none of its %u allowed ids",
                           targets[i], i, a->n[i]);
    }
    return PV_OK;
}

pv_err_t pv_tf_forward_masked(const pv_tf_t *m, pv_tf_work_t *w, const uint32_t *tokens,
                              const uint32_t *targets, size_t B, size_t T, float temperature,
                              const pv_tf_allow_t *allow, float *logp, float *ent, pv_errmsg_t *em)
{
    pv_err_t rc = s_check(m, w, tokens, targets, B, T, em);
    if (rc == PV_OK && allow)
        rc = s_check_allow(m, targets, B * T, allow, em);
    if (rc != PV_OK)
        return rc;
    if (!(temperature > 0))
        return pv_errf(em, PV_ERR_INVAL, "transformer: temperature must be > 0");
    size_t V = m->cfg.vocab_size;
    w->ready = 0;
    w->n_sel = 0;
    for (size_t i = 0; i < B * T; i++)
        if (targets[i] != PV_TF_NO_TARGET) {
            w->sel[w->n_sel] = i;
            w->tsel[w->n_sel++] = targets[i];
        }
    s_forward(m, w, tokens, B, T);
    for (size_t i = 0; allow && i < w->n_sel; i++) {
        size_t at = w->sel[i];
        if (allow->n[at])
            pv_k_mask(w->logits + i * V, w->keep, V, allow->ids + allow->begin[at], allow->n[at]);
    }
    w->inv_temp = 1.0f / temperature;
    pv_k_logsoftmax_fwd(w->logits, w->lp, w->ent, w->tsel, w->n_sel, V, w->inv_temp);
    memset(logp, 0, B * T * sizeof *logp);
    if (ent)
        memset(ent, 0, B * T * sizeof *ent);
    for (size_t i = 0; i < w->n_sel; i++) {
        logp[w->sel[i]] = w->lp[i];
        if (ent)
            ent[w->sel[i]] = w->ent[i];
    }
    w->ready = 1;
    return PV_OK;
}

pv_err_t pv_tf_forward(const pv_tf_t *m, pv_tf_work_t *w, const uint32_t *tokens,
                       const uint32_t *targets, size_t B, size_t T, float temperature, float *logp,
                       float *ent, pv_errmsg_t *em)
{
    return pv_tf_forward_masked(m, w, tokens, targets, B, T, temperature, NULL, logp, ent, em);
}

pv_err_t pv_tf_logits(const pv_tf_t *m, pv_tf_work_t *w, const uint32_t *tokens, size_t B, size_t T,
                      float *logits, pv_errmsg_t *em)
{
    pv_err_t rc = s_check(m, w, tokens, NULL, B, T, em);
    if (rc != PV_OK)
        return rc;
    w->ready = 0;
    w->n_sel = B * T;
    for (size_t i = 0; i < B * T; i++)
        w->sel[i] = i;
    s_forward(m, w, tokens, B, T);
    memcpy(logits, w->logits, B * T * m->cfg.vocab_size * sizeof *logits);
    return PV_OK;
}

#define S_ZERO(p, n) memset((p), 0, (n) * sizeof(float))

pv_err_t pv_tf_backward(const pv_tf_t *m, pv_tf_work_t *w, const float *dlogp, const float *dent,
                        float *grad)
{
    if (!w->ready)
        return PV_ERR_STATE;
    const pv_tf_config_t *c = &m->cfg;
    size_t B = w->B, T = w->T, N = w->N, C = c->hidden_size, F = c->intermediate_size;
    size_t D = c->head_dim, H = c->num_attention_heads, KV = c->num_key_value_heads;
    size_t QD = H * D, KD = KV * D, V = c->vocab_size;
    float *P = m->params;
    /* output layer: dlogits in place of the log-probs */
    for (size_t i = 0; i < w->n_sel; i++) {
        w->dlp[i] = dlogp[w->sel[i]];
        w->dent[i] = dent ? dent[w->sel[i]] : 0.0f;
    }
    pv_k_logsoftmax_bwd(w->logits, w->logits, w->ent, w->dlp, dent ? w->dent : NULL, w->tsel,
                        w->n_sel, V, w->inv_temp);
    S_ZERO(w->dsel, w->n_sel * C);
    pv_k_matmul_bwd(w->dsel, grad + m->o_head, NULL, w->logits, w->xsel, P + m->o_head, w->n_sel, C,
                    V);
    S_ZERO(w->dln, N * C);
    for (size_t i = 0; i < w->n_sel; i++)
        memcpy(w->dln + w->sel[i] * C, w->dsel + i * C, C * sizeof(float));
    S_ZERO(w->dres, N * C);
    pv_k_rmsnorm_bwd(w->dres, grad + m->o_norm, w->dln, w->res + c->num_hidden_layers * w->s_nc,
                     P + m->o_norm, w->rstdf, N, C);
    for (size_t l = c->num_hidden_layers; l-- > 0;) {
        float *x = w->res + l * w->s_nc, *ln1 = w->ln1 + l * w->s_nc, *mid = w->mid + l * w->s_nc;
        float *ql = w->qlin + l * w->s_nq, *qr = w->qrot + l * w->s_nq, *y = w->y + l * w->s_nq;
        float *kl = w->klin + l * w->s_nk, *kr = w->krot + l * w->s_nk, *v = w->v + l * w->s_nk;
        float *att = w->att + l * w->s_att, *ln2 = w->ln2 + l * w->s_nc;
        float *g = w->gate + l * w->s_nf, *u = w->up + l * w->s_nf, *h = w->h + l * w->s_nf;
        /* x_next = mid + down(silu(gate(ln2)) * up(ln2)) */
        S_ZERO(w->dh, N * F);
        pv_k_matmul_bwd(w->dh, pv_tf_lw(m, grad, l, S_WD), NULL, w->dres, h,
                        pv_tf_lw(m, P, l, S_WD), N, F, C);
        S_ZERO(w->dg, N * F);
        S_ZERO(w->du, N * F);
        pv_k_swiglu_bwd(w->dg, w->du, w->dh, g, u, N * F);
        S_ZERO(w->dln, N * C);
        pv_k_matmul_bwd(w->dln, pv_tf_lw(m, grad, l, S_WG), NULL, w->dg, ln2,
                        pv_tf_lw(m, P, l, S_WG), N, C, F);
        pv_k_matmul_bwd(w->dln, pv_tf_lw(m, grad, l, S_WU), NULL, w->du, ln2,
                        pv_tf_lw(m, P, l, S_WU), N, C, F);
        pv_k_rmsnorm_bwd(w->dres, pv_tf_lw(m, grad, l, S_LN2), w->dln, mid,
                         pv_tf_lw(m, P, l, S_LN2), w->rstd2 + l * w->max_N, N, C);
        /* mid = x + o(attn(rope(norm(q)), rope(norm(k)), v)) */
        S_ZERO(w->dy, N * QD);
        pv_k_matmul_bwd(w->dy, pv_tf_lw(m, grad, l, S_WO), pv_tf_lw(m, grad, l, S_BO), w->dres, y,
                        pv_tf_lw(m, P, l, S_WO), N, QD, C);
        S_ZERO(w->dq, N * QD);
        S_ZERO(w->dk, N * KD);
        S_ZERO(w->dv, N * KD);
        S_ZERO(w->dq2, N * QD);
        S_ZERO(w->dk2, N * KD);
        for (size_t b = 0; b < B; b++) {
            pv_k_attn_bwd(w->dq + b * T * QD, w->dk + b * T * KD, w->dv + b * T * KD, w->datt,
                          w->dy + b * T * QD, att + b * H * T * T, qr + b * T * QD, kr + b * T * KD,
                          v + b * T * KD, T, 0, H, KV, D);
            pv_k_rope_bwd(w->dq2 + b * T * QD, w->dq + b * T * QD, m->rope_cos, m->rope_sin, T, 0,
                          H, D);
            pv_k_rope_bwd(w->dk2 + b * T * KD, w->dk + b * T * KD, m->rope_cos, m->rope_sin, T, 0,
                          KV, D);
        }
        float *dql = w->dq2, *dkl = w->dk2;
        if (c->qk_norm) {
            S_ZERO(w->dq, N * QD);
            S_ZERO(w->dk, N * KD);
            pv_k_rmsnorm_bwd(w->dq, pv_tf_lw(m, grad, l, S_QN), w->dq2, ql, pv_tf_lw(m, P, l, S_QN),
                             w->qrstd + l * w->max_N * H, N * H, D);
            pv_k_rmsnorm_bwd(w->dk, pv_tf_lw(m, grad, l, S_KN), w->dk2, kl, pv_tf_lw(m, P, l, S_KN),
                             w->krstd + l * w->max_N * KV, N * KV, D);
            dql = w->dq;
            dkl = w->dk;
        }
        S_ZERO(w->dln, N * C);
        pv_k_matmul_bwd(w->dln, pv_tf_lw(m, grad, l, S_WQ), pv_tf_lw(m, grad, l, S_BQ), dql, ln1,
                        pv_tf_lw(m, P, l, S_WQ), N, C, QD);
        pv_k_matmul_bwd(w->dln, pv_tf_lw(m, grad, l, S_WK), pv_tf_lw(m, grad, l, S_BK), dkl, ln1,
                        pv_tf_lw(m, P, l, S_WK), N, C, KD);
        pv_k_matmul_bwd(w->dln, pv_tf_lw(m, grad, l, S_WV), pv_tf_lw(m, grad, l, S_BV), w->dv, ln1,
                        pv_tf_lw(m, P, l, S_WV), N, C, KD);
        pv_k_rmsnorm_bwd(w->dres, pv_tf_lw(m, grad, l, S_LN1), w->dln, x, pv_tf_lw(m, P, l, S_LN1),
                         w->rstd1 + l * w->max_N, N, C);
    }
    pv_k_embed_bwd(grad + m->o_embed, w->dres, w->tok, N, C);
    return PV_OK;
}
