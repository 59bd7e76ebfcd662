/* play_diagnose.h - `prover-env play --policy PATH --diagnose`: why a scorer's episodes are
 * lost, one block per episode instead of the transcript.
 *
 * For each step s of the episode the policy played, the environment is replayed from the
 * task's reset through the actions a_0 .. a_{s-1} and its state saved; every candidate of
 * step s is then tried from that state (load, step) and counted as winning when it ends the
 * episode with a win (SearchQA: the answer candidates whose normalize_answer equals a golden
 * answer). The block gives the task text, the goal atom's name (pv_env_atom_name(0):
 * SearchQA's "answer(GOLD)"), the outcome, and per step: the number of winning candidates
 * of the step's n, the best-ranked winning one with its rank and probability, whether the
 * gold text (the atom name's argument, normalised) occurs as whole words in the
 * observation the step saw (SearchQA only: an atom named "answer(...)"), the chosen action
 * and its probability, and the top 3 candidates (the question's own observation is not
 * searched for the gold text). Then the expert is played from the reset: whether it wins
 * with candidates only (an admissible plan exists), with actions that are no candidates,
 * or not at all, with the policy's rank of each of its actions among that step's candidates
 * (the expert's own episode as the policy's context). A verdict closes the block:
 *   won        the episode was won;
 *   selection  lost, but some step offered a winning candidate (the scorer chose wrong);
 *   search     lost, no step offered one, but the expert wins over the candidates (the
 *              scorer's searches were not the ones that bring a winning candidate);
 *   extraction lost, no admissible plan, but the gold text was in an observation of the
 *              episode (the candidates missed it);
 *   retrieval  lost, no admissible plan and the gold text never appeared.
 * pv_diag_totals_t counts the verdicts over episodes. Costs one replay per step and one
 * environment step per candidate (a SearchQA search candidate runs its FTS5 query).
 */
#ifndef PV_TOOLS_PLAY_DIAGNOSE_H
#define PV_TOOLS_PLAY_DIAGNOSE_H

#include <stdint.h>
#include <stdio.h>

#include "common/env/env.h"
#include "common/policy/policy.h"
#include "common/traj/traj.h"

/* The verdicts, in order, with their names (one list: the enum and the names). */
/* clang-format off */
#define PV_DIAG_VERDICTS(X)         \
    X(WON, "won")                   \
    X(SELECTION, "selection")       \
    X(SEARCH, "search")             \
    X(EXTRACTION, "extraction")     \
    X(RETRIEVAL, "retrieval")

typedef enum pv_diag_verdict {
#define PV_DIAG_ENUM(name, text) PV_DIAG_##name,
    PV_DIAG_VERDICTS(PV_DIAG_ENUM)
#undef PV_DIAG_ENUM
    PV_DIAG_N
} pv_diag_verdict_t;
/* clang-format on */

typedef struct pv_diag_totals {
    uint64_t n[PV_DIAG_N]; /* episodes per verdict */
    /* along the expert's admissible plans, [0] earlier actions, [1] the final one (the
     * answer): actions, how many the policy ranked first, the sum of their ranks */
    uint64_t plan_steps[2], plan_top1[2], plan_rank[2];
} pv_diag_totals_t;

/* Index of the candidate whose text is `text` among cands[0..n), n when none. A step's
 * chosen candidate is found so for every policy kind: a language model's step holds its
 * action's tokens, not a candidate index (pv_traj_step_t.token is one only for a one-token
 * scorer). */
size_t pv_play_cand_index(const char *const *cands, size_t n, const char *text);

/* The verdict's name ("won", "selection", "search", "extraction", "retrieval"). */
const char *pv_diag_verdict_name(pv_diag_verdict_t v);

/* Diagnose trajectory tr (played on env from task t by policy with work; tr's candidates and
 * texts must stay valid, e.g. in an arena) and print its block to out. logp and order are
 * scratch of at least the policy's max_cands entries. env is reset and stepped (its state
 * afterwards is some replayed state). The verdict and, when the expert wins over the
 * candidates, the policy's rank of each expert action (scored in the expert's own
 * episode) are added to *totals (may be NULL). Errors: an environment or policy error (em
 * says which), PV_ERR_NOMEM. */
pv_err_t pv_diagnose_episode(FILE *out, const pv_env_model_t *model, pv_env_t *env,
                             const pv_task_t *t, const pv_policy_t *policy, pv_policy_work_t *work,
                             const pv_traj_t *tr, float *logp, const float **order,
                             pv_diag_totals_t *totals, pv_errmsg_t *em);

/* The closing tally of the verdicts ("diagnosis: won 2, selection 9, ...") and of the
 * ranks along the expert's plans to out. */
void pv_diagnose_totals(FILE *out, const pv_diag_totals_t *t);

#endif
