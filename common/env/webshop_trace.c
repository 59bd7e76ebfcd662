/* webshop_trace.c - WebShop's goal atoms (the terms of get_reward) and each step's atom
 * trace; see webshop.h "Atom traces". */
#include <stdio.h>
#include <string.h>

#include "common/env/env_impl.h"
#include "common/env/webshop_env.h"

#define S_MAX_GOAL_ATTRS 64 /* the attribute bit mask's width */

void ws_score_state(const ws_env_t *e, pv_webshop_score_t *out)
{
    const ws_model_t *m = e->m;
    const ws_state_t *st = &e->st;
    const ws_product_t *p = &m->products[st->product];
    const char *attr_ptrs[64], *goal_attrs[S_MAX_GOAL_ATTRS];
    const char *names[PV_WEBSHOP_MAX_OPTNAMES], *values[PV_WEBSHOP_MAX_OPTNAMES];
    const char *bought[PV_WEBSHOP_MAX_OPTNAMES];
    pv_webshop_item_t item;
    pv_webshop_target_t target;
    ws_item_view(m, p, attr_ptrs, &item);
    ws_target_view(m, ws_goal_of(e), goal_attrs, S_MAX_GOAL_ATTRS, names, values, &target);
    size_t n_sel = 0; /* list(session['options'].values()) */
    for (uint32_t o = 0; o < p->n_options; o++)
        if (st->sel[o] != WS_SEL_NONE)
            bought[n_sel++] = ws_ref_s(m, m->options[p->options + o].values, st->sel[o]);
    pv_webshop_score(&item, &target, p->price, bought, n_sel, out);
}

/* The goal atoms the current state holds: none without an open product or after an episode
 * that ended without a purchase; else the reward's terms for the open product and the
 * options selected on it, and the purchase once bought. */
static void s_truth(const ws_env_t *e, ws_truth_t *out)
{
    const ws_state_t *st = &e->st;
    memset(out, 0, sizeof *out);
    if (st->product == WS_NONE || (st->done && st->page != WS_PAGE_DONE))
        return;
    pv_webshop_score_t sc;
    ws_score_state(e, &sc);
    out->purchase = st->page == WS_PAGE_DONE;
    out->type = sc.r_type == 1.0;
    out->price = sc.price_ok;
    out->attrs = sc.attr_matched;
    out->opts = sc.option_matched;
}

/* Has the state the atoms depend on (product, selections, purchase, end) changed? */
static bool s_changed(const ws_state_t *old, const ws_state_t *st)
{
    return old->product != st->product || old->done != st->done ||
           (old->page == WS_PAGE_DONE) != (st->page == WS_PAGE_DONE) ||
           memcmp(old->sel, st->sel, sizeof st->sel) != 0;
}

void ws_trace_forget(ws_env_t *e)
{
    e->est_results = e->est_product = -1;
    if (e->started)
        s_truth(e, &e->truth); /* a loaded state's atoms: true, made by no step of ours */
    else
        memset(&e->truth, 0, sizeof e->truth);
}

/* An edge to the step that established a fact, if one did. */
static void s_dep(pv_env_trace_t *t, int32_t est)
{
    if (est >= 0)
        pv_env_trace_add_dep(t, (uint32_t)est);
}

static void s_atom(pv_env_trace_t *t, bool made, uint32_t atom)
{
    uint8_t *n = made ? &t->n_made : &t->n_unmade;
    if (*n == PV_ENV_TRACE_ATOMS) {
        if (t->n_dropped < 255)
            t->n_dropped++;
        return;
    }
    (made ? t->made : t->unmade)[(*n)++] = atom;
}

/* One atom's event: made when it became true or `again` re-established it, unmade when it
 * became false. */
static void s_event(pv_env_trace_t *t, uint32_t atom, bool was, bool is, bool again)
{
    if (is && (!was || again))
        s_atom(t, true, atom);
    else if (was && !is)
        s_atom(t, false, atom);
}

