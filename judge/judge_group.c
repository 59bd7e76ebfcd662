/* judge_group.c - one group's proposals, verify jobs and results; see judge_group.h. */
#include "judge/judge_group.h"

#include <string.h>

#include "common/traj/triage.h"
#include "common/wire/job_ids.h"
#include "judge/precision.h"
#include "common/traj/traj_wire.h"

#define S_MAX_SEGMENTS 4096u /* CREDITED_GROUP.segments MAX */
#define S_MAX_HISTORY  4096u /* VERIFY_JOB.history MAX: o_0 .. o_t needs 2t + 1 */

static pv_err_t s_views(pv_jgroup_t *g, const pv_jg_opts_t *o, pv_arena_t *arena,
                        pv_traj_view_t **out)
{
    pv_traj_view_t *v = pv_arena_calloc(arena, g->n_trajs, sizeof *v);
    if (!v)
        return PV_ERR_NOMEM;
    for (size_t i = 0; i < g->n_trajs; i++) {
        const pv_traj_t *tr = &g->trajs[i];
        bool *refused = pv_arena_calloc(arena, tr->n_steps ? tr->n_steps : 1, sizeof *refused);
        if (!refused)
            return PV_ERR_NOMEM;
        for (size_t t = 0; t < tr->n_steps; t++)
            refused[t] = tr->steps[t].refused;
        v[i] = (pv_traj_view_t){.success = tr->won,
                                .n_steps = (uint32_t)tr->n_steps,
                                .state_keys = tr->state_keys,
                                .refused = refused,
                                .texts = tr->texts};
    }
    /* the oracle reads the expert's plan lengths along the shortest success only */
    int64_t s = pv_group_shortest_success(v, g->n_trajs);
    if (o->judge == PV_JUDGE_ORACLE && s >= 0) {
        int32_t *len;
        pv_err_t rc = pv_expert_lens(o->env, &g->trajs[s], arena, &len);
        if (rc != PV_OK)
            return rc;
        v[s].expert_len = len;
    }
    *out = v;
    return PV_OK;
}

/* State t of `tr` can be sent: it was saved and its history fits a VERIFY_JOB. */
static bool s_state_ok(const pv_traj_t *tr, uint32_t t)
{
    return tr->states && t <= tr->n_steps && tr->states[t] && tr->state_len[t] > 0 &&
           2u * (uint64_t)t + 1u <= S_MAX_HISTORY;
}

/* Estimated environment steps of K continuations from step t (the budgeted quantity). */
static uint64_t s_side_cost(const pv_jg_opts_t *o, uint32_t t)
{
    return t < o->max_steps ? (uint64_t)o->k * (o->max_steps - t) : 0;
}

/* Filter, budget and lay out the jobs of the proposals in g->segs. */
static void s_plan_jobs(pv_jgroup_t *g, const pv_jg_opts_t *o)
{
    for (size_t i = 0; i < g->n_segs; i++) {
        pv_jg_seg_t *s = &g->segs[i];
        const pv_traj_t *tr = &g->trajs[s->prop.traj];
        bool terminal = s->prop.t1 >= tr->n_steps;
        s->side[0] = s->side[1] = PV_JG_NONE;
        if (s->prop.expect < 0 && !o->verify_failures) {
            g->st.skipped_sign++;
            continue;
        }
        if (!s_state_ok(tr, s->prop.t0) || (!terminal && !s_state_ok(tr, s->prop.t1))) {
            s->side[0] = s->side[1] = PV_JG_FAILED;
            g->st.missing_states++;
            continue;
        }
        uint64_t cost = s_side_cost(o, s->prop.t0) + (terminal ? 0 : s_side_cost(o, s->prop.t1));
        if (o->verify_budget && g->st.est_steps + cost > o->verify_budget) {
            g->st.dropped_budget++;
            continue;
        }
        g->st.est_steps += cost;
        s->side[0] = PV_JG_PENDING;
        g->jobs[g->n_jobs++] =
            (pv_jg_job_t){.seg = (uint32_t)i, .side = 0, .traj = s->prop.traj, .t = s->prop.t0};
        if (terminal) {
            s->side[1] = PV_JG_TERMINAL;
        } else {
            s->side[1] = PV_JG_PENDING;
            g->jobs[g->n_jobs++] =
                (pv_jg_job_t){.seg = (uint32_t)i, .side = 1, .traj = s->prop.traj, .t = s->prop.t1};
        }
    }
}

