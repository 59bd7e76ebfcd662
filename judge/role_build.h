/* role_build.h - what prover-actor, prover-judge and prover-verifier build from the run
 * configuration at start-up, with errors that name the configuration keys, and the exit
 * status every role uses (0 normal stop, 2 bad configuration, 1 runtime failure).
 */
#ifndef PV_JUDGE_ROLE_BUILD_H
#define PV_JUDGE_ROLE_BUILD_H

#include "common/config.h"
#include "common/env/env.h"
#include "common/err.h"
#include "common/policy/policy.h"

/* Exit status for an error at start-up: 2 for a bad configuration (PV_ERR_CONFIG,
 * PV_ERR_PARSE, PV_ERR_IO, PV_ERR_DATA, PV_ERR_INVAL, PV_ERR_RANGE: the user can fix it in
 * the config or its files), 1 for anything else. */
int pv_role_exit_status(pv_err_t err);

/* The environment model of cfg->env.* and one instance. Errors (detail in `em`, naming
 * env.name / env.data_path): the model's (PV_ERR_INVAL, PV_ERR_IO, PV_ERR_DATA),
 * PV_ERR_NOMEM. On error nothing is left allocated. */
pv_err_t pv_role_env_new(const pv_config_t *cfg, pv_env_model_t **model, pv_env_t **env,
                         pv_errmsg_t *em);

/* The policy of cfg->policy.* (random init from run.seed: the learner's weights replace
 * it) and a work area. Errors: PV_ERR_INVAL naming the policy.* keys, PV_ERR_NOMEM. */
pv_err_t pv_role_policy_new(const pv_config_t *cfg, pv_policy_t **policy, pv_policy_work_t **work,
                            pv_errmsg_t *em);

#endif
