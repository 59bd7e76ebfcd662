/* traj.h - a trajectory as every role holds it: what the actor recorded, what the judge
 * reads, what the verifier continues from and what the learner trains on (DESIGN.md
 * section 1).
 *
 * A trajectory keeps its texts once: texts = {o_0, a_0, o_1, a_1, ..., o_T} (observations and
 * action texts, oldest first), and step t's context history is texts[0 .. 2t] (2t + 1
 * entries, ending with o_t; texts[0 .. 2 (first_step + t)] for a continuation) - exactly
 * pv_policy_ctx_t's convention. Each step records the
 * candidates it was offered, the tokens the policy emitted with their behaviour log-probs
 * (bow_mlp: one token, the candidate index; a language model: the action's tokens) and the
 * policy version that acted. Memory is owned by whoever built the trajectory (the rollout
 * and the wire decoder use one arena per group or batch).
 *
 * Glossary (docs/roles.md): a *step* is one environment transition, state t -> state t + 1,
 * caused by action a_t; a *segment* (trajectory i, steps [t0, t1)) is what a judge proposes
 * and a verifier measures from the states before t0 and before t1.
 */
#ifndef PV_TRAJ_TRAJ_H
#define PV_TRAJ_TRAJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/env/env.h"

/* One step (decision) of a trajectory. A one-token step (the candidate scorer) keeps its
 * token in `token` and leaves `tokens` NULL; a step of several tokens (a language model's
 * action) points `tokens` and `token_logprobs` at n_tokens of them. Read either form with
 * pv_step_n_tokens / pv_step_tokens / pv_step_logprobs. */
typedef struct pv_step_rec {
    const char *const *cands; /* (n_cands) admissible actions offered */
    size_t n_cands;
    uint32_t token;              /* a one-token step's token (candidate index) */
    float behav_logprob;         /* log-prob under the behaviour policy: the one token's, or the
                                    sum over the step's tokens */
    uint64_t policy_version;     /* version that acted */
    bool refused;                /* the environment did not accept the action ("Nothing happens.";
                                    pv_step_result_t.admissible false): never a segment boundary */
    const uint32_t *tokens;      /* (n_tokens) the action's tokens, or NULL: one token */
    const float *token_logprobs; /* (n_tokens) their behaviour log-probs */
    size_t n_tokens;
} pv_step_rec_t;

/* The step's tokens, their count and their behaviour log-probs (either form). */
static inline size_t pv_step_n_tokens(const pv_step_rec_t *s)
{
    return s->tokens ? s->n_tokens : 1;
}
static inline const uint32_t *pv_step_tokens(const pv_step_rec_t *s)
{
    return s->tokens ? s->tokens : &s->token;
}
static inline const float *pv_step_logprobs(const pv_step_rec_t *s)
{
    return s->tokens ? s->token_logprobs : &s->behav_logprob;
}

typedef struct pv_traj {
    const char *task_text;
    const char **texts;   /* (2 (first_step + n_steps) + 1) o_0, a_0, ..., o_T */
    pv_step_rec_t *steps; /* (n_steps) */
    size_t n_steps;
    /* Steps before the trajectory's own: 0 for an episode; t for a continuation from the
     * restored state s_t (prover.reuse_continuations), whose texts start with the history
     * o_0, a_0, ..., o_t it was sampled after, so its step s has the context
     * texts[0 .. 2 (first_step + s)] and only its own steps are trained. */
    size_t first_step;
    double reward; /* outcome R */
    bool won;
    int64_t group; /* group id (same task) */
    /* Environment state keys (pv_env_state_key or pv_env_task_key), state_keys[t] before
     * step t, t = 0 .. n_steps; NULL when not recorded. */
    uint64_t *state_keys;
    /* Optional saved environment states (pv_env_save bytes): states[t] (state_len[t] bytes)
     * is the state before step t, t = 0 .. n_steps; NULL when not recorded (a trajectory
     * from the wire may lack single states: states[t] == NULL). */
    const uint8_t **states;
    size_t *state_len;
    /* Atom traces (pv_env_trace_t, env.h): traces[t] is what step t made true or false among
     * the task's goal atoms and which earlier steps it depended on (step indices count from
     * the episode's reset, so a continuation's first is first_step); NULL when the
     * environment records none. VICT's estimator reads them (learner/vict.h). */
    pv_env_trace_t *traces;
    /* TRIAGE roles a judge gave the steps (algorithm.triage_labels = llm; the
     * CREDITED_GROUP's triage_labels): judge_roles[t] a pv_triage_role_t value (0..3) or
     * PV_TRIAGE_ROLE_NONE (common/traj/triage.h); NULL when no judge labelled the trajectory.
     * learner/triage_adv.h reads them. */
    const uint8_t *judge_roles;
} pv_traj_t;

/* Costs, counted apart for rollouts and verification (DESIGN.md section 1). */
typedef struct pv_cost {
    uint64_t env_steps; /* environment transitions */
    uint64_t decisions; /* policy tokens emitted */
    uint64_t skipped;   /* expert demonstrations given up: no plan (pv_episodes_expert) */
} pv_cost_t;

#endif
