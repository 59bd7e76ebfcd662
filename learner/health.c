/* health.c - the run's books from the broker; see health.h. */
#include "learner/health.h"

#include <stdio.h>
#include <string.h>

void pv_health_llm_from_status(pv_health_llm_t *l, const pv_wire_run_status_t *r)
{
    memset(l, 0, sizeof *l);
    l->groups = r->llm_groups;
    l->answered = r->llm_answered;
    l->requests = r->llm_requests;
    l->prompt_tokens = r->llm_prompt_tokens;
    l->completion_tokens = r->llm_completion_tokens;
    l->repairs = r->llm_repairs;
    l->tool_calls = r->llm_tool_calls;
    l->latency_p50_ms = r->llm_latency_p50_ms;
    l->latency_p99_ms = r->llm_latency_p99_ms;
    l->ago_s = (double)r->ago_ms / 1e3;
    for (uint32_t i = 0; i < r->n_llm_fallbacks && l->n_fallbacks < PV_HEALTH_MAX_FALLBACKS; i++) {
        snprintf(l->fallback_reason[l->n_fallbacks], sizeof l->fallback_reason[0], "%s",
                 r->llm_fallbacks[i].name);
        l->fallback_count[l->n_fallbacks++] = r->llm_fallbacks[i].count;
    }
}

/* The judge's RUN_STATUS of a reply, kept as its last cost report. */
static void s_take_llm(pv_health_t *h, const pv_wire_run_status_t *r)
{
    h->has_llm = true;
    pv_health_llm_from_status(&h->llm, r);
}

pv_err_t pv_health_record(pv_health_t *h, const pv_wire_stats_reply_t *st, uint64_t iteration,
                          pv_metrics_t *m)
{
    h->fetched = true;
    h->stale = false;
    h->iteration = iteration;
    h->fetches++;
    h->weights_version = st->weights_version;
    h->n_services = 0;
    json_t *o = json_object(), *svc = json_object(), *err = json_object();
    json_object_set_new(o, "kind", json_string("broker"));
    json_object_set_new(o, "iteration", json_integer((json_int_t)iteration));
    json_object_set_new(o, "uptime_ms", json_integer((json_int_t)st->uptime_ms));
    for (uint32_t i = 0; i < st->n_services && h->n_services < PV_HEALTH_MAX_SERVICES; i++) {
        const pv_wire_service_stats_t *s = &st->services[i];
        pv_health_service_t *d = &h->services[h->n_services++];
        snprintf(d->name, sizeof d->name, "%s", s->name);
        d->enqueued = s->enqueued;
        d->acked = s->acked;
        d->dropped = s->dropped;
        d->in_flight = s->inflight_msgs;
        d->queued = s->depth_msgs;
        d->requeued = s->requeued;
        d->expired = s->expired;
        d->rejected = s->rejected;
        d->unaccounted =
            (int64_t)d->enqueued - (int64_t)(d->acked + d->dropped + d->in_flight + d->queued);
        json_t *x =
            json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "enqueued",
                      (json_int_t)s->enqueued, "delivered", (json_int_t)s->delivered, "acked",
                      (json_int_t)s->acked, "acked_failed", (json_int_t)s->acked_failed, "requeued",
                      (json_int_t)s->requeued, "expired", (json_int_t)s->expired, "rejected",
                      (json_int_t)s->rejected, "duplicates", (json_int_t)s->duplicates, "dropped",
                      (json_int_t)s->dropped, "in_flight", (json_int_t)s->inflight_msgs, "queued",
                      (json_int_t)s->depth_msgs, "workers_live", (json_int_t)s->workers_live,
                      "workers_benched", (json_int_t)s->workers_benched);
        json_object_set_new(svc, s->name, x);
    }
    for (uint32_t i = 0; i < st->n_errors; i++)
        json_object_set_new(err, st->errors[i].name, json_integer((json_int_t)st->errors[i].count));
    json_object_set_new(o, "services", svc);
    json_object_set_new(o, "errors", err);
    json_object_set_new(o, "weights_version", json_integer((json_int_t)st->weights_version));
    pv_err_t rc = m ? pv_metrics_write(m, o) : PV_OK;
    json_decref(o);
    for (uint32_t i = 0; i < st->n_runs; i++)
        if (st->runs[i].source && strcmp(st->runs[i].source, "judge") == 0)
            s_take_llm(h, &st->runs[i]);
    if (rc == PV_OK && m && h->has_llm) {
        json_t *l = pv_health_llm_json(h);
        json_object_set_new(l, "kind", json_string("llm_judge"));
        json_object_set_new(l, "iteration", json_integer((json_int_t)iteration));
        rc = pv_metrics_write(m, l);
        json_decref(l);
    }
    return rc;
}

json_t *pv_health_llm_json(const pv_health_t *h)
{
    return h->has_llm ? pv_health_llm_cost_json(&h->llm) : NULL;
}

uint64_t pv_health_llm_fallbacks(const pv_health_llm_t *l)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < l->n_fallbacks; i++)
        total += l->fallback_count[i];
    return total;
}

void pv_health_llm_line(const pv_health_llm_t *l, char *buf, size_t cap)
{
    snprintf(buf, cap,
             "llm judge cost: %llu groups (%llu the model's, %llu fell back), %llu requests, "
             "%llu prompt + %llu completion tokens, latency p50 %u ms p99 %u ms, %llu repairs%s",
             (unsigned long long)l->groups, (unsigned long long)l->answered,
             (unsigned long long)pv_health_llm_fallbacks(l), (unsigned long long)l->requests,
             (unsigned long long)l->prompt_tokens, (unsigned long long)l->completion_tokens,
             l->latency_p50_ms, l->latency_p99_ms, (unsigned long long)l->repairs,
             l->groups > 0 && l->answered == 0
                 ? " (warning: the model answered none: check judge.base_url, judge.model "
                   "and the endpoint)"
                 : "");
}

