/* bench_group.c - prover-bench-policy group: a group's G episodes with the transformer, one
 * after the other against in lockstep (common/traj/rollout.h pv_rollout_episodes: one
 * batched prefill and one batched decode step per token for all G conversations), side by
 * side in one run.
 *
 *   prover-bench-policy group [size=default|20m|500m|both] [groups=2] [G=8] [config=FILE]
 *                             [section.key=value ...]
 *
 * The policy is cluster/configs/alfworld-lm.yaml's (or config=FILE's, with the overrides)
 * untrained, at the default size, ~20M parameters (pv_tf_config_20m's shape) or Qwen2.5-0.5B's
 * shape with the config's vocabulary (24 layers, hidden 896, 14 / 2 heads, MLP 4864: ~360M
 * parameters; give env.max_steps=3 or so, a step costs seconds); "both" runs the first two.
 * The games are generated ALFWorld. Episode i of a group samples from its own stream in both
 * modes, and the lockstep episodes are the one-by-one episodes (test_rollout_batch), so both
 * modes do the same work: the report gives environment steps/s and generated tokens/s of each
 * and the speed-up. The lockstep mode plays all G episodes at once (actor.batch is not read).
 * A benchmark, not a test: timing never decides pass/fail.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/role_build.h"
#include "common/traj/episodes.h"
#include "tools/bench_group.h"

typedef struct s_mode {
    double secs;
    uint64_t steps, tokens, wins;
} s_mode_t;

/* `groups` groups of G episodes on tasks 0.. of the training split. */
static pv_err_t s_play(const pv_env_model_t *model, pv_env_t *const *envs, size_t n_envs,
                       const pv_policy_t *p, pv_policy_work_t *work, size_t groups, size_t G,
                       pv_arena_t *arena, s_mode_t *out, pv_errmsg_t *em)
{
    pv_rollout_opts_t ro = {0};
    pv_traj_t tr[PV_ROLLOUT_MAX_BATCH];
    pv_cost_t c = {0};
    double t0 = pv_mono_s();
    for (size_t g = 0; g < groups; g++) {
        pv_task_t task = pv_episode_task(1, PV_SPLIT_TRAIN, g);
        pv_rng_t r[PV_ROLLOUT_MAX_BATCH], *rp[PV_ROLLOUT_MAX_BATCH];
        for (size_t i = 0; i < G; i++) {
            pv_rng_seed(&r[i], pv_rng_mix(g, i), 7);
            rp[i] = &r[i];
        }
        pv_arena_reset(arena);
        pv_err_t rc = PV_OK;
        if (n_envs > 1)
            rc = pv_rollout_episodes(model, envs, G, &task, p, work, rp, &ro, (int64_t)g, arena, tr,
                                     &c, em);
        for (size_t i = 0; n_envs == 1 && rc == PV_OK && i < G; i++)
            rc = pv_rollout_episode(model, envs[0], &task, p, work, rp[i], &ro, (int64_t)g, arena,
                                    &tr[i], &c, em);
        if (rc != PV_OK)
            return rc;
        for (size_t i = 0; i < G; i++)
            out->wins += tr[i].won;
    }
    out->secs = pv_mono_s() - t0;
    out->steps = c.env_steps;
    out->tokens = c.decisions;
    return PV_OK;
}

