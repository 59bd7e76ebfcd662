/* transformer.h - the Llama / Qwen2 / Qwen3 decoder-only transformer (DESIGN.md section 4).
 *
 * The model is Hugging Face transformers' LlamaForCausalLM / Qwen2ForCausalLM /
 * Qwen3ForCausalLM: token embedding; per layer x += o_proj(attn(rope(q), rope(k), v)) on
 * input_layernorm(x), then x += down_proj(silu(gate_proj(h)) * up_proj(h)) on
 * h = post_attention_layernorm(x); a final norm; lm_head (or the embedding when tied).
 * Grouped-query causal attention, RoPE with rotate_half, RMSNorm, SwiGLU; q/k/v biases for
 * Qwen2 (and for llama/qwen3 with attention_bias, which also gives o_proj a bias); per-head
 * q/k RMSNorm before RoPE for Qwen3. Ops are the kernels of kernels.h.
 *
 * Parameters: ONE float32 buffer and a table of tensors named exactly as Hugging Face names
 * them (model.embed_tokens.weight, model.layers.{i}.self_attn.q_proj.weight, ...), with HF's
 * shapes ([out, in] for a Linear), so hf_io.h reads and writes HF checkpoints by name. The
 * gradient buffers callers pass are laid out like the parameters (same offsets).
 *
 * Three ways to run it, each with its own caller-owned scratch made once:
 * - training: pv_tf_forward over B right-padded sequences of T tokens (causal attention makes
 *   trailing padding harmless; give it no target) gives per-token log-probs and entropies at
 *   a temperature and keeps the activations in a pv_tf_work_t; pv_tf_backward ADDS dL/dθ into
 *   a caller buffer given dL/dlogp (and dL/dentropy) per position;
 * - evaluation: pv_tf_logits, the same forward returning raw logits;
 * - generation: a pv_tf_cache_t of KV caches (slots); pv_tf_prefill appends a prompt to a
 *   slot (pv_tf_prefill_batch: to each of B slots, packed into shared steps),
 *   pv_tf_cache_copy shares a prompt between slots, pv_tf_decode appends one token to each of
 *   B slots in one batched step, pv_tf_sample draws the next token and its log-prob.
 *
 * Threads: the model is only read by these calls, so threads may share one model with one
 * work / cache each (and their own gradient buffer). BLAS threads: see pv_tf_opts_t.
 *
 * Backend: callers see only the model, its scratch objects and host arrays in and out
 * (tokens, log-probs, logits, gradients), so another backend (a GPU) could stand behind the
 * same functions.
 */
#ifndef PV_MODEL_TRANSFORMER_H
#define PV_MODEL_TRANSFORMER_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/rng.h"

typedef enum pv_tf_family {
    PV_TF_LLAMA = 0, /* model_type "llama" */
    PV_TF_QWEN2,     /* "qwen2": q/k/v biases always, no o_proj bias, no q/k norm */
    PV_TF_QWEN3,     /* "qwen3": q/k norm always */
} pv_tf_family_t;

/* HF config.json fields (same names). Family rules, checked by pv_tf_config_check:
 * qwen2 => attention_bias = 1 and qk_norm = 0; qwen3 => qk_norm = 1; llama => qk_norm = 0. */
typedef struct pv_tf_config {
    pv_tf_family_t family;
    uint32_t vocab_size;              /* V */
    uint32_t hidden_size;             /* C */
    uint32_t intermediate_size;       /* F (MLP) */
    uint32_t num_hidden_layers;       /* L */
    uint32_t num_attention_heads;     /* H */
    uint32_t num_key_value_heads;     /* KV, divides H */
    uint32_t head_dim;                /* D, even */
    uint32_t max_position_embeddings; /* longest sequence (RoPE tables, caches) */
    double rms_norm_eps;
    double rope_theta;
    /* rope_scaling / rope_parameters of rope_type "llama3" (Llama 3.1+): factor > 0 turns it
     * on (0 = the default RoPE); see kernels.h pv_k_rope_llama3 */
    struct {
        double factor, low_freq_factor, high_freq_factor;
        uint32_t original_max_position_embeddings;
    } rope_llama3;
    double initializer_range; /* std of the normal init of weights (HF default 0.02) */
    int tie_word_embeddings;  /* lm_head is model.embed_tokens.weight */
    int attention_bias;       /* q/k/v biases (and o_proj's for llama / qwen3) */
    int qk_norm;              /* per-head RMSNorm of q and k (Qwen3) */
    int64_t bos_token_id;     /* -1 when absent */
    int64_t eos_token_id;     /* -1 when absent (the first when config.json has a list) */
} pv_tf_config_t;

