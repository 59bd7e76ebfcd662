/* alfworld_gen.h - generated ALFWorld games (internal to common/env).
 *
 * A generated game is an ALFWorld problem built from the ALFRED vocabulary (alfworld_vocab.h):
 * a room of one of ALFRED's four room types, receptacles placed at their own locations, target
 * and distractor objects inside receptacles that can hold them (canContain), and a goal of one
 * of ALFWorld's six task types written as ALFWorld writes it (goal PDDL and the goal_library
 * sentence templates). It is played with the embedded copy of the ALFWorld 0.5.0 domain and
 * grammar. Every generated game is solvable: the targets exist, start outside any destination
 * receptacle, the destination can hold them, and the appliance the task needs is present.
 *
 * Train and test tasks never coincide: a task's (type, object type, destination or lamp type)
 * triple belongs to the test split when its hash is 0 mod 5, else to the train split.
 */
#ifndef PV_ALFWORLD_GEN_H
#define PV_ALFWORLD_GEN_H

#include "common/env/alfworld_int.h"

typedef struct pv_alf_gen_cfg {
    uint32_t n_recep;    /* receptacles in the room; 0 = a room-dependent draw (8..28) */
    uint32_t n_distract; /* distractor objects; 0 = a draw in 8..24 */
    uint32_t type_mask;  /* bit t = ALFWorld task type t (1..6); 0 = all */
} pv_alf_gen_cfg_t;

#define PV_ALF_GEN_MAX_RECEP    60
#define PV_ALF_GEN_MAX_DISTRACT 200

/* Check the knobs and fill defaults (type_mask 0 -> 0x7e). Errors: PV_ERR_INVAL with the knob. */
pv_err_t pv_alf_gen_check(pv_alf_gen_cfg_t *cfg, pv_errmsg_t *em);

/* Generate the problem of `seed` for `split` (0 train, 1 test) into `arena` against `dom` (the
 * embedded domain). *task receives the goal sentence that replaces "UNKNOWN GOAL" in the
 * grammar. Errors: PV_ERR_INVAL (no task of the allowed types exists in the split),
 * PV_ERR_NOMEM. */
pv_err_t pv_alf_generate(pv_arena_t *arena, const pv_alf_domain_t *dom, const pv_alf_gen_cfg_t *cfg,
                         uint64_t seed, int split, pv_alf_problem_t **out, const char **task,
                         pv_errmsg_t *em);

extern const char pv_alf_embedded_domain[];
extern const char pv_alf_embedded_grammar[];

#endif
