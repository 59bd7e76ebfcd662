/* webshop.c - the webshop family's model and episode operations; see webshop.h. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/env/env_impl.h"
#include "common/env/state_io.h"
#include "common/env/text_util.h"
#include "common/env/webshop_env.h"

#define S_STATE_VERSION 1u

/* ---- model -------------------------------------------------------------------------------- */

static void s_model_destroy(void *model)
{
    ws_model_t *m = model;
    if (!m)
        return;
    pv_fts_destroy(&m->fts);
    pv_strpool_free(&m->str);
    pv_u32vec_free(&m->refs);
    free(m->products);
    free(m->options);
    free(m->goals);
    free(m->split_goals[0]);
    free(m->split_goals[1]);
    free(m);
}

static pv_err_t s_model_new(const pv_env_spec_t *spec, void **out, pv_errmsg_t *em)
{
    ws_model_t *m = calloc(1, sizeof *m);
    if (!m)
        return PV_ERR_NOMEM;
    m->max_steps = spec->max_steps ? spec->max_steps : PV_WEBSHOP_MAX_STEPS;
    m->seed = spec->seed;
    pv_err_t rc = pv_strpool_init(&m->str);
    if (!rc) {
        if (spec->data_path && *spec->data_path)
            rc = ws_load_real(m, spec->data_path, em);
        else
            rc = ws_generate(m, spec, em);
    }
    if (!rc)
        rc = ws_model_finish(m, em);
    if (rc) {
        s_model_destroy(m);
        return rc;
    }
    *out = m;
    return PV_OK;
}

static uint64_t s_n_tasks(const void *model, pv_env_split_t split)
{
    const ws_model_t *m = model;
    return split <= PV_SPLIT_TEST ? m->n_split[split] : 0;
}

static uint32_t s_max_steps(const void *model)
{
    return ((const ws_model_t *)model)->max_steps;
}

/* version, fingerprint, split, task, seed, goal, steps, done, won, page, reward, page_no,
 * product, sel[], query (len + bytes), n_results, results[] */
static size_t s_state_max(const void *model)
{
    (void)model;
    return 4 + 8 + 4 + 8 + 8 + 4 + 4 + 3 + 4 + 4 + 4 + 2 * PV_WEBSHOP_MAX_OPTNAMES + 4 +
           PV_WEBSHOP_QUERY_MAX + 4 + 4 * PV_WEBSHOP_RESULTS_MAX;
}

/* ---- instance ----------------------------------------------------------------------------- */

static void s_env_destroy(void *env)
{
    ws_env_t *e = env;
    if (!e)
        return;
    pv_fts_reader_destroy(&e->fts);
    free(e->obs);
    free(e->acts_text);
    free(e);
}

static pv_err_t s_env_new(const void *model, void **out)
{
    const ws_model_t *m = model;
    ws_env_t *e = calloc(1, sizeof *e);
    if (!e)
        return PV_ERR_NOMEM;
    e->m = m;
    e->obs = calloc(1, m->obs_cap);
    e->acts_text = calloc(1, m->act_cap);
    pv_err_t rc = e->obs && e->acts_text ? pv_fts_reader_new(m->fts, &e->fts) : PV_ERR_NOMEM;
    if (rc) {
        s_env_destroy(e);
        return rc;
    }
    *out = e;
    return PV_OK;
}

pv_err_t ws_search(ws_env_t *e, const char *query, uint32_t *results, uint32_t *n_results)
{
    uint32_t n = 0;
    pv_err_t rc = pv_fts_search(e->fts, query, PV_WEBSHOP_RESULTS_MAX, e->hits, &n);
    *n_results = 0;
    if (rc)
        return rc;
    for (uint32_t i = 0; i < n; i++)
        if (e->hits[i] >= 1 && (uint64_t)e->hits[i] <= e->m->n_products)
            results[(*n_results)++] = (uint32_t)(e->hits[i] - 1);
    return PV_OK;
}

