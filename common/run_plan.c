/* run_plan.c - the run plan and the names of its choices; see run_plan.h. */
#include "common/run_plan.h"

#include <string.h>

static const struct {
    const char *name;
    pv_adv_estimator_t est;
} s_estimators[] = {
    {"grpo", PV_ADV_GRPO},
    {"drgrpo", PV_ADV_DRGRPO},
    {"dr_grpo", PV_ADV_DRGRPO},
    {"rloo", PV_ADV_RLOO},
    {"reinforce_plus_plus_baseline", PV_ADV_RPP_BASELINE},
    {"rpp_baseline", PV_ADV_RPP_BASELINE},
    {"gigpo", PV_ADV_GIGPO},
    {"pgpo", PV_ADV_PGPO},
    {"spopp", PV_ADV_SPOPP},
    {"triage", PV_ADV_TRIAGE},
    {"vict", PV_ADV_VICT},
};
#define S_N_ESTIMATORS (sizeof s_estimators / sizeof s_estimators[0])

pv_err_t pv_adv_estimator_parse(const char *name, pv_adv_estimator_t *out, pv_errmsg_t *em)
{
    for (size_t i = 0; name && i < S_N_ESTIMATORS; i++)
        if (strcmp(name, s_estimators[i].name) == 0) {
            *out = s_estimators[i].est;
            return PV_OK;
        }
    return pv_errf(em, PV_ERR_INVAL,
                   "unknown advantage estimator '%s' (known: grpo, drgrpo, rloo, "
                   "reinforce_plus_plus_baseline, gigpo, pgpo, spopp, triage, vict)",
                   name ? name : "(null)");
}

pv_adv_estimator_t pv_adv_estimator_select(pv_adv_estimator_t est, bool norm_adv_by_std_in_grpo)
{
    return est == PV_ADV_GRPO && !norm_adv_by_std_in_grpo ? PV_ADV_DRGRPO : est;
}

const char *pv_adv_estimator_name(pv_adv_estimator_t est)
{
    for (size_t i = 0; i < S_N_ESTIMATORS; i++)
        if (s_estimators[i].est == est)
            return s_estimators[i].name;
    return "unknown";
}

static const char *const s_judges[] = {"contrast", "random", "oracle", "exhaustive", "llm"};
#define S_N_JUDGES (sizeof s_judges / sizeof s_judges[0])

pv_err_t pv_judge_kind_parse(const char *name, pv_judge_kind_t *out)
{
    for (size_t i = 0; name && i < S_N_JUDGES; i++)
        if (strcmp(name, s_judges[i]) == 0) {
            *out = (pv_judge_kind_t)i;
            return PV_OK;
        }
    return PV_ERR_INVAL;
}

const char *pv_judge_kind_name(pv_judge_kind_t kind)
{
    return (unsigned)kind < S_N_JUDGES ? s_judges[kind] : "unknown";
}

pv_err_t pv_prover_sign_parse(const char *name, pv_prover_sign_t *out, pv_errmsg_t *em)
{
    if (name && strcmp(name, "positive") == 0)
        *out = PV_PROVER_SIGN_POSITIVE;
    else if (name && strcmp(name, "both") == 0)
        *out = PV_PROVER_SIGN_BOTH;
    else
        return pv_errf(em, PV_ERR_INVAL, "prover.sign must be positive or both, got '%s'",
                       name ? name : "(null)");
    return PV_OK;
}

pv_err_t pv_prover_apply_parse(const char *name, pv_prover_apply_t *out, pv_errmsg_t *em)
{
    if (name && strcmp(name, "add") == 0)
        *out = PV_PROVER_APPLY_ADD;
    else if (name && strcmp(name, "replace") == 0)
        *out = PV_PROVER_APPLY_REPLACE;
    else
        return pv_errf(em, PV_ERR_INVAL, "prover.apply must be add or replace, got '%s'",
                       name ? name : "(null)");
    return PV_OK;
}

pv_err_t pv_run_plan_from_config(const pv_config_t *cfg, pv_run_plan_t *out, pv_errmsg_t *em)
{
    memset(out, 0, sizeof *out);
    const char *est = cfg->algorithm.adv_estimator;
    out->prover = strcmp(est, "prover") == 0;
    out->name = out->prover ? "prover" : NULL;
    pv_err_t rc = pv_adv_estimator_parse(out->prover ? "grpo" : est, &out->estimator, em);
    if (rc != PV_OK)
        return pv_errf(em, PV_ERR_CONFIG, "algorithm.adv_estimator: %s", em ? em->text : "");
    if (!out->name)
        out->name = pv_adv_estimator_name(out->estimator);
    out->estimator =
        pv_adv_estimator_select(out->estimator, cfg->algorithm.norm_adv_by_std_in_grpo);
    if (pv_judge_kind_parse(cfg->prover.judge, &out->judge) != PV_OK)
        return pv_errf(em, PV_ERR_CONFIG, "prover.judge: unknown judge '%s'", cfg->prover.judge);
    if (pv_prover_sign_parse(cfg->prover.sign, &out->credit.sign, em) != PV_OK ||
        pv_prover_apply_parse(cfg->prover.apply, &out->credit.apply, em) != PV_OK)
        return PV_ERR_CONFIG; /* the message names the key */
    out->credit.lambda = cfg->prover.lambda;
    /* the key means nothing to the other estimators (a config shared by several runs may
     * set it): ignored there */
    out->triage_llm =
        out->estimator == PV_ADV_TRIAGE && strcmp(cfg->algorithm.triage_labels, "llm") == 0;
    out->needs_judge = out->prover || out->triage_llm;
    out->group_service = out->needs_judge ? "judge" : "learn";
    out->save_states = out->prover;
    /* task keys only for the contrast judge's comparison; GiGPO's state anchors (and every
     * other use) need the whole state's key */
    out->keys = out->prover && strcmp(cfg->prover.contrast_key, "task") == 0 ? PV_STATE_KEY_TASK
                                                                             : PV_STATE_KEY_STATE;
    out->verify_failures = cfg->prover.verify_failures || out->credit.sign == PV_PROVER_SIGN_BOTH;
    out->min_successes = (uint32_t)cfg->prover.min_successes;
    out->max_successes = (uint32_t)cfg->prover.max_successes;
    if (out->min_successes > out->max_successes)
        return pv_errf(em, PV_ERR_CONFIG,
                       "prover.min_successes (%u) is larger than prover.max_successes (%u)",
                       out->min_successes, out->max_successes);
    return PV_OK;
}

bool pv_run_plan_judges_group(const pv_run_plan_t *plan, size_t n_success, size_t n)
{
    return plan->prover && n_success > 0 && n_success < n && n_success >= plan->min_successes &&
           n_success <= plan->max_successes;
}
