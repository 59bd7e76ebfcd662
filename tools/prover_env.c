/* prover_env.c - prover-env: play, replay, demonstrate and benchmark any environment of env.h.
 *
 *   prover-env play   [options]          play in the terminal; admissible commands are listed and
 *                                        can be chosen by number (a number not in the list is
 *                                        refused, not played); the prompt counts the steps;
 *                                        quit (q, exit, or end of input) ends the game
 *   prover-env play --policy PATH [--config FILE] [--sample SEED] [--top N] [--diagnose]
 *                   [key=value...]
 *                                        watch a trained policy play (a run folder, a
 *                                        checkpoint or a Hugging Face model directory; the
 *                                        environment of the run's config.yaml, which the
 *                                        environment options and key=value override):
 *                                        tools/play_policy.h
 *   prover-env replay FILE [options]     run the actions in FILE (one per line, '#' comments) and
 *                                        print the transcript
 *   prover-env expert [options]          expert demonstrations as JSONL, one episode per line:
 *                                        {"env","split","task_id","seed","task","reward","won",
 *                                         "n_steps","steps":[{"observation","admissible",
 *                                         "action","reward","done"}]}
 *   prover-env bench  [options]          steps per second per core (random admissible actions,
 *                                        the admissible list computed at every step), reset time
 *                                        and save+restore time
 * Options: --env NAME (alfworld) --data PATH (default: embedded generator) --split train|test
 *          --task N --seed N --max-steps N --episodes N --seconds S --receptacles N
 *          --distractors N --task-types MASK --no-admissible --expert planner|search (expert)
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/fs.h"
#include "common/clock.h"
#include "common/env/env.h"
#include "common/rng.h"
#include "tools/play_policy.h"

#define S_MAX_SETS 32

typedef struct s_opts {
    const char *cmd, *file;
    pv_env_spec_t spec;
    pv_task_t task;
    uint64_t episodes;
    double seconds;
    bool no_admissible;
    pv_play_opts_t play;          /* --policy, --config, --sample, --top */
    const char *sets[S_MAX_SETS]; /* key=value, and the environment options as keys */
    char set_buf[S_MAX_SETS][512];
    size_t n_sets;
    bool play_only; /* an option of play --policy only was given */
} s_opts_t;

static void s_usage(FILE *f)
{
    fprintf(f, "usage: prover-env play|replay FILE|expert|bench [options]\n"
               "  --env NAME          environment family (alfworld, webshop, searchqa; default "
               "alfworld)\n"
               "  --data PATH         benchmark data (file or directory); default: embedded "
               "generator\n"
               "  --split train|test  task split (default train)\n"
               "  --task N            task id (default 0); expert/bench use N, N+1, ...\n"
               "  --seed N            task seed (default 0)\n"
               "  --max-steps N       episode step limit (default: the benchmark's)\n"
               "  --episodes N        episodes for expert (default 1) and bench (default: until "
               "--seconds)\n"
               "  --seconds S         bench duration (default 2)\n"
               "  --receptacles N --distractors N --task-types MASK   generator knobs\n"
               "  --no-admissible     expert: leave admissible lists out of the JSONL\n"
               "  --expert planner|search  alfworld's expert (env.expert; default planner)\n"
               "play --policy PATH: a trained policy plays (a run folder, a checkpoint, or a\n"
               "  Hugging Face model directory); environment from the run's config.yaml\n"
               "  --config FILE       the configuration PATH was trained with (default: the\n"
               "                      config.yaml of its run folder)\n"
               "  --sample SEED       sample actions (default: greedy)\n"
               "  --top N             alternatives shown per decision of a scorer (default 3)\n"
               "  --diagnose          per episode: which candidates would have won at each\n"
               "                      step, where the gold answer was, the expert, a verdict\n"
               "                      (won, selection, search, extraction, retrieval)\n"
               "  section.key=value   configuration overrides (e.g. env.max_steps=30)\n");
}

static int s_num(const char *opt, const char *v, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v ? v : "", &end, 0);
    if (!v || !*v || *end || errno) {
        fprintf(stderr, "prover-env: %s needs a number, got '%s'\n", opt, v ? v : "");
        return -1;
    }
    *out = x;
    return 0;
}

