/* webshop_trace_util.h - helpers of the webshop tests (test_webshop.c, test_webshop_trace.c):
 * the model, and replaying the atom traces as VICT reads them (env.h, webshop.h "Atom
 * traces"). Include after cmocka.h. */
#ifndef PV_TEST_WEBSHOP_TRACE_UTIL_H
#define PV_TEST_WEBSHOP_TRACE_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/env/env.h"
#include "env_test_util.h"

/* The webshop model of `data` (NULL: the generated catalogue) and seed; fails the test
 * otherwise. */
static inline pv_env_model_t *wt_model(const char *data, uint64_t seed)
{
    pv_env_spec_t spec = {.name = "webshop", .data_path = data, .seed = seed};
    return et_model_ok(&spec);
}

#define WT_ATOMS 80 /* purchase, type, price, <= 64 attributes, <= 8 options */

/* The goal atoms of the current task: how many, and each one's kind from its name
 * ('P'urchase, 'T'ype, 'p'rice, 'A'ttribute, 'O'ption). */
static inline uint32_t wt_atom_kinds(pv_env_t *e, char *kind)
{
    uint32_t n = 0;
    char name[1024];
    while (n < WT_ATOMS && pv_env_atom_name(e, n, name, sizeof name) == PV_OK) {
        kind[n] = strncmp(name, "purchase(", 9) == 0     ? 'P'
                  : strncmp(name, "type(", 5) == 0       ? 'T'
                  : strncmp(name, "price(<= ", 9) == 0   ? 'p'
                  : strncmp(name, "attribute(", 10) == 0 ? 'A'
                  : strncmp(name, "option(", 7) == 0     ? 'O'
                                                         : '?';
        assert_true(kind[n] != '?');
        n++;
    }
    assert_int_equal(pv_env_atom_name(e, n, name, sizeof name), PV_ERR_RANGE);
    return n;
}

/* Replay records rec[0..n) as VICT does (learner/vict.h, step 2): maker[a] = the step of
 * atom a's last event when that event made it, -1 when the atom ends false or no step made
 * it. */
static inline void wt_makers(const pv_env_trace_t *rec, int n, uint32_t n_atoms, int *maker)
{
    for (uint32_t a = 0; a < n_atoms; a++)
        maker[a] = -1;
    for (int t = 0; t < n; t++) {
        for (uint8_t k = 0; k < rec[t].n_unmade; k++)
            maker[rec[t].unmade[k]] = -1;
        for (uint8_t k = 0; k < rec[t].n_made; k++) {
            assert_true(rec[t].made[k] < n_atoms);
            maker[rec[t].made[k]] = t;
        }
    }
}

static inline bool wt_made(const pv_env_trace_t *t, uint32_t atom)
{
    for (uint8_t k = 0; k < t->n_made; k++)
        if (t->made[k] == atom)
            return true;
    return false;
}

/* The expert's plan for `task`: search, (next >)*, the product (index *p), its options,
 * buy now; returns its length. */
static inline int wt_plan(pv_env_t *e, const pv_task_t *task, char (*plan)[512], int *p)
{
    pv_step_result_t r;
    assert_int_equal(pv_env_reset(e, task, &r), PV_OK);
    assert_null(r.trace); /* a reset is no step */
    int n = 0;
    while (!r.done && n < 16) {
        assert_int_equal(pv_env_expert_action(e, plan[n], 512), PV_OK);
        assert_int_equal(pv_env_step(e, plan[n++], &r), PV_OK);
    }
    assert_true(r.won);
    *p = 1;
    while (strcmp(plan[*p], "click[next >]") == 0)
        (*p)++;
    assert_int_equal(strncmp(plan[0], "search[", 7), 0);
    assert_string_equal(plan[n - 1], "click[buy now]");
    return n;
}

/* Play actions acts[0..n) from a reset, keeping each step's record in rec. */
static inline void wt_play(pv_env_t *e, const pv_task_t *task, const char *const *acts, int n,
                           pv_env_trace_t *rec, pv_step_result_t *r)
{
    assert_int_equal(pv_env_reset(e, task, r), PV_OK);
    for (int t = 0; t < n; t++) {
        assert_int_equal(pv_env_step(e, acts[t], r), PV_OK);
        assert_non_null(r->trace);
        assert_int_equal(r->trace->n_dropped, 0);
        rec[t] = *r->trace;
    }
}

#endif