void ws_trace_step(ws_env_t *e, const ws_state_t *old, bool accepted, bool search, int32_t step)
{
    const ws_state_t *st = &e->st;
    const ws_model_t *m = e->m;
    pv_env_trace_t *t = &e->trace;
    if (!accepted && !st->done)
        return; /* a refused action: an empty record */
    if (accepted && search) {
        e->est_results = step; /* a new result list */
    } else if (accepted) {
        if (st->page == WS_PAGE_RESULTS && st->page_no != old->page_no) { /* another page */
            s_dep(t, e->est_results);
            e->est_results = step;
        }
        if (st->product != WS_NONE && st->product != old->product) { /* a product opened */
            s_dep(t, e->est_results);
            e->est_product = step;
        }
        if (e->clicked_opt >= 0 || st->page == WS_PAGE_DONE) /* an option, the buy */
            s_dep(t, e->est_product);
    }
    ws_truth_t now = e->truth;
    if (s_changed(old, st))
        s_truth(e, &now);
    uint64_t again = 0; /* goal options the clicked value matches: its click is their maker */
    if (accepted && e->clicked_opt >= 0 && st->product != WS_NONE) {
        const ws_product_t *p = &m->products[st->product];
        const char *goal_attrs[S_MAX_GOAL_ATTRS], *names[PV_WEBSHOP_MAX_OPTNAMES],
            *values[PV_WEBSHOP_MAX_OPTNAMES];
        pv_webshop_target_t target;
        ws_target_view(m, ws_goal_of(e), goal_attrs, S_MAX_GOAL_ATTRS, names, values, &target);
        uint32_t o = (uint32_t)e->clicked_opt;
        again = pv_webshop_option_matches(
                    &target, ws_ref_s(m, m->options[p->options + o].values, st->sel[o])) &
                now.opts;
    }
    const ws_goal_t *g = ws_goal_of(e);
    uint32_t na = g->n_attrs < S_MAX_GOAL_ATTRS ? g->n_attrs : S_MAX_GOAL_ATTRS;
    const ws_truth_t *was = &e->truth;
    s_event(t, WS_ATOM_PURCHASE, was->purchase, now.purchase, false);
    s_event(t, WS_ATOM_TYPE, was->type, now.type, false);
    s_event(t, WS_ATOM_PRICE, was->price, now.price, false);
    for (uint32_t a = 0; a < na; a++)
        s_event(t, WS_ATOM_ATTR0 + a, was->attrs >> a & 1u, now.attrs >> a & 1u, false);
    for (uint32_t k = 0; k < g->n_opts && k < 64; k++)
        s_event(t, WS_ATOM_ATTR0 + na + k, was->opts >> k & 1u, now.opts >> k & 1u,
                again >> k & 1u);
    e->truth = now;
}

pv_err_t ws_atom_name(const void *env, uint32_t atom, char *buf, size_t cap)
{
    const ws_env_t *e = env;
    if (!e->started)
        return PV_ERR_STATE;
    const ws_model_t *m = e->m;
    const char *goal_attrs[S_MAX_GOAL_ATTRS], *names[PV_WEBSHOP_MAX_OPTNAMES],
        *values[PV_WEBSHOP_MAX_OPTNAMES];
    pv_webshop_target_t g;
    ws_target_view(m, ws_goal_of(e), goal_attrs, S_MAX_GOAL_ATTRS, names, values, &g);
    int n;
    if (atom == WS_ATOM_PURCHASE)
        n = snprintf(buf, cap, "purchase(%s)", ws_s(m, ws_goal_of(e)->instruction));
    else if (atom == WS_ATOM_TYPE)
        n = snprintf(buf, cap, "type(%s)", g.name);
    else if (atom == WS_ATOM_PRICE)
        n = snprintf(buf, cap, "price(<= %.2f)", g.price_upper);
    else if (atom - WS_ATOM_ATTR0 < g.n_attributes)
        n = snprintf(buf, cap, "attribute(%s)", g.attributes[atom - WS_ATOM_ATTR0]);
    else if (atom - WS_ATOM_ATTR0 - g.n_attributes < g.n_options && atom >= WS_ATOM_ATTR0) {
        size_t k = atom - WS_ATOM_ATTR0 - g.n_attributes;
        n = g.option_names ? snprintf(buf, cap, "option(%s: %s)", g.option_names[k], g.options[k])
                           : snprintf(buf, cap, "option(%s)", g.options[k]);
    } else
        return PV_ERR_RANGE;
    return n >= 0 && (size_t)n < cap ? PV_OK : PV_ERR_LIMIT;
}
