/* run_plan.h - what a run's algorithm means for every role, decided once from the
 * configuration (DESIGN.md section 1).
 *
 * `algorithm.adv_estimator` names either an outcome estimator the learner runs on its own
 * (grpo, drgrpo, rloo, reinforce_plus_plus_baseline, gigpo, pgpo, spopp, triage, vict) or `prover`:
 * GRPO
 * (Dr.GRPO when algorithm.norm_adv_by_std_in_grpo is false) plus ProVer's verified pivotal-segment
 * credit. That one choice decides, in several processes, what actors record (saved states, which
 * state key), where their groups go (the judge, or straight to the learner), what the judge
 * proposes and what the learner adds. pv_run_plan_from_config() decides it once; every role
 * reads the plan instead of comparing strings.
 *
 * The enums of the choices live here too, because every role names them: the estimators
 * (the learner's learner/advantage.h implements them), the judges (judge/proposer.h) and
 * ProVer's sign and apply rules (learner/prover_credit.h).
 */
#ifndef PV_RUN_PLAN_H
#define PV_RUN_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"

/* ---- outcome estimators (learner/advantage.h) ---------------------------------------- */

typedef enum pv_adv_estimator {
    PV_ADV_GRPO = 0,
    PV_ADV_DRGRPO,
    PV_ADV_RLOO,
    PV_ADV_RPP_BASELINE,
    PV_ADV_GIGPO,
    PV_ADV_PGPO,   /* anchor-state potentials (learner/pgpo.h) */
    PV_ADV_SPOPP,  /* per-task persistent value (learner/spopp.h) */
    PV_ADV_TRIAGE, /* GRPO + role-typed process rewards (learner/triage_adv.h) */
    PV_ADV_VICT,   /* GRPO along the goal atoms' proof edges (learner/vict.h) */
} pv_adv_estimator_t;

/* Parse an estimator name: "grpo", "drgrpo" (also "dr_grpo"), "rloo",
 * "reinforce_plus_plus_baseline" (also "rpp_baseline"), "gigpo", "pgpo", "spopp", "triage", "vict".
 * Errors:
 * PV_ERR_INVAL with the known names in `em`. */
pv_err_t pv_adv_estimator_parse(const char *name, pv_adv_estimator_t *out, pv_errmsg_t *em);

/* The estimator a verl-style configuration means: GRPO with norm_adv_by_std_in_grpo = false
 * is Dr.GRPO (verl's flag); every other estimator is returned unchanged. */
pv_adv_estimator_t pv_adv_estimator_select(pv_adv_estimator_t est, bool norm_adv_by_std_in_grpo);

/* Canonical name of an estimator ("grpo"), "unknown" otherwise. */
const char *pv_adv_estimator_name(pv_adv_estimator_t est);

/* ---- judges (judge/proposer.h) ------------------------------------------------------- */

typedef enum pv_judge_kind {
    PV_JUDGE_CONTRAST = 0,
    PV_JUDGE_RANDOM = 1,
    PV_JUDGE_ORACLE = 2,
    PV_JUDGE_EXHAUSTIVE = 3,
    PV_JUDGE_LLM = 4, /* a model behind an OpenAI-compatible endpoint (judge/llm_judge.h);
                         asynchronous, falls back to contrast */
} pv_judge_kind_t;

/* "contrast" | "random" | "oracle" | "exhaustive" | "llm" -> kind. Errors: PV_ERR_INVAL. */
pv_err_t pv_judge_kind_parse(const char *name, pv_judge_kind_t *out);

/* Name of a kind ("contrast"), "unknown" otherwise. */
const char *pv_judge_kind_name(pv_judge_kind_t kind);

/* ---- ProVer's credit rule (learner/prover_credit.h) ---------------------------------- */

typedef enum pv_prover_sign {
    PV_PROVER_SIGN_POSITIVE = 0, /* max(delta, 0): the paper's rule */
    PV_PROVER_SIGN_BOTH,
} pv_prover_sign_t;

typedef enum pv_prover_apply {
    PV_PROVER_APPLY_ADD = 0, /* A + lambda f(delta) */
    PV_PROVER_APPLY_REPLACE, /* lambda f(delta) */
} pv_prover_apply_t;

typedef struct pv_prover_opts {
    double lambda; /* prover.lambda, default 1.0 */
    pv_prover_sign_t sign;
    pv_prover_apply_t apply;
} pv_prover_opts_t;

/* Parse "positive" | "both" and "add" | "replace". Errors: PV_ERR_INVAL naming the key. */
pv_err_t pv_prover_sign_parse(const char *name, pv_prover_sign_t *out, pv_errmsg_t *em);
pv_err_t pv_prover_apply_parse(const char *name, pv_prover_apply_t *out, pv_errmsg_t *em);

/* ---- the plan -------------------------------------------------------------------------- */

/* What the per-state key of a trajectory holds (pv_traj_t.state_keys). */
typedef enum pv_state_key_kind {
    PV_STATE_KEY_STATE = 0, /* pv_env_state_key: the whole state (GiGPO's state anchors) */
    PV_STATE_KEY_TASK,      /* pv_env_task_key: task facts only (prover.contrast_key = task) */
} pv_state_key_kind_t;

typedef struct pv_run_plan {
    const char *name;             /* algorithm.adv_estimator as configured (static string) */
    pv_adv_estimator_t estimator; /* what the learner computes first (prover: grpo/drgrpo) */
    bool prover;                  /* ProVer credit on top: propose, verify, apply */
    bool triage_llm;              /* estimator triage with algorithm.triage_labels = llm: the
                                     judge's model labels every turn (judge/llm_label.h) */
    bool needs_judge;             /* groups go through the "judge" service (prover, or
                                     triage_llm); else to "learn" */
    const char *group_service;    /* "judge" or "learn": where actors submit groups */
    bool save_states;             /* actors save the environment state before every step */
    pv_state_key_kind_t keys;     /* what actors record as state keys */
    pv_judge_kind_t judge;        /* prover.judge */
    pv_prover_opts_t credit;      /* prover.lambda, sign, apply */
    bool verify_failures;         /* verify segments proposed from failures too: prover.sign =
                                     both (their negative deltas are used) or
                                     prover.verify_failures */
    uint32_t min_successes;       /* eligible groups: prover.min_successes .. */
    uint32_t max_successes;       /* .. prover.max_successes successes, and a failure */
} pv_run_plan_t;

/* Decide the plan of `cfg` (algorithm.triage_labels is read for estimator triage only).
 * Errors: PV_ERR_CONFIG naming the key (an estimator, judge, sign or apply value the config
 * parser let through but no role implements). */
pv_err_t pv_run_plan_from_config(const pv_config_t *cfg, pv_run_plan_t *out, pv_errmsg_t *em);

/* Whether the judge works on a group with `n_success` successes of `n` trajectories (and
 * so whether its saved states are needed beyond the actor): ProVer plans only, and only an
 * eligible group (the paper's protocol: min_successes .. max_successes successes and at
 * least one failure; the other groups get plain GRPO). */
bool pv_run_plan_judges_group(const pv_run_plan_t *plan, size_t n_success, size_t n);

#endif
