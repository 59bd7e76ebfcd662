/* test_eval_curve.c - prover-eval's arithmetic (tools/eval_curve.h) and grid reading
 * (tools/eval_grid.h) on hand-made runs whose answers are worked out by hand: linear
 * interpolation on a straight line, the crossing of a target between two points, the sample
 * standard deviation of a textbook example, and equal-update / equal-step comparisons of two
 * configurations, one of which pays twice the environment steps per update. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/fs.h"
#include "tests/common/env/env_test_util.h"
#include "tools/eval_grid.h"

/* y = 0.1 + 0.002 x on x = env steps, and iteration = x / 100. */
static void test_success_at(void **state)
{
    (void)state;
    pv_ev_point_t p[4];
    const double xs[4] = {0, 50, 200, 350};
    for (int i = 0; i < 4; i++)
        p[i] = (pv_ev_point_t){
            .iteration = xs[i] / 100, .env_steps = xs[i], .success = 0.1 + 0.002 * xs[i]};
    for (double x = 0; x <= 350; x += 12.5)
        assert_float_equal(pv_ev_success_at(p, 4, PV_EV_ENV_STEPS, x), 0.1 + 0.002 * x, 1e-12);
    assert_float_equal(pv_ev_success_at(p, 4, PV_EV_UPDATES, 2.75), 0.1 + 0.002 * 275, 1e-12);
    assert_float_equal(pv_ev_success_at(p, 4, PV_EV_ENV_STEPS, 200), p[2].success, 0);
    assert_true(isnan(pv_ev_success_at(p, 4, PV_EV_ENV_STEPS, 351)));
    assert_true(isnan(pv_ev_success_at(p, 4, PV_EV_ENV_STEPS, -1)));
    assert_true(isnan(pv_ev_success_at(p, 0, PV_EV_ENV_STEPS, 0)));
    assert_true(isnan(pv_ev_success_at(p, 4, PV_EV_ENV_STEPS, NAN)));
}

/* (0, 0.0), (100, 0.2), (300, 0.6), (400, 0.4): 0.5 is crossed at 100 + 200 * 0.3 / 0.4 =
 * 250, the first time; 0.6 at the third point; 0.7 never; 0.0 at the first point. */
static void test_steps_to(void **state)
{
    (void)state;
    pv_ev_point_t p[4] = {{.env_steps = 0, .success = 0.0},
                          {.env_steps = 100, .success = 0.2},
                          {.env_steps = 300, .success = 0.6},
                          {.env_steps = 400, .success = 0.4}};
    assert_float_equal(pv_ev_steps_to(p, 4, 0.5), 250.0, 1e-9);
    assert_float_equal(pv_ev_steps_to(p, 4, 0.6), 300.0, 1e-9);
    assert_true(isnan(pv_ev_steps_to(p, 4, 0.7)));
    assert_float_equal(pv_ev_steps_to(p, 4, 0.0), 0.0, 0);
    assert_true(isnan(pv_ev_steps_to(p, 0, 0.5)));
}

/* {2, 4, 4, 4, 5, 5, 7, 9}: mean 5, sample std sqrt(32 / 7); NaN entries are not counted. */
static void test_mean_std(void **state)
{
    (void)state;
    double x[10] = {2, 4, NAN, 4, 4, 5, 5, INFINITY, 7, 9}, m, s;
    size_t n;
    pv_ev_mean_std(x, 10, &m, &s, &n);
    assert_int_equal(n, 8);
    assert_float_equal(m, 5.0, 1e-12);
    assert_float_equal(s, sqrt(32.0 / 7.0), 1e-12);
    pv_ev_mean_std(x, 1, &m, &s, &n);
    assert_int_equal(n, 1);
    assert_float_equal(m, 2.0, 0);
    assert_float_equal(s, 0.0, 0);
    pv_ev_mean_std(x + 2, 1, &m, &s, &n);
    assert_int_equal(n, 0);
    assert_true(isnan(m) && isnan(s));
}

