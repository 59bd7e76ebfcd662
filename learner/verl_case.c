/* verl_case.c - JSON cases in verl's convention; see verl_case.h. */
#include "learner/verl_case.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "learner/advantage.h"
#include "learner/kl.h"
#include "learner/pgpo.h"
#include "learner/policy_loss.h"
#include "learner/prover_credit.h"
#include "learner/spopp.h"
#include "learner/triage_adv.h"
#include "learner/vict.h"
#include "learner/verl_case_json.h"
#include "learner/verl_case_keys.h"

static pv_err_t s_prover(const json_t *c, pv_vc_mat_t *adv, const pv_vc_mat_t *mask, bool f32,
                         pv_errmsg_t *em)
{
    const json_t *p = json_object_get(c, "prover");
    if (!p)
        return PV_OK;
    pv_prover_opts_t o = {.lambda = pv_vc_num(p, "lambda", 1.0)};
    pv_err_t rc = pv_prover_sign_parse(pv_vc_str(p, "sign", "positive"), &o.sign, em);
    if (rc == PV_OK)
        rc = pv_prover_apply_parse(pv_vc_str(p, "apply", "add"), &o.apply, em);
    const json_t *segs = json_object_get(p, "segments");
    if (rc == PV_OK && !json_is_array(segs))
        rc = pv_errf(em, PV_ERR_INVAL, "'prover.segments' must be an array");
    if (rc != PV_OK)
        return rc;
    size_t n = json_array_size(segs);
    pv_verified_seg_t *sg = calloc(n ? n : 1, sizeof *sg);
    if (!sg)
        return pv_errf(em, PV_ERR_NOMEM, "no memory for segments");
    for (size_t s = 0; s < n && rc == PV_OK; s++) {
        const json_t *g = json_array_get(segs, s);
        double row = pv_vc_num(g, "row", -1), t0 = pv_vc_num(g, "t0", -1),
               t1 = pv_vc_num(g, "t1", -1);
        if (!json_is_object(g) || row < 0 || t0 < 0 || t1 < 0 ||
            !json_is_number(json_object_get(g, "delta")))
            rc = pv_errf(em, PV_ERR_INVAL, "prover.segments[%zu] needs row, t0, t1 >= 0 and delta",
                         s);
        sg[s] = (pv_verified_seg_t){(size_t)row, (size_t)t0, (size_t)t1, pv_vc_num(g, "delta", 0)};
    }
    if (rc == PV_OK)
        rc = f32 ? pv_prover_apply_f32(&o, adv->rows, adv->L, adv->f, mask->f, sg, n, NULL, em)
                 : pv_prover_apply_f64(&o, adv->rows, adv->L, adv->d, mask->d, sg, n, NULL, em);
    free(sg);
    return rc;
}

/* verl-agent's multi-step rows: with traj_index and compute_mean_std_cross_steps = false
 * (alias compute_mean_std_cross_all_data) only each trajectory's first row enters the group
 * statistics; *counted stays NULL when every row does. */
static pv_err_t s_counted(const json_t *c, size_t rows, const int64_t *idx, uint8_t **counted,
                          pv_errmsg_t *em)
{
    *counted = NULL;
    const char *k = json_object_get(c, "compute_mean_std_cross_steps")
                        ? "compute_mean_std_cross_steps"
                        : "compute_mean_std_cross_all_data";
    const json_t *x = json_object_get(c, k);
    if (x && !json_is_boolean(x))
        return pv_errf(em, PV_ERR_INVAL, "'%s' must be true or false", k);
    if (!x || json_is_true(x))
        return PV_OK; /* verl-agent's default: every row counts */
    if (!json_object_get(c, "traj_index"))
        return pv_errf(em, PV_ERR_INVAL, "%s = false needs traj_index (the trajectory of each row)",
                       k);
    int64_t *traj = calloc(rows, sizeof *traj);
    *counted = calloc(rows, 1);
    pv_err_t rc = traj && *counted ? PV_OK : pv_errf(em, PV_ERR_NOMEM, "no memory for traj_index");
    if (rc == PV_OK)
        rc = pv_vc_get_ids(c, "traj_index", rows, traj, NULL, NULL, em);
    if (rc == PV_OK)
        pv_adv_first_of_trajectory(rows, idx, traj, *counted);
    free(traj);
    if (rc != PV_OK) {
        free(*counted);
        *counted = NULL;
    }
    return rc;
}

/* The estimator a case names and the kind of case it makes. */
typedef enum { S_OUTCOME, S_PASSK, S_RPP, S_GIGPO, S_PGPO, S_SPOPP, S_TRIAGE, S_VICT } s_est_kind_t;

