/* role.c - see role.h. */
#include "common/clock.h"
#include "common/role.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/net/broker_client.h"
#include "common/weight_sync.h"

volatile sig_atomic_t pv_role_signalled, pv_role_reload;

static void s_on_signal(int sig)
{
    if (sig == SIGHUP)
        pv_role_reload = 1;
    else
        pv_role_signalled = 1;
}

pv_err_t pv_role_start(pv_role_ctx_t *rc, pv_role_t role, int argc, char **argv, const char *usage,
                       bool sighup, pv_errmsg_t *em)
{
    memset(rc, 0, sizeof *rc);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("%s", usage);
            return PV_ERR_INTERRUPTED;
        }
    }
    pv_config_defaults(&rc->cfg);
    pv_err_t err = pv_config_from_args(&rc->cfg, argc, argv, NULL, NULL, em);
    if (err != PV_OK)
        return err;
    pv_log_level_t level;
    if (pv_log_parse_level(rc->cfg.run.log_level, &level) == 0)
        pv_log_set_level(level);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (sighup)
        sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    err = pv_world_init(&rc->world, role, &argc, &argv, em);
    if (err == PV_OK)
        err = pv_net_new(&rc->net, em);
    if (err != PV_OK)
        return err;
    if (rc->world.count[role] > 1 || role == PV_ROLE_ACTOR || role == PV_ROLE_VERIFIER)
        snprintf(rc->name, sizeof rc->name, "%s-%u", pv_role_name(role), pv_role_index(rc));
    else
        snprintf(rc->name, sizeof rc->name, "%s", pv_role_name(role));
    pv_log_init(rc->name, rc->world.mpi ? rc->world.rank : -1);
    return PV_OK;
}

void pv_role_bclient_opts(const pv_role_ctx_t *rc, const char *role, pv_bclient_opts_t *o)
{
    pv_bclient_opts_from_config(o, &rc->cfg);
    o->role = role;
    o->net = rc->net;
    o->rank = rc->world.mpi ? rc->world.rank : -1;
    o->index = pv_role_index(rc);
}

bool pv_role_should_stop(pv_role_ctx_t *rc)
{
    if (pv_role_signalled || pv_world_stop_requested(&rc->world))
        return true;
    if (rc->broker_gone)
        return true;
    if (!rc->broker || rc->world.learner_rank >= 0)
        return false;
    int64_t grace_ms = 5 * rc->cfg.broker.heartbeat_ms * rc->cfg.broker.liveness;
    int64_t gone_ms = pv_bclient_shutdown_ms(rc->broker);
    if (gone_ms <= grace_ms)
        return false;
    PV_LOG_INFO("the broker shut down %.1f s ago and has not come back: the run is over, "
                "stopping",
                (double)gone_ms / 1000.0);
    rc->broker_gone = true;
    return true;
}

uint32_t pv_role_index(const pv_role_ctx_t *rc)
{
    int64_t i = rc->world.index;
    if (rc->world.role == PV_ROLE_ACTOR)
        i += rc->cfg.actor.index_offset;
    return i < 0 ? 0u : i > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)i;
}

void pv_role_env_spec(const pv_config_t *cfg, pv_env_spec_t *out)
{
    *out = (pv_env_spec_t){
        .name = cfg->env.name,
        .data_path = cfg->env.data_path,
        .max_steps = (uint32_t)cfg->env.max_steps,
        .seed = (uint64_t)cfg->env.seed,
        .gen_receptacles = (uint32_t)cfg->env.gen_receptacles,
        .gen_distractors = (uint32_t)cfg->env.gen_distractors,
        .gen_task_types = (uint32_t)cfg->env.gen_task_types,
        .gen_size = (uint32_t)cfg->env.gen_size,
        .top_k = (uint32_t)cfg->env.top_k,
        .expert =
            strcmp(cfg->env.expert, "search") == 0 ? PV_ENV_EXPERT_SEARCH : PV_ENV_EXPERT_PLANNER,
    };
}