json_t *pv_health_llm_cost_json(const pv_health_llm_t *l)
{
    json_t *fb = json_object();
    uint64_t total = pv_health_llm_fallbacks(l);
    for (uint32_t i = 0; i < l->n_fallbacks; i++)
        json_object_set_new(fb, l->fallback_reason[i],
                            json_integer((json_int_t)l->fallback_count[i]));
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:I,s:f}", "groups",
                     (json_int_t)l->groups, "answered", (json_int_t)l->answered, "requests",
                     (json_int_t)l->requests, "prompt_tokens", (json_int_t)l->prompt_tokens,
                     "completion_tokens", (json_int_t)l->completion_tokens, "latency_p50_ms",
                     (json_int_t)l->latency_p50_ms, "latency_p99_ms", (json_int_t)l->latency_p99_ms,
                     "repairs", (json_int_t)l->repairs, "tool_calls", (json_int_t)l->tool_calls,
                     "fallbacks", fb, "fallbacks_total", (json_int_t)total, "status_age_s",
                     l->ago_s);
}

pv_err_t pv_health_status(uint64_t iteration, uint64_t iterations, uint64_t version,
                          const char *run, const pv_judge_tally_t *judges, size_t n,
                          pv_arena_t *arena, pv_wire_run_status_t *out)
{
    memset(out, 0, sizeof *out);
    out->source = "learner";
    out->run = run ? run : "";
    out->iteration = iteration;
    out->iterations = iterations;
    out->policy_version = version;
    pv_wire_judge_status_t *j = pv_arena_calloc(arena, n + 1, sizeof *j);
    if (!j)
        return PV_ERR_NOMEM;
    for (size_t i = 0; i < n && out->n_judges < 16; i++) {
        const pv_judge_tally_t *t = &judges[i];
        if (t->verified == 0)
            continue;
        double v = (double)t->verified;
        j[out->n_judges++] =
            (pv_wire_judge_status_t){.judge = t->judge,
                                     .verified = t->verified,
                                     .positive = t->positive,
                                     .acceptance_rate = (float)((double)t->positive / v),
                                     .acceptance_rate_noise = (float)(t->noise_pos_sum / v),
                                     .segment_turns = (float)((double)t->turns_sum / v)};
    }
    out->judges = j;
    return PV_OK;
}

void pv_health_fetch_failed(pv_health_t *h, const char *why)
{
    h->failures++;
    h->stale = h->fetched;
    snprintf(h->last_error, sizeof h->last_error, "%s", why && why[0] ? why : "failed");
}

bool pv_health_conserved(const pv_health_t *h)
{
    for (uint32_t i = 0; i < h->n_services; i++)
        if (h->services[i].unaccounted != 0)
            return false;
    return true;
}

void pv_health_line(const pv_health_t *h, char *buf, size_t cap)
{
    size_t n = 0;
    if (!h->fetched) {
        snprintf(buf, cap, "broker: no statistics (%s)",
                 h->last_error[0] ? h->last_error : "never fetched");
        return;
    }
    bool ok = pv_health_conserved(h);
    if (h->stale)
        n += (size_t)snprintf(buf + n, cap - n,
                              "broker (as of iteration %llu; the last fetch failed: %s): ",
                              (unsigned long long)h->iteration, h->last_error);
    else
        n += (size_t)snprintf(buf + n, cap - n, "broker: ");
    if (n >= cap)
        return;
    n += (size_t)snprintf(buf + n, cap - n, "%s:", ok ? "nothing lost" : "jobs unaccounted for");
    const char *sep = "";
    for (uint32_t i = 0; i < h->n_services && n < cap; i++) {
        const pv_health_service_t *s = &h->services[i];
        if (!s->enqueued && !s->unaccounted)
            continue;
        n += (size_t)snprintf(buf + n, cap - n,
                              "%s %s %llu = %llu acked + %llu dropped + %llu in flight + %llu "
                              "queued",
                              sep, s->name, (unsigned long long)s->enqueued,
                              (unsigned long long)s->acked, (unsigned long long)s->dropped,
                              (unsigned long long)s->in_flight, (unsigned long long)s->queued);
        sep = ";";
        if (s->unaccounted && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, " (%lld unaccounted)",
                                  (long long)s->unaccounted);
    }
}

json_t *pv_health_json(const pv_health_t *h)
{
    json_t *o = json_object(), *svc = json_object();
    for (uint32_t i = 0; i < h->n_services; i++) {
        const pv_health_service_t *s = &h->services[i];
        json_object_set_new(svc, s->name,
                            json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "enqueued",
                                      (json_int_t)s->enqueued, "acked", (json_int_t)s->acked,
                                      "dropped", (json_int_t)s->dropped, "in_flight",
                                      (json_int_t)s->in_flight, "queued", (json_int_t)s->queued,
                                      "unaccounted", (json_int_t)s->unaccounted));
    }
    json_object_set_new(o, "fetched", json_boolean(h->fetched));
    json_object_set_new(o, "conserved", json_boolean(h->fetched && pv_health_conserved(h)));
    json_object_set_new(o, "iteration", json_integer((json_int_t)h->iteration));
    json_object_set_new(o, "stale", json_boolean(h->stale));
    json_object_set_new(o, "services", svc);
    char line[1024];
    pv_health_line(h, line, sizeof line);
    json_object_set_new(o, "line", json_string(line));
    return o;
}