/* ---- episode ------------------------------------------------------------------------------ */

static void s_result(const ws_env_t *e, bool admissible, float reward, pv_step_result_t *out)
{
    *out = (pv_step_result_t){.obs = e->obs,
                              .reward = reward,
                              .done = e->st.done,
                              .won = e->st.won,
                              .admissible = admissible,
                              .n_steps = e->st.n_steps};
}

static pv_err_t s_reset(void *env, const pv_task_t *task, pv_step_result_t *out)
{
    ws_env_t *e = env;
    const ws_model_t *m = e->m;
    if (task->split > PV_SPLIT_TEST)
        return PV_ERR_INVAL;
    if (task->task_id >= m->n_split[task->split])
        return PV_ERR_RANGE;
    memset(&e->st, 0, sizeof e->st);
    e->st.split = task->split;
    e->st.task_id = task->task_id;
    e->st.seed = task->seed;
    e->st.goal = m->split_goals[task->split][task->task_id];
    e->st.page = WS_PAGE_SEARCH;
    e->st.product = WS_NONE;
    memset(e->st.sel, 0xff, sizeof e->st.sel);
    e->started = true;
    e->acts_ok = false;
    e->ex_ok = false;
    ws_trace_forget(e);
    ws_render(e);
    s_result(e, true, 0.0f, out);
    return PV_OK;
}

static void s_buy(ws_env_t *e)
{
    ws_state_t *st = &e->st;
    pv_webshop_score_t score;
    ws_score_state(e, &score);
    st->reward = (float)score.reward;
    st->won = score.reward >= 1.0;
    st->done = 1;
    st->page = WS_PAGE_DONE;
}

static void s_to_results(ws_state_t *st, uint32_t page_no)
{
    st->page = WS_PAGE_RESULTS;
    st->page_no = page_no;
    st->product = WS_NONE;
    memset(st->sel, 0xff, sizeof st->sel); /* search_results() clears the options */
}

/* Apply a click; false when it is not a clickable of this page. */
static bool s_click(ws_env_t *e, const char *arg)
{
    ws_state_t *st = &e->st;
    uint32_t a = 0, b = 0;
    switch (ws_resolve(e, arg, &a, &b)) {
    case WS_CLICK_NONE:
        return false;
    case WS_CLICK_BUY:
        s_buy(e);
        break;
    case WS_CLICK_BACK:
        st->page = WS_PAGE_SEARCH;
        st->page_no = 0;
        st->product = WS_NONE;
        st->n_results = 0;
        st->query[0] = '\0';
        memset(st->sel, 0xff, sizeof st->sel);
        break;
    case WS_CLICK_NEXT:
        s_to_results(st, st->page_no + 1);
        break;
    case WS_CLICK_PREV:
        if (st->page == WS_PAGE_RESULTS)
            s_to_results(st, st->page_no - 1);
        else if (st->page == WS_PAGE_ITEM)
            s_to_results(st, st->page_no);
        else
            st->page = WS_PAGE_ITEM;
        break;
    case WS_CLICK_DESC:
        st->page = WS_PAGE_DESC;
        break;
    case WS_CLICK_FEAT:
        st->page = WS_PAGE_FEAT;
        break;
    case WS_CLICK_REV:
        st->page = WS_PAGE_REV;
        break;
    case WS_CLICK_PRODUCT:
        st->page = WS_PAGE_ITEM;
        st->product = a;
        break;
    case WS_CLICK_OPTION:
        st->sel[a] = (uint16_t)b;
        e->clicked_opt = (int32_t)a;
        break;
    }
    return true;
}

