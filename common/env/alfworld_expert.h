/* alfworld_expert.h - shortest plans for ALFWorld games (internal to common/env). */
#ifndef PV_ALFWORLD_EXPERT_H
#define PV_ALFWORLD_EXPERT_H

#include "common/env/alfworld_int.h"

typedef struct pv_alf_expert pv_alf_expert_t;

#define PV_ALF_EXPERT_NONE  (-1) /* no plan within the step budget */
#define PV_ALF_EXPERT_LIMIT (-2) /* search budget (nodes) exhausted */

/* Search scratch, grown on demand and kept between calls. Errors: PV_ERR_NOMEM. */
pv_err_t pv_alf_expert_new(pv_alf_expert_t **out);
void pv_alf_expert_destroy(pv_alf_expert_t **ex);

/* Length of a shortest action sequence from state `fd` to the goal, at most `max_len` actions,
 * and its first operator in *first (-1 when the goal holds already). Breadth-first search over
 * the real operators, restricted to actions that can matter (see alfworld_expert.c); ties are
 * broken by the admissible-command order, so plans are deterministic. Returns the length,
 * PV_ALF_EXPERT_NONE or PV_ALF_EXPERT_LIMIT. */
int pv_alf_expert_plan(pv_alf_expert_t *ex, const pv_alf_game_t *g, const uint64_t *fd,
                       uint32_t max_len, int32_t *first);

/* Candidates of goal clause `c`'s variables by arc consistency over the atoms that are true
 * in `fd` or can change: cand holds c->n_vars rows of `ew` words (ew = ceil(n_ent / 64)), bit
 * e of row v set when entity e may bind variable v; `fresh` is ew words of scratch. Used by
 * the expert's pruning and by the atom traces (pv_alf_goal_mask). Allocates nothing. */
void pv_alf_goal_cands(const pv_alf_game_t *g, const uint64_t *fd, const pv_alf_gclause_t *c,
                       uint64_t *cand, uint64_t *fresh, uint32_t ew);

/* Mark the fluent atoms clause `c`'s literals can be about under candidates `cand`
 * (pv_alf_goal_cands): is_goal[atom] |= 1 for a positive literal, 2 for a negated one. */
void pv_alf_goal_marks(const pv_alf_game_t *g, const pv_alf_gclause_t *c, const uint64_t *cand,
                       uint32_t ew, uint8_t *is_goal);

/* Use every operator (no pruning); for tests that check pruning keeps plans optimal. */
void pv_alf_expert_set_exhaustive(pv_alf_expert_t *ex, bool on);

/* Entities the next plans may not touch: `hidden` holds ceil(n_ent / 64) words, bit e set for
 * an entity no operator of a plan may name (the objects a searching agent has not seen), or
 * NULL for none. The bits are read by every later pv_alf_expert_plan until changed; the
 * caller keeps them alive. */
void pv_alf_expert_set_hidden(pv_alf_expert_t *ex, const uint64_t *hidden);

/* The searching expert (env.expert = search): ALFWorld's handcoded expert's way of working
 * (alfworld/agents/expert/handcoded_expert.py), which knows only what the game has shown.
 * What it knows follows from the state (fd and TextWorld's negated facts neg): a location
 * was visited when the agent is or was there (atLocation in fd or in neg); a receptacle is
 * inspected when its location was visited and it is not openable, opened or checked (opened
 * or examined once); an object is seen when the agent holds it or it lies in an inspected
 * receptacle (or inside a seen object). Its action: the first of a shortest plan that names
 * no unseen object (pv_alf_expert_plan with those hidden), when one reaches the goal within
 * max_len actions; otherwise search: open the receptacle here when it is closed and not yet
 * inspected, else go to the next receptacle not inspected, those whose type can contain an
 * unseen object the goal can be about first (the game's canContain facts, ALFWorld's
 * VAL_RECEPTACLE_OBJECTS priors), in command order; when every receptacle is inspected, the
 * privileged plan's action. *op receives the operator. Returns PV_OK, PV_ERR_NOTFOUND (no
 * plan and nothing left to search), PV_ERR_LIMIT (the plan's node budget), PV_ERR_NOMEM. */
pv_err_t pv_alf_search_action(pv_alf_expert_t *ex, const pv_alf_game_t *g, const uint64_t *fd,
                              const uint64_t *neg, uint32_t max_len, int32_t *op);

#endif
