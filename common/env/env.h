/* env.h - the one interface every text environment implements (DESIGN.md section 3).
 *
 * Two objects, after MuJoCo's mjModel/mjData split:
 *   pv_env_model_t  immutable, shared: catalogue, loaded game files, search index,
 *                   generator settings. Built once per process, read by many instances
 *                   (and threads) at once.
 *   pv_env_t        one running episode: a pointer-free state plus scratch buffers for
 *                   the observation and the admissible-action list. Steps allocate nothing.
 *
 * An environment is fully determined by (model, task): the same task gives the same
 * episode. pv_env_save() writes exactly what decides the future into bytes; pv_env_load()
 * restores it on any instance built from an equal model, on any host, so a verifier can
 * continue any step of any trajectory. Saved bytes begin with a magic, the state format
 * version and the environment kind, and pv_env_load() validates everything (the bytes come
 * from the network).
 *
 * Text returned by the instance (observation, task text, admissible actions) is owned by
 * the instance and valid until the next reset/step/load on it.
 */
#ifndef PV_ENV_H
#define PV_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef struct pv_env_model pv_env_model_t;
typedef struct pv_env pv_env_t;

/* Environment families. Values are part of the wire format and saved states: append only. */
typedef enum pv_env_kind {
    PV_ENV_ALFWORLD = 1,
    PV_ENV_WEBSHOP = 2,
    PV_ENV_SEARCHQA = 3,
} pv_env_kind_t;

/* Task splits: training tasks and held-out evaluation tasks never overlap. */
typedef enum pv_env_split {
    PV_SPLIT_TRAIN = 0,
    PV_SPLIT_TEST = 1,
} pv_env_split_t;

/* One environment instance to play: which task of which split, and the seed that fixes any
 * randomness inside the episode (e.g. a generated game's layout). */
typedef struct pv_task {
    uint32_t split;   /* pv_env_split_t */
    uint64_t task_id; /* index into the split (loaded data) or generator id (generated) */
    uint64_t seed;
} pv_task_t;

/* Text limits of the wire (common/wire/wire_schema.h: step.action and rollout_group /
 * verify_job.task_text are at most 65536 bytes; tests/common/wire checks they agree).
 * Loaders skip data items whose task text would exceed PV_ENV_TASK_TEXT_MAX, and the
 * environments never offer an admissible action longer than PV_ENV_ACTION_MAX. */
#define PV_ENV_TASK_TEXT_MAX 65536
#define PV_ENV_ACTION_MAX    65536
/* step.obs and the candidates have no limit of their own: the wire's default for strings,
 * PV_WIRE_DEFAULT_MAX_STR_BYTES. Loaders skip data items whose pages could exceed it. */
#define PV_ENV_OBS_MAX (1u << 20)

/* How to build a model. Strings are borrowed for the duration of pv_env_model_new(). */
/* The expert behind pv_env_expert_action (alfworld; the other families have one expert).
 * PLANNER: the first action of a shortest plan over the whole state (it knows where hidden
 * objects are). SEARCH: ALFWorld's handcoded expert's way, knowing only what the game has
 * shown: it plans over the objects it has seen and otherwise searches the receptacles
 * (alfworld_expert.h, pv_alf_search_action); its demonstrations can be imitated by a policy
 * that sees only the observations. pv_env_expert_plan_len is the planner's in both. */
typedef enum pv_env_expert {
    PV_ENV_EXPERT_PLANNER = 0,
    PV_ENV_EXPERT_SEARCH = 1,
} pv_env_expert_t;

typedef struct pv_env_spec {
    const char *name;      /* "alfworld" | "webshop" | "searchqa" */
    const char *data_path; /* NULL or "" = embedded generator; else benchmark data (file or dir) */
    uint32_t max_steps;    /* episode step limit; 0 = the benchmark's default */
    uint64_t seed;         /* generator seed (catalogue/corpus generation), not the task seed */
    /* Generator knobs, interpreted per family; 0 = the family's default. */
    uint32_t gen_receptacles; /* alfworld: receptacles per room */
    uint32_t gen_distractors; /* alfworld: distractor objects; webshop/searchqa: distractor items */
    uint32_t gen_task_types;  /* alfworld: bit mask of task types (bit i = type i) */
    uint32_t gen_size;        /* webshop: products; searchqa: entities */
    uint32_t top_k;           /* searchqa: passages per search (default 3) */
    pv_env_expert_t expert;   /* alfworld: which expert pv_env_expert_action follows */
} pv_env_spec_t;

