/* bench_roles - throughput of prover-judge and prover-verifier on generated ALFWorld.
 *
 *   build/tests/bench_roles [GROUPS [VERIFIERS [JUDGE [K]]]]   (default 64 1 contrast 4)
 *
 * Plays GROUPS rollout groups of 8 (tasks 0 .. GROUPS-1, untrained policy, the games of
 * tests/support/roles_fixture.h) in this process first, then starts prover-broker, one
 * prover-judge and VERIFIERS prover-verifier processes, publishes the weights on the relay,
 * submits every group to "judge" as actors would (window 16) and serves "learn" (acking on
 * receipt). Two passes: the judge with algorithm.adv_estimator=grpo (decode, re-encode,
 * forward: the judge's own cost), then prover with prover.judge=JUDGE, k=K. Prints groups/s
 * through the pipeline, verify jobs/s (per verifier), verification env steps/s and the
 * share of mixed groups. A third pass runs one prover-actor for 3 s in front of the judge
 * (contrast) and the verifiers: its groups/s and rollout env steps/s. Timing is reported,
 * never judged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker_spawn.h"
#include "broker/stats_client.h"
#include "common/net/broker_client.h"
#include "roles_proc.h"

typedef struct pass {
    double secs;
    uint64_t groups, segments, verified, verify_steps, verify_jobs, env_steps;
} pass_t;

static uint64_t s_verify_acked(const char *endpoint)
{
    pv_stats_client_t *c = NULL;
    pv_broker_stats_t st;
    uint64_t n = 0;
    if (pv_stats_client_new(endpoint, NULL, &c, NULL) == PV_OK &&
        pv_stats_client_fetch(c, 2000, &st, NULL) == PV_OK) {
        for (uint32_t i = 0; i < st.n_services; i++)
            if (strcmp(st.services[i].name, "verify") == 0)
                n = st.services[i].counter[PV_SVC_acked];
        pv_broker_stats_free(&st);
    }
    pv_stats_client_destroy(&c);
    return n;
}

/* One pass through broker + judge + verifiers; 0 on success. With actor_s > 0 a
 * prover-actor process produces the groups for that many seconds instead of `groups`. */
static int s_pass(pv_wire_buf_t *groups, int n_groups, int n_verifiers,
                  const char *const *judge_args, const rf_world_t *w, double actor_s, pass_t *out)
{
    memset(out, 0, sizeof *out);
    char bin[512];
    pv_test_bin("prover-broker", bin, sizeof bin);
    const char *bargs[] = {"broker.bind=tcp://127.0.0.1:*", "broker.heartbeat_ms=100",
                           "broker.metrics_port=0", "run.log_level=warn", NULL};
    pv_broker_proc_t b;
    if (pv_broker_spawn(bin, bargs, 5000, &b) != PV_OK)
        return -1;
    pv_bclient_opts_t o = {.endpoint = b.endpoint, .heartbeat_ms = 100, .liveness = 3};
    pv_weights_pub_t *pub = NULL;
    pv_worker_t *learn = NULL;
    pv_producer_t *actor = NULL;
    pv_wire_dec_t *dec = NULL;
    pv_arena_t *arena = NULL;
    pid_t pids[65];
    int n_pids = 0, rc = -1;
    if (pv_weights_pub_new(&o, &pub, NULL) != PV_OK ||
        pv_weights_publish(pub, 1, pv_policy_params_const(w->policy),
                           pv_policy_n_params(w->policy)) != PV_OK ||
        pv_worker_new(&o, "learn", 64, &learn, NULL) != PV_OK ||
        pv_producer_new(&o, 16, &actor, NULL) != PV_OK || pv_wire_dec_new(NULL, &dec) != PV_OK ||
        pv_arena_new(0, 0, &arena) != PV_OK)
        goto out;
    const char *quiet[] = {"run.log_level=warn", NULL};
    for (int i = 0; i < n_verifiers && n_pids < 64; i++)
        pids[n_pids++] = rp_spawn("prover-verifier", "bench-verifier", b.endpoint, quiet);
    pids[n_pids++] = rp_spawn("prover-judge", "bench-judge", b.endpoint, judge_args);
    const char *actor_args[] = {"actor.group_size=8", "run.log_level=warn", NULL};
    if (actor_s > 0) {
        pids[n_pids++] = rp_spawn("prover-actor", "bench-actor", b.endpoint, actor_args);
        n_groups = 0;
    }
    struct timespec ts = {0, 300000000L}; /* let them register */
    nanosleep(&ts, NULL);
    int64_t t0 = rp_now_ms();
    int sent = 0, got = 0;
    while (actor_s > 0 ? rp_now_ms() - t0 < actor_s * 1000 : got < n_groups) {
        while (sent < n_groups &&
               pv_producer_submit(actor, "judge", (uint64_t)sent + 1, false, groups[sent].data,
                                  groups[sent].len, 0) == PV_OK)
            sent++;
        pv_completion_t c;
        while (pv_producer_recv(actor, 0, &c) == PV_OK)
            ;
        pv_lease_t l;
        if (pv_worker_recv(learn, 20, &l) != PV_OK) {
            if (rp_now_ms() - t0 > 300000)
                goto out;
            continue;
        }
        pv_arena_reset(arena);
        pv_wire_msg_t m;
        if (pv_wire_decode(dec, l.payload, l.len, arena, &m, NULL) == PV_OK &&
            m.type == PV_MSG_CREDITED_GROUP) {
            const pv_wire_credited_group_t *cg = &m.credited_group;
            out->segments += cg->n_segments;
            for (uint32_t i = 0; i < cg->n_segments; i++)
                out->verified += cg->segments[i].verified;
            out->verify_steps += cg->verify_env_steps;
            for (uint32_t i = 0; i < cg->group.n_trajectories; i++)
                out->env_steps += cg->group.trajectories[i].n_steps;
        }
        pv_worker_ack(learn, l.job_id, true, NULL, NULL, 0);
        got++;
    }
    out->secs = (double)(rp_now_ms() - t0) / 1000.0;
    out->groups = (uint64_t)got;
    out->verify_jobs = s_verify_acked(b.endpoint);
    rc = 0;
out:
    for (int i = 0; i < n_pids; i++)
        pv_proc_stop(pids[i], SIGTERM);
    pv_arena_destroy(&arena);
    pv_wire_dec_destroy(&dec);
    pv_producer_destroy(&actor);
    pv_worker_destroy(&learn);
    pv_weights_pub_destroy(&pub);
    pv_broker_proc_kill(&b, SIGTERM);
    return rc;
}

