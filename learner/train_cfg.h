/* train_cfg.h - the learner's options from the run configuration, decided once and shared by
 * prover-learner and prover-train-local (so the two cannot train differently): the
 * optimiser (learner.lr, beta1, beta2, eps, weight_decay, grad_clip), the PPO update (clip
 * ratios, loss_agg_mode, entropy, KL, ppo_epochs), the advantages (the run plan's estimator
 * and credit, algorithm.gigpo_*) and behaviour cloning (bc_episodes, bc_epochs, bc_batch,
 * bc_lr, bc_mask).
 */
#ifndef PV_LEARNER_TRAIN_CFG_H
#define PV_LEARNER_TRAIN_CFG_H

#include <stdbool.h>
#include <stddef.h>

#include "common/config.h"
#include "common/err.h"
#include "common/run_plan.h"
#include "common/traj/episodes.h"
#include "learner/adam.h"
#include "learner/batch_adv.h"
#include "learner/update.h"

typedef struct pv_train_cfg {
    pv_run_plan_t plan;
    pv_adam_opts_t adam;
    pv_update_opts_t update;
    pv_adv_cfg_t adv;
    size_t bc_episodes; /* expert episodes for the warm start; 0 = none */
    unsigned bc_epochs;
    size_t bc_batch;
    double bc_lr;  /* learner.bc_lr, or learner.lr when that is 0 */
    bool bc_mask;  /* learner.bc_mask: decode=constrain BC over the masked distribution */
    bool shuffle;  /* env.shuffle_tasks: a finite split's demonstrations in a new order per epoch */
    uint64_t seed; /* run.seed: the key of those orders */
} pv_train_cfg_t;

/* Decide the options of `cfg` (for estimator spopp this allocates its value table, out->adv.spopp:
 * free with pv_train_cfg_fini). Errors: PV_ERR_CONFIG naming the key, PV_ERR_NOMEM. */
pv_err_t pv_train_cfg_from_config(const pv_config_t *cfg, pv_train_cfg_t *out, pv_errmsg_t *em);

/* Free what pv_train_cfg_from_config allocated (pv_adv_cfg_fini). NULL-safe, idempotent. */
void pv_train_cfg_fini(pv_train_cfg_t *tc);

/* Behaviour cloning as configured: n = bc_episodes expert demonstrations of training tasks
 * from 1000000 on (disjoint from the tasks RL plays first; with a finite training split, as
 * WebShop's and SearchQA's data, its last bc_episodes tasks), bc_epochs passes in batches of
 * bc_batch at bc_lr (over the whole vocabulary when bc_mask is false), then the optimiser's
 * learning rate back to learner.lr and its moments and step count to 0 (RL starts with a fresh
 * optimiser, as prover-train-local always did and as an RL run after SFT builds its own). Does
 * nothing when bc_episodes is 0. *loss and *accuracy (may be NULL) get the last step's values,
 * *env_steps (may be NULL) the demonstrations' environment steps. Errors: the expert's
 * (common/traj/episodes.h) and behaviour cloning's (learner/bc.h). */
pv_err_t pv_train_bc(const pv_train_cfg_t *tc, const pv_episodes_t *e, pv_trainer_t *t,
                     double *loss, double *accuracy, uint64_t *env_steps, pv_errmsg_t *em);

#endif
