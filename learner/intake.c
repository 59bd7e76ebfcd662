/* intake.c - see intake.h. */
#include "learner/intake.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/hashmap.h"
#include "common/vec.h"
#include "common/rng.h"
#include "common/wire/wire.h"
#include "common/traj/traj_wire.h"
#include "common/traj/triage.h"

struct pv_intake {
    size_t max_groups;
    pv_arena_t *arena;
    pv_wire_dec_t *dec;
    /* rows of the batch */
    pv_traj_t *rows;
    size_t n_rows, cap_rows;
    pv_verified_seg_t *segs;
    size_t n_segs, cap_segs;
    size_t n_groups;
    pv_key_index_t seen; /* (group_id, actor_id) of every group counted this run */
    pv_intake_stats_t batch, total;
    uint32_t token_space; /* what a step's tokens must be (traj_wire.h) */
    pv_judge_tally_t judges[2][PV_INTAKE_JUDGES_MAX]; /* [0] batch, [1] run */
    size_t n_judges[2];
};

static void s_stats_clear(pv_intake_stats_t *s)
{
    memset(s, 0, sizeof *s);
    s->delta_min = 1.0;
    s->delta_max = -1.0;
}

pv_err_t pv_intake_new(size_t max_groups, pv_intake_t **out)
{
    pv_intake_t *in = calloc(1, sizeof *in);
    if (!in)
        return PV_ERR_NOMEM;
    in->max_groups = max_groups;
    if (pv_key_index_init(&in->seen, 1024) != PV_OK ||
        pv_arena_new(1 << 20, 0, &in->arena) != PV_OK || pv_wire_dec_new(NULL, &in->dec) != PV_OK) {
        pv_intake_destroy(&in);
        return PV_ERR_NOMEM;
    }
    s_stats_clear(&in->batch);
    s_stats_clear(&in->total);
    *out = in;
    return PV_OK;
}

void pv_intake_destroy(pv_intake_t **in)
{
    if (!in || !*in)
        return;
    pv_arena_destroy(&(*in)->arena);
    pv_wire_dec_destroy(&(*in)->dec);
    free((*in)->rows);
    free((*in)->segs);
    pv_key_index_fini(&(*in)->seen);
    free(*in);
    *in = NULL;
}

void pv_intake_reset(pv_intake_t *in)
{
    pv_arena_reset(in->arena);
    in->n_rows = in->n_segs = in->n_groups = 0;
    s_stats_clear(&in->batch);
    in->n_judges[0] = 0;
}

/* Add one group's segments to judge `name`'s tally in table `k` (0 batch, 1 run). */
static void s_tally(pv_intake_t *in, int k, const char *name, const pv_intake_stats_t *gs)
{
    pv_judge_tally_t *t = in->judges[k];
    size_t *n = &in->n_judges[k], i = 0;
    if (!name || !name[0])
        name = "none";
    while (i < *n && strcmp(t[i].judge, name) != 0)
        i++;
    if (i == *n && *n == PV_INTAKE_JUDGES_MAX) { /* full: the last slot is "other" */
        i = *n - 1;
        snprintf(t[i].judge, sizeof t[i].judge, "other");
    } else if (i == *n) {
        memset(&t[i], 0, sizeof t[i]);
        snprintf(t[i].judge, sizeof t[i].judge, "%s", name);
        (*n)++;
    }
    t[i].groups++;
    t[i].verified += gs->verified;
    t[i].positive += gs->positive;
    t[i].turns_sum += gs->turns_sum;
    t[i].noise_pos_sum += gs->noise_pos_sum;
}

const pv_judge_tally_t *pv_intake_judges(const pv_intake_t *in, bool total, size_t *n)
{
    *n = in->n_judges[total];
    return in->judges[total];
}

/* Insert (group_id, actor_id); false when it was there already. */
static bool s_seen_insert(pv_intake_t *in, uint64_t group_id, uint32_t actor_id, pv_err_t *err)
{
    pv_key_t k = {group_id, actor_id};
    *err = PV_OK;
    if (pv_key_get(&in->seen, k) != PV_KEY_ABSENT)
        return false;
    *err = pv_key_put(&in->seen, k, 1);
    return *err == PV_OK;
}

