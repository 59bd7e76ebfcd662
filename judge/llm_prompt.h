/* llm_prompt.h - what the LLM judge reads of a group, and its prompt (ProVer's agentic
 * judge, ../shared/METHODS.md "ProVer").
 *
 * The protocol (METHODS.md): the judge reads the shortest successful trajectory in full and
 * compact previews of the failed ones; it names one failure mode that recurs across the
 * failures and proposes the shortest nonterminal segment of at most `max_turns` action turns
 * of the successful run that solves or avoids it; malformed or refused actions are never a
 * segment's boundary (its first or last turn), as for every judge (judge/proposer.h). The tools
 * that show more of the failed runs are in llm_tools.h, the answer's schema and validator in
 * llm_answer.h.
 *
 * Turns: turn t of a trajectory is its action a_t = texts[2t + 1], taken after observation
 * o_t = texts[2t] and answered by o_{t+1} = texts[2t + 2] (traj.h). A segment of turns
 * [start, end] (inclusive) is the judge's segment steps [start, end + 1) (proposer.h).
 * "Nonterminal" means the segment ends before the last turn (end + 1 < n_steps), so the
 * state after it is a real state a verifier restores.
 */
#ifndef PV_LLM_PROMPT_H
#define PV_LLM_PROMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/traj/traj.h"
#include "judge/llm_text.h"

/* Bounds of what the judge shows and accepts (judge.* keys, llm_judge.h). */
typedef struct pv_llm_limits {
    uint32_t max_turns;      /* a segment's action turns, >= 1 (prover.max_segment_turns, 4) */
    uint32_t obs_chars;      /* an observation in the prompt or a tool result, bytes */
    uint32_t preview_turns;  /* turns of a failure's preview: the first third, the rest last */
    uint32_t max_get_turns;  /* get_segment: turns per call */
    uint32_t max_search_k;   /* search_trajectory: results per call */
    size_t max_prompt_bytes; /* the user message */
} pv_llm_limits_t;

/* Defaults: max_turns 4, obs_chars 400, preview_turns 6, max_get_turns 8, max_search_k 10,
 * max_prompt_bytes 48 KiB. */
pv_llm_limits_t pv_llm_limits_default(void);

/* One group as the LLM judge reads it. Borrowed: trajs and task_text must outlive it. */
typedef struct pv_llm_ctx {
    uint64_t group_id;
    const char *task_text;  /* the goal; "" when unknown */
    const pv_traj_t *trajs; /* (n_trajs) texts, won, n_steps, steps (candidates) */
    size_t n_trajs;
    uint32_t success; /* the trajectory shown in full: the shortest success with a segment */
    pv_llm_limits_t lim;
} pv_llm_ctx_t;

/* Whether action t of `tr` is malformed or refused, so never a segment boundary: the step
 * says so (pv_step_rec_t.refused, the environment's verdict); an empty action; an action
 * that is none of the candidates the step offered (when it recorded any); or an
 * environment answer that refuses it (ALFWorld's "Nothing happens.", Search-R1's "My
 * previous action is invalid. ..."; trajectories without step records). */
bool pv_llm_action_refused(const pv_traj_t *tr, size_t t);

/* Whether turns [start, end] of `tr` form a segment the protocol allows: start <= end,
 * end + 1 < n_steps (nonterminal), at most max_turns turns, neither start nor end refused. */
bool pv_llm_segment_allowed(const pv_traj_t *tr, uint32_t start, uint32_t end, uint32_t max_turns);

/* Prepare the judge's view of a group: picks the success to show, the shortest successful
 * trajectory (the first of equal length, as pv_group_shortest_success). lim->max_turns >= 1.
 * Errors: PV_ERR_INVAL (no success or no failure in the group, a trajectory without its
 * texts, bad limits), PV_ERR_NOTFOUND (the shortest success has no allowed segment: it is
 * one turn long, or its nonterminal turns are all refused). */
pv_err_t pv_llm_ctx_init(pv_llm_ctx_t *ctx, uint64_t group_id, const char *task_text,
                         const pv_traj_t *trajs, size_t n_trajs, const pv_llm_limits_t *lim,
                         pv_errmsg_t *em);

/* The system message: the judge's role, the rules of a segment and the JSON answer. */
void pv_llm_prompt_system(const pv_llm_ctx_t *ctx, pv_llm_buf_t *out);

/* The first user message: the group and task, the shown success in full (observations cut
 * to obs_chars, refused turns marked), and a preview of each failure (its outcome, turn
 * count, refused count, its first and last turns with the answers cut to 80 bytes).
 * Bounded by lim.max_prompt_bytes: observations are cut harder (down to 32 bytes) until it
 * fits. `out` should be empty and bounded by at least max_prompt_bytes.
 * Errors: PV_ERR_LIMIT (it does not fit even then), PV_ERR_NOMEM. */
pv_err_t pv_llm_prompt_user(const pv_llm_ctx_t *ctx, pv_llm_buf_t *out);

/* The fewest bytes an observation is cut to when a prompt does not fit. */
#define PV_LLM_MIN_OBS_CHARS 32u

/* Writes a user message into `b` with observations cut to `obs` bytes and previews (where
 * the message has them) to `pobs`. */
typedef void (*pv_llm_user_fill_fn)(const pv_llm_ctx_t *ctx, pv_llm_buf_t *b, size_t obs,
                                    size_t pobs);

/* A user message that fits lim.max_prompt_bytes: `fill` is called with observations of
 * lim.obs_chars and previews of `pobs` bytes, both halved (down to PV_LLM_MIN_OBS_CHARS)
 * until the message fits; the one that fits is appended to `out`. The rule of
 * pv_llm_prompt_user and of TRIAGE's pv_llm_label_user. Errors: PV_ERR_LIMIT (it does not
 * fit at the smallest cut), PV_ERR_NOMEM. */
pv_err_t pv_llm_prompt_fit(const pv_llm_ctx_t *ctx, pv_llm_user_fill_fn fill, size_t pobs,
                           pv_llm_buf_t *out);

#endif
