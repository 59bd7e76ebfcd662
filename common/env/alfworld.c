/* alfworld.c - the alfworld family behind env.h: model (loaded game files or the embedded
 * generator), instances, reset/step/admissible, save/load and the expert hooks.
 *
 * Saved payload (after env.c's header), little-endian, format version 1:
 *     u32 version, u64 model fingerprint, u32 split, u64 task_id, u64 seed,
 *     u32 n_steps, u32 flags (bit 0 won, bit 1 done), u32 n_atoms,
 *     u64 fd[n_words], u64 neg[n_words]          (n_words = ceil(n_atoms / 64))
 * The game itself is not saved: it is rebuilt from (split, task_id, seed) on an equal model.
 */
#include <stdlib.h>
#include <string.h>

#include "common/env/alfworld_expert.h"
#include "common/env/alfworld_gen.h"
#include "common/env/alfworld_load.h"
#include "common/env/alfworld_trace.h"
#include "common/env/env_impl.h"
#include "common/rng.h"

#define S_PAYLOAD_VER 1u
#define S_HDR         48u
#define S_MAX_WORDS   ((PV_ALF_MAX_ATOMS + 63) / 64)
#define S_FLAG_WON    1u
#define S_FLAG_DONE   2u

typedef struct s_model {
    uint32_t max_steps;
    bool search_expert; /* env.expert = search: pv_alf_search_action, not the planner */
    uint64_t seed;
    pv_alf_gen_cfg_t gen;
    bool generated;
    pv_arena_t *arena; /* embedded domain and grammar */
    const pv_alf_domain_t *dom;
    const pv_alf_grammar_t *gram;
    pv_alf_files_t files;
    uint32_t n_split[2];
    uint32_t *split_file[2];
    uint32_t max_words;
    uint64_t fingerprint;
} s_model_t;

typedef struct s_env {
    const s_model_t *m;
    pv_arena_t *ga;   /* the current game */
    pv_alf_gws_t *ws; /* grounding scratch */
    pv_alf_game_t *g;
    bool have;
    uint32_t k_split;
    uint64_t k_task, k_seed;
    bool started, done, won;
    uint32_t n_steps;
    uint64_t *fd, *neg;
    uint64_t *scratch; /* 2 * S_MAX_WORDS: a state being loaded */
    uint32_t *ranks;
    const char **adm;
    uint32_t n_adm;
    bool adm_ok;
    pv_alf_expert_t *ex;
    pv_alf_tracer_t tracer; /* the current game's goal atoms and establishing steps */
    pv_env_trace_t trace;   /* the last step's atom trace */
    char obs[PV_ALF_OBS_CAP];
} s_env_t;

/* ---------------------------------------------------------------- little-endian I/O */

static void s_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void s_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t s_get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}
static uint64_t s_get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* ---------------------------------------------------------------- model */

static void s_model_destroy(void *mp)
{
    s_model_t *m = mp;
    if (!m)
        return;
    pv_alf_files_free(&m->files);
    free(m->split_file[0]);
    free(m->split_file[1]);
    pv_arena_destroy(&m->arena);
    free(m);
}