pv_jg_opts_t *pv_jg_opts_from_config(const pv_run_plan_t *plan, const pv_config_t *cfg,
                                     uint32_t max_steps, pv_env_t *env, pv_jg_opts_t *out)
{
    bool oracle = plan->judge == PV_JUDGE_ORACLE || cfg->prover.measure_precision;
    *out = (pv_jg_opts_t){.prover = plan->prover,
                          .judge = plan->judge,
                          .k = (uint32_t)cfg->prover.k,
                          .max_segments = (uint32_t)cfg->prover.max_segments,
                          .max_turns = (uint32_t)cfg->prover.max_segment_turns,
                          .min_successes = plan->min_successes,
                          .max_successes = plan->max_successes,
                          .verify_budget = (uint64_t)cfg->prover.verify_budget,
                          .verify_failures = plan->verify_failures,
                          .max_steps = max_steps,
                          .run_seed = (uint64_t)cfg->run.seed,
                          .timeout_ms = (uint64_t)cfg->prover.verify_timeout_ms,
                          .measure_precision = cfg->prover.measure_precision,
                          .reuse_continuations = cfg->prover.reuse_continuations,
                          .env = oracle ? env : NULL,
                          .token_space = strcmp(cfg->policy.kind, "bow_mlp") == 0
                                             ? PV_TRAJ_CANDIDATE_TOKENS
                                             : PV_TRAJ_ANY_TOKENS,
                          .triage_llm = plan->triage_llm};
    pv_contrast_rule_parse(cfg->prover.contrast_rule, &out->contrast_rule); /* config-checked */
    return out;
}

/* The proposals prop[0..n) become the group's segments: precision labels, sign filter,
 * budget, jobs (g->segs and g->jobs hold max_segments, or every step for exhaustive). */
static pv_err_t s_take_proposals(pv_jgroup_t *g, const pv_jg_opts_t *o, const pv_segment_t *prop,
                                 size_t n, pv_arena_t *arena, pv_errmsg_t *em)
{
    for (size_t i = 0; i < n; i++)
        g->segs[i].prop = prop[i];
    g->n_segs = n;
    g->st.proposals = (uint32_t)n;
    pv_err_t rc;
    if (o->measure_precision &&
        (rc = pv_judge_precision(o->env, g->trajs, g->views, g->n_trajs, prop, n, o->max_steps,
                                 arena, &g->st.precision_hits, &g->st.precision_samples)) != PV_OK)
        return pv_errf(em, rc, "judge precision: %s", pv_strerror(rc));
    s_plan_jobs(g, o);
    return PV_OK;
}

