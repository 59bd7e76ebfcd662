/* judge_main.c - prover-judge: proposes pivotal segments of rollout groups, has them
 * verified, and hands the credited groups to the learner (DESIGN.md section 2).
 *
 * Broker roles: worker on "judge" (capacity prover.judge_capacity groups), producer on
 * "verify" (VERIFY_JOB, want_reply: the reply is the VERIFY_RESULT) and on "learn"
 * (CREDITED_GROUP). Per group (judge/judge_group.h): decode, propose and budget, one
 * VERIFY_JOB per side, collect the results until all are in or prover.verify_timeout_ms
 * (at most 3/4 of the group's lease, broker.lease_ms), then the CREDITED_GROUP; the "judge" lease
 * is acked only once the "learn" job completed, so a judge that dies loses nothing (the broker
 * hands the group to another judge, and the learn job id = the judge job id keeps the learner from
 * seeing it twice). The loop blocks in the broker clients with short timeouts, never spins.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/net/broker_client.h"
#include "common/net/stats_fetch.h"
#include "common/role.h"
#include "common/run_plan.h"
#include "common/wire/job_ids.h"
#include "judge/judge_group.h"
#include "judge/llm_judge.h"
#include "judge/llm_role.h"
#include "common/role_build.h"

static const char *const s_usage =
    "usage: prover-judge [--config FILE] [section.key=value ...]\n"
    "  Serves the broker's \"judge\" service: for each rollout group, proposes pivotal\n"
    "  segments (prover.judge), sends one verify job per side to \"verify\", and the\n"
    "  credited group to \"learn\". Keys: algorithm.adv_estimator, prover.*, env.*,\n"
    "  broker.endpoint, run.seed (docs/config.md). Stops on SIGINT/SIGTERM, the learner's\n"
    "  stop message, or (outside the learner's job) when the broker has shut down for good.\n";

/* SLOT_LLM: prover.judge = llm, the group waits for the model's proposal (llm_judge.h). */
enum { SLOT_FREE = 0, SLOT_LLM, SLOT_VERIFY, SLOT_LEARN_READY, SLOT_LEARN_SENT };

typedef struct slot {
    int state;
    uint64_t lease_id; /* the "judge" job; also the "learn" job id */
    uint32_t leases;   /* deliveries of it we hold (a re-delivery while we work) */
    uint32_t seq;      /* group_seq in its verify job ids */
    size_t next;       /* next job to submit */
    uint64_t opened_ms;
    uint64_t llm_ticket; /* SLOT_LLM: the group's conversation */
    const char *judge;   /* what proposed its segments: NULL = the run's judge; under
                            llm pv_llm_result_judge ("llm", "contrast-fallback") */
    pv_arena_t *arena;
    pv_wire_msg_t msg; /* the decoded ROLLOUT_GROUP (g.wire points here) */
    pv_jgroup_t g;
    pv_wire_buf_t out; /* the encoded CREDITED_GROUP */
    size_t verified;   /* its verified segments, counted once the learner took the group */
    double delta_sum;
} slot_t;

typedef struct counters {
    uint64_t groups, malformed, mixed, proposals, jobs_sent, jobs_failed, late, stray;
    uint64_t dropped_budget, skipped_sign, missing_states, bad_results;
    uint64_t verified, learn_failed, verify_steps, verify_tokens, redelivered;
    uint64_t learn_resubmitted; /* credited groups the broker dropped and we sent again */
    uint64_t learn_duplicate;   /* groups judged twice whose first judgement the learner took */
    uint64_t precision_hits, precision_samples;
    double delta_sum;
    /* algorithm.triage_labels = llm: groups the model labelled / that fell back, and turns */
    uint64_t labels_answered, labels_fallback, turns_labelled, turns_unlabelled;
} counters_t;

typedef struct judge {
    pv_role_ctx_t rc;
    pv_run_plan_t plan;
    pv_jg_opts_t jo;
    const char *judge_name;
    pv_env_model_t *model;
    pv_env_t *env;
    pv_worker_t *worker;
    pv_producer_t *vprod, *lprod;
    pv_wire_dec_t *dec;
    pv_arena_t *tmp;
    pv_wire_buf_t buf;
    pv_llm_judge_t *llm;    /* prover.judge = llm */
    pv_stats_link_t *slink; /* with llm: its cost reported to the broker (RUN_STATUS) */
    uint64_t status_ms;     /* when it was last reported */
    uint64_t status_failed; /* reports the broker did not answer */
    char run_name[256];
    slot_t *slots;
    uint32_t n_slots;
    uint16_t nonce;
    uint32_t seq;
    counters_t n;
} judge_t;

