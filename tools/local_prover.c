/* local_prover.c - the in-process pipeline; see local_prover.h. */
#include "tools/local_prover.h"

#include <stdlib.h>
#include <string.h>

#include "actor/actor_group.h"
#include "common/wire/job_ids.h"
#include "judge/llm_judge.h"
#include "judge/llm_role.h"
#include "judge/verify_job.h"
#include "learner/intake.h"

struct pv_local {
    pv_config_t cfg;
    pv_train_cfg_t tc;
    pv_jg_opts_t jo;
    const pv_env_model_t *model;
    pv_env_t *env;
    pv_trainer_t *trainer;
    pv_actor_sched_t sched;
    pv_actor_ctx_t actor;
    pv_rng_t rng; /* the actor's sampling */
    pv_traj_t *trajs;
    uint64_t seq;        /* groups played */
    uint64_t iterations; /* updates done */
    pv_arena_t *play, *wire, *judge, *cont;
    pv_wire_dec_t *dec;
    pv_wire_buf_t group, credited, scratch;
    pv_intake_t *intake;
    pv_llm_judge_t *llm; /* prover.judge = llm: asked one group at a time */
};

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
    L->env = env;
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
                                  .run_seed = (uint64_t)cfg->run.seed};
    /* seeded as prover-actor 0 seeds its sampling */
    pv_rng_seed(&L->rng, pv_rng_mix((uint64_t)cfg->run.seed, 0x6163746f72u /* "actor" */), 0);
    size_t G = (size_t)cfg->actor.group_size;
    L->trajs = calloc(G, sizeof *L->trajs);
    if (!L->trajs || pv_arena_new(1u << 20, 0, &L->play) != PV_OK ||
        pv_arena_new(1u << 16, 0, &L->wire) != PV_OK ||
        pv_arena_new(1u << 20, 0, &L->judge) != PV_OK ||
        pv_arena_new(1u << 16, 0, &L->cont) != PV_OK || pv_wire_dec_new(NULL, &L->dec) != PV_OK ||
        pv_intake_new((size_t)cfg->learner.batch_groups, &L->intake) != PV_OK)
        return PV_ERR_NOMEM;
    pv_intake_set_token_space(L->intake, pv_policy_token_space(trainer->policy));
    pv_wire_buf_init(&L->group, 0);
    pv_wire_buf_init(&L->credited, 0);
    pv_wire_buf_init(&L->scratch, 0);
    L->actor = (pv_actor_ctx_t){.model = model,
                                .env = env,
                                .policy = trainer->policy,
                                .work = trainer->work,
                                .rng = cfg->actor.temperature == 0.0 ? NULL : &L->rng,
                                .arena = L->play,
                                .save_states = L->tc.plan.save_states,
                                .task_keys = L->tc.plan.keys == PV_STATE_KEY_TASK,
                                .max_steps = (uint32_t)cfg->env.max_steps};
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
    pv_wire_buf_free(&s->group);
    pv_wire_buf_free(&s->credited);
    pv_wire_buf_free(&s->scratch);
    pv_wire_dec_destroy(&s->dec);
    pv_arena_destroy(&s->cont);
    pv_arena_destroy(&s->judge);
    pv_arena_destroy(&s->wire);
    pv_arena_destroy(&s->play);
    free(s->trajs);
    free(s);
    *L = NULL;
}

const pv_train_cfg_t *pv_local_train_cfg(const pv_local_t *L)
{
    return &L->tc;
}

/* prover.judge = llm in one process: ask the model and wait for its proposal (or the
 * contrast fallback's, at the latest after judge.group_timeout_ms); *judge gets the judge
 * to credit ("llm" or "contrast-fallback"). algorithm.triage_labels = llm: its TRIAGE roles
 * ("llm" or "model-free-fallback"). */
static pv_err_t s_llm_propose(pv_local_t *L, pv_jgroup_t *g, const char **judge, pv_errmsg_t *em)
{
    pv_llm_group_t lg = pv_jgroup_llm_group(g, &L->jo, 0);
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
    return pv_jgroup_adopt(g, &L->jo, &r.seg, r.n_segs, L->judge);
}

