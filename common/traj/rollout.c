/* rollout.c - episodes and continuations with the policy; see rollout.h. */
#include "common/traj/rollout.h"

#include <stdlib.h>
#include <string.h>

/* Save the environment's state into the arena as state t of `tr`. */
static pv_err_t s_save(pv_env_t *env, size_t state_max, pv_arena_t *arena, pv_traj_t *tr, size_t t,
                       pv_errmsg_t *em)
{
    uint8_t *buf = pv_arena_alloc(arena, state_max, 1);
    if (!buf)
        return pv_errf(em, PV_ERR_NOMEM, "rollout: arena full saving a state");
    pv_err_t rc = pv_env_save(env, buf, state_max, &tr->state_len[t]);
    if (rc != PV_OK)
        return pv_errf(em, rc, "rollout: pv_env_save at step %zu: %s", t, pv_strerror(rc));
    tr->states[t] = buf;
    return PV_OK;
}

/* The key recorded per state (rollout.h: task_keys). */
static uint64_t s_key(const pv_env_t *env, bool task_keys)
{
    return task_keys ? pv_env_task_key(env) : pv_env_state_key(env);
}

/* One episode of a lockstep batch: its environment, stream and trajectory (texts already
 * hold o_t at index 2 n_steps), and the candidates of its current decision. */
typedef struct s_lane {
    pv_env_t *env;
    pv_rng_t *rng; /* NULL = greedy */
    pv_traj_t *tr;
    bool *won;
    bool live;
    const char **cands;
    size_t n;
} s_lane_t;

/* What every lane of a batch shares. */
typedef struct s_play_opts {
    size_t limit; /* bounds n_steps */
    bool save, task_keys;
    size_t state_max;
} s_play_opts_t;

/* The admissible actions of lane l's current state, copied into the arena. */
static pv_err_t s_cands(s_lane_t *l, pv_arena_t *arena, pv_errmsg_t *em)
{
    const char *const *adm = NULL;
    size_t n = 0;
    pv_err_t rc = pv_env_admissible(l->env, &adm, &n);
    if (rc != PV_OK || n == 0)
        return pv_errf(em, rc != PV_OK ? rc : PV_ERR_STATE,
                       "rollout: no admissible action at step %zu", l->tr->n_steps);
    if (!(l->cands = pv_arena_alloc(arena, n * sizeof *l->cands, 0)))
        return pv_errf(em, PV_ERR_NOMEM, "rollout: arena full");
    for (size_t i = 0; i < n; i++)
        if (!(l->cands[i] = pv_arena_strdup(arena, adm[i])))
            return pv_errf(em, PV_ERR_NOMEM, "rollout: arena full");
    l->n = n;
    return PV_OK;
}

/* Record the policy's decision `st` in lane l and step its environment; the lane stops
 * being live when the episode ends or reaches the limit. */