/* Split "name[arg]" (webshop.h); returns false when the text has no such shape. */
static bool s_parse(const char *action, char *name, size_t name_cap, char *arg, size_t arg_cap)
{
    while (*action == ' ' || *action == '\t' || *action == '\n')
        action++;
    const char *open = strchr(action, '[');
    const char *close = strrchr(action, ']');
    if (!open || !close || close <= open + 1 || (size_t)(open - action) >= name_cap)
        return false;
    memcpy(name, action, (size_t)(open - action));
    name[open - action] = '\0';
    size_t n = (size_t)(close - open - 1); /* action_arg.lower() */
    if (pv_text_py_lower(arg, arg_cap, open + 1, n) == PV_TEXT_TOO_LONG)
        pv_text_py_lower(arg, arg_cap, open + 1, (arg_cap - 1) * 2 / 3); /* cut: fits */
    return true;
}

static pv_err_t s_step(void *env, const char *action, pv_step_result_t *out)
{
    ws_env_t *e = env;
    ws_state_t *st = &e->st;
    if (!e->started || st->done)
        return PV_ERR_STATE;
    int32_t step = (int32_t)st->n_steps;
    ws_state_t old;
    memcpy(&old, st, offsetof(ws_state_t, n_results)); /* what a click compares */
    memset(&e->trace, 0, sizeof e->trace);
    e->clicked_opt = -1;
    st->n_steps++;
    char name[16], arg[1024];
    bool ok = false, search = false;
    if (s_parse(action, name, sizeof name, arg, sizeof arg)) {
        if (strcmp(name, "search") == 0) {
            search = true;
            ok = true;
            size_t ql = strlen(arg) < PV_WEBSHOP_QUERY_MAX ? strlen(arg) : PV_WEBSHOP_QUERY_MAX;
            memcpy(st->query, arg, ql);
            st->query[ql] = '\0';
            pv_err_t rc = ws_search(e, st->query, st->results, &st->n_results);
            if (rc)
                return rc;
            s_to_results(st, 1);
        } else if (strcmp(name, "click") == 0 && strcmp(arg, "search") != 0) {
            ok = s_click(e, arg);
        }
    }
    if (ok)
        e->acts_ok = false;
    if (!st->done && st->n_steps >= e->m->max_steps)
        st->done = 1;
    if (ok)
        ws_render(e);
    ws_trace_step(e, &old, ok, search, step);
    s_result(e, ok, st->page == WS_PAGE_DONE && ok ? st->reward : 0.0f, out);
    out->trace = &e->trace;
    return PV_OK;
}

static const char *s_task_text(const void *env)
{
    const ws_env_t *e = env;
    return e->started ? ws_s(e->m, ws_goal_of(e)->instruction) : "";
}

/* ---- save / load ---------------------------------------------------------------------------- */

/* Key of the shopping state: everything in ws_state_t but n_steps, field by field (the
 * struct has padding). */
static uint64_t s_state_key(const void *env)
{
    const ws_env_t *e = env;
    const ws_state_t *st = &e->st;
    if (!e->started)
        return 0;
    uint64_t ids[10] = {st->split, st->task_id, st->seed,    st->goal,    st->done,
                        st->won,   st->page,    st->page_no, st->product, st->n_results};
    uint64_t k = pv_env_key_mix(0x77656273686f70ULL, ids, sizeof ids);
    k = pv_env_key_mix(k, &st->reward, sizeof st->reward);
    k = pv_env_key_mix(k, st->sel, sizeof st->sel);
    k = pv_env_key_mix(k, st->results, st->n_results * sizeof st->results[0]);
    return pv_env_key_mix(k, st->query, strnlen(st->query, sizeof st->query));
}

/* The task key: the goal, the product on the item pages (none while searching or
 * browsing results), the options chosen and the outcome. */
static uint64_t s_task_key(const void *env)
{
    const ws_env_t *e = env;
    const ws_state_t *st = &e->st;
    if (!e->started)
        return 0;
    uint64_t ids[6] = {st->split, st->task_id, st->seed, st->goal, st->done, st->won};
    uint64_t k = pv_env_key_mix(0x77737461736bULL, ids, sizeof ids);
    k = pv_env_key_mix(k, &st->product, sizeof st->product);
    k = pv_env_key_mix(k, &st->reward, sizeof st->reward);
    return pv_env_key_mix(k, st->sel, sizeof st->sel);
}