/* The default size, trained from scratch on 2 cores: qwen3 family (q/k norm keeps the
 * attention logits bounded when RL pushes hard), V 1024 (a learned vocabulary: the tokenizer
 * sets the real value), C 192, L 4, H 6 of D 32, KV 2, F 512, tied embeddings, 1024
 * positions: 1.77M parameters. */
void pv_tf_config_default(pv_tf_config_t *cfg);
/* The benchmark's ~20M size: V 4096, C 512, L 6, H 8 of D 64, KV 4, F 1408, tied: 19.8M. */
void pv_tf_config_20m(pv_tf_config_t *cfg);
/* Validate sizes and family rules. Errors: PV_ERR_INVAL with the field in `em`. */
pv_err_t pv_tf_config_check(const pv_tf_config_t *cfg, pv_errmsg_t *em);
/* "llama" / "qwen2" / "qwen3"; NULL for a bad value. */
const char *pv_tf_family_name(pv_tf_family_t f);

typedef struct pv_tf_opts {
    uint64_t seed;    /* initialisation */
    int blas_threads; /* OpenBLAS threads for the process, 0 = 1 (one per rank: with more
                         ranks than cores, BLAS threads must not compete); see kernels.h */
} pv_tf_opts_t;

typedef struct pv_tf pv_tf_t;

/* One entry of the tensor table: numel floats at params + offset, row-major shape. */
typedef struct pv_tf_tensor {
    const char *name; /* HF name, owned by the model */
    uint32_t ndim;    /* 1 or 2 */
    uint64_t shape[2];
    size_t offset; /* in floats */
    size_t numel;
} pv_tf_tensor_t;

/* Build a model: checks cfg, allocates the buffer and table, initialises as HF does
 * (weights ~ N(0, initializer_range), biases 0, norms 1) from opts->seed, sets the BLAS
 * thread count. opts may be NULL (seed 0, 1 thread). Errors: PV_ERR_INVAL, PV_ERR_NOMEM. */
pv_err_t pv_tf_new(const pv_tf_config_t *cfg, const pv_tf_opts_t *opts, pv_tf_t **out,
                   pv_errmsg_t *em);
/* Free; clears *m; NULL-safe. Works and caches made from it must be destroyed first. */
void pv_tf_destroy(pv_tf_t **m);
/* Re-initialise every parameter from `seed` (deterministic). */
void pv_tf_init(pv_tf_t *m, uint64_t seed);

/* The config in effect (owned by the model). */
const pv_tf_config_t *pv_tf_config(const pv_tf_t *m);
/* The parameter buffer (pv_tf_n_params floats, owned by the model; write it only while no
 * forward, backward or generation runs on it, e.g. an optimiser step or a weight broadcast). */
float *pv_tf_params(pv_tf_t *m);
const float *pv_tf_params_const(const pv_tf_t *m);
size_t pv_tf_n_params(const pv_tf_t *m);
/* The tensor table in buffer order (entry i, NULL past the end). */
size_t pv_tf_n_tensors(const pv_tf_t *m);
const pv_tf_tensor_t *pv_tf_tensor(const pv_tf_t *m, size_t i);
/* The tensor called `name`, or NULL. */
const pv_tf_tensor_t *pv_tf_find(const pv_tf_t *m, const char *name);

/* ---- training ------------------------------------------------------------------------ */

/* A position with no target: no log-prob, no entropy, no gradient (prompt and padding). */
#define PV_TF_NO_TARGET UINT32_MAX

typedef struct pv_tf_work pv_tf_work_t;

/* Activations for batches of up to max_B sequences of up to max_T tokens
 * (max_T <= max_position_embeddings), made once per caller: about L * max_B * max_T *
 * (4C + 3 H D + 3 KV D + 3F + H max_T) floats plus the output layer's (max_B * max_T, V).
 * Errors: PV_ERR_INVAL, PV_ERR_NOMEM. */
