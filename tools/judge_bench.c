/* judge_bench.c - prover-judge-bench: the judges compared on the same groups.
 *
 *   prover-judge-bench [--config FILE] [--groups N] [--judges LIST] [--scan] [key=value ...]
 *
 * Plays training groups with the configured policy (policy.init_checkpoint, e.g. a BC or RL
 * checkpoint saved by prover-train-local --save) until N groups are eligible under the
 * protocol (prover.min_successes .. max_successes), then, on each eligible group, lets every
 * judge of LIST (default contrast,random,oracle) propose through the judge's own state
 * machine (judge/judge_group.h) and verifies the proposals with the verifier's code
 * (judge/verify_job.h, prover.k continuations per side). A proposal's continuations are
 * seeded by (group, segment, side), so judges that propose the same segment get the same
 * estimate: the comparison is paired, on common random numbers. Prints per judge the
 * acceptance rate (share of verified segments with delta > 0), the share expected by noise
 * alone, the mean delta, the mean segment length and, with prover.measure_precision, the
 * precision against the oracle. --scan also verifies every valid window (1 .. max turns,
 * nonterminal) of the shortest success of each group and prints the best acceptance a judge
 * could reach with one window per group (the ceiling of the protocol for this policy) and
 * where along the success the positive windows lie.
 * A measurement tool, not a test: numbers depend on the policy and the seeds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actor/actor_group.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/role.h"
#include "common/role_build.h"
#include "common/wire/job_ids.h"
#include "judge/judge_group.h"
#include "judge/verify_job.h"
#include "learner/prover_credit.h"
#include "learner/train_ckpt.h"

#define S_MAX_JUDGES 8

typedef struct s_acc {
    const char *name;
    uint64_t verified, positive, turns, samples, hits;
    double delta_sum, noise_sum;
} s_acc_t;

typedef struct s_bench {
    pv_config_t cfg;
    pv_run_plan_t plan;
    pv_env_model_t *model;
    pv_env_t *env, *oracle_env;
    pv_policy_t *policy;
    pv_policy_work_t *work;
    pv_arena_t *play, *wire, *judge, *cont;
    pv_wire_dec_t *dec;
    pv_wire_buf_t buf;
    pv_traj_t *trajs;
} s_bench_t;

/* Verify every job of g with the verifier's code; returns PV_OK or the first error. */
static pv_err_t s_verify(s_bench_t *B, const pv_jg_opts_t *o, pv_jgroup_t *g, uint32_t seq,
                         uint64_t *steps, pv_errmsg_t *em)
{
    pv_vjob_ctx_t vc = {.model = B->model,
                        .env = B->env,
                        .policy = B->policy,
                        .work = B->work,
                        .arena = B->cont,
                        .keep = B->judge};
    for (size_t j = 0; j < g->n_jobs; j++) {
        uint64_t id = pv_verify_job_id(0, seq, (uint32_t)j);
        pv_wire_verify_job_t job;
        pv_wire_verify_result_t r;
        pv_jgroup_job_msg(g, o, j, id, &job);
        pv_err_t rc = pv_vjob_run(&vc, &job, &r, em);
        if (rc == PV_OK)
            rc = pv_jgroup_result(g, j, id, &r);
        if (rc != PV_OK)
            return rc;
        *steps += r.env_steps;
    }
    return PV_OK;
}

static void s_count(s_acc_t *a, const pv_jgroup_t *g)
{
    for (size_t i = 0; i < g->n_segs; i++) {
        float pb, pa;
        bool ok;
        pv_jgroup_estimate(g, i, &pb, &pa, &ok);
        if (!ok)
            continue;
        const pv_segment_t *s = &g->segs[i].prop;
        bool terminal = s->t1 >= g->trajs[s->traj].n_steps;
        pv_delta_stats_t ds = pv_prover_delta_stats(pb, pa, g->k, terminal ? 0 : g->k);
        a->verified++;
        a->positive += pa - pb > 0;
        a->delta_sum += pa - pb;
        a->noise_sum += ds.noise_pos;
        a->turns += s->t1 - s->t0;
    }
    a->samples += g->st.precision_samples;
    a->hits += g->st.precision_hits;
}

/* --scan: every valid window of the shortest success, verified (exhaustive-style). */
typedef struct s_scan {
    uint64_t groups, windows, positive, best_positive;
    uint64_t pos_by_tenth[10], all_by_tenth[10];     /* by the window's relative position */
    uint64_t pos_by_start[6][5], all_by_start[6][5]; /* by t0 (0..4, 5 = later) and length */
    double delta_by_start[6][5];
} s_scan_t;