static pv_err_t s_apply(s_lane_t *l, const pv_policy_t *p, const pv_policy_step_t *st,
                        const s_play_opts_t *o, pv_arena_t *arena, pv_cost_t *cost, pv_errmsg_t *em)
{
    pv_traj_t *tr = l->tr;
    size_t s = tr->n_steps, n = l->n;
    const char **cands = l->cands;
    cost->decisions += st->n_tokens;
    tr->steps[s] = (pv_step_rec_t){.cands = cands,
                                   .n_cands = n,
                                   .token = st->tokens[0],
                                   .behav_logprob = st->logprob,
                                   .policy_version = pv_policy_version(p)};
    const char *action = st->choice < n ? cands[st->choice] : NULL;
    if (pv_policy_token_space(p) > 0) { /* a language model: its tokens and its text */
        uint32_t *tk = pv_arena_alloc(arena, st->n_tokens * sizeof *tk, 0);
        float *lp = pv_arena_alloc(arena, st->n_tokens * sizeof *lp, 0);
        if (!tk || !lp || (!action && !(action = pv_arena_strdup(arena, st->action))))
            return pv_errf(em, PV_ERR_NOMEM, "rollout: arena full");
        memcpy(tk, st->tokens, st->n_tokens * sizeof *tk);
        memcpy(lp, st->token_logprobs, st->n_tokens * sizeof *lp);
        tr->steps[s].tokens = tk;
        tr->steps[s].token_logprobs = lp;
        tr->steps[s].n_tokens = st->n_tokens;
    }
    if (!action)
        return pv_errf(em, PV_ERR_STATE, "rollout: the policy chose no action at step %zu", s);
    pv_step_result_t r;
    pv_err_t rc = pv_env_step(l->env, action, &r);
    if (rc != PV_OK)
        return pv_errf(em, rc, "rollout: pv_env_step('%s'): %s", action, pv_strerror(rc));
    cost->env_steps++;
    tr->steps[s].refused = !r.admissible;
    if (r.trace && !tr->traces &&
        !(tr->traces = pv_arena_calloc(arena, o->limit ? o->limit : 1, sizeof *tr->traces)))
        return pv_errf(em, PV_ERR_NOMEM, "rollout: arena full");
    if (tr->traces)
        tr->traces[s] = r.trace ? *r.trace : (pv_env_trace_t){0};
    tr->reward += r.reward;
    tr->texts[2 * s + 1] = action;
    if (!(tr->texts[2 * s + 2] = pv_arena_strdup(arena, r.obs)))
        return pv_errf(em, PV_ERR_NOMEM, "rollout: arena full");
    tr->n_steps++;
    tr->state_keys[tr->n_steps] = s_key(l->env, o->task_keys);
    if (o->save && (rc = s_save(l->env, o->state_max, arena, tr, tr->n_steps, em)) != PV_OK)
        return rc;
    if (r.done) {
        *l->won = r.won;
        l->live = false;
    }
    if (tr->n_steps >= o->limit)
        l->live = false;
    return PV_OK;
}

/* Play the B lanes from their environments' current states in lockstep: each round, every
 * live lane's decision (one pv_policy_act_batch when the policy batches and more than one
 * lane is live; else one pv_policy_act per lane, each applied before the next is made),
 * then every environment's step. */
static pv_err_t s_play(s_lane_t *lanes, size_t B, const pv_policy_t *p, pv_policy_work_t *work,
                       const s_play_opts_t *o, pv_arena_t *arena, pv_cost_t *cost, pv_errmsg_t *em)
{
    pv_policy_ctx_t ctxs[PV_POLICY_MAX_BATCH];
    const char *const *cands[PV_POLICY_MAX_BATCH];
    size_t n[PV_POLICY_MAX_BATCH], idx[PV_POLICY_MAX_BATCH];
    pv_rng_t *rngs[PV_POLICY_MAX_BATCH];
    pv_policy_step_t st[PV_POLICY_MAX_BATCH];
    if (B > PV_POLICY_MAX_BATCH)
        return pv_errf(em, PV_ERR_INVAL, "rollout: %zu episodes at once (at most %d)", B,
                       PV_POLICY_MAX_BATCH);
    for (size_t b = 0; b < B; b++) {
        *lanes[b].won = false;
        lanes[b].live = lanes[b].tr->n_steps < o->limit;
    }
    for (;;) {
        size_t nb = 0;
        for (size_t b = 0; b < B; b++) {
            s_lane_t *l = &lanes[b];
            if (!l->live)
                continue;
            pv_err_t rc = s_cands(l, arena, em);
            if (rc != PV_OK)
                return rc;
            ctxs[nb] = (pv_policy_ctx_t){l->tr->task_text, l->tr->texts, 2 * l->tr->n_steps + 1};
            cands[nb] = l->cands;
            n[nb] = l->n;
            rngs[nb] = l->rng;
            idx[nb++] = b;
        }
        if (nb == 0)
            return PV_OK;
        bool batch = nb > 1 && pv_policy_batches(p);
        if (batch) {
            pv_err_t rc = pv_policy_act_batch(p, ctxs, cands, n, rngs, nb, work, st);
            if (rc != PV_OK)
                return pv_errf(em, rc, "rollout: policy at step %zu of %zu episodes: %s",
                               lanes[idx[0]].tr->n_steps, nb, pv_strerror(rc));
        }
        for (size_t i = 0; i < nb; i++) {
            s_lane_t *l = &lanes[idx[i]];
            if (!batch) {
                pv_err_t rc = pv_policy_act(p, &ctxs[i], cands[i], n[i], rngs[i], work, &st[i]);
                if (rc != PV_OK)
                    return pv_errf(em, rc, "rollout: policy at step %zu (%zu candidates): %s",
                                   l->tr->n_steps, n[i], pv_strerror(rc));
            }
            pv_err_t rc = s_apply(l, p, &st[i], o, arena, cost, em);
            if (rc != PV_OK)
                return rc;
        }
    }
}

