/* local_prover.c - the in-process pipeline; see local_prover.h. */
#include "tools/local_prover.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "actor/actor_group.h"
#include "common/clock.h"
#include "common/wire/job_ids.h"
#include "judge/llm_judge.h"
#include "judge/llm_role.h"
#include "judge/verify_job.h"
#include "learner/intake.h"

#define S_MAX_LANES 16

/* One group at a time: an actor with its own environment instance, policy scratch and
 * sampling stream, the judge's and the verifiers' scratch, and the group's bytes. Lane 0
 * borrows the caller's environment and the trainer's work; lanes 1.. own theirs. */
typedef struct s_lane {
    pv_jg_opts_t jo; /* the judge's options, with this lane's environment for the oracle */
    pv_env_t *env;
    pv_env_pool_t pool; /* a group's episodes, a job's continuations at once (actor.batch) */
    pv_policy_work_t *work;
    bool owns;
    pv_actor_ctx_t actor;
    pv_rng_t rng; /* the group's sampling: seeded from run.seed and the group's number */
    pv_traj_t *trajs;
    pv_arena_t *play, *wire, *judge, *cont;
    pv_wire_dec_t *dec;
    pv_wire_buf_t group, credited;
    /* the group this lane played */
    uint64_t seq;
    pv_cost_t rollout;
    uint64_t mixed;
    pv_jg_stats_t js;
    pv_err_t rc;
    pv_errmsg_t em;
} s_lane_t;

struct pv_local {
    pv_config_t cfg;
    pv_train_cfg_t tc;
    pv_jg_opts_t jo;
    const pv_env_model_t *model;
    pv_trainer_t *trainer;
    pv_actor_sched_t sched;
    uint64_t seq;        /* groups played */
    uint64_t iterations; /* updates done */
    s_lane_t lane[S_MAX_LANES];
    size_t n_lanes;
    pv_intake_t *intake;
    pv_llm_judge_t *llm; /* prover.judge = llm: asked one group at a time */
};

static pv_err_t s_lane_init(pv_local_t *L, s_lane_t *ln, pv_env_t *env, pv_policy_work_t *work)
{
    size_t G = (size_t)L->cfg.actor.group_size;
    ln->owns = env == NULL;
    if (ln->owns && (pv_env_new(L->model, &env) != PV_OK ||
                     pv_policy_work_new(L->trainer->policy, &work) != PV_OK)) {
        ln->env = env;
        return PV_ERR_NOMEM;
    }
    ln->env = env;
    ln->work = work;
    ln->jo = L->jo;
    if (ln->jo.env) /* the oracle judge and measure_precision restore states into it */
        ln->jo.env = env;
    size_t K = (size_t)L->cfg.prover.k, nb = pv_rollout_batch(L->cfg.actor.batch, G > K ? G : K);
    if (pv_env_pool_init(&ln->pool, L->model, env, L->trainer->policy, nb) != PV_OK)
        return PV_ERR_NOMEM;
    ln->trajs = calloc(G, sizeof *ln->trajs);
    if (!ln->trajs || pv_arena_new(1u << 20, 0, &ln->play) != PV_OK ||
        pv_arena_new(1u << 16, 0, &ln->wire) != PV_OK ||
        pv_arena_new(1u << 20, 0, &ln->judge) != PV_OK ||
        pv_arena_new(1u << 16, 0, &ln->cont) != PV_OK || pv_wire_dec_new(NULL, &ln->dec) != PV_OK)
        return PV_ERR_NOMEM;
    pv_wire_buf_init(&ln->group, 0);
    pv_wire_buf_init(&ln->credited, 0);
    ln->actor = (pv_actor_ctx_t){.model = L->model,
                                 .env = env,
                                 .policy = L->trainer->policy,
                                 .work = work,
                                 .rng = L->cfg.actor.temperature == 0.0 ? NULL : &ln->rng,
                                 .arena = ln->play,
                                 .save_states = L->tc.plan.save_states,
                                 .task_keys = L->tc.plan.keys == PV_STATE_KEY_TASK,
                                 .max_steps = (uint32_t)L->cfg.env.max_steps,
                                 .envs = ln->pool.envs,
                                 .n_envs = ln->pool.n};
    return PV_OK;
}

