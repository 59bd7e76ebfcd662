/* policy.h - the policy interface: the rest of the system acts, scores and learns through it
 * without knowing the model (DESIGN.md section 4).
 *
 * A policy maps a context (task text + recent history) and the environment's admissible
 * actions (candidates) to a distribution over the candidates. It can sample or take the
 * argmax, report the behaviour log-probs of the tokens it emitted, and back-propagate a
 * per-token loss into a caller-owned gradient buffer.
 *
 * Tokens. A decision (one environment step) emits one or more tokens. For the candidate
 * scorer ("bow_mlp") one action = one decision = one token, whose id is the chosen
 * candidate's index in the step's candidate list and whose log-prob is log p(choice)
 * (pv_policy_token_space() = 0). The language model ("transformer", lm_policy.c) writes the
 * action token by token in its vocabulary (pv_policy_token_space() = V), ending at the end
 * token (<|im_end|>): the step's tokens and their behaviour log-probs are arrays of
 * n_tokens, and the action text it produced (parsed as the benchmark parses a model's reply)
 * is what the environment receives (pv_policy_step_t.action).
 *
 * Training. pv_policy_forward_items / pv_policy_backward_items take a batch of steps
 * (several trajectories' steps, each its context and its tokens) at once, so a kind can
 * share work between steps (the language model runs one sequence for the consecutive steps
 * of a trajectory whose contexts extend each other); pv_policy_forward / pv_policy_backward
 * are the one-step form.
 *
 * Parameters. All parameters live in ONE contiguous float32 buffer (pv_policy_params) with a
 * table of named tensors (name, shape, offset into the buffer): a weight broadcast is one MPI
 * call, a checkpoint one write, an optimiser step one loop. Initialisation is deterministic
 * from spec->seed. The version (u64) stamps every step the policy takes.
 *
 * Threads. A policy's parameters are only read by act/logprobs/forward/backward, so several
 * threads may share one policy as long as each uses its own pv_policy_work_t (per-caller
 * scratch, created once and reused: the hot path allocates nothing) and its own gradient
 * buffer. Writing the parameters (optimiser, weight broadcast) must not overlap with them.
 *
 * Modelled on the env interface: an ops table per kind (policy_impl.h), dispatch here.
 */
#ifndef PV_POLICY_H
#define PV_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/rng.h"

typedef struct pv_policy pv_policy_t;
typedef struct pv_policy_work pv_policy_work_t;

/* How the language model picks an action (policy.decode). */
typedef enum pv_policy_decode {
    PV_POLICY_DECODE_GENERATE = 0,  /* write the action token by token */
    PV_POLICY_DECODE_RANK = 1,      /* score every admissible action by its sequence log-prob */
    PV_POLICY_DECODE_CONSTRAIN = 2, /* write the action token by token, each token masked to
                                       the continuations of the admissible actions' tokens */
} pv_policy_decode_t;

/* How to build a policy. 0 in a size field means the kind's default. Strings are borrowed
 * during pv_policy_new; pv_policy_spec() returns a copy that points to the policy's own. */
typedef struct pv_policy_spec {
    const char *kind;        /* "bow_mlp" | "transformer" */
    uint32_t n_buckets;      /* hashed feature rows (bow_mlp default 32768) */
    uint32_t embed_dim;      /* D (default 32) */
    uint32_t hidden_dim;     /* H (default 64) */
    uint32_t history_window; /* history entries read before the current observation
                                (default 8; see the kind's documentation) */
    uint32_t max_cands;      /* largest candidate list accepted (default 512) */
    float temperature;       /* softmax temperature T > 0 (0 = default 1): every
                                distribution is softmax(scores / T), for sampling, the
                                log-probs and their gradients alike, as verl divides the
                                logits by rollout.temperature in the rollout and in the
                                actor's log-prob computation; argmax does not depend on T */
    uint64_t seed;           /* initialisation seed */
    /* ---- transformer (lm_policy.c) ---- */
    const char *path;           /* a Hugging Face directory (config.json, model.safetensors,
                                   tokenizer.json; prover_policy.json is read when present);
                                   NULL or "" = a new model of the sizes below */
    const char *tokenizer_json; /* without path: the vocabulary, tokenizer.json text */
    size_t tokenizer_json_len;
    const char *env;            /* "alfworld" | "webshop" | "searchqa": the prompt's words and
                                   how a reply is parsed (NULL = alfworld) */
    pv_policy_decode_t decode;  /* generate (default), rank or constrain */
    uint32_t max_new_tokens;    /* tokens of one generated action, end token included (32) */
    uint32_t prompt_window;     /* W: a context keeps between W and 2W - 1 earlier turns (4) */
    uint32_t max_context;       /* tokens of a context plus its action (1024, at most the
                                   model's max_position_embeddings) */
    bool prompt_admissible;     /* list the admissible actions after each observation */
    bool prompt_task_each_turn; /* restate the task at the end of every later user turn */
    int blas_threads;           /* OpenBLAS threads of the process (0 = 1) */
    uint32_t train_threads;     /* training forward/backward lanes (lm_train.c; 0 = 1) */
    uint32_t layers, hidden, heads, kv_heads, head_dim, intermediate; /* sizes without path
                                    (0 = pv_tf_config_default's) */
} pv_policy_spec_t;

