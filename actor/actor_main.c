/* actor_main.c - prover-actor: plays groups of trajectories with the current policy and
 * submits them to the broker's "judge" service, or straight to "learn" when the run plan needs
 * no judge (common/run_plan.h: every estimator but prover) (DESIGN.md section 2).
 *
 * Waits for policy version >= 1 (the learner's first weights) before its first episode;
 * then loops: next task (actor/actor_group.h), G = actor.group_size episodes (new weights
 * are applied between episodes only, pv_weights_in_poll), the group as ROLLOUT_GROUP (with
 * saved states when the judge will work on it: prover, both a success and a failure), submitted
 * under job id = group id = (actor index + 1) << 40 | sequence (common/wire/job_ids.h). A producer
 * window of actor.window keeps the actor at most that many groups ahead of the judge and learner,
 * which bounds the policy lag; a broker that holds the producer back delays the actor, it loses
 * nothing. actor.temperature T > 0 samples from softmax(scores / T) (the learner and the verifiers
 * use the same T: common/role.h pv_role_policy_spec), 0 takes the argmax.
 *
 * Actors started in their own mpirun (cluster/add-actors: no learner in the job) take their
 * weights from the broker's relay, carry indices from actor.index_offset up (group ids that
 * no other actor uses), and stop by themselves once the broker has shut down for good.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/actor_group.h"
#include "common/log.h"
#include "common/net/broker_client.h"
#include "common/role.h"
#include "common/task_cursor.h"
#include "common/run_plan.h"
#include "common/wire/job_ids.h"
#include "common/role_build.h"

static const char *const s_usage =
    "usage: prover-actor [--config FILE] [section.key=value ...]\n"
    "  Plays groups of actor.group_size episodes on training tasks with the current policy\n"
    "  and submits them to the broker's \"judge\" service (\"learn\" when no judge is\n"
    "  needed: every estimator but prover). Keys: env.*, policy.*, actor.*,\n"
    "  algorithm.adv_estimator, run.seed, broker.endpoint (docs/config.md). Weights arrive\n"
    "  over MPI inside the learner's job, else from the broker's relay. Stops on\n"
    "  SIGINT/SIGTERM, the learner's stop message, or (outside the learner's job:\n"
    "  cluster/add-actors, actor.index_offset) when the broker has shut down for good.\n";

typedef struct counters {
    uint64_t groups, accepted, refused, episodes, wins, env_steps, too_large;
    uint64_t resubmitted; /* groups the broker dropped (max_attempts) and we sent again */
} counters_t;

/* A group submitted and not completed: its bytes, kept to send it again should the broker
 * drop it (a completion with `dropped`: it gave the job up and forgot it). */
typedef struct pending {
    uint64_t id;
    bool used, again; /* again: dropped, to be submitted again */
    pv_wire_buf_t bytes;
} pending_t;

typedef struct actor {
    pv_role_ctx_t rc;
    pv_role_kit_t k;    /* environment, policy, weights in */
    pv_env_pool_t pool; /* a group's episodes at once (actor.batch) */
    pv_producer_t *prod;
    pv_arena_t *arena, *wire_arena;
    pv_wire_buf_t buf;
    pv_traj_t *trajs;
    pv_rng_t rng;
    pv_actor_sched_t sched;
    pv_actor_ctx_t ctx;
    pv_run_plan_t plan;
    counters_t n;
    uint64_t first_seq; /* the group number to start at: 0, or learner.resume's task cursor */
    pending_t *pend;    /* actor.window slots */
    uint32_t n_pend;
    bool external; /* not in the learner's job (cluster/add-actors): ends with the broker */
} actor_t;

static pending_t *s_pending(actor_t *A, uint64_t id)
{
    for (uint32_t i = 0; i < A->n_pend; i++)
        if (A->pend[i].used && A->pend[i].id == id)
            return &A->pend[i];
    return NULL;
}

/* Read the completions that arrived: the verdict on our groups (judge or learner). A group
 * the broker dropped is marked to be sent again (s_resubmit), so none is lost. */
static void s_drain(actor_t *A)
{
    pv_completion_t c;
    while (pv_producer_recv(A->prod, 0, &c) == PV_OK) {
        pending_t *p = s_pending(A, c.job_id);
        if (c.dropped && p) {
            PV_LOG_WARN("group %llu was dropped by the broker (%s): sending it again",
                        (unsigned long long)c.job_id, c.error);
            p->again = true;
            continue;
        }
        if (p)
            p->used = false;
        if (c.ok) {
            A->n.accepted++;
        } else {
            A->n.refused++;
            PV_LOG_WARN("group %llu refused: %s", (unsigned long long)c.job_id, c.error);
        }
    }
}

