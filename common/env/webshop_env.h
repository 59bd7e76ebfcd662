/* webshop_env.h - one webshop episode (internal to common/env; see webshop.h). */
#ifndef PV_WEBSHOP_ENV_H
#define PV_WEBSHOP_ENV_H

#include "common/env/webshop_model.h"

typedef enum ws_page {
    WS_PAGE_SEARCH = 0,
    WS_PAGE_RESULTS = 1,
    WS_PAGE_ITEM = 2,
    WS_PAGE_DESC = 3,
    WS_PAGE_FEAT = 4,
    WS_PAGE_REV = 5,
    WS_PAGE_DONE = 6,
} ws_page_t;

#define WS_SEL_NONE 0xffffu

/* The goal atoms a state holds (webshop.h "Atom traces"); derived from the state. */
typedef struct ws_truth {
    bool purchase, type, price;
    uint64_t attrs; /* bit a: goal attribute a */
    uint64_t opts;  /* bit k: goal option k */
} ws_truth_t;

/* Goal atom ids: the purchase, the type match, the price bound, then the goal's attributes
 * (WS_ATOM_ATTR0 + a), then its options (WS_ATOM_ATTR0 + n_attrs + k). */
#define WS_ATOM_PURCHASE 0u
#define WS_ATOM_TYPE     1u
#define WS_ATOM_PRICE    2u
#define WS_ATOM_ATTR0    3u

/* Everything that decides the future; pointer-free (webshop.h "Saved state"). */
typedef struct ws_state {
    uint32_t split;
    uint64_t task_id;
    uint64_t seed;
    uint32_t goal;
    uint32_t n_steps;
    uint8_t done, won, page;
    float reward;
    uint32_t page_no; /* results page shown or returned to (1-based) */
    uint32_t product; /* product on the item/sub/done page, WS_NONE otherwise */
    uint16_t sel[PV_WEBSHOP_MAX_OPTNAMES]; /* selected value per option, WS_SEL_NONE */
    uint32_t n_results;
    uint32_t results[PV_WEBSHOP_RESULTS_MAX]; /* product indices, best first */
    char query[PV_WEBSHOP_QUERY_MAX + 1];
} ws_state_t;

typedef struct ws_env {
    const ws_model_t *m;
    pv_fts_reader_t *fts;
    bool started;
    ws_state_t st;
    char *obs;       /* m->obs_cap bytes */
    char *acts_text; /* m->act_cap bytes */
    const char *acts[PV_WEBSHOP_MAX_ACTIONS];
    size_t n_acts;
    bool acts_ok;
    int64_t hits[PV_WEBSHOP_RESULTS_MAX];
    /* expert cache (derivable; rebuilt after load) */
    bool ex_ok, ex_found;
    uint32_t ex_pos; /* the goal product's rank in the expert's results */
    char ex_query[PV_WEBSHOP_QUERY_MAX + 1];
    uint32_t ex_n_results;
    uint32_t ex_results[PV_WEBSHOP_RESULTS_MAX];
    /* atom trace (env.h; webshop_trace.c, webshop.h "Atom traces"): the steps that last
     * showed the results page and opened the product (-1: none since the reset or load),
     * the option name this step clicked a value of (-1: none), the goal atoms true now, the
     * last step's record */
    int32_t est_results, est_product, clicked_opt;
    ws_truth_t truth;
    pv_env_trace_t trace;
} ws_env_t;

static inline const ws_goal_t *ws_goal_of(const ws_env_t *e)
{
    return &e->m->goals[e->st.goal];
}

/* What a click argument means on the current page (webshop_page.c). */
typedef enum ws_click {
    WS_CLICK_NONE,
    WS_CLICK_BACK,
    WS_CLICK_PREV,
    WS_CLICK_NEXT,
    WS_CLICK_DESC,
    WS_CLICK_FEAT,
    WS_CLICK_REV,
    WS_CLICK_BUY,
    WS_CLICK_PRODUCT, /* a = product index */
    WS_CLICK_OPTION,  /* a = option index in product, b = value index */
} ws_click_t;

/* Resolve a lower-cased click argument on the current page; a and b receive the product,
 * or the option and value. */
ws_click_t ws_resolve(const ws_env_t *e, const char *arg, uint32_t *a, uint32_t *b);

/* Render the current page into e->obs (webshop.h "Pages and observations"). */
void ws_render(ws_env_t *e);

/* The admissible actions of the current page (env ops "admissible"). */
pv_err_t ws_admissible(void *env, const char *const **actions, size_t *n);

/* The search queries a shopper would try for the current goal, lower-cased, duplicates
 * removed, in this order: the goal's own words; the instruction without its price clause
 * (options included); the goal's content words (stop words dropped); those words with the
 * goal's attribute phrases; those words with its option values. They are the search page's
 * admissible searches, and the expert searches with the first that finds the goal product.
 * Returns how many were written (at most WS_QUERIES). */
#define WS_QUERIES 5
size_t ws_search_queries(const ws_env_t *e, char (*q)[PV_WEBSHOP_QUERY_MAX + 1]);

/* Run a search for `query` (already lower-cased) into results/n_results. */
pv_err_t ws_search(ws_env_t *e, const char *query, uint32_t *results, uint32_t *n_results);

/* get_reward's terms for the open product (e->st.product, not WS_NONE) and the options
 * selected on it, as a purchase now would score them (webshop_trace.c). */
void ws_score_state(const ws_env_t *e, pv_webshop_score_t *out);

/* Atom traces (webshop_trace.c). ws_trace_forget: after a reset or load, no step
 * established anything; the atoms the state holds are taken as true. ws_trace_step: fill
 * e->trace (cleared by the caller) for step `step`, which changed the state `old` (its
 * fields before n_results) into e->st; `accepted` false for a refused action, `search` for
 * a search; e->clicked_opt names the option name clicked. ws_atom_name: env ops
 * "atom_name". None allocates. */
void ws_trace_forget(ws_env_t *e);
void ws_trace_step(ws_env_t *e, const ws_state_t *old, bool accepted, bool search, int32_t step);
pv_err_t ws_atom_name(const void *env, uint32_t atom, char *buf, size_t cap);

/* The expert (webshop_expert.c). */
pv_err_t ws_expert_action(void *env, char *buf, size_t cap);
int ws_expert_plan_len(void *env);

#endif
