/* test_config.c - YAML loading, overrides, errors that name key/type/line, round trips. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/config.h"

static char s_path[64];

static const char *s_write(const char *text)
{
    snprintf(s_path, sizeof s_path, "/tmp/pv_test_config_%d.yaml", (int)getpid());
    FILE *f = fopen(s_path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return s_path;
}

static void test_run_name(void **state)
{
    (void)state;
    pv_config_t c;
    pv_config_defaults(&c);
    char buf[64];
    assert_string_equal(pv_config_run_name(&c, buf, sizeof buf), "default"); /* runs/default */
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_config_set(&c, "run.out_dir", "/tmp/x/alf-seed3//", &em), PV_OK);
    assert_string_equal(pv_config_run_name(&c, buf, sizeof buf), "alf-seed3");
    assert_int_equal(pv_config_set(&c, "run.out_dir", "/", &em), PV_OK);
    assert_string_equal(pv_config_run_name(&c, buf, sizeof buf), ".");
    assert_int_equal(pv_config_set(&c, "run.out_dir", "plain", &em), PV_OK);
    assert_string_equal(pv_config_run_name(&c, buf, 4), "pla"); /* truncated */
    assert_int_equal(pv_config_set(&c, "run.name", "my run", &em), PV_OK);
    assert_string_equal(pv_config_run_name(&c, buf, sizeof buf), "my run");
}

static void test_defaults_follow_the_key_table(void **state)
{
    (void)state;
    pv_config_t c;
    pv_config_defaults(&c);
    assert_string_equal(c.env.name, "alfworld");
    assert_string_equal(c.algorithm.adv_estimator, "prover");
    assert_true(c.learner.clip_ratio_low == 0.2);
    assert_false(c.learner.use_kl_loss);
    assert_int_equal(c.actor.group_size, 8);
    assert_true(pv_config_n_keys() > 40);
}

static void test_file_then_overrides(void **state)
{
    (void)state;
    const char *path = s_write("# a run\n"
                               "run:\n  seed: 42\n  name: \"my run\"\n"
                               "learner:\n  lr: 3e-4\n  use_kl_loss: yes\n  batch_groups: 2k\n"
                               "algorithm:\n  adv_estimator: grpo\n"
                               "prover:\n");
    pv_config_t c;
    pv_errmsg_t em = {{0}};
    pv_config_defaults(&c);
    char a0[] = "x", a1[] = "learner.lr=0.01", a2[] = "--config", a4[] = "extra",
         a5[] = "run.seed=7", a3[256];
    snprintf(a3, sizeof a3, "%s", path);
    char *argv[] = {a0, a1, a2, a3, a4, a5};
    int rest[6], n_rest = 0;
    assert_int_equal(pv_config_from_args(&c, 6, argv, rest, &n_rest, &em), PV_OK);
    assert_int_equal(c.run.seed, 7);                /* command line beats the file */
    assert_true(c.learner.lr == 0.01);              /* even when given before --config */
    assert_string_equal(c.run.name, "my run");      /* file applied */
    assert_true(c.learner.use_kl_loss);             /* yes -> true */
    assert_int_equal(c.learner.batch_groups, 2000); /* k suffix */
    assert_string_equal(c.algorithm.adv_estimator, "grpo");
    assert_int_equal(n_rest, 1);
    assert_string_equal(argv[rest[0]], "extra");
    /* without a rest array, a stray argument is an error */
    assert_int_equal(pv_config_from_args(&c, 6, argv, NULL, NULL, &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "extra"));
    unlink(path);
}

