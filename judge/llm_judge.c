/* llm_judge.c - the LLM judge's conversations; see llm_judge.h for the protocol. */
#include "judge/llm_judge.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/clock.h"
#include "common/rng.h"
#include "judge/llm_judge_int.h"
#include "judge/llm_tools.h"

static const char *const s_fb_names[] = {
#define PV_LLM_FB_NAME_(name, text) #name,
    PV_LLM_FALLBACK_LIST(PV_LLM_FB_NAME_)
#undef PV_LLM_FB_NAME_
};

const char *pv_llm_fallback_name(pv_llm_fallback_t f)
{
    return (unsigned)f < PV_LLM_FALLBACK__COUNT ? s_fb_names[f] : "UNKNOWN";
}

/* ---- options ------------------------------------------------------------------------- */

static bool s_http_url(const char *u)
{
    return strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0;
}

pv_err_t pv_llm_opts_from_config(const pv_config_t *cfg, uint32_t max_turns, uint32_t capacity,
                                 pv_llm_opts_t *out, pv_errmsg_t *em)
{
    pv_llm_limits_t lim = pv_llm_limits_default();
    lim.max_turns = max_turns ? max_turns : lim.max_turns;
    lim.obs_chars = (uint32_t)cfg->judge.obs_chars;
    lim.preview_turns = (uint32_t)cfg->judge.preview_turns;
    *out = (pv_llm_opts_t){.base_url = cfg->judge.base_url,
                           .model = cfg->judge.model,
                           .timeout_ms = (uint32_t)cfg->judge.timeout_ms,
                           .group_timeout_ms = (uint32_t)cfg->judge.group_timeout_ms,
                           .retries = (uint32_t)cfg->judge.retries,
                           .backoff_ms = (uint32_t)cfg->judge.backoff_ms,
                           .max_in_flight = (uint32_t)cfg->judge.max_in_flight,
                           .capacity = capacity ? capacity : 1,
                           .max_tokens = (uint32_t)cfg->judge.max_tokens,
                           .temperature = cfg->judge.temperature,
                           .max_repairs = (uint32_t)cfg->judge.max_repairs,
                           .max_tool_calls = (uint32_t)cfg->judge.max_tool_calls,
                           .lim = lim};
    if (cfg->judge.api_key_env[0]) {
        const char *k = getenv(cfg->judge.api_key_env);
        out->api_key = k && *k ? k : NULL;
    }
    if (!cfg->judge.model[0])
        return pv_errf(em, PV_ERR_CONFIG,
                       "judge.model: name the model the endpoint at judge.base_url serves "
                       "(prover.judge = llm)");
    if (!s_http_url(cfg->judge.base_url))
        return pv_errf(em, PV_ERR_CONFIG,
                       "judge.base_url: '%s' is not an http:// or https:// URL (e.g. "
                       "http://127.0.0.1:8000/v1)",
                       cfg->judge.base_url);
    if (pv_llm_format_parse(cfg->judge.response_format, &out->format) != PV_OK)
        return pv_errf(em, PV_ERR_CONFIG, "judge.response_format: unknown '%s'",
                       cfg->judge.response_format);
    return PV_OK;
}

/* ---- new / destroy ------------------------------------------------------------------- */

static char *s_chat_url(const char *base)
{
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/')
        n--;
    static const char tail[] = "/chat/completions";
    bool has =
        n >= sizeof tail - 1 && memcmp(base + n - (sizeof tail - 1), tail, sizeof tail - 1) == 0;
    char *u = malloc(n + sizeof tail);
    if (u)
        snprintf(u, n + sizeof tail, "%.*s%s", (int)n, base, has ? "" : tail);
    return u;
}