static void s_count_steps(pv_intake_t *in, const pv_wire_rollout_group_t *g)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < g->n_trajectories; i++)
        n += g->trajectories[i].n_steps;
    in->batch.dropped_steps += n;
    in->total.dropped_steps += n;
}

static void s_count(pv_intake_t *in, pv_intake_verdict_t v)
{
    uint64_t *b = v == PV_INTAKE_MALFORMED   ? &in->batch.malformed
                  : v == PV_INTAKE_DUPLICATE ? &in->batch.duplicates
                                             : &in->batch.stale;
    uint64_t *t = v == PV_INTAKE_MALFORMED   ? &in->total.malformed
                  : v == PV_INTAKE_DUPLICATE ? &in->total.duplicates
                                             : &in->total.stale;
    (*b)++;
    (*t)++;
}

/* Fold one accepted group's numbers into a stats block. */
static void s_fold(pv_intake_stats_t *s, const pv_intake_stats_t *g)
{
    s->groups += g->groups;
    s->trajectories += g->trajectories;
    s->steps += g->steps;
    s->won += g->won;
    s->refused += g->refused;
    s->action_tokens += g->action_tokens;
    s->bad_segments += g->bad_segments;
    s->proposals += g->proposals;
    s->segments += g->segments;
    s->verified += g->verified;
    s->positive += g->positive;
    s->delta_sum += g->delta_sum;
    s->turns_sum += g->turns_sum;
    s->delta_se_sum += g->delta_se_sum;
    s->noise_pos_sum += g->noise_pos_sum;
    if (g->verified) {
        if (g->delta_min < s->delta_min)
            s->delta_min = g->delta_min;
        if (g->delta_max > s->delta_max)
            s->delta_max = g->delta_max;
    }
    s->verify_env_steps += g->verify_env_steps;
    s->verify_tokens += g->verify_tokens;
    s->precision_samples += g->precision_samples;
    s->precision_hits += g->precision_hits;
    s->lag_sum += g->lag_sum;
    if (g->lag_max > s->lag_max)
        s->lag_max = g->lag_max;
    s->reward_sum += g->reward_sum;
    s->reused_groups += g->reused_groups;
    s->reused_rows += g->reused_rows;
    s->reused_steps += g->reused_steps;
    s->bad_continuations += g->bad_continuations;
    s->labelled_groups += g->labelled_groups;
    s->labelled_trajs += g->labelled_trajs;
    s->bad_labels += g->bad_labels;
}

/* What one payload holds once decoded: the group and, from a judge, its credit. */
typedef struct s_offer {
    const pv_wire_rollout_group_t *group;
    const pv_wire_credited_group_t *credited; /* NULL: the actor's group, straight to learn */
    pv_traj_t *trajs;
    size_t n_trajs;
} s_offer_t;

/* Decode: a CREDITED_GROUP (through a judge) or a ROLLOUT_GROUP (no judge in the plan),
 * then its trajectories. PV_ERR_NOMEM is the only error returned; a malformed payload
 * gives PV_OK with *malformed set and the reason in `em`. */
static pv_err_t s_decode(pv_intake_t *in, const uint8_t *payload, size_t len, s_offer_t *o,
                         bool *malformed, pv_errmsg_t *em)
{
    *malformed = true;
    memset(o, 0, sizeof *o);
    pv_wire_msg_t *msg = pv_arena_alloc(in->arena, sizeof *msg, 0);
    if (!msg)
        return PV_ERR_NOMEM;
    pv_err_t err = pv_wire_decode(in->dec, payload, len, in->arena, msg, em);
    if (err == PV_OK && msg->type == PV_MSG_CREDITED_GROUP) {
        o->credited = &msg->credited_group;
        o->group = &msg->credited_group.group;
    } else if (err == PV_OK && msg->type == PV_MSG_ROLLOUT_GROUP) {
        o->group = &msg->rollout_group;
    } else if (err == PV_OK) {
        err = pv_errf(em, PV_ERR_UNKNOWN_TYPE, "expected CREDITED_GROUP or ROLLOUT_GROUP, got %s",
                      pv_wire_type_name(msg->type) ? pv_wire_type_name(msg->type) : "?");
    }
    if (err == PV_ERR_NOMEM)
        return err;
    if (err != PV_OK)
        return PV_OK;
    err = pv_traj_group_from_wire_ts(o->group, false, in->token_space, in->arena, &o->trajs,
                                     &o->n_trajs, em);
    if (err == PV_ERR_NOMEM)
        return err;
    if (err == PV_OK && o->n_trajs == 0)
        pv_errf(em, PV_ERR_DATA, "group %llu has no trajectory",
                (unsigned long long)o->group->group_id);
    *malformed = err != PV_OK || o->n_trajs == 0;
    return PV_OK;
}

