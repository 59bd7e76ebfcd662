/* llm_label.c - TRIAGE's labels through the LLM judge: prompt, schema, validator; see
 * llm_label.h. */
#include "judge/llm_label.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/traj/triage.h"

#define S_MAX_ANSWER_BYTES (256u << 10)
#define S_MAX_TRAJS        1024u /* the wire's trajectories per group */

pv_err_t pv_llm_label_ctx_init(pv_llm_ctx_t *ctx, uint64_t group_id, const char *task_text,
                               const pv_traj_t *trajs, size_t n_trajs, const pv_llm_limits_t *lim,
                               pv_errmsg_t *em)
{
    memset(ctx, 0, sizeof *ctx);
    if (!trajs || !lim || lim->obs_chars == 0 || lim->max_prompt_bytes < 1024 ||
        n_trajs > S_MAX_TRAJS)
        return pv_errf(em, PV_ERR_INVAL, "llm labels: bad arguments");
    size_t turns = 0;
    for (size_t i = 0; i < n_trajs; i++) {
        if (!trajs[i].texts)
            return pv_errf(em, PV_ERR_INVAL, "llm labels: trajectory %zu has no texts", i);
        for (size_t k = 0; k < 2 * trajs[i].n_steps + 1; k++)
            if (!trajs[i].texts[k])
                return pv_errf(em, PV_ERR_INVAL, "llm labels: trajectory %zu text %zu missing", i,
                               k);
        turns += trajs[i].n_steps;
    }
    if (turns == 0)
        return pv_errf(em, PV_ERR_NOTFOUND, "llm labels: the group has no action turn");
    *ctx = (pv_llm_ctx_t){.group_id = group_id,
                          .task_text = task_text ? task_text : "",
                          .trajs = trajs,
                          .n_trajs = n_trajs,
                          .lim = *lim};
    return PV_OK;
}

size_t pv_llm_label_turns(const pv_llm_ctx_t *ctx)
{
    size_t n = 0;
    for (size_t i = 0; i < ctx->n_trajs; i++)
        n += ctx->trajs[i].n_steps;
    return n;
}

void pv_llm_label_system(pv_llm_buf_t *out)
{
    pv_llm_buf_put(
        out,
        "You are the judge of TRIAGE, a reinforcement-learning method that gives each action of "
        "an agent a role. An agent attempted one task several times; you are shown every "
        "attempt and whether it succeeded.\n"
        "Give every action turn of every attempt exactly one role:\n"
        "- decisive: the turn makes progress the task needs (it achieves a step of the "
        "solution, or completes the task).\n"
        "- exploration: the turn reaches a new situation or gathers information, without "
        "deciding anything yet.\n"
        "- no_progress: the turn changes nothing useful: a refused or malformed action (marked "
        "[refused]), a repeat, or a return to a situation already seen.\n"
        "- regression: the turn undoes progress or makes the task harder or impossible.\n"
        "Turns are numbered from 0; turn t is the action taken after observation t.\n"
        "Answer with one JSON object and nothing else:\n"
        "{\"trajectories\": [{\"traj_id\": <attempt>, \"roles\": [<the role of turn 0>, <turn "
        "1>, ...]}, ...]}\n"
        "with one entry per attempt and exactly one role per turn, in order.\n");
}

static void s_user(const pv_llm_ctx_t *ctx, pv_llm_buf_t *b, size_t obs, size_t pobs)
{
    (void)pobs; /* no previews: every trajectory is shown whole */
    pv_llm_buf_printf(b, "Group %llu. Task: ", (unsigned long long)ctx->group_id);
    pv_llm_buf_put_clipped(b, ctx->task_text, 1000, true);
    pv_llm_buf_printf(b, "\n\n%zu attempts. Label every turn of each.\n", ctx->n_trajs);
    for (size_t i = 0; i < ctx->n_trajs; i++) {
        const pv_traj_t *tr = &ctx->trajs[i];
        pv_llm_buf_printf(b, "\ntrajectory %zu (%s, %zu turns):\n", i,
                          tr->won ? "success" : "failed", tr->n_steps);
        pv_llm_buf_put(b, "observation 0: ");
        pv_llm_buf_put_clipped(b, tr->texts[0], obs, true);
        pv_llm_buf_put(b, "\n");
        for (size_t t = 0; t < tr->n_steps; t++) {
            pv_llm_buf_printf(b, "turn %zu%s: ", t,
                              pv_llm_action_refused(tr, t) ? " [refused]" : "");
            pv_llm_buf_put_clipped(b, tr->texts[2 * t + 1], 200, true);
            pv_llm_buf_put(b, " -> ");
            pv_llm_buf_put_clipped(b, tr->texts[2 * t + 2], obs, true);
            pv_llm_buf_put(b, "\n");
        }
    }
    pv_llm_buf_put(b, "\nAnswer with the JSON object: one entry per trajectory, one role per "
                      "turn.\n");
}

pv_err_t pv_llm_label_user(const pv_llm_ctx_t *ctx, pv_llm_buf_t *out)
{
    return pv_llm_prompt_fit(ctx, s_user, 0, out);
}

