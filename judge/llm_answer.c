/* llm_answer.c - the answer's schema, constraint and validator; see llm_answer.h. */
#include "judge/llm_answer.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define S_MAX_ANSWER_BYTES (64u << 10)

static const char *const s_formats[] = {"json_schema", "json_object", "guided_json", "none"};

pv_err_t pv_llm_format_parse(const char *name, pv_llm_format_t *out)
{
    for (size_t i = 0; name && i < sizeof s_formats / sizeof s_formats[0]; i++)
        if (strcmp(name, s_formats[i]) == 0) {
            *out = (pv_llm_format_t)i;
            return PV_OK;
        }
    return PV_ERR_INVAL;
}

static const char *const s_ref_names[] = {
#define PV_LLM_REFUSAL_NAME_(name, text) #name,
    PV_LLM_REFUSAL_LIST(PV_LLM_REFUSAL_NAME_)
#undef PV_LLM_REFUSAL_NAME_
};
static const char *const s_ref_texts[] = {
#define PV_LLM_REFUSAL_TEXT_(name, text) text,
    PV_LLM_REFUSAL_LIST(PV_LLM_REFUSAL_TEXT_)
#undef PV_LLM_REFUSAL_TEXT_
};

const char *pv_llm_refusal_name(pv_llm_refusal_t r)
{
    return (unsigned)r < PV_LLM_REFUSAL__COUNT ? s_ref_names[r] : "UNKNOWN";
}

const char *pv_llm_refusal_text(pv_llm_refusal_t r)
{
    return (unsigned)r < PV_LLM_REFUSAL__COUNT ? s_ref_texts[r] : "unknown refusal";
}

json_t *pv_llm_answer_schema(const pv_llm_ctx_t *ctx)
{
    const pv_traj_t *s = &ctx->trajs[ctx->success];
    json_int_t last_end = (json_int_t)s->n_steps - 2; /* nonterminal: end + 1 < n_steps */
    return json_pack("{s:s, s:{s:{s:s}, s:{s:s, s:[I]}, s:{s:s, s:i, s:I}, s:{s:s, s:i, s:I}, "
                     "s:{s:s, s:{s:s}, s:i, s:i}}, s:[s, s, s, s, s], s:b}",
                     "type", "object", "properties", "failure_mode", "type", "string", "traj_id",
                     "type", "integer", "enum", (json_int_t)ctx->success, "start_turn", "type",
                     "integer", "minimum", 0, "maximum", last_end, "end_turn", "type", "integer",
                     "minimum", 0, "maximum", last_end, "actions", "type", "array", "items", "type",
                     "string", "minItems", 1, "maxItems", (int)ctx->lim.max_turns, "required",
                     "failure_mode", "traj_id", "start_turn", "end_turn", "actions",
                     "additionalProperties", 0);
}

pv_err_t pv_llm_format_constrain(pv_llm_format_t fmt, const char *name, json_t *schema,
                                 json_t *request)
{
    if (fmt == PV_LLM_FORMAT_NONE) {
        json_decref(schema);
        return PV_OK;
    }
    if (!schema)
        return PV_ERR_NOMEM;
    json_t *v = NULL;
    const char *key = "response_format";
    if (fmt == PV_LLM_FORMAT_JSON_SCHEMA)
        v = json_pack("{s:s, s:{s:s, s:b, s:o}}", "type", "json_schema", "json_schema", "name",
                      name, "strict", 1, "schema", schema);
    else if (fmt == PV_LLM_FORMAT_JSON_OBJECT)
        v = json_pack("{s:s, s:o}", "type", "json_object", "schema", schema);
    else {
        key = "guided_json";
        v = schema;
    }
    if (!v || json_object_set_new(request, key, v) != 0)
        return PV_ERR_NOMEM;
    return PV_OK;
}

pv_err_t pv_llm_answer_constrain(const pv_llm_ctx_t *ctx, pv_llm_format_t fmt, json_t *request)
{
    return fmt == PV_LLM_FORMAT_NONE
               ? PV_OK
               : pv_llm_format_constrain(fmt, "prover_segment", pv_llm_answer_schema(ctx), request);
}

