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

#define PV_LM_SLOTS_KEPT                                                                           \
    2 /* KV-cache slots a work keeps beyond one per conversation of its                            \
         largest batch (the group's first prompt, a restart's prefix) */

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

/* The candidates of one decision as token sequences, and the trie walk's scratch over them
 * (lm_constrain.c). */
typedef struct pv_lm_cset {
    pv_lmp_ids_t ids; /* every candidate's tokens, one after another */
    size_t *off;      /* (cap) candidate c is ids.ids[off[c] .. off[c + 1]) */
    double *score;    /* (cap) rank: sequence log-probs */
    size_t *alive;    /* (cap) constrain: the candidates the trie walk is still on */
    uint32_t *allow;  /* (cap) constrain: the allowed next ids */
    float *keep;      /* (cap) pv_k_mask's scratch */
    size_t cap;
} pv_lm_cset_t;

/* A walk down the trie of the candidates' token sequences (decode = constrain): after k
 * tokens, the candidates whose first k tokens are those tokens. */
typedef struct pv_lm_walk {
    const uint32_t *ids; /* cs->ids.ids */
    const size_t *off;   /* cs->off */
    size_t *alive;       /* (n) cs->alive: the candidates still on the path */
    size_t n_alive;
    size_t k; /* tokens walked */
} pv_lm_walk_t;

/* One conversation of an act (a batch holds one per decision): its context, the cache slot
 * it is in, its candidates and what it generates. */
typedef struct pv_lm_gen {
    pv_lmp_ids_t ctx;
    pv_lm_cset_t cs;
    pv_lm_walk_t wk;
    size_t slot;
    size_t have;          /* tokens of ctx the slot held before this act (the rest is new) */
    uint32_t *gen;        /* (max_new) generated tokens */
    float *gen_lp;        /* (max_new) their behaviour log-probs */
    char *reply, *action; /* (text_cap) the decoded reply, the parsed action */
    double lp_sum, ent;
    size_t k;  /* tokens generated */
    bool done; /* the action is written */
} pv_lm_gen_t;