static pv_err_t s_estimator(const json_t *c, const char *estimator, pv_adv_estimator_t *est,
                            s_est_kind_t *kind, bool *prover_name, pv_errmsg_t *em)
{
    const char *name = estimator ? estimator : pv_vc_str(c, "adv_estimator", NULL);
    bool gigpo = json_object_get(c, "step_rewards") != NULL;
    *est = PV_ADV_GRPO;
    *kind = S_OUTCOME;
    /* "prover", the pipeline's name: GRPO plus the segments of the "prover" object */
    *prover_name = name && strcmp(name, "prover") == 0;
    pv_err_t rc = PV_OK;
    if (name && strcmp(name, "grpo_passk") == 0)
        *kind = S_PASSK;
    else if (name && strcmp(name, "reinforce_plus_plus") == 0)
        *kind = S_RPP;
    else if (name && !*prover_name)
        rc = pv_adv_estimator_parse(name, est, NULL);
    if (rc != PV_OK)
        return pv_errf(em, PV_ERR_INVAL,
                       "unknown advantage estimator '%s' (known: grpo, drgrpo, rloo, "
                       "reinforce_plus_plus_baseline, gigpo, pgpo, spopp, triage, vict, prover, "
                       "grpo_passk, "
                       "reinforce_plus_plus)",
                       name);
    if (*prover_name && !json_object_get(c, "prover"))
        return pv_errf(
            em, PV_ERR_INVAL,
            "estimator prover needs a \"prover\" object (lambda, sign, apply, segments)");
    if (!name && gigpo)
        *est = PV_ADV_GIGPO;
    if (*kind == S_OUTCOME)
        *est = pv_adv_estimator_select(*est, pv_vc_bool(c, "norm_adv_by_std_in_grpo", true));
    if (*est == PV_ADV_GIGPO)
        *kind = S_GIGPO;
    if (*est == PV_ADV_PGPO)
        *kind = S_PGPO;
    if (*est == PV_ADV_SPOPP)
        *kind = S_SPOPP;
    if (*est == PV_ADV_TRIAGE)
        *kind = S_TRIAGE;
    if (*est == PV_ADV_VICT)
        *kind = S_VICT;
    if (*kind == S_GIGPO && !gigpo)
        return pv_errf(em, PV_ERR_INVAL, "estimator gigpo needs step_rewards and anchor_obs");
    return PV_OK;
}

static pv_err_t s_gigpo(const json_t *c, const pv_vc_mat_t *r, const pv_vc_mat_t *m,
                        const int64_t *idx, const uint8_t *counted, double eps, bool f32,
                        pv_vc_mat_t *adv, pv_errmsg_t *em)
{
    pv_vc_mat_t sr = {0};
    int64_t *sg = calloc(r->rows, sizeof *sg);
    char **anchors = calloc(r->rows, sizeof *anchors);
    size_t *alen = calloc(r->rows, sizeof *alen);
    pv_err_t rc =
        sg && anchors && alen ? PV_OK : pv_errf(em, PV_ERR_NOMEM, "no memory for anchors");
    if (rc == PV_OK)
        rc = pv_vc_get_mat(c, "step_rewards", true, &sr, em);
    if (rc == PV_OK && sr.rows != r->rows)
        rc = pv_errf(em, PV_ERR_INVAL, "'step_rewards' needs %zu values", r->rows);
    if (rc == PV_OK)
        rc = pv_vc_get_ids(c, "anchor_obs", r->rows, sg, anchors, alen, em);
    if (rc == PV_OK)
        rc = pv_gigpo_step_groups(r->rows, (const char *const *)anchors, alen, idx,
                                  pv_vc_bool(c, "enable_similarity", false),
                                  pv_vc_num(c, "similarity_thresh", 0.95), sg, em);
    const char *mode = pv_vc_str(c, "mode", "mean_norm");
    bool std_norm = strcmp(mode, "mean_std_norm") == 0;
    if (rc == PV_OK && !std_norm && strcmp(mode, "mean_norm") != 0)
        rc = pv_errf(em, PV_ERR_INVAL, "gigpo mode must be mean_norm or mean_std_norm");
    double w = pv_vc_num(c, "step_advantage_w", 1.0);
    if (rc == PV_OK)
        rc = f32 ? pv_adv_gigpo_f32(r->rows, r->L, r->f, sr.f, m->f, idx, counted, sg, eps, w,
                                    std_norm, adv->f, em)
                 : pv_adv_gigpo_f64(r->rows, r->L, r->d, sr.d, m->d, idx, counted, sg, eps, w,
                                    std_norm, adv->d, em);
    for (size_t i = 0; anchors && i < r->rows; i++)
        free(anchors[i]);
    free(anchors);
    free(alen);
    free(sg);
    pv_vc_mat_free(&sr);
    return rc;
}

/* PGPO: "step_anchors" (rows, L) strings or numbers (equal = one state within an episode
 * group; padding cells are not read), "gamma" (1), "pgpo_norm" ("std"). */