static pv_err_t s_save(const void *env, uint8_t *buf, size_t cap, size_t *len)
{
    const ws_env_t *e = env;
    if (!e->started)
        return PV_ERR_STATE;
    const ws_state_t *st = &e->st;
    pv_sio_t s = {.w = buf, .cap = cap};
    pv_sio_head(&s, S_STATE_VERSION, e->m->fingerprint);
    pv_sio_u32(&s, st->split);
    pv_sio_u64(&s, st->task_id);
    pv_sio_u64(&s, st->seed);
    pv_sio_u32(&s, st->goal);
    pv_sio_u32(&s, st->n_steps);
    pv_sio_u8(&s, st->done);
    pv_sio_u8(&s, st->won);
    pv_sio_u8(&s, st->page);
    pv_sio_f32(&s, st->reward);
    pv_sio_u32(&s, st->page_no);
    pv_sio_u32(&s, st->product);
    for (int i = 0; i < PV_WEBSHOP_MAX_OPTNAMES; i++) {
        pv_sio_u8(&s, (uint8_t)st->sel[i]);
        pv_sio_u8(&s, (uint8_t)(st->sel[i] >> 8));
    }
    uint32_t ql = (uint32_t)strlen(st->query);
    pv_sio_u32(&s, ql);
    pv_sio_put(&s, st->query, ql);
    pv_sio_u32(&s, st->n_results);
    for (uint32_t i = 0; i < st->n_results; i++)
        pv_sio_u32(&s, st->results[i]);
    if (s.bad)
        return PV_ERR_LIMIT;
    *len = s.len;
    return PV_OK;
}

static pv_err_t s_check(const ws_model_t *m, const ws_state_t *st, pv_errmsg_t *em)
{
#define S_BAD(...) pv_errf(em, PV_ERR_DATA, "webshop state: " __VA_ARGS__)
    if (st->split > PV_SPLIT_TEST || st->task_id >= m->n_split[st->split])
        return S_BAD("task %u/%llu outside the model", st->split, (unsigned long long)st->task_id);
    if (st->goal != m->split_goals[st->split][st->task_id])
        return S_BAD("goal %u does not belong to task %llu", st->goal,
                     (unsigned long long)st->task_id);
    if (st->n_steps > m->max_steps || st->done > 1 || st->won > 1 || (st->won && !st->done))
        return S_BAD("bad step count or flags");
    if (st->page > WS_PAGE_DONE || !isfinite(st->reward) || st->reward < 0 || st->reward > 100)
        return S_BAD("bad page %u or reward", st->page);
    if (st->n_results > PV_WEBSHOP_RESULTS_MAX)
        return S_BAD("%u results", st->n_results);
    for (uint32_t i = 0; i < st->n_results; i++) {
        if (st->results[i] >= m->n_products)
            return S_BAD("result %u is product %u of %zu", i, st->results[i], m->n_products);
        for (uint32_t j = 0; j < i; j++)
            if (st->results[j] == st->results[i])
                return S_BAD("product %u listed twice", st->results[i]);
    }
    bool on_product = st->page >= WS_PAGE_ITEM;
    if (on_product != (st->product != WS_NONE) || (on_product && st->product >= m->n_products))
        return S_BAD("product %u does not fit page %u", st->product, st->page);
    if (st->page == WS_PAGE_SEARCH ? st->n_results || st->page_no || st->query[0]
                                   : st->page != WS_PAGE_DONE && st->page_no == 0)
        return S_BAD("page number %u or results do not fit page %u", st->page_no, st->page);
    if (st->page_no > 1000000)
        return S_BAD("page number %u", st->page_no);
    for (uint32_t o = 0; o < PV_WEBSHOP_MAX_OPTNAMES; o++) {
        if (st->sel[o] == WS_SEL_NONE)
            continue;
        const ws_product_t *p = on_product ? &m->products[st->product] : NULL;
        if (!p || o >= p->n_options || st->sel[o] >= m->options[p->options + o].n_values)
            return S_BAD("selected option %u value %u does not exist", o, st->sel[o]);
    }
    return PV_OK;
#undef S_BAD
}