/* Arrays for a trajectory of at most `limit` steps. */
static pv_err_t s_alloc(pv_arena_t *arena, size_t limit, bool save, pv_traj_t *tr, pv_errmsg_t *em)
{
    tr->texts = pv_arena_calloc(arena, 2 * limit + 1, sizeof *tr->texts);
    tr->steps = pv_arena_calloc(arena, limit ? limit : 1, sizeof *tr->steps);
    tr->state_keys = pv_arena_calloc(arena, limit + 1, sizeof *tr->state_keys);
    if (save) {
        tr->states = pv_arena_calloc(arena, limit + 1, sizeof *tr->states);
        tr->state_len = pv_arena_calloc(arena, limit + 1, sizeof *tr->state_len);
    }
    if (!tr->texts || !tr->steps || !tr->state_keys || (save && (!tr->states || !tr->state_len)))
        return pv_errf(em, PV_ERR_NOMEM, "rollout: arena full");
    return PV_OK;
}

static size_t s_limit(const pv_rollout_opts_t *opts, const pv_env_model_t *m)
{
    uint32_t lim = pv_env_model_max_steps(m);
    return opts->max_steps && opts->max_steps < lim ? opts->max_steps : lim;
}

pv_err_t pv_rollout_episodes(const pv_env_model_t *model, pv_env_t *const *envs, size_t n,
                             const pv_task_t *task, const pv_policy_t *p, pv_policy_work_t *work,
                             pv_rng_t *const *rngs, const pv_rollout_opts_t *opts, int64_t group,
                             pv_arena_t *arena, pv_traj_t *out, pv_cost_t *cost, pv_errmsg_t *em)
{
    if (n == 0 || n > PV_ROLLOUT_MAX_BATCH)
        return pv_errf(em, PV_ERR_INVAL, "rollout: %zu episodes at once (1 to %d)", n,
                       PV_ROLLOUT_MAX_BATCH);
    size_t limit = s_limit(opts, model), state_max = pv_env_state_max(model);
    s_lane_t lanes[PV_ROLLOUT_MAX_BATCH];
    for (size_t i = 0; i < n; i++) {
        pv_env_t *env = envs[i];
        pv_traj_t *tr = &out[i];
        memset(tr, 0, sizeof *tr);
        tr->group = group;
        pv_err_t rc = s_alloc(arena, limit, opts->save_states, tr, em);
        if (rc != PV_OK)
            return rc;
        pv_step_result_t r;
        if ((rc = pv_env_reset(env, task, &r)) != PV_OK)
            return pv_errf(em, rc, "rollout: reset of task %llu: %s",
                           (unsigned long long)task->task_id, pv_strerror(rc));
        tr->task_text = pv_arena_strdup(arena, pv_env_task_text(env));
        tr->texts[0] = pv_arena_strdup(arena, r.obs);
        tr->state_keys[0] = s_key(env, opts->task_keys);
        if (!tr->task_text || !tr->texts[0])
            return pv_errf(em, PV_ERR_NOMEM, "rollout: arena full");
        if (opts->save_states && (rc = s_save(env, state_max, arena, tr, 0, em)) != PV_OK)
            return rc;
        lanes[i] = (s_lane_t){.env = env, .rng = rngs ? rngs[i] : NULL, .tr = tr, .won = &tr->won};
    }
    s_play_opts_t o = {.limit = limit,
                       .save = opts->save_states,
                       .task_keys = opts->task_keys,
                       .state_max = state_max};
    return s_play(lanes, n, p, work, &o, arena, cost, em);
}

