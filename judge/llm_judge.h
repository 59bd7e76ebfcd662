/* llm_judge.h - prover.judge = llm: ProVer's agentic judge, a model behind an
 * OpenAI-compatible chat completions endpoint (../shared/METHODS.md "ProVer"; OpenAI's
 * /v1/chat/completions API with tool calling and structured outputs).
 *
 * Per group, one conversation:
 *   1. system + user messages (llm_prompt.h): the shortest success in full, previews of the
 *      failures, the task: name the recurring failure mode, propose the shortest nonterminal
 *      segment of at most max_turns turns of the success that avoids it.
 *   2. The model may call search_trajectory / get_segment (llm_tools.h, OpenAI `tools`,
 *      tool_choice "auto"); each call's result goes back as a `tool` message. After
 *      max_tool_calls calls the request says tool_choice "none" and asks for the answer.
 *   3. The answer is JSON constrained by response_format (llm_answer.h) and validated
 *      (schema, bounds, nonterminal end, real actions, length). A refused answer gets a
 *      repair turn (the validator's message as a user message), at most max_repairs.
 *   4. No valid answer (repairs spent, the endpoint failing after its retries, an HTTP
 *      error that a retry cannot fix, the group's deadline): the group falls back to the
 *      contrast judge (judge/proposer.h with the run's protocol, its first proposal), and
 *      the reason is counted.
 * Eligibility (1..3 successes) is the caller's: submit only groups the protocol judges.
 * TRIAGE's labels (pv_llm_group_t.label_turns, llm_label.h) use the same conversations: one
 * question about every turn of the group, its answer validated and repaired the same way.
 * Requests that fail on the network, time out (timeout_ms), answer 408/429/5xx or send a
 * body that is not a chat completion are retried up to `retries` times after backoff_ms,
 * 2 backoff_ms, 4 backoff_ms, ... (never past the group's deadline).
 *
 * Non-blocking: submit() starts a conversation and returns; poll(timeout_ms) drives every
 * conversation (libcurl's multi interface, at most max_in_flight requests at once) and
 * waits at most timeout_ms; take() returns a finished group's result. Many groups are in
 * flight at once and a slow or hung endpoint never stalls the caller's loop: a group
 * simply falls back once its deadline passes.
 *
 * Everything the endpoint sends is untrusted: bodies are bounded (1 MiB), every field is
 * type-checked, tool arguments are validated, and nothing it sends can crash the process.
 * The API key only goes into the Authorization header; it is never logged, never part of a
 * message, never written to a config dump (the config holds only the variable's name).
 * Not thread-safe: one thread drives a judge. The library logs nothing.
 */
#ifndef PV_LLM_JUDGE_H
#define PV_LLM_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/err.h"
#include "common/traj/traj.h"
#include "judge/llm_answer.h"
#include "judge/llm_label.h"
#include "judge/llm_prompt.h"
#include "judge/proposer.h"

typedef struct pv_llm_judge pv_llm_judge_t;

typedef struct pv_llm_opts {
    const char *base_url;      /* requests go to base_url + "/chat/completions" (copied) */
    const char *model;         /* the request's model (copied) */
    const char *api_key;       /* the key itself, NULL = none (copied, wiped at destroy) */
    uint32_t timeout_ms;       /* one request, > 0 */
    uint32_t group_timeout_ms; /* one group's conversation when submit names no deadline */
    uint32_t retries;          /* of one failed request */
    uint32_t backoff_ms;       /* before the first retry; doubled for each next */
    uint32_t max_in_flight;    /* requests at once, >= 1 */
    uint32_t capacity;         /* groups at once (conversations), >= 1 */
    uint32_t max_tokens;       /* completion tokens per request */
    double temperature;
    uint32_t max_repairs;    /* repair turns after refused answers */
    uint32_t max_tool_calls; /* tool calls per group; 0 = no tools offered */
    pv_llm_format_t format;  /* judge.response_format */
    pv_llm_limits_t lim;     /* segment length, prompt and tool bounds */
} pv_llm_opts_t;

