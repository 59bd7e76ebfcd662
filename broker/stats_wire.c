/* stats_wire.c - snapshot <-> STATS_REPLY; see stats_wire.h. */
#include "broker/stats_wire.h"

#include <stdio.h>
#include <string.h>

static uint32_t s_u32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

pv_err_t pv_stats_to_wire(const pv_broker_stats_t *st, pv_arena_t *arena, pv_wire_msg_t *out)
{
    memset(out, 0, sizeof *out);
    out->type = PV_MSG_STATS_REPLY;
    pv_wire_stats_reply_t *r = &out->stats_reply;
    pv_wire_service_stats_t *sv = pv_arena_calloc(arena, st->n_services + 1u, sizeof *sv);
    pv_wire_worker_stats_t *wk = pv_arena_calloc(arena, st->n_workers + 1u, sizeof *wk);
    pv_wire_error_count_t *er = pv_arena_calloc(arena, PV_BERR__COUNT, sizeof *er);
    if (!sv || !wk || !er)
        return PV_ERR_NOMEM;
    r->uptime_ms = (uint64_t)(st->uptime_s * 1e3);
    for (uint32_t i = 0; i < st->n_services; i++) {
        const pv_service_stats_t *s = &st->services[i];
        uint64_t rejected = 0;
        for (int k = 0; k < PV_REJECT__COUNT; k++)
            rejected += s->rejected[k];
        sv[i] = (pv_wire_service_stats_t){
            .name = s->name,
            .depth_msgs = s_u32(s->queued_msgs),
            .depth_bytes = s->queued_bytes,
            .max_msgs = s_u32(s->max_msgs),
            .max_bytes = s->max_bytes,
            .enqueued = s->counter[PV_SVC_enqueued],
            .delivered = s->counter[PV_SVC_delivered],
            .acked = s->counter[PV_SVC_acked],
            .requeued = s->counter[PV_SVC_requeued],
            .expired = s->counter[PV_SVC_expired],
            .rejected = rejected,
            .workers_live = s_u32(s->live_workers),
            .lease_p50_ms = (float)s->latency_p50_ms,
            .lease_p99_ms = (float)s->latency_p99_ms,
            .rate_in = (float)s->rate_enqueued,
            .rate_out = (float)s->rate_acked,
        };
    }
    for (uint32_t i = 0; i < st->n_workers; i++) {
        const pv_worker_stats_t *w = &st->workers[i];
        wk[i] = (pv_wire_worker_stats_t){
            .worker_id = w->worker_id[0] ? w->worker_id : w->id_hex,
            .service = w->service,
            .last_heartbeat_ms = s_u32((uint64_t)w->last_heartbeat_ms),
            .in_flight = s_u32(w->in_flight),
            .completed = w->completed,
            .capacity = s_u32(w->capacity),
        };
    }
    for (int e = 0; e < PV_BERR__COUNT; e++)
        er[e] = (pv_wire_error_count_t){.name = pv_broker_error_name[e], .count = st->error[e]};
    r->services = sv;
    r->n_services = st->n_services;
    r->workers = wk;
    r->n_workers = st->n_workers;
    r->errors = er;
    r->n_errors = PV_BERR__COUNT;
    return PV_OK;
}

pv_err_t pv_stats_from_wire(const pv_wire_stats_reply_t *r, pv_broker_stats_t *out)
{
    if (pv_broker_stats_alloc(out, r->n_services, r->n_workers) != PV_OK)
        return PV_ERR_NOMEM;
    out->uptime_s = (double)r->uptime_ms / 1e3;
    for (uint32_t i = 0; i < r->n_services; i++) {
        const pv_wire_service_stats_t *s = &r->services[i];
        pv_service_stats_t *o = &out->services[i];
        snprintf(o->name, sizeof o->name, "%s", s->name);
        o->queued_msgs = s->depth_msgs;
        o->queued_bytes = s->depth_bytes;
        o->max_msgs = s->max_msgs;
        o->max_bytes = s->max_bytes;
        o->counter[PV_SVC_enqueued] = s->enqueued;
        o->counter[PV_SVC_delivered] = s->delivered;
        o->counter[PV_SVC_acked] = s->acked;
        o->counter[PV_SVC_requeued] = s->requeued;
        o->counter[PV_SVC_expired] = s->expired;
        o->rejected[PV_REJ_queue_full] = s->rejected;
        o->live_workers = s->workers_live;
        o->latency_p50_ms = s->lease_p50_ms;
        o->latency_p99_ms = s->lease_p99_ms;
        o->rate_enqueued = s->rate_in;
        o->rate_acked = s->rate_out;
    }
    for (uint32_t i = 0; i < r->n_workers; i++) {
        const pv_wire_worker_stats_t *w = &r->workers[i];
        pv_worker_stats_t *o = &out->workers[i];
        snprintf(o->worker_id, sizeof o->worker_id, "%s", w->worker_id);
        snprintf(o->service, sizeof o->service, "%s", w->service);
        o->last_heartbeat_ms = w->last_heartbeat_ms;
        o->in_flight = w->in_flight;
        o->completed = w->completed;
        o->capacity = w->capacity;
    }
    for (uint32_t i = 0; i < r->n_errors; i++) {
        int e = pv_stats_name_index(pv_broker_error_name, PV_BERR__COUNT, r->errors[i].name);
        if (e >= 0)
            out->error[e] = r->errors[i].count;
    }
    return PV_OK;
}