static void s_lane_fini(s_lane_t *ln)
{
    pv_wire_buf_free(&ln->group);
    pv_wire_buf_free(&ln->credited);
    pv_wire_dec_destroy(&ln->dec);
    pv_arena_destroy(&ln->cont);
    pv_arena_destroy(&ln->judge);
    pv_arena_destroy(&ln->wire);
    pv_arena_destroy(&ln->play);
    free(ln->trajs);
    pv_env_pool_free(&ln->pool);
    if (ln->owns) {
        pv_policy_work_destroy(&ln->work);
        pv_env_destroy(&ln->env);
    }
    memset(ln, 0, sizeof *ln);
}

pv_err_t pv_local_new(const pv_config_t *cfg, const pv_env_model_t *model, pv_env_t *env,
                      pv_trainer_t *trainer, pv_local_t **out, pv_errmsg_t *em)
{
    pv_local_t *L = calloc(1, sizeof *L);
    if (!L)
        return PV_ERR_NOMEM;
    *out = L;
    L->cfg = *cfg;
    pv_err_t rc = pv_train_cfg_from_config(&L->cfg, &L->tc, em);
    if (rc != PV_OK)
        return rc;
    L->model = model;
    L->trainer = trainer;
    pv_jg_opts_from_config(&L->tc.plan, &L->cfg, pv_env_model_max_steps(model), env, &L->jo);
    if ((L->tc.plan.prover && L->tc.plan.judge == PV_JUDGE_LLM) || L->tc.plan.triage_llm) {
        pv_llm_opts_t lo;
        if ((rc = pv_llm_opts_from_config(&L->cfg, (uint32_t)cfg->prover.max_segment_turns, 1, &lo,
                                          em)) != PV_OK ||
            (rc = pv_llm_judge_new(&lo, &L->llm, em)) != PV_OK)
            return rc;
    }
    L->sched = (pv_actor_sched_t){.index = 0,
                                  .count = 1,
                                  .n_tasks = pv_env_model_n_tasks(model, PV_SPLIT_TRAIN),
                                  .run_seed = (uint64_t)cfg->run.seed,
                                  .shuffle = cfg->env.shuffle_tasks};
    if (pv_intake_new((size_t)cfg->learner.batch_groups, &L->intake) != PV_OK)
        return PV_ERR_NOMEM;
    pv_intake_set_token_space(L->intake, pv_policy_token_space(trainer->policy));
    L->n_lanes = 1;
    return s_lane_init(L, &L->lane[0], env, trainer->work);
}

pv_err_t pv_local_set_threads(pv_local_t *L, unsigned n, pv_errmsg_t *em)
{
    if (n < 1)
        n = 1;
    if (n > S_MAX_LANES)
        n = S_MAX_LANES;
    if (L->llm) /* the llm judge's client is one conversation at a time */
        n = 1;
    for (size_t l = L->n_lanes; l < n; l++) {
        pv_err_t rc = s_lane_init(L, &L->lane[l], NULL, NULL);
        if (rc != PV_OK) {
            s_lane_fini(&L->lane[l]);
            return pv_errf(em, rc, "rollout thread %zu: no memory for its environment and scratch",
                           l);
        }
        L->n_lanes = l + 1;
    }
    return PV_OK;
}

void pv_local_destroy(pv_local_t **L)
{
    if (!L || !*L)
        return;
    pv_local_t *s = *L;
    pv_train_cfg_fini(&s->tc);
    pv_intake_destroy(&s->intake);
    pv_llm_judge_destroy(&s->llm);
    for (size_t l = 0; l < S_MAX_LANES; l++)
        if (s->lane[l].trajs || s->lane[l].env)
            s_lane_fini(&s->lane[l]);
    free(s);
    *L = NULL;
}

const pv_train_cfg_t *pv_local_train_cfg(const pv_local_t *L)
{
    return &L->tc;
}

