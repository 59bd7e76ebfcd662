/* llm_answer.h - the LLM judge's answer: its JSON schema, how a request constrains the model
 * to it, and the validator (ProVer's agentic judge, ../shared/METHODS.md: "The answer is
 * validated (schema, bounds, action validity, nonterminal end) with up to 3 repair turns").
 *
 * The answer is one JSON object:
 *   {"failure_mode": "<one sentence>", "traj_id": S, "start_turn": a, "end_turn": b,
 *    "actions": ["<a_a>", ..., "<a_b>"]}
 * S is the shown success (llm_prompt.h), [a, b] inclusive action turns; it becomes the
 * segment {traj S, steps [a, b + 1), expect +1} (proposer.h).
 *
 * Constraining the model (judge.response_format), in the dialects the common servers accept:
 *   json_schema   OpenAI's `"response_format": {"type": "json_schema", "json_schema":
 *                 {"name", "strict": true, "schema"}}`; also vLLM (structured outputs),
 *                 llama.cpp's llama-server (converted to a grammar) and Ollama's /v1
 *                 endpoint (which turns it into its native `format` field).
 *   json_object   `"response_format": {"type": "json_object", "schema": schema}`: the form
 *                 llama-server documents (its other way is `grammar`, a GBNF text); servers
 *                 with JSON mode only ignore the schema (OpenAI rejects the field: use
 *                 json_schema there).
 *   guided_json   vLLM's extra parameter `"guided_json": schema` (older vLLM releases).
 *   none          no constraint: the prompt's instructions and the validator only.
 * Ollama's native /api/chat takes the schema as `"format": schema`; prover speaks only the
 * OpenAI-compatible /v1/chat/completions, where Ollama accepts `response_format`.
 */
#ifndef PV_LLM_ANSWER_H
#define PV_LLM_ANSWER_H

#include <stddef.h>

#include <jansson.h>

#include "judge/llm_prompt.h"
#include "judge/proposer.h"

typedef enum pv_llm_format {
    PV_LLM_FORMAT_JSON_SCHEMA = 0,
    PV_LLM_FORMAT_JSON_OBJECT,
    PV_LLM_FORMAT_GUIDED_JSON,
    PV_LLM_FORMAT_NONE,
} pv_llm_format_t;

/* "json_schema" | "json_object" | "guided_json" | "none". Errors: PV_ERR_INVAL. */
pv_err_t pv_llm_format_parse(const char *name, pv_llm_format_t *out);

/* X(name, text): why the validator refused an answer (the repair message starts with the
 * text, then the detail). */
#define PV_LLM_REFUSAL_LIST(X)                                                                     \
    X(OK, "accepted")                                                                              \
    X(NOT_JSON, "the answer is not one JSON object")                                               \
    X(MISSING, "a required field is missing or empty")                                             \
    X(TYPE, "a field has the wrong type")                                                          \
    X(TRAJ, "traj_id is not the successful trajectory shown")                                      \
    X(BOUNDS, "a turn is outside the trajectory")                                                  \
    X(ORDER, "end_turn is before start_turn")                                                      \
    X(LENGTH, "the segment has too many turns")                                                    \
    X(TERMINAL, "the segment ends at the last turn (it must be nonterminal)")                      \
    X(REFUSED, "the segment starts or ends with a refused or malformed action")                    \
    X(ACTIONS, "the actions are not the trajectory's actions at those turns")                      \
    X(LABELS, "no turn carries a known role (TRIAGE labels, llm_label.h)")

typedef enum pv_llm_refusal {
#define PV_LLM_REFUSAL_ENUM_(name, text) PV_LLM_REFUSAL_##name,
    PV_LLM_REFUSAL_LIST(PV_LLM_REFUSAL_ENUM_)
#undef PV_LLM_REFUSAL_ENUM_
        PV_LLM_REFUSAL__COUNT
} pv_llm_refusal_t;

/* Stable upper-case name ("TERMINAL") and the fixed text of a refusal. */
const char *pv_llm_refusal_name(pv_llm_refusal_t r);
const char *pv_llm_refusal_text(pv_llm_refusal_t r);

/* The model's answer text[0 .. len) (untrusted) as a JSON object into *out (a new
 * reference; NULL when refused): refused NOT_JSON when empty, longer than max_bytes, not
 * JSON (after a Markdown ``` fence and surrounding whitespace are taken off, duplicate keys
 * refused) or not an object; why[0 .. cap) says which. The first check of every validator. */
pv_llm_refusal_t pv_llm_answer_object(const char *text, size_t len, size_t max_bytes, json_t **out,
                                      char *why, size_t cap);

/* Write "<the refusal's text>: <detail>" (printf-style) into why[0 .. cap) (NULL or 0 cap:
 * nothing) and return r: the validators' way to refuse. */
pv_llm_refusal_t pv_llm_refusef(pv_llm_refusal_t r, char *why, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* An accepted answer. */
typedef struct pv_llm_answer {
    pv_segment_t seg;       /* traj = ctx->success, [start, end + 1), expect +1 */
    char failure_mode[256]; /* the model's words, made safe (llm_text.h), cut */
} pv_llm_answer_t;

/* The JSON Schema of the answer for this group (traj_id fixed to the success, turn bounds,
 * 1..max_turns actions): a new reference, NULL when out of memory. */
json_t *pv_llm_answer_schema(const pv_llm_ctx_t *ctx);

/* Put `schema` (a JSON Schema, its reference taken; NULL = out of memory) into `request`
 * (a chat completions body) as dialect `fmt` asks: response_format json_schema (named
 * `name`, strict) or json_object, or vLLM's guided_json; nothing for none. Shared by the
 * segment answer and TRIAGE's labels. Errors: PV_ERR_NOMEM. */
pv_err_t pv_llm_format_constrain(pv_llm_format_t fmt, const char *name, json_t *schema,
                                 json_t *request);

/* Put the answer's constraint into `request` (a chat completions body) in dialect `fmt`.
 * Errors: PV_ERR_NOMEM. */
pv_err_t pv_llm_answer_constrain(const pv_llm_ctx_t *ctx, pv_llm_format_t fmt, json_t *request);

/* Validate the model's answer text[0..len) (untrusted; surrounding whitespace and a
 * Markdown ``` fence are tolerated, as are fields beyond the schema's): the schema (a JSON
 * object with the five fields, integers for the turns: integral reals are accepted), then
 * traj_id == ctx->success, 0 <= start_turn <= end_turn < n_steps, at most max_turns turns,
 * end_turn + 1 < n_steps (nonterminal), neither end refused (llm_prompt.h), and actions[i]
 * equal to the trajectory's action at start_turn + i (ignoring case and spacing).
 * Returns PV_LLM_REFUSAL_OK and fills *out, or the first reason that applies with a human
 * detail in why[0..cap) (sent back to the model as the repair message). */
pv_llm_refusal_t pv_llm_answer_check(const pv_llm_ctx_t *ctx, const char *text, size_t len,
                                     pv_llm_answer_t *out, char *why, size_t cap);

#endif