static void test_errors_name_key_type_and_line(void **state)
{
    (void)state;
    pv_config_t c;
    pv_errmsg_t em = {{0}};
    pv_config_defaults(&c);

    assert_int_equal(pv_config_set(&c, "learner.lrr", "1", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "unknown key 'learner.lrr'"));
    assert_non_null(strstr(em.text, "did you mean 'learner.lr'"));

    assert_int_equal(pv_config_set(&c, "learner.lr", "fast", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "learner.lr"));
    assert_non_null(strstr(em.text, "float"));

    assert_int_equal(pv_config_set(&c, "actor.group_size", "1000", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "out of range"));
    assert_int_equal(pv_config_set(&c, "actor.group_size", "2.5", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "integer"));

    assert_int_equal(pv_config_set(&c, "algorithm.adv_estimator", "ppo", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "grpo|prover"));
    assert_int_equal(pv_config_set(&c, "learner.use_kl_loss", "maybe", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "boolean"));
    assert_int_equal(pv_config_set(&c, "learner.lr", "nan", &em), PV_ERR_CONFIG);
    assert_int_equal(pv_config_set(&c, "nodot", "1", &em), PV_ERR_CONFIG);
    assert_int_equal(pv_config_set(&c, "a.b.c", "1", &em), PV_ERR_CONFIG);
    char longv[400];
    memset(longv, 'a', sizeof longv - 1);
    longv[sizeof longv - 1] = '\0';
    assert_int_equal(pv_config_set(&c, "run.name", longv, &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "longer than"));
    /* failed sets leave values untouched */
    assert_true(c.learner.lr == 1e-3);
    assert_string_equal(c.run.name, "");

    const char *path = s_write("run:\n  seed: 1\nlearner:\n  clip_ratio_low: 0.1\n  bogus: 3\n");
    assert_int_equal(pv_config_load_file(&c, path, &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, ":5: unknown key 'learner.bogus'"));

    path = s_write("run:\n  seed: [1, 2]\n");
    assert_int_equal(pv_config_load_file(&c, path, &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, ":2: run.seed: expected a single integer value, got a list"));

    path = s_write("run:\n  seed: 1\n  name: a\n  seed: 2\n");
    assert_int_equal(pv_config_load_file(&c, path, &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, ":4: run.seed given twice (first at line 2)"));

    path = s_write("run:\n  seed: 1\nlearner:\n  lr: 0.1\nrun:\n  name: b\n");
    assert_int_equal(pv_config_load_file(&c, path, &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, ":5: section 'run' given twice (first at line 1)"));

    path = s_write("nosuchsection:\n  a: 1\n");
    assert_int_equal(pv_config_load_file(&c, path, &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "unknown section 'nosuchsection'"));

    path = s_write("run:\n  seed: 1\n   bad indent: [\n");
    assert_int_equal(pv_config_load_file(&c, path, &em), PV_ERR_PARSE);
    assert_non_null(strstr(em.text, "YAML error"));

    path = s_write("- just\n- a list\n");
    assert_int_equal(pv_config_load_file(&c, path, &em), PV_ERR_PARSE);

    assert_int_equal(pv_config_load_file(&c, "/nonexistent/x.yaml", &em), PV_ERR_IO);
    assert_non_null(strstr(em.text, "/nonexistent/x.yaml"));
    unlink(s_path);
}

/* verl / Hydra nested names are refused, pointing at the key of that meaning: by the last
 * part's key name, else by the verl name the key's description cites. */
