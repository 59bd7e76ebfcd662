/* verify_job.c - one VERIFY_JOB's continuations; see verify_job.h. */
#include "common/clock.h"
#include "judge/verify_job.h"

#include "common/traj/traj_wire.h"

#include <string.h>
#include <time.h>

pv_err_t pv_vjob_start(const pv_wire_verify_job_t *job, pv_rollout_start_t *start, size_t *t,
                       pv_errmsg_t *em)
{
    if (job->n_history == 0 || job->n_history % 2 == 0)
        return pv_errf(em, PV_ERR_DATA,
                       "verify job %llu: %u history texts; expected o_0, a_0, ..., o_t (odd)",
                       (unsigned long long)job->job_id, job->n_history);
    if (job->state.len == 0)
        return pv_errf(em, PV_ERR_DATA, "verify job %llu: no state",
                       (unsigned long long)job->job_id);
    if (job->k == 0)
        return pv_errf(em, PV_ERR_DATA, "verify job %llu: k = 0", (unsigned long long)job->job_id);
    *start = (pv_rollout_start_t){.state = job->state.ptr,
                                  .state_len = job->state.len,
                                  .task_text = job->task_text,
                                  .history = job->history,
                                  .n_history = job->n_history};
    *t = (job->n_history - 1) / 2;
    return PV_OK;
}

pv_err_t pv_vjob_run(const pv_vjob_ctx_t *ctx, const pv_wire_verify_job_t *job,
                     pv_wire_verify_result_t *out, pv_errmsg_t *em)
{
    uint64_t t0 = pv_mono_ms();
    pv_env_kind_t kind = pv_env_model_kind(ctx->model);
    if (job->env.kind != (uint8_t)kind)
        return pv_errf(em, PV_ERR_INVAL,
                       "verify job %llu is for environment kind %u (%s); this "
                       "verifier runs %s",
                       (unsigned long long)job->job_id, job->env.kind, job->env.name,
                       pv_env_kind_name(kind));
    pv_rollout_start_t start;
    size_t t;
    pv_err_t rc = pv_vjob_start(job, &start, &t, em);
    if (rc != PV_OK)
        return rc;
    pv_rng_t rng;
    pv_rng_seed(&rng, job->seed, 0);
    pv_rollout_opts_t ro = {.max_steps = job->max_steps};
    pv_cost_t cost = {0};
    uint32_t wins = 0;
    double rewards = 0.0;
    bool keep = job->want_continuations && ctx->keep;
    pv_wire_trajectory_t *conts = keep ? pv_arena_calloc(ctx->keep, job->k, sizeof *conts) : NULL;
    if (keep && !conts)
        return pv_errf(em, PV_ERR_NOMEM, "verify job: no room for %u continuations", job->k);
    pv_env_t *const *envs = ctx->n_envs >= 2 ? ctx->envs : &ctx->env;
    for (uint32_t i = 0; i < job->k;) {
        pv_arena_t *a = keep ? ctx->keep : ctx->arena;
        if (!keep)
            pv_arena_reset(a);
        pv_rng_t r[PV_ROLLOUT_MAX_BATCH], *rp[PV_ROLLOUT_MAX_BATCH];
        bool won[PV_ROLLOUT_MAX_BATCH];
        double reward[PV_ROLLOUT_MAX_BATCH];
        pv_traj_t cont[PV_ROLLOUT_MAX_BATCH];
        size_t m = pv_rollout_next_batch(ctx->policy, ctx->n_envs, i, job->k, &rng, r, rp);
        rc = pv_rollout_from_state_n(ctx->model, envs, m, &start, ctx->policy, ctx->work, rp, &ro,
                                     a, won, reward, &cost, keep ? cont : NULL, em);
        for (size_t j = 0; rc == PV_OK && j < m; j++) {
            if (keep) {
                cont[j].state_keys = NULL; /* not sent: the learner trains on the steps only */
                rc = pv_traj_to_wire(&cont[j], false, a, &conts[i + j], NULL, em);
            }
            wins += won[j];
            rewards += reward[j];
        }
        if (rc != PV_OK)
            return rc;
        i += (uint32_t)m;
    }
    uint64_t ms = pv_mono_ms() - t0;
    *out = (pv_wire_verify_result_t){
        .job_id = job->job_id,
        .group_id = job->group_id,
        .segment_id = job->segment_id,
        .side = job->side,
        .k = job->k,
        .successes = wins,
        .reward_sum = (float)rewards,
        .env_steps = cost.env_steps,
        .policy_tokens = cost.decisions,
        .policy_version = pv_policy_version(ctx->policy),
        .verifier_id = ctx->verifier_id,
        .wall_ms = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms,
        .continuations = conts,
        .n_continuations = keep ? job->k : 0,
    };
    return PV_OK;
}
