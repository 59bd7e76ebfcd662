/* alf_test.h - helpers shared by the alfworld tests (header-only): paths of the real data,
 * reading ALFWorld's README transcript, list-order-insensitive comparison of observations,
 * and temporary game files. */
#ifndef PV_ALF_TEST_H
#define PV_ALF_TEST_H

#include <ctype.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/env/env.h"
#include "common/rng.h"
#include "tests/support/pv_test.h"

#define ALF_DIR      "data/alfworld/"
#define ALF_GAME_DIR ALF_DIR "real_game_potato_sinkbasin/"
#define ALF_GAME_OLD ALF_GAME_DIR "derived_single_agent/game_json_2.1.1_style.tw-pddl"
#define ALF_GAME_NEW ALF_GAME_DIR "derived_single_agent/game_current_0.5.0_style.tw-pddl"
#define ALF_README   ALF_GAME_DIR "alfworld_scripts_README_transcript.md"
#define ALF_TW_GAME  ALF_DIR "textworld_pddl_test_game/"

/* Whole file into a malloc'd string (NULL when unreadable). */
static inline char *alf_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = 0;
    fclose(f);
    return s;
}

/* Collapse runs of white space into one space and trim (the transcript is line-wrapped). */
static inline void alf_squash(const char *in, char *out, size_t cap)
{
    size_t k = 0;
    bool sp = false;
    for (const char *p = in; *p && k + 1 < cap; p++) {
        if (isspace((unsigned char)*p)) {
            sp = k > 0;
            continue;
        }
        if (sp && k + 1 < cap)
            out[k++] = ' ';
        sp = false;
        out[k++] = *p;
    }
    out[k] = 0;
}

static inline int alf_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Canonical form of an observation: white space squashed, and the items of every list after
 * "you see " ("a x, a y, and a z" up to the next '.') sorted. ALFWorld's own list order is
 * Python set order (it changes with the interpreter's hash seed); everything else stays word
 * for word. */
static inline void alf_canon(const char *in, char *out, size_t cap)
{
    char *sq = malloc(cap);
    alf_squash(in, sq, cap);
    size_t k = 0;
    const char *p = sq;
    out[0] = 0;
    while (*p && k + 1 < cap) {
        const char *m = strstr(p, "you see ");
        if (!m) {
            k += (size_t)snprintf(out + k, cap - k, "%s", p);
            break;
        }
        m += 8;
        k += (size_t)snprintf(out + k, cap - k, "%.*s", (int)(m - p), p);
        const char *end = strchr(m, '.');
        if (!end)
            end = m + strlen(m);
        char *list = strndup(m, (size_t)(end - m));
        char *items[512];
        int n = 0;
        for (char *tok = strtok(list, ","); tok && n < 512; tok = strtok(NULL, ",")) {
            while (*tok == ' ')
                tok++;
            if (strncmp(tok, "and ", 4) == 0)
                tok += 4;
            items[n++] = tok;
        }
        qsort(items, (size_t)n, sizeof *items, alf_cmp_str);
        for (int i = 0; i < n && k + 1 < cap; i++)
            k += (size_t)snprintf(out + k, cap - k, "%s%s", i ? "|" : "", items[i]);
        free(list);
        p = end;
    }
    free(sq);
}

/* The README transcript: the opening observation and each "> command" with its text. */
typedef struct alf_transcript {
    int n; /* commands */
    char *intro;
    char *cmd[32];
    char *obs[32];
} alf_transcript_t;

static inline bool alf_read_transcript(const char *path, alf_transcript_t *t)
{
    memset(t, 0, sizeof *t);
    char *s = alf_slurp(path);
    if (!s)
        return false;
    char *p = strstr(s, "-= Welcome");
    char *end = p ? strstr(p, "```") : NULL;
    if (!p || !end) {
        free(s);
        return false;
    }
    *end = 0;
    char *cur = NULL; /* text being collected */
    size_t cap = 8192;
    t->intro = calloc(1, cap);
    cur = t->intro;
    for (char *line = strtok(p, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "> ", 2) == 0 && t->n < 32) {
            t->cmd[t->n] = strdup(line + 2);
            t->obs[t->n] = calloc(1, cap);
            cur = t->obs[t->n++];
            continue;
        }
        strncat(cur, line, cap - strlen(cur) - 2);
        strcat(cur, "\n");
    }
    free(s);
    return t->n > 0;
}

