/* verify.c - contrast judge and continuation verifier; see verify.h. */
#include "learner/verify.h"

/* Success rate of K continuations from state t of traj. */
static pv_err_t s_rate(const pv_env_model_t *model, pv_env_t *env, const pv_traj_t *traj, size_t t,
                       unsigned K, const pv_policy_t *p, pv_policy_work_t *work, pv_rng_t *rng,
                       const pv_rollout_opts_t *opts, pv_arena_t *arena, pv_cost_t *cost,
                       double *rate, pv_errmsg_t *em)
{
    unsigned wins = 0;
    for (unsigned k = 0; k < K; k++) {
        bool won;
        pv_err_t rc = pv_rollout_continue(model, env, traj, t, p, work, rng, opts, arena, &won,
                                          NULL, cost, em);
        if (rc != PV_OK)
            return rc;
        wins += won;
    }
    *rate = K ? (double)wins / K : 0.0;
    return PV_OK;
}

pv_err_t pv_verify_segment(const pv_env_model_t *model, pv_env_t *env, const pv_traj_t *traj,
                           pv_verified_seg_t *seg, unsigned K, const pv_policy_t *p,
                           pv_policy_work_t *work, pv_rng_t *rng, const pv_rollout_opts_t *opts,
                           pv_arena_t *arena, pv_cost_t *cost, pv_errmsg_t *em)
{
    double before, after;
    pv_err_t rc =
        s_rate(model, env, traj, seg->t0, K, p, work, rng, opts, arena, cost, &before, em);
    if (rc == PV_OK)
        rc = s_rate(model, env, traj, seg->t1, K, p, work, rng, opts, arena, cost, &after, em);
    if (rc == PV_OK)
        seg->delta = after - before;
    return rc;
}
