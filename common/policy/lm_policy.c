/* lm_policy.c - the language-model policy kind, "transformer": a decoder-only transformer
 * (common/model, Llama / Qwen2 / Qwen3) with a byte-level BPE vocabulary
 * (common/tokenizer) that writes an environment's action as an assistant turn
 * (DESIGN.md section 4, issue 12).
 *
 * Model. spec.path names a Hugging Face directory (config.json, model.safetensors or its
 * shards, tokenizer.json; a prover_policy.json written by pv_policy_save_dir fills the prompt
 * settings the spec leaves at 0); without a path a new model of pv_tf_config_default's shape
 * (spec.layers .. intermediate override it) is initialised from spec.seed, its vocabulary
 * the tokenizer.json text spec.tokenizer_json (vocab_size = its ids, eos = <|im_end|>). The
 * parameters are the model's one float32 buffer and its tensors keep Hugging Face's names,
 * so the policy's table is the model's table.
 *
 * Acting (pv_policy_act). The context is lm_prompt.h's conversation. decode = generate:
 * tokens are sampled one at a time from softmax(logits / T) (argmax without an RNG, one
 * uniform draw per token otherwise) until <|im_end|> (emitted, and trained, as part of the
 * action) or max_new tokens; each token's behaviour log-prob is
 * log_softmax(logits / T)[token] (pv_tf_sample), the step's log-prob their sum, its entropy
 * the sum of the per-token entropies. The reply (the tokens decoded, special tokens
 * skipped) is parsed as the benchmark parses a model's reply (pv_lmp_parse) into the action;
 * choice is the candidate equal to it, or SIZE_MAX. decode = rank: every candidate is scored
 * by its sequence log-prob s_c = sum of log_softmax(logits / T)[token] over its tokens and
 * <|im_end|> against the prefilled context (pv_tf_extend), the choice drawn from
 * softmax(s) (argmax without an RNG), and the step's tokens and behaviour log-probs are the
 * chosen candidate's: the learner trains them as if generated (the ratio of a rank step is
 * that of its tokens, not of the renormalised choice among candidates: a surrogate, as the
 * admissible-ranking agents train). pv_policy_logprobs gives s_c for every candidate.
 * decode = constrain (lm_constrain.c): generation as above, but every token is drawn from
 * softmax(logits / T) masked to the ids that continue some candidate's token sequence (a
 * trie over the candidates' tokens, each encoded as rank encodes it; where a candidate ends
 * its <|im_end|> is the continuation, beside the longer candidates' next tokens), so the
 * action is always admissible (choice = the candidate written) and each behaviour log-prob
 * is that of the renormalised distribution (a forced token, the only continuation, has
 * log-prob 0 and entropy 0). The learner rebuilds the same masks from the step's candidates
 * (lm_train.c). pv_policy_logprobs gives each candidate's log-prob under this process.
 *
 * Batches (pv_policy_act_batch). B decisions at once, one conversation each (the G episodes
 * of a group, the K continuations of a verification job): every context is prefilled into a
 * slot of its own and what is new in them prefilled together (pv_tf_prefill_batch), then the
 * actions are written in lockstep, one batched pv_tf_decode per token for every
 * conversation still writing, each drawing from its own stream; decode = rank scores the
 * conversations one after the other. Conversation b gets exactly what act
 * gives it alone, up to the last bits of the batched products.
 *
 * KV cache: lm_slots.c.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/model/hf_config.h"
#include "common/model/hf_io.h"
#include "common/model/kernels.h"
#include "common/policy/lm_impl.h"
#include "common/vec.h"

#define S_WINDOW      4
#define S_MAX_NEW     32
#define S_MAX_CONTEXT 1024

/* ---- files ---------------------------------------------------------------------------- */

