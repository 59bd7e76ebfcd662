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
 * KV cache. A work keeps PV_LM_SLOTS slots with the tokens each holds. A new context goes
 * to the slot sharing its longest prefix; when that slot holds more than the shared part
 * (another episode of the group, another continuation from a state, a window restart), the
 * shared prefix is copied to the least recently used other slot and the new tokens are
 * prefilled there, so the slot with the group's first prompt survives for its next episode.
 * Only the tokens after the shared prefix are computed.
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
    pv_tf_cache_destroy(&w->cache);
    for (int s = 0; s < PV_LM_SLOTS; s++)
        free(w->slot[s].ids.ids);
    free(w->logits);
    free(w->rows);
    free(w->ctx.ids);
    free(w->cand.ids);
    free(w->cand_off);
    free(w->cand_lp);
    free(w->score);
    free(w->alive);
    free(w->allow);
    free(w->keep);
    free(w->mrow);
    free(w->gen);
    free(w->gen_lp);
    free(w->reply);
    free(w->action);
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
    w->logits = malloc(lm->V * sizeof *w->logits);
    w->mrow = malloc(lm->V * sizeof *w->mrow);
    w->gen = malloc(lm->max_new * sizeof *w->gen);
    w->gen_lp = malloc(lm->max_new * sizeof *w->gen_lp);
    w->reply = malloc(w->text_cap);
    w->action = malloc(w->text_cap);
    if (!w->logits || !w->mrow || !w->gen || !w->gen_lp || !w->reply || !w->action ||
        pv_tf_cache_new(lm->model, PV_LM_SLOTS, lm->max_context, &w->cache, NULL) != PV_OK) {
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

static size_t s_lcp(const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
    size_t n = na < nb ? na : nb, i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

static pv_err_t s_copy_ids(pv_lmp_ids_t *dst, const uint32_t *src, size_t n)
{
    if (pv_grow((void **)&dst->ids, &dst->cap, n ? n : 1, sizeof *dst->ids) != PV_OK)
        return PV_ERR_NOMEM;
    memcpy(dst->ids, src, n * sizeof *src);
    dst->n = n;
    return PV_OK;
}

/* Forget every slot when the parameters changed since the cache was filled: its keys and
 * values belong to the old ones. */
static void s_cache_check(const pv_policy_t *p, pv_lm_work_t *w)
{
    if (w->cache_gen == p->generation)
        return;
    for (size_t s = 0; s < PV_LM_SLOTS; s++) {
        pv_tf_cache_reset(w->cache, s);
        w->slot[s].ids.n = 0;
        w->slot[s].used = 0;
    }
    w->cache_gen = p->generation;
}

/* Bring w->ctx into a cache slot (see the header: the slot with the longest shared prefix,
 * or a copy of that prefix in the least recently used other slot) and prefill what is new;
 * w->logits receives the next token's logits. *slot_out: the slot used. */
static pv_err_t s_prefill(const pv_lm_t *lm, pv_lm_work_t *w, size_t *slot_out, pv_errmsg_t *em)
{
    const pv_lmp_ids_t *c = &w->ctx;
    size_t best = 0, best_l = 0;
    for (size_t s = 0; s < PV_LM_SLOTS; s++) {
        size_t l = s_lcp(w->slot[s].ids.ids, w->slot[s].ids.n, c->ids, c->n);
        if (s == 0 || l > best_l || (l == best_l && w->slot[s].used > w->slot[best].used)) {
            best = s;
            best_l = l;
        }
    }
    size_t use = best;
    if (best_l < w->slot[best].ids.n) { /* keep `best` for whoever shares more of it */
        use = best == 0 ? 1 : 0;
        for (size_t s = 0; s < PV_LM_SLOTS; s++)
            if (s != best && w->slot[s].used < w->slot[use].used)
                use = s;
        if (best_l > 0)
            pv_tf_cache_copy(w->cache, use, best);
        else
            pv_tf_cache_reset(w->cache, use);
        pv_tf_cache_truncate(w->cache, use, best_l);
        if (s_copy_ids(&w->slot[use].ids, c->ids, best_l) != PV_OK)
            return PV_ERR_NOMEM;
    }
    size_t have = best_l;
    if (have == c->n) /* nothing new: prefill the last token again for its logits */
        have--;
    pv_tf_cache_truncate(w->cache, use, have);
    pv_lm_slot_t *sl = &w->slot[use];
    sl->ids.n = have;
    sl->used = ++w->clock;
    pv_err_t rc =
        pv_tf_prefill(lm->model, w->cache, use, c->ids + have, c->n - have, w->logits, em);
    if (rc != PV_OK) {
        pv_tf_cache_reset(w->cache, use);
        sl->ids.n = 0;
        return rc;
    }
    if (s_copy_ids(&sl->ids, c->ids, c->n) != PV_OK)
        return PV_ERR_NOMEM;
    *slot_out = use;
    return PV_OK;
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

/* The reply text of the generated tokens, parsed into the action; choice among cands. */
static void s_finish(const pv_policy_t *p, pv_lm_work_t *w, size_t n_gen, const char *const *cands,
                     size_t n, pv_policy_step_t *out)
{
    const pv_lm_t *lm = p->impl;
    size_t len = 0; /* token by token: an id naming no token, or a special one, writes nothing */
    for (size_t i = 0; i < n_gen; i++) {
        const char *b;
        size_t k;
        if (pv_tokenizer_is_special(lm->tok, w->gen[i]) ||
            pv_tokenizer_token_bytes(lm->tok, w->gen[i], &b, &k) != PV_OK)
            continue;
        if (len + k >= w->text_cap)
            k = w->text_cap - 1 - len;
        memcpy(w->reply + len, b, k);
        len += k;
    }
    w->reply[len] = '\0';
    pv_lmp_utf8_fix(w->reply, len); /* what the environment and the wire receive is text */
    pv_lmp_parse(lm->lmp.env, w->reply, len, w->action, w->text_cap);
    out->choice = SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        if (strcmp(cands[i], w->action) == 0) {
            out->choice = i;
            break;
        }
    out->action = w->action;
    out->reply = w->reply;
}

/* Write the action token by token from the logits of the context in `slot` (w->logits).
 * decode = constrain: each token is drawn from softmax(logits / T) masked to the ids that
 * continue some candidate's tokens (the trie of pv_lm_cands), until a candidate ends (its
 * <|im_end|>, or max_new tokens), and the action is that candidate; a token with one
 * allowed id is forced (log-prob 0, entropy 0). */
static pv_err_t s_generate(const pv_policy_t *p, pv_lm_work_t *w, size_t slot, pv_rng_t *rng,
                           const char *const *cands, size_t n, pv_policy_step_t *out)
{
    pv_lm_t *lm = p->impl;
    bool constrain = p->spec.decode == PV_POLICY_DECODE_CONSTRAIN;
    float T = p->spec.temperature, inv_t = 1.0f / T;
    pv_lm_walk_t wk = {0};
    if (constrain) {
        pv_err_t rc = pv_lm_cands(lm, w, cands, n);
        if (rc != PV_OK)
            return rc;
        pv_lm_walk_start(&wk, w, n);
    }
    double lp_sum = 0.0, ent = 0.0;
    size_t k = 0;
    while (k < lm->max_new) {
        uint32_t tok;
        float lp;
        if (constrain) {
            size_t na = pv_lm_walk_allowed(&wk, w->allow);
            if (na == 0) /* every candidate on the path ended (cut at max_new) */
                break;
            pv_k_mask(w->logits, w->keep, lm->V, w->allow, na);
        }
        ent += s_entropy(w->logits, lm->V, inv_t);
        pv_tf_sample(w->logits, lm->V, T, rng, &tok, &lp);
        w->gen[k] = tok;
        w->gen_lp[k++] = lp;
        lp_sum += lp;
        if (constrain)
            pv_lm_walk_step(&wk, tok);
        if (tok == lm->lmp.im_end || k == lm->max_new ||
            (constrain && pv_lm_walk_ended(&wk) != SIZE_MAX))
            break;
        pv_err_t rc = pv_tf_decode(lm->model, w->cache, &slot, &tok, 1, w->logits, NULL);
        if (rc == PV_OK)
            rc = pv_lmp_push(&w->slot[slot].ids, tok);
        if (rc != PV_OK)
            return rc;
    }
    *out = (pv_policy_step_t){.logprob = (float)lp_sum,
                              .entropy = (float)ent,
                              .n_tokens = k,
                              .tokens = w->gen,
                              .token_logprobs = w->gen_lp};
    s_finish(p, w, k, cands, n, out);
    size_t c = constrain ? pv_lm_walk_ended(&wk) : SIZE_MAX;
    if (c != SIZE_MAX) { /* always under constrain, with at least one candidate */
        out->choice = c;
        out->action = cands[c];
    }
    return PV_OK;
}

/* Sequence log-prob of every candidate (tokens + <|im_end|>, at most max_new of them)
 * against the context prefilled in `slot` (w->logits: its next-token logits): w->score,
 * their tokens in w->cand (w->cand_off) and per-token log-probs in w->cand_lp. Under decode
 * = constrain each token's log-prob is that of the masked distribution (the trie's
 * continuations only), so the scores are the log-probs of constrained generation writing
 * each candidate (they sum to 1 over distinct candidates). */
static pv_err_t s_rank(const pv_policy_t *p, pv_lm_work_t *w, size_t slot, const char *const *cands,
                       size_t n, pv_errmsg_t *em)
{
    pv_lm_t *lm = p->impl;
    float inv_t = 1.0f / p->spec.temperature;
    bool constrain = p->spec.decode == PV_POLICY_DECODE_CONSTRAIN;
    size_t V = lm->V, ctx_n = w->ctx.n;
    pv_err_t rc = pv_lm_cands(lm, w, cands, n);
    if (rc != PV_OK)
        return rc;
    if (w->cand.n > w->cand_lp_cap) {
        float *lp = realloc(w->cand_lp, w->cand.n * sizeof *lp);
        if (!lp)
            return PV_ERR_NOMEM;
        w->cand_lp = lp;
        w->cand_lp_cap = w->cand.n;
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
        const uint32_t *t = w->cand.ids + w->cand_off[c];
        size_t k = w->cand_off[c + 1] - w->cand_off[c];
        float *lp = w->cand_lp + w->cand_off[c];
        double s = 0.0;
        if (k > 1) {
            rc = pv_tf_extend(lm->model, w->cache, slot, t, k - 1, w->rows, em);
            pv_tf_cache_truncate(w->cache, slot, ctx_n);
            if (rc != PV_OK)
                return rc;
        }
        pv_lm_walk_t wk;
        pv_lm_walk_start(&wk, w, n);
        for (size_t j = 0; j < k; j++) {
            const float *z = j ? w->rows + (j - 1) * V : w->logits;
            if (constrain) { /* the masked distribution along the trie, as acting draws */
                memcpy(w->mrow, z, V * sizeof *z);
                pv_k_mask(w->mrow, w->keep, V, w->allow, pv_lm_walk_allowed(&wk, w->allow));
                pv_lm_walk_step(&wk, t[j]);
                z = w->mrow;
            }
            lp[j] = s_logp(z, V, inv_t, t[j]);
        }
        for (size_t j = 0; j < k; j++)
            s += lp[j];
        w->score[c] = s;
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

static pv_err_t s_act(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                      size_t n, pv_rng_t *rng, void *w_, pv_policy_step_t *out)
{
    pv_lm_work_t *w = w_;
    pv_lm_t *lm = p->impl;
    size_t slot = 0;
    w->single_ready = false;
    if (p->spec.decode != PV_POLICY_DECODE_GENERATE && n == 0)
        return PV_ERR_INVAL;
    s_cache_check(p, w);
    pv_err_t rc = pv_lm_context(lm, ctx, cands, n, &w->ctx, NULL);
    if (rc == PV_OK)
        rc = s_prefill(lm, w, &slot, NULL);
    if (rc != PV_OK)
        return rc;
    if (p->spec.decode != PV_POLICY_DECODE_RANK)
        return s_generate(p, w, slot, rng, cands, n, out);
    if ((rc = s_rank(p, w, slot, cands, n, NULL)) != PV_OK)
        return rc;
    double ent;
    size_t c = s_choose(w->score, n, rng, &ent);
    size_t off = w->cand_off[c], k = w->cand_off[c + 1] - off;
    *out = (pv_policy_step_t){.choice = c,
                              .logprob = (float)w->score[c],
                              .entropy = (float)ent,
                              .n_tokens = k,
                              .tokens = w->cand.ids + off,
                              .token_logprobs = w->cand_lp + off,
                              .action = cands[c],
                              .reply = cands[c]};
    return PV_OK;
}

static pv_err_t s_logprobs(const pv_policy_t *p, const pv_policy_ctx_t *ctx,
                           const char *const *cands, size_t n, void *w_, float *logp,
                           float *entropy)
{
    pv_lm_work_t *w = w_;
    pv_lm_t *lm = p->impl;
    size_t slot = 0;
    w->single_ready = false;
    if (n == 0)
        return PV_ERR_INVAL;
    s_cache_check(p, w);
    pv_err_t rc = pv_lm_context(lm, ctx, cands, n, &w->ctx, NULL);
    if (rc == PV_OK)
        rc = s_prefill(lm, w, &slot, NULL);
    if (rc == PV_OK)
        rc = s_rank(p, w, slot, cands, n, NULL);
    if (rc != PV_OK)
        return rc;
    double ent;
    s_choose(w->score, n, NULL, &ent);
    for (size_t i = 0; i < n; i++)
        logp[i] = (float)w->score[i];
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
