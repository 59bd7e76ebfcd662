/* play_diagnose.c - per-episode failure diagnosis of a scorer; see play_diagnose.h. */
#include "tools/play_diagnose.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/env/text_util.h"

#define S_GOLD_MAX 512

#define S_NAME(name, text) text,
static const char *const s_names[PV_DIAG_N] = {PV_DIAG_VERDICTS(S_NAME)};
#undef S_NAME

const char *pv_diag_verdict_name(pv_diag_verdict_t v)
{
    return (unsigned)v < PV_DIAG_N ? s_names[v] : "?";
}

/* The normalised argument of an atom named "answer(GOLD)" into gold; false otherwise. */
static bool s_gold(const char *atom, char *gold, size_t cap)
{
    const char *lp = strchr(atom, '('), *rp = strrchr(atom, ')');
    if (strncmp(atom, "answer(", 7) != 0 || !rp || rp <= lp + 1)
        return false;
    size_t n = pv_text_normalize_answer_n(gold, cap, lp + 1, (size_t)(rp - lp - 1));
    return n != PV_TEXT_TOO_LONG && n > 0;
}

/* Does the normalised text of obs hold gold as whole words? */
static bool s_gold_in(const char *obs, const char *gold)
{
    size_t n = strlen(obs), cap = n + n / 2 + 1, gl = strlen(gold);
    char *norm = malloc(cap);
    bool found = false;
    if (norm && pv_text_normalize_answer(norm, cap, obs) != PV_TEXT_TOO_LONG)
        for (const char *p = strstr(norm, gold); p && !found; p = strstr(p + 1, gold))
            found = (p == norm || p[-1] == ' ') && (p[gl] == '\0' || p[gl] == ' ');
    free(norm);
    return found;
}

static int s_desc(const void *a, const void *b)
{
    const float *x = *(const float *const *)a, *y = *(const float *const *)b;
    return (*y > *x) - (*y < *x);
}

/* Reset env to task t and play tr's first s actions; its state into buf. */
static pv_err_t s_replay(pv_env_t *env, const pv_task_t *t, const pv_traj_t *tr, size_t s,
                         uint8_t *buf, size_t cap, size_t *len)
{
    pv_step_result_t r;
    pv_err_t rc = pv_env_reset(env, t, &r);
    for (size_t k = 0; k < s && rc == PV_OK; k++)
        rc = pv_env_step(env, tr->texts[2 * k + 1], &r);
    return rc ? rc : pv_env_save(env, buf, cap, len);
}

/* The rank (1 = most probable) of candidate j under logp[0..n). */
static size_t s_rank(const float *logp, size_t n, size_t j)
{
    size_t r = 1;
    for (size_t i = 0; i < n; i++)
        r += logp[i] > logp[j] || (logp[i] == logp[j] && i < j);
    return r;
}

#define S_EXPERT_MAX 64

typedef struct s_expert_run {
    size_t steps;
    bool plan, wins;
    size_t rank[S_EXPERT_MAX], n_cands[S_EXPERT_MAX]; /* 0: not a candidate */
    char acts[2048];
} s_expert_run_t;

/* Play the expert from task t's reset (at most S_EXPERT_MAX steps): its length, whether
 * every one of its actions was a candidate, whether it won, and each action's rank among
 * the candidates under the policy. */