const pv_intake_t *pv_local_intake(const pv_local_t *L)
{
    return L->intake;
}

bool pv_local_llm_cost(const pv_local_t *L, pv_health_llm_t *out)
{
    if (!L->llm)
        return false;
    pv_llm_stats_t ls;
    pv_llm_judge_stats(L->llm, &ls);
    pv_arena_t *arena = NULL;
    pv_wire_run_status_t st;
    bool ok = pv_arena_new(0, 0, &arena) == PV_OK && pv_llm_status(&ls, NULL, arena, &st) == PV_OK;
    if (ok)
        pv_health_llm_from_status(out, &st);
    pv_arena_destroy(&arena);
    return ok;
}

/* prover.judge = llm in one process: ask the model and wait for its proposal (or the
 * contrast fallback's, at the latest after judge.group_timeout_ms); *judge gets the judge
 * to credit ("llm" or "contrast-fallback"). algorithm.triage_labels = llm: its TRIAGE roles
 * ("llm" or "model-free-fallback"). */
static pv_err_t s_llm_propose(pv_local_t *L, s_lane_t *ln, pv_jgroup_t *g, const char **judge,
                              pv_errmsg_t *em)
{
    pv_llm_group_t lg = pv_jgroup_llm_group(g, &ln->jo, 0);
    uint64_t ticket;
    pv_err_t rc = pv_llm_judge_submit(L->llm, &lg, &ticket, em);
    pv_llm_result_t r;
    while (rc == PV_OK && (rc = pv_llm_judge_take(L->llm, ticket, &r)) == PV_ERR_AGAIN)
        if ((rc = pv_llm_judge_poll(L->llm, 50)) != PV_OK)
            pv_llm_judge_cancel(L->llm, ticket);
    if (rc != PV_OK)
        return pv_errf(em, rc, "llm judge: %s", pv_strerror(rc));
    if (g->labelling) { /* algorithm.triage_labels = llm: the roles are in g->roles */
        *judge = pv_llm_labels_judge(&r);
        return pv_jgroup_labels_done(g, r.labels.labelled);
    }
    *judge = pv_llm_result_judge(&r);
    return pv_jgroup_adopt(g, &ln->jo, &r.seg, r.n_segs, ln->judge);
}

/* The judge and its verifiers on lane ln's scratch; `seq` numbers the verify jobs. */
static pv_err_t s_judge(pv_local_t *L, s_lane_t *ln, uint64_t seq, const uint8_t *group, size_t len,
                        pv_wire_buf_t *out, pv_jg_stats_t *st, pv_errmsg_t *em)
{
    if (st)
        memset(st, 0, sizeof *st);
    if (!L->tc.plan.needs_judge) {
        out->len = 0;
        return pv_wire_buf_append(out, group, len);
    }
    pv_arena_reset(ln->judge);
    pv_wire_msg_t m;
    pv_err_t rc = pv_wire_decode(ln->dec, group, len, ln->judge, &m, em);
    if (rc == PV_OK && m.type != PV_MSG_ROLLOUT_GROUP)
        rc = pv_errf(em, PV_ERR_DATA, "a %s message, not ROLLOUT_GROUP",
                     pv_wire_type_name(m.type) ? pv_wire_type_name(m.type) : "?");
    pv_jgroup_t g;
    if (rc == PV_OK)
        rc = pv_jgroup_open(&g, &ln->jo, &m.rollout_group, 0, ln->judge, em);
    const char *name = ln->jo.prover ? pv_judge_kind_name(ln->jo.judge) : "none";
    if (rc == PV_OK && g.awaiting)
        rc = s_llm_propose(L, ln, &g, &name, em);
    pv_vjob_ctx_t vc = {.model = L->model,
                        .env = ln->env,
                        .policy = L->trainer->policy,
                        .work = ln->work,
                        .arena = ln->cont,
                        .keep = ln->judge,
                        .envs = ln->pool.envs,
                        .n_envs = ln->pool.n};
    for (size_t j = 0; rc == PV_OK && j < g.n_jobs; j++) {
        uint64_t id = pv_verify_job_id(0, (uint32_t)seq, (uint32_t)j);
        pv_wire_verify_job_t job;
        pv_wire_verify_result_t r;
        pv_jgroup_job_msg(&g, &ln->jo, j, id, &job);
        if ((rc = pv_vjob_run(&vc, &job, &r, em)) == PV_OK)
            rc = pv_jgroup_result(&g, j, id, &r);
    }
    pv_wire_msg_t cm = {.type = PV_MSG_CREDITED_GROUP};
    if (rc == PV_OK && (rc = pv_jgroup_credited(&g, name, ln->judge, &cm.credited_group)) == PV_OK)
        rc = pv_wire_encode(&cm, NULL, out, em);
    if (rc == PV_OK && st)
        *st = g.st;
    return rc;
}