/* ---- leases: a new group ------------------------------------------------------------- */

static slot_t *s_slot_of_lease(judge_t *J, uint64_t id)
{
    for (uint32_t i = 0; i < J->n_slots; i++)
        if (J->slots[i].state != SLOT_FREE && J->slots[i].lease_id == id)
            return &J->slots[i];
    return NULL;
}

/* A group we cannot read: refused (ack not ok: its producer is told why), counted. */
static void s_refuse(judge_t *J, uint64_t job_id, const char *why)
{
    J->n.malformed++;
    PV_LOG_WARN("group job %llu refused: %s", (unsigned long long)job_id, why);
    pv_worker_ack(J->worker, job_id, false, why, NULL, 0);
}

/* Finish a slot's group: ack every delivery of it we hold, free the slot. */
static void s_release(judge_t *J, slot_t *s, bool ok, const char *why)
{
    for (uint32_t i = 0; i < s->leases; i++)
        pv_worker_ack(J->worker, s->lease_id, ok, ok ? NULL : why, NULL, 0);
    s->state = SLOT_FREE;
    s->verified = 0;
    s->delta_sum = 0;
}

static void s_count_proposals(judge_t *J, const slot_t *s)
{
    const pv_jg_stats_t *st = &s->g.st;
    J->n.proposals += st->proposals;
    J->n.dropped_budget += st->dropped_budget;
    J->n.skipped_sign += st->skipped_sign;
    J->n.missing_states += st->missing_states;
    J->n.precision_hits += st->precision_hits;
    J->n.precision_samples += st->precision_samples;
}

/* prover.judge = llm: hand the group to the model; its conversation ends within half the
 * lease (the other half is the verifiers'), or judge.group_timeout_ms if sooner. */
static void s_llm_submit(judge_t *J, slot_t *s, uint32_t lease_ms)
{
    const pv_jgroup_t *g = &s->g;
    uint64_t now = pv_mono_ms(), deadline = now + (uint64_t)J->rc.cfg.judge.group_timeout_ms;
    if (lease_ms > 0 && now + lease_ms / 2 < deadline)
        deadline = now + lease_ms / 2;
    pv_llm_group_t lg = pv_jgroup_llm_group(g, &J->jo, deadline);
    pv_errmsg_t em = {{0}};
    if (pv_llm_judge_submit(J->llm, &lg, &s->llm_ticket, &em) == PV_OK) {
        s->state = SLOT_LLM;
        return;
    }
    if (g->labelling) { /* its turns get the learner's model-free labels */
        PV_LOG_WARN("group %llu: not labelled by the model (%s): model-free labels",
                    (unsigned long long)g->wire->group_id, em.text);
        pv_jgroup_labels_done(&s->g, 0);
        s->judge = PV_JUDGE_LABELS_FALLBACK_NAME;
        J->n.labels_fallback++;
        J->n.turns_unlabelled += s->g.n_roles;
        return;
    }
    PV_LOG_WARN("group %llu: not judged by the model (%s): no proposal",
                (unsigned long long)g->wire->group_id, em.text);
    pv_jgroup_adopt(&s->g, &J->jo, NULL, 0, s->arena);
    s_count_proposals(J, s);
}

/* algorithm.triage_labels = llm: the model's roles (or none after a fallback) for a group in
 * SLOT_LLM; it then goes to the learner. */
static void s_llm_take_labels(judge_t *J, slot_t *s, const pv_llm_result_t *r)
{
    pv_jgroup_labels_done(&s->g, r->labels.labelled);
    s->judge = pv_llm_labels_judge(r);
    J->n.turns_labelled += r->labels.labelled;
    J->n.turns_unlabelled += r->labels.unlabelled;
    if (r->fallback != PV_LLM_FALLBACK_NONE) {
        J->n.labels_fallback++;
        PV_LOG_DEBUG("group %llu: no labels from the model (%s: %s): model-free labels",
                     (unsigned long long)s->g.wire->group_id, pv_llm_fallback_name(r->fallback),
                     r->detail);
    } else {
        J->n.labels_answered++;
        PV_LOG_DEBUG("group %llu: the model labelled %u of %u turns (%u trajectories without, "
                     "%u unknown roles; %u requests, %u repairs)",
                     (unsigned long long)s->g.wire->group_id, r->labels.labelled,
                     r->labels.labelled + r->labels.unlabelled, r->labels.bad_trajs,
                     r->labels.bad_roles, r->requests, r->repairs);
    }
    s->state = SLOT_VERIFY;
}