/* The options of a run: judge.* (docs/config.md), the API key read from the environment
 * variable named by judge.api_key_env (unset or empty = no key; the pointer is getenv's),
 * lim.max_turns = max_turns (prover.max_segment_turns), capacity = groups at once
 * (prover.judge_capacity). Strings point into cfg. Errors: PV_ERR_CONFIG naming the key
 * (judge.model empty, judge.base_url not http(s), an unknown judge.response_format). */
pv_err_t pv_llm_opts_from_config(const pv_config_t *cfg, uint32_t max_turns, uint32_t capacity,
                                 pv_llm_opts_t *out, pv_errmsg_t *em);

/* X(name, text): why a group fell back to the contrast judge. */
#define PV_LLM_FALLBACK_LIST(X)                                                                    \
    X(NONE, "the model's segment")                                                                 \
    X(NO_SEGMENT, "no success has an allowed segment (nothing to ask)")                            \
    X(TIMEOUT, "the group's deadline passed, or the last request timed out")                       \
    X(HTTP, "the endpoint failed: network or HTTP error after the retries")                        \
    X(INVALID, "no valid answer after the repair turns")                                           \
    X(INTERNAL, "the request could not be built (prompt too long, out of memory)")

typedef enum pv_llm_fallback {
#define PV_LLM_FALLBACK_ENUM_(name, text) PV_LLM_FALLBACK_##name,
    PV_LLM_FALLBACK_LIST(PV_LLM_FALLBACK_ENUM_)
#undef PV_LLM_FALLBACK_ENUM_
        PV_LLM_FALLBACK__COUNT
} pv_llm_fallback_t;

/* The CREDITED_GROUP `judge` of a group whose llm judgement fell back to the contrast
 * judge (any reason but NONE), so its segments' acceptance is not counted as the model's. */
#define PV_JUDGE_FALLBACK_NAME "contrast-fallback"

/* Stable upper-case name ("TIMEOUT") of a fallback reason. */
const char *pv_llm_fallback_name(pv_llm_fallback_t f);

/* One group to judge. Everything is borrowed and must stay valid and unchanged until its
 * result is taken or the group is cancelled. */
typedef struct pv_llm_group {
    uint64_t group_id;           /* in the prompt ("Group N.") and for the caller's logs */
    const char *task_text;       /* the goal, NULL = "" */
    const pv_traj_t *trajs;      /* (n_trajs) texts o_0, a_0, ..., outcomes, candidates */
    const pv_traj_view_t *views; /* (n_trajs) the proposer's views (keys, texts, refused) for
                                    the contrast fallback; NULL =
                                    a fallback proposes nothing */
    size_t n_trajs;
    pv_propose_opts_t fallback; /* the run's proposal options (kind is taken as contrast) */
    uint64_t seed;              /* the fallback's RNG: pv_judge_seed(run.seed, group_id) */
    uint64_t deadline_ms;       /* pv_mono_ms() time the conversation must end by; 0 = now +
                                   group_timeout_ms */
    bool label_turns;           /* TRIAGE (algorithm.triage_labels = llm): label every turn of
                                   every trajectory (judge/llm_label.h) instead of proposing a
                                   segment: no tools, no eligibility, no contrast fallback */
    uint8_t *roles;             /* label_turns: (sum of the trajectories' n_steps) the roles,
                                   trajectory after trajectory (pv_triage_role_t values or
                                   PV_LLM_ROLE_NONE), written by the judge (all NONE after a
                                   fallback); the caller owns it */
} pv_llm_group_t;

/* What a finished group gets. */
typedef struct pv_llm_result {
    pv_llm_fallback_t fallback; /* NONE: the segment is the model's */
    size_t n_segs;              /* 0 or 1 (a fallback's contrast may propose nothing) */
    pv_segment_t seg;           /* the model's: traj = the shown success, expect +1 */
    char failure_mode[256];     /* the model's words (empty after a fallback) */
    char detail[256];           /* why it fell back: HTTP status, curl's or the validator's text */
    uint32_t requests, retries, repairs, tool_calls; /* of this group */
    uint64_t prompt_tokens, completion_tokens;       /* of this group, as the endpoint reports */
    uint64_t elapsed_ms;                             /* submit to the end */
    pv_llm_label_counts_t labels; /* label_turns: what the accepted answer labelled (all
                                     unlabelled after a fallback) */
} pv_llm_result_t;

