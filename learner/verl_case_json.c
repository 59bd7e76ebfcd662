/* verl_case_json.c - the JSON values of verl-convention cases; see verl_case_json.h. */
#include "learner/verl_case_json.h"

#include <stdlib.h>
#include <string.h>

/* A (rows, L) matrix in both precisions. */

void pv_vc_mat_free(pv_vc_mat_t *m)
{
    free(m->d);
    free(m->f);
    memset(m, 0, sizeof *m);
}

pv_err_t pv_vc_alloc(pv_vc_mat_t *m, size_t rows, size_t L, pv_errmsg_t *em)
{
    m->rows = rows, m->L = L;
    size_t n = rows * L > 0 ? rows * L : 1;
    m->d = calloc(n, sizeof *m->d);
    m->f = calloc(n, sizeof *m->f);
    if (!m->d || !m->f)
        return pv_errf(em, PV_ERR_NOMEM, "no memory for a %zu x %zu matrix", rows, L);
    return PV_OK;
}

/* Read key `k` as a matrix (array of arrays) or, with `vec`, a vector (rows = n, L = 1). */
pv_err_t pv_vc_get_mat(const json_t *c, const char *k, bool vec, pv_vc_mat_t *m, pv_errmsg_t *em)
{
    const json_t *a = json_object_get(c, k);
    if (!json_is_array(a) || json_array_size(a) == 0)
        return pv_errf(em, PV_ERR_INVAL, "'%s' must be a non-empty array", k);
    size_t rows = json_array_size(a), L = 1;
    if (!vec) {
        const json_t *r0 = json_array_get(a, 0);
        if (!json_is_array(r0) || json_array_size(r0) == 0)
            return pv_errf(em, PV_ERR_INVAL, "'%s' must be an array of non-empty arrays", k);
        L = json_array_size(r0);
    }
    if (rows > PV_VC_MAX_VALUES / L)
        return pv_errf(em, PV_ERR_LIMIT, "'%s' has more than %u values", k, PV_VC_MAX_VALUES);
    pv_err_t rc = pv_vc_alloc(m, rows, L, em);
    for (size_t i = 0; rc == PV_OK && i < rows; i++) {
        const json_t *r = json_array_get(a, i);
        if (vec) {
            if (!json_is_number(r))
                rc = pv_errf(em, PV_ERR_INVAL, "'%s'[%zu] is not a number", k, i);
            else
                m->d[i] = json_number_value(r);
            continue;
        }
        if (!json_is_array(r) || json_array_size(r) != L) {
            rc = pv_errf(em, PV_ERR_INVAL, "'%s' row %zu is not an array of %zu numbers", k, i, L);
            break;
        }
        for (size_t t = 0; t < L; t++) {
            const json_t *x = json_array_get(r, t);
            if (!json_is_number(x)) {
                rc = pv_errf(em, PV_ERR_INVAL, "'%s'[%zu][%zu] is not a number", k, i, t);
                break;
            }
            m->d[i * L + t] = json_number_value(x);
        }
    }
    if (rc != PV_OK) {
        pv_vc_mat_free(m);
        return rc;
    }
    for (size_t k2 = 0; k2 < rows * L; k2++)
        m->f[k2] = (float)m->d[k2];
    return PV_OK;
}

pv_err_t pv_vc_same_shape(const pv_vc_mat_t *a, const pv_vc_mat_t *b, const char *na,
                          const char *nb, pv_errmsg_t *em)
{
    if (a->rows != b->rows || a->L != b->L)
        return pv_errf(em, PV_ERR_INVAL, "'%s' is %zu x %zu but '%s' is %zu x %zu", nb, b->rows,
                       b->L, na, a->rows, a->L);
    return PV_OK;
}

/* Group ids: equal JSON values (compared as compact text) get equal ids, numbered by first
 * occurrence. `anchors`/`alen`, when not NULL, receive the text (strings as themselves,
 * anything else as compact sorted JSON); the caller frees anchors[i]. */
pv_err_t pv_vc_get_ids(const json_t *c, const char *k, size_t rows, int64_t *ids, char **anchors,
                       size_t *alen, pv_errmsg_t *em)
{
    const json_t *a = json_object_get(c, k);
    if (!json_is_array(a) || json_array_size(a) != rows)
        return pv_errf(em, PV_ERR_INVAL, "'%s' must be an array of %zu values", k, rows);
    char **txt = calloc(rows, sizeof *txt);
    if (!txt)
        return pv_errf(em, PV_ERR_NOMEM, "no memory for '%s'", k);
    pv_err_t rc = PV_OK;
    for (size_t i = 0; i < rows && rc == PV_OK; i++) {
        const json_t *x = json_array_get(a, i);
        txt[i] = json_is_string(x) ? strdup(json_string_value(x))
                                   : json_dumps(x, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
        if (!txt[i])
            rc = pv_errf(em, PV_ERR_NOMEM, "no memory for '%s'", k);
    }
    for (size_t i = 0; i < rows && rc == PV_OK; i++) {
        ids[i] = (int64_t)i;
        for (size_t j = 0; j < i; j++)
            if (strcmp(txt[i], txt[j]) == 0) {
                ids[i] = ids[j];
                break;
            }
    }
    for (size_t i = 0; i < rows && rc == PV_OK && anchors; i++) {
        anchors[i] = txt[i];
        alen[i] = strlen(txt[i]);
        txt[i] = NULL;
    }
    for (size_t i = 0; i < rows; i++)
        free(txt[i]);
    free(txt);
    return rc;
}

json_t *pv_vc_json_mat(const pv_vc_mat_t *m, bool f32)
{
    json_t *a = json_array();
    for (size_t i = 0; i < m->rows; i++) {
        json_t *r = json_array();
        for (size_t t = 0; t < m->L; t++)
            json_array_append_new(r,
                                  json_real(f32 ? (double)m->f[i * m->L + t] : m->d[i * m->L + t]));
        json_array_append_new(a, r);
    }
    return a;
}

double pv_vc_num(const json_t *c, const char *k, double dflt)
{
    const json_t *x = json_object_get(c, k);
    return json_is_number(x) ? json_number_value(x) : dflt;
}

bool pv_vc_bool(const json_t *c, const char *k, bool dflt)
{
    const json_t *x = json_object_get(c, k);
    return json_is_boolean(x) ? json_is_true(x) : dflt;
}

const char *pv_vc_str(const json_t *c, const char *k, const char *dflt)
{
    const json_t *x = json_object_get(c, k);
    return json_is_string(x) ? json_string_value(x) : dflt;
}