void pv_role_policy_spec(const pv_config_t *cfg, pv_policy_spec_t *out)
{
    *out = (pv_policy_spec_t){
        .kind = cfg->policy.kind,
        .n_buckets = (uint32_t)cfg->policy.hash_buckets,
        .embed_dim = (uint32_t)cfg->policy.embed_dim,
        .hidden_dim = (uint32_t)cfg->policy.hidden_dim,
        .history_window = (uint32_t)cfg->policy.history,
        .seed = (uint64_t)cfg->run.seed,
        /* every role's distribution at the actors' temperature, so the learner's log-probs
         * are those of the behaviour policy (0 = greedy actors: the policy's own T = 1) */
        .temperature = cfg->actor.temperature > 0 ? (float)cfg->actor.temperature : 1.0f,
        .path = cfg->policy.path,
        .env = cfg->env.name,
        .decode = strcmp(cfg->policy.decode, "rank") == 0        ? PV_POLICY_DECODE_RANK
                  : strcmp(cfg->policy.decode, "constrain") == 0 ? PV_POLICY_DECODE_CONSTRAIN
                                                                 : PV_POLICY_DECODE_GENERATE,
        .max_new_tokens = (uint32_t)cfg->policy.max_new_tokens,
        .prompt_window = (uint32_t)cfg->policy.prompt_window,
        .max_context = (uint32_t)cfg->policy.max_context,
        .prompt_admissible = cfg->policy.prompt_admissible,
        .prompt_task_each_turn = cfg->policy.prompt_task_each_turn,
        .blas_threads = (int)cfg->policy.blas_threads,
        .train_threads = (uint32_t)cfg->policy.train_threads,
        .layers = (uint32_t)cfg->policy.layers,
        .hidden = (uint32_t)cfg->policy.hidden_size,
        .heads = (uint32_t)cfg->policy.heads,
        .kv_heads = (uint32_t)cfg->policy.kv_heads,
        .head_dim = (uint32_t)cfg->policy.head_dim,
        .intermediate = (uint32_t)cfg->policy.intermediate_size,
    };
}

/* ---- weights in ---------------------------------------------------------------------- */

struct pv_weights_in {
    pv_role_ctx_t *rc;
    pv_policy_t *policy;
    pv_wsync_sub_t *mpi;     /* inside the learner's job */
    pv_weights_sub_t *relay; /* outside it */
    uint64_t rejected;       /* relay versions of the wrong size */
};

pv_err_t pv_weights_in_new(pv_role_ctx_t *rc, pv_policy_t *policy, pv_weights_in_t **out,
                           pv_errmsg_t *em)
{
    pv_weights_in_t *in = calloc(1, sizeof *in);
    if (!in)
        return PV_ERR_NOMEM;
    in->rc = rc;
    in->policy = policy;
    pv_err_t err;
    if (rc->world.weights != MPI_COMM_NULL) {
        err = pv_wsync_sub_new(rc->world.weights, 0, pv_policy_n_params(policy), NULL, &in->mpi);
        if (err != PV_OK)
            pv_errf(em, err, "weights over MPI: %s", pv_strerror(err));
    } else {
        pv_bclient_opts_t o;
        pv_role_bclient_opts(rc, pv_role_name(rc->world.role), &o);
        err = pv_weights_sub_new(&o, &in->relay, em);
    }
    if (err != PV_OK) {
        pv_weights_in_destroy(&in);
        return err;
    }
    *out = in;
    return PV_OK;
}

void pv_weights_in_destroy(pv_weights_in_t **in)
{
    if (!in || !*in)
        return;
    if ((*in)->mpi) {
        pv_wsync_stats_t st = pv_wsync_sub_stats((*in)->mpi);
        PV_LOG_INFO("weights over MPI: %llu versions received (%llu copied from the parent's "
                    "shared memory; %llu same-host offers refused, by it or by its children), "
                    "%llu refused",
                    (unsigned long long)st.received, (unsigned long long)st.shm_reads,
                    (unsigned long long)st.shm_refusals, (unsigned long long)st.refused);
        if (st.acks_unsent)
            PV_LOG_WARN("weights over MPI: %llu answers to the parent could not be sent (every "
                        "send slot busy); the parent cut this rank out for them",
                        (unsigned long long)st.acks_unsent);
    }
    pv_wsync_sub_destroy(&(*in)->mpi);
    pv_weights_sub_destroy(&(*in)->relay);
    free(*in);
    *in = NULL;
}