pv_err_t pv_rollout_episode(const pv_env_model_t *model, pv_env_t *env, const pv_task_t *task,
                            const pv_policy_t *p, pv_policy_work_t *work, pv_rng_t *rng,
                            const pv_rollout_opts_t *opts, int64_t group, pv_arena_t *arena,
                            pv_traj_t *out, pv_cost_t *cost, pv_errmsg_t *em)
{
    return pv_rollout_episodes(model, &env, 1, task, p, work, &rng, opts, group, arena, out, cost,
                               em);
}

pv_err_t pv_rollout_from_state_n(const pv_env_model_t *model, pv_env_t *const *envs, size_t n,
                                 const pv_rollout_start_t *start, const pv_policy_t *p,
                                 pv_policy_work_t *work, pv_rng_t *const *rngs,
                                 const pv_rollout_opts_t *opts, pv_arena_t *arena, bool *won,
                                 double *reward, pv_cost_t *cost, pv_traj_t *out, pv_errmsg_t *em)
{
    if (n == 0 || n > PV_ROLLOUT_MAX_BATCH)
        return pv_errf(em, PV_ERR_INVAL, "continue: %zu continuations at once (1 to %d)", n,
                       PV_ROLLOUT_MAX_BATCH);
    for (size_t i = 0; i < n; i++) {
        won[i] = false;
        if (reward)
            reward[i] = 0.0;
    }
    if (start->n_history == 0 || start->n_history % 2 == 0 || !start->history)
        return pv_errf(em, PV_ERR_INVAL,
                       "continue: %zu history texts; expected o_0, a_0, ..., o_t (odd)",
                       start->n_history);
    if (!start->state || start->state_len == 0)
        return pv_errf(em, PV_ERR_INVAL, "continue: no saved state");
    size_t limit = s_limit(opts, model), t = (start->n_history - 1) / 2;
    /* the scratch trajectories the new steps are appended to: the history's texts, then
     * ours; the steps before t are never read (the policy reads texts only) */
    pv_traj_t c[PV_ROLLOUT_MAX_BATCH];
    s_lane_t lanes[PV_ROLLOUT_MAX_BATCH];
    for (size_t i = 0; i < n; i++) {
        pv_err_t rc = pv_env_load(envs[i], start->state, start->state_len, em);
        if (rc != PV_OK)
            return rc;
        c[i] = (pv_traj_t){.task_text = start->task_text};
        if ((rc = s_alloc(arena, limit > t ? limit : t, false, &c[i], em)) != PV_OK)
            return rc;
        memcpy(c[i].texts, start->history, start->n_history * sizeof *c[i].texts);
        c[i].n_steps = t;
        lanes[i] =
            (s_lane_t){.env = envs[i], .rng = rngs ? rngs[i] : NULL, .tr = &c[i], .won = &won[i]};
    }
    s_play_opts_t o = {.limit = limit, .task_keys = opts->task_keys};
    pv_err_t rc = s_play(lanes, n, p, work, &o, arena, cost, em);
    for (size_t i = 0; rc == PV_OK && i < n; i++) {
        if (reward)
            reward[i] = c[i].reward;
        if (out)
            out[i] = (pv_traj_t){.task_text = c[i].task_text,
                                 .texts = c[i].texts,
                                 .steps = c[i].steps + t,
                                 .n_steps = c[i].n_steps - t,
                                 .first_step = t,
                                 .reward = c[i].reward,
                                 .won = won[i],
                                 .state_keys = c[i].state_keys + t,
                                 .traces = c[i].traces ? c[i].traces + t : NULL};
    }
    return rc;
}

