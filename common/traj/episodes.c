/* episodes.c - evaluation and expert demonstrations; see episodes.h. */
#include "common/traj/episodes.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pv_task_t pv_episode_task(uint64_t task_seed, pv_env_split_t split, uint64_t id)
{
    return (pv_task_t){.split = split, .task_id = id, .seed = pv_rng_mix(task_seed, id)};
}

/* One expert episode into tr (arena-backed). */
static pv_err_t s_expert_episode(const pv_episodes_t *e, const pv_task_t *task, pv_traj_t *tr,
                                 pv_cost_t *cost, pv_errmsg_t *em)
{
    pv_arena_t *a = e->arena;
    size_t limit = pv_env_model_max_steps(e->model);
    memset(tr, 0, sizeof *tr);
    tr->texts = pv_arena_calloc(a, 2 * limit + 1, sizeof *tr->texts);
    tr->steps = pv_arena_calloc(a, limit, sizeof *tr->steps);
    pv_step_result_t r;
    pv_err_t rc = tr->texts && tr->steps ? pv_env_reset(e->env, task, &r) : PV_ERR_NOMEM;
    if (rc != PV_OK)
        return pv_errf(em, rc, "demos: reset of task %llu: %s", (unsigned long long)task->task_id,
                       pv_strerror(rc));
    const char *tt = pv_env_task_text(e->env);
    tr->task_text = pv_arena_strdup(a, tt);
    tr->texts[0] = pv_arena_strdup(a, r.obs);
    while (!r.done && tr->n_steps < limit) {
        char act[256];
        const char *const *adm;
        size_t n;
        if ((rc = pv_env_expert_action(e->env, act, sizeof act)) != PV_OK ||
            (rc = pv_env_admissible(e->env, &adm, &n)) != PV_OK)
            return pv_errf(em, rc, "demos: task %llu step %zu: expert: %s",
                           (unsigned long long)task->task_id, tr->n_steps, pv_strerror(rc));
        size_t k = 0;
        while (k < n && strcmp(adm[k], act) != 0)
            k++;
        if (k == n) /* e.g. SearchQA's expert searching a supporting title: skipped, counted */
            return pv_errf(em, PV_ERR_NOTFOUND, "demos: expert action '%s' is not admissible", act);
        const char **cands = pv_arena_alloc(a, n * sizeof *cands, 0);
        if (!cands)
            return pv_errf(em, PV_ERR_NOMEM, "demos: arena full");
        for (size_t i = 0; i < n; i++)
            if (!(cands[i] = pv_arena_strdup(a, adm[i])))
                return pv_errf(em, PV_ERR_NOMEM, "demos: arena full");
        size_t s = tr->n_steps;
        tr->steps[s] = (pv_step_rec_t){.cands = cands, .n_cands = n, .token = (uint32_t)k};
        if ((rc = pv_env_step(e->env, cands[k], &r)) != PV_OK)
            return pv_errf(em, rc, "demos: step: %s", pv_strerror(rc));
        cost->env_steps++;
        tr->texts[2 * s + 1] = cands[k];
        tr->texts[2 * s + 2] = pv_arena_strdup(a, r.obs);
        if (!tr->texts[2 * s + 2])
            return pv_errf(em, PV_ERR_NOMEM, "demos: arena full");
        tr->n_steps++;
        tr->reward += r.reward;
        tr->won = r.won;
    }
    return PV_OK;
}

pv_err_t pv_episodes_expert(const pv_episodes_t *e, uint64_t first_task, size_t n, pv_traj_t **out,
                            pv_cost_t *cost, pv_errmsg_t *em)
{
    pv_arena_reset(e->arena);
    pv_traj_t *tr = pv_arena_calloc(e->arena, n, sizeof *tr);
    if (!tr)
        return pv_errf(em, PV_ERR_NOMEM, "demos: arena full");
    uint64_t split_n = pv_env_model_n_tasks(e->model, PV_SPLIT_TRAIN);
    /* tasks the expert cannot solve with admissible actions are skipped (counted), up to
     * n + max(n, 100) tries in all */
    uint64_t tries = 0, max_tries = (uint64_t)n + (n > 100 ? n : 100);
    for (size_t i = 0; i < n;) {
        if (tries == max_tries)
            return pv_errf(em, PV_ERR_NOTFOUND,
                           "demos: the expert found no plan for %llu of %llu tasks tried",
                           (unsigned long long)cost->skipped, (unsigned long long)tries);
        uint64_t id = first_task + tries++;
        if (split_n != UINT64_MAX && split_n > 0)
            id %= split_n; /* a finite split wraps, as the actors' task ids do */
        pv_task_t task = pv_episode_task(e->task_seed, PV_SPLIT_TRAIN, id);
        pv_err_t rc = s_expert_episode(e, &task, &tr[i], cost, em);
        if (rc == PV_ERR_NOTFOUND) { /* its partial episode stays in the arena until reset */
            cost->skipped++;
            continue;
        }
        if (rc != PV_OK)
            return rc;
        tr[i].group = (int64_t)i;
        i++;
    }
    *out = tr;
    return PV_OK;
}

