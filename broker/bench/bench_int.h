/* bench_int.h - shared parts of prover-broker-bench: one measured run of request/reply
 * round trips through a forwarding path, with its latency histogram. */
#ifndef PV_BENCH_INT_H
#define PV_BENCH_INT_H

#include <stddef.h>
#include <stdint.h>

#include "broker/latency_hist.h"

#define BENCH_RING 4096 /* send timestamps by sequence number (window <= BENCH_RING) */

typedef struct bench_run {
    size_t bytes;     /* payload per request */
    int window;       /* requests outstanding at once */
    double seconds;   /* measuring time after the warm-up */
    uint64_t n;       /* round trips measured */
    double elapsed_s; /* their wall time */
    uint64_t refused; /* broker refusals seen (should be 0) */
    uint64_t id_base; /* job ids are id_base + sequence: unique across runs */
    pv_hist_t *hist;  /* round-trip latency, us */
    int64_t sent_ns[BENCH_RING];
} bench_run_t;

int64_t bench_now_ns(void);

/* Record the completion of request `seq`; returns 1 while the run should continue.
 * Handles the warm-up (the first 200 completions are not measured). */
int bench_done(bench_run_t *r, uint64_t seq, uint64_t *measured_from, int64_t *t_start);

/* The three paths. Each returns 0 on success and fills r->n, r->elapsed_s, r->hist. */
int bench_proxy(bench_run_t *r);
int bench_broker_raw(bench_run_t *r, const char *endpoint);
int bench_broker_client(bench_run_t *r, const char *endpoint);

#endif