/* Read a whole file (NUL-terminated, malloc'd). Errors: PV_ERR_IO, PV_ERR_NOMEM. */
static pv_err_t s_read(const char *path, char **out, size_t *len, pv_errmsg_t *em)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return pv_errf(em, PV_ERR_IO, "%s: cannot open", path);
    char *buf = NULL;
    size_t n = 0, cap = 0;
    pv_err_t rc = PV_OK;
    for (;;) {
        if (pv_grow((void **)&buf, &cap, n + 65537, 1) != PV_OK) {
            rc = PV_ERR_NOMEM;
            break;
        }
        size_t got = fread(buf + n, 1, 65536, f);
        n += got;
        if (got < 65536)
            break;
    }
    if (rc == PV_OK && ferror(f))
        rc = pv_errf(em, PV_ERR_IO, "%s: read error", path);
    fclose(f);
    if (rc != PV_OK) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return PV_OK;
}

/* prover_policy.json of a directory fills the prompt settings the spec leaves at 0. */
static void s_read_settings(const char *dir, pv_policy_spec_t *sp)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/prover_policy.json", dir);
    json_t *j = json_load_file(path, 0, NULL);
    if (!j)
        return;
    json_t *v;
    if (!sp->prompt_window && json_is_integer(v = json_object_get(j, "prompt_window")) &&
        json_integer_value(v) > 0 && json_integer_value(v) < 4096)
        sp->prompt_window = (uint32_t)json_integer_value(v);
    if (!sp->max_new_tokens && json_is_integer(v = json_object_get(j, "max_new_tokens")) &&
        json_integer_value(v) > 0 && json_integer_value(v) < 65536)
        sp->max_new_tokens = (uint32_t)json_integer_value(v);
    if (!sp->max_context && json_is_integer(v = json_object_get(j, "max_context")) &&
        json_integer_value(v) > 0 && json_integer_value(v) < (1 << 20))
        sp->max_context = (uint32_t)json_integer_value(v);
    if (json_is_true(json_object_get(j, "prompt_admissible")))
        sp->prompt_admissible = true;
    if (json_is_true(json_object_get(j, "prompt_task_each_turn")))
        sp->prompt_task_each_turn = true;
    json_decref(j);
}

/* ---- the kind ------------------------------------------------------------------------- */

static pv_err_t s_resolve(pv_policy_spec_t *sp, pv_errmsg_t *em)
{
    pv_lmp_env_t env;
    if (!sp->max_cands)
        sp->max_cands = 1024;
    if (sp->max_cands > 65536)
        return pv_errf(em, PV_ERR_INVAL, "transformer: max_cands must be <= 65536");
    if (pv_lmp_env_parse(sp->env, &env) != PV_OK)
        return pv_errf(em, PV_ERR_INVAL,
                       "transformer: env '%s' has no prompt (alfworld, webshop, searchqa)",
                       sp->env);
    if ((unsigned)sp->decode > PV_POLICY_DECODE_CONSTRAIN)
        return pv_errf(em, PV_ERR_INVAL, "transformer: decode is generate, rank or constrain");
    if ((!sp->path || !*sp->path) && !sp->tokenizer_json)
        return pv_errf(em, PV_ERR_INVAL,
                       "transformer: no vocabulary: give a Hugging Face directory (path) or a "
                       "tokenizer.json (tokenizer_json)");
    return PV_OK;
}

static void s_free(pv_policy_t *p)
{
    pv_lm_t *lm = p->impl;
    if (!lm)
        return;
    pv_tf_destroy(&lm->model);
    pv_tokenizer_destroy(&lm->tok);
    pthread_mutex_destroy(&lm->tok_mu);
    free(lm->tok_json);
    free(lm->table);
    free(lm);
    p->impl = NULL;
}