/* The versions the group's steps carry: false (with the reason in `em`) when the header's
 * policy_version is not the oldest of them, or a step claims a version newer than the
 * learner's: the header is the actor's claim, the steps say what acted. *oldest gets the
 * oldest step version (the header's when the group has no step). */
static bool s_versions_ok(const s_offer_t *o, uint64_t version, uint64_t *oldest, pv_errmsg_t *em)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < o->n_trajs; i++)
        for (size_t t = 0; t < o->trajs[i].n_steps; t++) {
            uint64_t v = o->trajs[i].steps[t].policy_version;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    *oldest = lo == UINT64_MAX ? o->group->policy_version : lo;
    if (lo != UINT64_MAX && o->group->policy_version != lo) {
        pv_errf(em, PV_ERR_DATA,
                "group %llu says policy v%llu, but its oldest step was played by v%llu",
                (unsigned long long)o->group->group_id,
                (unsigned long long)o->group->policy_version, (unsigned long long)lo);
        return false;
    }
    if (lo != UINT64_MAX && hi > version) {
        pv_errf(em, PV_ERR_DATA,
                "group %llu has a step of policy v%llu, newer than the learner's v%llu",
                (unsigned long long)o->group->group_id, (unsigned long long)hi,
                (unsigned long long)version);
        return false;
    }
    return true;
}

/* Admit: a group seen before is a duplicate, one whose oldest step is older than max_lag a
 * stale one (its steps are counted as spent). Returns PV_INTAKE_ACCEPTED when it may be
 * trained on. */
static pv_err_t s_admit(pv_intake_t *in, const s_offer_t *o, uint64_t version, uint64_t max_lag,
                        uint64_t oldest, pv_intake_verdict_t *verdict)
{
    pv_err_t err = PV_OK;
    *verdict = PV_INTAKE_ACCEPTED;
    if (!s_seen_insert(in, o->group->group_id, o->group->actor_id, &err))
        *verdict = PV_INTAKE_DUPLICATE; /* its steps were counted when it was first seen */
    else if (oldest + max_lag < version)
        *verdict = PV_INTAKE_STALE;
    if (err != PV_OK)
        return err;
    if (*verdict != PV_INTAKE_ACCEPTED)
        s_count(in, *verdict);
    if (*verdict == PV_INTAKE_STALE)
        s_count_steps(in, o->group);
    return PV_OK;
}

/* Take rows: the trajectories become batch rows; their numbers go into gs. */
static pv_err_t s_take_rows(pv_intake_t *in, const s_offer_t *o, uint64_t version,
                            pv_intake_stats_t *gs)
{
    pv_err_t err =
        pv_grow((void **)&in->rows, &in->cap_rows, in->n_rows + o->n_trajs, sizeof *in->rows);
    if (err != PV_OK)
        return err;
    gs->groups = 1;
    gs->trajectories = o->n_trajs;
    for (size_t i = 0; i < o->n_trajs; i++) {
        const pv_traj_t *tr = &o->trajs[i];
        in->rows[in->n_rows + i] = *tr;
        gs->steps += tr->n_steps;
        gs->won += tr->won;
        for (size_t t = 0; t < tr->n_steps; t++) {
            gs->refused += tr->steps[t].refused;
            gs->action_tokens += pv_step_n_tokens(&tr->steps[t]);
        }
        gs->reward_sum += tr->reward;
        for (size_t t = 0; t < tr->n_steps; t++) {
            uint64_t v = tr->steps[t].policy_version;
            uint64_t lag = version > v ? version - v : 0;
            gs->lag_sum += lag;
            if (lag > gs->lag_max)
                gs->lag_max = lag;
        }
    }
    return PV_OK;
}