static int s_bench(const char *size, const char *config, size_t groups, size_t G, int n_over,
                   char **over)
{
    pv_config_t cfg;
    pv_errmsg_t em = {{0}};
    pv_config_defaults(&cfg);
    pv_err_t rc = pv_config_load_file(&cfg, config, &em);
    static const char *const k20m[][2] = {{"policy.layers", "6"},
                                          {"policy.hidden_size", "512"},
                                          {"policy.heads", "8"},
                                          {"policy.kv_heads", "4"},
                                          {"policy.intermediate_size", "1408"}};
    static const char *const k500m[][2] = {
        {"policy.layers", "24"},   {"policy.hidden_size", "896"},
        {"policy.heads", "14"},    {"policy.kv_heads", "2"},
        {"policy.head_dim", "64"}, {"policy.intermediate_size", "4864"}};
    bool big = strcmp(size, "500m") == 0;
    const char *const(*kv)[2] = big ? k500m : k20m;
    size_t nkv = strcmp(size, "20m") == 0 ? 5 : big ? 6 : 0;
    for (size_t i = 0; rc == PV_OK && i < nkv; i++)
        rc = pv_config_set(&cfg, kv[i][0], kv[i][1], &em);
    for (int i = 0; rc == PV_OK && i < n_over; i++) {
        char key[128];
        const char *eq = strchr(over[i], '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - over[i]), over[i]);
        rc = pv_config_set(&cfg, key, eq + 1, &em);
    }
    pv_env_model_t *model = NULL;
    pv_env_t *env = NULL;
    pv_policy_t *p = NULL;
    pv_policy_work_t *w1 = NULL, *wb = NULL;
    pv_env_pool_t pool = {0};
    pv_arena_t *arena = NULL;
    if (rc == PV_OK)
        rc = pv_role_env_new(&cfg, &model, &env, &em);
    if (rc == PV_OK)
        rc = pv_role_policy_new(&cfg, &p, &w1, &em);
    if (rc == PV_OK && strcmp(pv_policy_spec(p)->kind, "transformer") != 0)
        rc = pv_errf(&em, PV_ERR_CONFIG, "%s: policy.kind is not transformer", config);
    if (rc == PV_OK && (pv_policy_work_new(p, &wb) != PV_OK ||
                        pv_env_pool_init(&pool, model, env, p, G) != PV_OK ||
                        pv_arena_new(1u << 20, 0, &arena) != PV_OK))
        rc = PV_ERR_NOMEM;
    s_mode_t one = {0}, lock = {0};
    if (rc == PV_OK) {
        printf("group play (%s size, %zu parameters, %s): %zu groups of G = %zu generated ALFWorld "
               "episodes, untrained, sampled at T = %.1f\n",
               size, pv_policy_n_params(p), config, groups, G, (double)cfg.actor.temperature);
        fflush(stdout);
        rc = s_play(model, &env, 1, p, w1, groups, G, arena, &one, &em);
    }
    if (rc == PV_OK)
        rc = s_play(model, pool.envs, pool.n, p, wb, groups, G, arena, &lock, &em);
    if (rc == PV_OK) {
        printf("  one by one   %7.1f env steps/s %8.0f tokens/s  (%llu steps, %llu tokens, %llu "
               "wins, %.1f s)\n",
               one.steps / one.secs, one.tokens / one.secs, (unsigned long long)one.steps,
               (unsigned long long)one.tokens, (unsigned long long)one.wins, one.secs);
        printf("  lockstep     %7.1f env steps/s %8.0f tokens/s  (%llu steps, %llu tokens, %llu "
               "wins, %.1f s)\n",
               lock.steps / lock.secs, lock.tokens / lock.secs, (unsigned long long)lock.steps,
               (unsigned long long)lock.tokens, (unsigned long long)lock.wins, lock.secs);
        printf("  speed-up of lockstep (one-by-one time / lockstep time): %.2f (the same "
               "episodes: %s)\n",
               one.secs / lock.secs,
               one.steps == lock.steps && one.tokens == lock.tokens ? "yes" : "NO");
    }
    pv_arena_destroy(&arena);
    pv_env_pool_free(&pool);
    pv_policy_work_destroy(&wb);
    pv_policy_work_destroy(&w1);
    pv_policy_destroy(&p);
    pv_env_destroy(&env);
    pv_env_model_destroy(&model);
    if (rc != PV_OK) {
        fprintf(stderr, "prover-bench-policy group: %s\n", em.text[0] ? em.text : pv_strerror(rc));
        return 1;
    }
    return one.steps == lock.steps && one.tokens == lock.tokens ? 0 : 1;
}

int pv_bench_group(int argc, char **argv)
{
    const char *size = "both", *config = "cluster/configs/alfworld-lm.yaml";
    long groups = 2, G = 8;
    char *over[64];
    int n_over = 0;
    for (int i = 1; i < argc; i++) {
        const char *eq = strchr(argv[i], '='), *dot = strchr(argv[i], '.');
        if (eq && dot && dot < eq && n_over < 64) {
            over[n_over++] = argv[i];
            continue;
        }
        if (strncmp(argv[i], "size=", 5) == 0)
            size = argv[i] + 5;
        else if (strncmp(argv[i], "groups=", 7) == 0)
            groups = atol(argv[i] + 7);
        else if (strncmp(argv[i], "G=", 2) == 0)
            G = atol(argv[i] + 2);
        else if (strncmp(argv[i], "config=", 7) == 0)
            config = argv[i] + 7;
        else {
            fprintf(stderr, "prover-bench-policy group: unknown argument '%s'\n", argv[i]);
            groups = -1;
        }
    }
    int both = strcmp(size, "both") == 0;
    bool bad_size = !both && strcmp(size, "default") && strcmp(size, "20m") && strcmp(size, "500m");
    if (bad_size)
        fprintf(stderr,
                "prover-bench-policy group: size '%s' is none of default, 20m, 500m, both\n", size);
    if (groups < 1 || G < 2 || G > PV_ROLLOUT_MAX_BATCH || bad_size) {
        fprintf(stderr,
                "usage: prover-bench-policy group [size=default|20m|500m|both] "
                "[groups=2] [G=8 (2..%d)] [config=cluster/configs/alfworld-lm.yaml] "
                "[section.key=value ...]\n",
                PV_ROLLOUT_MAX_BATCH);
        return 2;
    }
    int rc = 0;
    if (both || strcmp(size, "default") == 0)
        rc |= s_bench("default", config, (size_t)groups, (size_t)G, n_over, over);
    if (both || strcmp(size, "20m") == 0)
        rc |= s_bench("20m", config, (size_t)groups, (size_t)G, n_over, over);
    if (strcmp(size, "500m") == 0)
        rc |= s_bench("500m", config, (size_t)groups, (size_t)G, n_over, over);
    return rc;
}
