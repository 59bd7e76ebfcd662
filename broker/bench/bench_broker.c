/* prover-broker-bench - the broker against a plain zmq_proxy, side by side in one run.
 *
 *   prover-broker-bench [--seconds S] [--out FILE.json]
 *
 * For 1 KiB and 64 KiB requests, with 1 request outstanding (latency) and 32 (throughput),
 * it measures request/reply round trips over TCP loopback through:
 *   proxy   a plain zmq_proxy (ROUTER/DEALER) with an echo worker: the floor;
 *   raw     prover-broker with a client and a worker speaking the wire protocol directly:
 *           what the broker adds (decode, lease, ack, reply, one copy of the payload);
 *   client  prover-broker with the pv_bclient producer and worker (agent threads): what a
 *           role pays end to end.
 * Then it fills a broker whose queue is bounded to 32 MiB with 64 KiB jobs and reports its
 * RSS against that bound. Prints a table with the ratios to the proxy and, with --out, the
 * same numbers as JSON. Timing is reported, never judged.
 */
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "broker/bench/bench_int.h"
#include "broker/broker_spawn.h"
#include "common/wire/wire.h"

static const char *const s_paths[3] = {"proxy", "raw", "client"};

static void s_broker_bin(char *buf, size_t cap)
{
    char self[PATH_MAX] = {0};
    if (readlink("/proc/self/exe", self, sizeof self - 1) < 0)
        snprintf(self, sizeof self, "build/bin/x");
    snprintf(buf, cap, "%s/prover-broker", dirname(self));
}

static json_t *s_run_json(const char *path, const bench_run_t *r)
{
    double rate = r->elapsed_s > 0 ? (double)r->n / r->elapsed_s : 0;
    return json_pack("{s:s, s:I, s:i, s:I, s:f, s:f, s:f, s:f, s:I}", "path", path, "bytes",
                     (json_int_t)r->bytes, "window", r->window, "round_trips", (json_int_t)r->n,
                     "per_s", rate, "mib_per_s", rate * (double)r->bytes / (1 << 20), "p50_us",
                     pv_hist_quantile(r->hist, 0.5), "p99_us", pv_hist_quantile(r->hist, 0.99),
                     "refused", (json_int_t)r->refused);
}