static pv_err_t s_load(void *env, const uint8_t *buf, size_t len, pv_errmsg_t *em)
{
    ws_env_t *e = env;
    const ws_model_t *m = e->m;
    ws_state_t st = {0};
    pv_sio_t s = {.r = buf, .cap = len};
    pv_err_t rc = pv_sio_check_head(&s, S_STATE_VERSION, m->fingerprint, "webshop", em);
    if (rc)
        return rc;
    st.split = pv_sio_get_u32(&s);
    st.task_id = pv_sio_get_u64(&s);
    st.seed = pv_sio_get_u64(&s);
    st.goal = pv_sio_get_u32(&s);
    st.n_steps = pv_sio_get_u32(&s);
    st.done = pv_sio_get_u8(&s);
    st.won = pv_sio_get_u8(&s);
    st.page = pv_sio_get_u8(&s);
    st.reward = pv_sio_get_f32(&s);
    st.page_no = pv_sio_get_u32(&s);
    st.product = pv_sio_get_u32(&s);
    for (int i = 0; i < PV_WEBSHOP_MAX_OPTNAMES; i++) {
        uint16_t lo = pv_sio_get_u8(&s);
        st.sel[i] = (uint16_t)(lo | pv_sio_get_u8(&s) << 8);
    }
    uint32_t ql = pv_sio_get_u32(&s);
    if (!s.bad && ql > PV_WEBSHOP_QUERY_MAX)
        return pv_errf(em, PV_ERR_DATA, "webshop state: query of %u bytes", ql);
    pv_sio_get(&s, st.query, ql);
    st.query[ql] = '\0';
    if (!s.bad && strlen(st.query) != ql)
        return pv_errf(em, PV_ERR_DATA, "webshop state: NUL inside the query");
    st.n_results = pv_sio_get_u32(&s);
    if (!s.bad && st.n_results > PV_WEBSHOP_RESULTS_MAX)
        return pv_errf(em, PV_ERR_DATA, "webshop state: %u results", st.n_results);
    for (uint32_t i = 0; i < st.n_results && !s.bad; i++)
        st.results[i] = pv_sio_get_u32(&s);
    if (s.bad)
        return pv_errf(em, PV_ERR_TRUNCATED, "webshop state: %zu bytes are too few", len);
    if (s.len != len)
        return pv_errf(em, PV_ERR_DATA, "webshop state: %zu bytes after the state", len - s.len);
    if ((rc = s_check(m, &st, em)))
        return rc;
    e->st = st;
    e->started = true;
    e->acts_ok = false;
    e->ex_ok = false;
    ws_trace_forget(e);
    ws_render(e);
    return PV_OK;
}

static void s_info(const void *model, pv_env_info_t *out)
{
    const ws_model_t *m = model;
    *out = (pv_env_info_t){
        .summary = m->summary, .warnings = m->warnings, .n_skipped = m->skips.total};
}

const pv_env_ops_t pv_webshop_ops = {
    .kind = PV_ENV_WEBSHOP,
    .name = "webshop",
    .model_new = s_model_new,
    .model_destroy = s_model_destroy,
    .n_tasks = s_n_tasks,
    .max_steps = s_max_steps,
    .state_max = s_state_max,
    .env_new = s_env_new,
    .env_destroy = s_env_destroy,
    .reset = s_reset,
    .step = s_step,
    .task_text = s_task_text,
    .admissible = ws_admissible,
    .save = s_save,
    .state_key = s_state_key,
    .task_key = s_task_key,
    .load = s_load,
    .expert_action = ws_expert_action,
    .expert_plan_len = ws_expert_plan_len,
    .info = s_info,
    .atom_name = ws_atom_name,
};