static pv_err_t s_expert(pv_env_t *env, const pv_task_t *t, const pv_policy_t *policy,
                         pv_policy_work_t *work, float *logp, s_expert_run_t *x)
{
    size_t used = 0, max_cands = pv_policy_spec(policy)->max_cands;
    char act[4096];
    char *hist[2 * S_EXPERT_MAX + 1] = {0};
    pv_step_result_t r = {0};
    pv_err_t rc = pv_env_reset(env, t, &r);
    memset(x, 0, sizeof *x);
    x->plan = true;
    char *task = rc == PV_OK ? strdup(pv_env_task_text(env)) : NULL;
    if (rc == PV_OK && (!task || !(hist[0] = strdup(r.obs))))
        rc = PV_ERR_NOMEM;
    while (rc == PV_OK && !r.done && x->steps < S_EXPERT_MAX) {
        const char *const *cands;
        size_t n, s = x->steps;
        if ((rc = pv_env_admissible(env, &cands, &n)) != PV_OK)
            break;
        rc = pv_env_expert_action(env, act, sizeof act);
        if (rc == PV_ERR_NOTFOUND) {
            rc = PV_OK;
            break;
        }
        size_t j = pv_play_cand_index(cands, n, act);
        j = j < n ? j : SIZE_MAX;
        x->plan = x->plan && j != SIZE_MAX;
        pv_policy_ctx_t ctx = {task, (const char *const *)hist, 2 * s + 1};
        if (rc == PV_OK && j != SIZE_MAX && n <= max_cands &&
            (rc = pv_policy_logprobs(policy, &ctx, cands, n, work, logp, NULL)) == PV_OK) {
            x->rank[s] = s_rank(logp, n, j);
            x->n_cands[s] = n;
        }
        int w = snprintf(x->acts + used, sizeof x->acts - used, "%s%s", s ? "; " : "", act);
        used = w > 0 && (size_t)w < sizeof x->acts - used ? used + (size_t)w : used;
        if (rc == PV_OK && x->rank[s]) {
            w = snprintf(x->acts + used, sizeof x->acts - used, " (rank %zu of %zu)", x->rank[s],
                         n);
            used = w > 0 && (size_t)w < sizeof x->acts - used ? used + (size_t)w : used;
        }
        if (rc == PV_OK)
            rc = pv_env_step(env, act, &r);
        if (rc == PV_OK && (!(hist[2 * s + 1] = strdup(act)) || !(hist[2 * s + 2] = strdup(r.obs))))
            rc = PV_ERR_NOMEM;
        x->steps++;
    }
    x->wins = rc == PV_OK && r.done && r.won;
    for (size_t i = 0; i < 2 * S_EXPERT_MAX + 1; i++)
        free(hist[i]);
    free(task);
    return rc;
}

