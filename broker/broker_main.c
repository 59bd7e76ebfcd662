/* prover-broker - the ZeroMQ endpoint every prover role connects to.
 *
 *   prover-broker [--config FILE] [section.key=value ...]
 *
 * Reads the `broker` section (bind, services, heartbeat_ms, liveness, lease_ms, bounds,
 * metrics_port...; docs/config.md). Once listening it prints one line on stdout,
 *   prover-broker: listening on tcp://127.0.0.1:5555 metrics 9100
 * (endpoint with a wildcard port resolved; metrics 0 when off), so scripts and tests can
 * start it with `broker.bind=tcp://127.0.0.1:*` and read where it is. Under mpirun (part of
 * a job) it also writes that endpoint to run.out_dir/broker.endpoint for `prover-stats
 * runs/NAME`, and /metrics carries prover_broker_run_info{run,out_dir}. It runs through
 * pv_role_main like every role (configuration, logging, signals, the MPI world, the
 * process's ZeroMQ context): SIGINT/SIGTERM stop it, and with broker.curve_dir SIGHUP
 * re-reads curve_dir/clients (docs/broker.md, "Security"). Exit status: 0 after a signal or
 * the learner's end of the run, 2 for a bad configuration (a bad key folder included), 1 for
 * a runtime failure, a failed start-up under mpirun (it then stops every role: stop reason
 * broker_failed), a learner gone without ending the run (broker.learner_timeout_s), or a
 * judge or every actor gone (broker.role_timeout_s: the run ends as failed).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "broker/broker_io.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/role.h"
#include "common/role_build.h"

static const char s_usage[] = "usage: prover-broker [--config FILE] [section.key=value ...]\n"
                              "Runs the broker described by the config's broker section.\n";

typedef struct s_broker {
    pv_role_ctx_t rc;
    pv_broker_io_t *io;
    volatile sig_atomic_t stop;           /* ends pv_broker_io_run */
    volatile sig_atomic_t learner_lost;   /* the watched "learn" service went silent */
    volatile sig_atomic_t judge_lost;     /* no peer of role judge for broker.role_timeout_s */
    volatile sig_atomic_t actors_lost;    /* no peer of role actor for broker.role_timeout_s */
    pv_broker_who_t judge_who, actor_who; /* the last live one of each */
    pthread_t watcher;
    bool watching;
} s_broker_t;

/* Under mpirun the broker is one rank of the job: this thread (the only one making MPI
 * calls after start-up) turns a signal or the learner's stop message into the stop flag. */