pv_err_t pv_tf_work_new(const pv_tf_t *m, size_t max_B, size_t max_T, pv_tf_work_t **out,
                        pv_errmsg_t *em);
void pv_tf_work_destroy(pv_tf_work_t **w);
/* Bytes the work holds (for memory reports). */
size_t pv_tf_work_bytes(const pv_tf_work_t *w);

/* Training forward of tokens (B, T) (row b at positions 0..T-1): for each position with a
 * target, logp[b,t] = log softmax(logits[b,t] / temperature)[targets[b,t]] and ent[b,t] its
 * entropy (nats); 0 at positions whose target is PV_TF_NO_TARGET (the output layer is not
 * even computed there). For next-token prediction targets[b,t] = tokens[b,t+1]. logp and ent
 * (B, T), ent may be NULL. Activations stay in w for pv_tf_backward. temperature > 0.
 * Errors: PV_ERR_INVAL (B, T beyond the work, temperature <= 0), PV_ERR_RANGE (a token or
 * target >= vocab_size). Allocates nothing. */
pv_err_t pv_tf_forward(const pv_tf_t *m, pv_tf_work_t *w, const uint32_t *tokens,
                       const uint32_t *targets, size_t B, size_t T, float temperature, float *logp,
                       float *ent, pv_errmsg_t *em);

/* Constrained decoding: the ids each position may predict. Position i (row b * T + t of a
 * (B, T) batch) allows ids[begin[i] .. begin[i] + n[i]) (distinct, each < vocab_size, so
 * n[i] <= vocab_size); n[i] = 0 allows the whole vocabulary. Arrays borrowed for the call. */
typedef struct pv_tf_allow {
    const uint32_t *ids; /* the allowed ids, position by position */
    const size_t *begin; /* (B, T) */
    const uint32_t *n;   /* (B, T) */
} pv_tf_allow_t;

/* pv_tf_forward with the softmax of each position with a target renormalised over its
 * allowed ids (allow; NULL = pv_tf_forward): disallowed ids have p = 0, so logp and ent are
 * those of the masked distribution and pv_tf_backward gives them gradient 0; a position
 * with one allowed id (a forced token) has logp = 0, ent = 0 and no gradient. Errors as
 * pv_tf_forward, and PV_ERR_RANGE for a target outside its allowed ids, an allowed id >=
 * vocab_size, or more than vocab_size allowed ids at a position. Allocates nothing. */
pv_err_t pv_tf_forward_masked(const pv_tf_t *m, pv_tf_work_t *w, const uint32_t *tokens,
                              const uint32_t *targets, size_t B, size_t T, float temperature,
                              const pv_tf_allow_t *allow, float *logp, float *ent, pv_errmsg_t *em);

/* Backward of the last pv_tf_forward (or pv_tf_forward_masked) on w (same parameters): given
 * dL/dlogp (B, T) and dL/dent (B, T) (NULL = 0), ADD dL/dθ into grad (pv_tf_n_params floats, laid
 * out as the parameters). Values at positions without a target are ignored. Errors: PV_ERR_STATE
 * (no forward cached on w). Allocates nothing. */
pv_err_t pv_tf_backward(const pv_tf_t *m, pv_tf_work_t *w, const float *dlogp, const float *dent,
                        float *grad);

/* Evaluation forward: logits (B, T, V) of every position, no temperature (raw lm_head
 * output). Overwrites w's activations. Errors as pv_tf_forward. */
pv_err_t pv_tf_logits(const pv_tf_t *m, pv_tf_work_t *w, const uint32_t *tokens, size_t B, size_t T,
                      float *logits, pv_errmsg_t *em);

/* ---- generation ---------------------------------------------------------------------- */

typedef struct pv_tf_cache pv_tf_cache_t;

/* KV caches for n_slots sequences of up to max_T positions each, plus the scratch of a
 * decode step over up to n_slots sequences and of prefill chunks. Errors: PV_ERR_INVAL,
 * PV_ERR_NOMEM. */