pv_err_t pv_llm_judge_new(const pv_llm_opts_t *o, pv_llm_judge_t **out, pv_errmsg_t *em)
{
    *out = NULL;
    if (!o || !o->base_url || !o->model || !*o->model || o->timeout_ms == 0 ||
        o->max_in_flight == 0 || o->capacity == 0 || o->lim.max_turns == 0 ||
        o->lim.obs_chars == 0 || o->lim.max_prompt_bytes < 1024 || !s_http_url(o->base_url))
        return pv_errf(em, PV_ERR_INVAL, "llm judge: bad options");
    pv_llm_judge_t *J = calloc(1, sizeof *J);
    if (!J)
        return PV_ERR_NOMEM;
    J->o = *o;
    J->url = s_chat_url(o->base_url);
    J->model = strdup(o->model);
    J->key = o->api_key && *o->api_key ? strdup(o->api_key) : NULL;
    J->c = calloc(o->capacity, sizeof *J->c);
    pv_llm_ctx_t dummy = {.lim = o->lim};
    J->tools = pv_llm_tools_json(&dummy);
    pv_err_t rc = PV_ERR_NOMEM;
    if (J->url && J->model && (J->key || !(o->api_key && *o->api_key)) && J->c && J->tools &&
        pv_arena_new(0, 64u << 20, &J->scratch) == PV_OK) {
        pv_llm_http_opts_t ho = {.url = J->url,
                                 .api_key = J->key,
                                 .max_in_flight = o->max_in_flight,
                                 .max_transfers = o->capacity,
                                 .max_response_bytes = PV_LLM_MAX_RESPONSE,
                                 .connect_timeout_ms = o->timeout_ms};
        if (ho.max_in_flight > ho.max_transfers)
            ho.max_in_flight = ho.max_transfers;
        rc = pv_llm_http_new(&ho, &J->http, em);
    }
    J->o.base_url = J->o.model = J->o.api_key = NULL;
    if (rc != PV_OK) {
        pv_llm_judge_destroy(&J);
        return rc == PV_ERR_NOMEM ? pv_errf(em, rc, "llm judge: out of memory") : rc;
    }
    *out = J;
    return PV_OK;
}

void pv_llm_judge_destroy(pv_llm_judge_t **Jp)
{
    if (!Jp || !*Jp)
        return;
    pv_llm_judge_t *J = *Jp;
    pv_llm_http_destroy(&J->http);
    for (uint32_t i = 0; J->c && i < J->o.capacity; i++)
        json_decref(J->c[i].messages);
    free(J->c);
    json_decref(J->tools);
    if (J->key) {
        explicit_bzero(J->key, strlen(J->key));
        free(J->key);
    }
    free(J->url);
    free(J->model);
    pv_arena_destroy(&J->scratch);
    free(J);
    *Jp = NULL;
}

/* ---- the end of a conversation ------------------------------------------------------- */

static uint64_t s_ticket(const pv_llm_judge_t *J, const pv_llm_conv_t *c)
{
    return (uint64_t)c->gen << 32 | (uint64_t)(c - J->c);
}

void pv_llm_conv_end(pv_llm_judge_t *J, pv_llm_conv_t *c)
{
    pv_llm_http_cancel(J->http, s_ticket(J, c));
    json_decref(c->messages);
    c->messages = NULL;
    c->res.elapsed_ms = pv_mono_ms() - c->start;
    c->state = PV_LLM_C_DONE;
}

void pv_llm_conv_fallback(pv_llm_judge_t *J, pv_llm_conv_t *c, pv_llm_fallback_t why,
                          const char *fmt, ...)
{
    pv_llm_result_t *r = &c->res;
    r->fallback = why;
    r->n_segs = 0;
    r->failure_mode[0] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
    if (c->g.views) { /* the contrast judge's first proposal, seeded as the judge seeds it */
        pv_rng_t rng;
        pv_rng_seed(&rng, c->g.seed, 0);
        pv_arena_reset(J->scratch);
        size_t n = 0;
        pv_segment_t seg;
        pv_propose_opts_t po = c->g.fallback;
        po.kind = PV_JUDGE_CONTRAST;
        po.max_segments = 1;
        po.max_turns = po.max_turns ? po.max_turns : J->o.lim.max_turns;
        po.min_successes = po.min_successes ? po.min_successes : 1;
        po.max_successes = po.max_successes ? po.max_successes : UINT32_MAX;
        if (pv_judge_propose(&po, c->g.views, c->g.n_trajs, J->scratch, &rng, &seg, 1, &n) ==
                PV_OK &&
            n == 1) {
            r->seg = seg;
            r->n_segs = 1;
        }
    }
    if (c->g.label_turns) { /* nothing labelled: the learner's model-free rule for all */
        size_t turns = pv_llm_label_turns(&c->ctx);
        memset(c->g.roles, PV_LLM_ROLE_NONE, turns);
        r->labels = (pv_llm_label_counts_t){.unlabelled = (uint32_t)turns,
                                            .bad_trajs = (uint32_t)c->g.n_trajs};
        J->st.turns_unlabelled += turns;
    }
    J->st.fallbacks++;
    J->st.fallback_by[why]++;
    pv_llm_conv_end(J, c);
}

