/* test_webshop_trace.c - the webshop family's atom traces (issue 17, VICT): which step makes
 * each goal atom (the purchase, the type match, the price bound, every goal attribute and
 * option) and what each step depends on, replayed as learner/vict.h reads them; re-selected
 * options, a return to search, the step limit, and after a load. The real catalogue's check
 * (the satisfied atoms reproduce every expert purchase's reward) is in test_webshop.c. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/env/env.h"
#include "webshop_trace_util.h"

/* The expert's episodes (generated catalogue), replayed with a detour after the product
 * (its description, then < prev back to it); every purchase wins, so every goal atom holds
 * at the end. The rules by hand: the product click makes the type, the price and every
 * attribute atom, and depends on the last results page shown; each option click makes the
 * goal options its value matches (the value is in the atom's name) and depends on the
 * product; a next page depends on the page before; the buy makes the purchase and depends on
 * the product; the search and the detour make nothing and depend on nothing. Replayed as
 * VICT does, every atom's maker is the step named. After a load nothing before it is an
 * edge, and the atoms the loaded state holds are not made again. */
static void test_atom_trace(void **state)
{
    (void)state;
    pv_env_model_t *m = wt_model(NULL, 11);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    int with_options = 0, with_attrs = 0;
    for (uint64_t id = 0; id < 20; id++) {
        pv_task_t task = {.task_id = id};
        char plan[16][512];
        int p, n = wt_plan(e, &task, plan, &p);
        const char *acts[18];
        int na = 0, at[16]; /* at[k]: the step of plan[k] in the replay */
        for (int k = 0; k < n; k++) {
            at[k] = na;
            acts[na++] = plan[k];
            if (k == p) {
                acts[na++] = "click[description]";
                acts[na++] = "click[< prev]";
            }
        }
        pv_env_trace_t rec[18];
        pv_step_result_t r;
        wt_play(e, &task, acts, na, rec, &r);
        assert_true(r.won);
        char kind[WT_ATOMS];
        uint32_t n_atoms = wt_atom_kinds(e, kind);
        int maker[WT_ATOMS];
        wt_makers(rec, na, n_atoms, maker);
        with_options += n - 2 > p;
        for (uint32_t a = 0; a < n_atoms; a++) {
            with_attrs += kind[a] == 'A';
            int want = kind[a] == 'P' ? at[n - 1] : kind[a] == 'O' ? -2 : at[p];
            if (want == -2) { /* an option: made by the click on its value */
                char name[1024];
                assert_int_equal(pv_env_atom_name(e, a, name, sizeof name), PV_OK);
                assert_true(maker[a] > at[p] && maker[a] < at[n - 1]);
                const char *v = acts[maker[a]] + 6; /* "click[" */
                size_t vl = strlen(v) - 1;
                bool found = false;
                for (const char *q = name; *q && !found; q++)
                    found = strncasecmp(q, v, vl) == 0;
                if (!found)
                    fail_msg("task %llu: option atom '%s' made by '%s'", (unsigned long long)id,
                             name, acts[maker[a]]);
            } else if (maker[a] != want) {
                fail_msg("task %llu: atom %u (%c) made at step %d, by hand %d",
                         (unsigned long long)id, a, kind[a], maker[a], want);
            }
        }
        for (int t = 0; t < na; t++) {
            uint32_t want[PV_ENV_TRACE_DEPS], nw = 0;
            if (t > 0 && t < p)
                want[nw++] = (uint32_t)t - 1; /* next >: the page before */
            else if (t == p)
                want[nw++] = (uint32_t)p - 1; /* the product: the last results page */
            else if (t > at[p] + 2)
                want[nw++] = (uint32_t)p; /* an option, the buy: the product */
            if (rec[t].n_deps != nw || memcmp(rec[t].deps, want, nw * sizeof *want) != 0)
                fail_msg("task %llu step %d '%s': %u edges, by hand %u", (unsigned long long)id, t,
                         acts[t], rec[t].n_deps, nw);
            if (t < at[p] || (t > at[p] && t <= at[p] + 2)) /* search, pages, the detour */
                assert_true(rec[t].n_made == 0 && rec[t].n_unmade == 0);
        }
        /* restored after the product: the next step's facts came before the load, and the
         * product's atoms, true in the loaded state, are not made again */
        wt_play(e, &task, acts, p + 1, rec, &r);
        uint8_t buf[4096];
        size_t len = 0;
        assert_int_equal(pv_env_save(e, buf, sizeof buf, &len), PV_OK);
        assert_int_equal(pv_env_load(e, buf, len, NULL), PV_OK);
        for (int k = p + 1; k < n; k++) {
            assert_int_equal(pv_env_step(e, plan[k], &r), PV_OK);
            assert_int_equal(r.trace->n_deps, 0);
            assert_int_equal(r.trace->n_unmade, 0);
            for (uint8_t j = 0; j < r.trace->n_made; j++)
                assert_true(kind[r.trace->made[j]] == (k == n - 1 ? 'P' : 'O'));
        }
        assert_true(r.won);
    }
    assert_true(with_options > 0 && with_attrs > 0);
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
}

/* An option selected, replaced by another value of the same option, then selected again
 * (twice): its atom is unmade by the replacement and traced to the last click; leaving the
 * product (back to search) unmakes every atom the product held and a second opening makes
 * them again; an episode that reaches the step limit without a purchase unmakes, in its last
 * step, every atom still true, so none is satisfied at the end. */
