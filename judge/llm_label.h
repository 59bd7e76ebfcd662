/* llm_label.h - TRIAGE's role labels through the LLM judge (algorithm.adv_estimator = triage,
 * algorithm.triage_labels = llm): the prompt that asks the model to label every action turn
 * of a group, the JSON answer's schema and its validator (issue 17, item 4).
 *
 * Source: the TRIAGE abstract (role-typed judge, arXiv 2606.32017; ../shared/METHODS.md): a
 * judge labels each segment Decisive / Exploration / No-progress / Regression, mapped to the
 * process rewards 1.0 / 0.5 / -0.1 / -0.5 (common/traj/triage.h). How the paper's judge is
 * prompted is not known here; the definitions below are ours, worded after the model-free
 * rule (triage.h) so that both labellers mean the same roles. One segment = one action turn,
 * as for the model-free labels.
 *
 * The conversation (judge/llm_judge.h with pv_llm_group_t.label_turns): one system message
 * (the four roles), one user message (the task, then every trajectory of the group in full:
 * its outcome and each turn's action and the answer it got, observations cut to obs_chars,
 * refused turns marked; cut harder, down to 32 bytes, until it fits max_prompt_bytes), no
 * tools. The answer is one JSON object:
 *   {"trajectories": [{"traj_id": i, "roles": ["<role of turn 0>", ..., "<turn n_i - 1>"]},
 *                     ...]}
 * with role names "decisive", "exploration", "no_progress", "regression" (case and the
 * spellings "no-progress" / "no progress" tolerated). The validator is strict per turn and
 * lenient per group:
 *   - not one JSON object, no "trajectories" array: refused (a repair turn, as for segments);
 *   - an entry that is not an object, names no trajectory of the group, names one twice (the
 *     first counts), or whose "roles" is not an array of exactly n_steps entries: that
 *     trajectory's turns get no label from the model;
 *   - a role that is not a string naming one of the four: that turn gets no label;
 *   - when no turn of the group gets a label: refused (PV_LLM_REFUSAL_LABELS).
 * Turns without a label are counted (`unlabelled`) and the learner gives them the model-free
 * label (learner/triage_adv.h): a partly usable answer is kept, not repaired.
 */
#ifndef PV_LLM_LABEL_H
#define PV_LLM_LABEL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/err.h"
#include "common/traj/triage.h"
#include "common/traj/traj.h"
#include "judge/llm_answer.h"
#include "judge/llm_prompt.h"
#include "judge/llm_text.h"

/* A turn the model did not label (pv_triage_role_t values 0..3 are the labels). */
#define PV_LLM_ROLE_NONE PV_TRIAGE_ROLE_NONE

/* Prepare the labeller's view of a group: every trajectory (successes and failures alike;
 * ctx->success is unused). Errors: PV_ERR_INVAL (NULL trajs, more than 1024 trajectories (the
 * wire's bound), a trajectory without its texts, bad limits), PV_ERR_NOTFOUND (the group has no
 * action turn: nothing to label). */
pv_err_t pv_llm_label_ctx_init(pv_llm_ctx_t *ctx, uint64_t group_id, const char *task_text,
                               const pv_traj_t *trajs, size_t n_trajs, const pv_llm_limits_t *lim,
                               pv_errmsg_t *em);

/* Turns of the group: the sum of its trajectories' n_steps (the length of a roles array). */
size_t pv_llm_label_turns(const pv_llm_ctx_t *ctx);

/* The system message: the labeller's role, the four roles and the JSON answer. */
void pv_llm_label_system(pv_llm_buf_t *out);

/* The user message (see above). `out` should be empty and bounded by at least
 * lim.max_prompt_bytes. Errors: PV_ERR_LIMIT (it does not fit even with 32-byte
 * observations), PV_ERR_NOMEM. */
pv_err_t pv_llm_label_user(const pv_llm_ctx_t *ctx, pv_llm_buf_t *out);

/* The answer's JSON Schema (an object with "trajectories": objects {traj_id in 0 .. n - 1,
 * roles: array of the four names}): a new reference, NULL when out of memory. */
json_t *pv_llm_label_schema(const pv_llm_ctx_t *ctx);

/* Put the schema into `request` in dialect `fmt` (as pv_llm_answer_constrain, schema name
 * "triage_roles"). Errors: PV_ERR_NOMEM. */
pv_err_t pv_llm_label_constrain(const pv_llm_ctx_t *ctx, pv_llm_format_t fmt, json_t *request);

/* What one answer labelled. */
typedef struct pv_llm_label_counts {
    uint32_t labelled;   /* turns with a role from the model */
    uint32_t unlabelled; /* turns without: missing, wrong count, unknown name */
    uint32_t bad_trajs;  /* trajectories whose entry was missing or unusable */
    uint32_t bad_roles;  /* role entries that named no role (inside usable entries) */
} pv_llm_label_counts_t;

/* Validate the answer text[0..len) (untrusted; whitespace and a ``` fence tolerated, as
 * pv_llm_answer_check) into roles (pv_llm_label_turns(ctx) entries, trajectory after
 * trajectory in group order: a pv_triage_role_t value or PV_LLM_ROLE_NONE) and *counts
 * (rules above). Returns PV_LLM_REFUSAL_OK when at least one turn is labelled, else the reason
 * (NOT_JSON, MISSING, TYPE, LABELS) with a human detail in why[0..cap) (the repair message);
 * roles and counts are filled either way. */
pv_llm_refusal_t pv_llm_label_check(const pv_llm_ctx_t *ctx, const char *text, size_t len,
                                    uint8_t *roles, pv_llm_label_counts_t *counts, char *why,
                                    size_t cap);

/* Role name -> pv_triage_role_t value (0..3), PV_LLM_ROLE_NONE for anything else: the four
 * names ignoring ASCII case, '-' or whitespace for '_', surrounding whitespace. */
uint8_t pv_llm_role_parse(const char *name);

#endif
