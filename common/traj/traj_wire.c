/* traj_wire.c - see traj_wire.h. */
#include "common/traj/traj_wire.h"

#include <stdio.h>
#include <string.h>

pv_err_t pv_traj_to_wire(const pv_traj_t *tr, bool with_states, pv_arena_t *arena,
                         pv_wire_trajectory_t *out, uint64_t *oldest, pv_errmsg_t *em)
{
    if (tr->n_steps > 4096)
        return pv_errf(em, PV_ERR_INVAL, "a trajectory of %zu steps", tr->n_steps);
    pv_wire_step_t *ws = pv_arena_calloc(arena, tr->n_steps ? tr->n_steps : 1, sizeof *ws);
    if (!ws)
        return PV_ERR_NOMEM;
    size_t f = tr->first_step;
    for (size_t t = 0; t < tr->n_steps; t++) {
        const pv_step_rec_t *s = &tr->steps[t];
        bool last = t + 1 == tr->n_steps;
        ws[t] = (pv_wire_step_t){
            .obs = tr->texts[2 * (f + t)],
            .action = tr->texts[2 * (f + t) + 1],
            .candidates = s->cands,
            .n_candidates = (uint32_t)s->n_cands,
            .action_tokens = pv_step_tokens(s),
            .n_action_tokens = (uint32_t)pv_step_n_tokens(s),
            .behaviour_logprobs = pv_step_logprobs(s),
            .n_behaviour_logprobs = (uint32_t)pv_step_n_tokens(s),
            .policy_version = s->policy_version,
            .reward = last ? (float)tr->reward : 0.0f,
            .refused = s->refused,
            .done = last,
            .state_key = tr->state_keys ? tr->state_keys[t] : 0,
        };
        if (with_states && tr->states && tr->states[t])
            ws[t].state = (pv_wire_bin_t){tr->states[t], tr->state_len[t]};
        if (tr->traces) { /* the arrays point into the trajectory's records */
            const pv_env_trace_t *a = &tr->traces[t];
            ws[t].goal_made = a->made;
            ws[t].n_goal_made = a->n_made;
            ws[t].goal_unmade = a->unmade;
            ws[t].n_goal_unmade = a->n_unmade;
            ws[t].deps = a->deps;
            ws[t].n_deps = a->n_deps;
            ws[t].trace_dropped = a->n_dropped;
        }
        if (oldest && s->policy_version < *oldest)
            *oldest = s->policy_version;
    }
    *out = (pv_wire_trajectory_t){
        .reward = (float)tr->reward,
        .success = tr->won,
        .steps = ws,
        .n_steps = (uint32_t)tr->n_steps,
        .final_state_key = tr->state_keys ? tr->state_keys[tr->n_steps] : 0,
        .traced = tr->traces != NULL,
    };
    return PV_OK;
}

pv_err_t pv_traj_group_to_wire(const pv_traj_t *trajs, size_t n, const pv_group_meta_t *meta,
                               bool with_states, pv_arena_t *arena, pv_wire_rollout_group_t *out,
                               pv_errmsg_t *em)
{
    if (n == 0 || n > 1024)
        return pv_errf(em, PV_ERR_INVAL, "a group of %zu trajectories", n);
    pv_wire_trajectory_t *wt = pv_arena_calloc(arena, n, sizeof *wt);
    if (!wt)
        return PV_ERR_NOMEM;
    uint64_t oldest = UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        if (trajs[i].n_steps > 4096)
            return pv_errf(em, PV_ERR_INVAL, "trajectory %zu has %zu steps", i, trajs[i].n_steps);
        pv_err_t rc = pv_traj_to_wire(&trajs[i], with_states, arena, &wt[i], &oldest, em);
        if (rc != PV_OK)
            return rc;
    }
    *out = (pv_wire_rollout_group_t){
        .group_id = meta->group_id,
        .actor_id = meta->actor_id,
        .env = {.kind = (uint8_t)meta->kind, .name = meta->env_name},
        .task = {.split = (uint8_t)meta->task.split,
                 .task_id = meta->task.task_id,
                 .seed = meta->task.seed},
        .task_text = trajs[0].task_text ? trajs[0].task_text : "",
        .policy_version = oldest == UINT64_MAX ? 0 : oldest,
        .created_unix_ms = meta->created_unix_ms,
        .trajectories = wt,
        .n_trajectories = (uint32_t)n,
    };
    return PV_OK;
}