/* Count one episode under its type. */
static void s_count_type(pv_eval_detail_t *d, const char *type, bool won)
{
    if (!type[0]) {
        d->untyped++;
        return;
    }
    for (uint32_t i = 0; i < d->n_types; i++)
        if (strcmp(d->types[i].name, type) == 0) {
            d->types[i].n++;
            d->types[i].wins += won;
            return;
        }
    if (d->n_types == PV_EVAL_MAX_TYPES) {
        d->untyped++;
        return;
    }
    pv_eval_type_t *t = &d->types[d->n_types++];
    snprintf(t->name, sizeof t->name, "%s", type);
    t->n = 1;
    t->wins = won;
}

pv_err_t pv_episodes_eval_detail(const pv_episodes_t *e, pv_env_split_t split, uint64_t first_task,
                                 size_t n, pv_rng_t *rng, const pv_rollout_opts_t *ro,
                                 pv_eval_detail_t *out, pv_cost_t *cost, pv_errmsg_t *em)
{
    memset(out, 0, sizeof *out);
    out->split = split;
    pv_rollout_opts_t o = *ro;
    o.save_states = false;
    uint64_t split_n = pv_env_model_n_tasks(e->model, split);
    if (split_n != UINT64_MAX && first_task + n > split_n) /* each task of a finite split once */
        n = first_task < split_n ? (size_t)(split_n - first_task) : 0;
    for (size_t i = 0; i < n; i++) {
        pv_arena_reset(e->arena);
        pv_task_t task = pv_episode_task(e->task_seed, split, first_task + i);
        pv_traj_t tr;
        pv_err_t rc = pv_rollout_episode(e->model, e->env, &task, e->policy, e->work, rng, &o, 0,
                                         e->arena, &tr, cost, em);
        if (rc != PV_OK)
            return rc;
        out->n++;
        out->wins += tr.won;
        out->reward_sum += tr.reward;
        s_count_type(out, pv_env_task_type(e->env), tr.won);
    }
    return PV_OK;
}

pv_err_t pv_episodes_eval(const pv_episodes_t *e, pv_env_split_t split, uint64_t first_task,
                          size_t n, pv_rng_t *rng, const pv_rollout_opts_t *ro, double *success,
                          pv_cost_t *cost, pv_errmsg_t *em)
{
    pv_eval_detail_t d;
    pv_err_t rc = pv_episodes_eval_detail(e, split, first_task, n, rng, ro, &d, cost, em);
    if (rc == PV_OK)
        *success = d.n ? (double)d.wins / (double)d.n : 0.0;
    return rc;
}

pv_env_split_t pv_episodes_eval_split(const char *name)
{
    return strcmp(name, "train") == 0 ? PV_SPLIT_TRAIN : PV_SPLIT_TEST;
}

/* One held-out task's outcome, kept until the lanes are done so the detail is summed in task
 * order whatever lane played it. */
typedef struct s_task_out {
    bool won;
    double reward;
    char type[sizeof((pv_eval_type_t *)0)->name];
} s_task_out_t;

/* One lane of a held-out pass: tasks lane, lane + n_lanes, ... of the pass. */
typedef struct s_eval_lane {
    const pv_episodes_t *e;
    pv_env_split_t split;
    uint64_t first;
    size_t n, lane, n_lanes;
    uint64_t seed; /* sampled: each task's stream is seeded (mix(seed, task id), "eval") */
    bool sampled;
    const pv_rollout_opts_t *ro;
    s_task_out_t *out;
    pv_cost_t cost;
    pv_err_t rc;
    pv_errmsg_t em;
} s_eval_lane_t;

static void *s_eval_lane_run(void *arg)
{
    s_eval_lane_t *l = arg;
    const pv_episodes_t *e = l->e;
    for (size_t i = l->lane; i < l->n && l->rc == PV_OK; i += l->n_lanes) {
        uint64_t id = l->first + i;
        pv_rng_t rng;
        pv_rng_seed(&rng, pv_rng_mix(l->seed, id), 0x6576616cu /* "eval" */);
        pv_arena_reset(e->arena);
        pv_task_t task = pv_episode_task(e->task_seed, l->split, id);
        pv_traj_t tr;
        l->rc =
            pv_rollout_episode(e->model, e->env, &task, e->policy, e->work,
                               l->sampled ? &rng : NULL, l->ro, 0, e->arena, &tr, &l->cost, &l->em);
        if (l->rc != PV_OK)
            break;
        l->out[i] = (s_task_out_t){.won = tr.won, .reward = tr.reward};
        snprintf(l->out[i].type, sizeof l->out[i].type, "%s", pv_env_task_type(e->env));
    }
    return NULL;
}

