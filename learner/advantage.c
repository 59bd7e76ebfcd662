/* advantage.c - outcome advantage estimators; see advantage.h for the sources. */
#include "learner/advantage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    pv_adv_estimator_t est;
} s_names[] = {
    {"grpo", PV_ADV_GRPO},
    {"drgrpo", PV_ADV_DRGRPO},
    {"dr_grpo", PV_ADV_DRGRPO},
    {"rloo", PV_ADV_RLOO},
    {"reinforce_plus_plus_baseline", PV_ADV_RPP_BASELINE},
    {"rpp_baseline", PV_ADV_RPP_BASELINE},
    {"gigpo", PV_ADV_GIGPO},
};
#define S_N_NAMES (sizeof s_names / sizeof s_names[0])

pv_err_t pv_adv_estimator_parse(const char *name, pv_adv_estimator_t *out, pv_errmsg_t *em)
{
    for (size_t i = 0; name && i < S_N_NAMES; i++)
        if (strcmp(name, s_names[i].name) == 0) {
            *out = s_names[i].est;
            return PV_OK;
        }
    return pv_errf(em, PV_ERR_INVAL,
                   "unknown advantage estimator '%s' (known: grpo, drgrpo, rloo, "
                   "reinforce_plus_plus_baseline, gigpo)",
                   name ? name : "(null)");
}

pv_adv_estimator_t pv_adv_estimator_select(pv_adv_estimator_t est, bool norm_adv_by_std_in_grpo)
{
    return est == PV_ADV_GRPO && !norm_adv_by_std_in_grpo ? PV_ADV_DRGRPO : est;
}

const char *pv_adv_estimator_name(pv_adv_estimator_t est)
{
    for (size_t i = 0; i < S_N_NAMES; i++)
        if (s_names[i].est == est)
            return s_names[i].name;
    return "unknown";
}

#define PV_TMPL "learner/adv_tmpl.h"
#include "learner/instantiate.h"

void pv_step_discounted_returns(size_t rows, const float *rewards, const int64_t *traj_uid,
                                double gamma, float *returns_out)
{
    /* G_i: walk the rows of i's trajectory from its last row back to i, exactly as the
     * reference's reversed loop does. Quadratic in rows, like its per-uid np.where. */
    for (size_t i = 0; i < rows; i++) {
        double running = 0;
        for (size_t k = rows; k-- > i;)
            if (traj_uid[k] == traj_uid[i])
                running = (double)rewards[k] + gamma * running;
        returns_out[i] = (float)running;
    }
}
