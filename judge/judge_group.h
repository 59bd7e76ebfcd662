/* judge_group.h - prover-judge's work on one rollout group, as a state machine without
 * sockets (DESIGN.md sections 1 and 2; the distributed form of learner/local_loop.c's
 * propose-then-verify step).
 *
 *   open      decode-level checks of the group (pv_traj_group_from_wire); with triage_llm
 *             (algorithm.triage_labels = llm) the group then awaits the model's TRIAGE
 *             roles for every turn (pv_jgroup_labels_done) and has no proposals; else, for the
 *             prover estimator and a group with both a success and a failure, proposals
 *             (judge/proposer.h: contrast, random, oracle, exhaustive; max_segments), the
 *             sign filter (segments proposed from failures are expected to hurt: with
 *             prover.sign = positive their delta is unused, so they are not verified
 *             unless verify_failures) and the budget: a side starting at step t costs an
 *             estimated k * (max_steps - t) environment steps; a segment whose two sides
 *             would take the group past verify_budget is dropped (and counted).
 *             Each verified segment needs one VERIFY_JOB per side: side 0 restores the
 *             state before step t0, side 1 the state before step t1, except t1 == n_steps
 *             (the end of the episode: its success probability is the outcome, no job).
 *   job_msg   the VERIFY_JOB of job j (state bytes, history o_0, a_0, ..., o_t, k, the
 *             newest policy version of the group, seed from job_ids.h).
 *   result /  record a VERIFY_RESULT, or the failure of a job (a completion with ok =
 *   fail /    false, a malformed or mismatched result, the group's deadline): a segment is
 *   expire    verified only when both its sides are.
 *             With measure_precision, the oracle labels every proposal (judge/precision.h).
 *   credited  the CREDITED_GROUP for the learner: the group without saved states, every
 *             proposed segment with p_before = successes / k of side 0, p_after of side 1
 *             (or the outcome), delta = p_after - p_before and its `verified` flag, the
 *             proposal count, the verification cost summed from the results, and the
 *             oracle's precision counts.
 * Everything the group points to lives in the caller's arena and the payload bytes the
 * group was decoded from; keep both until the CREDITED_GROUP is encoded.
 */
#ifndef PV_JUDGE_GROUP_H
#define PV_JUDGE_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/config.h"
#include "common/env/env.h"
#include "common/err.h"
#include "common/rng.h"
#include "common/run_plan.h"
#include "common/wire/wire.h"
#include "judge/proposer.h"
#include "common/traj/traj.h"

typedef struct pv_jg_opts {
    bool prover;                      /* algorithm.adv_estimator == "prover": propose and verify */
    pv_judge_kind_t judge;            /* prover.judge */
    uint32_t k;                       /* prover.k: continuations per side, 1..4096 */
    uint32_t max_segments;            /* prover.max_segments */
    uint32_t max_turns;               /* prover.max_segment_turns; 0 = the paper's 4 */
    uint32_t min_successes;           /* eligible groups (prover.min_successes); 0 = 1 */
    uint32_t max_successes;           /* ... (prover.max_successes); 0 = no bound but one failure */
    pv_contrast_rule_t contrast_rule; /* prover.contrast_rule */
    uint64_t verify_budget;           /* prover.verify_budget: estimated env steps; 0 = unlimited */
    bool verify_failures;             /* verify segments proposed from failures (expect < 0) */
    uint32_t max_steps;       /* episode step limit: continuation budget and cost estimate */
    uint64_t run_seed;        /* run.seed, for the proposals' and continuations' seeds */
    uint64_t timeout_ms;      /* the group's verification deadline after open */
    bool measure_precision;   /* prover.measure_precision: the oracle labels every proposal */
    bool reuse_continuations; /* prover.reuse_continuations: jobs send their continuations
                                 back, the CREDITED_GROUP carries them to the learner */
    pv_env_t *env;            /* oracle judge or measure_precision: an instance of the run's
                                 environment, to restore saved states and ask the expert's plan
                                 length; else NULL */
    uint32_t token_space;     /* what a step's tokens must be (common/traj/traj_wire.h): the
                                 candidate index, or any ids (policy.kind = transformer) */
    bool triage_llm;          /* algorithm.triage_labels = llm: every group waits for the
                                 model's TRIAGE roles (judge/llm_label.h), no proposals */
} pv_jg_opts_t;