static void test_mean_curve(void **state)
{
    (void)state;
    pv_ev_point_t a[3] = {{1, 10, 0.2, 5, 5, 0.1, 1, 0, 40},
                          {2, 20, 0.4, 10, 10, 0.3, 3, 1, 80},
                          {3, 30, 0.9, 0, 0, 0, 0, 0, 120}};
    pv_ev_point_t b[2] = {{1, 30, 0.4, 15, 15, 0.3, 0, 0, 30},
                          {2, 60, 0.8, 30, 30, 0.5, 5, 2, NAN}};
    const pv_ev_point_t *curves[2] = {a, b};
    size_t lens[2] = {3, 2}, n;
    pv_ev_point_t *m;
    assert_int_equal(pv_ev_mean_curve(curves, lens, 2, &m, &n), PV_OK);
    assert_int_equal(n, 2); /* the shorter curve's length */
    assert_float_equal(m[1].iteration, 2.0, 1e-12);
    assert_float_equal(m[1].env_steps, 40.0, 1e-12);
    assert_float_equal(m[1].success, 0.6, 1e-12);
    assert_float_equal(m[1].verify, 20.0, 1e-12);
    assert_float_equal(m[0].reward, 0.2, 1e-12);
    assert_float_equal(m[1].verified, 4.0, 1e-12); /* (3 + 5) / 2 */
    assert_float_equal(m[1].positive, 1.5, 1e-12);
    assert_float_equal(m[0].tokens, 35.0, 1e-12);
    assert_true(isnan(m[1].tokens)); /* a run without a count: no mean */
    free(m);
    assert_float_equal(pv_ev_tail_reward(a, 3, 2), 0.15, 1e-12);
    assert_float_equal(pv_ev_tail_reward(a, 3, 10), 0.4 / 3, 1e-12);
    assert_true(isnan(pv_ev_tail_reward(a, 0, 2)));
}

/* ---- runs and grids on disk ------------------------------------------------------------ */

static void s_mkdir(const char *path)
{
    assert_int_equal(pv_mkdirs(path, 0755, NULL), PV_OK);
}

/* A run evaluated at iterations 0, 10, 20 with success 0, 0.5, 1 (plus `bump`), spending
 * `per_it` environment steps per update (verification share `share` of them) and
 * `tok_per_step` generated tokens per step (NaN: its lines carry no total_tokens), with one
 * train line per update; a run that verifies (share > 0) proposes 25 segments and verifies 21. */
static void s_run(const char *dir, double per_it, double share, double bump, double precision,
                  double tok_per_step)
{
    s_mkdir(dir);
    char path[1024];
    snprintf(path, sizeof path, "%s/metrics.jsonl", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int it = 0; it <= 20; it++) {
        double steps = per_it * it;
        if (it > 0)
            fprintf(f,
                    "{\"kind\":\"train\",\"iteration\":%d,\"total_env_steps\":%g,"
                    "\"success_rate\":0.5,\"cum_rollout_env_steps\":%g,"
                    "\"cum_verify_env_steps\":%g,\"mean_reward\":%g,"
                    "\"proposals\":%d,\"segments_verified\":%d,\"segments_positive\":%s}\n",
                    it, steps, steps * (1 - share), steps * share, it / 20.0,
                    /* one proposal more than verified every 5th update: 25 proposed */
                    share > 0 ? it % 3 + (it % 5 == 0) : 0,
                    share > 0 ? it % 3 : 0, /* 1, 2, 0, 1, ...: 21 over 20 updates */
                    share > 0 && it % 3 == 2 ? "1" : "null"); /* 7 accepted; null adds 0 */
        char tokens[64] = "";
        if (!isnan(tok_per_step))
            snprintf(tokens, sizeof tokens, ",\"total_tokens\":%g", steps * tok_per_step);
        if (it % 10 == 0)
            fprintf(f,
                    "{\"kind\":\"eval\",\"iteration\":%d,\"total_env_steps\":%g%s,"
                    "\"success_rate\":%g}\n",
                    it, steps, tokens, fmin(1.0, it / 20.0 + (it ? bump : 0)));
    }
    fputs("not json\n{\"kind\":\"eval\",\"iteration\":30}\n", f); /* both skipped */
    fclose(f);
    char prec[32] = "null", sum[512];
    if (!isnan(precision))
        snprintf(prec, sizeof prec, "%g", precision);
    snprintf(sum, sizeof sum,
             "{\"iterations\":20,\"eval_success_after\":%g,\"verify_share\":%g,"
             "\"rollout_env_steps\":%g,\"verify_env_steps\":%g,\"judge_precision\":%s,"
             "\"precision_samples\":%d,\"wall_s\":3.0}",
             fmin(1.0, 1.0 + bump), share, 20 * per_it * (1 - share), 20 * per_it * share, prec,
             isnan(precision) ? 0 : 40);
    et_write(dir, "summary.json", sum);
}

