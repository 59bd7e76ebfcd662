/* searchqa.c - the searchqa family's model and episode operations; see searchqa.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/env/env_impl.h"
#include "common/env/searchqa_model.h"
#include "common/env/state_io.h"
#include "common/env/text_util.h"

#define S_STATE_VERSION 1u

static void s_model_destroy(void *model)
{
    sq_model_free(model);
}

static pv_err_t s_model_new(const pv_env_spec_t *spec, void **out, pv_errmsg_t *em)
{
    if (spec->top_k > PV_SEARCHQA_MAX_TOP_K)
        return pv_errf(em, PV_ERR_INVAL, "searchqa: top_k %u > %d", spec->top_k,
                       PV_SEARCHQA_MAX_TOP_K);
    if (spec->max_steps > PV_SEARCHQA_MAX_TURNS)
        return pv_errf(em, PV_ERR_INVAL, "searchqa: max_steps %u > %d", spec->max_steps,
                       PV_SEARCHQA_MAX_TURNS);
    sq_model_t *m = calloc(1, sizeof *m);
    if (!m)
        return PV_ERR_NOMEM;
    m->max_turns = spec->max_steps ? spec->max_steps : PV_SEARCHQA_MAX_STEPS;
    m->top_k = spec->top_k ? spec->top_k : PV_SEARCHQA_TOP_K;
    pv_err_t rc = pv_strpool_init(&m->str);
    if (!rc)
        rc = spec->data_path && *spec->data_path ? sq_load_real(m, spec->data_path, em)
                                                 : sq_generate(m, spec, em);
    if (!rc)
        rc = sq_model_finish(m, em);
    if (rc) {
        sq_model_free(m);
        return rc;
    }
    *out = m;
    return PV_OK;
}

static uint64_t s_n_tasks(const void *model, pv_env_split_t split)
{
    const sq_model_t *m = model;
    return split <= PV_SPLIT_TEST ? m->n_split[split] : 0;
}

static uint32_t s_max_steps(const void *model)
{
    return ((const sq_model_t *)model)->max_turns;
}

/* version, fingerprint, split, task, seed, question, turns, done, won, last, reward,
 * last_n, n_retrieved, retrieved[] */
static size_t s_state_max(const void *model)
{
    const sq_model_t *m = model;
    return 4 + 8 + 4 + 8 + 8 + 4 + 4 + 3 + 4 + 4 + 4 + 4 * (size_t)m->max_turns * m->top_k;
}

static void s_env_destroy(void *env)
{
    sq_env_t *e = env;
    if (!e)
        return;
    pv_fts_reader_destroy(&e->fts);
    free(e->obs);
    free(e->norm);
    free(e->pnorm);
    free(e);
}

static pv_err_t s_env_new(const void *model, void **out)
{
    const sq_model_t *m = model;
    sq_env_t *e = calloc(1, sizeof *e);
    if (!e)
        return PV_ERR_NOMEM;
    e->m = m;
    e->obs = calloc(1, m->obs_cap);
    e->norm = malloc(SQ_NORM_CAP);
    e->pnorm_cap = m->max_passage + m->max_passage / 2 + 1;
    e->pnorm = malloc(e->pnorm_cap);
    pv_err_t rc = e->obs && e->norm && e->pnorm ? pv_fts_reader_new(m->fts, &e->fts) : PV_ERR_NOMEM;
    if (rc) {
        s_env_destroy(e);
        return rc;
    }
    *out = e;
    return PV_OK;
}

pv_err_t sq_search(sq_env_t *e, const char *query, uint32_t *ids, uint32_t *n)
{
    uint32_t k = 0;
    pv_err_t rc = pv_fts_search(e->fts, query, e->m->top_k, e->hits, &k);
    *n = 0;
    for (uint32_t i = 0; !rc && i < k; i++)
        if (e->hits[i] >= 1 && (uint64_t)e->hits[i] <= e->m->n_passages)
            ids[(*n)++] = (uint32_t)(e->hits[i] - 1);
    return rc;
}