/* Take segments: the judge's verified segments in row coordinates (base = the group's first
 * row); a segment that does not fit its trajectory is dropped and counted. */
static pv_err_t s_take_segments(pv_intake_t *in, const s_offer_t *o, size_t base,
                                pv_intake_stats_t *gs)
{
    const pv_wire_credited_group_t *cg = o->credited;
    if (!cg)
        return PV_OK;
    pv_err_t err =
        pv_grow((void **)&in->segs, &in->cap_segs, in->n_segs + cg->n_segments, sizeof *in->segs);
    if (err != PV_OK)
        return err;
    gs->proposals = cg->proposals;
    gs->segments = cg->n_segments;
    gs->verify_env_steps = cg->verify_env_steps;
    gs->verify_tokens = cg->verify_policy_tokens;
    gs->precision_samples = cg->precision_samples;
    gs->precision_hits = cg->precision_hits; /* <= samples: the decoder checks it */
    for (size_t s = 0; s < cg->n_segments; s++) {
        const pv_wire_segment_t *ws = &cg->segments[s];
        if (ws->traj >= o->n_trajs || ws->t0 >= ws->t1 || ws->t1 > o->trajs[ws->traj].n_steps ||
            ws->delta < -1.0f || ws->delta > 1.0f) {
            gs->bad_segments++;
            continue;
        }
        if (!ws->verified)
            continue;
        gs->verified++;
        gs->positive += ws->delta > 0;
        gs->delta_sum += ws->delta;
        gs->turns_sum += ws->t1 - ws->t0;
        bool terminal = ws->t1 == o->trajs[ws->traj].n_steps;
        pv_delta_stats_t ds =
            pv_prover_delta_stats(ws->p_before, ws->p_after, ws->k, terminal ? 0 : ws->k);
        gs->delta_se_sum += ds.se;
        gs->noise_pos_sum += ds.noise_pos;
        if (ws->delta < gs->delta_min)
            gs->delta_min = ws->delta;
        if (ws->delta > gs->delta_max)
            gs->delta_max = ws->delta;
        in->segs[in->n_segs++] = (pv_verified_seg_t){
            .row = base + ws->traj, .t0 = ws->t0, .t1 = ws->t1, .delta = ws->delta};
    }
    return PV_OK;
}

/* Take the judge's TRIAGE roles (algorithm.triage_labels = llm) onto the group's
 * trajectories (before their rows are copied): an entry naming no trajectory, one already
 * labelled, or with a count other than its steps is dropped and counted (bad_labels); a role
 * value above 3 is "not labelled". */
static pv_err_t s_take_labels(pv_intake_t *in, s_offer_t *o, pv_intake_stats_t *gs)
{
    const pv_wire_credited_group_t *cg = o->credited;
    if (!cg || !cg->n_triage_labels)
        return PV_OK;
    gs->labelled_groups = 1;
    for (uint32_t k = 0; k < cg->n_triage_labels; k++) {
        const pv_wire_turn_roles_t *w = &cg->triage_labels[k];
        if (w->traj >= o->n_trajs || o->trajs[w->traj].judge_roles ||
            w->n_roles != o->trajs[w->traj].n_steps) {
            gs->bad_labels++;
            continue;
        }
        uint8_t *r = pv_arena_alloc(in->arena, w->n_roles ? w->n_roles : 1, 0);
        if (!r)
            return PV_ERR_NOMEM;
        for (uint32_t t = 0; t < w->n_roles; t++)
            r[t] = w->roles[t] < 4 ? (uint8_t)w->roles[t] : (uint8_t)PV_TRIAGE_ROLE_NONE;
        o->trajs[w->traj].judge_roles = r;
        gs->labelled_trajs++;
    }
    return PV_OK;
}

/* Take continuations: each continuation group's trajectories become rows (after the group's
 * own), one batch group per restored state. */