/* The model's proposal (or the contrast fallback's) for a group in SLOT_LLM, when ready. */
static void s_llm_take(judge_t *J, slot_t *s)
{
    pv_llm_result_t r;
    if (pv_llm_judge_take(J->llm, s->llm_ticket, &r) != PV_OK)
        return;
    if (s->g.labelling) {
        s_llm_take_labels(J, s, &r);
        return;
    }
    pv_err_t rc = pv_jgroup_adopt(&s->g, &J->jo, &r.seg, r.n_segs, s->arena);
    if (rc != PV_OK) {
        PV_LOG_WARN("group %llu: proposal [%u, %u) of trajectory %u not usable: %s",
                    (unsigned long long)s->g.wire->group_id, r.seg.t0, r.seg.t1, r.seg.traj,
                    pv_strerror(rc));
        s->g.awaiting = false;
    }
    s->judge = pv_llm_result_judge(&r);
    if (r.fallback != PV_LLM_FALLBACK_NONE)
        PV_LOG_DEBUG("group %llu: llm fell back to contrast (%s: %s)",
                     (unsigned long long)s->g.wire->group_id, pv_llm_fallback_name(r.fallback),
                     r.detail);
    else
        PV_LOG_DEBUG("group %llu: llm proposes [%u, %u) of trajectory %u (%u requests, %u tool "
                     "calls, %u repairs): %s",
                     (unsigned long long)s->g.wire->group_id, r.seg.t0, r.seg.t1, r.seg.traj,
                     r.requests, r.tool_calls, r.repairs, r.failure_mode);
    s_count_proposals(J, s);
    s->state = SLOT_VERIFY;
}

static void s_on_lease(judge_t *J, const pv_lease_t *l)
{
    slot_t *s = s_slot_of_lease(J, l->job_id);
    if (s) { /* the broker re-delivered a group we are still working on */
        s->leases++;
        J->n.redelivered++;
        return;
    }
    for (uint32_t i = 0; i < J->n_slots && !s; i++)
        if (J->slots[i].state == SLOT_FREE)
            s = &J->slots[i];
    if (!s) { /* cannot happen: capacity == slots; the lease expires and is re-queued */
        PV_LOG_ERROR("group job %llu: no free slot", (unsigned long long)l->job_id);
        return;
    }
    pv_arena_reset(s->arena);
    pv_errmsg_t em = {{0}};
    pv_wire_msg_t *m = &s->msg;
    pv_err_t rc = pv_wire_decode(J->dec, l->payload, l->len, s->arena, m, &em);
    if (rc == PV_OK && m->type != PV_MSG_ROLLOUT_GROUP)
        rc = pv_errf(&em, PV_ERR_UNKNOWN_TYPE, "a %s message, not ROLLOUT_GROUP",
                     pv_wire_type_name(m->type) ? pv_wire_type_name(m->type) : "?");
    uint64_t now = pv_mono_ms();
    if (rc == PV_OK)
        rc = pv_jgroup_open(&s->g, &J->jo, &m->rollout_group, now, s->arena, &em);
    if (rc != PV_OK) {
        char why[PV_ERRMSG_MAX + 32];
        snprintf(why, sizeof why, "%s: %s", pv_errname(rc), em.text);
        s_refuse(J, l->job_id, why);
        return;
    }
    /* finish well within the lease, or the broker hands the group to another judge */
    uint64_t lease_end = now + (uint64_t)l->lease_ms * 3u / 4u;
    if (l->lease_ms > 0 && lease_end < s->g.deadline_ms)
        s->g.deadline_ms = lease_end;
    s->state = SLOT_VERIFY;
    s->lease_id = l->job_id;
    s->leases = 1;
    s->seq = J->seq++;
    s->next = 0;
    s->opened_ms = now;
    s->judge = NULL;
    J->n.mixed += s->g.mixed;
    if (s->g.awaiting)
        s_llm_submit(J, s, l->lease_ms);
    else
        s_count_proposals(J, s);
}

/* ---- verify jobs out, results in ----------------------------------------------------- */