/* Submit the dropped groups again, under their own ids (the broker forgot them), without
 * waiting: what the window does not take now is tried at the next call. */
static pv_err_t s_resubmit(actor_t *A)
{
    for (uint32_t i = 0; i < A->n_pend; i++) {
        pending_t *p = &A->pend[i];
        if (!p->used || !p->again)
            continue;
        pv_err_t rc = pv_producer_submit(A->prod, A->plan.group_service, p->id, false,
                                         p->bytes.data, p->bytes.len, 0);
        if (rc == PV_ERR_TIMEOUT || rc == PV_ERR_FULL)
            return PV_OK;
        if (rc != PV_OK)
            return rc;
        p->again = false;
        A->n.resubmitted++;
    }
    return PV_OK;
}

/* Keep the bytes of group `id`, just submitted, until its completion. */
static pv_err_t s_keep(actor_t *A, uint64_t id)
{
    for (uint32_t i = 0; i < A->n_pend; i++) {
        pending_t *p = &A->pend[i];
        if (p->used)
            continue;
        p->bytes.len = 0;
        pv_err_t rc = pv_wire_buf_append(&p->bytes, A->buf.data, A->buf.len);
        if (rc == PV_OK)
            *p = (pending_t){.id = id, .used = true, .bytes = p->bytes};
        return rc;
    }
    /* the producer's window (= our slots) took the group, so a slot is free: a bug if not */
    PV_LOG_WARN("group %llu: no slot to keep it in (it cannot be sent again if dropped)",
                (unsigned long long)id);
    return PV_OK;
}

/* Between episodes: new weights, completions, stop. */
static pv_err_t s_between(void *user)
{
    actor_t *A = user;
    pv_err_t rc = pv_weights_in_poll(A->k.weights);
    if (rc != PV_OK)
        return rc;
    s_drain(A);
    if ((rc = s_resubmit(A)) != PV_OK)
        return rc;
    return pv_role_should_stop(&A->rc) ? PV_ERR_INTERRUPTED : PV_OK;
}

/* Submit the encoded group, waiting while the window is full. */
static pv_err_t s_submit(actor_t *A, uint64_t id)
{
    for (;;) {
        s_drain(A);
        pv_err_t rc = s_resubmit(A); /* the dropped groups first: they are older */
        if (rc == PV_OK)
            rc = pv_producer_submit(A->prod, A->plan.group_service, id, false, A->buf.data,
                                    A->buf.len, 200);
        if (rc == PV_OK)
            return s_keep(A, id);
        if (rc == PV_ERR_LIMIT) {
            A->n.too_large++;
            PV_LOG_WARN("group %llu (%zu bytes) is larger than the broker takes: dropped",
                        (unsigned long long)id, A->buf.len);
            return PV_OK;
        }
        if (rc != PV_ERR_TIMEOUT && rc != PV_ERR_FULL)
            return rc;
        if ((rc = s_between(A)) != PV_OK)
            return rc;
    }
}

/* One progress line over the counters since `before`; `what` names the window. */
static void s_summary(const actor_t *A, const char *what, double secs, const counters_t *before)
{
    const counters_t *n = &A->n;
    double s = secs > 0 ? secs : 1.0;
    uint64_t eps = n->episodes - before->episodes;
    PV_LOG_INFO("%s: groups %llu sent (%llu taken, %llu refused, %llu dropped by the broker "
                "and sent again)  episodes %llu (success %.3f)  %.0f env steps/s  policy v%llu",
                what, (unsigned long long)n->groups, (unsigned long long)n->accepted,
                (unsigned long long)n->refused, (unsigned long long)n->resubmitted,
                (unsigned long long)n->episodes,
                eps ? (double)(n->wins - before->wins) / (double)eps : 0.0,
                (double)(n->env_steps - before->env_steps) / s,
                (unsigned long long)pv_policy_version(A->k.policy));
}