static pv_err_t s_take_continuations(pv_intake_t *in, const s_offer_t *o, pv_intake_stats_t *gs,
                                     pv_errmsg_t *em)
{
    const pv_wire_credited_group_t *cg = o->credited;
    if (!cg || !cg->n_continuation_groups)
        return PV_OK;
    size_t extra = 0;
    for (uint32_t c = 0; c < cg->n_continuation_groups; c++)
        extra += cg->continuation_groups[c].n_trajectories;
    pv_err_t err = pv_grow((void **)&in->rows, &in->cap_rows, in->n_rows + extra, sizeof *in->rows);
    if (err != PV_OK)
        return err;
    for (uint32_t c = 0; c < cg->n_continuation_groups; c++) {
        const pv_wire_continuation_group_t *w = &cg->continuation_groups[c];
        if (w->traj >= o->n_trajs || w->t >= o->trajs[w->traj].n_steps) {
            gs->bad_continuations++;
            continue;
        }
        const pv_traj_t *src = &o->trajs[w->traj];
        int64_t id =
            (int64_t)(pv_rng_mix(o->group->group_id, 0x636f6e74u + c) & (uint64_t)INT64_MAX);
        size_t taken = 0;
        for (uint32_t k = 0; k < w->n_trajectories; k++) {
            pv_traj_t *row = &in->rows[in->n_rows];
            char what[96];
            snprintf(what, sizeof what, "group %llu continuation %u.%u",
                     (unsigned long long)o->group->group_id, c, k);
            err = pv_traj_from_wire(&w->trajectories[k], src->task_text, src->texts, w->t, id,
                                    false, in->token_space, in->arena, row, what, em);
            if (err == PV_ERR_NOMEM)
                return err;
            if (err != PV_OK || row->n_steps == 0)
                continue; /* a malformed continuation is left out; the rest are taken */
            in->n_rows++;
            taken++;
            gs->reused_steps += row->n_steps;
        }
        gs->reused_rows += taken;
        gs->reused_groups += taken > 0;
    }
    return PV_OK;
}

pv_err_t pv_intake_add(pv_intake_t *in, const uint8_t *payload, size_t len, uint64_t version,
                       uint64_t max_lag, pv_intake_verdict_t *verdict, pv_errmsg_t *em)
{
    if (in->n_groups >= in->max_groups)
        return PV_ERR_FULL;
    s_offer_t o;
    bool malformed;
    pv_err_t err = s_decode(in, payload, len, &o, &malformed, em);
    if (err != PV_OK)
        return err;
    uint64_t oldest = 0;
    if (malformed || !s_versions_ok(&o, version, &oldest, em)) {
        *verdict = PV_INTAKE_MALFORMED;
        s_count(in, *verdict);
        return PV_OK;
    }
    if ((err = s_admit(in, &o, version, max_lag, oldest, verdict)) != PV_OK ||
        *verdict != PV_INTAKE_ACCEPTED)
        return err;
    pv_intake_stats_t gs;
    s_stats_clear(&gs);
    size_t base = in->n_rows;
    if ((err = s_take_labels(in, &o, &gs)) != PV_OK ||
        (err = s_take_rows(in, &o, version, &gs)) != PV_OK ||
        (err = s_take_segments(in, &o, base, &gs)) != PV_OK)
        return err;
    in->n_rows += o.n_trajs;
    if ((err = s_take_continuations(in, &o, &gs, em)) != PV_OK)
        return err;
    in->n_groups++;
    s_fold(&in->batch, &gs);
    s_fold(&in->total, &gs);
    if (o.credited) {
        s_tally(in, 0, o.credited->judge, &gs);
        s_tally(in, 1, o.credited->judge, &gs);
    }
    return PV_OK;
}

void pv_intake_set_token_space(pv_intake_t *in, uint32_t token_space)
{
    in->token_space = token_space;
}

size_t pv_intake_groups(const pv_intake_t *in)
{
    return in->n_groups;
}

const pv_traj_t *pv_intake_trajs(const pv_intake_t *in, size_t *n)
{
    *n = in->n_rows;
    return in->rows;
}

const pv_verified_seg_t *pv_intake_segments(const pv_intake_t *in, size_t *n)
{
    *n = in->n_segs;
    return in->segs;
}

const pv_intake_stats_t *pv_intake_stats(const pv_intake_t *in)
{
    return &in->batch;
}

const pv_intake_stats_t *pv_intake_totals(const pv_intake_t *in)
{
    return &in->total;
}

