/* triage_adv.c - GRPO plus TRIAGE's process rewards; see triage_adv.h. */
#include "learner/triage_adv.h"

#include <stdbool.h>
#include <string.h>

#include "common/traj/triage.h"
#include "learner/advantage.h"

#define S_MAX_STEPS 4096 /* the wire's step limit per trajectory */

pv_triage_opts_t pv_triage_opts_default(void)
{
    return (pv_triage_opts_t){.lambda = 0.2, .epsilon = 1e-6};
}

pv_err_t pv_batch_triage(pv_batch_t *b, const pv_traj_t *trajs, size_t n, const pv_triage_opts_t *o,
                         pv_triage_stats_t *st, pv_errmsg_t *em)
{
    pv_triage_stats_t local;
    st = st ? st : &local;
    memset(st, 0, sizeof *st);
    if (!b || !trajs || !o || n != b->rows)
        return pv_errf(em, PV_ERR_INVAL, "triage: %zu trajectories for a batch of %zu rows", n,
                       b ? b->rows : 0);
    for (size_t i = 0; i < n; i++)
        if (trajs[i].n_steps > b->L || trajs[i].n_steps > S_MAX_STEPS ||
            (trajs[i].n_steps && !trajs[i].state_keys))
            return pv_errf(em, PV_ERR_INVAL,
                           "triage: trajectory %zu has %zu steps (batch %zu) or no state keys", i,
                           trajs[i].n_steps, b->L);
    pv_err_t rc = pv_adv_outcome_f64(PV_ADV_GRPO, o->epsilon, b->rows, b->L, b->token_level_rewards,
                                     b->response_mask, b->index, NULL, b->advantages, NULL, em);
    if (rc != PV_OK)
        return rc;
    pv_triage_role_t roles[S_MAX_STEPS];
    bool refused[S_MAX_STEPS];
    for (size_t i = 0; i < n; i++) {
        const pv_traj_t *tr = &trajs[i];
        for (size_t t = 0; t < tr->n_steps; t++)
            refused[t] = tr->steps[t].refused;
        pv_triage_traj_t v = {.success = tr->won,
                              .n_steps = (uint32_t)tr->n_steps,
                              .state_keys = tr->state_keys,
                              .refused = refused};
        if ((rc = pv_triage_label(&v, 0, roles)) != PV_OK)
            return pv_errf(em, rc, "triage: labelling trajectory %zu", i);
        for (size_t t = 0; t < tr->n_steps; t++) {
            bool judged = tr->judge_roles && tr->judge_roles[t] < 4;
            if (judged)
                roles[t] = (pv_triage_role_t)tr->judge_roles[t];
            b->advantages[i * b->L + t] += o->lambda * pv_triage_reward(roles[t]);
            st->roles[roles[t]]++;
            st->judged += judged;
            st->model_free += !judged;
        }
    }
    return PV_OK;
}
