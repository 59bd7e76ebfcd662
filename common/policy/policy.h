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
 * candidate's index in the step's candidate list and whose log-prob is log p(choice). An
 * autoregressive LM kind would emit several tokens per step; the per-token arrays below are
 * sized by n_tokens so nothing else changes.
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

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/rng.h"

typedef struct pv_policy pv_policy_t;
typedef struct pv_policy_work pv_policy_work_t;

/* How to build a policy. 0 in a size field means the kind's default. */
typedef struct pv_policy_spec {
    const char *kind;        /* "bow_mlp" (borrowed during pv_policy_new) */
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
    const char *name; /* "embed", "w1", ... (static string) */
    uint32_t ndim;
    uint64_t shape[PV_POLICY_MAX_DIMS];
    size_t offset; /* in floats */
    size_t numel;
} pv_policy_tensor_t;

/* What one act() produced. Token arrays point into the work scratch and stay valid until
 * the next call on that work. */
typedef struct pv_policy_step {
    size_t choice;               /* index into the candidate list */
    float logprob;               /* behaviour log-prob of the whole action (sum over tokens) */
    float entropy;               /* entropy of the decision's distribution (nats) */
    size_t n_tokens;             /* tokens emitted (1 for bow_mlp) */
    const uint32_t *tokens;      /* (n_tokens) token ids */
    const float *token_logprobs; /* (n_tokens) behaviour log-prob per token */
} pv_policy_step_t;

/* Build a policy: validates the spec, allocates the parameter buffer and initialises it
 * from spec->seed. Errors: PV_ERR_INVAL (unknown kind, sizes out of range: `em` says which),
 * PV_ERR_NOMEM. */
pv_err_t pv_policy_new(const pv_policy_spec_t *spec, pv_policy_t **out, pv_errmsg_t *em);

/* Free the policy; clears *p. NULL-safe. Works created from it must be destroyed first. */
void pv_policy_destroy(pv_policy_t **p);

/* The spec in effect, defaults filled in (kind points to a static string). */
const pv_policy_spec_t *pv_policy_spec(const pv_policy_t *p);

/* The parameter buffer (n_params floats) and its tensor table. */
float *pv_policy_params(pv_policy_t *p);
const float *pv_policy_params_const(const pv_policy_t *p);
size_t pv_policy_n_params(const pv_policy_t *p);
size_t pv_policy_n_tensors(const pv_policy_t *p);
const pv_policy_tensor_t *pv_policy_tensor(const pv_policy_t *p, size_t i);

/* Policy version: bumped by the learner after each update, stamped on every step. */
uint64_t pv_policy_version(const pv_policy_t *p);
void pv_policy_set_version(pv_policy_t *p, uint64_t version);

/* Per-caller scratch sized for p's spec. Errors: PV_ERR_NOMEM. */
pv_err_t pv_policy_work_new(const pv_policy_t *p, pv_policy_work_t **out);
void pv_policy_work_destroy(pv_policy_work_t **w);

/* Choose an action: sample from the distribution with `rng`, or the argmax (first maximum)
 * when rng is NULL. Errors: PV_ERR_INVAL (no candidate, empty history, NULL text),
 * PV_ERR_LIMIT (more than max_cands candidates). Allocates nothing. */
pv_err_t pv_policy_act(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                       size_t n_cands, pv_rng_t *rng, pv_policy_work_t *work,
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

#endif