static void test_nested_verl_names(void **state)
{
    (void)state;
    pv_config_t c;
    pv_config_defaults(&c);
    const char *cases[][2] = {
        {"actor_rollout_ref.rollout.temperature", "'actor.temperature'"},
        {"actor_rollout_ref.actor.clip_ratio_low", "'learner.clip_ratio_low'"},
        {"algorithm.gigpo.step_advantage_w", "'algorithm.gigpo_step_weight'"},
        {"algorithm.gigpo.mode", "'algorithm.gigpo_mode'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pv_errmsg_t em = {{0}};
        assert_int_equal(pv_config_set(&c, cases[i][0], "1", &em), PV_ERR_CONFIG);
        assert_non_null(strstr(em.text, cases[i][0]));
        assert_non_null(strstr(em.text, cases[i][1]));
    }
    pv_errmsg_t em = {{0}};
    assert_int_equal(pv_config_set(&c, "a.b.nothing_like_it", "1", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "expected section.key=value"));
    assert_null(strstr(em.text, "did you mean"));
}

/* A sub-section (cluster.slurm) is section.sub.key on the command line and nested in YAML;
 * verl's trainer: section points at run.*. */
static void test_subsection_and_verl_trainer(void **state)
{
    (void)state;
    pv_config_t c;
    pv_errmsg_t em = {{0}};
    pv_config_defaults(&c);
    assert_int_equal(c.cluster_slurm.nodes, 1);
    assert_int_equal(pv_config_set(&c, "cluster.slurm.nodes", "4", &em), PV_OK);
    assert_int_equal(c.cluster_slurm.nodes, 4);
    char v[PV_CONFIG_STR_MAX + 8];
    assert_int_equal(pv_config_get_text(&c, "cluster.slurm.nodes", v, sizeof v, &em), PV_OK);
    assert_string_equal(v, "4");
    assert_int_equal(pv_config_set(&c, "cluster.slurm.nodez", "4", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "did you mean 'cluster.slurm.nodes'"));
    assert_int_equal(pv_config_set(&c, "cluster.slurm.nodes", "0", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "cluster.slurm.nodes: 0 is out of range"));
    const char *y = "cluster:\n  actors: 3\n  slurm:\n    nodes: 2\n    time: \"01:00:00\"\n"
                    "  verifiers: 2\n";
    assert_int_equal(pv_config_load_text(&c, y, strlen(y), "t.yaml", &em), PV_OK);
    assert_int_equal(c.cluster.actors, 3);
    assert_int_equal(c.cluster.verifiers, 2);
    assert_int_equal(c.cluster_slurm.nodes, 2);
    assert_string_equal(c.cluster_slurm.time, "01:00:00");
    y = "cluster:\n  slurm:\n    nodes: 2\n    nodes: 3\n";
    assert_int_equal(pv_config_load_text(&c, y, strlen(y), "t.yaml", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "t.yaml:4: cluster.slurm.nodes given twice"));
    y = "cluster:\n  slurm:\n    nodse: 2\n";
    assert_int_equal(pv_config_load_text(&c, y, strlen(y), "t.yaml", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "t.yaml:3: unknown key 'cluster.slurm.nodse'"));
    char name[160];
    bool listed = false;
    for (size_t i = 0; i < pv_config_n_keys(); i++)
        listed |= strcmp(pv_config_key_name(i, name, sizeof name), "cluster.slurm.partition") == 0;
    assert_true(listed);
    /* verl's trainer: section */
    y = "trainer:\n  total_epochs: 3\n";
    assert_int_equal(pv_config_load_text(&c, y, strlen(y), "v.yaml", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "v.yaml:1: unknown section 'trainer'"));
    assert_non_null(strstr(em.text, "run.*"));
    assert_int_equal(pv_config_set(&c, "trainer.total_training_steps", "5", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "trainer.total_training_steps is run.iterations"));
    assert_int_equal(pv_config_set(&c, "trainer.logger", "5", &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "run.*"));
}

static void test_yaml_round_trip_is_exact(void **state)
{
    (void)state;
    pv_config_t a, b;
    pv_errmsg_t em = {{0}};
    pv_config_defaults(&a);
    assert_int_equal(pv_config_set(&a, "run.name", "quote\" and \\ back", &em), PV_OK);
    assert_int_equal(pv_config_set(&a, "learner.lr", "0.1", &em), PV_OK);
    assert_int_equal(pv_config_set(&a, "learner.use_kl_loss", "true", &em), PV_OK);
    assert_int_equal(pv_config_set(&a, "prover.judge", "oracle", &em), PV_OK);
    assert_int_equal(pv_config_set(&a, "cluster.slurm.nodes", "3", &em), PV_OK);
    assert_int_equal(pv_config_set(&a, "cluster.slurm.extra", "--qos=high --mem=8G", &em), PV_OK);
    size_t cap = pv_config_yaml_max(), len = 0;
    char *buf = malloc(cap);
    assert_int_equal(pv_config_to_yaml(&a, buf, cap, &len), PV_OK);
    pv_config_defaults(&b);
    assert_int_equal(pv_config_load_text(&b, buf, len, "dump", &em), PV_OK);
    assert_memory_equal(&a, &b, sizeof a);      /* every key, bit for bit (floats %.17g) */
    assert_non_null(strstr(buf, "cluster:\n")); /* the sub-section nested under its parent */
    assert_non_null(strstr(buf, "\n  slurm:\n    nodes: 3\n"));
    assert_int_equal(pv_config_to_yaml(&a, buf, 16, &len), PV_ERR_LIMIT);
    free(buf);
}

static void test_get_text(void **state)
{
    (void)state;
    pv_config_t c;
    pv_errmsg_t em = {{0}};
    pv_config_defaults(&c);
    assert_int_equal(pv_config_set(&c, "learner.lr", "0.003", &em), PV_OK);
    assert_int_equal(pv_config_set(&c, "run.name", "a \"quoted\" name", &em), PV_OK);
    char v[PV_CONFIG_STR_MAX + 8];
    assert_int_equal(pv_config_get_text(&c, "learner.lr", v, sizeof v, &em), PV_OK);
    assert_string_equal(v, "0.003"); /* shortest exact form, not 0.0030000000000000001 */
    assert_int_equal(pv_config_get_text(&c, "run.name", v, sizeof v, &em), PV_OK);
    assert_string_equal(v, "a \"quoted\" name"); /* raw, unquoted */
    assert_int_equal(pv_config_get_text(&c, "actor.group_size", v, sizeof v, &em), PV_OK);
    assert_string_equal(v, "8");
    assert_int_equal(pv_config_get_text(&c, "learner.use_kl_loss", v, sizeof v, &em), PV_OK);
    assert_string_equal(v, "false");
    assert_int_equal(pv_config_get_text(&c, "learner.resume", v, sizeof v, &em), PV_OK);
    assert_string_equal(v, "");
    assert_int_equal(pv_config_get_text(&c, "learner.lrr", v, sizeof v, &em), PV_ERR_CONFIG);
    assert_non_null(strstr(em.text, "did you mean 'learner.lr'"));
    assert_int_equal(pv_config_get_text(&c, "run.name", v, 4, &em), PV_ERR_LIMIT);
}

/* Values that pass a key's type and range but fail at start-up are refused when the
 * command line is read, so prover-config refuses them too (issue 15, item 8). */
static void test_checks_beyond_ranges(void **state)
{
    (void)state;
    static const struct {
        const char *arg, *why;
    } bad[] = {
        {"env.gen_task_types=1", "bit 0"},
        {"broker.bind=junk", "not tcp://HOST:PORT"},
        {"broker.bind=tcp://127.0.0.1:5591x", "digits only"},
        {"broker.bind=tcp://127.0.0.1:70000", "1..65535"},
        {"broker.bind=tcp://:5555", "no HOST:PORT"},
        {"broker.endpoint=tcp://*:5555", "'*' is for broker.bind"},
        {"broker.endpoint=tcp://127.0.0.1:*", "digits only"},
        {"broker.endpoint=ipc://", "empty address"},
        {"broker.metrics_bind=localhost", "IPv4"},
        {"learner.ppo_mini_batch_groups=3", "does not divide learner.batch_groups 8"},
        {"learner.ppo_mini_batch_groups=16", "does not divide"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pv_config_t c;
        pv_config_defaults(&c);
        char arg[128];
        snprintf(arg, sizeof arg, "%s", bad[i].arg);
        char *argv[] = {"prog", arg};
        pv_errmsg_t em = {{0}};
        assert_int_equal(pv_config_from_args(&c, 2, argv, NULL, NULL, &em), PV_ERR_CONFIG);
        assert_non_null(strstr(em.text, bad[i].why));
    }
    static const char *const good[] = {
        "env.gen_task_types=126",          "broker.bind=tcp://*:*",
        "broker.bind=tcp://[::1]:5555",    "broker.endpoint=tcp://node3:5555",
        "broker.bind=ipc:///tmp/pv.sock",  "broker.metrics_bind=0.0.0.0",
        "learner.eval_split=train", /* the generated ALFWorld: an unbounded train split */
        "learner.ppo_mini_batch_groups=4",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        pv_config_t c;
        pv_config_defaults(&c);
        char arg[128];
        snprintf(arg, sizeof arg, "%s", good[i]);
        char *argv[] = {"prog", arg};
        assert_int_equal(pv_config_from_args(&c, 2, argv, NULL, NULL, NULL), PV_OK);
    }
    /* new games of the training kinds exist only where the train split is generated */
    static const char *const finite[][2] = {{"env.name=searchqa", "searchqa"},
                                            {"env.data_path=/data/alfworld", "env.data_path"}};
    for (size_t i = 0; i < 2; i++) {
        pv_config_t c;
        pv_config_defaults(&c);
        char a0[64], a1[64];
        snprintf(a0, sizeof a0, "%s", finite[i][0]);
        snprintf(a1, sizeof a1, "learner.eval_split=train");
        char *argv[] = {"prog", a0, a1};
        pv_errmsg_t em = {{0}};
        assert_int_equal(pv_config_from_args(&c, 3, argv, NULL, NULL, &em), PV_ERR_CONFIG);
        assert_non_null(strstr(em.text, "learner.eval_split=train"));
        assert_non_null(strstr(em.text, finite[i][1]));
    }
}

/* Settings changed from their defaults that do nothing in the configuration are named, one
 * line each; the shipped job configs have none. */
static void test_ignored(void **state)
{
    (void)state;
    pv_config_t c;
    char buf[4096];
    pv_config_defaults(&c);
    assert_int_equal(pv_config_ignored(&c, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_int_equal(pv_config_set(&c, "policy.decode", "constrain", NULL), PV_OK);
    assert_int_equal(pv_config_set(&c, "policy.layers", "2", NULL), PV_OK);
    assert_int_equal(pv_config_set(&c, "learner.bc_mask", "true", NULL), PV_OK);
    assert_int_equal(pv_config_set(&c, "policy.hash_buckets", "1024", NULL), PV_OK);
    assert_int_equal(pv_config_ignored(&c, buf, sizeof buf), 3); /* hash_buckets is used */
    assert_non_null(strstr(buf, "policy.decode=constrain has no effect with policy.kind=bow_mlp"));
    assert_non_null(strstr(buf, "policy.layers=2 has no effect with policy.kind=bow_mlp"));
    assert_non_null(strstr(buf, "learner.bc_mask=true has no effect"));
    assert_null(strstr(buf, "hash_buckets"));
    /* a transformer with constrained decoding uses all of those but the scorer's buckets */
    assert_int_equal(pv_config_set(&c, "policy.kind", "transformer", NULL), PV_OK);
    assert_int_equal(pv_config_ignored(&c, buf, sizeof buf), 1);
    assert_non_null(
        strstr(buf, "policy.hash_buckets=1024 has no effect with policy.kind=transformer"));
    /* with a model directory the sizes are its own */
    assert_int_equal(pv_config_set(&c, "policy.path", "/models/qwen", NULL), PV_OK);
    assert_int_equal(pv_config_ignored(&c, buf, sizeof buf), 2);
    assert_non_null(strstr(buf, "policy.layers=2 has no effect with policy.path set"));
    /* ALFWorld's expert and the restated task line are settings of some environments only */
    pv_config_t e;
    pv_config_defaults(&e);
    assert_int_equal(pv_config_set(&e, "env.expert", "search", NULL), PV_OK);
    assert_int_equal(pv_config_ignored(&e, buf, sizeof buf), 0);
    assert_int_equal(pv_config_set(&e, "env.name", "webshop", NULL), PV_OK);
    assert_int_equal(pv_config_ignored(&e, buf, sizeof buf), 1);
    assert_non_null(strstr(buf, "env.expert=search has no effect outside alfworld"));
    assert_int_equal(pv_config_set(&e, "env.name", "searchqa", NULL), PV_OK);
    assert_int_equal(pv_config_set(&e, "policy.kind", "transformer", NULL), PV_OK);
    assert_int_equal(pv_config_set(&e, "policy.prompt_task_each_turn", "true", NULL), PV_OK);
    assert_int_equal(pv_config_ignored(&e, buf, sizeof buf), 2);
    assert_non_null(strstr(buf, "policy.prompt_task_each_turn=true has no effect with "
                                "env.name=searchqa"));
    assert_int_equal(pv_config_set(&e, "policy.kind", "bow_mlp", NULL), PV_OK);
    assert_int_equal(pv_config_ignored(&e, buf, sizeof buf), 2); /* a transformer setting */
    assert_non_null(
        strstr(buf, "prompt_task_each_turn=true has no effect with policy.kind=bow_mlp"));
    /* a buffer too small for a line holds whole lines only */
    assert_int_equal(pv_config_ignored(&c, buf, 20), 0);
    assert_string_equal(buf, "");
    const char *jobs[] = {"alfworld", "alfworld-lm", "webshop", "searchqa"};
    for (size_t i = 0; i < sizeof jobs / sizeof *jobs; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/cluster/configs/%s.yaml", PV_SOURCE_DIR, jobs[i]);
        pv_config_defaults(&c);
        assert_int_equal(pv_config_load_file(&c, path, NULL), PV_OK);
        size_t n = pv_config_ignored(&c, buf, sizeof buf);
        if (n)
            fprintf(stderr, "%s: %s", path, buf);
        assert_int_equal(n, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_follow_the_key_table),
        cmocka_unit_test(test_run_name),
        cmocka_unit_test(test_file_then_overrides),
        cmocka_unit_test(test_errors_name_key_type_and_line),
        cmocka_unit_test(test_nested_verl_names),
        cmocka_unit_test(test_subsection_and_verl_trainer),
        cmocka_unit_test(test_yaml_round_trip_is_exact),
        cmocka_unit_test(test_get_text),
        cmocka_unit_test(test_checks_beyond_ranges),
        cmocka_unit_test(test_ignored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