/* A step's tokens against the token space (traj_wire.h). */
static bool s_tokens_ok(const pv_wire_step_t *ws, uint32_t space)
{
    if (ws->n_action_tokens == 0 || ws->n_behaviour_logprobs != ws->n_action_tokens)
        return false;
    if (space == PV_TRAJ_CANDIDATE_TOKENS)
        return ws->n_candidates > 0 && ws->n_action_tokens == 1 &&
               ws->action_tokens[0] < ws->n_candidates;
    for (uint32_t k = 0; k < ws->n_action_tokens; k++)
        if (ws->action_tokens[k] >= space)
            return false;
    return true;
}

/* A step's atom trace from the wire: bounds (the schema's, 48 atoms and 8 edges, equal the
 * record's), and edges to
 * distinct earlier steps in ascending order (step `t` counted from the episode's reset). */
static pv_err_t s_trace_from_wire(const pv_wire_step_t *ws, size_t t, pv_env_trace_t *out)
{
    if (ws->n_goal_made > PV_ENV_TRACE_ATOMS || ws->n_goal_unmade > PV_ENV_TRACE_ATOMS ||
        ws->n_deps > PV_ENV_TRACE_DEPS)
        return PV_ERR_DATA;
    for (uint32_t k = 0; k < ws->n_deps; k++)
        if (ws->deps[k] >= t || (k && ws->deps[k] <= ws->deps[k - 1]))
            return PV_ERR_DATA;
    *out = (pv_env_trace_t){.n_made = (uint8_t)ws->n_goal_made,
                            .n_unmade = (uint8_t)ws->n_goal_unmade,
                            .n_deps = (uint8_t)ws->n_deps,
                            .n_dropped = (uint8_t)ws->trace_dropped};
    /* an absent array decodes as NULL with count 0: copy only what is there */
    for (uint32_t k = 0; k < ws->n_goal_made; k++)
        out->made[k] = ws->goal_made[k];
    for (uint32_t k = 0; k < ws->n_goal_unmade; k++)
        out->unmade[k] = ws->goal_unmade[k];
    for (uint32_t k = 0; k < ws->n_deps; k++)
        out->deps[k] = ws->deps[k];
    return PV_OK;
}

