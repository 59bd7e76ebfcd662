/* train_cfg.c - the learner's options; see train_cfg.h. */
#include "learner/train_cfg.h"

#include <string.h>

#include "common/log.h"
#include "common/traj/episodes.h"
#include "learner/bc.h"
#include "learner/kl.h"
#include "learner/policy_loss.h"

pv_err_t pv_train_cfg_from_config(const pv_config_t *c, pv_train_cfg_t *out, pv_errmsg_t *em)
{
    memset(out, 0, sizeof *out);
    pv_err_t err = pv_run_plan_from_config(c, &out->plan, em);
    if (err == PV_OK)
        err = pv_adv_cfg_from_plan(&out->plan, c, &out->adv, em);
    if (err != PV_OK)
        return err;
    pv_adam_opts_t *ao = &out->adam;
    *ao = pv_adam_opts_default(c->learner.lr);
    ao->beta1 = c->learner.beta1;
    ao->beta2 = c->learner.beta2;
    ao->eps = c->learner.eps;
    ao->weight_decay = c->learner.weight_decay;
    ao->max_grad_norm = c->learner.grad_clip;
    pv_actor_loss_opts_t *lo = &out->update.loss;
    lo->pg = pv_pg_opts_default();
    lo->pg.clip_ratio_low = c->learner.clip_ratio_low;
    lo->pg.clip_ratio_high = c->learner.clip_ratio_high;
    lo->pg.clip_ratio_c = c->learner.clip_ratio_c;
    lo->entropy_coeff = c->learner.entropy_coeff;
    lo->use_kl = c->learner.use_kl_loss;
    lo->kl_coef = c->learner.kl_loss_coef;
    if (pv_loss_agg_parse(c->learner.loss_agg_mode, &lo->pg.agg.mode, em) != PV_OK ||
        pv_kl_parse(c->learner.kl_loss_type, &lo->kl, em) != PV_OK)
        return PV_ERR_CONFIG;
    out->update.ppo_epochs = (unsigned)c->learner.ppo_epochs;
    out->update.mini_batches =
        c->learner.ppo_mini_batch_groups
            ? (unsigned)(c->learner.batch_groups / c->learner.ppo_mini_batch_groups)
            : 1;
    out->bc_episodes = (size_t)c->learner.bc_episodes;
    out->bc_epochs = (unsigned)c->learner.bc_epochs;
    out->bc_batch = (size_t)c->learner.bc_batch;
    out->bc_lr = c->learner.bc_lr > 0 ? c->learner.bc_lr : c->learner.lr;
    out->bc_mask = c->learner.bc_mask;
    out->shuffle = c->env.shuffle_tasks;
    out->seed = (uint64_t)c->run.seed;
    return PV_OK;
}

void pv_train_cfg_fini(pv_train_cfg_t *tc)
{
    if (tc)
        pv_adv_cfg_fini(&tc->adv);
}

pv_err_t pv_train_bc(const pv_train_cfg_t *tc, const pv_episodes_t *e, pv_trainer_t *t,
                     double *loss, double *accuracy, uint64_t *env_steps, pv_errmsg_t *em)
{
    if (tc->bc_episodes == 0)
        return PV_OK;
    pv_traj_t *demos = NULL;
    pv_cost_t cost = {0};
    /* generated tasks: from 1000000 on, which RL reaches late if ever; a benchmark's finite
     * training split: its last bc_episodes tasks in file order (the actors' first pass
     * starts at the split's start unless env.shuffle_tasks reorders it) */
    uint64_t n = pv_env_model_n_tasks(e->model, PV_SPLIT_TRAIN), first = 1000000;
    if (n != UINT64_MAX)
        first = n > tc->bc_episodes ? n - tc->bc_episodes : 0;
    pv_err_t err = pv_episodes_expert(e, first, tc->bc_episodes, &demos, &cost, em);
    if (env_steps)
        *env_steps = cost.env_steps;
    if (err != PV_OK)
        return err;
    if (cost.skipped)
        PV_LOG_INFO("behaviour cloning: %llu tasks skipped (the expert found no plan, or "
                    "took an action that is not admissible)",
                    (unsigned long long)cost.skipped);
    double last_loss;
    if (!loss) /* documented as optional; pv_bc_train writes it */
        loss = &last_loss;
    pv_adam_set_lr(t->adam, tc->bc_lr);
    t->bc_full_vocab = !tc->bc_mask;
    /* generated demonstrations are random tasks already: their order stays (and with it
     * every documented ALFWorld number); a data file's neighbours are alike */
    pv_bc_order_t order = {.shuffle = tc->shuffle && n != UINT64_MAX, .seed = tc->seed};
    err = pv_bc_train(t, demos, tc->bc_episodes, tc->bc_epochs, tc->bc_batch, &order, loss,
                      accuracy, em);
    t->bc_full_vocab = false;
    pv_adam_set_lr(t->adam, tc->adam.lr);
    /* RL starts with a fresh optimiser, as an RL run after SFT builds its own: BC's second
     * moments (of its larger gradients) would otherwise shrink RL's steps for ~1/(1 - beta2)
     * steps, and its first moments keep pushing BC's direction */
    size_t np = pv_adam_n(t->adam);
    memset(pv_adam_m(t->adam), 0, np * sizeof(float));
    memset(pv_adam_v(t->adam), 0, np * sizeof(float));
    pv_adam_set_t_step(t->adam, 0);
    return err;
}