static pv_err_t s_scan(s_bench_t *B, const pv_jg_opts_t *base, const pv_wire_rollout_group_t *w,
                       uint32_t seq, s_scan_t *sc, uint64_t *steps, pv_errmsg_t *em)
{
    pv_jg_opts_t o = *base;
    o.judge = PV_JUDGE_EXHAUSTIVE; /* opens the group; its proposals are replaced below */
    o.measure_precision = false;
    pv_jgroup_t g;
    pv_arena_reset(B->judge);
    pv_err_t rc = pv_jgroup_open(&g, &o, w, 0, B->judge, em);
    if (rc != PV_OK || !g.eligible)
        return rc;
    pv_traj_view_t v[64];
    size_t n = g.n_trajs < 64 ? g.n_trajs : 64;
    for (size_t i = 0; i < n; i++)
        v[i] = (pv_traj_view_t){.success = g.trajs[i].won, .n_steps = (uint32_t)g.trajs[i].n_steps};
    int64_t s = pv_group_shortest_success(v, n);
    const pv_traj_t *tr = &g.trajs[s];
    uint32_t T = (uint32_t)tr->n_steps, turns = base->max_turns ? base->max_turns : 4;
    size_t cap = (size_t)T * turns;
    pv_jg_seg_t *segs = pv_arena_calloc(B->judge, cap ? cap : 1, sizeof *segs);
    pv_jg_job_t *jobs = pv_arena_calloc(B->judge, 2 * (cap ? cap : 1), sizeof *jobs);
    if (!segs || !jobs)
        return PV_ERR_NOMEM;
    size_t ns = 0, nj = 0;
    for (uint32_t t0 = 0; t0 + 1 < T; t0++)
        for (uint32_t len = 1; len <= turns && t0 + len < T; len++) {
            if (tr->steps[t0].refused || tr->steps[t0 + len - 1].refused)
                continue;
            segs[ns] = (pv_jg_seg_t){.prop = {(uint32_t)s, t0, t0 + len, +1},
                                     .side = {PV_JG_PENDING, PV_JG_PENDING}};
            jobs[nj++] =
                (pv_jg_job_t){.seg = (uint32_t)ns, .side = 0, .traj = (uint32_t)s, .t = t0};
            jobs[nj++] =
                (pv_jg_job_t){.seg = (uint32_t)ns, .side = 1, .traj = (uint32_t)s, .t = t0 + len};
            ns++;
        }
    g.segs = segs;
    g.n_segs = ns;
    g.jobs = jobs;
    g.n_jobs = nj;
    g.n_resolved = 0;
    if ((rc = s_verify(B, &o, &g, seq, steps, em)) != PV_OK)
        return rc;
    bool any = false;
    for (size_t i = 0; i < ns; i++) {
        float pb, pa;
        bool ok;
        pv_jgroup_estimate(&g, i, &pb, &pa, &ok);
        if (!ok)
            continue;
        unsigned tenth = (unsigned)(10.0 * segs[i].prop.t0 / (double)T);
        tenth = tenth > 9 ? 9 : tenth;
        sc->windows++;
        sc->all_by_tenth[tenth]++;
        unsigned st = segs[i].prop.t0 < 5 ? segs[i].prop.t0 : 5,
                 ln = segs[i].prop.t1 - segs[i].prop.t0;
        ln = ln > 4 ? 4 : ln;
        sc->all_by_start[st][ln]++;
        sc->delta_by_start[st][ln] += pa - pb;
        sc->pos_by_start[st][ln] += pa - pb > 0;
        if (pa - pb > 0) {
            sc->positive++;
            sc->pos_by_tenth[tenth]++;
            any = true;
        }
    }
    sc->groups++;
    sc->best_positive += any;
    return PV_OK;
}