static void s_submit_jobs(judge_t *J, slot_t *s)
{
    while (s->next < s->g.n_jobs) {
        uint64_t id = pv_verify_job_id(J->nonce, s->seq, (uint32_t)s->next);
        pv_wire_msg_t m = {.type = PV_MSG_VERIFY_JOB};
        pv_jgroup_job_msg(&s->g, &J->jo, s->next, id, &m.verify_job);
        pv_errmsg_t em = {{0}};
        pv_err_t rc = pv_wire_encode(&m, NULL, &J->buf, &em);
        if (rc == PV_OK)
            rc = pv_producer_submit(J->vprod, "verify", id, true, J->buf.data, J->buf.len, 0);
        if (rc == PV_ERR_TIMEOUT || rc == PV_ERR_FULL || rc == PV_ERR_INTERRUPTED)
            return; /* the window is full (or a signal): later */
        if (rc != PV_OK) {
            PV_LOG_WARN("verify job %llu not sent: %s %s", (unsigned long long)id, pv_strerror(rc),
                        em.text);
            pv_jgroup_fail(&s->g, s->next);
        } else {
            J->n.jobs_sent++;
        }
        s->next++;
    }
}

static void s_on_verify(judge_t *J, const pv_completion_t *c)
{
    uint16_t nonce;
    uint32_t seq, j;
    if (!pv_verify_job_id_split(c->job_id, &nonce, &seq, &j) || nonce != J->nonce) {
        J->n.stray++;
        return;
    }
    slot_t *s = NULL;
    for (uint32_t i = 0; i < J->n_slots && !s; i++)
        if (J->slots[i].state == SLOT_VERIFY && J->slots[i].seq == seq)
            s = &J->slots[i];
    if (!s || j >= s->g.n_jobs || s->g.jobs[j].resolved) {
        J->n.late++; /* its group finished (deadline) or the broker repeated a completion */
        return;
    }
    if (!c->ok) {
        PV_LOG_DEBUG("verify job %llu failed: %s", (unsigned long long)c->job_id, c->error);
        pv_jgroup_fail(&s->g, j);
        return;
    }
    /* continuations (prover.reuse_continuations) travel on to the learner: their result is
     * decoded into the group's arena, which lives until the CREDITED_GROUP is encoded */
    pv_arena_t *into = J->jo.reuse_continuations ? s->arena : J->tmp;
    if (into == J->tmp)
        pv_arena_reset(J->tmp);
    pv_wire_msg_t m;
    pv_errmsg_t em = {{0}};
    pv_err_t rc = pv_wire_decode(J->dec, c->payload, c->len, into, &m, &em);
    if (rc == PV_OK && m.type != PV_MSG_VERIFY_RESULT)
        rc = PV_ERR_UNKNOWN_TYPE;
    if (rc != PV_OK) {
        J->n.bad_results++;
        PV_LOG_WARN("verify job %llu: unreadable result (%zu bytes): %s %s",
                    (unsigned long long)c->job_id, c->len, pv_strerror(rc), em.text);
        pv_jgroup_fail(&s->g, j);
        return;
    }
    if (pv_jgroup_result(&s->g, j, c->job_id, &m.verify_result) == PV_ERR_DATA) {
        J->n.bad_results++;
        PV_LOG_WARN("verify job %llu: the result names another job", (unsigned long long)c->job_id);
    }
}

/* ---- credited groups to the learner --------------------------------------------------- */

static void s_finish(judge_t *J, slot_t *s)
{
    pv_jgroup_t *g = &s->g;
    size_t verified = 0;
    double dsum = 0.0;
    for (size_t i = 0; i < g->n_segs; i++) {
        float pb, pa;
        bool ok;
        pv_jgroup_estimate(g, i, &pb, &pa, &ok);
        if (ok) {
            verified++;
            dsum += pa - pb;
        }
    }
    s->verified = verified; /* counted when the learner takes the group, like n.groups */
    s->delta_sum = dsum;
    J->n.jobs_failed += g->st.failed_jobs;
    J->n.verify_steps += g->st.env_steps;
    J->n.verify_tokens += g->st.policy_tokens;
    pv_wire_msg_t m = {.type = PV_MSG_CREDITED_GROUP};
    pv_errmsg_t em = {{0}};
    pv_err_t rc = pv_jgroup_credited(g,
                                     s->judge        ? s->judge
                                     : !J->jo.prover ? "none"
                                                     : J->judge_name,
                                     s->arena, &m.credited_group);
    if (rc == PV_OK)
        rc = pv_wire_encode(&m, NULL, &s->out, &em);
    if (rc != PV_OK) { /* an accepted group's credited form is larger than the schema allows */
        char why[PV_ERRMSG_MAX + 32];
        snprintf(why, sizeof why, "credited group: %s %s", pv_strerror(rc), em.text);
        J->n.learn_failed++;
        PV_LOG_WARN("group job %llu: %s", (unsigned long long)s->lease_id, why);
        s_release(J, s, false, why);
        return;
    }
    PV_LOG_DEBUG("group %llu: %zu trajectories, %s, %zu proposals, %zu jobs (%u failed), %zu "
                 "verified, delta sum %+.3f, %llu verify steps, %llu ms",
                 (unsigned long long)g->wire->group_id, g->n_trajs,
                 g->mixed ? "mixed" : "no contrast", g->n_segs, g->n_jobs, g->st.failed_jobs,
                 verified, dsum, (unsigned long long)g->st.env_steps,
                 (unsigned long long)(pv_mono_ms() - s->opened_ms));
    s->state = SLOT_LEARN_READY;
}

