/* actor_group.c - tasks, groups and their encoding; see actor_group.h. */
#include "actor/actor_group.h"

#include "common/rng.h"

/* the key of pass `pass`'s task order in a run seeded with run_seed */
static uint64_t s_order_key(uint64_t run_seed, uint64_t pass)
{
    return pv_rng_mix(pv_rng_mix(run_seed, pass), 0x7461736b6f726472ULL); /* "taskordr" */
}

pv_task_t pv_actor_task(const pv_actor_sched_t *s, uint64_t n)
{
    uint64_t count = s->count ? s->count : 1;
    uint64_t id = s->index + n * count;
    if (s->n_tasks != UINT64_MAX && s->n_tasks > 0) {
        uint64_t pass = id / s->n_tasks;
        id %= s->n_tasks;
        if (s->shuffle)
            id = pv_rng_permute(id, s->n_tasks, s_order_key(s->run_seed, pass));
    }
    return (pv_task_t){.split = PV_SPLIT_TRAIN, .task_id = id, .seed = pv_rng_mix(s->run_seed, id)};
}

pv_err_t pv_actor_play_group(const pv_actor_ctx_t *ctx, const pv_task_t *task, uint32_t G,
                             int64_t group, pv_traj_t *trajs, pv_cost_t *cost, pv_errmsg_t *em)
{
    pv_arena_reset(ctx->arena);
    pv_rollout_opts_t ro = {
        .max_steps = ctx->max_steps, .save_states = ctx->save_states, .task_keys = ctx->task_keys};
    pv_env_t *const *envs = ctx->n_envs >= 2 ? ctx->envs : &ctx->env;
    for (uint32_t i = 0; i < G;) {
        pv_err_t rc = ctx->between ? ctx->between(ctx->user) : PV_OK;
        if (rc != PV_OK)
            return rc;
        pv_rng_t r[PV_ROLLOUT_MAX_BATCH], *rp[PV_ROLLOUT_MAX_BATCH];
        size_t m = pv_rollout_next_batch(ctx->policy, ctx->n_envs, i, G, ctx->rng, r, rp);
        rc = pv_rollout_episodes(ctx->model, envs, m, task, ctx->policy, ctx->work, rp, &ro, group,
                                 ctx->arena, &trajs[i], cost, em);
        if (rc != PV_OK)
            return rc;
        i += (uint32_t)m;
    }
    return PV_OK;
}

pv_err_t pv_actor_encode_group(const pv_traj_t *trajs, size_t G, const pv_group_meta_t *meta,
                               bool with_states, pv_arena_t *arena, pv_wire_buf_t *out,
                               pv_errmsg_t *em)
{
    pv_wire_msg_t m = {.type = PV_MSG_ROLLOUT_GROUP};
    pv_err_t rc = pv_traj_group_to_wire(trajs, G, meta, with_states, arena, &m.rollout_group, em);
    if (rc == PV_OK)
        rc = pv_wire_encode(&m, NULL, out, em);
    return rc;
}