/* One pass (greedy or sampled) over tasks first .. first + n - 1 on the lanes into *d. */
static pv_err_t s_eval_pass(const pv_episodes_t *e, size_t n_lanes, pv_env_split_t split,
                            uint64_t first, size_t n, bool sampled, uint64_t seed,
                            const pv_rollout_opts_t *ro, s_task_out_t *out, pv_eval_detail_t *d,
                            pv_cost_t *cost, pv_errmsg_t *em)
{
    s_eval_lane_t lanes[PV_EPISODES_MAX_LANES];
    pthread_t tid[PV_EPISODES_MAX_LANES];
    bool started[PV_EPISODES_MAX_LANES] = {false};
    for (size_t l = 0; l < n_lanes; l++) {
        lanes[l] = (s_eval_lane_t){.e = &e[l],
                                   .split = split,
                                   .first = first,
                                   .n = n,
                                   .lane = l,
                                   .n_lanes = n_lanes,
                                   .seed = seed,
                                   .sampled = sampled,
                                   .ro = ro,
                                   .out = out};
        lanes[l].em.text[0] = '\0';
        if (l > 0) /* lane 0 is this thread; a lane whose thread cannot start runs here after */
            started[l] = pthread_create(&tid[l], NULL, s_eval_lane_run, &lanes[l]) == 0;
    }
    s_eval_lane_run(&lanes[0]);
    for (size_t l = 1; l < n_lanes; l++) {
        if (started[l])
            pthread_join(tid[l], NULL);
        else
            s_eval_lane_run(&lanes[l]);
    }
    memset(d, 0, sizeof *d);
    d->split = split;
    for (size_t l = 0; l < n_lanes; l++) {
        cost->env_steps += lanes[l].cost.env_steps;
        cost->decisions += lanes[l].cost.decisions;
    }
    for (size_t l = 0; l < n_lanes; l++)
        if (lanes[l].rc != PV_OK) {
            if (em)
                *em = lanes[l].em;
            return lanes[l].rc;
        }
    for (size_t i = 0; i < n; i++) {
        d->n++;
        d->wins += out[i].won;
        d->reward_sum += out[i].reward;
        s_count_type(d, out[i].type, out[i].won);
    }
    return PV_OK;
}

pv_err_t pv_episodes_eval_heldout(const pv_episodes_t *e, size_t n_lanes, pv_policy_t *policy,
                                  pv_env_split_t split, size_t n, const pv_rollout_opts_t *ro,
                                  uint64_t seed, float temperature, pv_eval_detail_t *greedy,
                                  pv_eval_detail_t *sampled, pv_cost_t *cost, pv_errmsg_t *em)
{
    if (!(temperature >= 0.0f) || !isfinite(temperature))
        return pv_errf(em, PV_ERR_INVAL, "evaluation temperature must be >= 0, got %g",
                       (double)temperature);
    if (n_lanes < 1 || n_lanes > PV_EPISODES_MAX_LANES)
        return pv_errf(em, PV_ERR_INVAL, "evaluation lanes: 1 to %d, got %zu",
                       PV_EPISODES_MAX_LANES, n_lanes);
    if (split == PV_SPLIT_TRAIN && pv_env_model_n_tasks(e->model, split) != UINT64_MAX)
        return pv_errf(em, PV_ERR_INVAL,
                       "held-out evaluation on new training games: this environment's train "
                       "split is finite (%llu tasks) and training plays all of it",
                       (unsigned long long)pv_env_model_n_tasks(e->model, split));
    uint64_t first = split == PV_SPLIT_TRAIN ? PV_EPISODES_SEEN_FIRST : 0;
    uint64_t split_n = pv_env_model_n_tasks(e->model, split);
    if (split_n != UINT64_MAX && first + n > split_n) /* each task of a finite split once */
        n = first < split_n ? (size_t)(split_n - first) : 0;
    pv_rollout_opts_t o = *ro;
    o.save_states = false;
    s_task_out_t *out = calloc(n ? n : 1, sizeof *out);
    if (!out)
        return pv_errf(em, PV_ERR_NOMEM, "evaluation of %zu tasks", n);
    pv_err_t rc = s_eval_pass(e, n_lanes, split, first, n, false, seed, &o, out, greedy, cost, em);
    float t_rollout = pv_policy_spec(policy)->temperature;
    if (rc == PV_OK && temperature > 0.0f &&
        (rc = pv_policy_set_temperature(policy, temperature)) != PV_OK)
        pv_errf(em, rc, "evaluation temperature %g", (double)temperature);
    if (rc == PV_OK)
        rc = s_eval_pass(e, n_lanes, split, first, n, true, seed, &o, out, sampled, cost, em);
    pv_policy_set_temperature(policy, t_rollout);
    free(out);
    return rc;
}
