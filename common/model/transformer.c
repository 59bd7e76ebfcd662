/* transformer.c - configuration, parameter buffer and tensor table, initialisation and
 * sampling; see transformer.h. The forward and backward passes are in transformer_train.c,
 * generation in transformer_gen.c. */
#include "common/model/transformer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/model/kernels.h"
#include "common/model/transformer_impl.h"

#define S_MAX_DIM      (1u << 20)   /* any one size */
#define S_MAX_PARAMS   (1ull << 34) /* 64 GiB of float32 */
#define S_MAX_ROPE     65536u       /* positions in the RoPE tables */
#define S_NAME_BYTES   64
#define S_MAX_HEAD_DIM 8192u /* RoPE frequencies on the stack */

static const char *const s_family[] = {"llama", "qwen2", "qwen3"};

const char *pv_tf_family_name(pv_tf_family_t f)
{
    return (unsigned)f < 3 ? s_family[f] : NULL;
}

static void s_config_base(pv_tf_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->family = PV_TF_QWEN3;
    c->rms_norm_eps = 1e-6;
    c->rope_theta = 10000.0;
    c->initializer_range = 0.02;
    c->tie_word_embeddings = 1;
    c->qk_norm = 1;
    c->max_position_embeddings = 1024;
    c->bos_token_id = -1;
    c->eos_token_id = -1;
}

void pv_tf_config_default(pv_tf_config_t *c)
{
    s_config_base(c);
    c->vocab_size = 1024;
    c->hidden_size = 192;
    c->intermediate_size = 512;
    c->num_hidden_layers = 4;
    c->num_attention_heads = 6;
    c->num_key_value_heads = 2;
    c->head_dim = 32;
}

void pv_tf_config_20m(pv_tf_config_t *c)
{
    s_config_base(c);
    c->vocab_size = 4096;
    c->hidden_size = 512;
    c->intermediate_size = 1408;
    c->num_hidden_layers = 6;
    c->num_attention_heads = 8;
    c->num_key_value_heads = 4;
    c->head_dim = 64;
}

pv_err_t pv_tf_config_check(const pv_tf_config_t *c, pv_errmsg_t *em)
{
    const struct {
        const char *name;
        uint32_t v;
    } sizes[] = {{"vocab_size", c->vocab_size},
                 {"hidden_size", c->hidden_size},
                 {"intermediate_size", c->intermediate_size},
                 {"num_hidden_layers", c->num_hidden_layers},
                 {"num_attention_heads", c->num_attention_heads},
                 {"num_key_value_heads", c->num_key_value_heads},
                 {"head_dim", c->head_dim},
                 {"max_position_embeddings", c->max_position_embeddings}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].v == 0 || (sizes[i].v > S_MAX_DIM && i != 7))
            return pv_errf(em, PV_ERR_INVAL, "transformer: %s = %u is outside [1, %u]",
                           sizes[i].name, sizes[i].v, S_MAX_DIM);
    if (!pv_tf_family_name(c->family))
        return pv_errf(em, PV_ERR_INVAL, "transformer: unknown family %d", (int)c->family);
    if (c->num_attention_heads % c->num_key_value_heads)
        return pv_errf(em, PV_ERR_INVAL,
                       "transformer: num_attention_heads %u is not a multiple of "
                       "num_key_value_heads %u",
                       c->num_attention_heads, c->num_key_value_heads);
    if (c->head_dim % 2)
        return pv_errf(em, PV_ERR_INVAL, "transformer: head_dim %u is odd (RoPE rotates pairs)",
                       c->head_dim);
    if (!(c->rms_norm_eps > 0) || !(c->rope_theta > 1) || !(c->initializer_range >= 0) ||
        !isfinite(c->rope_theta) || !isfinite(c->initializer_range))
        return pv_errf(em, PV_ERR_INVAL,
                       "transformer: need rms_norm_eps > 0, rope_theta > 1, "
                       "initializer_range >= 0");
    const double f = c->rope_llama3.factor, lo = c->rope_llama3.low_freq_factor,
                 hi = c->rope_llama3.high_freq_factor;
    if (f != 0 && !(f > 0 && lo > 0 && hi > lo && c->rope_llama3.original_max_position_embeddings))
        return pv_errf(em, PV_ERR_INVAL,
                       "transformer: llama3 rope scaling needs factor > 0, high_freq_factor > "
                       "low_freq_factor > 0, original_max_position_embeddings > 0");
    if (c->head_dim > S_MAX_HEAD_DIM)
        return pv_errf(em, PV_ERR_INVAL, "transformer: head_dim %u is above %u", c->head_dim,
                       S_MAX_HEAD_DIM);
    const char *fam = s_family[c->family];
    if (c->family == PV_TF_QWEN2 && (!c->attention_bias || c->qk_norm))
        return pv_errf(em, PV_ERR_INVAL,
                       "transformer: %s has q/k/v biases and no q/k norm (attention_bias = 1, "
                       "qk_norm = 0)",
                       fam);
    if (c->family == PV_TF_QWEN3 && !c->qk_norm)
        return pv_errf(em, PV_ERR_INVAL, "transformer: %s always has the q/k norm", fam);
    if (c->family == PV_TF_LLAMA && c->qk_norm)
        return pv_errf(em, PV_ERR_INVAL, "transformer: %s has no q/k norm (use qwen3)", fam);
    return PV_OK;
}