/* A new model of the default shape with the spec's sizes and the tokenizer's vocabulary. */
static pv_err_t s_new_model(pv_policy_t *p, pv_lm_t *lm, pv_errmsg_t *em)
{
    const pv_policy_spec_t *sp = &p->spec;
    pv_tf_config_t cfg;
    pv_tf_config_default(&cfg);
    if (sp->layers)
        cfg.num_hidden_layers = sp->layers;
    if (sp->hidden)
        cfg.hidden_size = sp->hidden;
    if (sp->heads)
        cfg.num_attention_heads = sp->heads;
    if (sp->kv_heads)
        cfg.num_key_value_heads = sp->kv_heads;
    if (sp->head_dim)
        cfg.head_dim = sp->head_dim;
    else if (sp->hidden || sp->heads)
        cfg.head_dim = cfg.hidden_size / cfg.num_attention_heads;
    if (sp->intermediate)
        cfg.intermediate_size = sp->intermediate;
    cfg.vocab_size = pv_tokenizer_n_ids(lm->tok);
    if (sp->max_context > cfg.max_position_embeddings)
        cfg.max_position_embeddings = sp->max_context;
    cfg.eos_token_id = lm->lmp.im_end;
    pv_tf_opts_t o = {.seed = sp->seed, .blas_threads = sp->blas_threads};
    return pv_tf_new(&cfg, &o, &lm->model, em);
}

static pv_err_t s_build(pv_policy_t *p, pv_errmsg_t *em)
{
    pv_policy_spec_t *sp = &p->spec;
    pv_lm_t *lm = calloc(1, sizeof *lm);
    if (!lm)
        return PV_ERR_NOMEM;
    pthread_mutex_init(&lm->tok_mu, NULL);
    p->impl = lm;
    bool dir = sp->path && *sp->path;
    pv_err_t rc = PV_OK;
    if (dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/tokenizer.json", sp->path);
        if ((rc = s_read(path, &lm->tok_json, &lm->tok_json_len, em)))
            return rc;
        s_read_settings(sp->path, sp);
    } else {
        if (!(lm->tok_json = malloc(sp->tokenizer_json_len + 1)))
            return PV_ERR_NOMEM;
        memcpy(lm->tok_json, sp->tokenizer_json, sp->tokenizer_json_len);
        lm->tok_json[sp->tokenizer_json_len] = '\0';
        lm->tok_json_len = sp->tokenizer_json_len;
    }
    if ((rc = pv_tokenizer_from_json(lm->tok_json, lm->tok_json_len, "tokenizer.json", &lm->tok,
                                     em)))
        return rc;
    if (!sp->prompt_window)
        sp->prompt_window = S_WINDOW;
    if (!sp->max_new_tokens)
        sp->max_new_tokens = S_MAX_NEW;
    if (!sp->max_context)
        sp->max_context = S_MAX_CONTEXT;
    pv_lmp_env_t env;
    pv_lmp_env_parse(sp->env, &env);
    /* the budget is set once the model's positions are known */
    if ((rc = pv_lmp_init(&lm->lmp, env, sp->prompt_window, sp->prompt_admissible, 0, lm->tok, em)))
        return rc;
    lm->lmp.task_each_turn = sp->prompt_task_each_turn;
    if (dir) {
        pv_tf_opts_t o = {.seed = sp->seed, .blas_threads = sp->blas_threads};
        if ((rc = pv_hf_load(sp->path, &o, &lm->model, em)))
            return rc;
    } else if ((rc = s_new_model(p, lm, em))) {
        return rc;
    }
    const pv_tf_config_t *cfg = pv_tf_config(lm->model);
    lm->V = cfg->vocab_size;
    if (pv_tokenizer_n_ids(lm->tok) > lm->V)
        return pv_errf(em, PV_ERR_DATA,
                       "transformer: the tokenizer has %u ids, the model's vocab_size is %u",
                       pv_tokenizer_n_ids(lm->tok), lm->V);
    if (sp->max_context > cfg->max_position_embeddings)
        sp->max_context = cfg->max_position_embeddings;
    if (sp->max_new_tokens + 16 > sp->max_context)
        return pv_errf(em, PV_ERR_INVAL,
                       "transformer: max_context %u leaves no room for a prompt beside %u new "
                       "tokens",
                       sp->max_context, sp->max_new_tokens);
    lm->max_context = sp->max_context;
    lm->max_new = sp->max_new_tokens;
    lm->lmp.budget = lm->max_context - lm->max_new;
    size_t nt = pv_tf_n_tensors(lm->model);
    if (!(lm->table = calloc(nt, sizeof *lm->table)))
        return PV_ERR_NOMEM;
    for (size_t i = 0; i < nt; i++) {
        const pv_tf_tensor_t *t = pv_tf_tensor(lm->model, i);
        lm->table[i] = (pv_policy_tensor_t){.name = t->name,
                                            .ndim = t->ndim,
                                            .shape = {t->shape[0], t->shape[1]},
                                            .offset = t->offset,
                                            .numel = t->numel};
    }
    p->table = lm->table;
    p->n_tensors = nt;
    p->params = pv_tf_params(lm->model);
    p->n_params = pv_tf_n_params(lm->model);
    return PV_OK;
}