/* Validate every game file (each is parsed and grounded once) and assign splits. */
static pv_err_t s_load_files(s_model_t *m, const char *path, pv_errmsg_t *em)
{
    pv_err_t rc = pv_alf_scan(path, &m->files, em);
    if (rc != PV_OK)
        return rc;
    pv_arena_t *tmp = NULL;
    pv_alf_gws_t *ws = NULL;
    if ((rc = pv_arena_new(1 << 20, 0, &tmp)) != PV_OK || (rc = pv_alf_gws_new(&ws)) != PV_OK) {
        pv_arena_destroy(&tmp);
        return rc;
    }
    for (int s = 0; s < 2; s++) {
        m->split_file[s] = calloc(m->files.n + 1, sizeof *m->split_file[s]);
        if (!m->split_file[s]) {
            rc = PV_ERR_NOMEM;
            goto out;
        }
    }
    /* the fingerprint covers each game's path below data_path (the file name for a single
     * file) and its size in atoms, operators and commands, so hosts may mount data anywhere */
    bool single = m->files.n == 1 && m->files.split[0] == 3;
    m->fingerprint = pv_alf_hash("alfworld-files", 14, PV_ALF_HASH_SEED);
    for (uint32_t i = 0; i < m->files.n; i++) {
        pv_arena_reset(tmp);
        pv_alf_game_t *g = NULL;
        int solvable = -1;
        if ((rc = pv_alf_read_game(ws, tmp, m->files.path[i], &g, &solvable, em)) != PV_OK)
            goto out;
        if (solvable == 0)
            continue;
        if (m->gen.type_mask && !((m->gen.type_mask >> g->task_type) & 1u))
            continue;
        if (g->n_words > m->max_words)
            m->max_words = g->n_words;
        const char *rel = m->files.path[i] + (single ? 0 : strlen(path));
        if (single && strrchr(rel, '/'))
            rel = strrchr(rel, '/') + 1;
        uint32_t size[3] = {g->n_atoms, g->n_ops, g->n_cmds};
        m->fingerprint = pv_alf_hash(rel, strlen(rel) + 1, m->fingerprint);
        m->fingerprint = pv_alf_hash(size, sizeof size, m->fingerprint);
        m->fingerprint = pv_alf_hash(&m->files.split[i], 1, m->fingerprint);
        for (int s = 0; s < 2; s++)
            if ((m->files.split[i] >> s) & 1u)
                m->split_file[s][m->n_split[s]++] = i;
    }
    if (m->n_split[0] + m->n_split[1] == 0)
        rc = pv_errf(em, PV_ERR_DATA,
                     "%s: no playable game (all unsolvable or filtered out by "
                     "the task-type mask)",
                     path);
out:
    pv_alf_gws_destroy(&ws);
    pv_arena_destroy(&tmp);
    return rc;
}

static pv_err_t s_model_new(const pv_env_spec_t *spec, void **out, pv_errmsg_t *em)
{
    s_model_t *m = calloc(1, sizeof *m);
    if (!m)
        return PV_ERR_NOMEM;
    m->max_steps = spec->max_steps ? spec->max_steps : PV_ALF_DEFAULT_STEPS;
    m->seed = spec->seed;
    m->gen.n_recep = spec->gen_receptacles;
    m->gen.n_distract = spec->gen_distractors;
    m->gen.type_mask = spec->gen_task_types;
    m->search_expert = spec->expert == PV_ENV_EXPERT_SEARCH;
    pv_err_t rc;
    if (spec->gen_task_types & ~0x7eu) {
        rc = pv_errf(em, PV_ERR_INVAL,
                     "alfworld: task-type mask 0x%x has bits outside 1..6 "
                     "(bit i = ALFWorld task type i)",
                     spec->gen_task_types);
        goto fail;
    }
    if (spec->data_path && spec->data_path[0]) {
        if ((rc = s_load_files(m, spec->data_path, em)) != PV_OK)
            goto fail;
    } else {
        m->generated = true;
        if ((rc = pv_alf_gen_check(&m->gen, em)) != PV_OK ||
            (rc = pv_arena_new(256 * 1024, 0, &m->arena)) != PV_OK)
            goto fail;
        pv_alf_domain_t *dom = NULL;
        pv_alf_grammar_t *gram = NULL;
        if ((rc = pv_alf_domain_parse(m->arena, pv_alf_embedded_domain, "embedded domain", &dom,
                                      em)) != PV_OK ||
            (rc = pv_alf_grammar_parse(m->arena, dom, pv_alf_embedded_grammar, "embedded grammar",
                                       &gram, em)) != PV_OK)
            goto fail;
        m->dom = dom;
        m->gram = gram;
        m->max_words = S_MAX_WORDS;
        uint32_t v[4] = {m->gen.n_recep, m->gen.n_distract, m->gen.type_mask, m->max_steps};
        m->fingerprint = pv_alf_hash("alfworld-gen", 12, PV_ALF_HASH_SEED);
        m->fingerprint = pv_alf_hash(&m->seed, sizeof m->seed, m->fingerprint);
        m->fingerprint = pv_alf_hash(v, sizeof v, m->fingerprint);
    }
    m->fingerprint = pv_alf_hash(&m->max_steps, sizeof m->max_steps, m->fingerprint);
    *out = m;
    return PV_OK;
fail:
    s_model_destroy(m);
    return rc;
}