/* The context of one decision. `history` is oldest first and alternates observation and
 * action texts, ending with the current observation: {o_0, a_0, o_1, a_1, ..., o_t}, so
 * n_history is odd (1 at the first step). Strings are borrowed for the call. */
typedef struct pv_policy_ctx {
    const char *task_text;
    const char *const *history;
    size_t n_history;
} pv_policy_ctx_t;

/* One entry of the tensor table: `numel` floats at params + offset, row-major `shape`. */
#define PV_POLICY_MAX_DIMS 4
typedef struct pv_policy_tensor {
    const char *name; /* "embed", "w1", ... or Hugging Face's names (owned by the policy) */
    uint32_t ndim;
    uint64_t shape[PV_POLICY_MAX_DIMS];
    size_t offset; /* in floats */
    size_t numel;
} pv_policy_tensor_t;

/* What one act() produced. Token arrays and texts point into the work scratch and stay
 * valid until the next call on that work. */
typedef struct pv_policy_step {
    size_t choice;               /* index into the candidate list; SIZE_MAX when a generated
                                    action is none of the candidates */
    float logprob;               /* behaviour log-prob of the whole action (sum over tokens) */
    float entropy;               /* entropy of the decision's distribution (nats); the language
                                    model: the sum of the per-token entropies */
    size_t n_tokens;             /* tokens emitted (1 for bow_mlp) */
    const uint32_t *tokens;      /* (n_tokens) token ids */
    const float *token_logprobs; /* (n_tokens) behaviour log-prob per token */
    const char *action;          /* the action text for the environment: cands[choice], or the
                                    reply parsed as the benchmark parses it ("" when the reply
                                    holds none: the environment refuses it) */
    const char *reply;           /* the text the model wrote (= action for bow_mlp) */
} pv_policy_step_t;

/* One step of a training batch: its context, the candidates it was offered and the tokens
 * the policy emitted (all borrowed). */
typedef struct pv_policy_item {
    pv_policy_ctx_t ctx;
    const char *const *cands;
    size_t n_cands;
    const uint32_t *tokens; /* (n_tokens) */
    size_t n_tokens;
    bool full_vocab; /* decode = constrain: score these tokens over the whole vocabulary
                        instead of the candidates' mask (behaviour cloning without the mask) */
} pv_policy_item_t;

/* Build a policy: validates the spec, allocates the parameter buffer and initialises it
 * from spec->seed. Errors: PV_ERR_INVAL (unknown kind, sizes out of range: `em` says which),
 * PV_ERR_NOMEM. */
pv_err_t pv_policy_new(const pv_policy_spec_t *spec, pv_policy_t **out, pv_errmsg_t *em);

/* Free the policy; clears *p. NULL-safe. Works created from it must be destroyed first. */
void pv_policy_destroy(pv_policy_t **p);

/* The spec in effect, defaults filled in (kind points to a static string). */
const pv_policy_spec_t *pv_policy_spec(const pv_policy_t *p);

/* The parameter buffer (n_params floats) and its tensor table. Whoever writes the
 * parameters gives them a new version afterwards (pv_policy_set_version), as the optimiser
 * step and the weight transfers do: a new version (or pv_policy_load_dir) tells every work
 * to drop what it derived from the old parameters (the language model's KV cache) at its
 * next act. */
float *pv_policy_params(pv_policy_t *p);
const float *pv_policy_params_const(const pv_policy_t *p);
size_t pv_policy_n_params(const pv_policy_t *p);
size_t pv_policy_n_tensors(const pv_policy_t *p);
const pv_policy_tensor_t *pv_policy_tensor(const pv_policy_t *p, size_t i);

/* Policy version: bumped by the learner after each update, stamped on every step. Setting a
 * different version marks the parameters as changed (see pv_policy_params). */