/* ---- requests ------------------------------------------------------------------------ */

void pv_llm_conv_send(pv_llm_judge_t *J, pv_llm_conv_t *c)
{
    uint64_t now = pv_mono_ms();
    if (now >= c->deadline) {
        pv_llm_conv_fallback(J, c, PV_LLM_FALLBACK_TIMEOUT, "the group's deadline passed");
        return;
    }
    json_t *req =
        json_pack("{s:s, s:O, s:f, s:i, s:b}", "model", J->model, "messages", c->messages,
                  "temperature", J->o.temperature, "max_tokens", (int)J->o.max_tokens, "stream", 0);
    bool ok = req != NULL;
    if (ok && J->o.max_tool_calls > 0 && !c->g.label_turns)
        ok = json_object_set(req, "tools", J->tools) == 0 &&
             json_object_set_new(req, "tool_choice",
                                 json_string(c->tools_closed ? "none" : "auto")) == 0;
    if (ok)
        ok = (c->g.label_turns ? pv_llm_label_constrain(&c->ctx, J->o.format, req)
                               : pv_llm_answer_constrain(&c->ctx, J->o.format, req)) == PV_OK;
    char *body = ok ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!body) {
        pv_llm_conv_fallback(J, c, PV_LLM_FALLBACK_INTERNAL, "out of memory building a request");
        return;
    }
    size_t len = strlen(body);
    if (len > PV_LLM_MAX_REQUEST) {
        free(body);
        pv_llm_conv_fallback(J, c, PV_LLM_FALLBACK_INTERNAL,
                             "the conversation is longer than %u bytes", PV_LLM_MAX_REQUEST);
        return;
    }
    uint64_t left = c->deadline - now;
    uint32_t timeout = left < J->o.timeout_ms ? (uint32_t)left : J->o.timeout_ms;
    if (pv_llm_http_post(J->http, s_ticket(J, c), body, len, timeout ? timeout : 1) != PV_OK) {
        pv_llm_conv_fallback(J, c, PV_LLM_FALLBACK_INTERNAL, "no transfer slot");
        return;
    }
    J->st.requests++;
    c->res.requests++;
    c->state = PV_LLM_C_SENDING;
}

/* A failed request: retry after the back-off, or fall back. */
void pv_llm_conv_retry(pv_llm_judge_t *J, pv_llm_conv_t *c, const char *detail)
{
    uint64_t now = pv_mono_ms();
    uint32_t shift = c->attempt < 20 ? c->attempt : 20;
    uint64_t at = now + ((uint64_t)J->o.backoff_ms << shift);
    if (c->attempt >= J->o.retries || at >= c->deadline) {
        pv_llm_conv_fallback(J, c, c->last_timeout ? PV_LLM_FALLBACK_TIMEOUT : PV_LLM_FALLBACK_HTTP,
                             "%s (after %u retries)", detail, c->attempt);
        return;
    }
    c->attempt++;
    J->st.retries++;
    c->res.retries++;
    c->retry_at = at;
    c->state = PV_LLM_C_BACKOFF;
}

bool pv_llm_conv_push(json_t *messages, json_t *msg)
{
    return msg && json_array_append_new(messages, msg) == 0;
}

/* A message {"role": role, "content": text made safe and cut}. */
json_t *pv_llm_conv_msg(const char *role, const char *text, size_t max)
{
    char *safe = pv_llm_clip_dup(text, max, false);
    json_t *m = safe ? json_pack("{s:s, s:s}", "role", role, "content", safe) : NULL;
    free(safe);
    return m;
}