static uint64_t s_n_tasks(const void *mp, pv_env_split_t split)
{
    const s_model_t *m = mp;
    if (split > PV_SPLIT_TEST)
        return 0;
    return m->generated ? UINT64_MAX : m->n_split[split];
}

static uint32_t s_max_steps(const void *mp)
{
    return ((const s_model_t *)mp)->max_steps;
}

static size_t s_state_max(const void *mp)
{
    return S_HDR + 16u * ((const s_model_t *)mp)->max_words;
}

/* ---------------------------------------------------------------- games */

/* Make the game of (split, task_id, seed) current. */
static pv_err_t s_use_game(s_env_t *e, uint32_t split, uint64_t task_id, uint64_t seed,
                           pv_errmsg_t *em)
{
    const s_model_t *m = e->m;
    if (split > PV_SPLIT_TEST)
        return pv_errf(em, PV_ERR_INVAL, "alfworld: unknown split %u", split);
    if (!m->generated && task_id >= m->n_split[split])
        return pv_errf(em, PV_ERR_RANGE, "alfworld: task %llu outside the %s split (%u tasks)",
                       (unsigned long long)task_id, split ? "test" : "train", m->n_split[split]);
    if (!m->generated)
        seed = 0; /* a loaded game does not depend on the task seed */
    if (e->have && e->k_split == split && e->k_task == task_id && e->k_seed == seed)
        return PV_OK;
    e->have = false;
    e->g = NULL;
    pv_arena_reset(e->ga);
    pv_err_t rc;
    pv_alf_game_t *g = NULL;
    if (m->generated) {
        pv_alf_problem_t *prob = NULL;
        const char *task = NULL;
        uint64_t gs = pv_rng_mix(pv_rng_mix(m->seed, split), pv_rng_mix(task_id, seed));
        if ((rc = pv_alf_generate(e->ga, m->dom, &m->gen, gs, (int)split, &prob, &task, em)) !=
                PV_OK ||
            (rc = pv_alf_ground(e->ws, e->ga, m->dom, m->gram, prob, task, "generated game", &g,
                                em)) != PV_OK)
            return rc;
    } else {
        int solvable;
        const char *path = m->files.path[m->split_file[split][task_id]];
        if ((rc = pv_alf_read_game(e->ws, e->ga, path, &g, &solvable, em)) != PV_OK)
            return rc;
    }
    if (g->n_words > S_MAX_WORDS || g->n_words > m->max_words)
        return pv_errf(em, PV_ERR_DATA, "alfworld: game changed since the model was built");
    e->ranks = pv_arena_alloc(e->ga, (g->n_cmds + 1) * sizeof *e->ranks, 0);
    e->adm = pv_arena_alloc(e->ga, (g->n_cmds + 1) * sizeof *e->adm, 0);
    if (!e->ranks || !e->adm || pv_alf_trace_prepare(e->ga, g, &e->tracer) != PV_OK)
        return PV_ERR_NOMEM;
    e->g = g;
    e->have = true;
    e->k_split = split;
    e->k_task = task_id;
    e->k_seed = seed;
    return PV_OK;
}

/* ---------------------------------------------------------------- instances */

static void s_env_destroy(void *ep)
{
    s_env_t *e = ep;
    if (!e)
        return;
    pv_alf_expert_destroy(&e->ex);
    pv_alf_gws_destroy(&e->ws);
    pv_arena_destroy(&e->ga);
    free(e->fd);
    free(e->neg);
    free(e->scratch);
    free(e);
}