/* Atom trace of one step (VICT, issue 17; learner/vict.h reads it). The *goal atoms* of a
 * task are the ground facts its terminal verifier checks: ALFWorld - every ground atom of a
 * positive fluent literal of the PDDL goal under a binding that satisfies the goal's static
 * literals (for "put a hot potato in sinkbasin": isHot(p) and inReceptacle(p, s) for every
 * potato p and sinkbasin s); WebShop - the terms of get_reward, each an atom: the purchase,
 * the type match, the price bound, each goal attribute and each goal option (made by the
 * product click, the option clicks and the buy; webshop.h); SearchQA - one atom, 0, "the
 * answer" (made by a correct answer[...]).
 * A step's record says which goal atoms it made true and which
 * it made false, and its dependency edges: the earlier steps that last established a fact
 * its preconditions needed (ALFWorld: the positive preconditions of the operator applied;
 * a fact true from the start, or made true by a step before the last pv_env_load, has no
 * step and gives no edge; a precondition the step replaces by another value of the same
 * state variable - same predicate and first argument, the agent's location when it moves -
 * is where the step starts from, not what enables it, and gives no edge; WebShop: the product
 * needs the results page that listed it, an option and the purchase the product; SearchQA: a
 * correct answer depends on the searches that first retrieved a passage whose
 * normalize_answer() text holds the normalised answer as whole words, and a search whose
 * query is not in the question on those that first retrieved a passage holding the query).
 * Atom ids are the game's, stable for one task; step indices count from the episode's
 * reset (0 = the first action). Records are fixed-size, so a step fills one without
 * allocating; what exceeds a bound is left out and counted in n_dropped (saturating at
 * 255), never silently. A refused action has an empty record (except WebShop's last step
 * of an episode that ends without a purchase, which unmakes the atoms still true). */
#define PV_ENV_TRACE_ATOMS 48 /* goal atoms made true (and, apart, made false) by one step */
#define PV_ENV_TRACE_DEPS  8  /* dependency edges of one step */
typedef struct pv_env_trace {
    uint8_t n_made, n_unmade, n_deps;
    uint8_t n_dropped;                   /* atoms or edges beyond the bounds, left out */
    uint32_t made[PV_ENV_TRACE_ATOMS];   /* goal atoms this step made true */
    uint32_t unmade[PV_ENV_TRACE_ATOMS]; /* goal atoms this step made false */
    uint32_t deps[PV_ENV_TRACE_DEPS];    /* earlier steps (ascending, distinct, < this step) */
} pv_env_trace_t;

/* What a reset or step returns. `obs` is instance-owned text. */
typedef struct pv_step_result {
    const char *obs;  /* observation text, NUL-terminated */
    float reward;     /* reward of this transition (ALFWorld/SearchQA 0/1, WebShop [0,1]) */
    bool done;        /* episode over (success, failure or step limit) */
    bool won;         /* episode ended in success (reward of a success, e.g. WebShop 1.0) */
    bool admissible;  /* the action was admissible (false: "Nothing happens." or similar) */
    uint32_t n_steps; /* steps taken so far in this episode */
    /* The step's atom trace (instance-owned, valid until the next reset/step/load), or NULL
     * after a reset (every family records traces: ALFWorld, WebShop, SearchQA). */
    const pv_env_trace_t *trace;
} pv_step_result_t;

/* Build a model from `spec`. Reads and validates data files when data_path is given.
 * Errors: PV_ERR_INVAL (unknown name, bad knob), PV_ERR_IO / PV_ERR_DATA (file missing or
 * malformed, a field of the wrong JSON type: `em` names the file, the line and what is
 * wrong), PV_ERR_NOMEM. A data item that is well-formed but too long for the wire (a task
 * text over PV_ENV_TASK_TEXT_MAX, a page over PV_ENV_OBS_MAX) is skipped and counted in
 * pv_env_model_info(), never fatal. */
pv_err_t pv_env_model_new(const pv_env_spec_t *spec, pv_env_model_t **out, pv_errmsg_t *em);

/* What a model holds, for the caller to log (library code prints nothing). Strings are
 * owned by the model. */
typedef struct pv_env_info {
    const char *summary;  /* one line, e.g. "webshop: 1000 products, 6910 goals of 415
                             products (6607 train, 303 test) from DIR" */
    const char *warnings; /* "" or lines, each ending in '\n': data items skipped, with their
                             count and where the first one is ("file:line") */
    uint64_t n_skipped;   /* data items skipped in all */
} pv_env_info_t;

/* Describe what `model` loaded or generated into *out. */
void pv_env_model_info(const pv_env_model_t *model, pv_env_info_t *out);

/* Free a model; clears *model. All instances built from it must be destroyed first. */
void pv_env_model_destroy(pv_env_model_t **model);

/* The family of a model. */
pv_env_kind_t pv_env_model_kind(const pv_env_model_t *model);

/* Number of tasks in a split; UINT64_MAX for generated (unbounded) task sets. */
uint64_t pv_env_model_n_tasks(const pv_env_model_t *model, pv_env_split_t split);

/* Episode step limit in effect. */
uint32_t pv_env_model_max_steps(const pv_env_model_t *model);

/* Create an instance (allocates its buffers once). Errors: PV_ERR_NOMEM. */
pv_err_t pv_env_new(const pv_env_model_t *model, pv_env_t **out);

/* Free an instance; clears *env. NULL-safe. */
void pv_env_destroy(pv_env_t **env);

