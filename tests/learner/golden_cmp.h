/* golden_cmp.h - compare a computed JSON result with a golden reference (header-only).
 *
 * Tolerance: |ours - ref| <= rtol * |ref| + rtol * scale, scale = the largest |ref| of the
 * tensor being compared. The second term only matters for entries that are zero up to
 * rounding (verl's masked whitening leaves 2e-17 where the exact answer is 0): a purely
 * relative test would compare rounding noise. Keys "result_dtype" and
 * "pairwise_SequenceMatcher_ratio" are not outputs of the computation and are skipped. */
#ifndef PV_TEST_GOLDEN_CMP_H
#define PV_TEST_GOLDEN_CMP_H

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/support/pv_test.h"

#ifndef GOLDEN_REPORT
#define GOLDEN_REPORT(...) fprintf(stderr, __VA_ARGS__)
#endif

/* The cases of ../shared/golden/<file>, its path in path[0 .. cap) (path may be NULL);
 * NULL when ../shared is absent (the caller skips). A file that exists but does not parse
 * fails the test (cmocka must be included first). */
static inline json_t *s_golden_load(const char *file, char *path, size_t cap)
{
    char buf[1024], rel[256];
    if (!path)
        path = buf, cap = sizeof buf;
    snprintf(rel, sizeof rel, "golden/%s", file);
    if (!pv_test_shared(rel, path, cap))
        return NULL;
    json_error_t jerr;
    json_t *cases = json_load_file(path, 0, &jerr);
    if (!cases)
        fail_msg("%s: %s (line %d)", path, jerr.text, jerr.line);
    return cases;
}

static inline double s_scale(const json_t *ref)
{
    if (json_is_number(ref))
        return fabs(json_number_value(ref));
    double m = 0;
    size_t i;
    const json_t *x;
    if (json_is_array(ref))
        json_array_foreach(ref, i, x)
        {
            double s = s_scale(x);
            m = s > m ? s : m;
        }
    return m;
}

/* Count mismatches between `got` and `ref` (same nesting); print the first few. */
static inline int s_compare(const char *what, const json_t *got, const json_t *ref, double rtol,
                            double scale)
{
    if (json_is_number(ref)) {
        if (!json_is_number(got)) {
            GOLDEN_REPORT("%s: not a number\n", what);
            return 1;
        }
        double a = json_number_value(got), b = json_number_value(ref);
        if (fabs(a - b) <= rtol * fabs(b) + rtol * scale)
            return 0;
        GOLDEN_REPORT("%s: got %.17g want %.17g\n", what, a, b);
        return 1;
    }
    if (json_is_array(ref)) {
        if (!json_is_array(got) || json_array_size(got) != json_array_size(ref)) {
            GOLDEN_REPORT("%s: shape differs\n", what);
            return 1;
        }
        int bad = 0;
        for (size_t i = 0; i < json_array_size(ref); i++)
            bad += s_compare(what, json_array_get(got, i), json_array_get(ref, i), rtol, scale);
        return bad;
    }
    if (json_is_object(ref)) {
        int bad = 0;
        const char *k;
        const json_t *v;
        json_t *mref = json_deep_copy(ref); /* jansson iterates non-const objects */
        json_object_foreach(mref, k, v)
        {
            if (strcmp(k, "result_dtype") == 0 || strcmp(k, "pairwise_SequenceMatcher_ratio") == 0)
                continue;
            char sub[256];
            if (snprintf(sub, sizeof sub, "%s.%s", what, k) >= (int)sizeof sub)
                memcpy(sub + sizeof sub - 4, "...", 4); /* a label: show that it was cut */
            const json_t *g = json_object_get(got, k);
            if (!g) {
                GOLDEN_REPORT("%s: missing\n", sub);
                bad++;
                continue;
            }
            bad += s_compare(sub, g, v, rtol, json_is_object(v) ? 0 : s_scale(v));
        }
        json_decref(mref);
        return bad;
    }
    return 0;
}

#endif