static pv_err_t s_env_new(const void *mp, void **out)
{
    s_env_t *e = calloc(1, sizeof *e);
    if (!e)
        return PV_ERR_NOMEM;
    e->m = mp;
    e->fd = calloc(S_MAX_WORDS + 1, sizeof *e->fd);
    e->neg = calloc(S_MAX_WORDS + 1, sizeof *e->neg);
    e->scratch = calloc(2 * S_MAX_WORDS + 2, sizeof *e->scratch);
    if (!e->fd || !e->neg || !e->scratch || pv_alf_gws_new(&e->ws) != PV_OK ||
        pv_arena_new(1 << 20, 0, &e->ga) != PV_OK) {
        s_env_destroy(e);
        return PV_ERR_NOMEM;
    }
    *out = e;
    return PV_OK;
}

static void s_result(s_env_t *e, pv_step_result_t *out, float reward, bool admissible)
{
    out->obs = e->obs;
    out->reward = reward;
    out->done = e->done;
    out->won = e->won;
    out->admissible = admissible;
    out->n_steps = e->n_steps;
}

static pv_err_t s_reset(void *ep, const pv_task_t *task, pv_step_result_t *out)
{
    s_env_t *e = ep;
    pv_err_t rc = s_use_game(e, task->split, task->task_id, task->seed, NULL);
    if (rc != PV_OK) {
        e->started = false;
        return rc;
    }
    const pv_alf_game_t *g = e->g;
    memcpy(e->fd, g->init_bits, g->n_words * sizeof *e->fd);
    memset(e->neg, 0, g->n_words * sizeof *e->neg);
    e->n_steps = 0;
    e->started = true;
    e->adm_ok = false;
    pv_alf_trace_forget(&e->tracer, g);
    e->won = pv_alf_goal_holds(g, e->fd);
    e->done = e->won;
    pv_alf_view_t view = {g, e->fd, e->neg};
    pv_alf_out_t o = {.buf = e->obs, .cap = sizeof e->obs};
    e->obs[0] = 0;
    pv_alf_intro(&view, &o);
    s_result(e, out, 0.0f, true);
    return PV_OK;
}

static pv_err_t s_step(void *ep, const char *action, pv_step_result_t *out)
{
    s_env_t *e = ep;
    if (!e->started || e->done)
        return PV_ERR_STATE;
    const pv_alf_game_t *g = e->g;
    int32_t op = pv_alf_find_op(g, e->fd, action);
    uint32_t step = e->n_steps;
    e->n_steps++;
    e->adm_ok = false;
    pv_alf_out_t o = {.buf = e->obs, .cap = sizeof e->obs};
    e->obs[0] = 0;
    memset(&e->trace, 0, sizeof e->trace);
    if (op >= 0) {
        pv_alf_trace_before(&e->tracer, g, (uint32_t)op, e->fd, &e->trace);
        pv_alf_op_apply(g, (uint32_t)op, e->fd, e->neg);
        pv_alf_trace_after(&e->tracer, g, e->fd, step, &e->trace);
        pv_alf_view_t view = {g, e->fd, e->neg};
        pv_alf_feedback(&view, (uint32_t)op, &o);
        e->won = pv_alf_goal_holds(g, e->fd);
    } else {
        pv_alf_out_put(&o, "Nothing happens.", 16);
    }
    e->done = e->won || e->n_steps >= e->m->max_steps;
    s_result(e, out, e->won ? 1.0f : 0.0f, op >= 0);
    out->trace = &e->trace;
    return PV_OK;
}

static const char *s_task_text(const void *ep)
{
    const s_env_t *e = ep;
    return e->g ? e->g->task_text : "";
}