static void s_submit_learn(judge_t *J, slot_t *s)
{
    pv_err_t rc =
        pv_producer_submit(J->lprod, "learn", s->lease_id, false, s->out.data, s->out.len, 0);
    if (rc == PV_ERR_TIMEOUT || rc == PV_ERR_FULL || rc == PV_ERR_INTERRUPTED)
        return;
    if (rc != PV_OK) {
        J->n.learn_failed++;
        char why[96];
        snprintf(why, sizeof why, "learn submit: %s", pv_strerror(rc));
        PV_LOG_WARN("group job %llu: %s", (unsigned long long)s->lease_id, why);
        s_release(J, s, false, why);
        return;
    }
    s->state = SLOT_LEARN_SENT;
}

static void s_on_learn(judge_t *J, const pv_completion_t *c)
{
    slot_t *s = s_slot_of_lease(J, c->job_id);
    if (!s || s->state != SLOT_LEARN_SENT) {
        J->n.stray++;
        return;
    }
    char why[4200] = "";
    if (c->dropped) { /* the broker gave the job up (max_attempts) and forgot it: again */
        J->n.learn_resubmitted++;
        PV_LOG_WARN("group job %llu was dropped by the broker on \"learn\" (%s): sending it "
                    "again",
                    (unsigned long long)c->job_id, c->error);
        s->state = SLOT_LEARN_READY;
        return;
    }
    if (!c->ok) {
        J->n.learn_failed++;
        snprintf(why, sizeof why, "learn: %s", c->error);
        PV_LOG_WARN("group job %llu: the learner refused it: %s", (unsigned long long)c->job_id,
                    c->error);
    } else if (c->duplicate) {
        /* judged again after its lease ran out (a slow verification), and the broker had
         * delivered the first judgement to the learner already: counted then */
        J->n.learn_duplicate++;
    } else {
        /* the learner's summary counts what it took; a group still on its way to the
         * learner when the run ends is in neither */
        J->n.groups++;
        J->n.verified += s->verified;
        J->n.delta_sum += s->delta_sum;
    }
    s_release(J, s, c->ok, why);
}

/* ---- the loop ----------------------------------------------------------------------- */