static pv_err_t s_pgpo(const json_t *c, const pv_vc_mat_t *r, const pv_vc_mat_t *m,
                       const int64_t *idx, double eps, pv_vc_mat_t *adv, pv_errmsg_t *em)
{
    size_t rows = r->rows, L = r->L, cells = rows * L;
    const json_t *a = json_object_get(c, "step_anchors");
    if (!json_is_array(a) || json_array_size(a) != rows)
        return pv_errf(em, PV_ERR_INVAL, "'step_anchors' must be an array of %zu rows", rows);
    json_t *flat = json_array(), *wrap = json_object();
    int64_t *ids = calloc(cells, sizeof *ids), *lab = calloc(cells, sizeof *lab);
    pv_err_t rc = flat && wrap && ids && lab ? PV_OK : pv_errf(em, PV_ERR_NOMEM, "no memory");
    for (size_t i = 0; rc == PV_OK && i < rows; i++) {
        const json_t *row = json_array_get(a, i);
        if (!json_is_array(row) || json_array_size(row) != L)
            rc = pv_errf(em, PV_ERR_INVAL, "'step_anchors' row %zu is not an array of %zu", i, L);
        for (size_t t = 0; rc == PV_OK && t < L; t++)
            json_array_append(flat, json_array_get(row, t));
    }
    if (rc == PV_OK) {
        json_object_set(wrap, "step_anchors", flat);
        rc = pv_vc_get_ids(wrap, "step_anchors", cells, ids, NULL, NULL, em);
    }
    for (size_t k = 0; rc == PV_OK && k < cells; k++) { /* one state = same text, same group */
        lab[k] = (int64_t)k;
        for (size_t j = 0; j < k; j++)
            if (ids[j] == ids[k] && idx[j / L] == idx[k / L]) {
                lab[k] = lab[j];
                break;
            }
    }
    pv_pgpo_opts_t o = pv_pgpo_opts_default();
    o.gamma = pv_vc_num(c, "gamma", 1.0);
    o.epsilon = eps;
    if (rc == PV_OK)
        rc = pv_pgpo_norm_parse(pv_vc_str(c, "pgpo_norm", "std"), &o.std_norm, em);
    if (rc == PV_OK)
        rc = pv_pgpo_f64(rows, L, r->d, m->d, idx, lab, &o, adv->d, em);
    for (size_t k = 0; rc == PV_OK && k < cells; k++)
        adv->f[k] = (float)adv->d[k];
    json_decref(wrap);
    json_decref(flat);
    free(ids);
    free(lab);
    return rc;
}

/* SPO++: "task" (rows) ids, "spopp" {decay, prior_mean, prior_strength, values: {task: [S,
 * W]}}; adds "values" (rows): v(task_i) after the batch. */
static pv_err_t s_spopp(const json_t *c, const pv_vc_mat_t *r, const pv_vc_mat_t *m, double eps,
                        pv_vc_mat_t *adv, json_t *out, pv_errmsg_t *em)
{
    size_t rows = r->rows;
    const json_t *so = json_object_get(c, "spopp");
    if (so && !json_is_object(so))
        return pv_errf(em, PV_ERR_INVAL, "'spopp' must be an object");
    static const char *const known[] = {"decay", "prior_mean", "prior_strength", "values"};
    const char *key;
    json_t *val, *obj; /* jansson's iterators take a mutable object; nothing is changed */
    memcpy(&obj, &so, sizeof obj);
    json_object_foreach(obj, key, val)
    {
        bool ok = false;
        for (size_t i = 0; i < 4; i++)
            ok = ok || strcmp(key, known[i]) == 0;
        if (!ok)
            return pv_errf(em, PV_ERR_INVAL,
                           "unknown key '%s' of \"spopp\" in a spopp advantage case (it reads: "
                           "decay, prior_mean, prior_strength, values)",
                           key);
    }
    pv_spopp_opts_t o = pv_spopp_opts_default();
    o.decay = pv_vc_num(so, "decay", o.decay);
    o.prior_mean = pv_vc_num(so, "prior_mean", o.prior_mean);
    o.prior_strength = pv_vc_num(so, "prior_strength", o.prior_strength);
    o.epsilon = eps;
    int64_t *ids = calloc(rows, sizeof *ids);
    char **names = calloc(rows, sizeof *names);
    size_t *len = calloc(rows, sizeof *len);
    uint64_t *keys = calloc(rows, sizeof *keys);
    pv_spopp_t *t = NULL;
    pv_err_t rc = ids && names && len && keys ? PV_OK : pv_errf(em, PV_ERR_NOMEM, "no memory");
    if (rc == PV_OK)
        rc = pv_vc_get_ids(c, "task", rows, ids, names, len, em);
    if (rc == PV_OK)
        rc = pv_spopp_new(&o, &t, em);
    for (size_t i = 0; rc == PV_OK && i < rows; i++)
        keys[i] = (uint64_t)ids[i];
    /* the table before the batch: entries of the tasks the rows name */
    const json_t *vals = so ? json_object_get(so, "values") : NULL;
    if (rc == PV_OK && vals && !json_is_object(vals))
        rc = pv_errf(em, PV_ERR_INVAL, "'spopp'.'values' must be an object {task: [S, W]}");
    size_t n = 0;
    uint64_t *vk = calloc(rows ? rows : 1, sizeof *vk);
    double *vs = calloc(rows ? rows : 1, sizeof *vs), *vw = calloc(rows ? rows : 1, sizeof *vw);
    if (rc == PV_OK && (!vk || !vs || !vw))
        rc = pv_errf(em, PV_ERR_NOMEM, "no memory");
    for (size_t i = 0; rc == PV_OK && vals && i < rows; i++) {
        const json_t *e = json_object_get(vals, names[i]);
        if (!e || ids[i] != (int64_t)i)
            continue; /* not given, or the task's first row already took it */
        if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_number(json_array_get(e, 0)) ||
            !json_is_number(json_array_get(e, 1)))
            rc = pv_errf(em, PV_ERR_INVAL, "'spopp'.'values'.'%s' must be [S, W]", names[i]);
        else
            vk[n] = keys[i], vs[n] = json_number_value(json_array_get(e, 0)),
            vw[n++] = json_number_value(json_array_get(e, 1));
    }
    if (rc == PV_OK && n)
        rc = pv_spopp_load(t, n, vk, vs, vw, em) == PV_OK ? PV_OK : PV_ERR_INVAL;
    if (rc == PV_OK)
        rc = pv_spopp_advantages_f64(t, rows, r->L, r->d, m->d, keys, adv->d, NULL, em);
    for (size_t k = 0; rc == PV_OK && k < rows * r->L; k++)
        adv->f[k] = (float)adv->d[k];
    if (rc == PV_OK) {
        json_t *v = json_array();
        for (size_t i = 0; i < rows; i++)
            json_array_append_new(v, json_real(pv_spopp_value(t, keys[i])));
        json_object_set_new(out, "values", v);
    }
    pv_spopp_destroy(&t);
    for (size_t i = 0; names && i < rows; i++)
        free(names[i]);
    free(names);
    free(len);
    free(ids);
    free(keys);
    free(vk);
    free(vs);
    free(vw);
    return rc;
}