static pv_err_t s_admissible(void *ep, const char *const **actions, size_t *n)
{
    s_env_t *e = ep;
    if (!e->started)
        return PV_ERR_STATE;
    if (!e->adm_ok) {
        e->n_adm = pv_alf_admissible_ranks(e->g, e->fd, e->ranks);
        for (uint32_t i = 0; i < e->n_adm; i++)
            e->adm[i] = e->g->cmd[e->ranks[i]];
        e->adm_ok = true;
    }
    *actions = e->adm;
    *n = e->n_adm;
    return PV_OK;
}

/* ---------------------------------------------------------------- save / load */

static pv_err_t s_save(const void *ep, uint8_t *buf, size_t cap, size_t *len)
{
    const s_env_t *e = ep;
    if (!e->started)
        return PV_ERR_STATE;
    uint32_t w = e->g->n_words;
    size_t need = S_HDR + 16u * w;
    if (cap < need)
        return PV_ERR_LIMIT;
    s_put32(buf, S_PAYLOAD_VER);
    s_put64(buf + 4, e->m->fingerprint);
    s_put32(buf + 12, e->k_split);
    s_put64(buf + 16, e->k_task);
    s_put64(buf + 24, e->k_seed);
    s_put32(buf + 32, e->n_steps);
    s_put32(buf + 36, (e->won ? S_FLAG_WON : 0) | (e->done ? S_FLAG_DONE : 0));
    s_put32(buf + 40, e->g->n_atoms);
    s_put32(buf + 44, 0);
    uint8_t *p = buf + S_HDR;
    for (uint32_t i = 0; i < w; i++, p += 8)
        s_put64(p, e->fd[i]);
    for (uint32_t i = 0; i < w; i++, p += 8)
        s_put64(p, e->neg[i]);
    *len = need;
    return PV_OK;
}

/* The part both keys share: `salt`, the task and the outcome flags. */
static uint64_t s_key_head(const s_env_t *e, uint64_t salt)
{
    uint64_t ids[4] = {e->k_split, e->k_task, e->k_seed,
                       (uint64_t)(e->won ? S_FLAG_WON : 0) | (e->done ? S_FLAG_DONE : 0)};
    return pv_env_key_mix(salt, ids, sizeof ids);
}

/* Key of the world state: the task, the fact bitsets and the outcome flags, not n_steps. */
static uint64_t s_state_key(const void *ep)
{
    const s_env_t *e = ep;
    if (!e->started)
        return 0;
    uint64_t k = pv_env_key_mix(s_key_head(e, 0x616c66776f726c64ULL), e->fd, 8u * e->g->n_words);
    return pv_env_key_mix(k, e->neg, 8u * e->g->n_words);
}

/* The task key: the task's facts only (game->task_mask) and the outcome. */
static uint64_t s_task_key(const void *ep)
{
    const s_env_t *e = ep;
    if (!e->started)
        return 0;
    uint64_t k = s_key_head(e, 0x616c667461736bULL);
    for (uint32_t i = 0; i < e->g->n_words; i++) {
        uint64_t w = e->fd[i] & e->g->task_mask[i];
        k = pv_env_key_mix(k, &w, sizeof w);
    }
    return k;
}

/* ALFWorld's TASK_TYPES (alfred_tw_env.py), indexed by pv_alf_game_t.task_type (0 = other). */
static const char *s_task_type(const void *ep)
{
    static const char *const names[7] = {"other",
                                         "pick_and_place_simple",
                                         "look_at_obj_in_light",
                                         "pick_clean_then_place_in_recep",
                                         "pick_heat_then_place_in_recep",
                                         "pick_cool_then_place_in_recep",
                                         "pick_two_obj_and_place"};
    const s_env_t *e = ep;
    if (!e->started || !e->g)
        return "";
    int t = e->g->task_type;
    return t >= 1 && t <= 6 ? names[t] : names[0];
}