json_t *pv_llm_label_schema(const pv_llm_ctx_t *ctx)
{
    json_int_t last = ctx->n_trajs ? (json_int_t)ctx->n_trajs - 1 : 0;
    return json_pack("{s:s, s:{s:{s:s, s:{s:s, s:{s:{s:s, s:i, s:I}, s:{s:s, s:{s:s, "
                     "s:[s, s, s, s]}}}, s:[s, s], s:b}}}, s:[s], s:b}",
                     "type", "object", "properties", "trajectories", "type", "array", "items",
                     "type", "object", "properties", "traj_id", "type", "integer", "minimum", 0,
                     "maximum", last, "roles", "type", "array", "items", "type", "string", "enum",
                     "decisive", "exploration", "no_progress", "regression", "required", "traj_id",
                     "roles", "additionalProperties", 0, "required", "trajectories",
                     "additionalProperties", 0);
}

pv_err_t pv_llm_label_constrain(const pv_llm_ctx_t *ctx, pv_llm_format_t fmt, json_t *request)
{
    return fmt == PV_LLM_FORMAT_NONE
               ? PV_OK
               : pv_llm_format_constrain(fmt, "triage_roles", pv_llm_label_schema(ctx), request);
}

uint8_t pv_llm_role_parse(const char *name)
{
    if (!name)
        return PV_LLM_ROLE_NONE;
    while (isspace((unsigned char)*name))
        name++;
    char w[16];
    size_t n = 0;
    for (; *name && n < sizeof w - 1; name++, n++)
        w[n] = *name == '-' || isspace((unsigned char)*name) ? '_'
                                                             : (char)tolower((unsigned char)*name);
    if (*name)
        return PV_LLM_ROLE_NONE;     /* longer than any role name */
    while (n > 0 && w[n - 1] == '_') /* trailing whitespace became '_' */
        n--;
    w[n] = '\0';
    for (unsigned r = 0; r < 4; r++)
        if (strcmp(w, pv_triage_role_name((pv_triage_role_t)r)) == 0)
            return (uint8_t)r;
    return PV_LLM_ROLE_NONE;
}

/* The entries of `list` into roles (offsets per trajectory in off[]). */
static void s_take(const pv_llm_ctx_t *ctx, const json_t *list, const size_t *off, uint8_t *roles,
                   pv_llm_label_counts_t *c)
{
    bool seen[S_MAX_TRAJS] = {false};
    for (size_t k = 0; k < json_array_size(list); k++) {
        const json_t *e = json_array_get(list, k);
        long long id;
        if (!json_is_object(e) || !pv_llm_json_int(json_object_get(e, "traj_id"), &id) || id < 0 ||
            (unsigned long long)id >= ctx->n_trajs)
            continue; /* names no trajectory: its turns stay unlabelled */
        if (seen[id])
            continue; /* a second entry for it: the first counts */
        seen[id] = true;
        const json_t *rl = json_object_get(e, "roles");
        const pv_traj_t *tr = &ctx->trajs[id];
        if (!json_is_array(rl) || json_array_size(rl) != tr->n_steps)
            continue; /* the roles cannot be aligned with the turns */
        for (size_t t = 0; t < tr->n_steps; t++) {
            const json_t *v = json_array_get(rl, t);
            uint8_t r =
                json_is_string(v) ? pv_llm_role_parse(json_string_value(v)) : PV_LLM_ROLE_NONE;
            roles[off[id] + t] = r;
            c->bad_roles += r == PV_LLM_ROLE_NONE;
        }
    }
}

pv_llm_refusal_t pv_llm_label_check(const pv_llm_ctx_t *ctx, const char *text, size_t len,
                                    uint8_t *roles, pv_llm_label_counts_t *counts, char *why,
                                    size_t cap)
{
    size_t turns = pv_llm_label_turns(ctx);
    memset(roles, PV_LLM_ROLE_NONE, turns);
    memset(counts, 0, sizeof *counts);
    counts->unlabelled = (uint32_t)turns;
    counts->bad_trajs = (uint32_t)ctx->n_trajs;
    json_t *a = NULL;
    pv_llm_refusal_t r = pv_llm_answer_object(text, len, S_MAX_ANSWER_BYTES, &a, why, cap);
    if (r != PV_LLM_REFUSAL_OK)
        return r;
    const json_t *list = json_object_get(a, "trajectories");
    if (!list || json_is_null(list))
        r = pv_llm_refusef(PV_LLM_REFUSAL_MISSING, why, cap, "'trajectories'");
    else if (!json_is_array(list))
        r = pv_llm_refusef(PV_LLM_REFUSAL_TYPE, why, cap,
                           "'trajectories' must be an array of {traj_id, roles}");
    if (r == PV_LLM_REFUSAL_OK) {
        size_t off[S_MAX_TRAJS];
        for (size_t i = 0, o = 0; i < ctx->n_trajs; o += ctx->trajs[i].n_steps, i++)
            off[i] = o;
        s_take(ctx, list, off, roles, counts);
        counts->labelled = counts->bad_trajs = 0;
        for (size_t i = 0; i < ctx->n_trajs; i++) {
            bool any = ctx->trajs[i].n_steps == 0;
            for (size_t t = 0; t < ctx->trajs[i].n_steps; t++) {
                bool got = roles[off[i] + t] != PV_LLM_ROLE_NONE;
                counts->labelled += got;
                any |= got;
            }
            counts->bad_trajs += !any;
        }
        counts->unlabelled = (uint32_t)turns - counts->labelled;
        if (counts->labelled == 0)
            r = pv_llm_refusef(
                PV_LLM_REFUSAL_LABELS, why, cap,
                "give one entry per trajectory (traj_id 0 to %zu) with exactly one role "
                "per turn, each \"decisive\", \"exploration\", \"no_progress\" or "
                "\"regression\"",
                ctx->n_trajs - 1);
    }
    json_decref(a);
    return r;
}