pv_err_t pv_rollout_from_state(const pv_env_model_t *model, pv_env_t *env,
                               const pv_rollout_start_t *start, const pv_policy_t *p,
                               pv_policy_work_t *work, pv_rng_t *rng, const pv_rollout_opts_t *opts,
                               pv_arena_t *arena, bool *won, double *reward, pv_cost_t *cost,
                               pv_traj_t *out, pv_errmsg_t *em)
{
    return pv_rollout_from_state_n(model, &env, 1, start, p, work, &rng, opts, arena, won, reward,
                                   cost, out, em);
}

pv_err_t pv_rollout_continue(const pv_env_model_t *model, pv_env_t *env, const pv_traj_t *traj,
                             size_t t, const pv_policy_t *p, pv_policy_work_t *work, pv_rng_t *rng,
                             const pv_rollout_opts_t *opts, pv_arena_t *arena, bool *won,
                             double *reward, pv_cost_t *cost, pv_errmsg_t *em)
{
    if (t > traj->n_steps)
        return pv_errf(em, PV_ERR_RANGE, "continue: step %zu of a %zu-step trajectory", t,
                       traj->n_steps);
    if (t == traj->n_steps) { /* the end of the episode: its outcome is known */
        *won = traj->won;
        if (reward)
            *reward = traj->reward;
        return PV_OK;
    }
    if (!traj->states || !traj->states[t])
        return pv_errf(em, PV_ERR_STATE, "continue: the trajectory has no saved state %zu", t);
    pv_rollout_start_t st = {.state = traj->states[t],
                             .state_len = traj->state_len[t],
                             .task_text = traj->task_text,
                             .history = traj->texts,
                             .n_history = 2 * t + 1};
    return pv_rollout_from_state(model, env, &st, p, work, rng, opts, arena, won, reward, cost,
                                 NULL, em);
}

pv_err_t pv_env_pool_init(pv_env_pool_t *pool, const pv_env_model_t *model, pv_env_t *first,
                          const pv_policy_t *policy, size_t batch)
{
    *pool = (pv_env_pool_t){0};
    size_t n = batch >= 2 && pv_policy_batches(policy) ? batch : 1;
    if (n > PV_ROLLOUT_MAX_BATCH)
        n = PV_ROLLOUT_MAX_BATCH;
    if (!(pool->envs = calloc(n, sizeof *pool->envs)))
        return PV_ERR_NOMEM;
    pool->envs[0] = first;
    pool->n = 1;
    for (; pool->n < n; pool->n++)
        if (pv_env_new(model, &pool->envs[pool->n]) != PV_OK) {
            pv_env_pool_free(pool);
            return PV_ERR_NOMEM;
        }
    return PV_OK;
}

void pv_env_pool_free(pv_env_pool_t *pool)
{
    if (!pool)
        return;
    for (size_t i = 1; i < pool->n; i++)
        pv_env_destroy(&pool->envs[i]);
    free(pool->envs);
    *pool = (pv_env_pool_t){0};
}

size_t pv_rollout_batch(int64_t batch, size_t n)
{
    size_t b = batch <= 0 || (size_t)batch > n ? n : (size_t)batch;
    return b > PV_ROLLOUT_MAX_BATCH ? PV_ROLLOUT_MAX_BATCH : b ? b : 1;
}

size_t pv_rollout_next_batch(const pv_policy_t *p, size_t n_envs, size_t first, size_t total,
                             pv_rng_t *parent, pv_rng_t *r, pv_rng_t **rp)
{
    bool lockstep = n_envs >= 2 && pv_policy_batches(p);
    size_t m = lockstep ? pv_rollout_batch((int64_t)n_envs, total - first) : 1;
    for (size_t j = 0; j < m; j++) {
        if (parent && lockstep) /* episode first + j's own stream */
            pv_rng_seed(&r[j], pv_rng_u64(parent), first + j);
        rp[j] = !parent ? NULL : lockstep ? &r[j] : parent;
    }
    return m;
}