static void s_work_destroy(void *w_)
{
    pv_lm_work_t *w = w_;
    if (!w)
        return;
    pv_lm_room_free(w);
    free(w->rows);
    free(w->ctx.ids);
    pv_lm_cset_free(&w->cs);
    free(w->cand_lp);
    free(w->mrow);
    pv_lm_train_free(w);
    free(w);
}

static pv_err_t s_work_new(const pv_policy_t *p, void **out)
{
    const pv_lm_t *lm = p->impl;
    pv_lm_work_t *w = calloc(1, sizeof *w);
    if (!w)
        return PV_ERR_NOMEM;
    w->text_cap = 8 * lm->max_new * 16 + 64;
    w->mrow = malloc(lm->V * sizeof *w->mrow);
    if (!w->mrow || pv_lm_room(lm, w, 1) != PV_OK) {
        s_work_destroy(w);
        return PV_ERR_NOMEM;
    }
    *out = w;
    return PV_OK;
}

pv_err_t pv_lm_context_within(pv_lm_t *lm, const pv_policy_ctx_t *ctx, const char *const *cands,
                              size_t n_cands, size_t budget, pv_lmp_ids_t *out, pv_errmsg_t *em)
{
    pv_lmp_t lmp = lm->lmp;
    if (budget)
        lmp.budget = budget;
    pthread_mutex_lock(&lm->tok_mu);
    pv_err_t rc = pv_lmp_context(&lmp, lm->tok, ctx, cands, n_cands, out, em);
    pthread_mutex_unlock(&lm->tok_mu);
    return rc;
}

pv_err_t pv_lm_context(pv_lm_t *lm, const pv_policy_ctx_t *ctx, const char *const *cands,
                       size_t n_cands, pv_lmp_ids_t *out, pv_errmsg_t *em)
{
    return pv_lm_context_within(lm, ctx, cands, n_cands, 0, out, em);
}

/* log_softmax(z / T)[k] and the entropy of softmax(z / T), as pv_tf_sample computes them. */
static float s_logp(const float *z, size_t V, float inv_t, uint32_t k)
{
    double lse = pv_k_logsumexp(z, V, inv_t);
    return (float)((double)(z[k] * inv_t) - lse);
}

static double s_entropy(const float *z, size_t V, float inv_t)
{
    double lse = pv_k_logsumexp(z, V, inv_t), h = 0.0;
    for (size_t j = 0; j < V; j++) {
        double lp = (double)(z[j] * inv_t) - lse;
        if (lp > -INFINITY) /* an id masked by pv_k_mask has p = 0 */
            h -= exp(lp) * lp;
    }
    return h;
}

/* The reply text of g's generated tokens, parsed into the action; choice among cands. */
static void s_finish(const pv_policy_t *p, const pv_lm_work_t *w, pv_lm_gen_t *g,
                     const char *const *cands, size_t n, pv_policy_step_t *out)
{
    const pv_lm_t *lm = p->impl;
    size_t len = 0; /* token by token: an id naming no token, or a special one, writes nothing */
    for (size_t i = 0; i < g->k; i++) {
        const char *b;
        size_t k;
        if (pv_tokenizer_is_special(lm->tok, g->gen[i]) ||
            pv_tokenizer_token_bytes(lm->tok, g->gen[i], &b, &k) != PV_OK)
            continue;
        if (len + k >= w->text_cap)
            k = w->text_cap - 1 - len;
        memcpy(g->reply + len, b, k);
        len += k;
    }
    g->reply[len] = '\0';
    pv_lmp_utf8_fix(g->reply, len); /* what the environment and the wire receive is text */
    pv_lmp_parse(lm->lmp.env, g->reply, len, g->action, w->text_cap);
    out->choice = SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        if (strcmp(cands[i], g->action) == 0) {
            out->choice = i;
            break;
        }
    out->action = g->action;
    out->reply = g->reply;
}