/* The options of a run: the plan's (prover, judge, verify_failures, min/max successes),
 * prover.k, max_segments, max_segment_turns, contrast_rule, verify_budget,
 * verify_timeout_ms, measure_precision, run.seed, the token space of policy.kind; max_steps = the
 * environment's episode limit; `env` (borrowed) kept only when the oracle needs it (judge
 * oracle or measure_precision). */
pv_jg_opts_t *pv_jg_opts_from_config(const pv_run_plan_t *plan, const pv_config_t *cfg,
                                     uint32_t max_steps, pv_env_t *env, pv_jg_opts_t *out);

/* State of one side of a segment. */
typedef enum pv_jg_side_state {
    PV_JG_PENDING = 0,  /* its job is out, or waiting to be sent */
    PV_JG_DONE = 1,     /* a result was recorded */
    PV_JG_FAILED = 2,   /* the job failed, timed out, or its state was missing */
    PV_JG_TERMINAL = 3, /* side 1 at the end of the episode: the outcome is known */
    PV_JG_NONE = 4,     /* the segment is not verified (budget or sign) */
} pv_jg_side_state_t;

typedef struct pv_jg_seg {
    pv_segment_t prop;
    uint8_t side[2];       /* pv_jg_side_state_t */
    uint32_t successes[2]; /* of the continuations run from each side */
    uint32_t k[2];         /* continuations run */
} pv_jg_seg_t;

/* One VERIFY_JOB: state t of trajectory traj, for side `side` of segment `seg`. */
typedef struct pv_jg_job {
    uint32_t seg;
    uint8_t side;
    uint32_t traj, t;
    bool resolved;
    const pv_wire_trajectory_t *conts; /* reuse_continuations: the result's continuations
                                          (borrowed: keep the decoded result alive) */
    uint32_t n_conts;
} pv_jg_job_t;

typedef struct pv_jg_stats {
    uint32_t proposals;      /* segments the judge proposed */
    uint32_t dropped_budget; /* proposals not verified: over verify_budget */
    uint32_t skipped_sign;   /* proposals not verified: from a failure, sign = positive */
    uint32_t missing_states; /* proposals not verified: a needed state was not sent */
    uint32_t failed_jobs;    /* jobs that ended without a usable result */
    uint32_t bad_results;    /* results that did not match their job (counted in failed) */
    uint64_t est_steps;      /* estimated cost of the jobs sent (the budgeted quantity) */
    uint64_t env_steps;      /* verification cost reported by the verifiers */
    uint64_t policy_tokens;
    uint32_t precision_samples; /* proposals the oracle labelled (measure_precision) */
    uint32_t precision_hits;    /* ... of which pivotal (judge/precision.h) */
} pv_jg_stats_t;

typedef struct pv_jgroup {
    const pv_wire_rollout_group_t *wire; /* the decoded group (borrowed) */
    pv_traj_t *trajs;                    /* (n_trajs) with saved states when prover */
    size_t n_trajs;
    bool mixed;              /* at least one success and one failure */
    bool eligible;           /* judged under the protocol (min..max successes, a failure) */
    bool awaiting;           /* prover.judge = llm: the proposals come from pv_jgroup_adopt */
    pv_traj_view_t *views;   /* (n_trajs) what the proposer read (kept for adopt) */
    pv_propose_opts_t po;    /* how it proposes */
    uint64_t newest_version; /* newest policy version that acted in the group */
    pv_jg_seg_t *segs;       /* (n_segs) every proposal, in the judge's order */
    size_t n_segs;
    pv_jg_job_t *jobs; /* (n_jobs) */
    size_t n_jobs;
    size_t n_resolved;    /* jobs with a result or a failure */
    uint32_t k;           /* continuations per side (o->k) */
    uint64_t deadline_ms; /* open's now_ms + timeout_ms */
    pv_jg_stats_t st;
    /* triage_llm: the model's roles of every turn, trajectory after trajectory (sum of
     * n_steps, in the arena; PV_TRIAGE_ROLE_NONE = not labelled), written by the LLM judge
     * while g->awaiting; `labelled` of them carry a role once pv_jgroup_labels_done ran */
    uint8_t *roles;
    size_t n_roles;
    bool labelling; /* triage_llm: the group waits for (or got) the model's labels */
    size_t labelled;
} pv_jgroup_t;