/* Check the bitsets of a saved state against the game. */
static pv_err_t s_check_bits(const pv_alf_game_t *g, const uint64_t *fd, const uint64_t *neg,
                             pv_errmsg_t *em)
{
    uint32_t w = g->n_words, tail = g->n_atoms & 63;
    uint64_t keep = tail ? (((uint64_t)1 << tail) - 1) : ~(uint64_t)0;
    if ((fd[w - 1] & ~keep) || (neg[w - 1] & ~keep))
        return pv_errf(em, PV_ERR_DATA, "saved state has bits beyond the game's %u atoms",
                       g->n_atoms);
    for (uint32_t i = 0; i < w; i++)
        if ((fd[i] ^ g->init_bits[i]) & g->static_mask[i] & (i + 1 < w ? ~(uint64_t)0 : keep))
            return pv_errf(em, PV_ERR_DATA, "saved state changes facts no action can change");
    return PV_OK;
}

static pv_err_t s_load(void *ep, const uint8_t *buf, size_t len, pv_errmsg_t *em)
{
    s_env_t *e = ep;
    const s_model_t *m = e->m;
    if (len < S_HDR)
        return pv_errf(em, PV_ERR_TRUNCATED, "alfworld state of %zu bytes, header needs %u", len,
                       S_HDR);
    if (s_get32(buf) != S_PAYLOAD_VER)
        return pv_errf(em, PV_ERR_VERSION, "alfworld state format %u, expected %u", s_get32(buf),
                       S_PAYLOAD_VER);
    if (s_get64(buf + 4) != m->fingerprint)
        return pv_errf(em, PV_ERR_INVAL,
                       "alfworld state comes from a different model (other data "
                       "files, generator settings or step limit)");
    uint32_t split = s_get32(buf + 12), n_steps = s_get32(buf + 32), flags = s_get32(buf + 36);
    uint64_t task = s_get64(buf + 16), seed = s_get64(buf + 24);
    uint32_t n_atoms = s_get32(buf + 40);
    if (split > 1 || (!m->generated && task >= m->n_split[split]))
        return pv_errf(em, PV_ERR_DATA,
                       "alfworld state names task %llu of split %u, which this "
                       "model does not have",
                       (unsigned long long)task, split);
    if (flags & ~(S_FLAG_WON | S_FLAG_DONE) || s_get32(buf + 44) != 0)
        return pv_errf(em, PV_ERR_DATA, "alfworld state has unknown flags 0x%x", flags);
    if (n_steps > m->max_steps)
        return pv_errf(em, PV_ERR_DATA, "alfworld state at step %u, past the limit %u", n_steps,
                       m->max_steps);
    uint32_t w = (n_atoms + 63) / 64;
    if (n_atoms == 0 || w > m->max_words)
        return pv_errf(em, PV_ERR_DATA, "alfworld state has %u atoms", n_atoms);
    if (len < S_HDR + 16u * w)
        return pv_errf(em, PV_ERR_TRUNCATED, "alfworld state of %zu bytes, %u atoms need %u", len,
                       n_atoms, S_HDR + 16u * w);
    if (len > S_HDR + 16u * w)
        return pv_errf(em, PV_ERR_DATA, "alfworld state has %zu trailing bytes",
                       len - (S_HDR + 16u * w));
    /* keep the current episode to restore it when the bytes prove inconsistent */
    bool had = e->have, was_started = e->started;
    uint32_t o_split = e->k_split;
    uint64_t o_task = e->k_task, o_seed = e->k_seed;
    pv_err_t rc = s_use_game(e, split, task, seed, em);
    if (rc == PV_OK && e->g->n_atoms != n_atoms)
        rc = pv_errf(em, PV_ERR_DATA, "alfworld state has %u atoms, the game has %u", n_atoms,
                     e->g->n_atoms);
    uint64_t *fd = e->scratch, *neg = e->scratch + w;
    if (rc == PV_OK) {
        const uint8_t *p = buf + S_HDR;
        for (uint32_t i = 0; i < w; i++, p += 8)
            fd[i] = s_get64(p);
        for (uint32_t i = 0; i < w; i++, p += 8)
            neg[i] = s_get64(p);
        rc = s_check_bits(e->g, fd, neg, em);
    }
    if (rc == PV_OK) {
        bool won = pv_alf_goal_holds(e->g, fd);
        bool done = won || n_steps >= m->max_steps;
        if (won != (bool)(flags & S_FLAG_WON) || done != (bool)(flags & S_FLAG_DONE))
            rc = pv_errf(em, PV_ERR_DATA,
                         "alfworld state flags (won %d, done %d) disagree with "
                         "its facts (won %d, done %d)",
                         !!(flags & S_FLAG_WON), !!(flags & S_FLAG_DONE), won, done);
    }
    if (rc != PV_OK) {
        if (had &&
            (e->k_split != o_split || e->k_task != o_task || e->k_seed != o_seed || !e->have))
            (void)s_use_game(e, o_split, o_task, o_seed, NULL); /* state words are untouched */
        e->started = was_started && e->have;
        return rc;
    }
    memcpy(e->fd, fd, w * sizeof *fd);
    memcpy(e->neg, neg, w * sizeof *neg);
    e->n_steps = n_steps;
    e->won = flags & S_FLAG_WON;
    e->done = flags & S_FLAG_DONE;
    e->started = true;
    e->adm_ok = false;
    e->obs[0] = 0;
    pv_alf_trace_forget(&e->tracer, e->g); /* facts of the loaded state have no step */
    return PV_OK;
}