static int s_run(s_bench_t *B, size_t want, char judges[][96], size_t n_judges, bool scan)
{
    const pv_config_t *c = &B->cfg;
    pv_errmsg_t em = {{0}};
    pv_err_t rc;
    uint32_t G = (uint32_t)c->actor.group_size;
    pv_actor_sched_t sched = {.index = 0,
                              .count = 1,
                              .n_tasks = pv_env_model_n_tasks(B->model, PV_SPLIT_TRAIN),
                              .run_seed = (uint64_t)c->run.seed,
                              .shuffle = c->env.shuffle_tasks};
    pv_rng_t rng;
    pv_rng_seed(&rng, pv_rng_mix((uint64_t)c->run.seed, 0x6163746f72u), 0);
    pv_actor_ctx_t actor = {.model = B->model,
                            .env = B->env,
                            .policy = B->policy,
                            .work = B->work,
                            .rng = &rng,
                            .arena = B->play,
                            .save_states = true,
                            .task_keys = B->plan.keys == PV_STATE_KEY_TASK,
                            .max_steps = (uint32_t)c->env.max_steps};
    s_acc_t acc[S_MAX_JUDGES] = {{0}};
    pv_jg_opts_t opts[S_MAX_JUDGES];
    for (size_t k = 0; k < n_judges; k++) {
        pv_config_t jc = *c;
        pv_run_plan_t plan;
        /* "judge/section.key=value/...": a judge with its own overrides */
        char spec[96], *save = NULL;
        snprintf(spec, sizeof spec, "%s", judges[k]);
        char *jname = strtok_r(spec, "/", &save);
        for (char *kv = strtok_r(NULL, "/", &save); kv; kv = strtok_r(NULL, "/", &save)) {
            char *eq = strchr(kv, '=');
            if (eq)
                *eq = '\0';
            if (!eq || pv_config_set(&jc, kv, eq + 1, &em) != PV_OK) {
                fprintf(stderr, "prover-judge-bench: --judges %s: %s\n", judges[k],
                        eq ? em.text : "expected judge/key=value");
                return 2;
            }
        }
        if (pv_config_set(&jc, "prover.judge", jname, &em) != PV_OK ||
            pv_run_plan_from_config(&jc, &plan, &em) != PV_OK) {
            fprintf(stderr, "prover-judge-bench: %s\n", em.text);
            return 2;
        }
        pv_jg_opts_from_config(&plan, &jc, pv_env_model_max_steps(B->model), B->oracle_env,
                               &opts[k]);
        acc[k].name = judges[k];
    }
    s_scan_t sc = {0};
    uint64_t played = 0, eligible = 0, vsteps = 0, t0 = pv_mono_ms();
    for (uint64_t seq = 0; eligible < want && seq < 100000; seq++) {
        pv_task_t task = pv_actor_task(&sched, seq);
        uint64_t id = pv_actor_job_id(0, seq);
        pv_cost_t cost = {0};
        if ((rc = pv_actor_play_group(&actor, &task, G, (int64_t)id, B->trajs, &cost, &em)))
            goto fail;
        played++;
        size_t wins = 0;
        for (uint32_t i = 0; i < G; i++)
            wins += B->trajs[i].won;
        if (!pv_run_plan_judges_group(&B->plan, wins, G))
            continue;
        eligible++;
        pv_group_meta_t meta = {.group_id = id,
                                .kind = pv_env_model_kind(B->model),
                                .env_name = c->env.name,
                                .task = task};
        pv_arena_reset(B->wire);
        if ((rc = pv_actor_encode_group(B->trajs, G, &meta, true, B->wire, &B->buf, &em)))
            goto fail;
        pv_wire_msg_t m;
        pv_arena_reset(B->wire);
        if ((rc = pv_wire_decode(B->dec, B->buf.data, B->buf.len, B->wire, &m, &em)))
            goto fail;
        for (size_t k = 0; k < n_judges; k++) {
            pv_jgroup_t g;
            pv_arena_reset(B->judge);
            if ((rc = pv_jgroup_open(&g, &opts[k], &m.rollout_group, 0, B->judge, &em)) ||
                (rc = s_verify(B, &opts[k], &g, (uint32_t)seq, &vsteps, &em)))
                goto fail;
            s_count(&acc[k], &g);
        }
        if (scan && (rc = s_scan(B, &opts[0], &m.rollout_group, (uint32_t)seq, &sc, &vsteps, &em)))
            goto fail;
        if (eligible % 10 == 0) {
            fprintf(stderr, "judge-bench: %llu eligible groups of %llu played (%.0f s)\n",
                    (unsigned long long)eligible, (unsigned long long)played,
                    (double)(pv_mono_ms() - t0) / 1000.0);
        }
    }
    printf("%llu eligible groups (of %llu played; %u-%u successes of %u), k %u, %llu "
           "verification steps\n",
           (unsigned long long)eligible, (unsigned long long)played, B->plan.min_successes,
           B->plan.max_successes, G, (unsigned)c->prover.k, (unsigned long long)vsteps);
    printf("%-36s %9s %10s %10s %11s %10s %10s\n", "judge", "verified", "acceptance", "by noise",
           "mean delta", "turns", "precision");
    for (size_t k = 0; k < n_judges; k++) {
        const s_acc_t *a = &acc[k];
        double n = a->verified ? (double)a->verified : 1.0;
        char prec[32] = "-";
        if (a->samples)
            snprintf(prec, sizeof prec, "%.3f", (double)a->hits / (double)a->samples);
        printf("%-36s %9llu %10.3f %10.3f %+11.3f %10.2f %10s\n", a->name,
               (unsigned long long)a->verified, (double)a->positive / n, a->noise_sum / n,
               a->delta_sum / n, (double)a->turns / n, prec);
    }
    if (scan && sc.groups) {
        printf("scan: %llu windows of the shortest successes verified, %.3f positive; a judge "
               "that always found a positive window would accept %.3f\n",
               (unsigned long long)sc.windows, (double)sc.positive / (double)sc.windows,
               (double)sc.best_positive / (double)sc.groups);
        printf("scan: positive share by the window's start along the success (tenths):");
        for (int i = 0; i < 10; i++)
            printf(" %.2f",
                   sc.all_by_tenth[i] ? (double)sc.pos_by_tenth[i] / sc.all_by_tenth[i] : 0.0);
        printf("\n");
        printf("scan: positive share (mean delta) by the window's first action t0 and length:\n");
        for (int t = 0; t < 6; t++) {
            printf("  t0 %s", t < 5 ? (char[]){(char)('0' + t), 0} : ">4");
            for (int l = 1; l <= 4; l++)
                if (sc.all_by_start[t][l])
                    printf("  len %d: %.2f (%+.2f, n %llu)", l,
                           (double)sc.pos_by_start[t][l] / (double)sc.all_by_start[t][l],
                           sc.delta_by_start[t][l] / (double)sc.all_by_start[t][l],
                           (unsigned long long)sc.all_by_start[t][l]);
            printf("\n");
        }
    }
    return 0;
fail:
    fprintf(stderr, "prover-judge-bench: %s: %s\n", pv_strerror(rc), em.text);
    return 1;
}