pv_err_t pv_jgroup_open(pv_jgroup_t *g, const pv_jg_opts_t *o, const pv_wire_rollout_group_t *wire,
                        uint64_t now_ms, pv_arena_t *arena, pv_errmsg_t *em)
{
    memset(g, 0, sizeof *g);
    pv_rng_t rng;
    pv_rng_seed(&rng, pv_judge_seed(o->run_seed, wire->group_id), 0);
    g->wire = wire;
    g->k = o->k;
    g->deadline_ms = now_ms + o->timeout_ms;
    pv_err_t rc = pv_traj_group_from_wire_ts(wire, o->prover, o->token_space, arena, &g->trajs,
                                             &g->n_trajs, em);
    if (rc != PV_OK)
        return rc;
    if (g->n_trajs == 0)
        return pv_errf(em, PV_ERR_DATA, "group %llu has no trajectory",
                       (unsigned long long)wire->group_id);
    for (size_t i = 0; i < g->n_trajs; i++)
        for (size_t t = 0; t < g->trajs[i].n_steps; t++)
            if (g->trajs[i].steps[t].policy_version > g->newest_version)
                g->newest_version = g->trajs[i].steps[t].policy_version;
    if (o->triage_llm) { /* TRIAGE's labels from the model, later: pv_jgroup_labels_done */
        for (size_t i = 0; i < g->n_trajs; i++)
            g->n_roles += g->trajs[i].n_steps;
        g->roles = pv_arena_alloc(arena, g->n_roles ? g->n_roles : 1, 0);
        if (!g->roles)
            return pv_errf(em, PV_ERR_NOMEM, "judge: arena full");
        memset(g->roles, PV_TRIAGE_ROLE_NONE, g->n_roles);
        g->labelling = g->awaiting = true;
        return PV_OK;
    }
    if (!o->prover)
        return PV_OK;
    if ((o->judge == PV_JUDGE_ORACLE || o->measure_precision) && !o->env)
        return pv_errf(em, PV_ERR_INVAL,
                       "the oracle (judge or precision) needs an environment "
                       "instance");
    pv_traj_view_t *views;
    if ((rc = s_views(g, o, arena, &views)) != PV_OK)
        return pv_errf(em, rc, "judge: arena full");
    pv_propose_opts_t po = {.kind = o->judge,
                            .max_segments = o->max_segments,
                            .max_turns = o->max_turns ? o->max_turns : 4,
                            .min_successes = o->min_successes ? o->min_successes : 1,
                            .max_successes = o->max_successes ? o->max_successes : UINT32_MAX,
                            .max_steps = o->max_steps,
                            .rule = o->contrast_rule};
    g->mixed = pv_group_is_mixed(views, g->n_trajs);
    g->eligible = pv_group_is_eligible(views, g->n_trajs, po.min_successes, po.max_successes);
    if (!g->eligible)
        return PV_OK;
    size_t total = 0;
    for (size_t i = 0; i < g->n_trajs; i++)
        total += g->trajs[i].n_steps;
    size_t cap = o->judge == PV_JUDGE_EXHAUSTIVE ? total : o->max_segments;
    cap = cap < S_MAX_SEGMENTS ? (cap ? cap : 1) : S_MAX_SEGMENTS;
    pv_segment_t *prop = pv_arena_calloc(arena, cap, sizeof *prop);
    g->segs = pv_arena_calloc(arena, cap, sizeof *g->segs);
    g->jobs = pv_arena_calloc(arena, 2 * cap, sizeof *g->jobs);
    if (!prop || !g->segs || !g->jobs)
        return pv_errf(em, PV_ERR_NOMEM, "judge: arena full");
    g->views = views;
    g->po = po;
    if (o->judge == PV_JUDGE_LLM) { /* proposals later, from pv_jgroup_adopt */
        g->awaiting = true;
        return PV_OK;
    }
    size_t n = 0;
    rc = pv_judge_propose(&po, views, g->n_trajs, arena, &rng, prop, cap, &n);
    if (rc != PV_OK && rc != PV_ERR_LIMIT) /* LIMIT: exhaustive beyond the cap keeps the first */
        return pv_errf(em, rc, "judge %s: %s", pv_judge_kind_name(o->judge), pv_strerror(rc));
    return s_take_proposals(g, o, prop, n, arena, em);
}

pv_err_t pv_jgroup_adopt(pv_jgroup_t *g, const pv_jg_opts_t *o, const pv_segment_t *segs, size_t n,
                         pv_arena_t *arena)
{
    if (!g->awaiting)
        return PV_ERR_STATE;
    n = n < o->max_segments ? n : o->max_segments;
    for (size_t i = 0; i < n; i++)
        if (segs[i].traj >= g->n_trajs || segs[i].t0 >= segs[i].t1 ||
            segs[i].t1 > g->trajs[segs[i].traj].n_steps)
            return PV_ERR_RANGE;
    g->awaiting = false;
    return s_take_proposals(g, o, segs, n, arena, NULL);
}

pv_err_t pv_jgroup_labels_done(pv_jgroup_t *g, size_t labelled)
{
    if (!g->labelling || !g->awaiting)
        return PV_ERR_STATE;
    g->awaiting = false;
    g->labelled = labelled;
    return PV_OK;
}