static void s_render(sq_env_t *e)
{
    const sq_model_t *m = e->m;
    const sq_state_t *st = &e->st;
    pv_sbuf_t b;
    pv_sbuf_init(&b, e->obs, m->obs_cap);
    switch (st->last) {
    case SQ_LAST_QUESTION:
        pv_sbuf_printf(&b, "Question: %s", sq_s(m, m->questions[st->question].question));
        break;
    case SQ_LAST_INVALID:
        pv_sbuf_put(&b, pv_searchr1_invalid_obs);
        break;
    case SQ_LAST_ANSWER:
        break;
    case SQ_LAST_INFO: {
        const char *contents[PV_SEARCHQA_MAX_TOP_K];
        for (uint32_t i = 0; i < st->last_n; i++)
            contents[i] =
                sq_s(m, m->passages[st->retrieved[st->n_retrieved - st->last_n + i]].contents);
        pv_searchr1_information(&b, contents, st->last_n);
        break;
    }
    }
}

static void s_result(const sq_env_t *e, bool admissible, pv_step_result_t *out)
{
    *out = (pv_step_result_t){.obs = e->obs,
                              .reward = e->st.last == SQ_LAST_ANSWER ? e->st.reward : 0.0f,
                              .done = e->st.done,
                              .won = e->st.won,
                              .admissible = admissible,
                              .n_steps = e->st.n_turns};
}

static pv_err_t s_reset(void *env, const pv_task_t *task, pv_step_result_t *out)
{
    sq_env_t *e = env;
    const sq_model_t *m = e->m;
    if (task->split > PV_SPLIT_TEST)
        return PV_ERR_INVAL;
    if (task->task_id >= m->n_split[task->split])
        return PV_ERR_RANGE;
    memset(&e->st, 0, sizeof e->st);
    e->st.split = task->split;
    e->st.task_id = task->task_id;
    e->st.seed = task->seed;
    e->st.question = m->split_q[task->split][task->task_id];
    e->st.last = SQ_LAST_QUESTION;
    e->started = true;
    e->acts_ok = false;
    e->ex_ok = false;
    e->plan.ok = false;
    s_render(e);
    s_result(e, true, out);
    return PV_OK;
}

/* Parse an action (searchqa.h): the kind, and its argument in action[*arg, *arg + *len). */
static pv_searchr1_kind_t s_parse(const char *a, const char **arg, size_t *len)
{
    static const char *const names[] = {"search[", "answer["};
    while (*a == ' ' || *a == '\t' || *a == '\n')
        a++;
    for (int k = 0; k < 2; k++) {
        const char *close = strrchr(a, ']');
        if (strncmp(a, names[k], 7) == 0 && close && close > a + 7) {
            *arg = a + 7;
            *len = (size_t)(close - *arg);
            return k == 0 ? PV_SEARCHR1_SEARCH : PV_SEARCHR1_ANSWER;
        }
    }
    size_t n = strlen(a);
    return pv_searchr1_parse(a, pv_searchr1_cut(a, n), arg, len);
}

/* em_check(answer, golden_answers) with the golden answers normalised at load time. */
bool sq_em(sq_env_t *e, uint32_t question, const char *arg, size_t len)
{
    const sq_question_t *q = &e->m->questions[question];
    if (len > SQ_ANSWER_MAX)
        len = SQ_ANSWER_MAX; /* longer than the wire carries */
    size_t n = pv_text_normalize_answer_n(e->norm, SQ_NORM_CAP, arg, len);
    for (uint32_t i = 0; n != PV_TEXT_TOO_LONG && i < q->n_answers; i++)
        if (strcmp(e->norm, sq_ref_s(e->m, q->answers_norm, i)) == 0)
            return true;
    return false;
}