static pv_err_t s_setup(void *self, pv_errmsg_t *em)
{
    actor_t *A = self;
    const pv_config_t *cfg = &A->rc.cfg;
    if (pv_role_index(&A->rc) > PV_ACTOR_MAX_INDEX)
        return pv_errf(em, PV_ERR_CONFIG,
                       "cluster.actors, actor.index_offset: actor index %u is above %u (the group "
                       "ids' limit)",
                       pv_role_index(&A->rc), PV_ACTOR_MAX_INDEX);
    A->external = A->rc.world.learner_rank < 0;
    if (cfg->actor.temperature == 0.0 && A->rc.world.index <= 0)
        PV_LOG_WARN("actor.temperature = 0: greedy actors play the G episodes of a group "
                    "identically, so no group has contrast: every advantage is 0 and nothing is "
                    "learned (use it to watch a policy, not to train one)");
    pv_err_t rc = pv_run_plan_from_config(cfg, &A->plan, em);
    if (rc == PV_OK)
        rc = pv_role_kit_new(&A->rc, &A->k, em);
    if (rc != PV_OK)
        return rc;
    uint32_t G = (uint32_t)cfg->actor.group_size;
    A->trajs = calloc(G, sizeof *A->trajs);
    A->n_pend = (uint32_t)cfg->actor.window;
    A->pend = calloc(A->n_pend, sizeof *A->pend);
    if (!A->trajs || !A->pend || pv_arena_new(1u << 20, 0, &A->arena) != PV_OK ||
        pv_arena_new(1u << 16, 0, &A->wire_arena) != PV_OK)
        return PV_ERR_NOMEM;
    pv_wire_buf_init(&A->buf, 0);
    uint32_t index = pv_role_index(&A->rc);
    int count = A->rc.world.count[PV_ROLE_ACTOR];
    A->sched = (pv_actor_sched_t){.index = index,
                                  .count = count > 0 ? (uint32_t)count : 1u,
                                  .n_tasks = pv_env_model_n_tasks(A->k.model, PV_SPLIT_TRAIN),
                                  .run_seed = (uint64_t)cfg->run.seed,
                                  .shuffle = cfg->env.shuffle_tasks};
    if (cfg->learner.resume[0]) { /* go on where the resumed run's schedule stands */
        pv_task_cursor_t cur;
        if ((rc = pv_task_cursor_read(cfg->learner.resume, &cur, em)) != PV_OK)
            return rc;
        A->first_seq = pv_task_cursor_start(&cur, A->sched.index, A->sched.count);
        pv_task_t t = pv_actor_task(&A->sched, A->first_seq);
        PV_LOG_INFO("resuming the task schedule at group %llu (task %llu) from %s's task cursor "
                    "(%u actors)",
                    (unsigned long long)A->first_seq, (unsigned long long)t.task_id,
                    cfg->learner.resume, (unsigned)cur.n_actors);
    }
    if (pv_env_pool_init(&A->pool, A->k.model, A->k.env, A->k.policy,
                         pv_rollout_batch(cfg->actor.batch, G)) != PV_OK)
        return pv_errf(em, PV_ERR_NOMEM, "no memory for %zu environments (actor.batch)",
                       pv_rollout_batch(cfg->actor.batch, G));
    pv_rng_seed(&A->rng, pv_rng_mix((uint64_t)cfg->run.seed, 0x6163746f72u /* "actor" */), index);
    A->ctx = (pv_actor_ctx_t){.model = A->k.model,
                              .env = A->k.env,
                              .policy = A->k.policy,
                              .work = A->k.work,
                              .rng = cfg->actor.temperature == 0.0 ? NULL : &A->rng,
                              .arena = A->arena,
                              .save_states = A->plan.save_states,
                              .task_keys = A->plan.keys == PV_STATE_KEY_TASK,
                              .envs = A->pool.envs,
                              .n_envs = A->pool.n,
                              .between = s_between,
                              .user = A};
    pv_bclient_opts_t o;
    pv_role_bclient_opts(&A->rc, "actor", &o);
    rc = pv_role_broker_err(pv_producer_new(&o, (uint32_t)cfg->actor.window, &A->prod, em), em);
    if (rc == PV_OK) /* outside the learner's job: stop once the broker has shut down */
        A->rc.broker = pv_producer_client(A->prod);
    return rc;
}