static void s_summary(judge_t *J, double secs, uint64_t groups_before)
{
    const counters_t *n = &J->n;
    PV_LOG_INFO(
        "groups %llu (%.2f/s, %llu mixed, %llu refused, %llu learn failures, %llu sent to learn "
        "again after a broker drop, %llu judged again after the learner took them)  "
        "proposals %llu (budget-dropped %llu, sign-skipped %llu, no state %llu)  "
        "verify jobs sent %llu (failed or expired %llu: an expired job may never have been sent; "
        "late %llu)  verified segments %llu (in groups the learner "
        "took)  "
        "mean delta %+.3f  verify steps %llu  tokens %llu",
        (unsigned long long)n->groups, secs > 0 ? (double)(n->groups - groups_before) / secs : 0.0,
        (unsigned long long)n->mixed, (unsigned long long)n->malformed,
        (unsigned long long)n->learn_failed, (unsigned long long)n->learn_resubmitted,
        (unsigned long long)n->learn_duplicate, (unsigned long long)n->proposals,
        (unsigned long long)n->dropped_budget, (unsigned long long)n->skipped_sign,
        (unsigned long long)n->missing_states, (unsigned long long)n->jobs_sent,
        (unsigned long long)n->jobs_failed, (unsigned long long)n->late,
        (unsigned long long)n->verified, n->verified ? n->delta_sum / (double)n->verified : 0.0,
        (unsigned long long)n->verify_steps, (unsigned long long)n->verify_tokens);
    if (J->llm) {
        pv_llm_stats_t ls;
        pv_llm_judge_stats(J->llm, &ls);
        PV_LOG_INFO("llm judge: groups %llu (answered %llu, fallbacks %llu: timeout %llu, http "
                    "%llu, invalid %llu, no segment %llu)  requests %llu (retries %llu, failed "
                    "%llu, latency p50 %u ms p99 %u ms)  tokens %llu prompt %llu completion  "
                    "tool calls %llu (errors %llu)  repairs %llu",
                    (unsigned long long)ls.groups, (unsigned long long)ls.answered,
                    (unsigned long long)ls.fallbacks,
                    (unsigned long long)ls.fallback_by[PV_LLM_FALLBACK_TIMEOUT],
                    (unsigned long long)ls.fallback_by[PV_LLM_FALLBACK_HTTP],
                    (unsigned long long)ls.fallback_by[PV_LLM_FALLBACK_INVALID],
                    (unsigned long long)ls.fallback_by[PV_LLM_FALLBACK_NO_SEGMENT],
                    (unsigned long long)ls.requests, (unsigned long long)ls.retries,
                    (unsigned long long)ls.http_errors, ls.latency_p50_ms, ls.latency_p99_ms,
                    (unsigned long long)ls.prompt_tokens, (unsigned long long)ls.completion_tokens,
                    (unsigned long long)ls.tool_calls, (unsigned long long)ls.tool_errors,
                    (unsigned long long)ls.repairs);
    }
    if (J->jo.triage_llm)
        PV_LOG_INFO("triage labels: groups labelled by the model %llu, fell back %llu (model-free "
                    "labels); turns labelled %llu, unlabelled %llu (model-free at the learner)",
                    (unsigned long long)n->labels_answered, (unsigned long long)n->labels_fallback,
                    (unsigned long long)n->turns_labelled, (unsigned long long)n->turns_unlabelled);
    if (n->precision_samples)
        PV_LOG_INFO("judge precision against the oracle: %.3f (%llu of %llu proposals pivotal)",
                    (double)n->precision_hits / (double)n->precision_samples,
                    (unsigned long long)n->precision_hits,
                    (unsigned long long)n->precision_samples);
}

/* prover.judge = llm: tell the broker what the model has cost so far (llm_role.h), every
 * S_STATUS_MS and at the end. A broker that does not answer within `timeout_ms` is counted
 * and logged once; judging goes on. The loop's reports wait at most S_STATUS_WAIT_MS (a
 * loopback round trip takes about a millisecond), so a slow broker holds the groups in
 * flight up for no longer than that. */
#define S_STATUS_MS      2000
#define S_STATUS_WAIT_MS 200
static void s_report_status(judge_t *J, int timeout_ms)
{
    if (!J->slink)
        return;
    J->status_ms = pv_mono_ms();
    pv_llm_stats_t ls;
    pv_llm_judge_stats(J->llm, &ls);
    pv_wire_run_status_t st;
    pv_wire_stats_reply_t reply;
    pv_errmsg_t em = {{0}};
    pv_err_t rc = pv_llm_status(&ls, J->run_name, pv_stats_link_arena(J->slink), &st);
    if (rc == PV_OK)
        rc = pv_stats_link_exchange(J->slink, &st, timeout_ms, &reply, &em);
    if (rc != PV_OK && J->status_failed++ == 0)
        PV_LOG_WARN("llm judge: its cost not reported to the broker (%s); counted, not retried "
                    "before the next report",
                    em.text[0] ? em.text : pv_strerror(rc));
}