static void test_run_load(void **state)
{
    (void)state;
    char tmp[128], dir[256];
    et_tmpdir(tmp, sizeof tmp, "eval_run");
    snprintf(dir, sizeof dir, "%s/one", tmp);
    s_run(dir, 100, 0.25, 0, 0.6, NAN);
    pv_ev_run_t r;
    assert_int_equal(pv_ev_run_load(dir, &r, NULL), PV_OK);
    assert_int_equal(r.n_eval, 3);
    assert_true(isnan(r.eval[1].tokens)); /* an older run's lines: no tokens axis */
    assert_true(isnan(pv_ev_success_at(r.eval, r.n_eval, PV_EV_TOKENS, 0)));
    assert_int_equal(r.n_train, 20);
    assert_float_equal(r.eval[1].success, 0.5, 1e-12);
    assert_float_equal(r.train[19].verify, 500.0, 1e-9);
    assert_float_equal(r.train[1].verified, 3.0, 1e-12); /* 1 + 2: summed over the lines */
    assert_float_equal(r.train[19].verified, 21.0, 1e-12);
    assert_float_equal(r.train[19].positive, 7.0, 1e-12);
    assert_float_equal(r.proposals, 25.0, 1e-12); /* 4 more than train[19].verified */
    assert_float_equal(r.verify_share, 0.25, 1e-12);
    assert_float_equal(r.precision, 0.6, 1e-12);
    assert_int_equal(r.precision_samples, 40);
    pv_ev_run_free(&r);
    pv_errmsg_t em = {{0}};
    /* a failed run (issue 15, item 2) writes a summary too, but is no data point */
    et_write(dir, "summary.json",
             "{\"outcome\":\"failed\",\"reason\":\"the judge is gone\",\"iterations\":3}");
    assert_int_equal(pv_ev_run_load(dir, &r, &em), PV_ERR_DATA);
    assert_non_null(strstr(em.text, "the judge is gone"));
    et_write(dir, "summary.json", "{\"outcome\":\"time_limit\",\"iterations\":3}");
    assert_int_equal(pv_ev_run_load(dir, &r, &em), PV_OK);
    pv_ev_run_free(&r);
    et_write(dir, "summary.json", "[1, 2]");
    assert_int_equal(pv_ev_run_load(dir, &r, &em), PV_ERR_PARSE);
    assert_non_null(strstr(em.text, "summary.json"));
    et_write(dir, "metrics.jsonl", "{\"kind\":\"train\"}\n");
    assert_int_equal(pv_ev_run_load(dir, &r, &em), PV_ERR_DATA);
    snprintf(dir, sizeof dir, "%s/missing", tmp);
    assert_int_equal(pv_ev_run_load(dir, &r, &em), PV_ERR_IO);
    et_rmdir(tmp);
}

/* Two configurations, two seeds each: "contrast" spends 200 steps per update, "grpo" 100,
 * contrast's seeds are +0.1 and +0.2 ahead after training. Equal updates (20): grpo 1.0,
 * contrast 1.0 (capped); equal steps (2000, grpo's budget): contrast is at iteration 10,
 * 0.5 + bump. Steps to 0.5: grpo 1000; contrast's first eval above 0.5 is at 2000 steps with
 * 0.6 or 0.7: crossing 2000 * 0.5 / 0.6 and 2000 * 0.5 / 0.7. */