/* Write the actions of the B conversations w->gens[0 .. B) token by token from their
 * prefilled slots (w->logits row b: conversation b's next-token logits), in lockstep: each
 * round samples one token for every conversation still writing (from its own rngs[b]), and
 * one pv_tf_decode appends them all. decode = constrain: each token is drawn from
 * softmax(logits / T) masked to the ids that continue some candidate's tokens (the trie of
 * pv_lm_cands), until a candidate ends (its <|im_end|>, or max_new tokens), and the action
 * is that candidate; a token with one allowed id is forced (log-prob 0, entropy 0). */
static pv_err_t s_generate(const pv_policy_t *p, pv_lm_work_t *w, size_t B, pv_rng_t *const *rngs,
                           const char *const *const *cands, const size_t *n, pv_policy_step_t *out)
{
    pv_lm_t *lm = p->impl;
    size_t V = lm->V;
    bool constrain = p->spec.decode == PV_POLICY_DECODE_CONSTRAIN;
    float T = p->spec.temperature, inv_t = 1.0f / T;
    for (size_t b = 0; b < B; b++) {
        pv_lm_gen_t *g = &w->gens[b];
        g->k = 0;
        g->lp_sum = g->ent = 0.0;
        g->done = false;
        if (constrain) {
            pv_err_t rc = pv_lm_cands(lm, &g->cs, cands[b], n[b]);
            if (rc != PV_OK)
                return rc;
            pv_lm_walk_start(&g->wk, &g->cs, n[b]);
        }
    }
    for (;;) {
        size_t nd = 0;
        for (size_t b = 0; b < B; b++) {
            pv_lm_gen_t *g = &w->gens[b];
            if (g->done)
                continue;
            float *z = w->logits + b * V;
            if (constrain) {
                size_t na = pv_lm_walk_allowed(&g->wk, g->cs.allow);
                if (na == 0) { /* every candidate on the path ended (cut at max_new) */
                    g->done = true;
                    continue;
                }
                pv_k_mask(z, g->cs.keep, V, g->cs.allow, na);
            }
            g->ent += s_entropy(z, V, inv_t);
            uint32_t tok;
            float lp;
            pv_tf_sample(z, V, T, rngs ? rngs[b] : NULL, &tok, &lp);
            g->gen[g->k] = tok;
            g->gen_lp[g->k++] = lp;
            g->lp_sum += lp;
            if (constrain)
                pv_lm_walk_step(&g->wk, tok);
            if (tok == lm->lmp.im_end || g->k == lm->max_new ||
                (constrain && pv_lm_walk_ended(&g->wk) != SIZE_MAX)) {
                g->done = true;
                continue;
            }
            w->dslot[nd] = g->slot;
            w->dtok[nd] = tok;
            w->dgen[nd++] = b;
        }
        if (nd == 0)
            break;
        pv_err_t rc = pv_tf_decode(lm->model, w->cache, w->dslot, w->dtok, nd, w->dlogits, NULL);
        for (size_t i = 0; rc == PV_OK && i < nd; i++) {
            memcpy(w->logits + w->dgen[i] * V, w->dlogits + i * V, V * sizeof *w->dlogits);
            rc = pv_lmp_push(&w->slot[w->dslot[i]].ids, w->dtok[i]);
        }
        if (rc != PV_OK)
            return rc;
    }
    for (size_t b = 0; b < B; b++) {
        pv_lm_gen_t *g = &w->gens[b];
        out[b] = (pv_policy_step_t){.logprob = (float)g->lp_sum,
                                    .entropy = (float)g->ent,
                                    .n_tokens = g->k,
                                    .tokens = g->gen,
                                    .token_logprobs = g->gen_lp};
        s_finish(p, w, g, cands[b], n[b], &out[b]);
        size_t c = constrain ? pv_lm_walk_ended(&g->wk) : SIZE_MAX;
        if (c != SIZE_MAX) { /* always under constrain, with at least one candidate */
            out[b].choice = c;
            out[b].action = cands[b][c];
        }
    }
    return PV_OK;
}

