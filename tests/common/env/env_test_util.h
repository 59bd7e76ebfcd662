/* env_test_util.h - helpers shared by the environment tests (header-only): play an episode
 * with a mix of expert, random admissible and junk actions while saving the state before
 * every step, then check that loading each saved state into another instance reproduces the
 * rest of the episode exactly. */
#ifndef PV_ENV_TEST_UTIL_H
#define PV_ENV_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/pv_test.h"
#include "common/env/env.h"
#include "common/rng.h"

#define ET_MAX_STEPS 80

typedef struct et_traj {
    size_t n;
    char *action[ET_MAX_STEPS];
    char *obs[ET_MAX_STEPS];
    float reward[ET_MAX_STEPS];
    bool done[ET_MAX_STEPS], won[ET_MAX_STEPS], adm[ET_MAX_STEPS];
    uint8_t *state[ET_MAX_STEPS]; /* before action i */
    size_t state_len[ET_MAX_STEPS];
} et_traj_t;

static inline char *et_dup(const char *s)
{
    char *d = malloc(strlen(s) + 1);
    assert_non_null(d);
    strcpy(d, s);
    return d;
}

/* Play one episode of `task`: the expert's action with probability p_expert, a junk action
 * with probability 1/10, else a random admissible action. */
static inline void et_play(pv_env_t *e, const pv_env_model_t *m, const pv_task_t *task,
                           uint64_t seed, double p_expert, et_traj_t *t)
{
    memset(t, 0, sizeof *t);
    pv_rng_t rng;
    pv_rng_seed(&rng, seed, 7);
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, task, &r), PV_OK);
    size_t cap = pv_env_state_max(m);
    while (!r.done && t->n < ET_MAX_STEPS) {
        size_t i = t->n;
        t->state[i] = malloc(cap);
        assert_non_null(t->state[i]);
        assert_int_equal(pv_env_save(e, t->state[i], cap, &t->state_len[i]), PV_OK);
        char act[4096];
        double u = pv_rng_uniform(&rng);
        const char *const *acts;
        size_t na;
        assert_int_equal(pv_env_admissible(e, &acts, &na), PV_OK);
        if (u < p_expert && pv_env_expert_action(e, act, sizeof act) == PV_OK) {
        } else if (u < p_expert + 0.1 || na == 0) {
            snprintf(act, sizeof act, "click[no such button %u]", pv_rng_u32(&rng) % 100);
        } else {
            snprintf(act, sizeof act, "%s", acts[pv_rng_bounded(&rng, (uint32_t)na)]);
        }
        assert_int_equal(pv_env_step(e, act, &r), PV_OK);
        t->action[i] = et_dup(act);
        t->obs[i] = et_dup(r.obs);
        t->reward[i] = r.reward;
        t->done[i] = r.done;
        t->won[i] = r.won;
        t->adm[i] = r.admissible;
        t->n++;
    }
}

/* Load every saved state into `other` and replay: everything must repeat. */
static inline void et_check_replay(pv_env_t *other, const pv_env_model_t *m, const et_traj_t *t)
{
    size_t cap = pv_env_state_max(m);
    uint8_t *again = malloc(cap);
    assert_non_null(again);
    for (size_t i = 0; i < t->n; i++) {
        pv_errmsg_t em = {{0}};
        assert_int_equal(pv_env_load(other, t->state[i], t->state_len[i], &em), PV_OK);
        size_t len;
        assert_int_equal(pv_env_save(other, again, cap, &len), PV_OK);
        assert_int_equal(len, t->state_len[i]);
        assert_memory_equal(again, t->state[i], len);
        for (size_t j = i; j < t->n; j++) {
            pv_step_result_t r;
            assert_int_equal(pv_env_step(other, t->action[j], &r), PV_OK);
            assert_string_equal(r.obs, t->obs[j]);
            assert_true(r.reward == t->reward[j]);
            assert_int_equal(r.done, t->done[j]);
            assert_int_equal(r.won, t->won[j]);
            assert_int_equal(r.admissible, t->adm[j]);
        }
    }
    free(again);
}

static inline void et_free(et_traj_t *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->action[i]);
        free(t->obs[i]);
        free(t->state[i]);
    }
    memset(t, 0, sizeof *t);
}

/* Corrupt saved states: every truncation is refused, and the instance keeps its state. */
static inline void et_check_truncations(pv_env_t *e, const uint8_t *state, size_t len)
{
    const char *before = pv_env_task_text(e);
    char keep[1024];
    snprintf(keep, sizeof keep, "%s", before);
    for (size_t cut = 0; cut < len; cut++) {
        pv_errmsg_t em = {{0}};
        pv_err_t rc = pv_env_load(e, state, cut, &em);
        assert_true(rc == PV_ERR_TRUNCATED || rc == PV_ERR_DATA);
        assert_true(strlen(em.text) > 0);
        assert_string_equal(pv_env_task_text(e), keep);
    }
}