static void s_on_done(pv_llm_judge_t *J, pv_llm_conv_t *c, pv_llm_http_done_t *d)
{
    J->lat[J->n_lat++ % PV_LLM_LAT_RING] =
        d->latency_ms > UINT32_MAX ? UINT32_MAX : (uint32_t)d->latency_ms;
    J->st.latency_samples++;
    if (d->err != PV_OK) {
        J->st.http_errors++;
        c->last_timeout = d->err == PV_ERR_TIMEOUT;
        char detail[300];
        snprintf(detail, sizeof detail, "%s: %s", pv_strerror(d->err), d->detail);
        pv_llm_conv_retry(J, c, detail);
        return;
    }
    if (d->status < 200 || d->status > 299) {
        J->st.http_errors++;
        c->last_timeout = false;
        char *peek = pv_llm_clip_dup(d->body, 160, true);
        char detail[256];
        snprintf(detail, sizeof detail, "HTTP %ld: %s", d->status, peek ? peek : "");
        free(peek);
        if (d->status == 408 || d->status == 429 || d->status >= 500)
            pv_llm_conv_retry(J, c, detail);
        else
            pv_llm_conv_fallback(J, c, PV_LLM_FALLBACK_HTTP, "%s", detail);
        return;
    }
    pv_llm_conv_reply(J, c, d->body, d->len);
}

/* ---- the public loop ------------------------------------------------------------------ */

pv_err_t pv_llm_judge_submit(pv_llm_judge_t *J, const pv_llm_group_t *g, uint64_t *ticket,
                             pv_errmsg_t *em)
{
    pv_llm_conv_t *c = NULL;
    for (uint32_t i = 0; i < J->o.capacity && !c; i++)
        if (J->c[i].state == PV_LLM_C_FREE)
            c = &J->c[i];
    if (!c)
        return pv_errf(em, PV_ERR_FULL, "llm judge: %u groups are being judged", J->o.capacity);
    pv_llm_ctx_t ctx;
    if (g->label_turns && !g->roles)
        return pv_errf(em, PV_ERR_INVAL, "llm labels: no roles array");
    pv_err_t rc = g->label_turns ? pv_llm_label_ctx_init(&ctx, g->group_id, g->task_text, g->trajs,
                                                         g->n_trajs, &J->o.lim, em)
                                 : pv_llm_ctx_init(&ctx, g->group_id, g->task_text, g->trajs,
                                                   g->n_trajs, &J->o.lim, em);
    if (rc != PV_OK && rc != PV_ERR_NOTFOUND)
        return rc;
    uint32_t gen = c->gen + 1 ? c->gen + 1 : 1;
    *c = (pv_llm_conv_t){.state = PV_LLM_C_SENDING, .gen = gen, .g = *g, .ctx = ctx};
    c->start = pv_mono_ms();
    c->deadline = g->deadline_ms ? g->deadline_ms : c->start + J->o.group_timeout_ms;
    *ticket = s_ticket(J, c);
    J->st.groups++;
    J->st.label_groups += g->label_turns;
    if (g->label_turns)
        memset(g->roles, PV_LLM_ROLE_NONE, pv_llm_label_turns(&c->ctx));
    if (rc == PV_ERR_NOTFOUND) {
        pv_llm_conv_fallback(J, c, PV_LLM_FALLBACK_NO_SEGMENT, "%s",
                             em ? em->text : "no allowed segment");
        return PV_OK;
    }
    pv_llm_buf_t sys, user;
    pv_llm_buf_init(&sys, 16u << 10);
    pv_llm_buf_init(&user, J->o.lim.max_prompt_bytes);
    if (g->label_turns) {
        pv_llm_label_system(&sys);
        rc = pv_llm_label_user(&c->ctx, &user);
    } else {
        pv_llm_prompt_system(&c->ctx, &sys);
        rc = pv_llm_prompt_user(&c->ctx, &user);
    }
    c->messages = json_array();
    bool ok = rc == PV_OK && pv_llm_buf_status(&sys) == PV_OK && c->messages &&
              pv_llm_conv_push(c->messages,
                               json_pack("{s:s, s:s}", "role", "system", "content", sys.data)) &&
              pv_llm_conv_push(c->messages,
                               json_pack("{s:s, s:s}", "role", "user", "content", user.data));
    pv_llm_buf_free(&sys);
    pv_llm_buf_free(&user);
    if (!ok) {
        pv_llm_conv_fallback(J, c, PV_LLM_FALLBACK_INTERNAL, "the prompt: %s",
                             rc == PV_ERR_LIMIT ? "does not fit judge limits" : pv_strerror(rc));
        return PV_OK;
    }
    pv_llm_conv_send(J, c);
    return PV_OK;
}