pv_err_t pv_local_judge(pv_local_t *L, const uint8_t *group, size_t len, pv_wire_buf_t *out,
                        pv_jg_stats_t *st, pv_errmsg_t *em)
{
    return s_judge(L, &L->lane[0], L->seq, group, len, out, st, em);
}

/* Group number ln->seq on lane ln: played, encoded and judged into ln->credited. Its
 * sampling stream is seeded from run.seed and the group's number, so a group plays the same
 * whichever lane plays it and however many lanes there are. */
static void s_play(pv_local_t *L, s_lane_t *ln)
{
    pv_errmsg_t *em = &ln->em;
    em->text[0] = 0;
    memset(&ln->rollout, 0, sizeof ln->rollout);
    memset(&ln->js, 0, sizeof ln->js);
    ln->mixed = 0;
    uint32_t G = (uint32_t)L->cfg.actor.group_size;
    pv_rng_seed(
        &ln->rng,
        pv_rng_mix(pv_rng_mix((uint64_t)L->cfg.run.seed, 0x6163746f72u /* "actor" */), ln->seq), 0);
    pv_task_t task = pv_actor_task(&L->sched, ln->seq);
    uint64_t id = pv_actor_job_id(0, ln->seq);
    pv_err_t rc =
        pv_actor_play_group(&ln->actor, &task, G, (int64_t)id, ln->trajs, &ln->rollout, em);
    if (rc == PV_OK) {
        size_t wins = 0;
        for (uint32_t i = 0; i < G; i++)
            wins += ln->trajs[i].won;
        ln->mixed = wins > 0 && wins < G;
        pv_group_meta_t meta = {.group_id = id,
                                .actor_id = 0,
                                .kind = pv_env_model_kind(L->model),
                                .env_name = L->cfg.env.name,
                                .task = task};
        bool with_states = ln->actor.save_states && pv_run_plan_judges_group(&L->tc.plan, wins, G);
        pv_arena_reset(ln->wire);
        rc = pv_actor_encode_group(ln->trajs, G, &meta, with_states, ln->wire, &ln->group, em);
    }
    if (rc == PV_OK)
        rc = s_judge(L, ln, ln->seq, ln->group.data, ln->group.len, &ln->credited, &ln->js, em);
    ln->rc = rc;
}

typedef struct s_play_arg {
    pv_local_t *L;
    s_lane_t *ln;
} s_play_arg_t;

static void *s_play_thread(void *arg)
{
    s_play_arg_t *a = arg;
    s_play(a->L, a->ln);
    return NULL;
}

/* Groups L->seq .. L->seq + n (n <= lanes) at once, lane l on group L->seq + l (lane 0 in
 * this thread), then taken by the intake in their order. */