static void *s_watch(void *arg)
{
    s_broker_t *b = arg;
    while (!b->stop) {
        if (pv_role_should_stop(&b->rc)) {
            if (!pv_role_signalled)
                PV_LOG_INFO("the learner ended the run");
            b->stop = 1;
            break;
        }
        struct timespec ts = {0, 50000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* The endpoint clients dial, into run.out_dir/broker.endpoint (written whole), so that
 * `prover-stats runs/NAME` finds this run's broker rather than whatever listens on the
 * default port. A wildcard bind is dialled by broker.endpoint. */
static void s_write_endpoint(const pv_config_t *cfg, const char *bound)
{
    const char *ep = bound;
    if (strstr(bound, "://*") || strstr(bound, "://0.0.0.0") || strstr(bound, "://[::]"))
        ep = cfg->broker.endpoint;
    char path[PV_CONFIG_STR_MAX + 32], line[PV_CONFIG_STR_MAX + 2];
    snprintf(path, sizeof path, "%s/broker.endpoint", cfg->run.out_dir);
    int n = snprintf(line, sizeof line, "%s\n", ep);
    pv_errmsg_t em = {{0}};
    if (pv_mkdirs(cfg->run.out_dir, 0755, &em) != PV_OK ||
        pv_write_file(path, line, (size_t)n, &em) != PV_OK)
        PV_LOG_WARN("cannot record the endpoint for prover-stats (%s)", em.text);
}

static pv_err_t s_setup(void *self, pv_errmsg_t *em)
{
    s_broker_t *b = self;
    const pv_config_t *cfg = &b->rc.cfg;
    pv_err_t rc = pv_broker_io_new_in(cfg, b->rc.net, &b->io, em);
    if (rc != PV_OK)
        return rc;
    printf("prover-broker: listening on %s metrics %u\n", pv_broker_io_endpoint(b->io),
           (unsigned)pv_broker_io_metrics_port(b->io));
    fflush(stdout);
    /* the endpoint and port are on the stdout line above (both reach a terminal under mpirun) */
    PV_LOG_INFO("ready, services %s", cfg->broker.services);
    pv_broker_io_reload_on(b->io, &pv_role_reload);
    if (b->rc.world.mpi) /* part of a job (a broker alone serves no run folder) */
        s_write_endpoint(cfg, pv_broker_io_endpoint(b->io));
    /* a learner that crashed (on any host) never sends the stop message, and mpirun's
     * --enable-recovery keeps the other ranks waiting: the broker ends the job instead */
    const pv_world_t *w = &b->rc.world;
    if (w->mpi && w->learner_rank >= 0 && cfg->broker.learner_timeout_s > 0 &&
        pv_broker_io_watch_service(b->io, "learn", cfg->broker.learner_timeout_s * 1000,
                                   &b->learner_lost, em) != PV_OK)
        PV_LOG_WARN("no watch of the learner: %s", em->text);
    /* nor can a run go on without its judge(s) or without any actor: the broker ends it as
     * failed and names the one it saw last (a run without a judge never has one to lose) */
    if (w->mpi && w->learner_rank >= 0 && cfg->broker.role_timeout_s > 0 &&
        (pv_broker_io_watch_role(b->io, "judge", cfg->broker.role_timeout_s * 1000, &b->judge_lost,
                                 &b->judge_who, em) != PV_OK ||
         pv_broker_io_watch_role(b->io, "actor", cfg->broker.role_timeout_s * 1000, &b->actors_lost,
                                 &b->actor_who, em) != PV_OK))
        PV_LOG_WARN("no watch of the judge and the actors: %s", em->text);
    b->watching = pthread_create(&b->watcher, NULL, s_watch, b) == 0;
    return PV_OK;
}

static int s_run(void *self)
{
    s_broker_t *b = self;
    const pv_config_t *cfg = &b->rc.cfg;
    pv_world_t *w = &b->rc.world;
    pv_err_t rc = pv_broker_io_run(b->io, &b->stop);
    b->stop = 1;
    if (b->watching)
        pthread_join(b->watcher, NULL);
    b->watching = false;
    if (b->learner_lost) {
        char what[160];
        pv_world_describe(w, w->learner_rank, what, sizeof what);
        PV_LOG_ERROR("the learner is gone without ending the run (broker.learner_timeout_s = "
                     "%lld s; it was %s): stopping every role of the job",
                     (long long)cfg->broker.learner_timeout_s, what);
        pv_world_stop_all(w, PV_WORLD_STOP_LEARNER_LOST, 3000);
        return 1;
    }
    if (b->judge_lost || b->actors_lost) {
        const pv_broker_who_t *who = b->judge_lost ? &b->judge_who : &b->actor_who;
        int rank = pv_world_find(w, who->host, who->pid);
        char what[160];
        pv_world_describe(w, rank, what, sizeof what);
        PV_LOG_ERROR("%s (broker.role_timeout_s = %lld s; the last one: %s): ending the run as "
                     "failed",
                     b->judge_lost ? "the judge is gone" : "every actor is gone",
                     (long long)cfg->broker.role_timeout_s, rank >= 0 ? what : who->name);
        pv_world_stop_all_lost(
            w, b->judge_lost ? PV_WORLD_STOP_JUDGE_LOST : PV_WORLD_STOP_ACTORS_LOST, rank, 3000);
        return 1;
    }
    if (rc != PV_OK) {
        PV_LOG_ERROR("%s", pv_strerror(rc));
        return 1;
    }
    PV_LOG_INFO("stopped");
    return 0;
}

static void s_teardown(void *self)
{
    s_broker_t *b = self;
    b->stop = 1;
    if (b->watching)
        pthread_join(b->watcher, NULL);
    /* without a broker the job cannot run: stop every role instead of leaving them waiting
     * (mpirun --enable-recovery outlives this rank) */
    const pv_world_t *w = &b->rc.world;
    if (!b->io && w->mpi && w->learner_rank >= 0 && !pv_world_stop_requested(&b->rc.world)) {
        PV_LOG_ERROR("no broker: stopping every role of the job");
        pv_world_stop_all(&b->rc.world, PV_WORLD_STOP_BROKER_FAILED, 3000);
    }
    pv_broker_io_destroy(&b->io);
}

int main(int argc, char **argv)
{
    static s_broker_t b;
    static const pv_role_main_t m = {.prog = "prover-broker",
                                     .role = PV_ROLE_BROKER,
                                     .usage = s_usage,
                                     .sighup = true,
                                     .setup = s_setup,
                                     .run = s_run,
                                     .teardown = s_teardown};
    return pv_role_main(&m, &b.rc, &b, argc, argv);
}