/* Sequence log-prob of every candidate (tokens + <|im_end|>, at most max_new of them)
 * against g's context prefilled in g->slot (`logits`: its next-token logits): g->cs.score,
 * their tokens in g->cs and per-token log-probs in w->cand_lp. Under decode = constrain each
 * token's log-prob is that of the masked distribution (the trie's continuations only), so
 * the scores are the log-probs of constrained generation writing each candidate (they sum to
 * 1 over distinct candidates). */
static pv_err_t s_rank(const pv_policy_t *p, pv_lm_work_t *w, pv_lm_gen_t *g, const float *logits,
                       const char *const *cands, size_t n, pv_errmsg_t *em)
{
    pv_lm_t *lm = p->impl;
    float inv_t = 1.0f / p->spec.temperature;
    bool constrain = p->spec.decode == PV_POLICY_DECODE_CONSTRAIN;
    size_t V = lm->V, ctx_n = g->ctx.n;
    pv_lm_cset_t *cs = &g->cs;
    pv_err_t rc = pv_lm_cands(lm, cs, cands, n);
    if (rc != PV_OK)
        return rc;
    if (cs->ids.n > w->cand_lp_cap) {
        if (pv_lm_resize(&w->cand_lp, cs->ids.n, sizeof *w->cand_lp) != PV_OK)
            return PV_ERR_NOMEM;
        w->cand_lp_cap = cs->ids.n;
    }
    if (lm->max_new > w->rows_cap) {
        float *r = malloc(lm->max_new * V * sizeof *r);
        if (!r)
            return PV_ERR_NOMEM;
        free(w->rows);
        w->rows = r;
        w->rows_cap = lm->max_new;
    }
    for (size_t c = 0; c < n; c++) {
        const uint32_t *t = cs->ids.ids + cs->off[c];
        size_t k = cs->off[c + 1] - cs->off[c];
        float *lp = w->cand_lp + cs->off[c];
        double s = 0.0;
        if (k > 1) {
            rc = pv_tf_extend(lm->model, w->cache, g->slot, t, k - 1, w->rows, em);
            pv_tf_cache_truncate(w->cache, g->slot, ctx_n);
            if (rc != PV_OK)
                return rc;
        }
        pv_lm_walk_t wk;
        pv_lm_walk_start(&wk, cs, n);
        for (size_t j = 0; j < k; j++) {
            const float *z = j ? w->rows + (j - 1) * V : logits;
            if (constrain) { /* the masked distribution along the trie, as acting draws */
                memcpy(w->mrow, z, V * sizeof *z);
                pv_k_mask(w->mrow, cs->keep, V, cs->allow, pv_lm_walk_allowed(&wk, cs->allow));
                pv_lm_walk_step(&wk, t[j]);
                z = w->mrow;
            }
            lp[j] = s_logp(z, V, inv_t, t[j]);
        }
        for (size_t j = 0; j < k; j++)
            s += lp[j];
        cs->score[c] = s;
    }
    return PV_OK;
}

/* softmax over the n scores: entropy, and the choice (argmax without rng). */
static size_t s_choose(const double *score, size_t n, pv_rng_t *rng, double *entropy)
{
    double mx = score[0], z = 0.0, h = 0.0;
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (score[i] > mx) {
            mx = score[i];
            best = i;
        }
    for (size_t i = 0; i < n; i++)
        z += exp(score[i] - mx);
    for (size_t i = 0; i < n; i++) {
        double q = exp(score[i] - mx) / z;
        h -= q > 0 ? q * log(q) : 0.0;
    }
    *entropy = h;
    if (!rng)
        return best;
    double u = pv_rng_uniform(rng), acc = 0.0;
    for (size_t i = 0; i < n; i++) {
        acc += exp(score[i] - mx) / z;
        if (u < acc)
            return i;
    }
    return n - 1;
}