/* TRIAGE: "state_keys" (rows, L + 1) integers (the state before each step, then the last;
 * cells past a row's steps are not read), optional "refused" (rows, L) booleans and
 * "success" (rows) booleans (default: outcome > 0), "lambda" (0.2). */
static pv_err_t s_triage(const json_t *c, const pv_vc_mat_t *r, const pv_vc_mat_t *m, int64_t *idx,
                         double eps, pv_vc_mat_t *adv, pv_errmsg_t *em)
{
    size_t rows = r->rows, L = r->L;
    const json_t *keys = json_object_get(c, "state_keys"), *ref = json_object_get(c, "refused"),
                 *win = json_object_get(c, "success");
    if (!json_is_array(keys) || json_array_size(keys) != rows)
        return pv_errf(em, PV_ERR_INVAL, "'state_keys' must be an array of %zu rows", rows);
    if ((ref && (!json_is_array(ref) || json_array_size(ref) != rows)) ||
        (win && (!json_is_array(win) || json_array_size(win) != rows)))
        return pv_errf(em, PV_ERR_INVAL, "'refused' and 'success' need %zu rows", rows);
    pv_traj_t *tr = calloc(rows, sizeof *tr);
    uint64_t *kb = calloc(rows * (L + 1), sizeof *kb);
    pv_step_rec_t *sb = calloc(rows * L, sizeof *sb);
    pv_err_t rc = tr && kb && sb ? PV_OK : pv_errf(em, PV_ERR_NOMEM, "no memory");
    for (size_t i = 0; rc == PV_OK && i < rows; i++) {
        size_t n = 0;
        while (n < L && m->d[i * L + n] != 0.0)
            n++;
        const json_t *kr = json_array_get(keys, i), *rr = ref ? json_array_get(ref, i) : NULL;
        if (!json_is_array(kr) || json_array_size(kr) != L + 1)
            rc = pv_errf(em, PV_ERR_INVAL, "'state_keys' row %zu is not %zu integers", i, L + 1);
        else if (rr && (!json_is_array(rr) || json_array_size(rr) != L))
            rc = pv_errf(em, PV_ERR_INVAL, "'refused' row %zu is not %zu booleans", i, L);
        for (size_t t = 0; rc == PV_OK && t <= n; t++) {
            const json_t *k = json_array_get(kr, t);
            if (!json_is_integer(k))
                rc = pv_errf(em, PV_ERR_INVAL, "'state_keys'[%zu][%zu] is not an integer", i, t);
            else
                kb[i * (L + 1) + t] = (uint64_t)json_integer_value(k);
        }
        for (size_t t = 0; rc == PV_OK && rr && t < n; t++)
            sb[i * L + t].refused = json_is_true(json_array_get(rr, t));
        double out = 0;
        for (size_t t = 0; t < L; t++)
            out += r->d[i * L + t];
        tr[i] = (pv_traj_t){.steps = sb + i * L,
                            .n_steps = n,
                            .reward = out,
                            .won = win ? json_is_true(json_array_get(win, i)) : out > 0,
                            .state_keys = kb + i * (L + 1)};
    }
    pv_triage_opts_t o = pv_triage_opts_default();
    o.lambda = pv_vc_num(c, "lambda", o.lambda);
    o.epsilon = eps;
    pv_batch_t b = {.rows = rows,
                    .L = L,
                    .token_level_rewards = r->d,
                    .response_mask = m->d,
                    .advantages = adv->d,
                    .index = idx};
    if (rc == PV_OK)
        rc = pv_batch_triage(&b, tr, rows, &o, NULL, em);
    for (size_t k = 0; rc == PV_OK && k < rows * L; k++)
        adv->f[k] = (float)adv->d[k];
    free(tr);
    free(kb);
    free(sb);
    return rc;
}

/* One VICT trace list: key[i][t] is an array of at most `cap` unsigned integers, read into
 * v[0 .. *n) (t < n_steps; cells past a row's steps are not read). Absent key: all empty. */