static pv_err_t s_round(pv_local_t *L, size_t n, pv_local_stats_t *st, pv_errmsg_t *em)
{
    pthread_t th[S_MAX_LANES];
    s_play_arg_t args[S_MAX_LANES];
    bool started[S_MAX_LANES] = {false};
    for (size_t l = 0; l < n; l++)
        L->lane[l].seq = L->seq + l;
    for (size_t l = 1; l < n; l++) {
        args[l] = (s_play_arg_t){L, &L->lane[l]};
        started[l] = pthread_create(&th[l], NULL, s_play_thread, &args[l]) == 0;
    }
    s_play(L, &L->lane[0]);
    for (size_t l = 1; l < n; l++) {
        if (started[l])
            pthread_join(th[l], NULL);
        else /* no thread to be had: here, after lane 0 */
            s_play(L, &L->lane[l]);
    }
    pv_err_t rc = PV_OK;
    for (size_t l = 0; l < n && rc == PV_OK; l++) {
        s_lane_t *ln = &L->lane[l];
        if ((rc = ln->rc) != PV_OK) {
            pv_errf(em, rc, "%s", ln->em.text[0] ? ln->em.text : pv_strerror(rc));
            break;
        }
        st->rollout.env_steps += ln->rollout.env_steps;
        st->rollout.decisions += ln->rollout.decisions;
        st->rollout.skipped += ln->rollout.skipped;
        st->mixed += ln->mixed;
        st->verify.env_steps += ln->js.env_steps;
        st->verify.decisions += ln->js.policy_tokens;
        pv_intake_verdict_t v;
        rc = pv_intake_add(L->intake, ln->credited.data, ln->credited.len,
                           pv_policy_version(L->trainer->policy),
                           (uint64_t)L->cfg.learner.max_policy_lag, &v, em);
        if (rc == PV_OK && v != PV_INTAKE_ACCEPTED)
            rc = pv_errf(em, PV_ERR_STATE, "the learner's intake refused group %llu (verdict %d)",
                         (unsigned long long)pv_actor_job_id(0, ln->seq), (int)v);
        L->seq++;
        st->groups++;
    }
    return rc;
}

pv_err_t pv_local_iteration(pv_local_t *L, pv_local_stats_t *st, pv_errmsg_t *em)
{
    memset(st, 0, sizeof *st);
    pv_intake_reset(L->intake);
    pv_err_t rc = PV_OK;
    double t0 = pv_mono_s();
    for (size_t g = 0, B = (size_t)L->cfg.learner.batch_groups; rc == PV_OK && g < B;) {
        size_t n = B - g < L->n_lanes ? B - g : L->n_lanes;
        rc = s_round(L, n, st, em);
        g += n;
    }
    if (rc != PV_OK)
        return rc;
    size_t n = 0, n_segs = 0;
    const pv_traj_t *trajs = pv_intake_trajs(L->intake, &n);
    const pv_verified_seg_t *segs = pv_intake_segments(L->intake, &n_segs);
    const pv_intake_stats_t *b = pv_intake_stats(L->intake);
    st->success = b->trajectories ? (double)b->won / (double)b->trajectories : 0.0;
    st->mean_len = b->trajectories ? (double)b->steps / (double)b->trajectories : 0.0;
    st->invalid_rate = b->steps ? (double)b->refused / (double)b->steps : 0.0;
    st->action_tokens = b->action_tokens;
    st->proposals = b->proposals;
    st->verified = b->verified;
    st->positive = b->positive;
    st->mean_delta = b->verified ? b->delta_sum / (double)b->verified : 0.0;
    st->noise_positive = b->noise_pos_sum;
    st->turns = b->turns_sum;
    st->reused_rows = b->reused_rows;
    st->precision_samples = b->precision_samples;
    st->precision_hits = b->precision_hits;
    double t1 = pv_mono_s();
    st->play_s = t1 - t0;
    pv_batch_t batch;
    pv_adv_stats_t as = {0};
    rc = pv_batch_build(trajs, n, &batch, em);
    if (rc != PV_OK)
        return rc;
    rc = pv_batch_advantages(&batch, trajs, n, &L->tc.adv, segs, n_segs, &as, em);
    st->n_credited = as.n_credited;
    st->adv = as;
    if (rc == PV_OK)
        rc = pv_update_ppo(L->trainer, trajs, &batch, &L->tc.update, &st->update, em);
    if (rc == PV_OK)
        rc = pv_update_check_finite(&st->update, ++L->iterations, em);
    st->update_s = pv_mono_s() - t1;
    pv_batch_free(&batch);
    return rc;
}
