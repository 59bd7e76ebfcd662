/* bench_env.c - throughput of the webshop and searchqa families (not a test; timing never
 * decides pass/fail). Usage: bench_env [shared_dir]   (default ../shared)
 * Prints, per family and data set: FTS build time, steps/s and searches/s on one core,
 * save+load time, and the expert over every task of both splits. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/env/env.h"
#include "common/env/fts.h"
#include "common/env/text_util.h"
#include "common/rng.h"

static double s_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Build an FTS index from the "contents" of a jsonl file, the same text the models index;
 * only the index build is timed (the texts are parsed first). */
static void s_fts_build(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char *line = NULL, **texts = NULL;
    size_t cap = 0, n = 0, bytes = 0;
    while (getline(&line, &cap, f) > 0) {
        json_t *o = json_loads(line, 0, NULL);
        json_t *c = json_object_get(o, "contents");
        if (json_is_string(c)) {
            texts = realloc(texts, (n + 1) * sizeof *texts);
            texts[n++] = strdup(json_string_value(c));
            bytes += strlen(texts[n - 1]);
        }
        json_decref(o);
    }
    free(line);
    fclose(f);
    pv_fts_t *fts = NULL;
    pv_errmsg_t em;
    double t0 = s_now();
    pv_fts_new("bench", &fts, &em);
    pv_fts_begin(fts, &em);
    for (size_t i = 0; i < n; i++)
        pv_fts_add(fts, (int64_t)i + 1, texts[i], &em);
    pv_fts_finish(fts, &em);
    printf("  FTS5 index build: %zu documents, %.1f MB of text, %.1f ms\n", n, bytes / 1e6,
           1e3 * (s_now() - t0));
    pv_fts_destroy(&fts);
    for (size_t i = 0; i < n; i++)
        free(texts[i]);
    free(texts);
}

/* Random admissible play: steps/s overall, and search steps timed separately. */
static void s_throughput(pv_env_model_t *m, double seconds)
{
    pv_env_t *e = NULL;
    pv_env_new(m, &e);
    pv_rng_t rng;
    pv_rng_seed(&rng, 1, 2);
    uint64_t steps = 0, searches = 0, episodes = 0;
    double t_search = 0, t0 = s_now(), t_other = 0;
    uint64_t n_tasks = pv_env_model_n_tasks(m, PV_SPLIT_TRAIN);
    while (s_now() - t0 < seconds) {
        pv_task_t task = {.split = 0, .task_id = pv_rng_u64(&rng) % n_tasks};
        pv_step_result_t r;
        pv_env_reset(e, &task, &r);
        episodes++;
        while (!r.done) {
            const char *const *acts;
            size_t na;
            char act[4096];
            pv_env_admissible(e, &acts, &na);
            snprintf(act, sizeof act, "%s", acts[pv_rng_bounded(&rng, (uint32_t)na)]);
            bool search = strncmp(act, "search[", 7) == 0;
            double a = s_now();
            pv_env_step(e, act, &r);
            double dt = s_now() - a;
            if (search) {
                t_search += dt;
                searches++;
            } else {
                t_other += dt;
            }
            steps++;
        }
    }
    double total = s_now() - t0;
    printf("  random admissible play: %llu episodes, %llu steps in %.2f s = %.0f steps/s "
           "(incl. reset and admissible lists)\n",
           (unsigned long long)episodes, (unsigned long long)steps, total, steps / total);
    printf("  search steps: %.0f searches/s (%.1f us each); other steps: %.0f steps/s (%.2f us "
           "each)\n",
           searches / t_search, 1e6 * t_search / (double)searches,
           (double)(steps - searches) / t_other, 1e6 * t_other / (double)(steps - searches));
    /* save + load */
    size_t cap = pv_env_state_max(m), len;
    uint8_t *buf = malloc(cap);
    pv_errmsg_t em;
    int n = 20000;
    double a = s_now();
    for (int i = 0; i < n; i++) {
        pv_env_save(e, buf, cap, &len);
        pv_env_load(e, buf, len, &em);
    }
    printf("  save + load: %.2f us (%zu bytes, bound %zu)\n", 1e6 * (s_now() - a) / n, len, cap);
    free(buf);
    pv_env_destroy(&e);
}