/* A labelling group's triage_labels: the trajectories with a labelled turn. */
static pv_err_t s_labels(const pv_jgroup_t *g, pv_arena_t *arena, pv_wire_credited_group_t *out)
{
    if (!g->labelling || g->labelled == 0)
        return PV_OK;
    pv_wire_turn_roles_t *tl = pv_arena_calloc(arena, g->n_trajs, sizeof *tl);
    if (!tl)
        return PV_ERR_NOMEM;
    uint32_t n = 0;
    for (size_t i = 0, off = 0; i < g->n_trajs; off += g->trajs[i].n_steps, i++) {
        size_t ns = g->trajs[i].n_steps;
        bool any = false;
        for (size_t t = 0; t < ns && !any; t++)
            any = g->roles[off + t] != PV_TRIAGE_ROLE_NONE;
        if (!any)
            continue;
        uint32_t *r = pv_arena_alloc(arena, ns * sizeof *r, 0);
        if (!r)
            return PV_ERR_NOMEM;
        for (size_t t = 0; t < ns; t++)
            r[t] = g->roles[off + t];
        tl[n++] = (pv_wire_turn_roles_t){.traj = (uint32_t)i, .roles = r, .n_roles = (uint32_t)ns};
    }
    out->triage_labels = tl;
    out->n_triage_labels = n;
    return PV_OK;
}

void pv_jgroup_job_msg(const pv_jgroup_t *g, const pv_jg_opts_t *o, size_t j, uint64_t job_id,
                       pv_wire_verify_job_t *out)
{
    PV_ASSERT(j < g->n_jobs);
    const pv_jg_job_t *job = &g->jobs[j];
    const pv_traj_t *tr = &g->trajs[job->traj];
    const pv_wire_rollout_group_t *w = g->wire;
    *out = (pv_wire_verify_job_t){
        .job_id = job_id,
        .group_id = w->group_id,
        .segment_id = job->seg,
        .side = job->side,
        .env = w->env,
        .task = w->task,
        .task_text = w->task_text,
        .state = {tr->states[job->t], tr->state_len[job->t]},
        .history = tr->texts,
        .n_history = 2 * job->t + 1,
        .k = g->k,
        .policy_version = g->newest_version,
        .max_steps = o->max_steps,
        .seed = pv_verify_seed(o->run_seed, w->group_id, job->seg, job->side),
        .want_continuations = o->reuse_continuations,
    };
}

static void s_resolve(pv_jgroup_t *g, pv_jg_job_t *job, uint8_t state)
{
    g->segs[job->seg].side[job->side] = state;
    job->resolved = true;
    g->n_resolved++;
    if (state == PV_JG_FAILED)
        g->st.failed_jobs++;
}

pv_err_t pv_jgroup_result(pv_jgroup_t *g, size_t j, uint64_t job_id,
                          const pv_wire_verify_result_t *r)
{
    if (j >= g->n_jobs)
        return PV_ERR_RANGE;
    pv_jg_job_t *job = &g->jobs[j];
    if (job->resolved)
        return PV_ERR_STATE;
    if (r->job_id != job_id || r->group_id != g->wire->group_id || r->segment_id != job->seg ||
        r->side != job->side || r->k == 0 || r->successes > r->k) {
        g->st.bad_results++;
        s_resolve(g, job, PV_JG_FAILED);
        return PV_ERR_DATA;
    }
    pv_jg_seg_t *s = &g->segs[job->seg];
    s->successes[job->side] = r->successes;
    s->k[job->side] = r->k;
    job->conts = r->continuations;
    job->n_conts = r->n_continuations;
    g->st.env_steps += r->env_steps;
    g->st.policy_tokens += r->policy_tokens;
    s_resolve(g, job, PV_JG_DONE);
    return PV_OK;
}

pv_err_t pv_jgroup_fail(pv_jgroup_t *g, size_t j)
{
    if (j >= g->n_jobs)
        return PV_ERR_RANGE;
    if (g->jobs[j].resolved)
        return PV_ERR_STATE;
    s_resolve(g, &g->jobs[j], PV_JG_FAILED);
    return PV_OK;
}

size_t pv_jgroup_expire(pv_jgroup_t *g, uint64_t now_ms)
{
    size_t n = 0;
    if (now_ms < g->deadline_ms)
        return 0;
    for (size_t j = 0; j < g->n_jobs; j++)
        if (!g->jobs[j].resolved) {
            s_resolve(g, &g->jobs[j], PV_JG_FAILED);
            n++;
        }
    return n;
}