/* decode = rank for conversation b (prefilled): its choice, and the chosen candidate's
 * tokens and log-probs kept in g (w->cand_lp is the next conversation's). */
static pv_err_t s_rank_act(const pv_policy_t *p, pv_lm_work_t *w, size_t b, pv_rng_t *rng,
                           const char *const *cands, size_t n, pv_policy_step_t *out)
{
    pv_lm_gen_t *g = &w->gens[b];
    pv_err_t rc = s_rank(p, w, g, w->logits + b * ((const pv_lm_t *)p->impl)->V, cands, n, NULL);
    if (rc != PV_OK)
        return rc;
    double ent;
    size_t c = s_choose(g->cs.score, n, rng, &ent);
    size_t off = g->cs.off[c], k = g->cs.off[c + 1] - off;
    memcpy(g->gen_lp, w->cand_lp + off, k * sizeof *g->gen_lp); /* k <= max_new */
    *out = (pv_policy_step_t){.choice = c,
                              .logprob = (float)g->cs.score[c],
                              .entropy = (float)ent,
                              .n_tokens = k,
                              .tokens = g->cs.ids.ids + off,
                              .token_logprobs = g->gen_lp,
                              .action = cands[c],
                              .reply = cands[c]};
    return PV_OK;
}

/* B decisions at once (policy_impl.h act_batch): every context is brought into a slot of its
 * own and what is new prefilled together, then the actions are generated in lockstep
 * (s_generate) or ranked one after the other. act is this with B = 1. */
static pv_err_t s_act_batch(const pv_policy_t *p, const pv_policy_ctx_t *ctxs,
                            const char *const *const *cands, const size_t *n, pv_rng_t *const *rngs,
                            size_t B, void *w_, pv_policy_step_t *out)
{
    pv_lm_work_t *w = w_;
    pv_lm_t *lm = p->impl;
    bool rank = p->spec.decode == PV_POLICY_DECODE_RANK;
    w->single_ready = false;
    for (size_t b = 0; b < B; b++)
        if (p->spec.decode != PV_POLICY_DECODE_GENERATE && n[b] == 0)
            return PV_ERR_INVAL;
    pv_err_t rc = pv_lm_room(lm, w, B);
    if (rc != PV_OK)
        return rc;
    pv_lm_batch_begin(p, w);
    for (size_t b = 0; b < B; b++) {
        pv_lm_gen_t *g = &w->gens[b];
        rc = pv_lm_context(lm, &ctxs[b], cands[b], n[b], &g->ctx, NULL);
        if (rc == PV_OK)
            rc = pv_lm_prefill(lm, w, b, NULL);
        if (rc != PV_OK) {
            pv_lm_unpend(w);
            return rc;
        }
    }
    if ((rc = pv_lm_flush(lm, w, NULL)) != PV_OK)
        return rc;
    if (!rank)
        return s_generate(p, w, B, rngs, cands, n, out);
    for (size_t b = 0; rc == PV_OK && b < B; b++) /* each extends and truncates its own slot */
        rc = s_rank_act(p, w, b, rngs ? rngs[b] : NULL, cands[b], n[b], &out[b]);
    return rc;
}

static pv_err_t s_act(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                      size_t n, pv_rng_t *rng, void *w_, pv_policy_step_t *out)
{
    pv_rng_t *rngs[1] = {rng};
    return s_act_batch(p, ctx, &cands, &n, rngs, 1, w_, out);
}