static pv_llm_conv_t *s_conv_of(pv_llm_judge_t *J, uint64_t ticket)
{
    uint32_t i = (uint32_t)ticket, gen = (uint32_t)(ticket >> 32);
    if (i >= J->o.capacity || J->c[i].state == PV_LLM_C_FREE || J->c[i].gen != gen)
        return NULL;
    return &J->c[i];
}

/* End the groups past their deadline; returns the ms until the next deadline or back-off
 * (capped at `cap`). */
static int s_timers(pv_llm_judge_t *J, int cap)
{
    uint64_t now = pv_mono_ms();
    int wait = cap;
    for (uint32_t i = 0; i < J->o.capacity; i++) {
        pv_llm_conv_t *c = &J->c[i];
        if (c->state != PV_LLM_C_SENDING && c->state != PV_LLM_C_BACKOFF)
            continue;
        if (now >= c->deadline) {
            pv_llm_conv_fallback(J, c, PV_LLM_FALLBACK_TIMEOUT,
                                 "no answer within the group's deadline");
            continue;
        }
        if (c->state == PV_LLM_C_BACKOFF && now >= c->retry_at) {
            pv_llm_conv_send(J, c);
            if (c->state != PV_LLM_C_SENDING)
                continue;
        }
        uint64_t due =
            c->state == PV_LLM_C_BACKOFF && c->retry_at < c->deadline ? c->retry_at : c->deadline;
        if (due - now < (uint64_t)wait)
            wait = (int)(due - now);
    }
    return wait;
}

pv_err_t pv_llm_judge_poll(pv_llm_judge_t *J, int timeout_ms)
{
    int wait = s_timers(J, timeout_ms > 0 ? timeout_ms : 0);
    pv_err_t rc = pv_llm_http_poll(J->http, wait);
    pv_llm_http_done_t d;
    while (pv_llm_http_next(J->http, &d)) {
        pv_llm_conv_t *c = s_conv_of(J, d.tag);
        if (c && c->state == PV_LLM_C_SENDING)
            s_on_done(J, c, &d);
        free(d.body);
    }
    s_timers(J, 0);
    return rc;
}

pv_err_t pv_llm_judge_take(pv_llm_judge_t *J, uint64_t ticket, pv_llm_result_t *out)
{
    pv_llm_conv_t *c = s_conv_of(J, ticket);
    if (!c)
        return PV_ERR_NOTFOUND;
    if (c->state != PV_LLM_C_DONE)
        return PV_ERR_AGAIN;
    *out = c->res;
    c->state = PV_LLM_C_FREE;
    return PV_OK;
}

bool pv_llm_judge_cancel(pv_llm_judge_t *J, uint64_t ticket)
{
    pv_llm_conv_t *c = s_conv_of(J, ticket);
    if (!c)
        return false;
    if (c->state != PV_LLM_C_DONE) {
        J->st.cancelled++;
        pv_llm_conv_end(J, c);
    }
    c->state = PV_LLM_C_FREE;
    return true;
}

static int s_u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

void pv_llm_judge_stats(const pv_llm_judge_t *J, pv_llm_stats_t *out)
{
    *out = J->st;
    size_t n = J->n_lat < PV_LLM_LAT_RING ? (size_t)J->n_lat : PV_LLM_LAT_RING;
    if (n > 0) {
        uint32_t sorted[PV_LLM_LAT_RING];
        memcpy(sorted, J->lat, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, s_u32_cmp);
        /* nearest rank: the smallest sample with at least p of the samples at or below it */
        out->latency_p50_ms = sorted[(n * 50 + 99) / 100 - 1];
        out->latency_p99_ms = sorted[(n * 99 + 99) / 100 - 1];
    }
    for (uint32_t i = 0; i < J->o.capacity; i++)
        out->active += J->c[i].state == PV_LLM_C_SENDING || J->c[i].state == PV_LLM_C_BACKOFF;
    out->in_flight = pv_llm_http_running(J->http);
    out->queued = pv_llm_http_queued(J->http);
}
