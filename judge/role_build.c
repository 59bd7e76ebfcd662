/* role_build.c - see role_build.h. */
#include "judge/role_build.h"

#include <string.h>

#include "common/role.h"

int pv_role_exit_status(pv_err_t err)
{
    switch (err) {
    case PV_OK:
        return 0;
    case PV_ERR_CONFIG:
    case PV_ERR_PARSE:
    case PV_ERR_IO:
    case PV_ERR_DATA:
    case PV_ERR_INVAL:
    case PV_ERR_RANGE:
        return 2;
    default:
        return 1;
    }
}

pv_err_t pv_role_env_new(const pv_config_t *cfg, pv_env_model_t **model, pv_env_t **env,
                         pv_errmsg_t *em)
{
    pv_env_spec_t spec;
    pv_role_env_spec(cfg, &spec);
    pv_errmsg_t inner = {{0}};
    *model = NULL;
    *env = NULL;
    pv_err_t rc = pv_env_model_new(&spec, model, &inner);
    if (rc != PV_OK)
        return pv_errf(em, rc, "env.name=%s env.data_path='%s': %s", cfg->env.name,
                       cfg->env.data_path, inner.text[0] ? inner.text : pv_strerror(rc));
    if ((rc = pv_env_new(*model, env)) != PV_OK) {
        pv_env_model_destroy(model);
        return pv_errf(em, rc, "environment instance: %s", pv_strerror(rc));
    }
    return PV_OK;
}

pv_err_t pv_role_policy_new(const pv_config_t *cfg, pv_policy_t **policy, pv_policy_work_t **work,
                            pv_errmsg_t *em)
{
    pv_policy_spec_t spec;
    pv_role_policy_spec(cfg, &spec);
    pv_errmsg_t inner = {{0}};
    *policy = NULL;
    *work = NULL;
    pv_err_t rc = pv_policy_new(&spec, policy, &inner);
    if (rc != PV_OK)
        return pv_errf(em, rc, "policy.kind=%s (policy.*): %s", cfg->policy.kind,
                       inner.text[0] ? inner.text : pv_strerror(rc));
    if ((rc = pv_policy_work_new(*policy, work)) != PV_OK) {
        pv_policy_destroy(policy);
        return pv_errf(em, rc, "policy work area: %s", pv_strerror(rc));
    }
    return PV_OK;
}
