/* verifier_main.c - prover-verifier: restores saved environment states and samples
 * continuations with the current policy (DESIGN.md sections 1 and 2).
 *
 * Worker on the broker's "verify" service with one credit. Each lease holds a VERIFY_JOB
 * (judge/verify_job.h); the ack carries the VERIFY_RESULT back to the judge. Weights come
 * through pv_weights_in_t: over MPI inside the learner's job, from the broker relay in a pool
 * started on its own (cluster/add-verifiers), polled between jobs; a job asking for a newer
 * policy than the verifier holds waits for it (a quarter of the lease at most) and otherwise
 * runs with what it has, reporting the version used. A malformed job is acked not ok and
 * counted. Stops on SIGINT/SIGTERM, the learner's stop message, or, outside the learner's
 * job, once the broker announced its shutdown and none came back within the grace period.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/net/broker_client.h"
#include "common/role.h"
#include "common/role_build.h"
#include "judge/verify_job.h"

static const char *const s_usage =
    "usage: prover-verifier [--config FILE] [section.key=value ...]\n"
    "  Serves the broker's \"verify\" service: restores the state of each verify job and\n"
    "  samples its k continuations with the current policy. Keys: env.*, policy.*,\n"
    "  broker.endpoint (docs/config.md). Weights arrive over MPI inside the learner's job,\n"
    "  else from the broker's relay. Stops on SIGINT/SIGTERM, the learner's stop message,\n"
    "  or (outside the learner's job) when the broker has shut down for good.\n";

typedef struct counters {
    uint64_t jobs, malformed, failed, stale, continuations, env_steps, tokens, successes;
} counters_t;

typedef struct verifier {
    pv_role_ctx_t rc;
    pv_role_kit_t k;    /* environment, policy, weights in */
    pv_env_pool_t pool; /* a job's continuations at once (actor.batch) */
    pv_worker_t *worker;
    pv_wire_dec_t *dec;
    pv_arena_t *dec_arena, *arena, *keep;
    pv_wire_buf_t buf;
    pv_vjob_ctx_t ctx;
    bool external; /* no learner in this job: weights from the relay */
    counters_t n;
} verifier_t;

/* Refuse a job (ack not ok: the judge treats the side as unverified), counted. */
static void s_nack(verifier_t *V, uint64_t job_id, uint64_t *counter, const char *what,
                   const char *detail)
{
    char why[PV_ERRMSG_MAX + 64];
    snprintf(why, sizeof why, "%s%s", what, detail);
    (*counter)++;
    PV_LOG_WARN("verify job %llu: %s", (unsigned long long)job_id, why);
    pv_worker_ack(V->worker, job_id, false, why, NULL, 0);
}

/* One lease: decode, weights, continuations, ack. */
static pv_err_t s_job(verifier_t *V, const pv_lease_t *l)
{
    pv_arena_reset(V->dec_arena);
    pv_errmsg_t em = {{0}};
    pv_wire_msg_t m;
    pv_err_t rc = pv_wire_decode(V->dec, l->payload, l->len, V->dec_arena, &m, &em);
    if (rc == PV_OK && m.type != PV_MSG_VERIFY_JOB)
        rc = pv_errf(&em, PV_ERR_UNKNOWN_TYPE, "a %s message, not VERIFY_JOB",
                     pv_wire_type_name(m.type) ? pv_wire_type_name(m.type) : "?");
    if (rc != PV_OK) {
        s_nack(V, l->job_id, &V->n.malformed, "malformed: ", em.text);
        return PV_OK;
    }
    const pv_wire_verify_job_t *job = &m.verify_job;
    if (pv_policy_version(V->k.policy) < job->policy_version) {
        int wait = l->lease_ms / 4 < 10000 ? (int)(l->lease_ms / 4) : 10000;
        rc = pv_weights_in_wait(V->k.weights, job->policy_version, wait);
        if (rc == PV_ERR_INTERRUPTED)
            return PV_OK; /* not acked: the broker gives the job to another verifier */
        if (rc == PV_ERR_TIMEOUT) {
            V->n.stale++;
            PV_LOG_WARN("verify job %llu wants policy v%llu; running with v%llu",
                        (unsigned long long)l->job_id, (unsigned long long)job->policy_version,
                        (unsigned long long)pv_policy_version(V->k.policy));
        } else if (rc != PV_OK) {
            return rc;
        }
    }
    pv_wire_msg_t out = {.type = PV_MSG_VERIFY_RESULT};
    pv_arena_reset(V->keep);
    rc = pv_vjob_run(&V->ctx, job, &out.verify_result, &em);
    if (rc == PV_OK)
        rc = pv_wire_encode(&out, NULL, &V->buf, &em);
    if (rc != PV_OK) {
        char detail[PV_ERRMSG_MAX + 32];
        snprintf(detail, sizeof detail, "%s: %s", pv_errname(rc), em.text);
        s_nack(V, l->job_id, &V->n.failed, "", detail);
        return PV_OK;
    }
    const pv_wire_verify_result_t *r = &out.verify_result;
    V->n.jobs++;
    V->n.continuations += r->k;
    V->n.successes += r->successes;
    V->n.env_steps += r->env_steps;
    V->n.tokens += r->policy_tokens;
    PV_LOG_DEBUG("verify job %llu (group %llu segment %u side %u): %u/%u successes, %llu steps, "
                 "v%llu, %u ms",
                 (unsigned long long)job->job_id, (unsigned long long)job->group_id,
                 job->segment_id, job->side, r->successes, r->k, (unsigned long long)r->env_steps,
                 (unsigned long long)r->policy_version, r->wall_ms);
    return pv_worker_ack(V->worker, l->job_id, true, NULL, V->buf.data, V->buf.len);
}

