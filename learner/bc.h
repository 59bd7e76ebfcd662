/* bc.h - behaviour cloning (SFT warm start) from expert demonstrations, with the same model,
 * trainer and Adam as the RL update.
 *
 * The demonstrations are trajectories (batch.h) whose step tokens are the expert's choices.
 * Loss: token-mean negative log-likelihood L = -1/N sum_tokens log p(expert token | context),
 * i.e. dL/dlogp = -1/N per token through pv_policy_backward, then one pv_adam_step (the
 * supervised fine-tuning objective of Ouyang et al. 2022, arXiv:2203.02155, on our tokens).
 * For the candidate scorer a step is one token (the expert's candidate). For a language
 * model (pv_policy_token_space > 0) a step's tokens are the expert action's text encoded
 * with the end token (pv_policy_action_tokens), N counts them all, and the whole batch goes
 * through one pv_policy_backward_items; its accuracy is the share of steps whose every token
 * has probability above 1/2 (then it is the argmax: greedy decoding writes the action).
 * Under policy.decode=constrain the probabilities are the masked ones (the candidates'
 * continuations, as constrained decoding writes; a forced token has probability 1), or the
 * whole vocabulary's when t->bc_full_vocab (learner.bc_mask = false).
 * The loss is at temperature 1 whatever the policy's (rollout) temperature, which is put back
 * after each step: cloning fits the model's own distribution, as an SFT trainer does (verl's
 * fsdp_sft_trainer does not divide the logits), and actor.temperature then only widens the
 * rollouts' sampling and the RL log-probs.
 */
#ifndef PV_LEARNER_BC_H
#define PV_LEARNER_BC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "learner/update.h"

/* One step on all steps of `demos` (n trajectories). *loss receives the mean NLL before the
 * step, *accuracy (may be NULL) the share of steps whose argmax is the expert's token (a
 * language model: see above).
 * Bumps the policy version. Errors: PV_ERR_INVAL (no step), the policy's errors. */
pv_err_t pv_bc_step(pv_trainer_t *t, const pv_traj_t *demos, size_t n, double *loss,
                    double *accuracy, pv_errmsg_t *em);

/* The order of the demonstrations in each epoch. */
typedef struct pv_bc_order {
    bool shuffle;  /* false: demos[0 .. n) in order every epoch (batch k is demos[kB .. kB+B)) */
    uint64_t seed; /* shuffle: epoch e visits demos[pv_rng_permute(j, n, key(seed, e))], j = 0,
                    * 1, ..., a new order per epoch as an SFT trainer's shuffled sampler does */
} pv_bc_order_t;

/* Behaviour cloning over `epochs` passes of the n demonstrations in batches of `batch`
 * trajectories (pv_bc_step each), in the order `order` gives (NULL = in order). *loss and
 * *accuracy (either may be NULL) receive the last step's values. Logs one line per epoch (its
 * mean loss, the time since the start). Allocates one batch of trajectory headers when
 * shuffling. Errors: PV_ERR_INVAL (batch 0), PV_ERR_NOMEM, pv_bc_step's. */
pv_err_t pv_bc_train(pv_trainer_t *t, const pv_traj_t *demos, size_t n, unsigned epochs,
                     size_t batch, const pv_bc_order_t *order, double *loss, double *accuracy,
                     pv_errmsg_t *em);

#endif
