/* lm_impl.h - the language-model policy kind's private state, shared by lm_policy.c (model,
 * acting, files) and lm_train.c (the training forward and backward over steps). Not an API:
 * everything else goes through policy.h.
 */
#ifndef PV_POLICY_LM_IMPL_H
#define PV_POLICY_LM_IMPL_H

#include <pthread.h>

#include "common/model/transformer.h"
#include "common/policy/lm_prompt.h"
#include "common/policy/policy_impl.h"
#include "common/tokenizer/tokenizer.h"

/* The model, its vocabulary and its prompt settings (p->impl). */
typedef struct pv_lm {
    pv_tf_t *model;
    pv_tokenizer_t *tok;
    pthread_mutex_t tok_mu; /* the tokenizer's encode scratch: one encoder at a time */
    char *tok_json;         /* tokenizer.json text, for pv_policy_save_dir */
    size_t tok_json_len;
    pv_lmp_t lmp;
    uint32_t V;         /* the model's vocabulary (output layer) */
    size_t max_context; /* positions of a context and its action (KV cache, training) */
    size_t max_new;     /* tokens of one generated action */
    pv_policy_tensor_t *table;
} pv_lm_t;

#define PV_LM_SLOTS 3 /* KV-cache slots of a work: the current conversation and two kept */

typedef struct pv_lm_slot {
    pv_lmp_ids_t ids; /* the tokens the slot's KV cache holds */
    uint64_t used;    /* last use (work clock), 0 = never */
} pv_lm_slot_t;

/* A training sequence: pool[off .. off + len), the steps scored in it. */
typedef struct pv_lm_seq {
    size_t off, len;
} pv_lm_seq_t;

/* A training lane: one chunk of sequences at a time (B, T), its forward's activations and,
 * for lanes after the first, a gradient of its own that is summed into the caller's. Lane 0
 * is the caller's thread; lanes 1.. run on threads of their own (policy.train_threads). */
typedef struct pv_lm_lane {
    pv_tf_work_t *tw;
    size_t tw_B, tw_T;
    uint32_t *btok, *btgt; /* (tw_B * tw_T) one chunk */
    float *blp, *bent, *bdlp, *bdent;
    size_t cap_b;
    size_t *bbegin; /* (tw_B * tw_T) one chunk's pv_tf_allow_t */
    uint32_t *bn;
    float *grad; /* lanes 1..: (n_params) their gradient; NULL for lane 0 */
    pv_err_t rc;
    pv_errmsg_t em;
} pv_lm_lane_t;

#define PV_LM_MAX_LANES 16 /* policy.train_threads at most */

/* Where an item's tokens are: its sequence and the position of its first action token. */
typedef struct pv_lm_at {
    size_t seq, pos, out; /* out: offset of its log-probs in the caller's arrays */
} pv_lm_at_t;

typedef struct pv_lm_work {
    /* acting */
    pv_tf_cache_t *cache;
    pv_lm_slot_t slot[PV_LM_SLOTS];
    uint64_t clock;
    uint64_t cache_gen; /* the policy's generation the cache was filled at */
    float *logits;      /* (V) the next token's logits */
    float *rows;        /* (rows_cap, V) rank: the logits after each candidate token */
    size_t rows_cap;
    pv_lmp_ids_t ctx;  /* the current context */
    pv_lmp_ids_t cand; /* rank: every candidate's tokens, one after another */
    size_t *cand_off;  /* (cap_cands + 1) */
    float *cand_lp;    /* (cand.cap) per-token log-probs */
    double *score;     /* (cap_cands) sequence log-probs */
    size_t cap_cands, cand_lp_cap;
    size_t *alive;        /* (cap_cands) constrain: the candidates the trie walk is still on */
    uint32_t *allow;      /* (cap_cands) constrain: the allowed next ids */
    float *keep;          /* (cap_cands) pv_k_mask's scratch */
    float *mrow;          /* (V) rank under constrain: a masked copy of a logits row */
    uint32_t *gen;        /* (max_new) generated tokens */
    float *gen_lp;        /* (max_new) */
    char *reply, *action; /* decoded reply, parsed action */
    size_t text_cap;
    /* training */
    pv_lm_lane_t lane[PV_LM_MAX_LANES];
    size_t n_lanes; /* lanes in use (policy.train_threads, at least 1) */
    size_t *chunk;  /* (3 * cap_chunk) each chunk's first order position, end and T */
    size_t cap_chunk;
    pv_lmp_ids_t pool; /* the sequences' tokens */
    pv_lm_seq_t *seqs; /* (n_seqs) */
    size_t n_seqs, cap_seqs;
    size_t *order; /* (n_seqs) longest first */
    size_t cap_order;
    pv_lm_at_t *at; /* (n_items) */
    size_t cap_at;
    /* training under decode = constrain: every action token's allowed ids */
    pv_lmp_ids_t apool; /* the allowed ids, token by token */
    size_t *abegin;     /* (n tokens) where a token's ids start in apool */
    uint32_t *an;       /* (n tokens) how many (0 = the whole vocabulary) */
    size_t cap_a, cap_an;
    /* the one-step forward kept for pv_policy_backward */
    bool single_ready;
    size_t single_n;
} pv_lm_work_t;

