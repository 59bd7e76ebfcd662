/* llm_reply.c - the model's reply to one request: tool calls run and answered, the answer
 * validated, repaired or fallen back (see llm_judge.h for the protocol). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "judge/llm_judge_int.h"
#include "judge/llm_tools.h"

/* ---- answers ------------------------------------------------------------------------- */

static void s_answer(pv_llm_judge_t *J, pv_llm_conv_t *c, const char *text, size_t len)
{
    pv_llm_answer_t a;
    char why[512];
    bool labels = c->g.label_turns;
    pv_llm_refusal_t r =
        labels ? pv_llm_label_check(&c->ctx, text, len, c->g.roles, &c->res.labels, why, sizeof why)
               : pv_llm_answer_check(&c->ctx, text, len, &a, why, sizeof why);
    if (r == PV_LLM_REFUSAL_OK && labels) {
        c->res.fallback = PV_LLM_FALLBACK_NONE;
        c->res.n_segs = 0;
        J->st.answered++;
        J->st.turns_labelled += c->res.labels.labelled;
        J->st.turns_unlabelled += c->res.labels.unlabelled;
        pv_llm_conv_end(J, c);
        return;
    }
    if (r == PV_LLM_REFUSAL_OK) {
        c->res.fallback = PV_LLM_FALLBACK_NONE;
        c->res.n_segs = 1;
        c->res.seg = a.seg;
        memcpy(c->res.failure_mode, a.failure_mode, sizeof c->res.failure_mode);
        J->st.answered++;
        pv_llm_conv_end(J, c);
        return;
    }
    J->st.refusals_by[r]++;
    if (c->res.repairs >= J->o.max_repairs) {
        pv_llm_conv_fallback(J, c, PV_LLM_FALLBACK_INVALID, "%s", why);
        return;
    }
    c->res.repairs++;
    J->st.repairs++;
    char repair[768];
    snprintf(repair, sizeof repair,
             "Your answer was refused. %s. Answer again with only the JSON object %s.", why,
             labels ? "({\"trajectories\": [{\"traj_id\", \"roles\"}, ...]})"
                    : "(failure_mode, traj_id, start_turn, end_turn, actions)");
    if (!pv_llm_conv_push(c->messages,
                          pv_llm_conv_msg("assistant", text ? text : "", PV_LLM_KEEP_CONTENT)) ||
        !pv_llm_conv_push(c->messages, pv_llm_conv_msg("user", repair, sizeof repair))) {
        pv_llm_conv_fallback(J, c, PV_LLM_FALLBACK_INTERNAL, "out of memory");
        return;
    }
    pv_llm_conv_send(J, c);
}

/* A string field of at most max bytes, else NULL. */
static const char *s_str(const json_t *o, const char *key, size_t max)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) && json_string_length(v) <= max ? json_string_value(v) : NULL;
}

/* One tool call of the model, run (or refused) and answered. */
static bool s_tool_call(pv_llm_judge_t *J, pv_llm_conv_t *c, const json_t *call, size_t i,
                        json_t *calls_out, json_t *results)
{
    char synth[32];
    snprintf(synth, sizeof synth, "call_%zu_%u", i, c->res.tool_calls);
    const char *id = json_is_object(call) ? s_str(call, "id", 128) : NULL;
    const json_t *fn = json_is_object(call) ? json_object_get(call, "function") : NULL;
    const char *name = json_is_object(fn) ? s_str(fn, "name", 64) : NULL;
    const json_t *av = json_is_object(fn) ? json_object_get(fn, "arguments") : NULL;
    char *args = json_is_string(av) && json_string_length(av) <= PV_LLM_MAX_ARGS
                     ? strdup(json_string_value(av))
                 : json_is_object(av) ? json_dumps(av, JSON_COMPACT) /* some servers */
                                      : strdup("");
    if (!args)
        return false;
    if (!id || !*id)
        id = synth;
    char *out = NULL;
    pv_err_t rc;
    if (c->res.tool_calls < J->o.max_tool_calls) {
        rc = pv_llm_tool_run(&c->ctx, name ? name : "", *args ? args : NULL, &out);
        c->res.tool_calls++;
        J->st.tool_calls++;
    } else {
        rc = PV_ERR_LIMIT;
        out = strdup("{\"error\":\"no tool calls are left: answer with the JSON object now\"}");
    }
    if (rc != PV_OK)
        J->st.tool_errors++;
    bool ok = out != NULL;
    if (ok) {
        json_t *m = json_pack("{s:s, s:s, s:{s:s, s:s}}", "id", id, "type", "function", "function",
                              "name", name ? name : "", "arguments", args);
        ok = pv_llm_conv_push(calls_out, m) &&
             pv_llm_conv_push(results, json_pack("{s:s, s:s, s:s}", "role", "tool", "tool_call_id",
                                                 id, "content", out));
    }
    free(args);
    free(out);
    return ok;
}