int main(int argc, char **argv)
{
    static s_bench_t B;
    size_t want = 100;
    bool scan = false;
    char judges[S_MAX_JUDGES][96] = {"contrast", "random", "oracle"};
    size_t n_judges = 3;
    char **cargv = calloc((size_t)argc + 1, sizeof *cargv);
    int cargc = 0;
    for (int i = 0; i < argc; i++) {
        if (i > 0 && strcmp(argv[i], "--help") == 0) {
            printf("usage: prover-judge-bench [--config FILE] [--groups N] [--judges LIST] "
                   "[--scan] [section.key=value ...]\n");
            return 0;
        } else if (i > 0 && strcmp(argv[i], "--groups") == 0 && i + 1 < argc) {
            want = (size_t)strtoull(argv[++i], NULL, 10);
        } else if (i > 0 && strcmp(argv[i], "--scan") == 0) {
            scan = true;
        } else if (i > 0 && strcmp(argv[i], "--judges") == 0 && i + 1 < argc) {
            n_judges = 0;
            char *save = NULL;
            for (char *t = strtok_r(argv[++i], ",", &save); t && n_judges < S_MAX_JUDGES;
                 t = strtok_r(NULL, ",", &save))
                snprintf(judges[n_judges++], sizeof judges[0], "%s", t);
        } else {
            cargv[cargc++] = argv[i];
        }
    }
    pv_errmsg_t em = {{0}};
    pv_config_defaults(&B.cfg);
    if (pv_config_from_args(&B.cfg, cargc, cargv, NULL, NULL, &em) != PV_OK ||
        pv_run_plan_from_config(&B.cfg, &B.plan, &em) != PV_OK) {
        fprintf(stderr, "prover-judge-bench: %s\n", em.text);
        return 2;
    }
    pv_log_set_level(PV_LOG_LEVEL_WARN);
    pv_err_t rc;
    if ((rc = pv_role_env_new(&B.cfg, &B.model, &B.env, &em)) ||
        (rc = pv_env_new(B.model, &B.oracle_env)) ||
        (rc = pv_role_policy_new(&B.cfg, &B.policy, &B.work, &em)) ||
        (B.cfg.policy.init_checkpoint[0] &&
         (rc = pv_ckpt_load(B.cfg.policy.init_checkpoint, B.policy, NULL, NULL, NULL, 0, &em)))) {
        fprintf(stderr, "prover-judge-bench: %s\n", em.text[0] ? em.text : pv_strerror(rc));
        return pv_role_exit_status(rc);
    }
    B.trajs = calloc((size_t)B.cfg.actor.group_size, sizeof *B.trajs);
    if (!B.trajs || pv_arena_new(1u << 20, 0, &B.play) || pv_arena_new(1u << 20, 0, &B.wire) ||
        pv_arena_new(1u << 20, 0, &B.judge) || pv_arena_new(1u << 16, 0, &B.cont) ||
        pv_wire_dec_new(NULL, &B.dec))
        return 1;
    pv_wire_buf_init(&B.buf, 0);
    int status = s_run(&B, want, judges, n_judges, scan);
    free(cargv);
    return status;
}