/* Does normalised text `hay` hold the normalised answer `needle` (n bytes) as whole words? */
static bool s_has_words(const char *hay, const char *needle, size_t n)
{
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        if ((p == hay || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
            return true;
    return false;
}

/* Was st->retrieved[k] retrieved for the first time at k (no earlier search returned it)? */
static bool s_first_retrieval(const sq_state_t *st, uint32_t k)
{
    for (uint32_t j = 0; j < k; j++)
        if (st->retrieved[j] == st->retrieved[k])
            return false;
    return true;
}

/* Edges from the step being traced to the searches that first retrieved a passage (of
 * st->retrieved[0 .. n)) whose normalize_answer() text holds normalised `needle` (nl bytes)
 * as whole words: one edge per search, each search checked until one of its passages has
 * it (so a search beyond the edge bound is counted once in n_dropped). */
static void s_deps_holding(sq_env_t *e, uint32_t n, const char *needle, size_t nl)
{
    const sq_state_t *st = &e->st;
    int32_t last = -1; /* the last search given an edge */
    for (uint32_t k = 0; nl && k < n; k++) {
        int32_t step = e->ret_step[k];
        if (step < 0 || step == last || !s_first_retrieval(st, k))
            continue; /* before the load, that search is an edge already, or a repeat */
        const char *c = sq_s(e->m, e->m->passages[st->retrieved[k]].contents);
        if (pv_text_normalize_answer(e->pnorm, e->pnorm_cap, c) == PV_TEXT_TOO_LONG ||
            !s_has_words(e->pnorm, needle, nl))
            continue;
        pv_env_trace_add_dep(&e->trace, (uint32_t)step);
        last = step;
    }
}

/* The atom trace of a correct answer (e->norm holds its normalize_answer()): it makes the
 * goal atom 0, "the answer", and depends on the searches that first retrieved a passage
 * holding it. */
static void s_trace_answer(sq_env_t *e)
{
    pv_env_trace_t *t = &e->trace;
    t->made[t->n_made++] = 0;
    s_deps_holding(e, e->st.n_retrieved, e->norm, strlen(e->norm));
}

/* The atom trace of a search for query[0..len) (before its passages join st->retrieved):
 * a query that is not in the question (normalised, whole words) came from a passage, so
 * the search depends on the searches that first retrieved a passage holding it - the
 * bridge of a multi-hop question. Uses e->norm and e->pnorm. */
static void s_trace_search(sq_env_t *e, const char *query, size_t len)
{
    const sq_model_t *m = e->m;
    size_t nl = pv_text_normalize_answer_n(e->norm, SQ_NORM_CAP, query, len);
    if (nl == PV_TEXT_TOO_LONG || nl == 0)
        return;
    const char *q = sq_s(m, m->questions[e->st.question].question);
    if (pv_text_normalize_answer(e->pnorm, e->pnorm_cap, q) == PV_TEXT_TOO_LONG ||
        s_has_words(e->pnorm, e->norm, nl))
        return; /* too long to tell, or the question's own words */
    s_deps_holding(e, e->st.n_retrieved, e->norm, nl);
}

static pv_err_t s_step(void *env, const char *action, pv_step_result_t *out)
{
    sq_env_t *e = env;
    sq_state_t *st = &e->st;
    const sq_model_t *m = e->m;
    if (!e->started || st->done)
        return PV_ERR_STATE;
    const char *arg = NULL;
    size_t arg_len = 0;
    pv_searchr1_kind_t kind = s_parse(action, &arg, &arg_len);
    int32_t step = (int32_t)st->n_turns;
    memset(&e->trace, 0, sizeof e->trace);
    st->n_turns++;
    st->last_n = 0;
    if (kind == PV_SEARCHR1_SEARCH) {
        char query[2048];
        size_t ql = arg_len < sizeof query - 1 ? arg_len : sizeof query - 1;
        memcpy(query, arg, ql);
        query[ql] = '\0';
        s_trace_search(e, query, ql);
        uint32_t n = 0;
        pv_err_t rc = sq_search(e, query, st->retrieved + st->n_retrieved, &n);
        if (rc)
            return rc;
        for (uint32_t j = 0; j < n; j++)
            e->ret_step[st->n_retrieved + j] = step;
        st->n_retrieved += n;
        st->last_n = n;
        st->last = SQ_LAST_INFO;
    } else if (kind == PV_SEARCHR1_ANSWER) {
        bool em = sq_em(e, st->question, arg, arg_len);
        st->reward = em ? 1.0f : 0.0f;
        st->won = em;
        st->done = 1;
        st->last = SQ_LAST_ANSWER;
        if (em)
            s_trace_answer(e);
    } else {
        st->last = SQ_LAST_INVALID;
    }
    if (!st->done && st->n_turns >= m->max_turns)
        st->done = 1;
    e->acts_ok = false;
    s_render(e);
    s_result(e, kind != 0, out);
    out->trace = &e->trace;
    return PV_OK;
}

/* Goal atom 0 is the answer: "answer(GOLD)" with the question's first golden answer. */
static pv_err_t s_atom_name(const void *env, uint32_t atom, char *buf, size_t cap)
{
    const sq_env_t *e = env;
    if (!e->started)
        return PV_ERR_STATE;
    const sq_question_t *q = &e->m->questions[e->st.question];
    return pv_env_atom_one(atom, "answer", q->n_answers ? sq_ref_s(e->m, q->answers, 0) : "", buf,
                           cap);
}

static const char *s_task_text(const void *env)
{
    const sq_env_t *e = env;
    return e->started ? sq_s(e->m, e->m->questions[e->st.question].question) : "";
}

static pv_err_t s_admissible(void *env, const char *const **actions, size_t *n)
{
    sq_env_t *e = env;
    if (!e->started)
        return PV_ERR_STATE;
    if (!e->acts_ok) {
        sq_candidates(e->m, &e->st, &e->cands);
        e->acts_ok = true;
    }
    *actions = e->cands.acts;
    *n = e->cands.n;
    return PV_OK;
}

/* Key of the question state: the question, the passages retrieved so far (they record the
 * searches made) and the outcome; not n_turns, and not which observation came last (an
 * invalid action changes what is shown, not what is known). Field by field. */
static uint64_t s_state_key(const void *env)
{
    const sq_env_t *e = env;
    const sq_state_t *st = &e->st;
    if (!e->started)
        return 0;
    uint64_t ids[7] = {st->split, st->task_id, st->seed,       st->question,
                       st->done,  st->won,     st->n_retrieved};
    uint64_t k = pv_env_key_mix(0x7365617263687161ULL, ids, sizeof ids);
    k = pv_env_key_mix(k, &st->reward, sizeof st->reward);
    return pv_env_key_mix(k, st->retrieved, st->n_retrieved * sizeof st->retrieved[0]);
}

static pv_err_t s_save(const void *env, uint8_t *buf, size_t cap, size_t *len)
{
    const sq_env_t *e = env;
    if (!e->started)
        return PV_ERR_STATE;
    const sq_state_t *st = &e->st;
    pv_sio_t s = {.w = buf, .cap = cap};
    pv_sio_head(&s, S_STATE_VERSION, e->m->fingerprint);
    pv_sio_u32(&s, st->split);
    pv_sio_u64(&s, st->task_id);
    pv_sio_u64(&s, st->seed);
    pv_sio_u32(&s, st->question);
    pv_sio_u32(&s, st->n_turns);
    pv_sio_u8(&s, st->done);
    pv_sio_u8(&s, st->won);
    pv_sio_u8(&s, st->last);
    pv_sio_f32(&s, st->reward);
    pv_sio_u32(&s, st->last_n);
    pv_sio_u32(&s, st->n_retrieved);
    for (uint32_t i = 0; i < st->n_retrieved; i++)
        pv_sio_u32(&s, st->retrieved[i]);
    if (s.bad)
        return PV_ERR_LIMIT;
    *len = s.len;
    return PV_OK;
}

static pv_err_t s_check(const sq_model_t *m, const sq_state_t *st, pv_errmsg_t *em)
{
#define S_BAD(...) pv_errf(em, PV_ERR_DATA, "searchqa state: " __VA_ARGS__)
    if (st->split > PV_SPLIT_TEST || st->task_id >= m->n_split[st->split] ||
        st->question != m->split_q[st->split][st->task_id])
        return S_BAD("task %u/%llu or question %u outside the model", st->split,
                     (unsigned long long)st->task_id, st->question);
    /* the last turn ends the episode (s_step): a state past it, or at it and not over, would
     * step beyond max_turns (retrieved[] holds max_turns * top_k ids) */
    if (st->n_turns > m->max_turns || st->done > 1 || st->won > 1 || (st->won && !st->done) ||
        (st->n_turns == m->max_turns && !st->done) || st->last > SQ_LAST_ANSWER)
        return S_BAD("bad turn count or flags");
    if (st->reward != (st->won ? 1.0f : 0.0f))
        return S_BAD("reward %g does not fit the outcome", (double)st->reward);
    if ((st->won && st->last != SQ_LAST_ANSWER) || (st->last == SQ_LAST_ANSWER && !st->done) ||
        ((st->last == SQ_LAST_QUESTION) != (st->n_turns == 0)) ||
        (st->last == SQ_LAST_QUESTION && st->n_retrieved))
        return S_BAD("last observation %u does not fit the state", st->last);
    if (st->n_retrieved > (size_t)st->n_turns * m->top_k || st->last_n > m->top_k ||
        st->last_n > st->n_retrieved || (st->last != SQ_LAST_INFO && st->last_n))
        return S_BAD("%u passages retrieved (%u last) in %u turns", st->n_retrieved, st->last_n,
                     st->n_turns);
    for (uint32_t i = 0; i < st->n_retrieved; i++)
        if (st->retrieved[i] >= m->n_passages)
            return S_BAD("passage %u of %zu", st->retrieved[i], m->n_passages);
    return PV_OK;
#undef S_BAD
}

static pv_err_t s_load(void *env, const uint8_t *buf, size_t len, pv_errmsg_t *em)
{
    sq_env_t *e = env;
    const sq_model_t *m = e->m;
    sq_state_t st;
    memset(&st, 0, sizeof st);
    pv_sio_t s = {.r = buf, .cap = len};
    pv_err_t rc = pv_sio_check_head(&s, S_STATE_VERSION, m->fingerprint, "searchqa", em);
    if (rc)
        return rc;
    st.split = pv_sio_get_u32(&s);
    st.task_id = pv_sio_get_u64(&s);
    st.seed = pv_sio_get_u64(&s);
    st.question = pv_sio_get_u32(&s);
    st.n_turns = pv_sio_get_u32(&s);
    st.done = pv_sio_get_u8(&s);
    st.won = pv_sio_get_u8(&s);
    st.last = pv_sio_get_u8(&s);
    st.reward = pv_sio_get_f32(&s);
    st.last_n = pv_sio_get_u32(&s);
    st.n_retrieved = pv_sio_get_u32(&s);
    if (!s.bad && st.n_retrieved > SQ_MAX_RETRIEVED)
        return pv_errf(em, PV_ERR_DATA, "searchqa state: %u passages", st.n_retrieved);
    for (uint32_t i = 0; i < st.n_retrieved && !s.bad; i++)
        st.retrieved[i] = pv_sio_get_u32(&s);
    if (s.bad)
        return pv_errf(em, PV_ERR_TRUNCATED, "searchqa state: %zu bytes are too few", len);
    if (s.len != len)
        return pv_errf(em, PV_ERR_DATA, "searchqa state: %zu bytes after the state", len - s.len);
    if (!isfinite(st.reward))
        return pv_errf(em, PV_ERR_DATA, "searchqa state: reward is not a number");
    if ((rc = s_check(m, &st, em)))
        return rc;
    e->st = st;
    e->started = true;
    e->acts_ok = false;
    e->ex_ok = false;
    for (uint32_t k = 0; k < st.n_retrieved; k++)
        e->ret_step[k] = -1; /* retrieved before the load: no step of ours */
    e->plan.ok = false;
    s_render(e);
    return PV_OK;
}

static void s_info(const void *model, pv_env_info_t *out)
{
    const sq_model_t *m = model;
    *out = (pv_env_info_t){
        .summary = m->summary, .warnings = m->warnings, .n_skipped = m->skips.total};
}

const pv_env_ops_t pv_searchqa_ops = {
    .kind = PV_ENV_SEARCHQA,
    .name = "searchqa",
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
    .admissible = s_admissible,
    .save = s_save,
    .state_key = s_state_key,
    .load = s_load,
    .expert_action = sq_expert_action,
    .expert_plan_len = sq_expert_plan_len,
    .info = s_info,
    .atom_name = s_atom_name,
};