static void s_summary(const verifier_t *V, double secs, const counters_t *before)
{
    const counters_t *n = &V->n;
    double s = secs > 0 ? secs : 1.0;
    PV_LOG_INFO("jobs %llu (%.1f/s; %llu malformed, %llu failed, %llu with an older policy)  "
                "continuations %llu (success %.3f)  env steps %llu (%.0f/s)  tokens %llu  "
                "policy v%llu",
                (unsigned long long)n->jobs, (double)(n->jobs - before->jobs) / s,
                (unsigned long long)n->malformed, (unsigned long long)n->failed,
                (unsigned long long)n->stale, (unsigned long long)n->continuations,
                n->continuations ? (double)n->successes / (double)n->continuations : 0.0,
                (unsigned long long)n->env_steps, (double)(n->env_steps - before->env_steps) / s,
                (unsigned long long)n->tokens, (unsigned long long)pv_policy_version(V->k.policy));
}

static pv_err_t s_setup(void *self, pv_errmsg_t *em)
{
    verifier_t *V = self;
    pv_err_t rc = pv_role_kit_new(&V->rc, &V->k, em);
    if (rc != PV_OK)
        return rc;
    if (pv_wire_dec_new(NULL, &V->dec) != PV_OK || pv_arena_new(0, 0, &V->dec_arena) != PV_OK ||
        pv_arena_new(0, 0, &V->arena) != PV_OK || pv_arena_new(0, 0, &V->keep) != PV_OK)
        return PV_ERR_NOMEM;
    size_t nb = pv_rollout_batch(V->rc.cfg.actor.batch, (size_t)V->rc.cfg.prover.k);
    if (pv_env_pool_init(&V->pool, V->k.model, V->k.env, V->k.policy, nb) != PV_OK)
        return pv_errf(em, PV_ERR_NOMEM, "no memory for %zu environments (actor.batch)", nb);
    pv_wire_buf_init(&V->buf, 0);
    V->external = V->rc.world.learner_rank < 0;
    V->ctx = (pv_vjob_ctx_t){
        .model = V->k.model,
        .env = V->k.env,
        .policy = V->k.policy,
        .work = V->k.work,
        .arena = V->arena,
        .keep = V->keep,
        .verifier_id = V->external ? (uint32_t)getpid() : (uint32_t)V->rc.world.index,
        .envs = V->pool.envs,
        .n_envs = V->pool.n,
    };
    pv_bclient_opts_t o;
    pv_role_bclient_opts(&V->rc, "verifier", &o);
    rc = pv_role_broker_err(pv_worker_new(&o, "verify", 1, &V->worker, em), em);
    if (rc == PV_OK) /* outside the learner's job: stop once the broker has shut down */
        V->rc.broker = pv_worker_client(V->worker);
    return rc;
}

static void s_teardown(void *self)
{
    verifier_t *V = self;
    pv_worker_destroy(&V->worker);
    pv_wire_buf_free(&V->buf);
    pv_arena_destroy(&V->arena);
    pv_arena_destroy(&V->keep);
    pv_arena_destroy(&V->dec_arena);
    pv_wire_dec_destroy(&V->dec);
    pv_env_pool_free(&V->pool);
    pv_role_kit_free(&V->k);
}

/* Serve jobs until a stop. Returns the exit status. */
static int s_run(void *self)
{
    verifier_t *V = self;
    PV_LOG_INFO("verifier %u: %s, policy %zu parameters, weights %s, broker %s", V->ctx.verifier_id,
                pv_env_kind_name(pv_env_model_kind(V->k.model)), pv_policy_n_params(V->k.policy),
                V->external ? "from the relay" : "over MPI", V->rc.cfg.broker.endpoint);
    uint64_t start = pv_mono_ms(), last = start;
    counters_t before = V->n, zero = {0};
    uint64_t last_reconnects = 0;
    while (!pv_role_should_stop(&V->rc)) {
        pv_err_t rc = pv_weights_in_poll(V->k.weights);
        if (rc != PV_OK) {
            PV_LOG_ERROR("weights: %s", pv_strerror(rc));
            return 1;
        }
        pv_lease_t l;
        rc = pv_worker_recv(V->worker, 200, &l);
        if (rc == PV_OK)
            rc = s_job(V, &l);
        if (rc == PV_ERR_INTERRUPTED) /* a signal */
            break;
        if (rc != PV_OK && rc != PV_ERR_TIMEOUT) {
            PV_LOG_ERROR("verify: %s", pv_strerror(rc));
            return 1;
        }
        uint64_t now = pv_mono_ms();
        if (now - last >= 10000) {
            uint64_t reconnects = pv_bclient_reconnects(pv_worker_client(V->worker));
            if (reconnects > last_reconnects && V->n.jobs == before.jobs)
                PV_LOG_WARN("no answer from a broker at %s (%llu attempts so far): is it running, "
                            "and is broker.endpoint this run's?",
                            V->rc.cfg.broker.endpoint, (unsigned long long)reconnects);
            last_reconnects = reconnects;
            s_summary(V, (double)(now - last) / 1000.0, &before);
            before = V->n;
            last = now;
        }
    }
    s_summary(V, (double)(pv_mono_ms() - start) / 1000.0, &zero); /* the whole run */
    return 0;
}

int main(int argc, char **argv)
{
    static verifier_t V;
    static const pv_role_main_t m = {.prog = "prover-verifier",
                                     .role = PV_ROLE_VERIFIER,
                                     .usage = s_usage,
                                     .setup = s_setup,
                                     .run = s_run,
                                     .teardown = s_teardown};
    return pv_role_main(&m, &V.rc, &V, argc, argv);
}