/* Adds one tensor to the table (names into the name block). */
static size_t s_add(pv_tf_t *m, size_t *off, const char *name, uint64_t d0, uint64_t d1)
{
    pv_tf_tensor_t *t = &m->tensors[m->n_tensors];
    char *nm = m->names + m->n_tensors * S_NAME_BYTES;
    snprintf(nm, S_NAME_BYTES, "%s", name);
    t->name = nm;
    t->ndim = d1 ? 2 : 1;
    t->shape[0] = d0;
    t->shape[1] = d1;
    t->numel = (size_t)(d0 * (d1 ? d1 : 1));
    t->offset = *off;
    *off += t->numel;
    m->n_tensors++;
    return t->offset;
}

/* Lays out the table and the layer offsets. Returns the number of floats. */
static size_t s_layout(pv_tf_t *m)
{
    const pv_tf_config_t *c = &m->cfg;
    uint64_t C = c->hidden_size, V = c->vocab_size, F = c->intermediate_size, D = c->head_dim;
    uint64_t QD = c->num_attention_heads * D, KD = c->num_key_value_heads * D;
    int o_bias = c->attention_bias && c->family != PV_TF_QWEN2;
    static const char *const suffix[S_NPER] = {
        "input_layernorm.weight",  "self_attn.q_proj.weight", "self_attn.q_proj.bias",
        "self_attn.k_proj.weight", "self_attn.k_proj.bias",   "self_attn.v_proj.weight",
        "self_attn.v_proj.bias",   "self_attn.o_proj.weight", "self_attn.o_proj.bias",
        "self_attn.q_norm.weight", "self_attn.k_norm.weight", "post_attention_layernorm.weight",
        "mlp.gate_proj.weight",    "mlp.up_proj.weight",      "mlp.down_proj.weight"};
    const uint64_t shp[S_NPER][2] = {{C, 0},  {QD, C}, {QD, 0}, {KD, C}, {KD, 0},
                                     {KD, C}, {KD, 0}, {C, QD}, {C, 0},  {D, 0},
                                     {D, 0},  {C, 0},  {F, C},  {F, C},  {C, F}};
    size_t off = 0;
    char name[S_NAME_BYTES];
#define S_ADD(nm, a, b) s_add(m, &off, nm, a, b)
    size_t e = S_ADD("model.embed_tokens.weight", V, C);
    for (uint32_t l = 0; l < c->num_hidden_layers; l++)
        for (int k = 0; k < S_NPER; k++) {
            int on = 1;
            if (k == S_BQ || k == S_BK || k == S_BV)
                on = c->attention_bias;
            else if (k == S_BO)
                on = o_bias;
            else if (k == S_QN || k == S_KN)
                on = c->qk_norm;
            size_t o = S_ABSENT;
            if (on) {
                snprintf(name, sizeof name, "model.layers.%u.%s", l, suffix[k]);
                o = S_ADD(name, shp[k][0], shp[k][1]);
            }
            m->loff[l * S_NPER + (size_t)k] = o;
        }
    size_t nrm = S_ADD("model.norm.weight", C, 0);
    size_t head = c->tie_word_embeddings ? e : S_ADD("lm_head.weight", V, C);
#undef S_ADD
    m->o_embed = e;
    m->o_norm = nrm;
    m->o_head = head;
    return off;
}

void pv_tf_init(pv_tf_t *m, uint64_t seed)
{
    pv_rng_t rng;
    pv_rng_seed(&rng, seed, 0x7f4a7c15u);
    double sd = m->cfg.initializer_range;
    for (size_t i = 0; i < m->n_tensors; i++) {
        const pv_tf_tensor_t *t = &m->tensors[i];
        float *p = m->params + t->offset;
        const char *dot = strrchr(t->name, '.');
        int is_bias = dot && strcmp(dot, ".bias") == 0;
        int is_norm = t->ndim == 1 && !is_bias;
        for (size_t j = 0; j < t->numel; j++)
            p[j] = is_norm ? 1.0f : is_bias ? 0.0f : (float)(sd * pv_rng_normal(&rng));
    }
}