static pv_err_t s_logprobs(const pv_policy_t *p, const pv_policy_ctx_t *ctx,
                           const char *const *cands, size_t n, void *w_, float *logp,
                           float *entropy)
{
    pv_lm_work_t *w = w_;
    pv_lm_t *lm = p->impl;
    pv_lm_gen_t *g = &w->gens[0];
    w->single_ready = false;
    if (n == 0)
        return PV_ERR_INVAL;
    pv_lm_batch_begin(p, w);
    pv_err_t rc = pv_lm_context(lm, ctx, cands, n, &g->ctx, NULL);
    if (rc == PV_OK && (rc = pv_lm_prefill(lm, w, 0, NULL)) != PV_OK)
        pv_lm_unpend(w);
    if (rc == PV_OK)
        rc = pv_lm_flush(lm, w, NULL);
    if (rc == PV_OK)
        rc = s_rank(p, w, g, w->logits, cands, n, NULL);
    if (rc != PV_OK)
        return rc;
    double ent;
    s_choose(g->cs.score, n, NULL, &ent);
    for (size_t i = 0; i < n; i++)
        logp[i] = (float)g->cs.score[i];
    if (entropy)
        *entropy = (float)ent;
    return PV_OK;
}

static uint32_t s_token_space(const pv_policy_t *p)
{
    const pv_lm_t *lm = p->impl;
    return lm->V;
}

static pv_err_t s_tokens(const pv_policy_t *p, const char *action, void *w_, uint32_t *tokens,
                         size_t cap, size_t *n)
{
    pv_lm_work_t *w = w_;
    pv_err_t rc = pv_lm_action_ids(p->impl, action, &w->ctx);
    if (rc != PV_OK)
        return rc;
    *n = w->ctx.n;
    if (cap < w->ctx.n) {
        w->ctx.n = 0;
        return PV_ERR_LIMIT;
    }
    memcpy(tokens, w->ctx.ids, w->ctx.n * sizeof *tokens);
    w->ctx.n = 0;
    return PV_OK;
}

static pv_err_t s_save_dir(const pv_policy_t *p, const char *dir, pv_errmsg_t *em)
{
    const pv_lm_t *lm = p->impl;
    pv_err_t rc = pv_hf_save(lm->model, dir, em);
    if (rc != PV_OK)
        return rc;
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(lm->tok_json, 1, lm->tok_json_len, f) != lm->tok_json_len) {
        if (f)
            fclose(f);
        return pv_errf(em, PV_ERR_IO, "%s: cannot write", path);
    }
    if (fclose(f) != 0)
        return pv_errf(em, PV_ERR_IO, "%s: cannot write", path);
    const pv_policy_spec_t *sp = &p->spec;
    json_t *j = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:b, s:b}", "format", "prover-policy",
                          "env", pv_lmp_env_name(lm->lmp.env), "decode",
                          sp->decode == PV_POLICY_DECODE_RANK        ? "rank"
                          : sp->decode == PV_POLICY_DECODE_CONSTRAIN ? "constrain"
                                                                     : "generate",
                          "prompt_window", (int)sp->prompt_window, "max_new_tokens",
                          (int)sp->max_new_tokens, "max_context", (int)sp->max_context,
                          "prompt_admissible", (int)sp->prompt_admissible, "prompt_task_each_turn",
                          (int)sp->prompt_task_each_turn);
    snprintf(path, sizeof path, "%s/prover_policy.json", dir);
    int bad = !j || json_dump_file(j, path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0;
    json_decref(j);
    return bad ? pv_errf(em, PV_ERR_IO, "%s: cannot write", path) : PV_OK;
}

static pv_err_t s_load_dir(pv_policy_t *p, const char *dir, pv_errmsg_t *em)
{
    pv_lm_t *lm = p->impl;
    return pv_hf_load_weights(lm->model, dir, em);
}

const pv_policy_ops_t pv_policy_transformer_ops = {
    .kind = "transformer",
    .generative = true,
    .resolve = s_resolve,
    .build = s_build,
    .free = s_free,
    .work_new = s_work_new,
    .work_destroy = s_work_destroy,
    .act = s_act,
    .act_batch = s_act_batch,
    .logprobs = s_logprobs,
    .forward = pv_lm_forward_one,
    .backward = pv_lm_backward_one,
    .forward_items = pv_lm_forward_items,
    .backward_items = pv_lm_backward_items,
    .train_items = pv_lm_train_items,
    .token_space = s_token_space,
    .action_tokens = s_tokens,
    .save_dir = s_save_dir,
    .load_dir = s_load_dir,
};
