/* bk_worker - a worker process for the broker's multi-process tests.
 *
 *   bk_worker ENDPOINT SERVICE CAPACITY WORK_MS MODE NAME HEARTBEAT_MS
 *
 * MODE ok: ack every lease after WORK_MS with the reply NAME; fail: ack with ok=false
 * ("boom"); hang: take leases and never ack (a worker stuck or about to be killed).
 * Prints "lease JOB ATTEMPT" per lease (line-buffered) and stops on SIGTERM.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/net/broker_client.h"

static volatile sig_atomic_t s_stop;

static void s_on_signal(int sig)
{
    (void)sig;
    s_stop = 1;
}

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: bk_worker ENDPOINT SERVICE CAPACITY WORK_MS MODE NAME HB_MS\n");
        return 2;
    }
    signal(SIGTERM, s_on_signal);
    setvbuf(stdout, NULL, _IOLBF, 0);
    pv_bclient_opts_t o = {.endpoint = argv[1],
                           .heartbeat_ms = atoi(argv[7]),
                           .role = "test",
                           .name = argv[6],
                           .reconnect_ms = 50,
                           .reconnect_max_ms = 400};
    int work_ms = atoi(argv[4]);
    const char *mode = argv[5];
    pv_worker_t *w = NULL;
    pv_errmsg_t em = {{0}};
    if (pv_worker_new(&o, argv[2], (uint32_t)atoi(argv[3]), &w, &em) != PV_OK) {
        fprintf(stderr, "bk_worker: %s\n", em.text);
        return 1;
    }
    while (!s_stop) {
        pv_lease_t l;
        if (pv_worker_recv(w, 100, &l) != PV_OK)
            continue;
        printf("lease %llu %u\n", (unsigned long long)l.job_id, l.attempt);
        if (strcmp(mode, "hang") == 0)
            continue;
        struct timespec ts = {.tv_sec = work_ms / 1000, .tv_nsec = (work_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        bool ok = strcmp(mode, "fail") != 0;
        pv_worker_ack(w, l.job_id, ok, ok ? NULL : "boom", argv[6], strlen(argv[6]));
    }
    pv_worker_destroy(&w);
    return 0;
}