pv_llm_refusal_t pv_llm_refusef(pv_llm_refusal_t r, char *why, size_t cap, const char *fmt, ...)
{
    if (why && cap) {
        int n = snprintf(why, cap, "%s: ", pv_llm_refusal_text(r));
        if (n >= 0 && (size_t)n < cap) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(why + n, cap - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return r;
}

static pv_llm_refusal_t s_check(const pv_llm_ctx_t *ctx, const json_t *a, pv_llm_answer_t *out,
                                char *why, size_t cap)
{
    static const char *const fields[] = {"failure_mode", "traj_id", "start_turn", "end_turn",
                                         "actions"};
    for (size_t i = 0; i < 5; i++) {
        const json_t *v = json_object_get(a, fields[i]);
        if (!v || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0) ||
            (json_is_array(v) && json_array_size(v) == 0))
            return pv_llm_refusef(PV_LLM_REFUSAL_MISSING, why, cap, "'%s'", fields[i]);
    }
    long long id, a0, a1;
    if (!json_is_string(json_object_get(a, "failure_mode")))
        return pv_llm_refusef(PV_LLM_REFUSAL_TYPE, why, cap, "'failure_mode' must be a string");
    if (!pv_llm_json_int(json_object_get(a, "traj_id"), &id) ||
        !pv_llm_json_int(json_object_get(a, "start_turn"), &a0) ||
        !pv_llm_json_int(json_object_get(a, "end_turn"), &a1))
        return pv_llm_refusef(PV_LLM_REFUSAL_TYPE, why, cap,
                              "'traj_id', 'start_turn' and 'end_turn' must be integers");
    const json_t *acts = json_object_get(a, "actions");
    if (!json_is_array(acts))
        return pv_llm_refusef(PV_LLM_REFUSAL_TYPE, why, cap,
                              "'actions' must be an array of strings");
    for (size_t i = 0; i < json_array_size(acts); i++)
        if (!json_is_string(json_array_get(acts, i)))
            return pv_llm_refusef(PV_LLM_REFUSAL_TYPE, why, cap,
                                  "'actions' must be an array of strings");
    if (id != ctx->success)
        return pv_llm_refusef(PV_LLM_REFUSAL_TRAJ, why, cap, "traj_id must be %u, not %lld",
                              ctx->success, id);
    const pv_traj_t *s = &ctx->trajs[ctx->success];
    long long n = (long long)s->n_steps;
    if (a0 < 0 || a1 < 0 || a0 >= n || a1 >= n)
        return pv_llm_refusef(
            PV_LLM_REFUSAL_BOUNDS, why, cap,
            "trajectory %u has turns 0 to %lld; got start_turn %lld, end_turn %lld", ctx->success,
            n - 1, a0, a1);
    if (a1 < a0)
        return pv_llm_refusef(PV_LLM_REFUSAL_ORDER, why, cap, "start_turn %lld, end_turn %lld", a0,
                              a1);
    if (a1 - a0 + 1 > ctx->lim.max_turns)
        return pv_llm_refusef(PV_LLM_REFUSAL_LENGTH, why, cap, "%lld turns; at most %u",
                              a1 - a0 + 1, ctx->lim.max_turns);
    if (a1 + 1 >= n)
        return pv_llm_refusef(PV_LLM_REFUSAL_TERMINAL, why, cap,
                              "end_turn %lld is the last turn; end at turn %lld or earlier", a1,
                              n - 2);
    if (pv_llm_action_refused(s, (size_t)a0) || pv_llm_action_refused(s, (size_t)a1))
        return pv_llm_refusef(PV_LLM_REFUSAL_REFUSED, why, cap, "turn %lld was refused",
                              pv_llm_action_refused(s, (size_t)a0) ? a0 : a1);
    if ((long long)json_array_size(acts) != a1 - a0 + 1)
        return pv_llm_refusef(PV_LLM_REFUSAL_ACTIONS, why, cap,
                              "%zu actions for %lld turns; give one action per turn",
                              json_array_size(acts), a1 - a0 + 1);
    for (long long t = a0; t <= a1; t++) {
        const char *got = json_string_value(json_array_get(acts, (size_t)(t - a0)));
        const char *real = s->texts[2 * t + 1];
        if (!pv_llm_same_action(got, real)) {
            char g[128], r[128];
            snprintf(g, sizeof g, "%s", got); /* the model's text goes back to it, cut */
            snprintf(r, sizeof r, "%s", real);
            return pv_llm_refusef(PV_LLM_REFUSAL_ACTIONS, why, cap,
                                  "turn %lld is \"%s\", not \"%s\"", t, r, g);
        }
    }
    memset(out, 0, sizeof *out);
    out->seg = (pv_segment_t){
        .traj = ctx->success, .t0 = (uint32_t)a0, .t1 = (uint32_t)a1 + 1, .expect = +1};
    pv_llm_buf_t b;
    pv_llm_buf_init(&b, sizeof out->failure_mode - 1);
    pv_llm_buf_put_clipped(&b, json_string_value(json_object_get(a, "failure_mode")),
                           sizeof out->failure_mode - 8, true);
    if (b.data)
        memcpy(out->failure_mode, b.data, b.len + 1);
    pv_llm_buf_free(&b);
    return PV_LLM_REFUSAL_OK;
}

pv_llm_refusal_t pv_llm_answer_object(const char *text, size_t len, size_t max_bytes, json_t **out,
                                      char *why, size_t cap)
{
    *out = NULL;
    if (why && cap)
        why[0] = '\0';
    if (!text || len == 0)
        return pv_llm_refusef(PV_LLM_REFUSAL_NOT_JSON, why, cap, "the answer is empty");
    if (len > max_bytes)
        return pv_llm_refusef(PV_LLM_REFUSAL_NOT_JSON, why, cap,
                              "the answer is longer than %zu bytes", max_bytes);
    pv_llm_unfence(&text, &len);
    json_error_t jerr;
    json_t *a = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(a)) {
        json_decref(a);
        return pv_llm_refusef(PV_LLM_REFUSAL_NOT_JSON, why, cap, "%s",
                              a ? "a JSON value but not an object" : jerr.text);
    }
    *out = a;
    return PV_LLM_REFUSAL_OK;
}

pv_llm_refusal_t pv_llm_answer_check(const pv_llm_ctx_t *ctx, const char *text, size_t len,
                                     pv_llm_answer_t *out, char *why, size_t cap)
{
    json_t *a = NULL;
    pv_llm_refusal_t r0 = pv_llm_answer_object(text, len, S_MAX_ANSWER_BYTES, &a, why, cap);
    if (r0 != PV_LLM_REFUSAL_OK)
        return r0;
    pv_llm_refusal_t r = s_check(ctx, a, out, why, cap);
    json_decref(a);
    return r;
}