static inline void alf_free_transcript(alf_transcript_t *t)
{
    free(t->intro);
    for (int i = 0; i < t->n; i++) {
        free(t->cmd[i]);
        free(t->obs[i]);
    }
}

/* A temporary file name, filled in by alf_write_game(). */
typedef struct alf_path {
    char s[64];
} alf_path_t;

/* Write a .tw-pddl JSON game from its three texts (NULL leaves a field out) into a new
 * temporary file; returns its path (in *out) or NULL. */
static inline const char *alf_write_game(const char *domain, const char *grammar,
                                         const char *problem, alf_path_t *out)
{
    snprintf(out->s, sizeof out->s, "/tmp/pv_alf_test_XXXXXX");
    int fd = mkstemp(out->s);
    if (fd < 0)
        return NULL;
    close(fd);
    json_t *o = json_object();
    if (domain)
        json_object_set_new(o, "pddl_domain", json_string(domain));
    if (grammar)
        json_object_set_new(o, "grammar", json_string(grammar));
    if (problem)
        json_object_set_new(o, "pddl_problem", json_string(problem));
    int rc = json_dump_file(o, out->s, 0);
    json_decref(o);
    return rc == 0 ? out->s : NULL;
}

/* The TextWorld test game (three files) written as a .tw-pddl, as TextWorld's test does. */
static inline const char *alf_tw_game(alf_path_t *out)
{
    char d[1024], g[1024], p[1024];
    if (!pv_test_shared(ALF_TW_GAME "domain.pddl", d, sizeof d) ||
        !pv_test_shared(ALF_TW_GAME "grammar.twl2", g, sizeof g) ||
        !pv_test_shared(ALF_TW_GAME "problem.pddl", p, sizeof p))
        return NULL;
    char *ds = alf_slurp(d), *gs = alf_slurp(g), *ps = alf_slurp(p);
    const char *path = ds && gs && ps ? alf_write_game(ds, gs, ps, out) : NULL;
    free(ds);
    free(gs);
    free(ps);
    return path;
}

/* The three texts of a real game file below ../shared (false when absent): parts[0] domain,
 * parts[1] grammar, parts[2] problem, borrowed from *root (json_decref it). */
static inline bool alf_game_parts(const char *rel, json_t **root, const char *parts[3])
{
    char gp[1024];
    json_error_t je;
    if (!pv_test_shared(rel, gp, sizeof gp) || !(*root = json_load_file(gp, 0, &je)))
        return false;
    const char *keys[3] = {"pddl_domain", "grammar", "pddl_problem"};
    for (int k = 0; k < 3; k++)
        parts[k] = json_string_value(json_object_get(*root, keys[k]));
    return parts[0] && parts[1] && parts[2];
}

/* Model over `data` (NULL: generator) with default knobs. */
static inline pv_env_model_t *alf_model(const char *data, uint32_t max_steps)
{
    pv_env_spec_t spec = {.name = "alfworld", .data_path = data, .max_steps = max_steps};
    pv_env_model_t *m = NULL;
    pv_errmsg_t em = {{0}};
    if (pv_env_model_new(&spec, &m, &em) != PV_OK) {
        fprintf(stderr, "model: %s\n", em.text);
        return NULL;
    }
    return m;
}

/* Does the admissible list of `e` contain `cmd`? */
static inline bool alf_admissible_has(pv_env_t *e, const char *cmd)
{
    const char *const *a;
    size_t n;
    if (pv_env_admissible(e, &a, &n) != PV_OK)
        return false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(a[i], cmd) == 0)
            return true;
    return false;
}

/* Play the expert's actions from the current state to the end of the episode, checking each
 * is admissible; returns the number of steps. */
static inline int alf_follow_expert(pv_env_t *e, pv_step_result_t *r)
{
    int steps = 0;
    while (!r->done) {
        char a[256];
        if (pv_env_expert_action(e, a, sizeof a) != PV_OK || !alf_admissible_has(e, a) ||
            pv_env_step(e, a, r) != PV_OK)
            return -1;
        steps++;
    }
    return steps;
}

#endif