static void test_atom_trace_reselect(void **state)
{
    (void)state;
    pv_env_model_t *m = wt_model(NULL, 11);
    pv_env_t *e = NULL;
    assert_int_equal(pv_env_new(m, &e), PV_OK);
    int reselected = 0;
    for (uint64_t id = 0; id < 20; id++) {
        pv_task_t task = {.task_id = id};
        char plan[16][512];
        int p, n = wt_plan(e, &task, plan, &p);
        if (n - 2 == p)
            continue; /* no option to select */
        const char *opt = plan[p + 1];
        char kind[WT_ATOMS];
        uint32_t n_atoms = wt_atom_kinds(e, kind);
        /* another value of the same option: a click on the item page that unmakes the
         * atom the expert's first option click made */
        const char *const *cands;
        size_t n_cands;
        pv_env_trace_t rec[20];
        pv_step_result_t r;
        const char *acts[20];
        for (int k = 0; k <= p + 1; k++)
            acts[k] = plan[k];
        wt_play(e, &task, acts, p + 2, rec, &r);
        assert_true(rec[p + 1].n_made >= 1);
        uint32_t atom = rec[p + 1].made[0];
        assert_int_equal(kind[atom], 'O');
        assert_int_equal(pv_env_admissible(e, &cands, &n_cands), PV_OK);
        char other[512] = "";
        for (size_t c = 0; c < n_cands && !*other; c++) {
            if (strcmp(cands[c], opt) == 0 || strcmp(cands[c], "click[buy now]") == 0 ||
                strncmp(cands[c], "click[", 6) != 0)
                continue;
            char cand[512];
            snprintf(cand, sizeof cand, "%s", cands[c]);
            acts[p + 2] = cand;
            wt_play(e, &task, acts, p + 3, rec, &r);
            if (rec[p + 2].n_unmade == 1 && rec[p + 2].unmade[0] == atom)
                snprintf(other, sizeof other, "%s", cand);
        }
        if (!*other)
            continue; /* every other value matches the goal option too */
        /* ..., opt (p+1), other (p+2), opt (p+3), opt (p+4), the rest, buy */
        int na = 0;
        for (int k = 0; k <= p + 1; k++)
            acts[na++] = plan[k];
        acts[na++] = other;
        acts[na++] = opt;
        acts[na++] = opt;
        for (int k = p + 2; k < n; k++)
            acts[na++] = plan[k];
        wt_play(e, &task, acts, na, rec, &r);
        assert_true(r.won);
        assert_true(wt_made(&rec[p + 3], atom) && wt_made(&rec[p + 4], atom));
        assert_int_equal(rec[p + 4].n_deps, 1);
        assert_int_equal(rec[p + 4].deps[0], (uint32_t)p); /* the product */
        int maker[WT_ATOMS];
        wt_makers(rec, na, n_atoms, maker);
        assert_int_equal(maker[atom], p + 4);
        for (uint32_t a = 0; a < n_atoms; a++)
            if (kind[a] == 'T' || kind[a] == 'p' || kind[a] == 'A')
                assert_int_equal(maker[a], p);
        reselected++;

        /* back to search and the product again: unmade, then made by the second opening */
        int nb = 0;
        for (int k = 0; k <= p; k++)
            acts[nb++] = plan[k];
        acts[nb++] = "click[back to search]";
        for (int k = 0; k <= p; k++)
            acts[nb++] = plan[k];
        wt_play(e, &task, acts, nb, rec, &r);
        uint32_t held = 0;
        for (uint32_t a = 0; a < n_atoms; a++)
            held += kind[a] == 'T' || kind[a] == 'p' || kind[a] == 'A';
        assert_int_equal(rec[p].n_made, held);
        assert_true(rec[p + 1].n_made == 0 && rec[p + 1].n_unmade == held);
        assert_int_equal(rec[nb - 1].n_made, held);
        wt_makers(rec, nb, n_atoms, maker);
        for (uint32_t a = 0; a < n_atoms; a++)
            assert_int_equal(maker[a], kind[a] == 'P' || kind[a] == 'O' ? -1 : nb - 1);

        /* the step limit without a purchase: every option chosen, then description and
         * < prev until the limit; the last step unmakes what held, and nothing is left */
        int nl = 0;
        for (int k = 0; k < n - 1; k++)
            acts[nl++] = plan[k];
        uint32_t limit = pv_env_model_max_steps(m);
        for (; (uint32_t)nl < limit; nl++)
            acts[nl] = nl % 2 == (n - 1) % 2 ? "click[description]" : "click[< prev]";
        wt_play(e, &task, acts, nl, rec, &r);
        assert_true(r.done && !r.won);
        assert_int_equal(rec[nl - 1].n_made, 0);
        assert_int_equal(rec[nl - 1].n_unmade, n_atoms - 1); /* all but the purchase */
        wt_makers(rec, nl, n_atoms, maker);
        for (uint32_t a = 0; a < n_atoms; a++)
            assert_int_equal(maker[a], -1);
    }
    assert_true(reselected > 0);
    pv_env_destroy(&e);
    pv_env_model_destroy(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atom_trace),
        cmocka_unit_test(test_atom_trace_reselect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