pv_err_t pv_tf_cache_new(const pv_tf_t *m, size_t n_slots, size_t max_T, pv_tf_cache_t **out,
                         pv_errmsg_t *em);
void pv_tf_cache_destroy(pv_tf_cache_t **c);
size_t pv_tf_cache_bytes(const pv_tf_cache_t *c);
/* Positions held by a slot (the next token goes at this position). */
size_t pv_tf_cache_len(const pv_tf_cache_t *c, size_t slot);
/* Empty a slot. */
void pv_tf_cache_reset(pv_tf_cache_t *c, size_t slot);
/* Make slot dst a copy of slot src (a shared prompt prefilled once, then G continuations). */
void pv_tf_cache_copy(pv_tf_cache_t *c, size_t dst, size_t src);
/* Keep the first n positions of a slot (no-op when it holds n or fewer): what follows is
 * forgotten, so a slot can go back to a shared prefix and continue differently. */
void pv_tf_cache_truncate(pv_tf_cache_t *c, size_t slot, size_t n);

/* Append n tokens to `slot` (in chunks; a prompt, or a continuation of what the slot holds)
 * and write the logits (V) of the last one to `logits` (may be NULL). Errors: PV_ERR_INVAL
 * (bad slot, n == 0), PV_ERR_LIMIT (the slot would pass max_T), PV_ERR_RANGE (bad token). */
pv_err_t pv_tf_prefill(const pv_tf_t *m, pv_tf_cache_t *c, size_t slot, const uint32_t *tokens,
                       size_t n, float *logits, pv_errmsg_t *em);

/* pv_tf_prefill for B sequences at once: tokens[b] (n[b] >= 1 of them) are appended to slot
 * slots[b] (distinct slots), packed into steps of up to max(256, n_slots) rows (at most 64
 * per sequence and step) so the linear layers see several sequences' rows in one matrix product;
 * logits (B, V) receive each sequence's next-token logits (may be NULL). The same numbers as B
 * pv_tf_prefill calls up to the last bits of the larger products. Errors as pv_tf_prefill
 * (checked for every sequence before any is appended), PV_ERR_INVAL (B == 0, B > n_slots,
 * a slot given twice). Allocates nothing. */
pv_err_t pv_tf_prefill_batch(const pv_tf_t *m, pv_tf_cache_t *c, const size_t *slots,
                             const uint32_t *const *tokens, const size_t *n, size_t B,
                             float *logits, pv_errmsg_t *em);

/* As pv_tf_prefill, but logits (n, V) are the next-token logits after every appended token:
 * the sequence log-prob of a candidate continuation (an admissible action) scored against a
 * prompt prefilled once and copied to a slot per candidate. logits must not be NULL. */
pv_err_t pv_tf_extend(const pv_tf_t *m, pv_tf_cache_t *c, size_t slot, const uint32_t *tokens,
                      size_t n, float *logits, pv_errmsg_t *em);

/* One batched decode step: token tokens[b] is appended to slot slots[b] (distinct slots,
 * each at its own position) for b < B <= n_slots, and logits (B, V) are the next-token
 * logits of each. Errors as pv_tf_prefill. Allocates nothing. */
pv_err_t pv_tf_decode(const pv_tf_t *m, pv_tf_cache_t *c, const size_t *slots,
                      const uint32_t *tokens, size_t B, float *logits, pv_errmsg_t *em);

/* Draw a token from softmax(logits / temperature) with rng (or the first argmax when rng is
 * NULL) and its log-prob under that same distribution, computed as pv_tf_forward computes
 * it (kernels.h pv_k_logsumexp). logits (V); temperature > 0. */
void pv_tf_sample(const float *logits, size_t V, float temperature, pv_rng_t *rng, uint32_t *token,
                  float *logp);

/* ---- sizes ---------------------------------------------------------------------------- */

/* Floating-point operations of a forward over T tokens of one sequence with the output layer
 * on every position: 2 * (matmul weights incl. the output layer) per token plus 4 H D T per
 * layer for the attention products over the full T x T (PaLM's appendix-B convention; the
 * kernels skip most of the masked half). The backward costs twice that. */
double pv_tf_flops_forward(const pv_tf_config_t *cfg, size_t T);

#endif