/* The judge's cost and health, cumulative since new() (the role logs them; metrics and
 * CREDITED_GROUP fields can be taken from here). */
typedef struct pv_llm_stats {
    uint64_t groups;   /* submitted */
    uint64_t answered; /* the model's segment accepted */
    uint64_t fallbacks;
    uint64_t fallback_by[PV_LLM_FALLBACK__COUNT]; /* NONE unused */
    uint64_t cancelled;                           /* cancelled before their end */
    uint64_t requests;                            /* HTTP requests sent, retries included */
    uint64_t retries;
    uint64_t http_errors;             /* failed requests: network, timeout, status, body */
    uint64_t prompt_tokens;           /* usage.prompt_tokens summed */
    uint64_t completion_tokens;       /* usage.completion_tokens summed */
    uint64_t tool_calls, tool_errors; /* tool calls run / answered with an error */
    uint64_t repairs;                 /* repair turns sent */
    uint64_t refusals_by[PV_LLM_REFUSAL__COUNT]; /* answers refused, by reason */
    uint64_t latency_samples;                    /* finished requests */
    uint32_t latency_p50_ms, latency_p99_ms;     /* over the last 1024 finished requests */
    uint32_t active;                             /* groups being judged now */
    uint32_t in_flight, queued;                  /* requests running / waiting for a slot now */
    uint64_t label_groups;                       /* label_turns groups submitted (in groups) */
    uint64_t turns_labelled, turns_unlabelled;   /* label_turns: turns with / without the
                                                    model's role, fallbacks included */
} pv_llm_stats_t;

/* A judge for o (copied). Errors: PV_ERR_INVAL (bad options), PV_ERR_NOMEM, PV_ERR_INTERNAL
 * (libcurl); detail in em. No request is made until a group is submitted. */
pv_err_t pv_llm_judge_new(const pv_llm_opts_t *o, pv_llm_judge_t **out, pv_errmsg_t *em);

/* Abort every conversation and free the judge; clears *J. NULL-safe. */
void pv_llm_judge_destroy(pv_llm_judge_t **J);

/* Start judging group g; *ticket names it for take/cancel. A group whose successes have no
 * allowed segment finishes at once (fallback NO_SEGMENT), without a request.
 * With g->label_turns the conversation asks for TRIAGE's roles instead (llm_label.h): any
 * group with a turn (no success or failure needed; none: NO_SEGMENT), no tools, the labels'
 * schema and validator, repairs as for segments; g->roles is set to PV_LLM_ROLE_NONE at once
 * and gets the accepted answer's roles; a fallback (any reason) labels nothing.
 * Errors: PV_ERR_FULL (capacity groups are being judged), PV_ERR_INVAL (no success or no
 * failure, missing texts, label_turns without roles; detail in em). */
pv_err_t pv_llm_judge_submit(pv_llm_judge_t *J, const pv_llm_group_t *g, uint64_t *ticket,
                             pv_errmsg_t *em);

/* Move every conversation on: send retries whose back-off is over, wait for the endpoint at
 * most timeout_ms (0 = not at all; less when a back-off or a deadline is due sooner), handle
 * the answers (tool calls, validation, repairs), and end the groups past their deadline.
 * Errors: PV_ERR_INTERNAL (libcurl's multi interface failed; the groups in flight then
 * fall back as their deadlines pass). */
pv_err_t pv_llm_judge_poll(pv_llm_judge_t *J, int timeout_ms);

/* The result of a finished group into *out; the ticket is then spent.
 * Errors: PV_ERR_AGAIN (still being judged), PV_ERR_NOTFOUND (no such ticket: spent,
 * cancelled or never issued). */
pv_err_t pv_llm_judge_take(pv_llm_judge_t *J, uint64_t ticket, pv_llm_result_t *out);

/* Stop judging a group (its lease was lost, the role stops): its request is aborted, no
 * result. Returns whether the ticket was live. */
bool pv_llm_judge_cancel(pv_llm_judge_t *J, uint64_t ticket);

/* The counters, with the latency percentiles and gauges computed now. */
void pv_llm_judge_stats(const pv_llm_judge_t *J, pv_llm_stats_t *out);

#endif
