/* test_pipeline_triage.c - TRIAGE labelled by the judge's model (algorithm.adv_estimator =
 * triage, algorithm.triage_labels = llm) in the distributed pipeline: prover-broker and
 * prover-judge as real processes, the stand-in endpoint (tests/judge/fake_openai.py) as the
 * judge's model; the test plays the actor and the learner (the learner's own intake and
 * advantage code). Three groups, each with its own script of the stand-in:
 *   0  "labels": every turn labelled by the stand-in's rule, role (i + t) % 4;
 *   1  "labels_short": trajectory 0 one role short, so its turns are not labelled (the
 *      model-free rule gives them theirs), the others as group 0;
 *   2  "malformed": no valid answer after the repair turn: the group falls back whole
 *      (judge "model-free-fallback", no labels sent).
 * Checks: each CREDITED_GROUP carries exactly those labels (and judge "llm" /
 * "model-free-fallback"), the intake takes them, and the advantages of the batch are, cell by
 * cell, GRPO's outcome advantage (computed here from the rewards) plus lambda (0.2) times the
 * reward of the role (Decisive 1, Exploration 0.5, No-progress -0.1, Regression -0.5) of
 * the label expected, the model-free one (common/traj/triage.h, unit-tested by hand in
 * test_triage) where the model gave none; the counts of labelled and model-free turns.
 * Exits 77 (skipped) without python3. Set PV_ROLES_LOG_DIR to keep the processes' logs. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "common/traj/triage.h"
#include "common/wire/job_ids.h"
#include "fake_server.h"
#include "learner/batch_adv.h"
#include "learner/intake.h"
#include "net_fixture.h"
#include "roles_proc.h"

#define S_GROUPS 3
#define S_LAMBDA 0.2

static const double s_reward[4] = {1.0, 0.5, -0.1, -0.5}; /* TRIAGE's table, by hand */
static const char *const s_script[S_GROUPS] = {"labels", "labels_short", "malformed"};

typedef struct s_fix {
    rf_world_t w;
    pv_arena_t *scratch;
    pv_wire_dec_t *dec;
    pv_wire_buf_t buf[S_GROUPS];
    char scripts[128];
} s_fix_t;

static s_fix_t s_f;

static int s_setup(void **state)
{
    s_fix_t *f = &s_f;
    if (rf_open(&f->w) != 0 || pv_arena_new(0, 0, &f->scratch) != PV_OK ||
        pv_wire_dec_new(NULL, &f->dec) != PV_OK)
        return -1;
    pv_policy_set_version(f->w.policy, 1);
    /* tasks 0, 1, 2: any outcome will do (TRIAGE labels every group) */
    for (int k = 0; k < S_GROUPS; k++) {
        pv_wire_buf_init(&f->buf[k], 0);
        if (rf_play_group(&f->w, (uint64_t)k) != 0 ||
            rf_encode(&f->w, pv_actor_job_id(0, (uint32_t)k), false, f->scratch, &f->buf[k]) != 0)
            return -1;
    }
    snprintf(f->scripts, sizeof f->scripts, "/tmp/pv_test_triage_scripts_%d.json", (int)getpid());
    FILE *fp = fopen(f->scripts, "w");
    if (!fp)
        return -1;
    fputc('{', fp);
    for (int k = 0; k < S_GROUPS; k++)
        fprintf(fp, "%s\"%llu\": \"%s\"", k ? ", " : "",
                (unsigned long long)pv_actor_job_id(0, (uint32_t)k), s_script[k]);
    fputs("}\n", fp);
    fclose(fp);
    *state = f;
    return 0;
}

static int s_teardown(void **state)
{
    s_fix_t *f = *state;
    for (int k = 0; k < S_GROUPS; k++)
        pv_wire_buf_free(&f->buf[k]);
    remove(f->scripts);
    pv_wire_dec_destroy(&f->dec);
    pv_arena_destroy(&f->scratch);
    rf_close(&f->w);
    return 0;
}

/* The role group k's trajectory i, turn t should train with: the stand-in's rule where it
 * labels, else the model-free label `mf`. Sets *judged. */
