/* llm_role.c - see llm_role.h. */
#include "judge/llm_role.h"

#include <string.h>

#include "common/wire/job_ids.h"

pv_llm_group_t pv_jgroup_llm_group(const pv_jgroup_t *g, const pv_jg_opts_t *o,
                                   uint64_t deadline_ms)
{
    return (pv_llm_group_t){.group_id = g->wire->group_id,
                            .task_text = g->wire->task_text,
                            .trajs = g->trajs,
                            .views = g->views,
                            .n_trajs = g->n_trajs,
                            .fallback = g->po,
                            .seed = pv_judge_seed(o->run_seed, g->wire->group_id),
                            .deadline_ms = deadline_ms,
                            .label_turns = g->labelling,
                            .roles = g->labelling ? g->roles : NULL};
}

const char *pv_llm_labels_judge(const pv_llm_result_t *r)
{
    return r->fallback != PV_LLM_FALLBACK_NONE ? PV_JUDGE_LABELS_FALLBACK_NAME : "llm";
}

const char *pv_llm_result_judge(const pv_llm_result_t *r)
{
    return r->fallback != PV_LLM_FALLBACK_NONE ? PV_JUDGE_FALLBACK_NAME : "llm";
}

pv_err_t pv_llm_status(const pv_llm_stats_t *st, const char *run, pv_arena_t *arena,
                       pv_wire_run_status_t *out)
{
    memset(out, 0, sizeof *out);
    pv_wire_error_count_t *fb = pv_arena_calloc(arena, PV_LLM_FALLBACK__COUNT, sizeof *fb);
    if (!fb)
        return PV_ERR_NOMEM;
    uint32_t n = 0;
    for (int k = 0; k < PV_LLM_FALLBACK__COUNT; k++)
        if (k != PV_LLM_FALLBACK_NONE)
            fb[n++] = (pv_wire_error_count_t){.name = pv_llm_fallback_name((pv_llm_fallback_t)k),
                                              .count = st->fallback_by[k]};
    *out = (pv_wire_run_status_t){.source = "judge",
                                  .run = run ? run : "",
                                  .llm_groups = st->groups,
                                  .llm_answered = st->answered,
                                  .llm_requests = st->requests,
                                  .llm_prompt_tokens = st->prompt_tokens,
                                  .llm_completion_tokens = st->completion_tokens,
                                  .llm_latency_p50_ms = st->latency_p50_ms,
                                  .llm_latency_p99_ms = st->latency_p99_ms,
                                  .llm_repairs = st->repairs,
                                  .llm_tool_calls = st->tool_calls,
                                  .llm_fallbacks = fb,
                                  .n_llm_fallbacks = n};
    return PV_OK;
}