static void test_grid(void **state)
{
    (void)state;
    char tmp[128], dir[256];
    et_tmpdir(tmp, sizeof tmp, "eval_grid");
    for (int s = 1; s <= 2; s++) {
        snprintf(dir, sizeof dir, "%s/grid/alfworld/grpo/seed%d", tmp, s);
        s_run(dir, 100, 0.0, 0, NAN, 3);
        snprintf(dir, sizeof dir, "%s/grid/alfworld/contrast/seed%d", tmp, s);
        s_run(dir, 200, 0.5, 0.1 * s, 0.5 + 0.1 * s, 1);
    }
    snprintf(dir, sizeof dir, "%s/grid/alfworld/contrast/seed3", tmp);
    s_mkdir(dir); /* a run that never finished: left out */
    snprintf(dir, sizeof dir, "%s/grid/alfworld/grpo", tmp);
    et_write(dir, "overrides.txt", "algorithm.adv_estimator=grpo\nignored\n");
    snprintf(dir, sizeof dir, "%s/grid", tmp);
    pv_eg_t *g;
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_eg_load(dir, 0.5, &g, &em), PV_OK);
    assert_int_equal(g->n_envs, 1);
    assert_int_equal(g->n_runs, 4);
    assert_int_equal(g->n_skipped, 1);
    assert_non_null(strstr(g->skipped[0], "seed3"));
    const pv_eg_env_t *e = &g->envs[0];
    assert_string_equal(e->name, "alfworld");
    assert_int_equal(e->n_configs, 2);
    assert_float_equal(e->updates, 20, 0);
    assert_float_equal(e->steps, 2000, 0);
    assert_float_equal(e->steps_max, 4000, 0);
    assert_float_equal(e->tokens, 4000, 0); /* contrast's 20 x 200 x 1 below grpo's 20 x 100 x 3 */
    const pv_eg_config_t *grpo = &e->configs[0], *con = &e->configs[1];
    assert_string_equal(grpo->name, "grpo"); /* the fixed order, not the alphabet */
    assert_string_equal(con->name, "contrast");
    assert_string_equal(grpo->overrides, "algorithm.adv_estimator=grpo");
    assert_float_equal(grpo->at_updates.mean, 1.0, 1e-12);
    assert_float_equal(grpo->at_steps.mean, 1.0, 1e-12);
    assert_float_equal(grpo->to_target.mean, 1000.0, 1e-9);
    assert_int_equal(grpo->precision.n, 0); /* not measured */
    assert_float_equal(con->at_updates.mean, 1.0, 1e-12);
    assert_float_equal(con->at_steps.mean, 0.65, 1e-12);
    assert_float_equal(con->at_steps.std, sqrt(0.005), 1e-12);
    /* equal tokens (4000): grpo is between its evaluations at 3000 (0.5) and 6000 (1.0) tokens,
     * contrast at its last (1.0, capped) */
    assert_float_equal(grpo->at_tokens.mean, 0.5 + 0.5 * 1000.0 / 3000.0, 1e-12);
    assert_float_equal(con->at_tokens.mean, 1.0, 1e-12);
    double a = 2000 * 0.5 / 0.6, b = 2000 * 0.5 / 0.7;
    assert_float_equal(con->to_target.mean, (a + b) / 2, 1e-9);
    assert_float_equal(con->to_target.std, fabs(a - b) / sqrt(2.0), 1e-9);
    assert_float_equal(con->verify_share.mean, 0.5, 1e-12);
    assert_float_equal(con->unverified.mean, 4.0 / 25.0, 1e-12);
    assert_int_equal(grpo->unverified.n, 0); /* proposed nothing: no share */
    assert_float_equal(con->precision.mean, 0.65, 1e-12);
    assert_float_equal(con->env_steps.mean, 4000, 1e-9);
    assert_float_equal(con->train_reward.mean, 0.775, 1e-12); /* (11 + ... + 20) / 10 / 20 */
    /* against grpo: both end at 1.0 (capped) on both seeds, so the difference and its whole
     * bootstrap interval are 0; grpo has none against itself */
    assert_string_equal(con->seed_names[1], "seed2");
    assert_float_equal(con->finals[0], 1.0, 0);
    assert_true(con->vs_grpo.have && !grpo->vs_grpo.have);
    assert_true(con->vs_grpo.diff == 0 && con->vs_grpo.lo == 0 && con->vs_grpo.hi == 0);
    assert_int_equal(pv_eg_write_means(g, dir, &em), PV_OK);
    assert_int_equal(pv_eg_write_markdown(g, dir, "cmd", 0, &em), PV_OK);
    assert_int_equal(pv_eg_write_json(g, dir, "cmd", &em), PV_OK);
    char md[300], text[8192];
    snprintf(md, sizeof md, "%s/results.md", dir);
    FILE *f = fopen(md, "r");
    assert_non_null(f);
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    assert_non_null(strstr(text, "| success at 4.0k tokens |"));
    assert_non_null(strstr(text, "| 0.667 ± 0.000 |")); /* grpo's cell */
    assert_non_null(strstr(text, "**contrast: 16.0% of its proposals went unverified**"));
    assert_null(strstr(text, "**grpo:"));
    pv_eg_destroy(&g);
    assert_null(g);
    /* the mean curve reads back as a run's curve */
    char from[300];
    snprintf(from, sizeof from, "%s/grid/alfworld/contrast/mean.jsonl", tmp);
    snprintf(dir, sizeof dir, "%s/mean", tmp);
    s_mkdir(dir);
    char to[300];
    snprintf(to, sizeof to, "%s/metrics.jsonl", dir);
    assert_int_equal(rename(from, to), 0);
    et_write(dir, "summary.json", "{}");
    pv_ev_run_t m;
    assert_int_equal(pv_ev_run_load(dir, &m, NULL), PV_OK);
    assert_int_equal(m.n_eval, 3);
    assert_float_equal(m.eval[1].success, 0.65, 1e-12);
    assert_float_equal(m.eval[2].env_steps, 4000, 1e-9);
    assert_float_equal(m.eval[2].tokens, 4000, 1e-9);
    pv_ev_run_free(&m);
    snprintf(dir, sizeof dir, "%s/empty", tmp);
    s_mkdir(dir);
    assert_int_equal(pv_eg_load(dir, 0.5, &g, &em), PV_ERR_NOTFOUND);
    snprintf(dir, sizeof dir, "%s/nowhere", tmp);
    assert_int_equal(pv_eg_load(dir, 0.5, &g, &em), PV_ERR_IO);
    et_rmdir(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_success_at), cmocka_unit_test(test_steps_to),
        cmocka_unit_test(test_mean_std),   cmocka_unit_test(test_mean_curve),
        cmocka_unit_test(test_run_load),   cmocka_unit_test(test_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