/* Random byte flips of a saved state: every load either succeeds (then a save gives the
 * same bytes back and a step works) or fails with a message; nothing crashes (run under
 * ASan/UBSan in the sanitizer build). */
static inline void et_check_mutations(pv_env_t *e, const pv_env_model_t *m, const uint8_t *state,
                                      size_t len, uint64_t seed, int rounds)
{
    pv_rng_t rng;
    pv_rng_seed(&rng, seed, 11);
    size_t cap = pv_env_state_max(m);
    uint8_t *copy = malloc(len), *again = malloc(cap);
    assert_non_null(copy);
    assert_non_null(again);
    for (int i = 0; i < rounds; i++) {
        memcpy(copy, state, len);
        int flips = 1 + (int)pv_rng_bounded(&rng, 3);
        for (int k = 0; k < flips; k++)
            copy[12 + pv_rng_bounded(&rng, (uint32_t)(len - 12))] ^=
                (uint8_t)(1u << pv_rng_bounded(&rng, 8));
        pv_errmsg_t em = {{0}};
        if (pv_env_load(e, copy, len, &em) == PV_OK) {
            size_t n;
            assert_int_equal(pv_env_save(e, again, cap, &n), PV_OK);
            assert_int_equal(n, len);
            assert_memory_equal(again, copy, n);
            const char *const *acts;
            size_t na;
            assert_int_equal(pv_env_admissible(e, &acts, &na), PV_OK);
            pv_step_result_t r;
            pv_err_t rc = pv_env_step(e, na ? acts[0] : "search[x]", &r);
            assert_true(rc == PV_OK || rc == PV_ERR_STATE);
        } else {
            assert_true(strlen(em.text) > 0);
        }
    }
    free(copy);
    free(again);
}

/* Let the expert finish the episode (every action admissible); returns its step count. */
static inline int et_expert_finish(pv_env_t *e, pv_step_result_t *r)
{
    int steps = 0;
    while (!r->done) {
        char act[4096];
        assert_int_equal(pv_env_expert_action(e, act, sizeof act), PV_OK);
        assert_int_equal(pv_env_step(e, act, r), PV_OK);
        assert_true(r->admissible);
        steps++;
    }
    return steps;
}

/* Allocation counter for the "steps allocate nothing" checks: the test executables are
 * linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (not in sanitizer builds, where
 * PV_COUNT_ALLOC is not defined and the check is skipped). Only calls from code linked
 * statically (ours) are counted. */
#ifdef PV_COUNT_ALLOC
static size_t et_allocs;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n)
{
    et_allocs++;
    return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t m)
{
    et_allocs++;
    return __real_calloc(n, m);
}
void *__wrap_realloc(void *p, size_t n)
{
    et_allocs++;
    return __real_realloc(p, n);
}
#endif

/* A fresh temporary directory into dir[0..cap) / remove it with its files (asserting). */
static inline void et_tmpdir(char *dir, size_t cap, const char *tag)
{
    assert_int_equal(pv_test_tmpdir(dir, cap, tag), 0);
}

static inline void et_rmdir(const char *dir)
{
    assert_int_equal(pv_test_rmdir(dir), 0);
}

/* Write `text` into dir/name (for malformed-file tests). */
static inline void et_write(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* head + `fill` repeated + tail, `total` bytes before the tail (malloc'd; free it). */
static inline char *et_padded(const char *head, char fill, size_t total, const char *tail)
{
    size_t h = strlen(head), t = strlen(tail);
    char *s = malloc(total + t + 1);
    assert_non_null(s);
    assert_true(h <= total);
    memcpy(s, head, h);
    memset(s + h, fill, total - h);
    memcpy(s + total, tail, t + 1);
    return s;
}

/* The model of spec, which must build: fails the test with the error otherwise. */
static inline pv_env_model_t *et_model_ok(const pv_env_spec_t *spec)
{
    pv_env_model_t *m = NULL;
    pv_errmsg_t em = {{0}};
    pv_err_t rc = pv_env_model_new(spec, &m, &em);
    if (rc != PV_OK)
        fail_msg("%s model from %s: %s: %s", spec->name,
                 spec->data_path ? spec->data_path : "(none)", pv_strerror(rc), em.text);
    return m;
}

/* Build family `name` from dir, which must load; its info into *info. */
static inline pv_env_model_t *et_load_ok(const char *name, const char *dir, pv_env_info_t *info)
{
    pv_env_spec_t spec = {.name = name, .data_path = dir};
    pv_env_model_t *m = et_model_ok(&spec);
    pv_env_model_info(m, info);
    return m;
}

#endif