pv_err_t pv_traj_from_wire(const pv_wire_trajectory_t *wt, const char *task_text,
                           const char *const *history, size_t first_step, int64_t group,
                           bool with_states, uint32_t token_space, pv_arena_t *arena, pv_traj_t *tr,
                           const char *what, pv_errmsg_t *em)
{
    size_t ns = wt->n_steps, f = history ? first_step : 0;
    pv_err_t rc;
    memset(tr, 0, sizeof *tr);
    tr->task_text = task_text;
    tr->n_steps = ns;
    tr->first_step = f;
    tr->reward = wt->reward;
    tr->won = wt->success;
    tr->group = group;
    tr->texts = pv_arena_calloc(arena, 2 * (f + ns) + 1, sizeof *tr->texts);
    tr->steps = pv_arena_calloc(arena, ns ? ns : 1, sizeof *tr->steps);
    tr->state_keys = pv_arena_calloc(arena, ns + 1, sizeof *tr->state_keys);
    if (!tr->texts || !tr->steps || !tr->state_keys)
        return PV_ERR_NOMEM;
    if (f)
        memcpy(tr->texts, history, 2 * f * sizeof *tr->texts); /* o_0, a_0, ..., a_{t-1} */
    if (wt->traced && !(tr->traces = pv_arena_calloc(arena, ns ? ns : 1, sizeof *tr->traces)))
        return PV_ERR_NOMEM;
    if (with_states) {
        tr->states = pv_arena_calloc(arena, ns + 1, sizeof *tr->states);
        tr->state_len = pv_arena_calloc(arena, ns + 1, sizeof *tr->state_len);
        if (!tr->states || !tr->state_len)
            return PV_ERR_NOMEM;
    }
    for (size_t t = 0; t < ns; t++) {
        const pv_wire_step_t *ws = &wt->steps[t];
        if (!s_tokens_ok(ws, token_space)) {
            if (token_space == PV_TRAJ_CANDIDATE_TOKENS)
                return pv_errf(em, PV_ERR_DATA,
                               "%s step %zu: %u candidates, %u tokens (first %u): expected one "
                               "token naming a candidate",
                               what, t, ws->n_candidates, ws->n_action_tokens,
                               ws->n_action_tokens ? ws->action_tokens[0] : 0u);
            return pv_errf(em, PV_ERR_DATA,
                           "%s step %zu: %u tokens, %u log-probs: expected 1 or more tokens, "
                           "each below the vocabulary's %u",
                           what, t, ws->n_action_tokens, ws->n_behaviour_logprobs, token_space);
        }
        tr->texts[2 * (f + t)] = ws->obs;
        tr->texts[2 * (f + t) + 1] = ws->action;
        float sum = 0.0f;
        for (uint32_t k = 0; k < ws->n_behaviour_logprobs; k++)
            sum += ws->behaviour_logprobs[k];
        tr->steps[t] = (pv_step_rec_t){
            .cands = ws->candidates,
            .n_cands = ws->n_candidates,
            .token = ws->action_tokens[0],
            .behav_logprob =
                token_space == PV_TRAJ_CANDIDATE_TOKENS ? ws->behaviour_logprobs[0] : sum,
            .policy_version = ws->policy_version,
            .refused = ws->refused,
        };
        if (token_space != PV_TRAJ_CANDIDATE_TOKENS) {
            tr->steps[t].tokens = ws->action_tokens;
            tr->steps[t].token_logprobs = ws->behaviour_logprobs;
            tr->steps[t].n_tokens = ws->n_action_tokens;
        }
        tr->state_keys[t] = ws->state_key;
        if (tr->traces && (rc = s_trace_from_wire(ws, f + t, &tr->traces[t])) != PV_OK)
            return pv_errf(
                em, rc,
                "%s step %zu: atom trace of %u goal atoms made, %u unmade, %u edges "
                "(at most %d atoms and %d edges, edges to earlier steps only, ascending)",
                what, t, ws->n_goal_made, ws->n_goal_unmade, ws->n_deps, PV_ENV_TRACE_ATOMS,
                PV_ENV_TRACE_DEPS);
        if (with_states && ws->state.len) {
            tr->states[t] = ws->state.ptr;
            tr->state_len[t] = ws->state.len;
        }
    }
    /* the observation after the last action is not on the wire: an empty text keeps
     * texts[2 (first_step + n_steps)] defined */
    tr->texts[2 * (f + ns)] = "";
    tr->state_keys[ns] = wt->final_state_key;
    return PV_OK;
}

pv_err_t pv_traj_group_from_wire(const pv_wire_rollout_group_t *g, bool with_states,
                                 pv_arena_t *arena, pv_traj_t **out, size_t *n, pv_errmsg_t *em)
{
    return pv_traj_group_from_wire_ts(g, with_states, PV_TRAJ_CANDIDATE_TOKENS, arena, out, n, em);
}

pv_err_t pv_traj_group_from_wire_ts(const pv_wire_rollout_group_t *g, bool with_states,
                                    uint32_t token_space, pv_arena_t *arena, pv_traj_t **out,
                                    size_t *n, pv_errmsg_t *em)
{
    size_t nt = g->n_trajectories;
    pv_traj_t *trajs = pv_arena_calloc(arena, nt ? nt : 1, sizeof *trajs);
    if (!trajs)
        return PV_ERR_NOMEM;
    for (size_t i = 0; i < nt; i++) {
        char what[64];
        snprintf(what, sizeof what, "group %llu trajectory %zu", (unsigned long long)g->group_id,
                 i);
        pv_err_t rc = pv_traj_from_wire(&g->trajectories[i], g->task_text, NULL, 0,
                                        (int64_t)(g->group_id & (uint64_t)INT64_MAX), with_states,
                                        token_space, arena, &trajs[i], what, em);
        if (rc != PV_OK)
            return rc;
    }
    *out = trajs;
    *n = nt;
    return PV_OK;
}