static unsigned s_expected(int k, size_t i, size_t t, unsigned mf, bool *judged)
{
    *judged = k == 0 || (k == 1 && i != 0);
    return *judged ? (unsigned)((i + t) % 4) : mf;
}

static void test_labels_reach_the_learner(void **state)
{
    s_fix_t *f = *state;
    fs_server_t srv;
    fs_start(&srv, "--script labels --group-scripts %s", f->scripts);
    nf_broker_t b;
    assert_int_equal(nf_broker_start(&b, "tcp://127.0.0.1:*", NULL), 0);
    pv_bclient_opts_t o = nf_opts(b.endpoint);
    pv_producer_t *actor;
    pv_worker_t *learn;
    assert_int_equal(pv_producer_new(&o, 8, &actor, NULL), PV_OK);
    assert_int_equal(pv_worker_new(&o, "learn", 4, &learn, NULL), PV_OK);
    char url[128];
    snprintf(url, sizeof url, "judge.base_url=http://127.0.0.1:%d/v1", srv.port);
    const char *args[] = {"algorithm.adv_estimator=triage",
                          "algorithm.triage_labels=llm",
                          url,
                          "judge.model=stand-in",
                          "judge.retries=0",
                          "judge.max_repairs=1",
                          NULL};
    pid_t judge = rp_spawn("prover-judge", "triage-judge", b.endpoint, args);
    for (int k = 0; k < S_GROUPS; k++)
        assert_int_equal(pv_producer_submit(actor, "judge", pv_actor_job_id(0, (uint32_t)k), false,
                                            f->buf[k].data, f->buf[k].len, 1000),
                         PV_OK);
    /* the learner's side: each credited group once, its labels checked, into one batch */
    pv_intake_t *in;
    assert_int_equal(pv_intake_new(S_GROUPS, &in), PV_OK);
    bool seen[S_GROUPS] = {false};
    size_t first_row[S_GROUPS];
    for (int n = 0; n < S_GROUPS; n++) {
        pv_lease_t l;
        assert_int_equal(pv_worker_recv(learn, 60000, &l), PV_OK);
        pv_arena_reset(f->scratch);
        pv_wire_msg_t m;
        assert_int_equal(pv_wire_decode(f->dec, l.payload, l.len, f->scratch, &m, NULL), PV_OK);
        assert_int_equal(m.type, PV_MSG_CREDITED_GROUP);
        const pv_wire_credited_group_t *c = &m.credited_group;
        int k = -1;
        for (int j = 0; j < S_GROUPS; j++)
            if (c->group.group_id == pv_actor_job_id(0, (uint32_t)j))
                k = j;
        assert_true(k >= 0 && !seen[k]);
        seen[k] = true;
        assert_int_equal(c->n_segments, 0);
        const pv_wire_rollout_group_t *g = &c->group;
        if (k == 2) {
            assert_string_equal(c->judge, "model-free-fallback");
            assert_int_equal(c->n_triage_labels, 0);
        } else {
            assert_string_equal(c->judge, "llm");
            assert_int_equal(c->n_triage_labels, k == 0 ? RF_G : RF_G - 1);
            for (uint32_t e = 0; e < c->n_triage_labels; e++) {
                const pv_wire_turn_roles_t *tl = &c->triage_labels[e];
                assert_int_equal(tl->traj, k == 0 ? e : e + 1);
                assert_int_equal(tl->n_roles, g->trajectories[tl->traj].n_steps);
                for (uint32_t t = 0; t < tl->n_roles; t++)
                    assert_int_equal(tl->roles[t], (tl->traj + t) % 4);
            }
        }
        size_t rows;
        pv_intake_trajs(in, &rows);
        first_row[k] = rows;
        pv_intake_verdict_t v;
        pv_errmsg_t em = {{0}};
        assert_int_equal(pv_intake_add(in, l.payload, l.len, 1, 100, &v, &em), PV_OK);
        if (v != PV_INTAKE_ACCEPTED)
            fail_msg("group %d: verdict %d: %s", k, (int)v, em.text);
        assert_int_equal(pv_worker_ack(learn, l.job_id, true, NULL, NULL, 0), PV_OK);
    }
    const pv_intake_stats_t *is = pv_intake_stats(in);
    assert_int_equal(is->labelled_groups, 2);
    assert_int_equal(is->labelled_trajs, 2 * RF_G - 1);
    assert_int_equal(is->bad_labels, 0);
    /* the learner's advantages, against the formula by hand */
    size_t n;
    const pv_traj_t *trajs = pv_intake_trajs(in, &n);
    assert_int_equal(n, S_GROUPS * RF_G);
    pv_batch_t batch;
    assert_int_equal(pv_batch_build(trajs, n, &batch, NULL), PV_OK);
    pv_adv_cfg_t cfg = pv_adv_cfg_plain(PV_ADV_TRIAGE);
    cfg.triage.lambda = S_LAMBDA;
    pv_adv_stats_t st;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_batch_advantages(&batch, trajs, n, &cfg, NULL, 0, &st, &em), PV_OK);
    size_t judged = 0, model_free = 0, changed = 0;
    for (int k = 0; k < S_GROUPS; k++) {
        const pv_traj_t *gr = &trajs[first_row[k]];
        double mean = 0, var = 0;
        for (int i = 0; i < RF_G; i++)
            mean += gr[i].reward / RF_G;
        for (int i = 0; i < RF_G; i++)
            var += (gr[i].reward - mean) * (gr[i].reward - mean) / (RF_G - 1);
        for (size_t i = 0; i < RF_G; i++) {
            const pv_traj_t *tr = &gr[i];
            bool refused[4096];
            for (size_t t = 0; t < tr->n_steps; t++)
                refused[t] = tr->steps[t].refused;
            pv_triage_traj_t v = {.success = tr->won,
                                  .n_steps = (uint32_t)tr->n_steps,
                                  .state_keys = tr->state_keys,
                                  .refused = refused};
            pv_triage_role_t mf[4096];
            assert_int_equal(pv_triage_label(&v, 0, mf), PV_OK);
            double grpo = (tr->reward - mean) / (sqrt(var) + 1e-6);
            for (size_t t = 0; t < tr->n_steps; t++) {
                bool j;
                unsigned role = s_expected(k, i, t, (unsigned)mf[t], &j);
                judged += j;
                model_free += !j;
                changed += j && role != (unsigned)mf[t];
                double want = grpo + S_LAMBDA * s_reward[role];
                double got = batch.advantages[(first_row[k] + i) * batch.L + t];
                if (fabs(got - want) > 1e-9)
                    fail_msg("group %d trajectory %zu step %zu: advantage %.12g, by hand %.12g "
                             "(role %u%s)",
                             k, i, t, got, want, role, j ? ", the model's" : ", model-free");
            }
        }
    }
    assert_int_equal(st.triage.judged, judged);
    assert_int_equal(st.triage.model_free, model_free);
    assert_true(judged > 0 && model_free > 0);
    assert_true(changed > 0); /* the model's labels moved some advantage off the model-free one */
    pv_batch_free(&batch);
    pv_intake_destroy(&in);
    for (int k = 0; k < S_GROUPS; k++) {
        pv_completion_t c;
        assert_int_equal(pv_producer_recv(actor, 10000, &c), PV_OK);
        assert_true(c.ok);
    }
    /* no tools offered, the labels' schema; group 2: the malformed answer and its repair */
    json_t *reqs = fs_requests(&srv);
    assert_true(json_array_size(reqs) >= 4);
    for (size_t i = 0; i < json_array_size(reqs); i++) {
        json_t *body = json_object_get(json_array_get(reqs, i), "request");
        assert_null(json_object_get(body, "tools"));
    }
    json_decref(reqs);
    nf_kill(judge, SIGTERM);
    pv_worker_destroy(&learn);
    pv_producer_destroy(&actor);
    assert_int_equal(pv_broker_proc_kill(&b, SIGTERM), 0);
    fs_stop(&srv);
}

int main(void)
{
    if (!fs_have_python()) {
        printf("test_pipeline_triage: python3 not found: skipped\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_labels_reach_the_learner, fs_teardown),
    };
    return cmocka_run_group_tests(tests, s_setup, s_teardown);
}
