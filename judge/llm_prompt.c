/* llm_prompt.c - the LLM judge's view of a group and its prompt; see llm_prompt.h. */
#include "judge/llm_prompt.h"

#include <ctype.h>
#include <string.h>

#define S_PREVIEW_OBS 80u /* bytes of an answer in a failure's preview */

pv_llm_limits_t pv_llm_limits_default(void)
{
    return (pv_llm_limits_t){.max_turns = 4,
                             .obs_chars = 400,
                             .preview_turns = 6,
                             .max_get_turns = 8,
                             .max_search_k = 10,
                             .max_prompt_bytes = 48u << 10};
}

static bool s_blank(const char *s)
{
    for (; s && *s; s++)
        if (!isspace((unsigned char)*s))
            return false;
    return true;
}

bool pv_llm_action_refused(const pv_traj_t *tr, size_t t)
{
    if (t >= tr->n_steps)
        return true;
    if (tr->steps && tr->steps[t].refused)
        return true;
    const char *a = tr->texts[2 * t + 1], *next = tr->texts[2 * t + 2];
    if (!a || s_blank(a))
        return true;
    if (tr->steps && tr->steps[t].n_cands > 0 && tr->steps[t].cands) {
        bool offered = false;
        for (size_t c = 0; c < tr->steps[t].n_cands && !offered; c++)
            offered = tr->steps[t].cands[c] && pv_llm_same_action(a, tr->steps[t].cands[c]);
        if (!offered)
            return true;
    }
    if (next) {
        while (isspace((unsigned char)*next))
            next++;
        if (strncmp(next, "Nothing happens.", 16) == 0 && s_blank(next + 16))
            return true;
        if (strncmp(next, "My previous action is invalid", 29) == 0)
            return true;
    }
    return false;
}

bool pv_llm_segment_allowed(const pv_traj_t *tr, uint32_t start, uint32_t end, uint32_t max_turns)
{
    if (start > end || (uint64_t)end + 1 >= tr->n_steps || end - start + 1 > max_turns)
        return false;
    return !pv_llm_action_refused(tr, start) && !pv_llm_action_refused(tr, end);
}

/* A success has an allowed segment when some single nonterminal turn is not refused. */
static bool s_has_segment(const pv_traj_t *tr)
{
    for (size_t t = 0; t + 1 < tr->n_steps; t++)
        if (!pv_llm_action_refused(tr, t))
            return true;
    return false;
}

pv_err_t pv_llm_ctx_init(pv_llm_ctx_t *ctx, uint64_t group_id, const char *task_text,
                         const pv_traj_t *trajs, size_t n_trajs, const pv_llm_limits_t *lim,
                         pv_errmsg_t *em)
{
    memset(ctx, 0, sizeof *ctx);
    if (!trajs || !lim || lim->max_turns == 0 || lim->obs_chars == 0 ||
        lim->max_prompt_bytes < 1024 || n_trajs > UINT32_MAX)
        return pv_errf(em, PV_ERR_INVAL, "llm judge: bad arguments");
    bool win = false, loss = false;
    for (size_t i = 0; i < n_trajs; i++) {
        if (!trajs[i].texts)
            return pv_errf(em, PV_ERR_INVAL, "llm judge: trajectory %zu has no texts", i);
        for (size_t k = 0; k < 2 * trajs[i].n_steps + 1; k++)
            if (!trajs[i].texts[k])
                return pv_errf(em, PV_ERR_INVAL, "llm judge: trajectory %zu text %zu missing", i,
                               k);
        win |= trajs[i].won;
        loss |= !trajs[i].won;
    }
    if (!win || !loss)
        return pv_errf(em, PV_ERR_INVAL, "llm judge: the group needs a success and a failure");
    size_t best = n_trajs; /* the first of the shortest, as pv_group_shortest_success */
    for (size_t i = 0; i < n_trajs; i++)
        if (trajs[i].won && (best == n_trajs || trajs[i].n_steps < trajs[best].n_steps))
            best = i;
    if (!s_has_segment(&trajs[best]))
        return pv_errf(em, PV_ERR_NOTFOUND,
                       "llm judge: the shortest success has no nonterminal turn that is not "
                       "refused");
    *ctx = (pv_llm_ctx_t){.group_id = group_id,
                          .task_text = task_text ? task_text : "",
                          .trajs = trajs,
                          .n_trajs = n_trajs,
                          .success = (uint32_t)best,
                          .lim = *lim};
    return PV_OK;
}

void pv_llm_prompt_system(const pv_llm_ctx_t *ctx, pv_llm_buf_t *out)
{
    pv_llm_buf_printf(
        out,
        "You are the judge of ProVer, a reinforcement-learning method that gives credit to "
        "pivotal decisions. An agent attempted one task several times; some attempts "
        "succeeded and the others failed.\n"
        "Your job:\n"
        "1. Name the failure mode that recurs across the failed attempts.\n"
        "2. In the successful attempt you are shown, find the shortest segment of consecutive "
        "action turns (at most %u turns) that solves or avoids that failure mode.\n"
        "Rules: turns are numbered from 0; turn t is the action taken after observation t. "
        "The segment must end before the last turn of the attempt, and its first and last "
        "turns must not be refused or malformed actions (marked [refused]).\n"
        "Tools: search_trajectory(query, k) returns the turns of the failed attempts that "
        "best match the words of the query; get_segment(traj_id, start_turn, end_turn) shows "
        "turns of any attempt.\n"
        "Answer with one JSON object and nothing else:\n"
        "{\"failure_mode\": \"<one sentence>\", \"traj_id\": <the successful attempt's "
        "trajectory>, \"start_turn\": <first turn>, \"end_turn\": <last turn, inclusive>, "
        "\"actions\": [<the action text of each turn of the segment, in order>]}\n",
        ctx->lim.max_turns);
}