/* Open the work on decoded group `wire` at time now_ms (any monotonic clock in ms): build
 * the trajectories (with states when o->prover), propose, filter and budget segments, and
 * lay out the jobs (none for a group without contrast or another estimator). The proposer's
 * RNG (contrast's ties, random's steps) is seeded from pv_judge_seed(o->run_seed, group_id),
 * so a group gets the same proposals whichever judge opens it, in whatever order, and in
 * prover-train-local's in-process path. Everything goes to `arena`.
 * Errors: PV_ERR_DATA (a malformed step: the group is refused, detail in `em`),
 * PV_ERR_INVAL (oracle or measure_precision without o->env), PV_ERR_NOMEM (arena full). */
pv_err_t pv_jgroup_open(pv_jgroup_t *g, const pv_jg_opts_t *o, const pv_wire_rollout_group_t *wire,
                        uint64_t now_ms, pv_arena_t *arena, pv_errmsg_t *em);

/* An asynchronous judge's proposals for a group opened with g->awaiting (prover.judge =
 * llm, judge/llm_judge.h): at most max_segments of segs[0..n) become the group's proposals,
 * then as open does for the other judges: the oracle's precision labels, the sign filter,
 * the budget and the jobs. Errors: PV_ERR_STATE (the group awaits nothing), PV_ERR_RANGE (a
 * segment outside its trajectory), PV_ERR_NOMEM; precision errors as open's. */
pv_err_t pv_jgroup_adopt(pv_jgroup_t *g, const pv_jg_opts_t *o, const pv_segment_t *segs, size_t n,
                         pv_arena_t *arena);

/* A group opened with o->triage_llm (g->labelling, g->awaiting) got its labels: the LLM judge
 * wrote g->roles (llm_judge.h, pv_llm_group_t.roles); `labelled` of them carry a role (0 after
 * a fallback). The group is then done (no jobs). Errors: PV_ERR_STATE (the group awaits no
 * labels). */
pv_err_t pv_jgroup_labels_done(pv_jgroup_t *g, size_t labelled);

/* The VERIFY_JOB of job j (< g->n_jobs) under id job_id. The message borrows the group's
 * strings, history and state bytes. */
void pv_jgroup_job_msg(const pv_jgroup_t *g, const pv_jg_opts_t *o, size_t j, uint64_t job_id,
                       pv_wire_verify_job_t *out);

/* Record the result of job j, sent under id job_id (with reuse_continuations its
 * continuations are borrowed: decode the result into memory that lives as long as the
 * group, e.g. the group's arena). A result that does not name the job
 * (job_id, group_id, segment_id, side) or ran no continuation fails the job instead
 * (counted in bad_results). Errors: PV_ERR_STATE (job already resolved: a late or
 * duplicate result, ignored), PV_ERR_DATA (a mismatched result), PV_ERR_RANGE (j out of
 * range). */
pv_err_t pv_jgroup_result(pv_jgroup_t *g, size_t j, uint64_t job_id,
                          const pv_wire_verify_result_t *r);

/* Job j ended without a result (its completion was not ok). Errors: PV_ERR_STATE (already
 * resolved), PV_ERR_RANGE. */
pv_err_t pv_jgroup_fail(pv_jgroup_t *g, size_t j);

/* At now_ms past the deadline, fail every unresolved job; returns how many it failed. */
size_t pv_jgroup_expire(pv_jgroup_t *g, uint64_t now_ms);

/* True when every job has a result or a failure (at once for a group without jobs; never
 * while the group awaits its proposals). */
bool pv_jgroup_done(const pv_jgroup_t *g);

/* Estimates of segment i: p_before, p_after, delta and whether both sides were verified. */
void pv_jgroup_estimate(const pv_jgroup_t *g, size_t i, float *p_before, float *p_after,
                        bool *verified);

/* The CREDITED_GROUP (judge name e.g. "contrast"; the group without its saved states; with
 * reuse_continuations one continuation_group per job whose result carried continuations;
 * for a labelling group with labels, triage_labels: one turn_roles per trajectory with at
 * least one labelled turn, PV_TRIAGE_ROLE_NONE (255) for its turns without a label).
 * Arrays go to `arena`; strings and texts are borrowed. Errors: PV_ERR_NOMEM. */
pv_err_t pv_jgroup_credited(const pv_jgroup_t *g, const char *judge_name, pv_arena_t *arena,
                            pv_wire_credited_group_t *out);

#endif