/* One pass: leases, verify traffic, deadlines, learn traffic. Blocks at most ~100 ms. */
static pv_err_t s_step(judge_t *J)
{
    bool busy = false, verifying = false, learning = false, asking = false;
    for (uint32_t i = 0; i < J->n_slots; i++) {
        busy |= J->slots[i].state != SLOT_FREE;
        asking |= J->slots[i].state == SLOT_LLM;
        verifying |= J->slots[i].state == SLOT_VERIFY && J->slots[i].g.n_jobs > 0;
        learning |= J->slots[i].state == SLOT_LEARN_SENT;
    }
    pv_lease_t l;
    pv_err_t rc;
    int wait = busy ? 0 : 100;
    while ((rc = pv_worker_recv(J->worker, wait, &l)) == PV_OK) {
        s_on_lease(J, &l);
        wait = 0;
    }
    if (rc != PV_ERR_TIMEOUT)
        return rc; /* PV_ERR_INTERRUPTED: a signal, the caller stops */
    pv_completion_t c;
    wait = verifying ? 20 : 0;
    while (pv_producer_recv(J->vprod, wait, &c) == PV_OK) {
        s_on_verify(J, &c);
        wait = 0;
    }
    if (J->llm) { /* the model's conversations: wait on it only when nothing else blocks */
        if ((rc = pv_llm_judge_poll(J->llm, asking && !verifying && !learning ? 20 : 0)) != PV_OK)
            PV_LOG_WARN("llm judge: %s", pv_strerror(rc));
        for (uint32_t i = 0; i < J->n_slots; i++)
            if (J->slots[i].state == SLOT_LLM)
                s_llm_take(J, &J->slots[i]);
    }
    uint64_t now = pv_mono_ms();
    for (uint32_t i = 0; i < J->n_slots; i++) {
        slot_t *s = &J->slots[i];
        if (s->state != SLOT_VERIFY)
            continue;
        s_submit_jobs(J, s);
        size_t expired = pv_jgroup_expire(&s->g, now);
        if (expired)
            PV_LOG_WARN("group %llu: %zu verify jobs unanswered after %llu ms: sent unverified",
                        (unsigned long long)s->g.wire->group_id, expired,
                        (unsigned long long)J->jo.timeout_ms);
        if (pv_jgroup_done(&s->g))
            s_finish(J, s);
        if (s->state == SLOT_LEARN_READY)
            s_submit_learn(J, s);
    }
    wait = learning ? 20 : 0;
    while (pv_producer_recv(J->lprod, wait, &c) == PV_OK) {
        s_on_learn(J, &c);
        wait = 0;
    }
    for (uint32_t i = 0; i < J->n_slots; i++)
        if (J->slots[i].state == SLOT_LEARN_READY)
            s_submit_learn(J, &J->slots[i]);
    if (busy && !verifying && !learning && !asking) { /* e.g. room in the learn window */
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
    }
    return PV_OK;
}

/* ---- set-up ------------------------------------------------------------------------- */

static pv_err_t s_setup(void *self, pv_errmsg_t *em)
{
    judge_t *J = self;
    const pv_config_t *cfg = &J->rc.cfg;
    pv_err_t rc = pv_run_plan_from_config(cfg, &J->plan, em);
    if (rc == PV_OK)
        rc = pv_role_env_new(cfg, &J->model, &J->env, em);
    if (rc != PV_OK)
        return rc;
    pv_judge_kind_t kind = J->plan.judge;
    pv_jg_opts_from_config(&J->plan, cfg, pv_env_model_max_steps(J->model), J->env, &J->jo);
    J->judge_name = pv_judge_kind_name(kind);
    if ((J->plan.prover && kind == PV_JUDGE_LLM) || J->plan.triage_llm) {
        pv_llm_opts_t lo;
        if ((rc = pv_llm_opts_from_config(cfg, (uint32_t)cfg->prover.max_segment_turns,
                                          (uint32_t)cfg->prover.judge_capacity, &lo, em)) !=
                PV_OK ||
            (rc = pv_llm_judge_new(&lo, &J->llm, em)) != PV_OK)
            return rc == PV_ERR_CONFIG || rc == PV_ERR_INVAL ? PV_ERR_CONFIG : rc;
        pv_config_run_name(cfg, J->run_name, sizeof J->run_name);
        if ((rc = pv_stats_link_new(J->rc.net, cfg->broker.endpoint, cfg->broker.curve_dir,
                                    cfg->broker.curve_client, "judge", &J->slink)) != PV_OK)
            return rc;
        PV_LOG_INFO("judge llm: model %s at %s (API key from $%s: %s), %u requests at once, "
                    "%u ms per request, %u retries",
                    cfg->judge.model, cfg->judge.base_url,
                    cfg->judge.api_key_env[0] ? cfg->judge.api_key_env : "(none)",
                    lo.api_key ? "set" : "not set", lo.max_in_flight, lo.timeout_ms, lo.retries);
    }
    J->n_slots = (uint32_t)cfg->prover.judge_capacity;
    J->nonce = pv_judge_nonce((uint32_t)J->rc.world.index);
    J->slots = calloc(J->n_slots, sizeof *J->slots);
    if (!J->slots || pv_wire_dec_new(NULL, &J->dec) != PV_OK ||
        pv_arena_new(0, 64u << 20, &J->tmp) != PV_OK)
        return PV_ERR_NOMEM;
    for (uint32_t i = 0; i < J->n_slots; i++) {
        pv_wire_buf_init(&J->slots[i].out, 0);
        if (pv_arena_new(1u << 20, (size_t)1 << 30, &J->slots[i].arena) != PV_OK)
            return PV_ERR_NOMEM;
    }
    pv_wire_buf_init(&J->buf, 0);
    pv_bclient_opts_t o;
    pv_role_bclient_opts(&J->rc, "judge", &o);
    uint32_t window = J->n_slots * 2u * (uint32_t)cfg->prover.max_segments;
    window = window < 64 ? 64 : window > 4096 ? 4096 : window; /* verify jobs out at once */
    if ((rc = pv_worker_new(&o, "judge", J->n_slots, &J->worker, em)) == PV_OK &&
        (rc = pv_producer_new(&o, window, &J->vprod, em)) == PV_OK)
        rc = pv_producer_new(&o, J->n_slots, &J->lprod, em);
    if (rc == PV_OK) /* outside the learner's job: stop once the broker has shut down */
        J->rc.broker = pv_worker_client(J->worker);
    return pv_role_broker_err(rc, em);
}

