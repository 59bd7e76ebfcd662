/* core_fixture.h - drive a broker core in tests: events at chosen times, a log of the
 * actions it asked for, and a count of every payload hold it released (header-only). */
#ifndef PV_TEST_CORE_FIXTURE_H
#define PV_TEST_CORE_FIXTURE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker_core.h"

#define FX_HOLDS 4096
#define FX_LOG   8192

typedef struct fx {
    pv_broker_core_t *core;
    int64_t now;            /* microseconds */
    int released[FX_HOLDS]; /* times hold token i was released */
    pv_broker_action_t log[FX_LOG];
    size_t n_log;
    size_t mark;             /* start of the actions of the last event */
    uint8_t bytes[FX_HOLDS]; /* payload bytes (content = token) */
} fx_t;

static void fx_release(void *ctx, void *hold)
{
    fx_t *f = ctx;
    uintptr_t token = (uintptr_t)hold - 1;
    if (token < FX_HOLDS)
        f->released[token]++;
}

/* A core over services "judge,verify" with short timers unless the caller changes cfg. */
static inline void fx_config(pv_broker_config_t *cfg)
{
    static const char *const names[] = {"judge", "verify"};
    pv_broker_config_defaults(cfg);
    cfg->services = names;
    cfg->n_services = 2;
    cfg->heartbeat_ms = 100;
    cfg->liveness = 3;
    cfg->lease_ms = 1000;
    cfg->max_queue_msgs = 16;
    cfg->max_queue_bytes = 1 << 20;
}

static inline fx_t *fx_new(pv_broker_config_t *cfg)
{
    fx_t *f = calloc(1, sizeof *f);
    cfg->release = fx_release;
    cfg->release_ctx = f;
    f->now = 1000000;
    if (pv_broker_core_new(cfg, f->now, &f->core, NULL) != PV_OK) {
        free(f);
        return NULL;
    }
    return f;
}

static inline void fx_free(fx_t *f)
{
    pv_broker_core_destroy(&f->core);
    free(f);
}

/* Move the actions of the last event into the log and clear them. */
static inline void fx_drain(fx_t *f)
{
    size_t n;
    const pv_broker_action_t *a = pv_broker_actions(f->core, &n);
    f->mark = f->n_log;
    for (size_t i = 0; i < n && f->n_log < FX_LOG; i++)
        f->log[f->n_log++] = a[i];
    pv_broker_actions_clear(f->core);
}

static inline pv_routing_id_t fx_id(const char *name)
{
    pv_routing_id_t id;
    pv_routing_id_set(&id, name, strlen(name));
    return id;
}

static inline int fx_is(const pv_broker_action_t *a, pv_broker_action_kind_t kind, const char *to)
{
    return a->kind == kind &&
           (!to || (a->to.len == strlen(to) && memcmp(a->to.bytes, to, a->to.len) == 0));
}

/* Actions of `kind` to `to` (NULL = anyone) logged since index `from`. */
static inline int fx_count(const fx_t *f, size_t from, pv_broker_action_kind_t kind, const char *to)
{
    int n = 0;
    for (size_t i = from; i < f->n_log; i++)
        n += fx_is(&f->log[i], kind, to);
    return n;
}

/* The last action of `kind` to `to` since `from`, or NULL. */
static inline const pv_broker_action_t *fx_last(const fx_t *f, size_t from,
                                                pv_broker_action_kind_t kind, const char *to)
{
    for (size_t i = f->n_log; i-- > from;)
        if (fx_is(&f->log[i], kind, to))
            return &f->log[i];
    return NULL;
}

static inline void fx_register(fx_t *f, const char *peer, const char *service, uint32_t cap)
{
    pv_routing_id_t id = fx_id(peer);
    pv_broker_register_t reg = {
        .service = service, .capacity = cap, .role = "test", .host = "localhost", .pid = 1};
    pv_broker_on_register(f->core, f->now, &id, &reg);
    fx_drain(f);
}

/* Register with every detail a worker can give. */
static inline void fx_register_as(fx_t *f, const char *peer, const char *service, uint32_t cap,
                                  const char *role, const char *host, int64_t pid, const char *name)
{
    pv_routing_id_t id = fx_id(peer);
    pv_broker_register_t reg = {.service = service,
                                .capacity = cap,
                                .role = role,
                                .host = host,
                                .pid = pid,
                                .worker_id = name};
    pv_broker_on_register(f->core, f->now, &id, &reg);
    fx_drain(f);
}

/* Submit job `job` with `len` payload bytes; the hold token is `job` % FX_HOLDS. */
static inline void fx_submit(fx_t *f, const char *peer, const char *service, uint64_t job,
                             size_t len, bool want_reply)
{
    pv_routing_id_t id = fx_id(peer);
    uintptr_t token = (uintptr_t)(job % FX_HOLDS);
    pv_payload_t p = {.data = f->bytes, .len = len, .hold = (void *)(token + 1)};
    pv_broker_on_submit(f->core, f->now, &id, service, job, want_reply, p);
    fx_drain(f);
}

static inline void fx_ack(fx_t *f, const char *peer, uint64_t job, bool ok, const char *reply)
{
    pv_routing_id_t id = fx_id(peer);
    pv_broker_on_ack(f->core, f->now, &id, job, ok, ok ? "" : "failed", (const uint8_t *)reply,
                     reply ? strlen(reply) : 0);
    fx_drain(f);
}

static inline void fx_heartbeat(fx_t *f, const char *peer, uint32_t credits, uint32_t in_flight)
{
    pv_routing_id_t id = fx_id(peer);
    pv_broker_on_heartbeat(f->core, f->now, &id, credits, in_flight);
    fx_drain(f);
}

static inline void fx_tick(fx_t *f, int64_t advance_ms)
{
    f->now += advance_ms * 1000;
    pv_broker_tick(f->core, f->now);
    fx_drain(f);
}

/* The job id of the last LEASE to `worker` since `from` (or UINT64_MAX). */
static inline uint64_t fx_leased(const fx_t *f, size_t from, const char *worker)
{
    const pv_broker_action_t *a = fx_last(f, from, PV_ACT_LEASE, worker);
    return a ? a->job_id : UINT64_MAX;
}

static inline pv_broker_stats_t fx_stats(fx_t *f)
{
    pv_broker_stats_t st;
    if (pv_broker_snapshot(f->core, f->now, &st) != PV_OK)
        memset(&st, 0, sizeof st);
    return st;
}

#endif