pv_err_t pv_diagnose_episode(FILE *out, const pv_env_model_t *model, pv_env_t *env,
                             const pv_task_t *t, const pv_policy_t *policy, pv_policy_work_t *work,
                             const pv_traj_t *tr, float *logp, const float **order,
                             pv_diag_totals_t *totals, pv_errmsg_t *em)
{
    size_t cap = pv_env_state_max(model), len = 0;
    uint8_t *state = malloc(cap);
    char atom[S_GOLD_MAX] = "", gold[S_GOLD_MAX * 2];
    if (!state)
        return PV_ERR_NOMEM;
    pv_err_t rc = s_replay(env, t, tr, 0, state, cap, &len);
    if (rc == PV_OK && pv_env_atom_name(env, 0, atom, sizeof atom) != PV_OK)
        atom[0] = '\0';
    bool has_gold = atom[0] && s_gold(atom, gold, sizeof gold);
    bool any_win = false, gold_seen = false;
    fprintf(out, "\n==== task %llu (%s): %s\ngoal %s | %s, reward %g after %zu steps\n",
            (unsigned long long)t->task_id, t->split ? "test" : "train", tr->task_text,
            atom[0] ? atom : "(none)", tr->won ? "won" : "lost", tr->reward, tr->n_steps);
    for (size_t s = 0; s < tr->n_steps && rc == PV_OK; s++) {
        const pv_step_rec_t *st = &tr->steps[s];
        pv_policy_ctx_t ctx = {tr->task_text, tr->texts, 2 * s + 1};
        if ((rc = s_replay(env, t, tr, s, state, cap, &len)) != PV_OK ||
            (rc = pv_policy_logprobs(policy, &ctx, st->cands, st->n_cands, work, logp, NULL)))
            break;
        for (size_t i = 0; i < st->n_cands; i++)
            order[i] = &logp[i];
        qsort(order, st->n_cands, sizeof *order, s_desc);
        size_t wins = 0, best = SIZE_MAX, best_rank = 0;
        for (size_t r = 0; r < st->n_cands && rc == PV_OK; r++) {
            size_t j = (size_t)(order[r] - logp);
            pv_step_result_t res;
            if ((rc = pv_env_load(env, state, len, em)) != PV_OK ||
                (rc = pv_env_step(env, st->cands[j], &res)) != PV_OK)
                break;
            if (res.done && res.won) {
                if (!wins++) {
                    best = j;
                    best_rank = r + 1;
                }
            }
        }
        if (rc != PV_OK)
            break;
        bool seen = has_gold && s > 0 && s_gold_in(tr->texts[2 * s], gold); /* not the question */
        any_win = any_win || wins > 0;
        gold_seen = gold_seen || seen;
        fprintf(out, "step %zu: %zu of %zu candidates win", s + 1, wins, st->n_cands);
        if (wins)
            fprintf(out, " (best %s, rank %zu, p %.3f)", st->cands[best], best_rank,
                    exp(logp[best]));
        if (has_gold)
            fprintf(out, "; gold %s the observation", seen ? "in" : "not in");
        size_t chosen = pv_play_cand_index(st->cands, st->n_cands, tr->texts[2 * s + 1]);
        fprintf(out, "\n  chose %s p %.3f; top:", tr->texts[2 * s + 1],
                chosen < st->n_cands ? exp(logp[chosen]) : 0.0);
        for (size_t r = 0; r < st->n_cands && r < 3; r++)
            fprintf(out, "%s %s %.3f", r ? ";" : "", st->cands[order[r] - logp], exp(*order[r]));
        fprintf(out, "\n");
    }
    if (rc == PV_OK && has_gold && s_gold_in(tr->texts[2 * tr->n_steps], gold))
        gold_seen = true; /* the last observation (after the final step) */
    s_expert_run_t *x = rc == PV_OK ? malloc(sizeof *x) : NULL;
    if (rc == PV_OK)
        rc = x ? s_expert(env, t, policy, work, logp, x) : PV_ERR_NOMEM;
    free(state);
    if (rc != PV_OK) {
        free(x);
        return rc;
    }
    bool admissible_plan = x->plan && x->wins;
    fprintf(out, "expert: %s in %zu steps: %s\n",
            admissible_plan ? "wins over the candidates"
            : x->wins       ? "wins with actions that are no candidates"
                            : "does not win",
            x->steps, x->acts);
    if (admissible_plan && totals) {
        for (size_t s = 0; s < x->steps; s++) {
            bool last = s + 1 == x->steps;
            totals->plan_steps[last]++;
            totals->plan_top1[last] += x->rank[s] == 1;
            totals->plan_rank[last] += x->rank[s];
        }
    }
    free(x);
    pv_diag_verdict_t verdict = tr->won           ? PV_DIAG_WON
                                : any_win         ? PV_DIAG_SELECTION
                                : admissible_plan ? PV_DIAG_SEARCH
                                : gold_seen       ? PV_DIAG_EXTRACTION
                                                  : PV_DIAG_RETRIEVAL;
    fprintf(out, "verdict: %s\n", pv_diag_verdict_name(verdict));
    if (totals)
        totals->n[verdict]++;
    return PV_OK;
}

void pv_diagnose_totals(FILE *out, const pv_diag_totals_t *t)
{
    fprintf(out, "\ndiagnosis:");
    for (int v = 0; v < PV_DIAG_N; v++)
        fprintf(out, "%s %s %llu", v ? "," : "", s_names[v], (unsigned long long)t->n[v]);
    fprintf(out, "\n");
    for (int last = 1; last >= 0; last--)
        if (t->plan_steps[last])
            fprintf(out,
                    "along the expert's admissible plans, the policy ranks the %s action first "
                    "%llu of %llu times (mean rank %.1f)\n",
                    last ? "final" : "earlier", (unsigned long long)t->plan_top1[last],
                    (unsigned long long)t->plan_steps[last],
                    (double)t->plan_rank[last] / (double)t->plan_steps[last]);
}

size_t pv_play_cand_index(const char *const *cands, size_t n, const char *text)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(cands[i], text) == 0)
            return i;
    return n;
}
