/* lm_prompt.h - what the language-model policy reads and how its reply becomes an action:
 * the per-step prompt as chat-template tokens, and the benchmark's parse of a reply.
 *
 * The prompt of step t (the context of pv_policy_ctx_t: task text, o_0, a_0, ..., o_t) is a
 * ChatML conversation (Qwen's chat template, <|im_start|>role\n ... <|im_end|>\n), in the
 * style of verl-agent's ALFWorld / WebShop / Search prompts (agent_system/environments/
 * prompts/{alfworld,webshop,search}.py: the task, the recent observations and actions, optionally
 * the admissible actions) but written as turns, so that one step's prompt is the start of the next
 * one's:
 *   <|im_start|>system\n{the environment's instruction}<|im_end|>\n     (none for searchqa)
 *   <|im_start|>user\n{first turn}<|im_end|>\n
 *   <|im_start|>assistant\n{a_s0}<|im_end|>\n
 *   <|im_start|>user\n{o_s0+1}<|im_end|>\n  ...  <|im_start|>user\n{o_t}<|im_end|>\n
 *   <|im_start|>assistant\n                                    <- the action is written here
 * The first turn is o_s0 when s0 = 0 (ALFWorld's and WebShop's first observation holds the
 * task; SearchQA's is Search-R1's instruction prompt, pv_searchr1_prompt), otherwise
 * "Your task is to: {task}\nPrior to this step, you have already taken {s0} step(s).\n"
 * followed by o_s0 (verl-agent's wording).
 *
 * Window (W = window): s0 = 0 while t < 2W, then s0 = (floor(t / W) - 1) W, so a context
 * keeps between W and 2W - 1 earlier turns and only every W steps starts again. Between two
 * restarts each context is the previous one plus the action taken and the new observation:
 * the KV cache of the previous step is reused and the learner scores those steps in one
 * sequence. With `task_each_turn` (ALFWorld, WebShop), every user turn after the first ends
 * with "\nYour task is to: {task}" (verl-agent restates the task at every step), so the task
 * stands next to the observation the action answers; the conversation still extends step by
 * step. With `admissible`, the current observation's turn ends with
 * "\nYour admissible actions of the current situation are: [a, b, ...]." (earlier turns do
 * not: their lists are not in the context), which makes every context new to the cache.
 *
 * Tokens. Every piece is encoded on its own and the pieces are concatenated (special tokens
 * as ids), never the whole text at once: BPE of a concatenation is not the concatenation of
 * BPEs, and a context must be a token-prefix of the next. An action a_k of the history is
 * encoded from its text; the learner's recomputation builds the same tokens from the same
 * texts, so behaviour and training log-probs come from identical inputs.
 * Budget: a context longer than `budget` tokens starts again at s0 = t; if the current
 * observation alone does not fit, its turn is cut (its first tokens kept).
 */
#ifndef PV_POLICY_LM_PROMPT_H
#define PV_POLICY_LM_PROMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/policy/policy.h"
#include "common/tokenizer/tokenizer.h"

typedef enum pv_lmp_env {
    PV_LMP_ALFWORLD = 0,
    PV_LMP_WEBSHOP = 1,
    PV_LMP_SEARCHQA = 2,
} pv_lmp_env_t;

/* How prompts are written. */
typedef struct pv_lmp {
    pv_lmp_env_t env;
    uint32_t window;     /* W >= 1 */
    bool admissible;     /* list the current admissible actions */
    bool task_each_turn; /* end every later observation's turn with the task line */
    size_t budget;       /* most tokens of a context */
    uint32_t im_start;   /* <|im_start|> */
    uint32_t im_end;     /* <|im_end|>: ends every turn, and a generated action */
    const char *system;  /* the instruction (static text; NULL = no system turn) */
} pv_lmp_t;

/* A growable token array (the caller frees ids). */
typedef struct pv_lmp_ids {
    uint32_t *ids;
    size_t n, cap;
} pv_lmp_ids_t;

/* "alfworld" | "webshop" | "searchqa" (NULL = alfworld). Errors: PV_ERR_INVAL. */
pv_err_t pv_lmp_env_parse(const char *name, pv_lmp_env_t *out);
const char *pv_lmp_env_name(pv_lmp_env_t env);

/* The fixed texts of env's prompts (its instruction and the turn headers), for a vocabulary
 * learnt from the environment's texts to hold them too: *n entries (static strings). */
const char *const *pv_lmp_fixed_texts(pv_lmp_env_t env, size_t *n);

/* Settings for `env`: the instruction, window W, budget, the special tokens looked up in
 * tok (<|im_start|>, <|im_end|>). Errors: PV_ERR_NOTFOUND (the tokenizer has no ChatML
 * tokens; em names the one missing), PV_ERR_INVAL (window 0). */
pv_err_t pv_lmp_init(pv_lmp_t *lmp, pv_lmp_env_t env, uint32_t window, bool admissible,
                     size_t budget, const pv_tokenizer_t *tok, pv_errmsg_t *em);

/* The first step s0 of the context of step t (the window rule above, before the budget). */
size_t pv_lmp_window_start(const pv_lmp_t *lmp, size_t t);

/* Write the context of ctx (step t = (n_history - 1) / 2) into out (its n reset first),
 * cands listed when lmp->admissible. `tok` is used for encoding (one thread at a time).
 * Errors: PV_ERR_LIMIT (even a cut turn does not fit the budget), PV_ERR_NOMEM. */
pv_err_t pv_lmp_context(const pv_lmp_t *lmp, pv_tokenizer_t *tok, const pv_policy_ctx_t *ctx,
                        const char *const *cands, size_t n_cands, pv_lmp_ids_t *out,
                        pv_errmsg_t *em);

/* Encode `text` and append its ids to out. Errors: PV_ERR_NOMEM. */
pv_err_t pv_lmp_encode(pv_tokenizer_t *tok, const char *text, size_t len, pv_lmp_ids_t *out);

/* Append one id. Errors: PV_ERR_NOMEM. */
pv_err_t pv_lmp_push(pv_lmp_ids_t *out, uint32_t id);

/* Make text[0 .. len) well-formed UTF-8 in place (RFC 3629: no overlong forms, surrogates or
 * code points above U+10FFFF): every byte that does not start a complete, valid sequence, and
 * every NUL, becomes '?' (a reply decoded token by token can end in the middle of a
 * character, and byte tokens can form anything; the wire carries only valid UTF-8). The
 * length does not change. Returns the bytes replaced. */
size_t pv_lmp_utf8_fix(char *text, size_t len);

/* The action a reply asks for, as each benchmark parses a model's reply, into out[0..cap)
 * (NUL-terminated, cut at cap - 1 bytes); returns its length, 0 for a reply with no action
 * (the environment then refuses the empty action: "Nothing happens.").
 *   alfworld, webshop: verl-agent's alfworld_projection / webshop_projection: lower-cased,
 *     the text between the first "<action>" and the first "</action>" stripped; a reply
 *     without the tags (the plain replies of a model trained here) is its first line,
 *     stripped and lower-cased;
 *   searchqa: Search-R1's response cut (pv_searchr1_cut), stripped: the environment reads
 *     its <search>/<answer> tags (or search[...] / answer[...]). */
size_t pv_lmp_parse(pv_lmp_env_t env, const char *reply, size_t len, char *out, size_t cap);

#endif