pv_err_t pv_local_judge(pv_local_t *L, const uint8_t *group, size_t len, pv_wire_buf_t *out,
                        pv_jg_stats_t *st, pv_errmsg_t *em)
{
    if (st)
        memset(st, 0, sizeof *st);
    if (!L->tc.plan.needs_judge) {
        out->len = 0;
        return pv_wire_buf_append(out, group, len);
    }
    pv_arena_reset(L->judge);
    pv_wire_msg_t m;
    pv_err_t rc = pv_wire_decode(L->dec, group, len, L->judge, &m, em);
    if (rc == PV_OK && m.type != PV_MSG_ROLLOUT_GROUP)
        rc = pv_errf(em, PV_ERR_DATA, "a %s message, not ROLLOUT_GROUP",
                     pv_wire_type_name(m.type) ? pv_wire_type_name(m.type) : "?");
    pv_jgroup_t g;
    if (rc == PV_OK)
        rc = pv_jgroup_open(&g, &L->jo, &m.rollout_group, 0, L->judge, em);
    const char *name = L->jo.prover ? pv_judge_kind_name(L->jo.judge) : "none";
    if (rc == PV_OK && g.awaiting)
        rc = s_llm_propose(L, &g, &name, em);
    pv_vjob_ctx_t vc = {.model = L->model,
                        .env = L->env,
                        .policy = L->trainer->policy,
                        .work = L->trainer->work,
                        .arena = L->cont,
                        .keep = L->judge};
    for (size_t j = 0; rc == PV_OK && j < g.n_jobs; j++) {
        uint64_t id = pv_verify_job_id(0, (uint32_t)L->seq, (uint32_t)j);
        pv_wire_verify_job_t job;
        pv_wire_verify_result_t r;
        pv_jgroup_job_msg(&g, &L->jo, j, id, &job);
        if ((rc = pv_vjob_run(&vc, &job, &r, em)) == PV_OK)
            rc = pv_jgroup_result(&g, j, id, &r);
    }
    pv_wire_msg_t cm = {.type = PV_MSG_CREDITED_GROUP};
    if (rc == PV_OK && (rc = pv_jgroup_credited(&g, name, L->judge, &cm.credited_group)) == PV_OK)
        rc = pv_wire_encode(&cm, NULL, out, em);
    if (rc == PV_OK && st)
        *st = g.st;
    return rc;
}

/* One group: played by the actor, judged, taken by the intake. */
static pv_err_t s_group(pv_local_t *L, pv_local_stats_t *st, pv_errmsg_t *em)
{
    uint32_t G = (uint32_t)L->cfg.actor.group_size;
    pv_task_t task = pv_actor_task(&L->sched, L->seq);
    uint64_t id = pv_actor_job_id(0, L->seq);
    pv_err_t rc = pv_actor_play_group(&L->actor, &task, G, (int64_t)id, L->trajs, &st->rollout, em);
    if (rc != PV_OK)
        return rc;
    size_t wins = 0;
    for (uint32_t i = 0; i < G; i++)
        wins += L->trajs[i].won;
    st->mixed += wins > 0 && wins < G;
    pv_group_meta_t meta = {.group_id = id,
                            .actor_id = 0,
                            .kind = pv_env_model_kind(L->model),
                            .env_name = L->cfg.env.name,
                            .task = task};
    bool with_states = L->actor.save_states && pv_run_plan_judges_group(&L->tc.plan, wins, G);
    pv_arena_reset(L->wire);
    rc = pv_actor_encode_group(L->trajs, G, &meta, with_states, L->wire, &L->group, em);
    pv_jg_stats_t js;
    if (rc == PV_OK)
        rc = pv_local_judge(L, L->group.data, L->group.len, &L->credited, &js, em);
    if (rc != PV_OK)
        return rc;
    st->verify.env_steps += js.env_steps;
    st->verify.decisions += js.policy_tokens;
    pv_intake_verdict_t v;
    rc = pv_intake_add(L->intake, L->credited.data, L->credited.len,
                       pv_policy_version(L->trainer->policy),
                       (uint64_t)L->cfg.learner.max_policy_lag, &v, em);
    if (rc == PV_OK && v != PV_INTAKE_ACCEPTED)
        rc = pv_errf(em, PV_ERR_STATE, "the learner's intake refused group %llu (verdict %d)",
                     (unsigned long long)id, (int)v);
    L->seq++;
    st->groups++;
    return rc;
}

pv_err_t pv_local_iteration(pv_local_t *L, pv_local_stats_t *st, pv_errmsg_t *em)
{
    memset(st, 0, sizeof *st);
    pv_intake_reset(L->intake);
    pv_err_t rc = PV_OK;
    for (int64_t g = 0; rc == PV_OK && g < L->cfg.learner.batch_groups; g++)
        rc = s_group(L, st, em);
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
    pv_batch_free(&batch);
    return rc;
}