static void s_tool_turn(pv_llm_judge_t *J, pv_llm_conv_t *c, const json_t *calls)
{
    if (c->tools_closed) { /* told to answer, it called tools again: that costs a repair */
        J->st.refusals_by[PV_LLM_REFUSAL_MISSING]++;
        if (c->res.repairs >= J->o.max_repairs) {
            pv_llm_conv_fallback(J, c, PV_LLM_FALLBACK_INVALID, "tool calls after the tool budget");
            return;
        }
        c->res.repairs++;
        J->st.repairs++;
    }
    json_t *calls_out = json_array(), *results = json_array();
    bool ok = calls_out && results;
    size_t n = json_array_size(calls);
    for (size_t i = 0; ok && i < n && i < PV_LLM_CALLS_PER_MSG; i++)
        ok = s_tool_call(J, c, json_array_get(calls, i), i, calls_out, results);
    json_t *amsg =
        ok ? json_pack("{s:s, s:n, s:O}", "role", "assistant", "content", "tool_calls", calls_out)
           : NULL;
    ok = pv_llm_conv_push(c->messages, amsg);
    for (size_t i = 0; ok && i < json_array_size(results); i++)
        ok = json_array_append(c->messages, json_array_get(results, i)) == 0;
    json_decref(calls_out);
    json_decref(results);
    if (ok && c->res.tool_calls >= J->o.max_tool_calls) {
        char say[160];
        snprintf(say, sizeof say,
                 "No tool calls are left (%u used). Answer now with only the JSON object.",
                 c->res.tool_calls);
        c->tools_closed = true;
        ok = pv_llm_conv_push(c->messages, pv_llm_conv_msg("user", say, sizeof say));
    }
    if (!ok) {
        pv_llm_conv_fallback(J, c, PV_LLM_FALLBACK_INTERNAL, "out of memory");
        return;
    }
    pv_llm_conv_send(J, c);
}

/* The content of a message as text: a string, or the text parts of an array. malloc'd. */
static char *s_content(const json_t *content)
{
    if (json_is_string(content))
        return strndup(json_string_value(content), json_string_length(content));
    pv_llm_buf_t b;
    pv_llm_buf_init(&b, 1u << 20);
    pv_llm_buf_putn(&b, "", 0);
    for (size_t i = 0; json_is_array(content) && i < json_array_size(content); i++) {
        const json_t *p = json_array_get(content, i);
        const char *t = json_is_object(p) ? s_str(p, "text", 1u << 20) : NULL;
        if (t)
            pv_llm_buf_put(&b, t);
    }
    if (b.oom) {
        pv_llm_buf_free(&b);
        return NULL;
    }
    return b.data;
}

static void s_count(uint64_t *sum, uint64_t *own, const json_t *v)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0 &&
        json_integer_value(v) < ((json_int_t)1 << 40)) {
        *sum += (uint64_t)json_integer_value(v);
        *own += (uint64_t)json_integer_value(v);
    }
}

/* A reply with HTTP 2xx: a chat completion, else a failed request. */
void pv_llm_conv_reply(pv_llm_judge_t *J, pv_llm_conv_t *c, const char *body, size_t len)
{
    json_error_t e;
    json_t *r = json_loadb(body, len, JSON_REJECT_DUPLICATES, &e);
    const json_t *choices = json_object_get(r, "choices");
    const json_t *msg = json_object_get(json_array_get(choices, 0), "message");
    if (!json_is_object(msg)) {
        J->st.http_errors++;
        c->last_timeout = false;
        char d[200];
        snprintf(d, sizeof d, "the reply is not a chat completion: %s",
                 !r ? e.text : "no choices[0].message");
        json_decref(r);
        pv_llm_conv_retry(J, c, d);
        return;
    }
    const json_t *usage = json_object_get(r, "usage");
    s_count(&J->st.prompt_tokens, &c->res.prompt_tokens, json_object_get(usage, "prompt_tokens"));
    s_count(&J->st.completion_tokens, &c->res.completion_tokens,
            json_object_get(usage, "completion_tokens"));
    c->attempt = 0;
    const json_t *calls = json_object_get(msg, "tool_calls");
    if (json_is_array(calls) && json_array_size(calls) > 0 && !c->g.label_turns) {
        s_tool_turn(J, c, calls);
    } else {
        char *text = s_content(json_object_get(msg, "content"));
        if (!text)
            pv_llm_conv_fallback(J, c, PV_LLM_FALLBACK_INTERNAL, "out of memory");
        else
            s_answer(J, c, text, strlen(text));
        free(text);
    }
    json_decref(r);
}