static pv_err_t s_vict_lists(const json_t *c, const char *key, size_t i, size_t t, size_t cap,
                             uint32_t *v, uint8_t *n, pv_errmsg_t *em)
{
    const json_t *k = json_object_get(c, key);
    *n = 0;
    if (!k)
        return PV_OK;
    const json_t *row = json_array_get(k, i), *cell = json_array_get(row, t);
    if (!json_is_array(cell) || json_array_size(cell) > cap)
        return pv_errf(em, PV_ERR_INVAL, "'%s'[%zu][%zu] must be an array of at most %zu integers",
                       key, i, t, cap);
    for (size_t j = 0; j < json_array_size(cell); j++) {
        const json_t *x = json_array_get(cell, j);
        if (!json_is_integer(x) || json_integer_value(x) < 0 ||
            json_integer_value(x) > (json_int_t)UINT32_MAX)
            return pv_errf(em, PV_ERR_INVAL, "'%s'[%zu][%zu][%zu] is not an unsigned integer", key,
                           i, t, j);
        v[(*n)++] = (uint32_t)json_integer_value(x);
    }
    return PV_OK;
}

/* VICT: "goal_made" (rows, L) arrays of goal-atom ids each step made true, optional
 * "goal_unmade" (made false) and "deps" (earlier steps each step depended on), "success"
 * (rows; default outcome > 0), "split" ("conserve"), "failed" ("all"). */
static pv_err_t s_vict(const json_t *c, const pv_vc_mat_t *r, const pv_vc_mat_t *m, int64_t *idx,
                       double eps, pv_vc_mat_t *adv, pv_errmsg_t *em)
{
    size_t rows = r->rows, L = r->L;
    const char *lists[3] = {"goal_made", "goal_unmade", "deps"};
    for (int k = 0; k < 3; k++) {
        const json_t *x = json_object_get(c, lists[k]);
        if ((k == 0 || x) && (!json_is_array(x) || json_array_size(x) != rows))
            return pv_errf(em, PV_ERR_INVAL, "'%s' must be an array of %zu rows of %zu steps",
                           lists[k], rows, L);
    }
    const json_t *win = json_object_get(c, "success");
    if (win && (!json_is_array(win) || json_array_size(win) != rows))
        return pv_errf(em, PV_ERR_INVAL, "'success' needs %zu rows", rows);
    pv_vict_opts_t o = pv_vict_opts_default();
    o.epsilon = eps;
    if (pv_vict_split_parse(pv_vc_str(c, "split", "conserve"), &o.split, em) != PV_OK ||
        pv_vict_failed_parse(pv_vc_str(c, "failed", "all"), &o.failed, em) != PV_OK)
        return PV_ERR_INVAL;
    pv_traj_t *tr = calloc(rows, sizeof *tr);
    pv_env_trace_t *tb = calloc(rows * L + 1, sizeof *tb);
    size_t *cols = calloc(rows * (L + 1), sizeof *cols);
    pv_err_t rc = tr && tb && cols ? PV_OK : pv_errf(em, PV_ERR_NOMEM, "no memory");
    for (size_t i = 0; rc == PV_OK && i < rows; i++) {
        size_t n = 0;
        while (n < L && m->d[i * L + n] != 0.0)
            n++;
        double out = 0;
        for (size_t t = 0; t < L; t++)
            out += r->d[i * L + t];
        for (size_t t = 0; t <= L; t++)
            cols[i * (L + 1) + t] = t < n ? t : n;
        for (size_t t = 0; rc == PV_OK && t < n; t++) {
            pv_env_trace_t *a = &tb[i * L + t];
            rc = s_vict_lists(c, "goal_made", i, t, PV_ENV_TRACE_ATOMS, a->made, &a->n_made, em);
            if (rc == PV_OK)
                rc = s_vict_lists(c, "goal_unmade", i, t, PV_ENV_TRACE_ATOMS, a->unmade,
                                  &a->n_unmade, em);
            if (rc == PV_OK)
                rc = s_vict_lists(c, "deps", i, t, PV_ENV_TRACE_DEPS, a->deps, &a->n_deps, em);
            for (uint8_t k = 0; rc == PV_OK && k < a->n_deps; k++)
                if (a->deps[k] >= t)
                    rc = pv_errf(em, PV_ERR_INVAL,
                                 "'deps'[%zu][%zu] names step %u, not an "
                                 "earlier one",
                                 i, t, a->deps[k]);
        }
        tr[i] = (pv_traj_t){.n_steps = n,
                            .reward = out,
                            .won = win ? json_is_true(json_array_get(win, i)) : out > 0,
                            .traces = tb + i * L};
    }
    pv_batch_t b = {.rows = rows,
                    .L = L,
                    .S = L,
                    .step_col = cols,
                    .token_level_rewards = r->d,
                    .response_mask = m->d,
                    .advantages = adv->d,
                    .index = idx};
    if (rc == PV_OK)
        rc = pv_batch_vict(&b, tr, rows, &o, NULL, em);
    for (size_t k = 0; rc == PV_OK && k < rows * L; k++)
        adv->f[k] = (float)adv->d[k];
    free(tr);
    free(tb);
    free(cols);
    return rc;
}

