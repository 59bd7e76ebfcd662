/* alfworld_load.c - ALFWorld game files (*.tw-pddl) and data directories.
 *
 * A game file is the JSON object ALFWorld writes next to each trajectory
 * (alfworld/agents/environment/alfred_tw_env.py, scripts/alfworld-play-tw):
 *     {"pddl_domain": "...", "grammar": "...", "pddl_problem": "...", "solvable": true}
 * Games marked "solvable": false are skipped, as AlfredTWEnv skips them.
 *
 * Splits of a data directory: files under a directory named "train" are training tasks; under
 * "valid_seen", "valid_unseen", "valid_train" or a name starting with "test" they are test
 * tasks (ALFWorld's json_2.1.1 layout). When no file path has such a directory, a file is a test
 * task when FNV-1a of its path relative to the data directory is 0 mod 10. A data_path naming
 * one file is task 0 of both splits. Tasks of a split are in sorted path order.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/env/alfworld_load.h"

pv_err_t pv_alf_read_game(pv_alf_gws_t *ws, pv_arena_t *arena, const char *path,
                          pv_alf_game_t **out, int *solvable, pv_errmsg_t *em)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root) {
        struct stat st;
        if (stat(path, &st) != 0)
            return pv_errf(em, PV_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        return pv_errf(em, PV_ERR_DATA, "%s:%d:%d: not a JSON game file: %s", path, jerr.line,
                       jerr.column, jerr.text);
    }
    pv_err_t rc = PV_OK;
    const char *keys[3] = {"pddl_domain", "grammar", "pddl_problem"};
    const char *text[3];
    if (!json_is_object(root)) {
        rc = pv_errf(em, PV_ERR_DATA, "%s: a game file must be a JSON object", path);
        goto out;
    }
    for (int i = 0; i < 3; i++) {
        json_t *v = json_object_get(root, keys[i]);
        if (!json_is_string(v)) {
            rc = pv_errf(em, PV_ERR_DATA, "%s: missing string field \"%s\"", path, keys[i]);
            goto out;
        }
        text[i] = json_string_value(v);
    }
    json_t *sv = json_object_get(root, "solvable");
    *solvable = json_is_boolean(sv) ? json_is_true(sv) : -1;
    char what[3][1100];
    for (int i = 0; i < 3; i++)
        snprintf(what[i], sizeof what[i], "%s: %s", path, keys[i]);
    pv_alf_domain_t *dom = NULL;
    pv_alf_grammar_t *gram = NULL;
    pv_alf_problem_t *prob = NULL;
    if ((rc = pv_alf_domain_parse(arena, text[0], what[0], &dom, em)) != PV_OK ||
        (rc = pv_alf_grammar_parse(arena, dom, text[1], what[1], &gram, em)) != PV_OK ||
        (rc = pv_alf_problem_parse(arena, dom, text[2], what[2], &prob, em)) != PV_OK ||
        (rc = pv_alf_ground(ws, arena, dom, gram, prob, NULL, path, out, em)) != PV_OK)
        goto out;
out:
    json_decref(root);
    return rc;
}

/* ---------------------------------------------------------------- scanning */

static bool s_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static pv_err_t s_add(pv_alf_files_t *f, const char *path)
{
    if (f->n == f->cap) {
        uint32_t cap = f->cap ? 2 * f->cap : 64;
        char **p = realloc(f->path, cap * sizeof *p);
        if (!p)
            return PV_ERR_NOMEM;
        f->path = p;
        f->cap = cap;
    }
    f->path[f->n] = strdup(path);
    if (!f->path[f->n])
        return PV_ERR_NOMEM;
    f->n++;
    return PV_OK;
}

static pv_err_t s_walk(pv_alf_files_t *f, const char *dir, int depth, pv_errmsg_t *em)
{
    if (depth > 32)
        return pv_errf(em, PV_ERR_LIMIT, "%s: directories nested deeper than 32", dir);
    DIR *d = opendir(dir);
    if (!d)
        return pv_errf(em, PV_ERR_IO, "%s: cannot open directory: %s", dir, strerror(errno));
    pv_err_t rc = PV_OK;
    struct dirent *e;
    while (rc == PV_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(n);
        if (!p) {
            rc = PV_ERR_NOMEM;
            break;
        }
        snprintf(p, n, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(p, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                rc = s_walk(f, p, depth + 1, em);
            else if (S_ISREG(st.st_mode) && s_ends_with(e->d_name, ".tw-pddl"))
                rc = s_add(f, p);
        }
        free(p);
    }
    closedir(d);
    return rc;
}

static int s_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 0 train, 1 test, -1 no split directory in the path */
static int s_split_of(const char *rel)
{
    int split = -1;
    const char *p = rel;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (!e)
            break; /* the file name itself does not count */
        if (n == 5 && strncmp(p, "train", 5) == 0)
            split = 0;
        else if ((n == 10 && strncmp(p, "valid_seen", 10) == 0) ||
                 (n == 12 && strncmp(p, "valid_unseen", 12) == 0) ||
                 (n == 11 && strncmp(p, "valid_train", 11) == 0) ||
                 (n >= 4 && strncmp(p, "test", 4) == 0))
            split = 1;
        p = e + 1;
    }
    return split;
}

pv_err_t pv_alf_scan(const char *data_path, pv_alf_files_t *f, pv_errmsg_t *em)
{
    memset(f, 0, sizeof *f);
    struct stat st;
    if (stat(data_path, &st) != 0)
        return pv_errf(em, PV_ERR_IO, "%s: %s", data_path, strerror(errno));
    pv_err_t rc;
    if (!S_ISDIR(st.st_mode)) {
        if ((rc = s_add(f, data_path)) != PV_OK)
            return rc;
        f->split = calloc(1, 1);
        if (!f->split)
            return PV_ERR_NOMEM;
        f->split[0] = 3;
        return PV_OK;
    }
    if ((rc = s_walk(f, data_path, 0, em)) != PV_OK)
        return rc;
    if (f->n == 0)
        return pv_errf(em, PV_ERR_DATA, "%s: no *.tw-pddl game files found", data_path);
    qsort(f->path, f->n, sizeof *f->path, s_cmp_str);
    f->split = calloc(f->n, 1);
    if (!f->split)
        return PV_ERR_NOMEM;
    size_t base = strlen(data_path);
    bool any_dir = false;
    for (uint32_t i = 0; i < f->n; i++)
        any_dir |= s_split_of(f->path[i] + base + 1) >= 0;
    for (uint32_t i = 0; i < f->n; i++) {
        const char *rel = f->path[i] + base + 1;
        int s = s_split_of(rel);
        if (!any_dir)
            s = pv_alf_hash(rel, strlen(rel), PV_ALF_HASH_SEED) % 10 == 0;
        f->split[i] = s < 0 ? 1 : (uint8_t)(1u << s); /* files outside split dirs: train */
    }
    return PV_OK;
}

void pv_alf_files_free(pv_alf_files_t *f)
{
    for (uint32_t i = 0; i < f->n; i++)
        free(f->path[i]);
    free(f->path);
    free(f->split);
    memset(f, 0, sizeof *f);
}