static void s_expert(pv_env_model_t *m, bool webshop)
{
    pv_env_t *e = NULL;
    pv_env_new(m, &e);
    uint64_t n = 0, won = 0, fail = 0, steps = 0, fallback = 0, cand = 0;
    double reward = 0, t0 = s_now();
    for (uint32_t split = 0; split < 2; split++)
        for (uint64_t t = 0; t < pv_env_model_n_tasks(m, split); t++, n++) {
            pv_task_t task = {.split = split, .task_id = t};
            pv_step_result_t r;
            pv_env_reset(e, &task, &r);
            char goal_words[4096];
            snprintf(goal_words, sizeof goal_words, "%s", pv_env_task_text(e));
            bool in_cands = false;
            while (!r.done) {
                char act[4096];
                if (pv_env_expert_action(e, act, sizeof act) != PV_OK) {
                    fail++;
                    break;
                }
                const char *const *acts;
                size_t na;
                pv_env_admissible(e, &acts, &na);
                for (size_t i = 0; i < na && strncmp(act, "answer[", 7) == 0; i++) {
                    char x[4096], y[4096]; /* the same answer after Search-R1's normalisation */
                    snprintf(x, sizeof x, "%.*s", (int)strlen(act) - 8, act + 7);
                    snprintf(y, sizeof y, "%.*s", (int)strlen(acts[i]) - 8, acts[i] + 7);
                    in_cands |= strncmp(acts[i], "answer[", 7) == 0 && pv_text_em(x, y);
                }
                if (webshop && strncmp(act, "search[", 7) == 0 &&
                    strncasecmp(act + 7, goal_words, 8) != 0)
                    fallback++;
                pv_env_step(e, act, &r);
                steps++;
            }
            won += r.won;
            reward += r.reward;
            cand += in_cands;
        }
    printf("  expert: %llu/%llu won, mean reward %.4f, %llu stuck, %.2f steps/episode, %.1f "
           "episodes/s\n",
           (unsigned long long)won, (unsigned long long)n, reward / (double)n,
           (unsigned long long)fail, (double)steps / (double)n, (double)n / (s_now() - t0));
    if (webshop)
        printf("  expert searches that fell back to the product title: %llu\n",
               (unsigned long long)fallback);
    else
        printf("  gold answer among the answer candidates when the expert answers: %llu/%llu\n",
               (unsigned long long)cand, (unsigned long long)n);
    pv_env_destroy(&e);
}

static void s_run(const char *name, const char *data, const char *fts_file, double seconds)
{
    printf("%s %s\n", name, data && *data ? data : "(generated)");
    if (fts_file)
        s_fts_build(fts_file);
    pv_env_spec_t spec = {.name = name, .data_path = data};
    pv_env_model_t *m = NULL;
    pv_errmsg_t em = {{0}};
    double t0 = s_now();
    if (pv_env_model_new(&spec, &m, &em) != PV_OK) {
        printf("  cannot load: %s\n", em.text);
        return;
    }
    printf("  model build (parse + goals + FTS): %.1f ms; tasks train %llu, test %llu\n",
           1e3 * (s_now() - t0), (unsigned long long)pv_env_model_n_tasks(m, 0),
           (unsigned long long)pv_env_model_n_tasks(m, 1));
    s_throughput(m, seconds);
    s_expert(m, strcmp(name, "webshop") == 0);
    pv_env_model_destroy(&m);
}

int main(int argc, char **argv)
{
    const char *shared = argc > 1 ? argv[1] : "../shared";
    char ws[1024], wsp[1200], sq[1024], sqc[1200];
    snprintf(ws, sizeof ws, "%s/data/webshop", shared);
    snprintf(wsp, sizeof wsp, "%s/products_1000_from_webshop_minimal_lucene.jsonl", ws);
    snprintf(sq, sizeof sq, "%s/data/searchqa", shared);
    snprintf(sqc, sizeof sqc, "%s/hotpot100_corpus_searchr1_format.jsonl", sq);
    s_run("webshop", NULL, NULL, 1.5);
    s_run("webshop", ws, wsp, 2.0);
    s_run("searchqa", NULL, NULL, 1.5);
    s_run("searchqa", sq, sqc, 2.0);
    return 0;
}