/* Start the episode `task`. Errors: PV_ERR_RANGE (task_id outside the split),
 * PV_ERR_INVAL. */
pv_err_t pv_env_reset(pv_env_t *self, const pv_task_t *task, pv_step_result_t *out);

/* Apply one action (free text, e.g. "go to sinkbasin 1" or "click[buy now]"). An action
 * that is not admissible is not an error: it yields the benchmark's answer ("Nothing
 * happens.") with out->admissible = false, and still counts as a step.
 * Errors: PV_ERR_STATE (no episode running, or it is done). Allocates nothing. */
pv_err_t pv_env_step(pv_env_t *self, const char *action, pv_step_result_t *out);

/* The goal in words ("put a clean potato in sinkbasin."). */
const char *pv_env_task_text(const pv_env_t *self);

/* The admissible actions of the current state: *actions receives an instance-owned array
 * of `n` NUL-terminated strings, valid until the next reset/step/load. */
pv_err_t pv_env_admissible(pv_env_t *self, const char *const **actions, size_t *n);

/* Upper bound of pv_env_save()'s output for this model (constant per model). */
size_t pv_env_state_max(const pv_env_model_t *model);

/* Write the state into buf[0..cap), the length into *len. Errors: PV_ERR_LIMIT when cap is
 * too small, PV_ERR_STATE when no episode was started. */
pv_err_t pv_env_save(const pv_env_t *self, uint8_t *buf, size_t cap, size_t *len);

/* Restore a state written by pv_env_save() on an equal model. Never trusts the bytes:
 * errors PV_ERR_TRUNCATED, PV_ERR_VERSION (other state format), PV_ERR_INVAL (other
 * environment kind or model), PV_ERR_DATA (inconsistent content), with detail in `em`.
 * On error the instance keeps its previous state. */
pv_err_t pv_env_load(pv_env_t *self, const uint8_t *buf, size_t len, pv_errmsg_t *em);

/* The expert's next action from the current state (a shortest plan), written into
 * buf[0..cap). Errors: PV_ERR_NOTFOUND when the goal is unreachable from here,
 * PV_ERR_STATE when the episode is over, PV_ERR_LIMIT when cap is too small. */
pv_err_t pv_env_expert_action(pv_env_t *self, char *buf, size_t cap);

/* Length of the expert's shortest plan from the current state, or -1 when the goal cannot
 * be reached (the oracle judge's "still solvable within the remaining steps?"). */
int pv_env_expert_plan_len(pv_env_t *self);

/* A 64-bit key of the current state that ignores the step counter: two instances of the
 * same task in the same situation (same world facts, same page and selections, same
 * retrieved passages) get equal keys whatever step they reached it at; different states
 * collide with probability ~2^-64. The contrast judge compares trajectories with it.
 * Hash: XXH3-64 (libxxhash) over the family's state fields. 0 when no episode started. */
uint64_t pv_env_state_key(const pv_env_t *self);

/* A coarser key that keeps only what the task is about, for judges that compare
 * trajectories: ALFWorld - where the objects are, what the agent holds, which objects are
 * clean/hot/cool/on/sliced (not where the agent stands, which receptacles are open, nor the
 * visited/examined/was-in history); WebShop - the product being considered, the options
 * chosen and the outcome (not the search page or result page browsed); SearchQA - the
 * passages retrieved (the same as pv_env_state_key). Two trajectories that differ only in
 * wandering have equal task keys; a pick-up, a placement, a transformation, choosing a
 * product or an option changes it. XXH3-64 like pv_env_state_key; 0 when no episode. */
uint64_t pv_env_task_key(const pv_env_t *self);

/* The benchmark's category of the current task, for per-type results (static text, "" when
 * the family has none or no episode started): ALFWorld - the task type of the game's goal,
 * named as ALFWorld's TASK_TYPES (alfworld/agents/environment/alfred_tw_env.py):
 * "pick_and_place_simple", "look_at_obj_in_light", "pick_clean_then_place_in_recep",
 * "pick_heat_then_place_in_recep", "pick_cool_then_place_in_recep",
 * "pick_two_obj_and_place", or "other" for a goal of none of them; WebShop, SearchQA - "". */
const char *pv_env_task_type(const pv_env_t *self);

/* Name of goal atom `atom` of the current task (an id from a pv_env_trace_t), written into
 * buf[0..cap) NUL-terminated, e.g. "inreceptacle(potato 1, sinkbasin 1)". Errors:
 * PV_ERR_STATE (no episode started), PV_ERR_RANGE (no such atom), PV_ERR_UNSUPPORTED (the
 * family records no traces), PV_ERR_LIMIT (cap too small: buf holds what fits). */
pv_err_t pv_env_atom_name(const pv_env_t *self, uint32_t atom, char *buf, size_t cap);

/* Name of a kind ("alfworld"), or "unknown". */
const char *pv_env_kind_name(pv_env_kind_t kind);

#endif