void pv_intake_resume(pv_intake_t *in, const pv_intake_stats_t *before)
{
    pv_intake_stats_t *t = &in->total;
    const pv_intake_stats_t *b = before;
    if (b->verified) { /* min and max over verified segments: before `verified` is summed */
        if (!t->verified || b->delta_min < t->delta_min)
            t->delta_min = b->delta_min;
        if (!t->verified || b->delta_max > t->delta_max)
            t->delta_max = b->delta_max;
    }
#define SUM_U(f) t->f += b->f;
#define SUM_D(f) t->f += b->f;
#define MAX_U(f) t->f = b->f > t->f ? b->f : t->f;
#define MIN_D(f)
#define MAX_D(f)
#define S_MERGE(name, kind) kind(name)
    PV_INTAKE_STATS_FIELDS(S_MERGE)
#undef S_MERGE
#undef SUM_U
#undef SUM_D
#undef MAX_U
#undef MIN_D
#undef MAX_D
}

pv_err_t pv_intake_stats_format(const pv_intake_stats_t *s, char *buf, size_t cap)
{
    size_t n = 0;
    int k = 0;
#define SUM_U(f)                                                                                   \
    k = snprintf(buf + n, n < cap ? cap - n : 0, "%s%s=%llu", n ? " " : "", #f,                    \
                 (unsigned long long)s->f);
#define MAX_U(f) SUM_U(f)
#define SUM_D(f) k = snprintf(buf + n, n < cap ? cap - n : 0, "%s%s=%a", n ? " " : "", #f, s->f);
#define MIN_D(f) SUM_D(f)
#define MAX_D(f) SUM_D(f)
#define S_PUT(name, kind)                                                                          \
    kind(name);                                                                                    \
    if (k < 0)                                                                                     \
        return PV_ERR_LIMIT;                                                                       \
    n += (size_t)k;
    PV_INTAKE_STATS_FIELDS(S_PUT)
#undef S_PUT
#undef SUM_U
#undef MAX_U
#undef SUM_D
#undef MIN_D
#undef MAX_D
    return n < cap ? PV_OK : PV_ERR_LIMIT;
}

pv_err_t pv_intake_stats_parse(const char *text, pv_intake_stats_t *out, pv_errmsg_t *em)
{
    s_stats_clear(out);
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t len = strcspn(p, " "), eq = strcspn(p, "=");
        if (eq >= len || eq == 0 || eq + 1 == len)
            return pv_errf(em, PV_ERR_DATA, "run totals: '%.*s' is not name=value", (int)len, p);
        char name[64], value[64];
        if (eq >= sizeof name || len - eq - 1 >= sizeof value)
            return pv_errf(em, PV_ERR_DATA, "run totals: '%.*s' is too long", (int)len, p);
        memcpy(name, p, eq);
        name[eq] = '\0';
        memcpy(value, p + eq + 1, len - eq - 1);
        value[len - eq - 1] = '\0';
        char *end = NULL;
        bool ok = true;
        errno = 0;
#define SUM_U(f)                                                                                   \
    if (strcmp(name, #f) == 0) {                                                                   \
        unsigned long long v = strtoull(value, &end, 10);                                          \
        ok = value[0] != '-' && *end == '\0' && end != value && errno == 0;                        \
        out->f = (uint64_t)v;                                                                      \
    }
#define MAX_U(f) SUM_U(f)
#define SUM_D(f)                                                                                   \
    if (strcmp(name, #f) == 0) {                                                                   \
        double v = strtod(value, &end);                                                            \
        ok = *end == '\0' && end != value && isfinite(v);                                          \
        out->f = v;                                                                                \
    }
#define MIN_D(f)          SUM_D(f)
#define MAX_D(f)          SUM_D(f)
#define S_GET(name, kind) kind(name)
        PV_INTAKE_STATS_FIELDS(S_GET)
#undef S_GET
#undef SUM_U
#undef MAX_U
#undef SUM_D
#undef MIN_D
#undef MAX_D
        if (!ok)
            return pv_errf(em, PV_ERR_DATA, "run totals: '%s' is not a number for %s", value, name);
        p += len;
    }
    return PV_OK;
}
