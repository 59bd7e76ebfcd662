/* config_check.c - the checks of values that depend on more than a key's type and range;
 * see pv_config_check in config.h. */
#include "common/config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* "1".."65535", digits only; "*" too when `wildcard`. */
static bool s_port_ok(const char *p, bool wildcard)
{
    if (wildcard && strcmp(p, "*") == 0)
        return true;
    size_t n = strlen(p);
    if (n == 0 || n > 5 || strspn(p, "0123456789") != n)
        return false;
    long v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (p[i] - '0');
    return v >= 1 && v <= 65535;
}

/* A ZeroMQ endpoint the broker can bind (`bind`) or a client connect to: tcp://HOST:PORT
 * (HOST a name, an IPv4 address, [IPv6] or, to bind, *; PORT 1..65535, or * to bind),
 * ipc://PATH or inproc://NAME. */
static pv_err_t s_endpoint(const char *key, const char *ep, bool bind, pv_errmsg_t *em)
{
    const char *why = NULL;
    if (strncmp(ep, "ipc://", 6) == 0 || strncmp(ep, "inproc://", 9) == 0) {
        if (!ep[strncmp(ep, "ipc://", 6) == 0 ? 6 : 9])
            why = "an empty address";
    } else if (strncmp(ep, "tcp://", 6) != 0) {
        why = "not tcp://HOST:PORT, ipc://PATH or inproc://NAME";
    } else {
        const char *host = ep + 6, *colon = strrchr(host, ':');
        if (!colon || colon == host)
            why = "no HOST:PORT after tcp://";
        else if (strcspn(host, " \t;,") < strlen(host))
            why = "a space, ';' or ',' in the address";
        else if (!bind && colon - host == 1 && host[0] == '*')
            why = "'*' is for broker.bind; connect to the broker's host";
        else if (!s_port_ok(colon + 1, bind))
            why = bind ? "the port must be 1..65535 (digits only) or *"
                       : "the port must be 1..65535 (digits only)";
    }
    if (why)
        return pv_errf(em, PV_ERR_CONFIG, "%s: '%s' is not a ZeroMQ endpoint: %s", key, ep, why);
    return PV_OK;
}

pv_err_t pv_config_check(const pv_config_t *cfg, pv_errmsg_t *em)
{
    if (cfg->env.gen_task_types & 1)
        return pv_errf(em, PV_ERR_CONFIG,
                       "env.gen_task_types: %lld has bit 0 set; bit i (1..6) is ALFWorld task "
                       "type i, so the mask is an even number in 2..126 (0 = every type)",
                       (long long)cfg->env.gen_task_types);
    if (strcmp(cfg->learner.eval_split, "train") == 0 &&
        (strcmp(cfg->env.name, "alfworld") != 0 || cfg->env.data_path[0]))
        return pv_errf(em, PV_ERR_CONFIG,
                       "learner.eval_split=train: new games of the training task kinds exist "
                       "only for the generated ALFWorld (env.name=alfworld, no env.data_path); "
                       "%s%s has a finite train split that training plays",
                       cfg->env.name, cfg->env.data_path[0] ? " with env.data_path" : "");
    long long mb = cfg->learner.ppo_mini_batch_groups, bg = cfg->learner.batch_groups;
    if (mb && bg % mb) /* also a mini-batch larger than the batch */
        return pv_errf(em, PV_ERR_CONFIG,
                       "learner.ppo_mini_batch_groups: %lld does not divide learner.batch_groups "
                       "%lld (verl asserts the same of ppo_mini_batch_size); 0 = one mini-batch",
                       mb, bg);
    pv_err_t rc = s_endpoint("broker.bind", cfg->broker.bind, true, em);
    if (rc == PV_OK)
        rc = s_endpoint("broker.endpoint", cfg->broker.endpoint, false, em);
    struct in_addr a;
    if (rc == PV_OK && cfg->broker.metrics_bind[0] &&
        inet_pton(AF_INET, cfg->broker.metrics_bind, &a) != 1)
        rc = pv_errf(em, PV_ERR_CONFIG,
                     "broker.metrics_bind: '%s' is not an IPv4 address (127.0.0.1, 0.0.0.0, ...)",
                     cfg->broker.metrics_bind);
    return rc;
}