pv_err_t pv_tf_new(const pv_tf_config_t *cfg, const pv_tf_opts_t *opts, pv_tf_t **out,
                   pv_errmsg_t *em)
{
    pv_err_t rc = pv_tf_config_check(cfg, em);
    if (rc != PV_OK)
        return rc;
    pv_tf_t *m = calloc(1, sizeof *m);
    if (!m)
        return PV_ERR_NOMEM;
    m->cfg = *cfg;
    size_t nt = 3 + (size_t)cfg->num_hidden_layers * S_NPER, half = cfg->head_dim / 2;
    m->n_pos =
        cfg->max_position_embeddings < S_MAX_ROPE ? cfg->max_position_embeddings : S_MAX_ROPE;
    m->tensors = calloc(nt, sizeof *m->tensors);
    m->names = calloc(nt, S_NAME_BYTES);
    m->loff = calloc((size_t)cfg->num_hidden_layers * S_NPER, sizeof *m->loff);
    m->rope_cos = malloc(m->n_pos * half * sizeof(float));
    m->rope_sin = malloc(m->n_pos * half * sizeof(float));
    if (m->tensors && m->names && m->loff)
        m->n_params = s_layout(m);
    if (m->n_params > S_MAX_PARAMS) {
        pv_tf_destroy(&m);
        return pv_errf(em, PV_ERR_INVAL, "transformer: too many parameters");
    }
    if (m->n_params)
        m->params = malloc(m->n_params * sizeof *m->params);
    if (!m->params || !m->rope_cos || !m->rope_sin) {
        size_t n = m->n_params;
        pv_tf_destroy(&m);
        return pv_errf(em, PV_ERR_NOMEM, "transformer: no memory for %zu parameters", n);
    }
    float inv[S_MAX_HEAD_DIM / 2];
    pv_k_rope_inv_freq(inv, cfg->head_dim, cfg->rope_theta);
    if (cfg->rope_llama3.factor > 0)
        pv_k_rope_llama3(inv, cfg->head_dim, cfg->rope_llama3.factor,
                         cfg->rope_llama3.low_freq_factor, cfg->rope_llama3.high_freq_factor,
                         cfg->rope_llama3.original_max_position_embeddings);
    pv_k_rope_tables(m->rope_cos, m->rope_sin, m->n_pos, cfg->head_dim, inv);
    pv_tf_init(m, opts ? opts->seed : 0);
    pv_k_blas_threads(opts ? opts->blas_threads : 1);
    *out = m;
    return PV_OK;
}

void pv_tf_destroy(pv_tf_t **mp)
{
    if (!mp || !*mp)
        return;
    pv_tf_t *m = *mp;
    free(m->params);
    free(m->tensors);
    free(m->names);
    free(m->loff);
    free(m->rope_cos);
    free(m->rope_sin);
    free(m);
    *mp = NULL;
}

const pv_tf_config_t *pv_tf_config(const pv_tf_t *m)
{
    return &m->cfg;
}

float *pv_tf_params(pv_tf_t *m)
{
    return m->params;
}

const float *pv_tf_params_const(const pv_tf_t *m)
{
    return m->params;
}

size_t pv_tf_n_params(const pv_tf_t *m)
{
    return m->n_params;
}

size_t pv_tf_n_tensors(const pv_tf_t *m)
{
    return m->n_tensors;
}

const pv_tf_tensor_t *pv_tf_tensor(const pv_tf_t *m, size_t i)
{
    return i < m->n_tensors ? &m->tensors[i] : NULL;
}

