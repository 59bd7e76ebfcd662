/* role_build.h - what the role processes (prover-actor, -judge, -verifier, -learner) build
 * from the run configuration at start-up, with errors that name the configuration keys, and the
 * exit status every role uses (0 normal stop, 2 bad configuration, 1 runtime failure).
 */
#ifndef PV_ROLE_BUILD_H
#define PV_ROLE_BUILD_H

#include "common/config.h"
#include "common/env/env.h"
#include "common/err.h"
#include "common/policy/policy.h"
#include "common/role.h"

/* Exit status for an error at start-up: pv_exit_status (common/err.h): 2 for bad input
 * (the config or the files it names), 1 for anything else. */
int pv_role_exit_status(pv_err_t err);

/* Log every line of pv_config_ignored(cfg) as a warning (settings that do nothing here). */
void pv_role_warn_ignored(const pv_config_t *cfg);

/* The environment model of cfg->env.* and one instance. Errors (detail in `em`, naming
 * env.name / env.data_path): the model's (PV_ERR_INVAL, PV_ERR_IO, PV_ERR_DATA),
 * PV_ERR_NOMEM. On error nothing is left allocated. */
pv_err_t pv_role_env_new(const pv_config_t *cfg, pv_env_model_t **model, pv_env_t **env,
                         pv_errmsg_t *em);

/* The vocabulary of policy.kind = transformer without policy.path, as tokenizer.json text
 * (*json malloc'd, the caller frees it): the file policy.tokenizer, or, when that is empty,
 * one learned at start-up from env.name's texts: 200 episodes of its embedded generator
 * (expert steps with probability 0.7, corpus seed 0: common/tokenizer/corpus.h) and the
 * prompts' fixed texts (common/policy/lm_prompt.h), policy.vocab_size ids (train.h). The
 * learning is deterministic, so every role of a run, and a later resume, gets the same
 * vocabulary (about 0.5 s of CPU for ALFWorld). Errors: PV_ERR_IO (naming policy.tokenizer),
 * the corpus' and the trainer's, PV_ERR_NOMEM. */
pv_err_t pv_role_vocabulary(const pv_config_t *cfg, char **json, size_t *len, pv_errmsg_t *em);

/* The policy of cfg->policy.* (random init from run.seed: the learner's weights replace it;
 * a transformer's vocabulary from pv_role_vocabulary, or policy.path's model). Errors:
 * PV_ERR_INVAL / PV_ERR_IO / PV_ERR_DATA naming the policy.* keys, PV_ERR_NOMEM. */
pv_err_t pv_role_policy_make(const pv_config_t *cfg, pv_policy_t **policy, pv_errmsg_t *em);

/* The policy of cfg->policy.* (pv_role_policy_make) and a work area. Errors: as
 * pv_role_policy_make. */
pv_err_t pv_role_policy_new(const pv_config_t *cfg, pv_policy_t **policy, pv_policy_work_t **work,
                            pv_errmsg_t *em);

/* A broker client's PV_ERR_INVAL at start-up is a bad broker.endpoint: turned into
 * PV_ERR_CONFIG naming the key (the detail already in `em` is kept); other codes pass. */
pv_err_t pv_role_broker_err(pv_err_t err, pv_errmsg_t *em);

/* What a role that plays the policy holds (actors, verifiers): the environment, the
 * policy and the weights coming in. */
typedef struct pv_role_kit {
    pv_env_model_t *model;
    pv_env_t *env;
    pv_policy_t *policy;
    pv_policy_work_t *work;
    pv_weights_in_t *weights;
} pv_role_kit_t;

/* Build the kit from rc->cfg (pv_role_env_new, pv_role_policy_new, pv_weights_in_new).
 * Errors: theirs, broker.endpoint problems as PV_ERR_CONFIG. On error the caller still
 * calls pv_role_kit_free. */
pv_err_t pv_role_kit_new(pv_role_ctx_t *rc, pv_role_kit_t *kit, pv_errmsg_t *em);

/* Free what the kit holds (NULL members are skipped); zeroes it. */
void pv_role_kit_free(pv_role_kit_t *kit);

/* A role's main, the same for every role: pv_role_start (a `--help` prints `usage` and
 * exits 0; a bad command line exits 2), setup (its error logged, exit status from
 * pv_role_exit_status), run (returns the exit status), teardown (always), then
 * pv_world_finalize. `self` is the role's state; `rc` its pv_role_ctx_t inside it. */
typedef struct pv_role_main {
    const char *prog; /* "prover-actor", for messages before logging is set up */
    pv_role_t role;
    const char *usage;
    bool sighup; /* SIGHUP sets pv_role_reload (the broker re-reads its keys) */
    pv_err_t (*setup)(void *self, pv_errmsg_t *em);
    int (*run)(void *self);
    void (*teardown)(void *self);
} pv_role_main_t;

/* Run `m` as the process's main; returns the exit status. */
int pv_role_main(const pv_role_main_t *m, pv_role_ctx_t *rc, void *self, int argc, char **argv);

#endif