bool pv_jgroup_done(const pv_jgroup_t *g)
{
    return !g->awaiting && g->n_resolved == g->n_jobs;
}

void pv_jgroup_estimate(const pv_jgroup_t *g, size_t i, float *p_before, float *p_after,
                        bool *verified)
{
    const pv_jg_seg_t *s = &g->segs[i];
    *p_before = s->side[0] == PV_JG_DONE ? (float)s->successes[0] / (float)s->k[0] : 0.0f;
    if (s->side[1] == PV_JG_DONE)
        *p_after = (float)s->successes[1] / (float)s->k[1];
    else if (s->side[1] == PV_JG_TERMINAL)
        *p_after = g->trajs[s->prop.traj].won ? 1.0f : 0.0f;
    else
        *p_after = 0.0f;
    *verified =
        s->side[0] == PV_JG_DONE && (s->side[1] == PV_JG_DONE || s->side[1] == PV_JG_TERMINAL);
}

pv_err_t pv_jgroup_credited(const pv_jgroup_t *g, const char *judge_name, pv_arena_t *arena,
                            pv_wire_credited_group_t *out)
{
    const pv_wire_rollout_group_t *w = g->wire;
    size_t nt = w->n_trajectories;
    pv_wire_trajectory_t *tr = pv_arena_calloc(arena, nt ? nt : 1, sizeof *tr);
    pv_wire_segment_t *segs = pv_arena_calloc(arena, g->n_segs ? g->n_segs : 1, sizeof *segs);
    if (!tr || !segs)
        return PV_ERR_NOMEM;
    for (size_t i = 0; i < nt; i++) { /* the learner needs no saved state */
        tr[i] = w->trajectories[i];
        size_t ns = tr[i].n_steps;
        pv_wire_step_t *st = pv_arena_alloc(arena, (ns ? ns : 1) * sizeof *st, 0);
        if (!st)
            return PV_ERR_NOMEM;
        for (size_t t = 0; t < ns; t++) {
            st[t] = w->trajectories[i].steps[t];
            st[t].state = (pv_wire_bin_t){NULL, 0};
        }
        tr[i].steps = st;
    }
    for (size_t i = 0; i < g->n_segs; i++) {
        const pv_jg_seg_t *s = &g->segs[i];
        float pb, pa;
        bool ok;
        pv_jgroup_estimate(g, i, &pb, &pa, &ok);
        segs[i] = (pv_wire_segment_t){.traj = s->prop.traj,
                                      .t0 = s->prop.t0,
                                      .t1 = s->prop.t1,
                                      .p_before = pb,
                                      .p_after = pa,
                                      .delta = pa - pb,
                                      .k = g->k,
                                      .verified = ok};
    }
    size_t n_cg = 0;
    for (size_t j = 0; j < g->n_jobs; j++)
        n_cg += g->jobs[j].n_conts > 0;
    pv_wire_continuation_group_t *cg = n_cg ? pv_arena_calloc(arena, n_cg, sizeof *cg) : NULL;
    if (n_cg && !cg)
        return PV_ERR_NOMEM;
    for (size_t j = 0, c = 0; j < g->n_jobs; j++)
        if (g->jobs[j].n_conts)
            cg[c++] = (pv_wire_continuation_group_t){.traj = g->jobs[j].traj,
                                                     .t = g->jobs[j].t,
                                                     .side = g->jobs[j].side,
                                                     .trajectories = g->jobs[j].conts,
                                                     .n_trajectories = g->jobs[j].n_conts};
    *out = (pv_wire_credited_group_t){.group = *w,
                                      .judge = judge_name,
                                      .segments = segs,
                                      .n_segments = (uint32_t)g->n_segs,
                                      .proposals = g->st.proposals,
                                      .verify_env_steps = g->st.env_steps,
                                      .verify_policy_tokens = g->st.policy_tokens,
                                      .precision_samples = g->st.precision_samples,
                                      .precision_hits = g->st.precision_hits,
                                      .continuation_groups = cg,
                                      .n_continuation_groups = (uint32_t)n_cg};
    out->group.trajectories = tr;
    return s_labels(g, arena, out);
}