static pv_err_t s_advantage(const json_t *c, const char *estimator, bool f32, json_t *out,
                            pv_errmsg_t *em)
{
    pv_vc_mat_t r = {0}, m = {0}, adv = {0}, ret = {0};
    int64_t *idx = NULL;
    uint8_t *counted = NULL;
    pv_adv_estimator_t est;
    s_est_kind_t kind;
    bool prover_name, has_prover = json_object_get(c, "prover") != NULL;
    pv_err_t rc = s_estimator(c, estimator, &est, &kind, &prover_name, em);
    static const pv_vc_kind_t vc[] = {PV_VC_OUTCOME, PV_VC_PASSK, PV_VC_RPP,    PV_VC_GIGPO,
                                      PV_VC_PGPO,    PV_VC_SPOPP, PV_VC_TRIAGE, PV_VC_VICT};
    const char *label = kind == S_PASSK ? "grpo_passk"
                        : kind == S_RPP ? "reinforce_plus_plus"
                        : prover_name   ? "prover"
                                        : pv_adv_estimator_name(est);
    char what[96];
    snprintf(what, sizeof what, "%s advantage", label);
    if (rc == PV_OK)
        rc = pv_verl_case_check_keys(c, vc[kind], what, em);
    if (rc == PV_OK)
        rc = pv_vc_get_mat(c, "token_level_rewards", false, &r, em);
    if (rc == PV_OK)
        rc = pv_vc_get_mat(c, "response_mask", false, &m, em);
    if (rc == PV_OK)
        rc = pv_vc_same_shape(&r, &m, "token_level_rewards", "response_mask", em);
    if (rc == PV_OK)
        rc = pv_vc_alloc(&adv, r.rows, r.L, em);
    if (rc == PV_OK && !(idx = calloc(r.rows, sizeof *idx)))
        rc = pv_errf(em, PV_ERR_NOMEM, "no memory for index");
    bool no_index = kind == S_RPP || kind == S_SPOPP; /* index optional */
    if (rc == PV_OK && (!no_index || json_object_get(c, "index")))
        rc = pv_vc_get_ids(c, "index", r.rows, idx, NULL, NULL, em);
    if (rc == PV_OK && !no_index)
        rc = s_counted(c, r.rows, idx, &counted, em);
    double eps = pv_vc_num(c, "epsilon", 1e-6);
    if (rc == PV_OK && kind == S_GIGPO) {
        rc = s_gigpo(c, &r, &m, idx, counted, eps, f32, &adv, em);
    } else if (rc == PV_OK && kind == S_PGPO) {
        rc = s_pgpo(c, &r, &m, idx, eps, &adv, em);
    } else if (rc == PV_OK && kind == S_TRIAGE) {
        rc = s_triage(c, &r, &m, idx, eps, &adv, em);
    } else if (rc == PV_OK && kind == S_VICT) {
        rc = s_vict(c, &r, &m, idx, eps, &adv, em);
    } else if (rc == PV_OK && kind == S_SPOPP) {
        rc = s_spopp(c, &r, &m, eps, &adv, out, em);
    } else if (rc == PV_OK && kind == S_PASSK) {
        bool norm = pv_vc_bool(c, "norm_adv_by_std_in_grpo", true);
        rc = f32 ? pv_adv_grpo_passk_f32(norm, eps, r.rows, r.L, r.f, m.f, idx, counted, adv.f, em)
                 : pv_adv_grpo_passk_f64(norm, eps, r.rows, r.L, r.d, m.d, idx, counted, adv.d, em);
    } else if (rc == PV_OK && kind == S_RPP) {
        double gamma = pv_vc_num(c, "gamma", 1.0); /* verl's algorithm.gamma */
        rc = pv_vc_alloc(&ret, r.rows, r.L, em);
        if (rc == PV_OK)
            rc = f32 ? pv_adv_reinforce_pp_f32(gamma, r.rows, r.L, r.f, m.f, adv.f, ret.f, em)
                     : pv_adv_reinforce_pp_f64(gamma, r.rows, r.L, r.d, m.d, adv.d, ret.d, em);
    } else if (rc == PV_OK) {
        rc =
            f32 ? pv_adv_outcome_f32(est, eps, r.rows, r.L, r.f, m.f, idx, counted, adv.f, NULL, em)
                : pv_adv_outcome_f64(est, eps, r.rows, r.L, r.d, m.d, idx, counted, adv.d, NULL,
                                     em);
    }
    if (rc == PV_OK)
        rc = s_prover(c, &adv, &m, f32, em);
    if (rc == PV_OK) {
        json_object_set_new(out, "advantages", pv_vc_json_mat(&adv, f32));
        json_object_set_new(out, "returns", pv_vc_json_mat(kind == S_RPP ? &ret : &adv, f32));
        char name[64];
        snprintf(name, sizeof name, "%s%s", label, has_prover && !prover_name ? "+prover" : "");
        json_object_set_new(out, "estimator", json_string(name));
    }
    free(counted);
    free(idx);
    pv_vc_mat_free(&r);
    pv_vc_mat_free(&m);
    pv_vc_mat_free(&adv);
    pv_vc_mat_free(&ret);
    return rc;
}

static pv_err_t s_agg_opts(const json_t *c, pv_agg_opts_t *a, pv_errmsg_t *em)
{
    memset(a, 0, sizeof *a);
    a->dp_size = (int)pv_vc_num(c, "dp_size", 1);
    a->batch_num_tokens = pv_vc_num(c, "batch_num_tokens", 0);
    a->global_batch_size = pv_vc_num(c, "global_batch_size", 0);
    a->loss_scale_factor = pv_vc_num(c, "loss_scale_factor", 0);
    return pv_loss_agg_parse(pv_vc_str(c, "loss_agg_mode", "token-mean"), &a->mode, em);
}

