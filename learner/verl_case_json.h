/* verl_case_json.h - reading and writing the JSON values of verl-convention cases
 * (learner/verl_case.h): matrices in both precisions, group ids from any JSON value, and
 * optional scalars. Private to learner/verl_case*.c. Errors go to `em` with the key's name.
 */
#ifndef PV_LEARNER_VERL_CASE_JSON_H
#define PV_LEARNER_VERL_CASE_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* Values one matrix of a case may hold, at most (PV_ERR_LIMIT beyond). */
#define PV_VC_MAX_VALUES 10000000u

/* A (rows, L) matrix, row-major, in both precisions (d and f hold the same values). */
typedef struct pv_vc_mat {
    size_t rows, L;
    double *d;
    float *f;
} pv_vc_mat_t;

/* Free m's arrays and zero it. NULL arrays allowed. */
void pv_vc_mat_free(pv_vc_mat_t *m);

/* Allocate m as a zeroed (rows, L) matrix (at least one element). PV_ERR_NOMEM. */
pv_err_t pv_vc_alloc(pv_vc_mat_t *m, size_t rows, size_t L, pv_errmsg_t *em);

/* Read key `k` of object c as a matrix (a non-empty array of equal-length non-empty number
 * arrays) or, with `vec`, a vector (rows = n, L = 1) into m (freed by the caller on PV_OK;
 * left empty otherwise). PV_ERR_INVAL names the key and the bad element, PV_ERR_LIMIT past
 * PV_VC_MAX_VALUES, PV_ERR_NOMEM. */
pv_err_t pv_vc_get_mat(const json_t *c, const char *k, bool vec, pv_vc_mat_t *m, pv_errmsg_t *em);

/* PV_OK when a and b have the same shape, else PV_ERR_INVAL naming both (na, nb). */
pv_err_t pv_vc_same_shape(const pv_vc_mat_t *a, const pv_vc_mat_t *b, const char *na,
                          const char *nb, pv_errmsg_t *em);

/* Group ids of key `k` (an array of `rows` JSON values) into ids (rows): equal values
 * (compared as compact text) get equal ids, numbered by first occurrence (verl's `index`).
 * `anchors`/`alen`, when not NULL, receive each value's text (strings as themselves,
 * anything else as compact sorted JSON); the caller frees anchors[i]. PV_ERR_INVAL,
 * PV_ERR_NOMEM. */
pv_err_t pv_vc_get_ids(const json_t *c, const char *k, size_t rows, int64_t *ids, char **anchors,
                       size_t *alen, pv_errmsg_t *em);

/* A new JSON array of arrays holding m (its float values when f32, else its doubles). */
json_t *pv_vc_json_mat(const pv_vc_mat_t *m, bool f32);

/* Key `k` of c as a number, boolean or string; `dflt` when absent or of another type. The
 * string is owned by c. */
double pv_vc_num(const json_t *c, const char *k, double dflt);
bool pv_vc_bool(const json_t *c, const char *k, bool dflt);
const char *pv_vc_str(const json_t *c, const char *k, const char *dflt);

#endif