static void s_teardown(void *self)
{
    actor_t *A = self;
    pv_producer_destroy(&A->prod);
    pv_wire_buf_free(&A->buf);
    for (uint32_t i = 0; A->pend && i < A->n_pend; i++)
        pv_wire_buf_free(&A->pend[i].bytes);
    free(A->pend);
    pv_arena_destroy(&A->wire_arena);
    pv_arena_destroy(&A->arena);
    free(A->trajs);
    pv_env_pool_free(&A->pool);
    pv_role_kit_free(&A->k);
}

/* Wait for the learner's first weights. PV_ERR_INTERRUPTED on a stop. */
static pv_err_t s_wait_first_weights(actor_t *A)
{
    for (unsigned waits = 0;;) {
        pv_err_t rc = pv_weights_in_wait(A->k.weights, 1, A->external ? 1000 : 10000);
        if (rc != PV_ERR_TIMEOUT)
            return rc;
        if (pv_role_should_stop(&A->rc)) /* a stop, or (outside the job) the broker gone */
            return PV_ERR_INTERRUPTED;
        if (!A->external || ++waits % 10 == 0)
            PV_LOG_INFO("waiting for the learner's first weights");
    }
}

/* Play and submit groups until a stop. Returns the exit status. */
static int s_run(void *self)
{
    actor_t *A = self;
    PV_LOG_INFO("actor %u (%d of %u in this job%s): %s, G %lld (%zu at once), %s, window %lld, "
                "groups to \"%s\", broker %s",
                A->sched.index, A->rc.world.index, A->sched.count,
                A->external ? ", weights from the relay" : "",
                pv_env_kind_name(pv_env_model_kind(A->k.model)),
                (long long)A->rc.cfg.actor.group_size, A->pool.n,
                A->ctx.rng ? "sampling" : "greedy", (long long)A->rc.cfg.actor.window,
                A->plan.group_service, A->rc.cfg.broker.endpoint);
    const pv_config_t *cfg = &A->rc.cfg;
    uint32_t G = (uint32_t)cfg->actor.group_size;
    pv_err_t rc = s_wait_first_weights(A);
    uint64_t start = pv_mono_ms(), last = start;
    counters_t before = A->n, zero = {0};
    pv_errmsg_t em = {{0}};
    for (uint64_t seq = A->first_seq; rc == PV_OK; seq++) {
        pv_task_t task = pv_actor_task(&A->sched, seq);
        uint64_t id = pv_actor_job_id(A->sched.index, seq);
        pv_cost_t cost = {0};
        rc = pv_actor_play_group(&A->ctx, &task, G, (int64_t)id, A->trajs, &cost, &em);
        if (rc != PV_OK)
            break;
        uint32_t wins = 0;
        for (uint32_t i = 0; i < G; i++)
            wins += A->trajs[i].won;
        A->n.wins += wins;
        /* states travel only to a judge that uses them: a group the judge will not work on
         * (no contrast) goes without them */
        bool with_states = A->ctx.save_states && pv_run_plan_judges_group(&A->plan, wins, G);
        A->n.episodes += G;
        A->n.env_steps += cost.env_steps;
        pv_group_meta_t meta = {.group_id = id,
                                .actor_id = A->sched.index,
                                .kind = pv_env_model_kind(A->k.model),
                                .env_name = cfg->env.name,
                                .task = task,
                                .created_unix_ms = pv_unix_ms()};
        pv_arena_reset(A->wire_arena);
        rc = pv_actor_encode_group(A->trajs, G, &meta, with_states, A->wire_arena, &A->buf, &em);
        if (rc == PV_OK)
            rc = s_submit(A, id);
        if (rc == PV_OK)
            A->n.groups++;
        uint64_t now = pv_mono_ms();
        if (now - last >= 10000) {
            s_summary(A, "last 10 s", (double)(now - last) / 1000.0, &before);
            before = A->n;
            last = now;
        }
    }
    s_summary(A, "whole run", (double)(pv_mono_ms() - start) / 1000.0, &zero);
    if (rc == PV_ERR_INTERRUPTED)
        return 0;
    PV_LOG_ERROR("actor: %s%s%s", pv_strerror(rc), em.text[0] ? ": " : "", em.text);
    return 1;
}

int main(int argc, char **argv)
{
    static actor_t A;
    static const pv_role_main_t m = {.prog = "prover-actor",
                                     .role = PV_ROLE_ACTOR,
                                     .usage = s_usage,
                                     .setup = s_setup,
                                     .run = s_run,
                                     .teardown = s_teardown};
    return pv_role_main(&m, &A.rc, &A, argc, argv);
}