static pv_err_t s_pg_loss(const json_t *c, bool f32, json_t *out, pv_errmsg_t *em)
{
    pv_vc_mat_t old = {0}, lp = {0}, adv = {0}, m = {0}, g = {0};
    const json_t *cfg = json_object_get(c, "config");
    pv_err_t rc = pv_verl_case_check_keys(c, PV_VC_PG_LOSS, "policy loss", em);
    if (rc != PV_OK)
        return rc;
    pv_pg_opts_t o = pv_pg_opts_default();
    o.clip_ratio = pv_vc_num(cfg, "clip_ratio", 0.2);
    o.clip_ratio_low = pv_vc_num(cfg, "clip_ratio_low", -1);
    o.clip_ratio_high = pv_vc_num(cfg, "clip_ratio_high", -1);
    o.clip_ratio_c = pv_vc_num(cfg, "clip_ratio_c", 3.0);
    rc = s_agg_opts(c, &o.agg, em);
    if (rc == PV_OK)
        rc = pv_vc_get_mat(c, "old_log_prob", false, &old, em);
    if (rc == PV_OK)
        rc = pv_vc_get_mat(c, "log_prob", false, &lp, em);
    if (rc == PV_OK)
        rc = pv_vc_get_mat(c, "advantages", false, &adv, em);
    if (rc == PV_OK)
        rc = pv_vc_get_mat(c, "response_mask", false, &m, em);
    if (rc == PV_OK)
        rc = pv_vc_same_shape(&old, &lp, "old_log_prob", "log_prob", em);
    if (rc == PV_OK)
        rc = pv_vc_same_shape(&old, &adv, "old_log_prob", "advantages", em);
    if (rc == PV_OK)
        rc = pv_vc_same_shape(&old, &m, "old_log_prob", "response_mask", em);
    if (rc == PV_OK)
        rc = pv_vc_alloc(&g, old.rows, old.L, em);
    pv_pg_metrics_t met;
    double loss = 0;
    if (rc == PV_OK && f32) {
        float lf;
        rc = pv_policy_loss_f32(&o, old.rows, old.L, old.f, lp.f, adv.f, m.f, &lf, &met, g.f, em);
        loss = lf;
    } else if (rc == PV_OK) {
        rc = pv_policy_loss_f64(&o, old.rows, old.L, old.d, lp.d, adv.d, m.d, &loss, &met, g.d, em);
    }
    if (rc == PV_OK) {
        json_object_set_new(out, "pg_loss", json_real(loss));
        json_t *mt = json_object();
        json_object_set_new(mt, "actor/pg_clipfrac", json_real(met.pg_clipfrac));
        json_object_set_new(mt, "actor/ppo_kl", json_real(met.ppo_kl));
        json_object_set_new(mt, "actor/pg_clipfrac_lower", json_real(met.pg_clipfrac_lower));
        json_object_set_new(out, "metrics", mt);
        json_object_set_new(out, "grad_wrt_log_prob", pv_vc_json_mat(&g, f32));
    }
    pv_vc_mat_free(&old);
    pv_vc_mat_free(&lp);
    pv_vc_mat_free(&adv);
    pv_vc_mat_free(&m);
    pv_vc_mat_free(&g);
    return rc;
}

static pv_err_t s_agg(const json_t *c, bool f32, json_t *out, pv_errmsg_t *em)
{
    pv_vc_mat_t l = {0}, m = {0};
    pv_agg_opts_t o;
    pv_err_t rc = pv_verl_case_check_keys(c, PV_VC_AGG, "loss aggregation", em);
    if (rc == PV_OK)
        rc = s_agg_opts(c, &o, em);
    if (rc == PV_OK)
        rc = pv_vc_get_mat(c, "loss_mat", false, &l, em);
    if (rc == PV_OK)
        rc = pv_vc_get_mat(c, "loss_mask", false, &m, em);
    if (rc == PV_OK)
        rc = pv_vc_same_shape(&l, &m, "loss_mat", "loss_mask", em);
    if (rc == PV_OK)
        json_object_set_new(out, "loss",
                            json_real(f32 ? (double)pv_agg_loss_f32(&o, l.rows, l.L, l.f, m.f, NULL)
                                          : pv_agg_loss_f64(&o, l.rows, l.L, l.d, m.d, NULL)));
    pv_vc_mat_free(&l);
    pv_vc_mat_free(&m);
    return rc;
}

static pv_err_t s_kl(const json_t *c, bool f32, json_t *out, pv_errmsg_t *em)
{
    pv_vc_mat_t lp = {0}, ref = {0}, kl = {0}, g = {0};
    pv_kl_spec_t spec;
    pv_err_t rc = pv_verl_case_check_keys(c, PV_VC_KL, "kl penalty", em);
    if (rc == PV_OK)
        rc = pv_kl_parse(pv_vc_str(c, "kl_penalty", "kl"), &spec, em);
    if (rc == PV_OK)
        rc = pv_vc_get_mat(c, "logprob", false, &lp, em);
    if (rc == PV_OK)
        rc = pv_vc_get_mat(c, "ref_logprob", false, &ref, em);
    if (rc == PV_OK)
        rc = pv_vc_same_shape(&lp, &ref, "logprob", "ref_logprob", em);
    if (rc == PV_OK)
        rc = pv_vc_alloc(&kl, lp.rows, lp.L, em);
    if (rc == PV_OK)
        rc = pv_vc_alloc(&g, lp.rows, lp.L, em);
    if (rc == PV_OK) {
        size_t n = lp.rows * lp.L;
        if (f32)
            pv_kl_f32(spec, n, lp.f, ref.f, kl.f, g.f);
        else
            pv_kl_f64(spec, n, lp.d, ref.d, kl.d, g.d);
        json_object_set_new(out, "kl", pv_vc_json_mat(&kl, f32));
        json_object_set_new(out, "grad_wrt_logprob_of_sum", pv_vc_json_mat(&g, f32));
    }
    pv_vc_mat_free(&lp);
    pv_vc_mat_free(&ref);
    pv_vc_mat_free(&kl);
    pv_vc_mat_free(&g);
    return rc;
}

