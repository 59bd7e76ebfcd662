/* prover-config - print the effective configuration of a run, or the reference of all keys.
 *
 *   prover-config [--config FILE] [section.key=value ...]   effective YAML on stdout
 *   prover-config [...] --get section.key [--get ...]        values, one per line (scripts)
 *   prover-config [...] --get plan.KEY                       the run plan (common/run_plan.h):
 *        plan.estimator, plan.prover, plan.needs_judge, plan.group_service, plan.save_states,
 *        plan.state_keys, plan.judge (cluster/launch asks whether to start a judge)
 *   prover-config [...] --plan                               every plan.KEY=value line
 *   prover-config --describe                                 Markdown reference (docs/config.md)
 *
 * Exit status 0, or 2 with a message naming the bad key/file/line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/run_plan.h"

/* The plan's keys and values, as text. */
static const char *const s_plan_keys[] = {
    "estimator", "prover", "needs_judge", "group_service", "save_states", "state_keys", "judge"};
#define S_N_PLAN (sizeof s_plan_keys / sizeof s_plan_keys[0])

static const char *s_plan_value(const pv_run_plan_t *p, size_t i)
{
    switch (i) {
    case 0:
        return p->name;
    case 1:
        return p->prover ? "true" : "false";
    case 2:
        return p->needs_judge ? "true" : "false";
    case 3:
        return p->group_service;
    case 4:
        return p->save_states ? "true" : "false";
    case 5:
        return p->keys == PV_STATE_KEY_TASK ? "task" : "state";
    default:
        return pv_judge_kind_name(p->judge);
    }
}

/* "plan.KEY" -> its value; PV_ERR_CONFIG naming the known keys otherwise. */
static pv_err_t s_plan_get(const pv_config_t *cfg, const char *key, const char **out,
                           pv_errmsg_t *em)
{
    pv_run_plan_t plan;
    pv_err_t rc = pv_run_plan_from_config(cfg, &plan, em);
    if (rc != PV_OK)
        return rc;
    for (size_t i = 0; i < S_N_PLAN; i++)
        if (strcmp(key + 5, s_plan_keys[i]) == 0) {
            *out = s_plan_value(&plan, i);
            return PV_OK;
        }
    return pv_errf(em, PV_ERR_CONFIG,
                   "unknown plan key '%s' (plan.estimator, plan.prover, plan.needs_judge, "
                   "plan.group_service, plan.save_states, plan.state_keys, plan.judge)",
                   key);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--describe") == 0) {
        pv_config_describe(stdout);
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf(
            "usage: prover-config [--config FILE] [section.key=value ...] [--get section.key ...]\n"
            "       prover-config [--config FILE] [section.key=value ...] --plan\n"
            "       prover-config --describe\n"
            "Prints the effective configuration as YAML, the values of the --get keys one per\n"
            "line (plan.KEY: what the run plan decided, e.g. plan.needs_judge), the whole run\n"
            "plan, or the reference of every key.\n");
        return 0;
    }
    pv_config_t cfg;
    pv_errmsg_t em = {{0}};
    pv_config_defaults(&cfg);
    /* --get KEY pairs are taken out before the config arguments are parsed */
    char **cargv = calloc((size_t)argc + 1, sizeof *cargv);
    const char **keys = calloc((size_t)argc + 1, sizeof *keys);
    int cargc = 0, n_keys = 0, status = 0;
    if (!cargv || !keys)
        return 1;
    static const char *const all_plan[] = {
        "plan.estimator",   "plan.prover",     "plan.needs_judge", "plan.group_service",
        "plan.save_states", "plan.state_keys", "plan.judge"};
    bool plan_lines = false;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && strcmp(argv[i], "--get") == 0 && i + 1 < argc)
            keys[n_keys++] = argv[++i];
        else if (i > 0 && strcmp(argv[i], "--plan") == 0)
            plan_lines = true;
        else
            cargv[cargc++] = argv[i];
    }
    pv_err_t rc = pv_config_from_args(&cfg, cargc, cargv, NULL, NULL, &em);
    char ignored[4096];
    if (rc == PV_OK && pv_config_ignored(&cfg, ignored, sizeof ignored)) {
        for (char *save = NULL, *l = strtok_r(ignored, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save))
            fprintf(stderr, "prover-config: warning: %s\n", l);
    }
    for (size_t i = 0; rc == PV_OK && plan_lines && i < sizeof all_plan / sizeof *all_plan; i++) {
        const char *v = NULL;
        if ((rc = s_plan_get(&cfg, all_plan[i], &v, &em)) == PV_OK)
            printf("%s=%s\n", all_plan[i], v);
    }
    for (int i = 0; rc == PV_OK && i < n_keys; i++) {
        char value[PV_CONFIG_STR_MAX + 8];
        const char *v = NULL;
        if (strncmp(keys[i], "plan.", 5) == 0) {
            if ((rc = s_plan_get(&cfg, keys[i], &v, &em)) == PV_OK)
                printf("%s\n", v);
        } else if ((rc = pv_config_get_text(&cfg, keys[i], value, sizeof value, &em)) == PV_OK) {
            printf("%s\n", value);
        }
    }
    if (rc != PV_OK) {
        fprintf(stderr, "prover-config: %s\n", em.text[0] ? em.text : pv_strerror(rc));
        status = 2;
    } else if (n_keys == 0 && !plan_lines && pv_config_write_yaml(&cfg, stdout) != PV_OK) {
        status = 1;
    }
    free(cargv);
    free(keys);
    return status;
}