const pv_tf_tensor_t *pv_tf_find(const pv_tf_t *m, const char *name)
{
    for (size_t i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return &m->tensors[i];
    return NULL;
}

void pv_tf_layer_fwd(const pv_tf_t *m, size_t l, const pv_tf_lbuf_t *b, size_t n,
                     const pv_tf_agroup_t *groups, size_t n_groups)
{
    const pv_tf_config_t *c = &m->cfg;
    size_t C = c->hidden_size, F = c->intermediate_size, D = c->head_dim;
    size_t H = c->num_attention_heads, KV = c->num_key_value_heads, QD = H * D, KD = KV * D;
    float eps = (float)c->rms_norm_eps, *P = m->params;
    pv_k_rmsnorm_fwd(b->ln1, b->rstd1, b->x, pv_tf_lw(m, P, l, S_LN1), n, C, eps);
    pv_k_matmul_fwd(b->q, b->ln1, pv_tf_lw(m, P, l, S_WQ), pv_tf_lw(m, P, l, S_BQ), n, C, QD);
    pv_k_matmul_fwd(b->k, b->ln1, pv_tf_lw(m, P, l, S_WK), pv_tf_lw(m, P, l, S_BK), n, C, KD);
    pv_k_matmul_fwd(b->v, b->ln1, pv_tf_lw(m, P, l, S_WV), pv_tf_lw(m, P, l, S_BV), n, C, KD);
    const float *qsrc = b->q, *ksrc = b->k;
    if (c->qk_norm) { /* Qwen3: per-head RMSNorm before RoPE */
        pv_k_rmsnorm_fwd(b->qr, b->qrstd, b->q, pv_tf_lw(m, P, l, S_QN), n * H, D, eps);
        pv_k_rmsnorm_fwd(b->kn, b->krstd, b->k, pv_tf_lw(m, P, l, S_KN), n * KV, D, eps);
        qsrc = b->qr;
        ksrc = b->kn;
    }
    for (size_t g = 0; g < n_groups; g++) {
        const pv_tf_agroup_t *a = &groups[g];
        float *qr = b->qr + a->row * QD, *kdst = a->kc + a->p0 * KD, *vdst = a->vc + a->p0 * KD;
        pv_k_rope_fwd(qr, qsrc + a->row * QD, m->rope_cos, m->rope_sin, a->n, a->p0, H, D);
        pv_k_rope_fwd(kdst, ksrc + a->row * KD, m->rope_cos, m->rope_sin, a->n, a->p0, KV, D);
        if (vdst != b->v + a->row * KD)
            memcpy(vdst, b->v + a->row * KD, a->n * KD * sizeof(float));
        pv_k_attn_fwd(b->y + a->row * QD, a->att, qr, a->kc, a->vc, a->n, a->p0, H, KV, D);
    }
    float *o = b->tmp ? b->tmp : b->mid;
    pv_k_matmul_fwd(o, b->y, pv_tf_lw(m, P, l, S_WO), pv_tf_lw(m, P, l, S_BO), n, QD, C);
    pv_k_add_fwd(b->mid, o, b->x, n * C);
    pv_k_rmsnorm_fwd(b->ln2, b->rstd2, b->mid, pv_tf_lw(m, P, l, S_LN2), n, C, eps);
    pv_k_matmul_fwd(b->gate, b->ln2, pv_tf_lw(m, P, l, S_WG), NULL, n, C, F);
    pv_k_matmul_fwd(b->up, b->ln2, pv_tf_lw(m, P, l, S_WU), NULL, n, C, F);
    pv_k_swiglu_fwd(b->h, b->gate, b->up, n * F);
    o = b->tmp ? b->tmp : b->out;
    pv_k_matmul_fwd(o, b->h, pv_tf_lw(m, P, l, S_WD), NULL, n, F, C);
    pv_k_add_fwd(b->out, o, b->mid, n * C);
}

void pv_tf_sample(const float *logits, size_t V, float temperature, pv_rng_t *rng, uint32_t *token,
                  float *logp)
{
    float inv = 1.0f / temperature;
    double lse = pv_k_logsumexp(logits, V, inv);
    size_t pick = 0;
    if (!rng) {
        for (size_t j = 1; j < V; j++)
            if (logits[j] > logits[pick])
                pick = j;
    } else {
        /* inverse CDF: the first j whose cumulative probability passes u */
        double u = pv_rng_uniform(rng), acc = 0.0;
        size_t last = V - 1; /* u beyond the rounded total: the last id with p > 0 */
        pick = SIZE_MAX;
        for (size_t j = 0; j < V; j++) {
            if (logits[j] > -INFINITY)
                last = j;
            acc += exp((double)(logits[j] * inv) - lse);
            if (acc > u) {
                pick = j;
                break;
            }
        }
        if (pick == SIZE_MAX)
            pick = last;
    }
    *token = (uint32_t)pick;
    if (logp)
        *logp = (float)((double)(logits[pick] * inv) - lse);
}

double pv_tf_flops_forward(const pv_tf_config_t *c, size_t T)
{
    double C = c->hidden_size, F = c->intermediate_size, D = c->head_dim;
    double QD = c->num_attention_heads * D, KD = c->num_key_value_heads * D;
    double per_layer = C * QD * 2 + C * KD * 2 + 3 * C * F;
    double mm = per_layer * c->num_hidden_layers + (double)c->vocab_size * C;
    double att = 4.0 * c->num_hidden_layers * QD * (double)T;
    return (double)T * (2.0 * mm + att);
}