uint64_t pv_policy_version(const pv_policy_t *p);
void pv_policy_set_version(pv_policy_t *p, uint64_t version);

/* Set the softmax temperature T of every later act, log-prob, forward and backward (the
 * spec's `temperature`; the parameters and the KV cache do not depend on it). Not to be
 * called while another thread uses p. The held-out evaluation samples at
 * learner.eval_temperature with it and puts the rollout temperature back. Errors:
 * PV_ERR_INVAL (T not a finite number > 0; p unchanged). */
pv_err_t pv_policy_set_temperature(pv_policy_t *p, float temperature);

/* Per-caller scratch sized for p's spec. Errors: PV_ERR_NOMEM. */
pv_err_t pv_policy_work_new(const pv_policy_t *p, pv_policy_work_t **out);
void pv_policy_work_destroy(pv_policy_work_t **w);

/* Choose an action: sample from the distribution with `rng`, or the argmax (first maximum)
 * when rng is NULL. The language model generates (or ranks the candidates, decode = rank)
 * against a KV cache kept in `work` from one call to the next: a context that extends the
 * previous one (the next step of an episode) or shares its start (the next episode of a
 * group, the next continuation from a state) prefills only what is new. Errors:
 * PV_ERR_INVAL (no candidate where the kind needs them, empty history, NULL text),
 * PV_ERR_LIMIT (more than max_cands candidates; a context the language model cannot fit).
 * bow_mlp allocates nothing. */
pv_err_t pv_policy_act(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                       size_t n_cands, pv_rng_t *rng, pv_policy_work_t *work,
                       pv_policy_step_t *out);

/* The most decisions one pv_policy_act_batch takes. */
#define PV_POLICY_MAX_BATCH 64

/* Whether the kind decides a batch at once (the language model: its G episodes or K
 * continuations share one decode per token); bow_mlp decides one at a time. */
bool pv_policy_batches(const pv_policy_t *p);

/* B decisions at once: decision b is ctxs[b] with cands[b] (n_cands[b] of them), sampled
 * from rngs[b] (rngs NULL, or rngs[b] NULL: argmax); out[b] is what pv_policy_act would give
 * it alone (the language model: up to the last bits of batched matrix products, which can
 * move a log-prob by ~1e-6), its arrays and texts valid until the next call on `work`. The
 * language model keeps a KV-cache slot per decision across calls, so decision b of the next
 * call prefills only what its context added. 1 <= B <= PV_POLICY_MAX_BATCH. Errors: those of
 * pv_policy_act (of the first decision that fails; the others' out is then undefined),
 * PV_ERR_INVAL (B out of range; B > 1 for a kind that does not batch). */
pv_err_t pv_policy_act_batch(const pv_policy_t *p, const pv_policy_ctx_t *ctxs,
                             const char *const *const *cands, const size_t *n_cands,
                             pv_rng_t *const *rngs, size_t B, pv_policy_work_t *work,
                             pv_policy_step_t *out);

/* The full distribution: logp_out[i] = log p(cands[i] | ctx), i < n_cands (for an LM kind,
 * the sequence log-prob of each candidate). `entropy` may be NULL. Errors as act. */
pv_err_t pv_policy_logprobs(const pv_policy_t *p, const pv_policy_ctx_t *ctx,
                            const char *const *cands, size_t n_cands, pv_policy_work_t *work,
                            float *logp_out, float *entropy);

/* Training forward: log-prob and entropy of each given token under the current parameters,
 * cached in `work` for pv_policy_backward(). For bow_mlp n_tokens must be 1 and tokens[0]
 * < n_cands. logp_out and ent_out are (n_tokens). Errors as act, PV_ERR_RANGE for a bad
 * token. */
pv_err_t pv_policy_forward(const pv_policy_t *p, const pv_policy_ctx_t *ctx,
                           const char *const *cands, size_t n_cands, const uint32_t *tokens,
                           size_t n_tokens, pv_policy_work_t *work, float *logp_out,
                           float *ent_out);

/* Backward of the decision last passed to pv_policy_forward() on `work` (same parameters):
 * given dL/dlogp and dL/dentropy per token ((n_tokens) each; dent may be NULL), ADD dL/dθ
 * into grad (n_params floats, caller-owned). Errors: PV_ERR_STATE (no forward cached on this
 * work). Allocates nothing. */
pv_err_t pv_policy_backward(const pv_policy_t *p, pv_policy_work_t *work, const float *dlogp,
                            const float *dent, float *grad);