static pv_err_t s_returns(const json_t *c, json_t *out, pv_errmsg_t *em)
{
    pv_vc_mat_t r = {0}, ret = {0};
    int64_t *uid = NULL;
    pv_err_t rc = pv_verl_case_check_keys(c, PV_VC_RETURNS, "step returns", em);
    if (rc == PV_OK)
        rc = pv_vc_get_mat(c, "rewards", true, &r, em);
    if (rc == PV_OK)
        rc = pv_vc_alloc(&ret, r.rows, 1, em);
    if (rc == PV_OK && !(uid = calloc(r.rows, sizeof *uid)))
        rc = pv_errf(em, PV_ERR_NOMEM, "no memory for traj_uid");
    if (rc == PV_OK)
        rc = pv_vc_get_ids(c, "traj_uid", r.rows, uid, NULL, NULL, em);
    if (rc == PV_OK) {
        pv_step_discounted_returns(r.rows, r.f, uid, pv_vc_num(c, "gamma", 0.95), ret.f);
        json_t *a = json_array();
        for (size_t i = 0; i < r.rows; i++)
            json_array_append_new(a, json_real(ret.f[i]));
        json_object_set_new(out, "step_returns", a);
    }
    free(uid);
    pv_vc_mat_free(&r);
    pv_vc_mat_free(&ret);
    return rc;
}

static pv_err_t s_step_groups(const json_t *c, json_t *out, pv_errmsg_t *em)
{
    size_t rows = json_array_size(json_object_get(c, "anchor_obs"));
    if (!rows)
        return pv_errf(em, PV_ERR_INVAL, "'anchor_obs' must be a non-empty array");
    int64_t *idx = calloc(rows, sizeof *idx), *lab = calloc(rows, sizeof *lab);
    char **anchors = calloc(rows, sizeof *anchors);
    size_t *alen = calloc(rows, sizeof *alen);
    pv_err_t rc = idx && lab && anchors && alen ? PV_OK : pv_errf(em, PV_ERR_NOMEM, "no memory");
    if (rc == PV_OK)
        rc = pv_verl_case_check_keys(c, PV_VC_STEP_GROUPS, "step groups", em);
    if (rc == PV_OK)
        rc = pv_vc_get_ids(c, "index", rows, idx, NULL, NULL, em);
    if (rc == PV_OK)
        rc = pv_vc_get_ids(c, "anchor_obs", rows, lab, anchors, alen, em);
    if (rc == PV_OK)
        rc = pv_gigpo_step_groups(rows, (const char *const *)anchors, alen, idx,
                                  pv_vc_bool(c, "enable_similarity", false),
                                  pv_vc_num(c, "similarity_thresh", 0.95), lab, em);
    if (rc == PV_OK) {
        json_t *a = json_array();
        for (size_t i = 0; i < rows; i++)
            json_array_append_new(a, json_integer(lab[i]));
        json_object_set_new(out, "step_group_labels_first_occurrence", a);
    }
    for (size_t i = 0; anchors && i < rows; i++)
        free(anchors[i]);
    free(anchors);
    free(alen);
    free(idx);
    free(lab);
    return rc;
}

pv_err_t pv_verl_case_eval(const json_t *c, const char *estimator, bool f32, json_t **out,
                           pv_errmsg_t *em)
{
    if (json_is_object(c) && json_is_object(json_object_get(c, "inputs")))
        c = json_object_get(c, "inputs");
    if (!json_is_object(c))
        return pv_errf(em, PV_ERR_INVAL, "a case must be a JSON object");
    json_t *o = json_object();
    if (!o)
        return pv_errf(em, PV_ERR_NOMEM, "no memory");
    pv_err_t rc;
    if (json_object_get(c, "token_level_rewards"))
        rc = s_advantage(c, estimator, f32, o, em);
    else if (json_object_get(c, "old_log_prob"))
        rc = s_pg_loss(c, f32, o, em);
    else if (json_object_get(c, "loss_mat"))
        rc = s_agg(c, f32, o, em);
    else if (json_object_get(c, "ref_logprob"))
        rc = s_kl(c, f32, o, em);
    else if (json_object_get(c, "traj_uid"))
        rc = s_returns(c, o, em);
    else if (json_object_get(c, "anchor_obs"))
        rc = s_step_groups(c, o, em);
    else
        rc = pv_errf(em, PV_ERR_INVAL,
                     "unrecognised case: expected token_level_rewards, old_log_prob, loss_mat, "
                     "ref_logprob, traj_uid or anchor_obs");
    if (rc != PV_OK) {
        json_decref(o);
        return rc;
    }
    *out = o;
    return PV_OK;
}