static void s_turn_line(pv_llm_buf_t *b, const pv_traj_t *tr, size_t t, size_t obs_chars,
                        bool preview)
{
    bool refused = pv_llm_action_refused(tr, t);
    pv_llm_buf_printf(b, "%sturn %zu%s: ", preview ? "  " : "", t, refused ? " [refused]" : "");
    pv_llm_buf_put_clipped(b, tr->texts[2 * t + 1], 200, true);
    if (preview) {
        pv_llm_buf_put(b, " -> ");
        pv_llm_buf_put_clipped(b, tr->texts[2 * t + 2], obs_chars, true);
    }
    pv_llm_buf_put(b, "\n");
}

static void s_user(const pv_llm_ctx_t *ctx, pv_llm_buf_t *b, size_t obs, size_t pobs)
{
    const pv_traj_t *s = &ctx->trajs[ctx->success];
    size_t n = s->n_steps;
    pv_llm_buf_printf(b, "Group %llu. Task: ", (unsigned long long)ctx->group_id);
    pv_llm_buf_put_clipped(b, ctx->task_text, 1000, true);
    pv_llm_buf_printf(b,
                      "\n\nThe successful attempt to judge is trajectory %u (%zu action turns, "
                      "turns 0-%zu). Propose a segment of it: at most %u consecutive turns, "
                      "ending at turn %zu or earlier, neither starting nor ending with a "
                      "refused action.\n\n"
                      "Trajectory %u (success), in full:\n",
                      ctx->success, n, n - 1, ctx->lim.max_turns, n - 2, ctx->success);
    for (size_t t = 0; t < n; t++) {
        pv_llm_buf_printf(b, "observation %zu: ", t);
        pv_llm_buf_put_clipped(b, s->texts[2 * t], obs, true);
        pv_llm_buf_put(b, "\n");
        s_turn_line(b, s, t, obs, false);
    }
    pv_llm_buf_put(b, "final observation: ");
    pv_llm_buf_put_clipped(b, s->texts[2 * n], obs, true);
    size_t first = ctx->lim.preview_turns / 3, last = ctx->lim.preview_turns - first;
    pv_llm_buf_printf(b,
                      "\n\nFailed attempts: previews of their first %zu and last %zu turns; "
                      "search_trajectory and get_segment show more.\n",
                      first, last);
    for (size_t i = 0; i < ctx->n_trajs; i++) {
        const pv_traj_t *f = &ctx->trajs[i];
        if (f->won)
            continue;
        size_t refused = 0;
        for (size_t t = 0; t < f->n_steps; t++)
            refused += pv_llm_action_refused(f, t);
        pv_llm_buf_printf(b, "trajectory %zu (failed, %zu turns, %zu refused):\n", i, f->n_steps,
                          refused);
        for (size_t t = 0; t < f->n_steps; t++) {
            if (t == first && f->n_steps > first + last)
                pv_llm_buf_printf(b, "  (turns %zu-%zu not shown)\n", t, f->n_steps - last - 1);
            if (t < first || t + last >= f->n_steps)
                s_turn_line(b, f, t, pobs, true);
        }
    }
    pv_llm_buf_put(b, "\nName the failure mode that recurs across the failed attempts and "
                      "answer with the JSON object.\n");
}

pv_err_t pv_llm_prompt_fit(const pv_llm_ctx_t *ctx, pv_llm_user_fill_fn fill, size_t pobs,
                           pv_llm_buf_t *out)
{
    size_t obs = ctx->lim.obs_chars;
    for (;;) {
        pv_llm_buf_t b;
        pv_llm_buf_init(&b, ctx->lim.max_prompt_bytes);
        fill(ctx, &b, obs, pobs);
        pv_err_t rc = pv_llm_buf_status(&b);
        if (rc == PV_OK || rc == PV_ERR_NOMEM || obs <= PV_LLM_MIN_OBS_CHARS) {
            if (rc == PV_OK) {
                pv_llm_buf_putn(out, b.data, b.len);
                rc = pv_llm_buf_status(out);
            }
            pv_llm_buf_free(&b);
            return rc;
        }
        pv_llm_buf_free(&b);
        obs = obs / 2 > PV_LLM_MIN_OBS_CHARS ? obs / 2 : PV_LLM_MIN_OBS_CHARS;
        pobs = pobs / 2 > PV_LLM_MIN_OBS_CHARS ? pobs / 2 : PV_LLM_MIN_OBS_CHARS;
    }
}

pv_err_t pv_llm_prompt_user(const pv_llm_ctx_t *ctx, pv_llm_buf_t *out)
{
    return pv_llm_prompt_fit(ctx, s_user, S_PREVIEW_OBS, out);
}