/* Fill a broker bounded to `bound` bytes with 64 KiB jobs (no worker) and read its RSS. */
static json_t *s_rss(const char *bin, size_t bound)
{
    char bytes_arg[64];
    snprintf(bytes_arg, sizeof bytes_arg, "broker.max_queue_bytes=%zu", bound);
    const char *args[] = {"broker.bind=tcp://127.0.0.1:*", "broker.metrics_port=0",
                          "broker.max_queue_msgs=1000000", bytes_arg,
                          "run.log_level=error",           NULL};
    pv_broker_proc_t b;
    if (pv_broker_spawn(bin, args, 5000, &b) != PV_OK)
        return NULL;
    void *zctx = zmq_ctx_new(), *s = zmq_socket(zctx, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_connect(s, b.endpoint);
    pv_wire_buf_t buf;
    pv_wire_buf_init(&buf, 0);
    pv_wire_dec_t *dec = NULL;
    pv_arena_t *arena = NULL;
    pv_wire_dec_new(NULL, &dec);
    pv_arena_new(0, 1u << 20, &arena);
    pv_wire_msg_t m = {.type = PV_MSG_REGISTER};
    m.registration =
        (pv_wire_registration_t){.service = "", .role = "bench", .host = "", .worker_id = "rss"};
    pv_wire_encode(&m, NULL, &buf, NULL);
    zmq_send(s, buf.data, buf.len, 0);
    usleep(200000);
    size_t rss0 = pv_proc_rss_bytes(b.pid);
    enum { JOB = 65536 };
    uint8_t *payload = calloc(1, JOB);
    uint64_t accepted = 0, refused = 0, rss_full = 0;
    size_t rss_peak = rss0;
    for (uint64_t id = 1; refused < 2000; id++) {
        m = (pv_wire_msg_t){.type = PV_MSG_SUBMIT};
        m.submit = (pv_wire_submit_t){
            .service = "verify", .job_id = id, .payload = {.ptr = payload, .len = JOB}};
        pv_wire_encode(&m, NULL, &buf, NULL);
        zmq_send(s, buf.data, buf.len, 0);
        for (;;) { /* wait for this job's SUBMIT_ACK (skip heartbeats) */
            zmq_msg_t f;
            zmq_msg_init(&f);
            if (zmq_msg_recv(&f, s, 0) < 0)
                break;
            pv_arena_reset(arena);
            pv_wire_msg_t a;
            int got =
                pv_wire_decode(dec, zmq_msg_data(&f), zmq_msg_size(&f), arena, &a, NULL) == PV_OK &&
                a.type == PV_MSG_SUBMIT_ACK;
            if (got)
                a.submit_ack.accepted ? accepted++ : refused++;
            zmq_msg_close(&f);
            if (got)
                break;
        }
        if (refused == 1 && !rss_full) {
            rss_full = pv_proc_rss_bytes(b.pid);
        }
        size_t now = pv_proc_rss_bytes(b.pid);
        if (id % 64 == 0 && now > rss_peak)
            rss_peak = now;
    }
    size_t rss_after = pv_proc_rss_bytes(b.pid);
    if (rss_after > rss_peak)
        rss_peak = rss_after;
    free(payload);
    pv_wire_buf_free(&buf);
    pv_wire_dec_destroy(&dec);
    pv_arena_destroy(&arena);
    zmq_close(s);
    zmq_ctx_term(zctx);
    pv_broker_proc_kill(&b, SIGTERM);
    double mib = 1 << 20;
    return json_pack("{s:f, s:I, s:I, s:f, s:f, s:f, s:f, s:f}", "bound_mib", bound / mib,
                     "jobs_accepted", (json_int_t)accepted, "jobs_refused_after",
                     (json_int_t)refused, "payload_held_mib", accepted * (double)JOB / mib,
                     "rss_idle_mib", rss0 / mib, "rss_full_mib", rss_full / mib, "rss_peak_mib",
                     rss_peak / mib, "growth_over_bound",
                     ((double)rss_peak - (double)rss0) / (double)bound);
}

int main(int argc, char **argv)
{
    double seconds = 1.0;
    const char *out_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out_path = argv[++i];
        else {
            fprintf(stderr, "usage: prover-broker-bench [--seconds S] [--out FILE.json]\n");
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    char bin[PATH_MAX + 32];
    s_broker_bin(bin, sizeof bin);
    const char *args[] = {"broker.bind=tcp://127.0.0.1:*", "broker.metrics_port=0",
                          "broker.max_queue_msgs=100000", "run.log_level=error", NULL};
    pv_broker_proc_t b;
    if (pv_broker_spawn(bin, args, 5000, &b) != PV_OK) {
        fprintf(stderr, "prover-broker-bench: cannot start %s\n", bin);
        return 1;
    }
    json_t *runs = json_array();
    const size_t sizes[2] = {1024, 65536};
    const int windows[2] = {1, 32};
    uint64_t id_base = 1;
    printf("%-7s %6s %-7s %10s %9s %9s %9s %9s %9s\n", "size", "window", "path", "req/s", "MiB/s",
           "p50 us", "p99 us", "rate/px", "p50/px");
    for (int si = 0; si < 2; si++)
        for (int wi = 0; wi < 2; wi++) {
            double rate[3] = {0}, p50[3] = {0};
            for (int path = 0; path < 3; path++) {
                bench_run_t *r = calloc(1, sizeof *r);
                r->hist = calloc(1, sizeof *r->hist);
                r->bytes = sizes[si];
                r->window = windows[wi];
                r->seconds = seconds;
                r->id_base = id_base;
                id_base += 1u << 30;
                int rc = path == 0   ? bench_proxy(r)
                         : path == 1 ? bench_broker_raw(r, b.endpoint)
                                     : bench_broker_client(r, b.endpoint);
                rate[path] = r->elapsed_s > 0 ? (double)r->n / r->elapsed_s : 0;
                p50[path] = pv_hist_quantile(r->hist, 0.5);
                printf("%-7s %6d %-7s %10.0f %9.1f %9.1f %9.1f %9.3f %9.3f%s\n",
                       sizes[si] == 1024 ? "1KiB" : "64KiB", windows[wi], s_paths[path], rate[path],
                       rate[path] * (double)sizes[si] / (1 << 20), p50[path],
                       pv_hist_quantile(r->hist, 0.99), rate[0] > 0 ? rate[path] / rate[0] : 0,
                       p50[0] > 0 ? p50[path] / p50[0] : 0, rc ? "  (failed)" : "");
                fflush(stdout);
                json_t *j = s_run_json(s_paths[path], r);
                json_object_set_new(j, "rate_over_proxy",
                                    json_real(rate[0] > 0 ? rate[path] / rate[0] : 0));
                json_object_set_new(j, "p50_over_proxy",
                                    json_real(p50[0] > 0 ? p50[path] / p50[0] : 0));
                json_array_append_new(runs, j);
                free(r->hist);
                free(r);
            }
        }
    pv_broker_proc_kill(&b, SIGTERM);
    json_t *rss = s_rss(bin, 32u << 20);
    if (rss)
        printf("\nfull queue: bound %.0f MiB, payload held %.1f MiB, RSS idle %.1f MiB, "
               "full %.1f MiB, peak %.1f MiB: growth/bound %.3f\n",
               json_real_value(json_object_get(rss, "bound_mib")),
               json_real_value(json_object_get(rss, "payload_held_mib")),
               json_real_value(json_object_get(rss, "rss_idle_mib")),
               json_real_value(json_object_get(rss, "rss_full_mib")),
               json_real_value(json_object_get(rss, "rss_peak_mib")),
               json_real_value(json_object_get(rss, "growth_over_bound")));
    if (out_path) {
        json_t *o = json_pack("{s:o, s:o}", "runs", runs, "full_queue", rss ? rss : json_null());
        json_dump_file(o, out_path, JSON_INDENT(2));
        json_decref(o);
    } else {
        json_decref(runs);
        json_decref(rss);
    }
    return 0;
}