/* Training forward / backward of items (lm_train.c), the kind's ops. */
pv_err_t pv_lm_forward_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                             void *work, float *logp, float *ent, pv_errmsg_t *em);
pv_err_t pv_lm_backward_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                              void *work, const float *dlogp, const float *dent, float *grad,
                              float *logp_out, pv_errmsg_t *em);
pv_err_t pv_lm_train_items(const pv_policy_t *p, const pv_policy_item_t *items, size_t n,
                           void *work, pv_policy_token_grad_fn fn, void *user, float *grad,
                           float *logp_out, float *ent_out, pv_errmsg_t *em);
/* The one-step forms: the forward keeps its activations for pv_lm_backward_one. */
pv_err_t pv_lm_forward_one(const pv_policy_t *p, const pv_policy_ctx_t *ctx,
                           const char *const *cands, size_t n, const uint32_t *tokens,
                           size_t n_tokens, void *work, float *logp, float *ent);
pv_err_t pv_lm_backward_one(const pv_policy_t *p, void *work, const float *dlogp, const float *dent,
                            float *grad);
/* Free the training scratch of a work. */
void pv_lm_train_free(pv_lm_work_t *w);

/* ---- candidates and the trie over their tokens (lm_constrain.c) ---- */

/* Encode text and the end token into out (reset first), under the tokenizer's lock.
 * Errors: PV_ERR_NOMEM. */
pv_err_t pv_lm_action_ids(pv_lm_t *lm, const char *text, pv_lmp_ids_t *out);

/* Room in w's candidate scratch (cand_off, score, alive, allow, keep) for n candidates.
 * Errors: PV_ERR_NOMEM. */
pv_err_t pv_lm_cand_room(pv_lm_work_t *w, size_t n);

/* Every candidate's tokens (its text encoded and <|im_end|>, cut at max_new tokens, as a
 * generated action is) one after another into w->cand, candidate c at
 * w->cand.ids[w->cand_off[c] .. w->cand_off[c + 1]). Errors: PV_ERR_NOMEM. */
pv_err_t pv_lm_cands(pv_lm_t *lm, pv_lm_work_t *w, const char *const *cands, size_t n);

/* A walk down the trie of the candidates' token sequences (decode = constrain): after k
 * tokens, the candidates whose first k tokens are those tokens. */
typedef struct pv_lm_walk {
    const uint32_t *ids; /* w->cand.ids */
    const size_t *off;   /* w->cand_off */
    size_t *alive;       /* (n) w->alive: the candidates still on the path */
    size_t n_alive;
    size_t k; /* tokens walked */
} pv_lm_walk_t;

/* Start at the root over the n candidates pv_lm_cands encoded into w (borrows w's arrays). */
void pv_lm_walk_start(pv_lm_walk_t *wk, const pv_lm_work_t *w, size_t n);
/* The distinct next ids of the alive candidates (the k-th token of each that has one), in
 * first-seen order, into allow (room for n_alive ids); returns their count (0: every alive
 * candidate ended, or none is alive). */
size_t pv_lm_walk_allowed(const pv_lm_walk_t *wk, uint32_t *allow);
/* Walk one token: keep the alive candidates whose k-th token is tok. */
void pv_lm_walk_step(pv_lm_walk_t *wk, uint32_t tok);
/* The first alive candidate that ends exactly here (all its tokens walked), or SIZE_MAX. */
size_t pv_lm_walk_ended(const pv_lm_walk_t *wk);

/* Build the context of ctx into w->ctx under the tokenizer's lock. */
pv_err_t pv_lm_context(pv_lm_t *lm, const pv_policy_ctx_t *ctx, const char *const *cands,
                       size_t n_cands, pv_lmp_ids_t *out, pv_errmsg_t *em);
/* The same within `budget` tokens instead of the prompt's (0 = the prompt's): a
 * demonstration's action can be longer than max_new_tokens, the room acting leaves. */
pv_err_t pv_lm_context_within(pv_lm_t *lm, const pv_policy_ctx_t *ctx, const char *const *cands,
                              size_t n_cands, size_t budget, pv_lmp_ids_t *out, pv_errmsg_t *em);

#endif