/* The configuration key an environment option sets for play --policy, or NULL. */
static const char *s_env_key(const char *opt)
{
    static const char *const map[][2] = {
        {"--env", "env.name"},
        {"--data", "env.data_path"},
        {"--max-steps", "env.max_steps"},
        {"--receptacles", "env.gen_receptacles"},
        {"--distractors", "env.gen_distractors"},
        {"--task-types", "env.gen_task_types"},
        {"--expert", "env.expert"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(opt, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

/* Record an override: `kv` ("section.key=value") or key and value. */
static int s_set(s_opts_t *o, const char *kv, const char *key, const char *value)
{
    if (o->n_sets == S_MAX_SETS) {
        fprintf(stderr, "prover-env: more than %d overrides\n", S_MAX_SETS);
        return -1;
    }
    char *b = o->set_buf[o->n_sets];
    int n = kv ? snprintf(b, sizeof o->set_buf[0], "%s", kv)
               : snprintf(b, sizeof o->set_buf[0], "%s=%s", key, value);
    if (n < 0 || (size_t)n >= sizeof o->set_buf[0]) {
        fprintf(stderr, "prover-env: override too long: %s\n", kv ? kv : value);
        return -1;
    }
    o->sets[o->n_sets++] = b;
    return 0;
}

static int s_parse(int argc, char **argv, s_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->spec.name = "alfworld";
    o->seconds = 2.0;
    if (argc < 2)
        return -1;
    o->cmd = argv[1];
    int i = 2;
    if (strcmp(o->cmd, "replay") == 0) {
        if (argc < 3)
            return -1;
        o->file = argv[i++];
    }
    o->play.top = 3;
    for (; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t x = 0;
        if (strcmp(a, "--no-admissible") == 0) {
            o->no_admissible = true;
            continue;
        }
        if (strcmp(a, "--diagnose") == 0) {
            o->play.diagnose = true;
            o->play_only = true;
            continue;
        }
        if (a[0] != '-' && strchr(a, '=')) { /* section.key=value (play --policy) */
            if (s_set(o, a, NULL, NULL))
                return -1;
            o->play_only = true;
            continue;
        }
        if (v && s_env_key(a) && s_set(o, NULL, s_env_key(a), v))
            return -1;
        if (strcmp(a, "--env") == 0) {
            o->spec.name = v;
        } else if (strcmp(a, "--policy") == 0) {
            o->play.policy_path = v;
        } else if (strcmp(a, "--config") == 0) {
            o->play.config_path = v;
            o->play_only = true;
        } else if (strcmp(a, "--data") == 0) {
            o->spec.data_path = v;
        } else if (strcmp(a, "--expert") == 0) {
            if (!v || (strcmp(v, "planner") && strcmp(v, "search"))) {
                fprintf(stderr, "prover-env: --expert is planner or search\n");
                return -1;
            }
            o->spec.expert =
                strcmp(v, "search") == 0 ? PV_ENV_EXPERT_SEARCH : PV_ENV_EXPERT_PLANNER;
        } else if (strcmp(a, "--split") == 0) {
            if (!v || (strcmp(v, "train") && strcmp(v, "test"))) {
                fprintf(stderr, "prover-env: --split is train or test\n");
                return -1;
            }
            o->task.split = strcmp(v, "test") == 0 ? PV_SPLIT_TEST : PV_SPLIT_TRAIN;
        } else if (strcmp(a, "--seconds") == 0) {
            o->seconds = v ? atof(v) : 0;
            if (o->seconds <= 0) {
                fprintf(stderr, "prover-env: --seconds needs a positive number\n");
                return -1;
            }
        } else {
            if (s_num(a, v, &x))
                return -1;
            if (strcmp(a, "--task") == 0)
                o->task.task_id = x;
            else if (strcmp(a, "--seed") == 0) {
                o->task.seed = x;
                o->play.seed_given = true;
            } else if (strcmp(a, "--max-steps") == 0)
                o->spec.max_steps = (uint32_t)x;
            else if (strcmp(a, "--episodes") == 0)
                o->episodes = x;
            else if (strcmp(a, "--receptacles") == 0)
                o->spec.gen_receptacles = (uint32_t)x;
            else if (strcmp(a, "--distractors") == 0)
                o->spec.gen_distractors = (uint32_t)x;
            else if (strcmp(a, "--task-types") == 0)
                o->spec.gen_task_types = (uint32_t)x;
            else if (strcmp(a, "--sample") == 0) {
                o->play.sample = true;
                o->play.sample_seed = x;
                o->play_only = true;
            } else if (strcmp(a, "--top") == 0) {
                o->play.top = x > 64 ? 64 : (unsigned)x;
                o->play_only = true;
            } else {
                fprintf(stderr, "prover-env: unknown option '%s'\n", a);
                return -1;
            }
        }
        if (!v) {
            fprintf(stderr, "prover-env: %s needs a value\n", a);
            return -1;
        }
        i++;
    }
    return 0;
}

static int s_fail(const char *what, pv_err_t rc, const pv_errmsg_t *em)
{
    fprintf(stderr, "prover-env: %s: %s%s%s\n", what, pv_strerror(rc),
            em && em->text[0] ? ": " : "", em ? em->text : "");
    return 1;
}

/* ---------------------------------------------------------------- play / replay */

/* A line that is only digits (and blanks around them): its value in *k. */
static bool s_number(const char *line, unsigned long *k)
{
    while (*line == ' ' || *line == '\t')
        line++;
    if (*line < '0' || *line > '9')
        return false;
    char *end;
    errno = 0;
    *k = strtoul(line, &end, 10);
    while (*end == ' ' || *end == '\t')
        end++;
    return *end == '\0' && errno == 0;
}

static int s_play(pv_env_t *env, const s_opts_t *o, uint32_t max_steps, FILE *in, bool interactive)
{
    pv_step_result_t r;
    pv_err_t rc = pv_env_reset(env, &o->task, &r);
    if (rc != PV_OK)
        return s_fail("reset", rc, NULL);
    printf("%s\n", r.obs);
    if (interactive)
        printf("\n(type a command or its number; quit ends the game)\n");
    char line[4096];
    bool list = true;
    uint32_t steps = 0;
    while (!r.done) {
        const char *const *adm = NULL;
        size_t n = 0;
        if (interactive) {
            if (pv_env_admissible(env, &adm, &n) != PV_OK)
                n = 0;
            if (list && n) {
                printf("\nAdmissible commands:\n");
                for (size_t i = 0; i < n; i++)
                    printf("  %2zu. %s\n", i + 1, adm[i]);
            }
            list = true;
            if (max_steps)
                printf("[step %u/%u] > ", steps + 1, max_steps);
            else
                printf("[step %u] > ", steps + 1);
            fflush(stdout);
        }
        if (!fgets(line, sizeof line, in)) {
            if (interactive)
                printf("\n");
            break;
        }
        line[strcspn(line, "\r\n")] = 0;
        if (!interactive && (line[0] == 0 || line[0] == '#'))
            continue;
        if (interactive) {
            if (strcmp(line, "quit") == 0 || strcmp(line, "exit") == 0 || strcmp(line, "q") == 0) {
                printf("Quit after %u step%s.\n", steps, steps == 1 ? "" : "s");
                return 0;
            }
            if (line[0] == 0) {
                list = false;
                continue;
            }
        }
        const char *action = line;
        unsigned long k;
        if (interactive && s_number(line, &k)) {
            if (k < 1 || k > n) {
                if (n)
                    printf("No command %s: choose 1-%zu, type a command, or quit.\n", line, n);
                else
                    printf("No numbered commands here: type a command, or quit.\n");
                list = false;
                continue;
            }
            action = adm[k - 1];
            printf("%s\n", action);
        }
        if ((rc = pv_env_step(env, action, &r)) != PV_OK)
            return s_fail("step", rc, NULL);
        steps++;
        if (interactive)
            printf("%s\n", r.obs);
        else
            printf("\n> %s\n%s\n", action, r.obs);
    }
    if (r.done)
        printf("\n%s (reward %g after %u steps)\n", r.won ? "You won!" : "Episode over.",
               (double)r.reward, r.n_steps);
    return 0;
}

/* ---------------------------------------------------------------- expert */

static json_t *s_strings(const char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static int s_expert(pv_env_t *env, const pv_env_model_t *model, const s_opts_t *o)
{
    uint64_t n = o->episodes ? o->episodes : 1;
    for (uint64_t ep = 0; ep < n; ep++) {
        pv_task_t t = o->task;
        t.task_id += ep;
        pv_step_result_t r;
        pv_err_t rc = pv_env_reset(env, &t, &r);
        if (rc != PV_OK)
            return s_fail("reset", rc, NULL);
        json_t *steps = json_array();
        json_t *rec = json_pack("{s:s, s:s, s:I, s:I, s:s}", "env",
                                pv_env_kind_name(pv_env_model_kind(model)), "split",
                                t.split ? "test" : "train", "task_id", (json_int_t)t.task_id,
                                "seed", (json_int_t)t.seed, "task", pv_env_task_text(env));
        double total = 0;
        while (!r.done) {
            char action[1024];
            json_t *st = json_pack("{s:s}", "observation", r.obs);
            if (!o->no_admissible) {
                const char *const *adm;
                size_t k;
                if (pv_env_admissible(env, &adm, &k) == PV_OK)
                    json_object_set_new(st, "admissible", s_strings(adm, k));
            }
            if ((rc = pv_env_expert_action(env, action, sizeof action)) != PV_OK) {
                json_decref(st);
                fprintf(stderr, "prover-env: task %llu: no expert action (%s)\n",
                        (unsigned long long)t.task_id, pv_strerror(rc));
                break;
            }
            if ((rc = pv_env_step(env, action, &r)) != PV_OK) {
                json_decref(st);
                json_decref(steps);
                json_decref(rec);
                return s_fail("step", rc, NULL);
            }
            total += r.reward;
            json_object_set_new(st, "action", json_string(action));
            json_object_set_new(st, "reward", json_real(r.reward));
            json_object_set_new(st, "done", json_boolean(r.done));
            json_array_append_new(steps, st);
        }
        json_object_set_new(rec, "reward", json_real(total));
        json_object_set_new(rec, "won", json_boolean(r.won));
        json_object_set_new(rec, "n_steps", json_integer(r.n_steps));
        json_object_set_new(rec, "steps", steps);
        char *line = json_dumps(rec, JSON_COMPACT);
        if (line)
            printf("%s\n", line);
        free(line);
        json_decref(rec);
    }
    return 0;
}

/* ---------------------------------------------------------------- bench */

static int s_bench(pv_env_t *env, const pv_env_model_t *model, const s_opts_t *o)
{
    pv_rng_t rng;
    pv_rng_seed(&rng, o->task.seed, 7);
    pv_task_t t = o->task;
    pv_step_result_t r;
    uint64_t steps = 0, episodes = 0, wins = 0;
    double t_step = 0, t_reset = 0, start = pv_mono_s();
    size_t adm_total = 0;
    for (;;) {
        double a = pv_mono_s();
        pv_err_t rc = pv_env_reset(env, &t, &r);
        t_reset += pv_mono_s() - a;
        if (rc != PV_OK)
            return s_fail("reset", rc, NULL);
        a = pv_mono_s();
        while (!r.done) {
            const char *const *adm;
            size_t n;
            if ((rc = pv_env_admissible(env, &adm, &n)) != PV_OK || n == 0)
                return s_fail("admissible", rc ? rc : PV_ERR_STATE, NULL);
            adm_total += n;
            if ((rc = pv_env_step(env, adm[pv_rng_bounded(&rng, (uint32_t)n)], &r)) != PV_OK)
                return s_fail("step", rc, NULL);
            steps++;
        }
        t_step += pv_mono_s() - a;
        episodes++;
        wins += r.won;
        t.task_id++;
        if (t.task_id >= pv_env_model_n_tasks(model, t.split))
            t.task_id = 0;
        if (o->episodes ? episodes >= o->episodes : pv_mono_s() - start >= o->seconds)
            break;
    }
    /* save + restore of the last state, many times */
    size_t cap = pv_env_state_max(model), len = 0;
    uint8_t *buf = malloc(cap);
    pv_errmsg_t em;
    int reps = 20000;
    double a = pv_mono_s();
    for (int i = 0; i < reps && buf; i++) {
        pv_err_t rc = pv_env_save(env, buf, cap, &len);
        if (rc == PV_OK)
            rc = pv_env_load(env, buf, len, &em);
        if (rc != PV_OK) {
            free(buf);
            return s_fail("save/load", rc, &em);
        }
    }
    double t_sr = pv_mono_s() - a;
    free(buf);
    printf("env %s, %llu episodes, %llu steps (%llu won)\n",
           pv_env_kind_name(pv_env_model_kind(model)), (unsigned long long)episodes,
           (unsigned long long)steps, (unsigned long long)wins);
    printf("steps/s per core (admissible list every step): %.0f  (%.2f us/step, %.1f "
           "admissible commands on average)\n",
           steps / t_step, t_step / (double)steps * 1e6, (double)adm_total / (double)steps);
    printf("reset: %.1f us mean\n", t_reset / (double)episodes * 1e6);
    printf("steps/s per core including resets: %.0f\n", steps / (t_step + t_reset));
    printf("save+restore: %.3f us (state %zu bytes)\n", t_sr / reps * 1e6, len);
    return 0;
}

int main(int argc, char **argv)
{
    s_opts_t o;
    if (s_parse(argc, argv, &o) != 0) {
        s_usage(stderr);
        return 2;
    }
    if (strcmp(o.cmd, "play") && strcmp(o.cmd, "replay") && strcmp(o.cmd, "expert") &&
        strcmp(o.cmd, "bench")) {
        s_usage(stderr);
        return 2;
    }
    if (o.play.policy_path || o.play_only) {
        if (strcmp(o.cmd, "play") != 0 || !o.play.policy_path) {
            fprintf(stderr,
                    "prover-env: --config, --sample, --top, --diagnose and key=value go with "
                    "play --policy PATH\n");
            return 2;
        }
        o.play.task = o.task;
        o.play.episodes = o.episodes;
        o.play.sets = o.sets;
        o.play.n_sets = o.n_sets;
        return pv_play_policy(&o.play, stdout, stderr);
    }
    pv_errmsg_t em = {{0}};
    pv_env_model_t *model = NULL;
    pv_env_t *env = NULL;
    pv_err_t rc = pv_env_model_new(&o.spec, &model, &em);
    if (rc != PV_OK) {
        s_fail("model", rc, &em);
        return pv_exit_status(rc); /* bad --data files: 2 (docs/DEVELOPING.md) */
    }
    pv_env_info_t info; /* play and replay keep their transcripts clean */
    pv_env_model_info(model, &info);
    if (strcmp(o.cmd, "play") && strcmp(o.cmd, "replay"))
        fprintf(stderr, "prover-env: %s\n%s", info.summary, info.warnings);
    else if (*info.warnings)
        fprintf(stderr, "%s", info.warnings);
    int status = 1;
    if ((rc = pv_env_new(model, &env)) != PV_OK) {
        s_fail("instance", rc, NULL);
        goto out;
    }
    if (strcmp(o.cmd, "play") == 0) {
        status = s_play(env, &o, pv_env_model_max_steps(model), stdin, true);
    } else if (strcmp(o.cmd, "replay") == 0) {
        FILE *f = stdin;
        if (strcmp(o.file, "-") != 0 && pv_open_read(o.file, &f, &em) != PV_OK) {
            fprintf(stderr, "prover-env: %s\n", em.text);
            status = 2; /* bad input (docs/DEVELOPING.md) */
            goto out;
        }
        status = s_play(env, &o, pv_env_model_max_steps(model), f, false);
        if (f != stdin)
            fclose(f);
    } else if (strcmp(o.cmd, "expert") == 0) {
        status = s_expert(env, model, &o);
    } else {
        status = s_bench(env, model, &o);
    }
out:
    pv_env_destroy(&env);
    pv_env_model_destroy(&model);
    return status;
}