/* Training forward of a batch: the log-prob and entropy of every token of items[0 .. n)
 * under the current parameters, concatenated in item order (logp_out, ent_out: (sum of
 * n_tokens); ent_out may be NULL). The same numbers as pv_policy_forward item by item.
 * Errors as pv_policy_forward (em says which item), PV_ERR_NOMEM (scratch for a longer batch
 * than any before). */
pv_err_t pv_policy_forward_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                                 pv_policy_work_t *work, float *logp_out, float *ent_out,
                                 pv_errmsg_t *em);

/* Backward of a batch: given dL/dlogp and dL/dentropy per token (concatenated as
 * pv_policy_forward_items writes them; dent may be NULL), ADD dL/dθ into grad. Runs the
 * forward again as needed (items with all-zero gradients are skipped), so it needs no
 * earlier call; logp_out (may be NULL) receives the log-probs that forward computed, as
 * pv_policy_forward_items would (not written for skipped items), for a caller whose
 * gradient does not depend on them (behaviour cloning). Errors as pv_policy_forward_items. */
pv_err_t pv_policy_backward_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                                  pv_policy_work_t *work, const float *dlogp, const float *dent,
                                  float *grad, float *logp_out, pv_errmsg_t *em);

/* The gradient of a loss at one token of a fused pass: given the log-prob lp and entropy ent
 * just computed for token o (o indexes the tokens concatenated as pv_policy_forward_items
 * writes them), write dL/dlogp into *dlp and dL/dentropy into *dent. Called from the
 * policy's training threads (policy.train_threads), for each token once: it must only read
 * shared state and write what belongs to token o. */
typedef void (*pv_policy_token_grad_fn)(void *user, size_t o, float lp, float ent, float *dlp,
                                        float *dent);

/* Fused training pass: one forward per chunk of items, each action token's gradient from
 * fn(user, ...) as soon as its log-prob is known, then the backward (dL/dθ ADDED into grad).
 * The same numbers as pv_policy_forward_items, then pv_policy_backward_items with the
 * gradients fn gives, with one forward fewer; logp_out and ent_out (either may be NULL)
 * receive every token's log-prob and entropy. Errors: PV_ERR_UNSUPPORTED (a kind without
 * it: use the two calls), those of pv_policy_forward_items. */
pv_err_t pv_policy_train_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                               pv_policy_work_t *work, pv_policy_token_grad_fn fn, void *user,
                               float *grad, float *logp_out, float *ent_out, pv_errmsg_t *em);

/* 0 when a token is a candidate index (bow_mlp), else the vocabulary size V of a language
 * model (tokens are ids below V). */
uint32_t pv_policy_token_space(const pv_policy_t *p);

/* The tokens with which the policy emits `action` at a step offered `cands`: bow_mlp, the
 * first candidate equal to it (one token); a language model, the action's text encoded and
 * the end token (how a demonstration is written for behaviour cloning). *n receives the
 * count. Errors: PV_ERR_NOTFOUND (bow_mlp: not a candidate), PV_ERR_LIMIT (cap too small:
 * *n = the count needed), PV_ERR_INVAL. */
pv_err_t pv_policy_action_tokens(const pv_policy_t *p, const char *action, const char *const *cands,
                                 size_t n_cands, pv_policy_work_t *work, uint32_t *tokens,
                                 size_t cap, size_t *n);

/* Write the policy as a Hugging Face directory `dir` (config.json, model.safetensors in F32,
 * tokenizer.json, and prover_policy.json: the prompt settings), created when missing, that
 * transformers can load and pv_policy_new (spec.path = dir) reads back bit-identically.
 * Errors: PV_ERR_UNSUPPORTED (bow_mlp: it has its safetensors checkpoint only), PV_ERR_IO,
 * PV_ERR_NOMEM. */
pv_err_t pv_policy_save_dir(const pv_policy_t *p, const char *dir, pv_errmsg_t *em);

/* Overwrite the parameters from the weights of a Hugging Face directory (model.safetensors
 * or its shards) whose tensors have this policy's names and shapes (a checkpoint written by
 * pv_policy_save_dir); on error the parameters are unchanged. Errors: PV_ERR_DATA (bow_mlp:
 * a kind without a directory form; bad input, exit status 2), common/model/hf_io.h's (PV_ERR_IO,
 * PV_ERR_DATA naming the file and tensor), PV_ERR_NOMEM. */
pv_err_t pv_policy_load_dir(pv_policy_t *p, const char *dir, pv_errmsg_t *em);

#endif