typedef struct pv_lm_work {
    /* acting */
    pv_tf_cache_t *cache;
    pv_lm_slot_t *slot; /* (n_slots) */
    size_t n_slots;
    uint8_t *claimed;      /* (n_slots) free, or taken by a conversation of the current batch */
    size_t pend0, n_pend;  /* conversations pend0 .. + n_pend claimed and not yet prefilled */
    const uint32_t **ptok; /* (cap_gens) a batched prefill's token runs and their lengths */
    size_t *pcnt;
    uint64_t clock;
    uint64_t cache_gen; /* the policy's generation the cache was filled at */
    pv_lm_gen_t *gens;  /* (cap_gens) one per conversation of a batch */
    size_t cap_gens;
    float *logits;  /* (cap_gens, V) each conversation's next-token logits */
    float *dlogits; /* (cap_gens, V) pv_tf_decode's output */
    size_t *dslot;  /* (cap_gens) a decode step's slots, tokens, conversations */
    uint32_t *dtok;
    size_t *dgen;
    float *rows; /* (rows_cap, V) rank: the logits after each candidate token */
    size_t rows_cap;
    pv_lmp_ids_t ctx; /* training: the current context */
    pv_lm_cset_t cs;  /* training (constrain's allowed ids) */
    float *cand_lp;   /* (cand_lp_cap) rank: per-token log-probs of gens[0]'s candidates */
    size_t cand_lp_cap;
    float *mrow; /* (V) rank under constrain: a masked copy of a logits row */
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

/* Room in a candidate set for n candidates (lm_constrain.c). Errors: PV_ERR_NOMEM. */
pv_err_t pv_lm_cand_room(pv_lm_cset_t *cs, size_t n);

/* Free a candidate set's arrays (the struct itself is the caller's). */
void pv_lm_cset_free(pv_lm_cset_t *cs);

/* Every candidate's tokens (its text encoded and <|im_end|>, cut at max_new tokens, as a
 * generated action is) one after another into cs, candidate c at
 * cs->ids.ids[cs->off[c] .. cs->off[c + 1]). Errors: PV_ERR_NOMEM. */
pv_err_t pv_lm_cands(pv_lm_t *lm, pv_lm_cset_t *cs, const char *const *cands, size_t n);

/* Start at the root over the n candidates pv_lm_cands encoded into cs (borrows its arrays). */
void pv_lm_walk_start(pv_lm_walk_t *wk, const pv_lm_cset_t *cs, size_t n);
/* The distinct next ids of the alive candidates (the k-th token of each that has one), in
 * first-seen order, into allow (room for n_alive ids); returns their count (0: every alive
 * candidate ended, or none is alive). */
size_t pv_lm_walk_allowed(const pv_lm_walk_t *wk, uint32_t *allow);
/* Walk one token: keep the alive candidates whose k-th token is tok. */
void pv_lm_walk_step(pv_lm_walk_t *wk, uint32_t tok);
/* The first alive candidate that ends exactly here (all its tokens walked), or SIZE_MAX. */
size_t pv_lm_walk_ended(const pv_lm_walk_t *wk);

/* ---- the work's KV-cache slots (lm_slots.c) ---- */

/* *p (an array) resized to n elements of `size` bytes (unchanged on failure). Errors:
 * PV_ERR_NOMEM. */
pv_err_t pv_lm_resize(void *p, size_t n, size_t size);

/* Room in w for B conversations: their scratch (w->gens, the logits rows, the decode and
 * prefill lists) and B + PV_LM_SLOTS_KEPT cache slots (a cache that must grow is made anew,
 * forgetting what it held). Errors: PV_ERR_NOMEM. */
pv_err_t pv_lm_room(const pv_lm_t *lm, pv_lm_work_t *w, size_t B);
/* Free what pv_lm_room allocated. */
void pv_lm_room_free(pv_lm_work_t *w);
/* Free one conversation's scratch. */
void pv_lm_gen_free(pv_lm_gen_t *g);

/* Start a batch: every slot is forgotten if the parameters changed since the cache was
 * filled (its keys and values belong to the old ones), and none is claimed. */
void pv_lm_batch_begin(const pv_policy_t *p, pv_lm_work_t *w);
/* Bring conversation b's context (w->gens[b].ctx) into a slot no earlier conversation of the
 * batch has claimed, and queue what is new in it for pv_lm_flush (g->slot, g->have).
 * Errors: PV_ERR_NOMEM, those of pv_lm_flush (a prefix copied from a pending slot is
 * prefilled first); after an error call pv_lm_unpend. */
pv_err_t pv_lm_prefill(const pv_lm_t *lm, pv_lm_work_t *w, size_t b, pv_errmsg_t *em);
/* Prefill every queued conversation in one pv_tf_prefill_batch, each one's next-token logits
 * into its row of w->logits. Errors: pv_tf_prefill_batch's (the queued slots are emptied). */
pv_err_t pv_lm_flush(const pv_lm_t *lm, pv_lm_work_t *w, pv_errmsg_t *em);
/* After an error before pv_lm_flush: the queued slots' ids go back to what their caches
 * hold. */
void pv_lm_unpend(pv_lm_work_t *w);

/* Build the context of ctx into w->ctx under the tokenizer's lock. */
pv_err_t pv_lm_context(pv_lm_t *lm, const pv_policy_ctx_t *ctx, const char *const *cands,
                       size_t n_cands, pv_lmp_ids_t *out, pv_errmsg_t *em);
/* The same within `budget` tokens instead of the prompt's (0 = the prompt's): a
 * demonstration's action can be longer than max_new_tokens, the room acting leaves. */
pv_err_t pv_lm_context_within(pv_lm_t *lm, const pv_policy_ctx_t *ctx, const char *const *cands,
                              size_t n_cands, size_t budget, pv_lmp_ids_t *out, pv_errmsg_t *em);

#endif