int main(int argc, char **argv)
{
    int n_groups = argc > 1 ? atoi(argv[1]) : 64;
    int n_ver = argc > 2 ? atoi(argv[2]) : 1;
    const char *judge = argc > 3 ? argv[3] : "contrast";
    int k = argc > 4 ? atoi(argv[4]) : 4;
    if (n_groups < 1 || n_ver < 1 || n_ver > 63 || k < 1) {
        fprintf(stderr, "usage: bench_roles [GROUPS [VERIFIERS [JUDGE [K]]]]\n");
        return 2;
    }
    rf_world_t w;
    if (rf_open(&w) != 0)
        return 1;
    pv_wire_buf_t *groups = calloc((size_t)n_groups, sizeof *groups);
    pv_arena_t *scratch;
    if (!groups || pv_arena_new(0, 0, &scratch) != PV_OK)
        return 1;
    int mixed = 0;
    size_t bytes = 0;
    for (int i = 0; i < n_groups; i++) { /* task i, whatever its outcome mix */
        if (rf_play_group(&w, (uint64_t)i) != 0)
            return 1;
        mixed += rf_mixed(&w);
        pv_wire_buf_init(&groups[i], 0);
        pv_arena_reset(scratch);
        if (rf_encode(&w, (uint64_t)i + 1, true, scratch, &groups[i]) != 0)
            return 1;
        bytes += groups[i].len;
    }
    char jarg[64], karg[32];
    snprintf(jarg, sizeof jarg, "prover.judge=%s", judge);
    snprintf(karg, sizeof karg, "prover.k=%d", k);
    const char *grpo[] = {"algorithm.adv_estimator=grpo", "run.log_level=warn", NULL};
    const char *prover[] = {jarg, karg, "prover.verify_budget=0", "run.log_level=warn", NULL};
    const char *prover_only[] = {karg, "run.log_level=warn", NULL};
    pass_t a, p, r;
    if (s_pass(groups, n_groups, n_ver, grpo, &w, 0, &a) != 0 ||
        s_pass(groups, n_groups, n_ver, prover, &w, 0, &p) != 0 ||
        s_pass(NULL, 0, n_ver, prover_only, &w, 3.0, &r) != 0) {
        fprintf(stderr, "bench_roles: a pass did not finish\n");
        return 1;
    }
    printf("groups %d (G 8, %d mixed, %.0f KiB each on average), verifiers %d, judge %s, k %d\n",
           n_groups, mixed, (double)bytes / n_groups / 1024.0, n_ver, judge, k);
    printf("grpo   %6.2f s  %8.1f groups/s through broker + judge\n", a.secs,
           (double)a.groups / a.secs);
    printf("prover %6.2f s  %8.1f groups/s  %llu verify jobs (%.1f/s per verifier)  "
           "%llu/%llu segments verified  %.0f verify env steps/s\n",
           p.secs, (double)p.groups / p.secs, (unsigned long long)p.verify_jobs,
           (double)p.verify_jobs / p.secs / n_ver, (unsigned long long)p.verified,
           (unsigned long long)p.segments, (double)p.verify_steps / p.secs);
    printf("actor  %6.2f s  one prover-actor (G 8, contrast judge): %.1f groups/s, %.0f rollout "
           "env steps/s, %llu verified segments\n",
           r.secs, (double)r.groups / r.secs, (double)r.env_steps / r.secs,
           (unsigned long long)r.verified);
    for (int i = 0; i < n_groups; i++)
        pv_wire_buf_free(&groups[i]);
    free(groups);
    pv_arena_destroy(&scratch);
    rf_close(&w);
    return 0;
}
