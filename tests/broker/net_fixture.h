/* net_fixture.h - start prover-broker and bk_worker processes for multi-process tests, and
 * look at the broker through its stats (header-only).
 *
 * Processes run on loopback with ephemeral ports; every helper has a timeout so a broken
 * broker fails a test instead of hanging it. */
#ifndef PV_TEST_NET_FIXTURE_H
#define PV_TEST_NET_FIXTURE_H

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "broker/broker_spawn.h"
#include "broker/stats_client.h"
#include "common/net/broker_client.h"
#include "pv_test.h"

#define NF_HB_MS 100 /* heartbeat of every test process; liveness 3 */

typedef pv_broker_proc_t nf_broker_t;

static inline int64_t nf_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void nf_sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A TCP port free right now (bind to 0, read it, close). */
static inline unsigned nf_free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    bind(s, (struct sockaddr *)&a, sizeof a);
    getsockname(s, (struct sockaddr *)&a, &len);
    close(s);
    return ntohs(a.sin_port);
}

/* Start prover-broker with `bind` and extra `key=value` arguments (NULL-terminated); wait
 * for its "listening on" line. Returns 0 on success. */
static inline int nf_broker_start(nf_broker_t *b, const char *bind, const char *const *extra)
{
    char bin[512], bind_arg[160], hb[64];
    pv_test_bin("prover-broker", bin, sizeof bin);
    snprintf(bind_arg, sizeof bind_arg, "broker.bind=%s", bind);
    snprintf(hb, sizeof hb, "broker.heartbeat_ms=%d", NF_HB_MS);
    /* metrics off unless the test asks (a later key=value wins): parallel tests would
     * all want the default port */
    const char *argv[32] = {bind_arg, hb, "broker.liveness=3", "run.log_level=warn",
                            "broker.metrics_port=0"};
    int n = 5;
    for (int i = 0; extra && extra[i] && n < 31; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    return pv_broker_spawn(bin, argv, 5000, b) == PV_OK ? 0 : -1;
}

/* Stop a child: with SIGTERM it must exit cleanly (status 0: no sanitizer report, no
 * crash on the way out); with SIGKILL it is simply reaped. */
static inline void nf_kill(pid_t pid, int sig)
{
    int rc = pv_proc_stop(pid, sig);
    if (sig == SIGTERM && rc != 0)
        fail_msg("process %d exited with %d after SIGTERM", (int)pid, rc);
}

/* Start bk_worker; its output goes to $PV_BK_LOG_DIR/bk_<name>_<pid>.log when that is set,
 * else nowhere. */
static inline pid_t nf_worker(const char *endpoint, const char *service, int capacity, int work_ms,
                              const char *mode, const char *name)
{
    const char *b = getenv("PV_BUILD_DIR");
    char bin[512], cap[16], work[16], hb[16], log[256];
    snprintf(bin, sizeof bin, "%s/tests/bk_worker", b && *b ? b : "build");
    snprintf(cap, sizeof cap, "%d", capacity);
    snprintf(work, sizeof work, "%d", work_ms);
    snprintf(hb, sizeof hb, "%d", NF_HB_MS);
    const char *dir = getenv("PV_BK_LOG_DIR");
    if (dir && *dir)
        snprintf(log, sizeof log, "%s/bk_%s_%d.log", dir, name, (int)getpid());
    else
        snprintf(log, sizeof log, "/dev/null");
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0)
            dup2(fd, 1);
        execl(bin, bin, endpoint, service, cap, work, mode, name, hb, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static inline pv_bclient_opts_t nf_opts(const char *endpoint)
{
    pv_bclient_opts_t o = {.endpoint = endpoint,
                           .heartbeat_ms = NF_HB_MS,
                           .liveness = 3,
                           .reconnect_ms = 50,
                           .reconnect_max_ms = 400,
                           .role = "test"};
    return o;
}

/* One stats snapshot (zeroed on failure), as CURVE client `keys` (NULL = plain). */
static inline pv_broker_stats_t nf_stats_k(const char *endpoint, const pv_curve_client_t *keys)
{
    pv_broker_stats_t st;
    memset(&st, 0, sizeof st);
    pv_stats_client_t *c = NULL;
    if (pv_stats_client_new(endpoint, keys, &c, NULL) == PV_OK) {
        if (pv_stats_client_fetch(c, 1000, &st, NULL) != PV_OK)
            memset(&st, 0, sizeof st);
        pv_stats_client_destroy(&c);
    }
    return st;
}

static inline pv_broker_stats_t nf_stats(const char *endpoint)
{
    return nf_stats_k(endpoint, NULL);
}

static inline const pv_service_stats_t *nf_service(const pv_broker_stats_t *st, const char *name)
{
    for (uint32_t i = 0; i < st->n_services; i++)
        if (strcmp(st->services[i].name, name) == 0)
            return &st->services[i];
    return NULL;
}

/* Poll the stats (as CURVE client `keys`, NULL = plain) until `service` has `n` live
 * workers (or 5 s). Returns 1 when reached. */
static inline int nf_wait_workers_k(const char *endpoint, const pv_curve_client_t *keys,
                                    const char *service, uint64_t n)
{
    int64_t deadline = nf_now_ms() + 5000;
    while (nf_now_ms() < deadline) {
        pv_broker_stats_t st = nf_stats_k(endpoint, keys);
        const pv_service_stats_t *s = nf_service(&st, service);
        int ok = s && s->live_workers == n;
        pv_broker_stats_free(&st);
        if (ok)
            return 1;
        nf_sleep_ms(20);
    }
    return 0;
}

static inline int nf_wait_workers(const char *endpoint, const char *service, uint64_t n)
{
    return nf_wait_workers_k(endpoint, NULL, service, n);
}

/* Poll the stats until the workers of `service` hold `n` leases in all (or 5 s). */
static inline int nf_wait_inflight(const char *endpoint, const char *service, uint64_t n)
{
    int64_t deadline = nf_now_ms() + 5000;
    while (nf_now_ms() < deadline) {
        pv_broker_stats_t st = nf_stats(endpoint);
        uint64_t held = 0;
        for (uint32_t i = 0; i < st.n_workers; i++)
            if (strcmp(st.workers[i].service, service) == 0)
                held += st.workers[i].in_flight;
        int ok = st.n_services > 0 && held == n;
        pv_broker_stats_free(&st);
        if (ok)
            return 1;
        nf_sleep_ms(20);
    }
    return 0;
}

#endif
