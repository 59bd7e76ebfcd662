/* health.h - a run's health kept with its results (issue: "nothing lost, and shown"): the
 * broker's counters, fetched by the learner, in run.out_dir/metrics.jsonl and summary.json.
 *
 * Every learner.health_every iterations and at the end the learner asks its broker for its
 * statistics (common/net/stats_fetch.h) and writes a line of kind "broker": per service the
 * counters (enqueued, delivered, acked, acked_failed, requeued, expired, rejected,
 * duplicates, dropped), the jobs in flight and queued, live and benched workers; the
 * broker's error counters; the relay's weights version. At the end the summary checks
 * conservation per service:
 *     enqueued = acked + dropped + in flight + queued
 * (every accepted job was acknowledged, given up with its producer told, or is still held or
 * waiting) and says so in one line; a difference is reported as jobs unaccounted for.
 */
#ifndef PV_LEARNER_HEALTH_H
#define PV_LEARNER_HEALTH_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/metrics.h"
#include "common/wire/wire.h"
#include "learner/intake.h"

#define PV_HEALTH_MAX_SERVICES 16

/* One service's books at the last fetch. */
typedef struct pv_health_service {
    char name[64];
    uint64_t enqueued, acked, dropped, in_flight, queued, requeued, expired, rejected;
    int64_t unaccounted; /* enqueued - (acked + dropped + in flight + queued) */
} pv_health_service_t;

/* The LLM judge's cost (prover.judge = llm) as the judge role last reported it to the broker
 * (RUN_STATUS, broker/run_status.h), cumulative over the judge's life. */
#define PV_HEALTH_MAX_FALLBACKS 16
typedef struct pv_health_llm {
    uint64_t groups, answered, requests, prompt_tokens, completion_tokens, repairs, tool_calls;
    uint32_t latency_p50_ms, latency_p99_ms; /* over its last 1024 requests */
    uint32_t n_fallbacks;
    char fallback_reason[PV_HEALTH_MAX_FALLBACKS][33];
    uint64_t fallback_count[PV_HEALTH_MAX_FALLBACKS];
    double ago_s; /* the status's age when fetched */
} pv_health_llm_t;

typedef struct pv_health {
    bool fetched;       /* at least one fetch succeeded */
    uint64_t iteration; /* the iteration of the last recorded reply (the books' age) */
    bool stale;         /* the fetch after it failed (pv_health_fetch_failed): the books are older
                           than the run's end; the line and the json say so */
    bool has_llm;       /* a judge's RUN_STATUS was in a reply: llm holds its last */
    pv_health_llm_t llm;
    uint64_t fetches, failures;
    char last_error[PV_ERRMSG_MAX];
    pv_health_service_t services[PV_HEALTH_MAX_SERVICES];
    uint32_t n_services;
    uint64_t weights_version;
} pv_health_t;

/* Record one STATS_REPLY into *h and write its "broker" line for `iteration` (m may be NULL:
 * record only); when the reply carries the judge's RUN_STATUS, also a line of kind
 * "llm_judge": iteration, groups, answered, requests, prompt_tokens, completion_tokens,
 * latency_p50_ms, latency_p99_ms, repairs, tool_calls, fallbacks {reason: n}, fallbacks_total,
 * status_age_s. Errors: the metrics writer's. */
pv_err_t pv_health_record(pv_health_t *h, const pv_wire_stats_reply_t *st, uint64_t iteration,
                          pv_metrics_t *m);

/* A fetch failed (`why`: what went wrong): counted, kept as last_error, and the books held
 * are marked stale until the next pv_health_record. */
void pv_health_fetch_failed(pv_health_t *h, const char *why);

/* True when every service's books balance (or nothing was fetched). */
bool pv_health_conserved(const pv_health_t *h);

/* The one summary line ("broker: nothing lost: judge 6400 = 6400 acked + 0 dropped + 0 in
 * flight + 0 queued; ..." or what is unaccounted), into buf; books older than a failed fetch
 * say so ("broker (as of iteration 70; the last fetch failed: ...): ..."). */
void pv_health_line(const pv_health_t *h, char *buf, size_t cap);

/* The summary.json object of the books (new reference): fetched, conserved, iteration (of
 * the books), stale, services {name: {enqueued, acked, dropped, in_flight, queued,
 * unaccounted}}, line. */
json_t *pv_health_json(const pv_health_t *h);

/* The summary.json object of the LLM judge's cost (the fields of the "llm_judge" line; new
 * reference), or NULL when no judge reported one. */
json_t *pv_health_llm_json(const pv_health_t *h);

/* The same object for cost `l` (new reference): groups, answered, requests, prompt and
 * completion tokens, latency p50/p99, repairs, tool calls, fallbacks by reason and their
 * total, status_age_s. */
json_t *pv_health_llm_cost_json(const pv_health_llm_t *l);

/* Groups whose model answer was not used, over every reason. */
uint64_t pv_health_llm_fallbacks(const pv_health_llm_t *l);

/* The summary's one line of cost `l` into buf (no newline): "llm judge cost: G groups (A the
 * model's, F fell back), R requests, P prompt + C completion tokens, latency p50 X ms p99 Y
 * ms, N repairs", with a warning appended when the model answered none of its groups (a
 * wrong judge.base_url or judge.model otherwise reads as a contrast-judge run). */
void pv_health_llm_line(const pv_health_llm_t *l, char *buf, size_t cap);

/* The LLM judge's cost from its RUN_STATUS `r` (the judge's pv_llm_status, judge/llm_role.h)
 * into *out: what the broker relays to the learner, and what prover-train-local reads of
 * its own judge. Fallback reasons past PV_HEALTH_MAX_FALLBACKS are left out. */
void pv_health_llm_from_status(pv_health_llm_t *out, const pv_wire_run_status_t *r);

/* The learner's RUN_STATUS (broker/run_status.h, docs/broker.md): iteration, `iterations`
 * planned, policy `version`, the run's name (borrowed; may be NULL) and per judge of
 * `judges` (n of them, the run's tallies: learner/intake.h) verified, positive, the
 * acceptance rate positive / verified, the share expected by noise alone and the mean
 * segment length. Judges without a verified segment are left out. Arrays come from `arena`,
 * names point into `judges`. Errors: PV_ERR_NOMEM. */
pv_err_t pv_health_status(uint64_t iteration, uint64_t iterations, uint64_t version,
                          const char *run, const pv_judge_tally_t *judges, size_t n,
                          pv_arena_t *arena, pv_wire_run_status_t *out);

#endif