/* ---------------------------------------------------------------- expert */

static pv_err_t s_expert_ready(s_env_t *e)
{
    if (!e->started)
        return PV_ERR_STATE;
    if (!e->ex)
        return pv_alf_expert_new(&e->ex);
    return PV_OK;
}

static pv_err_t s_expert_action(void *ep, char *buf, size_t cap)
{
    s_env_t *e = ep;
    pv_err_t rc = s_expert_ready(e);
    if (rc != PV_OK)
        return rc;
    if (e->done)
        return PV_ERR_STATE;
    int32_t first = -1;
    if (e->m->search_expert) {
        rc = pv_alf_search_action(e->ex, e->g, e->fd, e->neg, e->m->max_steps - e->n_steps, &first);
        if (rc != PV_OK)
            return rc;
    } else {
        int len = pv_alf_expert_plan(e->ex, e->g, e->fd, e->m->max_steps - e->n_steps, &first);
        if (len < 0)
            return len == PV_ALF_EXPERT_LIMIT ? PV_ERR_LIMIT : PV_ERR_NOTFOUND;
        if (len == 0 || first < 0)
            return PV_ERR_NOTFOUND; /* the goal already holds: nothing to do */
    }
    const char *c = e->g->cmd[e->g->ops[first].cmd];
    size_t n = strlen(c);
    if (n + 1 > cap)
        return PV_ERR_LIMIT;
    memcpy(buf, c, n + 1);
    return PV_OK;
}

static pv_err_t s_atom_name(const void *ep, uint32_t atom, char *buf, size_t cap)
{
    const s_env_t *e = ep;
    if (!e->started || !e->g)
        return PV_ERR_STATE;
    if (atom >= e->g->n_atoms || !pv_alf_bit(e->tracer.goal, atom))
        return PV_ERR_RANGE;
    return pv_alf_atom_text(e->g, atom, buf, cap);
}

static int s_expert_plan_len(void *ep)
{
    s_env_t *e = ep;
    if (s_expert_ready(e) != PV_OK)
        return -1;
    if (e->won)
        return 0;
    if (e->done)
        return -1;
    int32_t first;
    int len = pv_alf_expert_plan(e->ex, e->g, e->fd, e->m->max_steps - e->n_steps, &first);
    return len < 0 ? -1 : len;
}

const pv_env_ops_t pv_alfworld_ops = {
    .kind = PV_ENV_ALFWORLD,
    .name = "alfworld",
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
    .task_key = s_task_key,
    .task_type = s_task_type,
    .load = s_load,
    .expert_action = s_expert_action,
    .expert_plan_len = s_expert_plan_len,
    .atom_name = s_atom_name,
};