static void s_teardown(void *self)
{
    judge_t *J = self;
    pv_worker_destroy(&J->worker); /* first: our unfinished groups go back to the queue */
    pv_llm_judge_destroy(&J->llm);
    pv_stats_link_destroy(&J->slink);
    pv_producer_destroy(&J->vprod);
    pv_producer_destroy(&J->lprod);
    for (uint32_t i = 0; J->slots && i < J->n_slots; i++) {
        pv_arena_destroy(&J->slots[i].arena);
        pv_wire_buf_free(&J->slots[i].out);
    }
    free(J->slots);
    pv_wire_buf_free(&J->buf);
    pv_arena_destroy(&J->tmp);
    pv_wire_dec_destroy(&J->dec);
    pv_env_destroy(&J->env);
    pv_env_model_destroy(&J->model);
}

/* Judge groups until a stop. Returns the exit status. */
static int s_run(void *self)
{
    judge_t *J = self;
    if (J->jo.triage_llm)
        PV_LOG_INFO("judge llm labels TRIAGE roles (estimator %s, algorithm.triage_labels=llm): "
                    "%u groups at once, broker %s",
                    J->plan.name, J->n_slots, J->rc.cfg.broker.endpoint);
    else if (J->jo.prover)
        PV_LOG_INFO("judge %s (estimator %s): k %u, max_segments %u, budget %llu steps, %u groups "
                    "at once, broker %s",
                    J->judge_name, J->plan.name, J->jo.k, J->jo.max_segments,
                    (unsigned long long)J->jo.verify_budget, J->n_slots, J->rc.cfg.broker.endpoint);
    else
        PV_LOG_WARN("no judging (estimator %s): actors send their groups straight to the learner "
                    "and cluster/launch starts no judge; a group that reaches this judge goes "
                    "to the learner as it is (%u at once, broker %s)",
                    J->plan.name, J->n_slots, J->rc.cfg.broker.endpoint);
    uint64_t start = pv_mono_ms(), last = start, groups_before = 0;
    int status = 0;
    while (!pv_role_should_stop(&J->rc)) {
        pv_err_t rc = s_step(J);
        if (rc == PV_ERR_INTERRUPTED)
            break;
        if (rc != PV_OK) {
            PV_LOG_ERROR("broker client: %s", pv_strerror(rc));
            status = 1;
            break;
        }
        uint64_t now = pv_mono_ms();
        if (now - J->status_ms >= S_STATUS_MS)
            s_report_status(J, S_STATUS_WAIT_MS);
        if (now - last >= 10000) {
            s_summary(J, (double)(now - last) / 1000.0, groups_before);
            groups_before = J->n.groups;
            last = now;
        }
    }
    s_report_status(J, 500);
    if (J->status_failed)
        PV_LOG_INFO("llm judge: %llu cost reports unanswered by the broker",
                    (unsigned long long)J->status_failed);
    s_summary(J, (double)(pv_mono_ms() - start) / 1000.0, 0); /* the whole run */
    return status;
}

int main(int argc, char **argv)
{
    static judge_t J;
    static const pv_role_main_t m = {.prog = "prover-judge",
                                     .role = PV_ROLE_JUDGE,
                                     .usage = s_usage,
                                     .setup = s_setup,
                                     .run = s_run,
                                     .teardown = s_teardown};
    return pv_role_main(&m, &J.rc, &J, argc, argv);
}