static pv_err_t s_poll(pv_weights_in_t *in, int timeout_ms)
{
    size_t n = pv_policy_n_params(in->policy);
    if (in->mpi) {
        /* wsync writes only whole, checked versions, so straight into the parameters */
        uint64_t v = pv_policy_version(in->policy);
        bool stop = false; /* the learner ends runs with the world stop, not wsync's */
        pv_err_t err = pv_wsync_poll(in->mpi, pv_policy_params(in->policy), &v, &stop);
        if (err == PV_ERR_CHECKSUM || err == PV_ERR_DATA) {
            pv_wsync_stats_t st = pv_wsync_sub_stats(in->mpi);
            if (err == PV_ERR_CHECKSUM)
                PV_LOG_WARN("policy v%llu refused: its checksum does not match its bytes (%llu "
                            "refused so far); keeping v%llu",
                            (unsigned long long)st.last_refused, (unsigned long long)st.refused,
                            (unsigned long long)v);
            else
                PV_LOG_WARN("a malformed weights message was refused (%llu so far)",
                            (unsigned long long)st.rejected);
        } else if (err != PV_OK) {
            return err;
        }
        pv_policy_set_version(in->policy, v);
        return PV_OK;
    }
    pv_weights_t w;
    pv_err_t err = pv_weights_sub_poll(in->relay, timeout_ms, &w);
    if (err == PV_ERR_CHECKSUM)
        PV_LOG_WARN("a relayed policy version was refused: its checksum does not match its bytes "
                    "(%llu refused so far); keeping v%llu",
                    (unsigned long long)pv_weights_sub_refused(in->relay),
                    (unsigned long long)pv_policy_version(in->policy));
    if (err == PV_ERR_TIMEOUT || err == PV_ERR_CHECKSUM)
        return PV_OK;
    if (err != PV_OK)
        return err;
    if (w.n_params != n) {
        PV_LOG_WARN("relayed weights v%llu have %llu parameters, this policy %zu: refused (%llu "
                    "so far)",
                    (unsigned long long)w.version, (unsigned long long)w.n_params, n,
                    (unsigned long long)++in->rejected);
        return PV_OK;
    }
    memcpy(pv_policy_params(in->policy), w.data, n * sizeof(float));
    pv_policy_set_version(in->policy, w.version);
    return PV_OK;
}

pv_err_t pv_weights_in_poll(pv_weights_in_t *in)
{
    return s_poll(in, 0);
}

pv_err_t pv_weights_in_wait(pv_weights_in_t *in, uint64_t min_version, int timeout_ms)
{
    uint64_t start = pv_mono_ms();
    for (;;) {
        pv_err_t err = s_poll(in, 50);
        if (err != PV_OK)
            return err;
        if (pv_policy_version(in->policy) >= min_version)
            return PV_OK;
        if (pv_role_should_stop(in->rc))
            return PV_ERR_INTERRUPTED;
        if (timeout_ms >= 0 && pv_mono_ms() - start >= (uint64_t)timeout_ms)
            return PV_ERR_TIMEOUT;
        if (in->mpi)
            pv_sleep_ms(2);
    }
}

/* ---- weights out --------------------------------------------------------------------- */

struct pv_weights_out {
    pv_wsync_pub_t *mpi;
    pv_weights_pub_t *relay;
};

pv_err_t pv_weights_out_new(pv_role_ctx_t *rc, size_t n_params, pv_weights_out_t **out,
                            pv_errmsg_t *em)
{
    pv_weights_out_t *o = calloc(1, sizeof *o);
    if (!o)
        return PV_ERR_NOMEM;
    pv_err_t err = PV_OK;
    if (rc->world.weights != MPI_COMM_NULL)
        err = pv_wsync_pub_new(rc->world.weights, 0, n_params, NULL, &o->mpi);
    if (err == PV_OK) {
        pv_bclient_opts_t bo;
        pv_role_bclient_opts(rc, "learner", &bo);
        err = pv_weights_pub_new(&bo, &o->relay, em);
    } else {
        pv_errf(em, err, "weights over MPI: %s", pv_strerror(err));
    }
    if (err != PV_OK) {
        pv_weights_out_destroy(&o);
        return err;
    }
    *out = o;
    return PV_OK;
}

void pv_weights_out_destroy(pv_weights_out_t **out)
{
    if (!out || !*out)
        return;
    pv_wsync_pub_destroy(&(*out)->mpi);
    pv_weights_pub_destroy(&(*out)->relay);
    free(*out);
    *out = NULL;
}

uint32_t pv_weights_out_progress(pv_weights_out_t *out)
{
    return out->mpi ? pv_wsync_progress(out->mpi) : 0;
}

pv_err_t pv_weights_out_publish(pv_weights_out_t *out, const pv_policy_t *policy)
{
    const float *p = pv_policy_params_const(policy);
    size_t n = pv_policy_n_params(policy);
    uint64_t v = pv_policy_version(policy);
    pv_err_t err = PV_OK;
    if (out->mpi)
        err = pv_wsync_publish(out->mpi, v, p);
    if (err == PV_OK)
        err = pv_weights_publish(out->relay, v, p, n);
    return err;
}
