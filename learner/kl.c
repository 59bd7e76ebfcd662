/* kl.c - KL estimators; see kl.h. */
#include "learner/kl.h"

#include <math.h>
#include <string.h>

pv_err_t pv_kl_parse(const char *name, pv_kl_spec_t *out, pv_errmsg_t *em)
{
    static const struct {
        const char *name;
        pv_kl_type_t type;
    } names[] = {{"kl", PV_KL_K1}, {"k1", PV_KL_K1},         {"abs", PV_KL_ABS}, {"mse", PV_KL_K2},
                 {"k2", PV_KL_K2}, {"low_var_kl", PV_KL_K3}, {"k3", PV_KL_K3}};
    if (!name)
        return pv_errf(em, PV_ERR_INVAL, "kl: no estimator name");
    size_t len = strlen(name);
    bool st = len > 0 && name[len - 1] == '+';
    if (st)
        len--;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == len && strncmp(name, names[i].name, len) == 0) {
            out->type = names[i].type;
            /* k2 is its own straight-through estimator */
            out->straight_through = st && names[i].type != PV_KL_K2;
            return PV_OK;
        }
    return pv_errf(em, PV_ERR_INVAL,
                   "unknown kl_penalty '%s' (known: kl, k1, abs, mse, k2, low_var_kl, k3, with "
                   "an optional '+'; 'full' is not supported)",
                   name);
}

#define PV_TMPL "learner/kl_tmpl.h"
#include "learner/instantiate.h"
