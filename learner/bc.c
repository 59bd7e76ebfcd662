/* bc.c - behaviour cloning step; see bc.h. */
#include "learner/bc.h"

#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/rng.h"
#include "common/vec.h"

/* A language model: token cross-entropy of every step's expert action (its text encoded and
 * the end token), in one batched backward. */
static pv_err_t s_bc_tokens(pv_trainer_t *t, const pv_traj_t *demos, size_t n, double *loss,
                            double *accuracy, pv_errmsg_t *em)
{
    size_t ni = 0, nt = 0, cap = 0, steps = 0;
    uint32_t *ids = NULL;
    pv_err_t rc = PV_OK;
    for (size_t i = 0; i < n; i++)
        steps += demos[i].n_steps;
    if (!steps)
        return pv_errf(em, PV_ERR_INVAL, "bc: no demonstration step");
    size_t *off = malloc((steps + 1) * sizeof *off);
    if (!off || pv_grow((void **)&t->items, &t->cap_items, steps, sizeof *t->items) != PV_OK) {
        free(off);
        return pv_errf(em, PV_ERR_NOMEM, "bc: no memory for %zu steps", steps);
    }
    for (size_t i = 0; rc == PV_OK && i < n; i++)
        for (size_t s = 0; rc == PV_OK && s < demos[i].n_steps; s++) {
            const pv_traj_t *tr = &demos[i];
            const char *act = tr->texts[2 * (tr->first_step + s) + 1];
            size_t k = 0;
            for (;;) {
                rc = pv_policy_action_tokens(t->policy, act, tr->steps[s].cands,
                                             tr->steps[s].n_cands, t->work, ids ? ids + nt : NULL,
                                             cap - nt, &k);
                if (rc != PV_ERR_LIMIT)
                    break;
                if (pv_grow((void **)&ids, &cap, nt + k, sizeof *ids) != PV_OK) {
                    rc = PV_ERR_NOMEM;
                    break;
                }
            }
            off[ni] = nt;
            t->items[ni++] =
                (pv_policy_item_t){.ctx = {tr->task_text, tr->texts, 2 * (tr->first_step + s) + 1},
                                   .cands = tr->steps[s].cands,
                                   .n_cands = tr->steps[s].n_cands,
                                   .n_tokens = k,
                                   .full_vocab = t->bc_full_vocab};
            nt += k;
        }
    off[ni] = nt;
    if (rc == PV_OK && nt > t->cap_tok) {
        float *b = realloc(t->tok, 4 * nt * sizeof *b);
        if (b) {
            t->tok = b;
            t->cap_tok = nt;
        } else {
            rc = PV_ERR_NOMEM;
        }
    }
    if (rc != PV_OK) {
        free(off);
        free(ids);
        return pv_errf(em, rc, "bc: the demonstrations' tokens: %s", pv_strerror(rc));
    }
    for (size_t j = 0; j < ni; j++)
        t->items[j].tokens = ids + off[j];
    float *lp = t->tok, *g = t->tok + t->cap_tok;
    for (size_t k = 0; k < nt; k++)
        g[k] = -1.0f / (float)nt;
    memset(t->grad, 0, pv_policy_n_params(t->policy) * sizeof *t->grad);
    rc = pv_policy_backward_items(t->policy, t->items, ni, t->work, g, NULL, t->grad, lp, em);
    if (rc == PV_OK) {
        double nll = 0;
        size_t hits = 0;
        for (size_t j = 0; j < ni; j++) {
            bool sure = true; /* every token above 1/2: greedy decoding writes the action */
            for (size_t k = off[j]; k < off[j + 1]; k++) {
                nll -= lp[k];
                sure = sure && lp[k] > -0.69314718f;
            }
            hits += sure;
        }
        if (pv_adam_step(t->adam, pv_policy_params(t->policy), t->grad, NULL) == PV_OK)
            pv_policy_set_version(t->policy, pv_policy_version(t->policy) + 1);
        *loss = nll / (double)nt;
        if (accuracy)
            *accuracy = (double)hits / (double)ni;
    }
    memset(t->grad, 0, pv_policy_n_params(t->policy) * sizeof *t->grad);
    free(off);
    free(ids);
    return rc;
}

/* The candidate scorer: the NLL of the expert's candidate at each step. */
static pv_err_t s_bc_cands(pv_trainer_t *t, const pv_traj_t *demos, size_t n, double *loss,
                           double *accuracy, pv_errmsg_t *em)
{
    size_t N = 0, hits = 0;
    for (size_t i = 0; i < n; i++)
        N += demos[i].n_steps;
    if (!N)
        return pv_errf(em, PV_ERR_INVAL, "bc: no demonstration step");
    float g = -1.0f / (float)N;
    double nll = 0;
    memset(t->grad, 0, pv_policy_n_params(t->policy) * sizeof *t->grad);
    for (size_t i = 0; i < n; i++)
        for (size_t s = 0; s < demos[i].n_steps; s++) {
            const pv_traj_t *tr = &demos[i];
            const pv_step_rec_t *st = &tr->steps[s];
            pv_policy_ctx_t ctx = {tr->task_text, tr->texts, 2 * (tr->first_step + s) + 1};
            pv_err_t rc = PV_OK;
            if (accuracy) { /* argmax of the full distribution (first maximum, as act) */
                rc = pv_policy_logprobs(t->policy, &ctx, st->cands, st->n_cands, t->work, t->logp,
                                        NULL);
                size_t best = 0;
                for (size_t j = 1; rc == PV_OK && j < st->n_cands; j++)
                    best = t->logp[j] > t->logp[best] ? j : best;
                hits += rc == PV_OK && best == st->token;
            }
            float lp, ent;
            if (rc == PV_OK)
                rc = pv_policy_forward(t->policy, &ctx, st->cands, st->n_cands, &st->token, 1,
                                       t->work, &lp, &ent);
            if (rc == PV_OK)
                rc = pv_policy_backward(t->policy, t->work, &g, NULL, t->grad);
            if (rc != PV_OK)
                return pv_errf(em, rc, "bc: demonstration %zu step %zu: %s", i, s, pv_strerror(rc));
            nll -= lp;
        }
    if (pv_adam_step(t->adam, pv_policy_params(t->policy), t->grad, NULL) == PV_OK)
        pv_policy_set_version(t->policy, pv_policy_version(t->policy) + 1);
    memset(t->grad, 0, pv_policy_n_params(t->policy) * sizeof *t->grad);
    *loss = nll / (double)N;
    if (accuracy)
        *accuracy = (double)hits / (double)N;
    return PV_OK;
}

pv_err_t pv_bc_step(pv_trainer_t *t, const pv_traj_t *demos, size_t n, double *loss,
                    double *accuracy, pv_errmsg_t *em)
{
    /* The model's own distribution (T = 1), whatever the rollout temperature: cloning at
     * T = 2 would teach logits twice as sharp and cancel the rollouts' exploration. */
    float rollout_t = pv_policy_spec(t->policy)->temperature;
    pv_err_t rc = pv_policy_set_temperature(t->policy, 1.0f);
    if (rc != PV_OK)
        return pv_errf(em, rc, "bc: temperature 1: %s", pv_strerror(rc));
    if (pv_policy_token_space(t->policy) > 0)
        rc = s_bc_tokens(t, demos, n, loss, accuracy, em);
    else
        rc = s_bc_cands(t, demos, n, loss, accuracy, em);
    pv_policy_set_temperature(t->policy, rollout_t);
    return rc;
}

pv_err_t pv_bc_train(pv_trainer_t *t, const pv_traj_t *demos, size_t n, unsigned epochs,
                     size_t batch, const pv_bc_order_t *order, double *loss, double *accuracy,
                     pv_errmsg_t *em)
{
    if (batch == 0)
        return pv_errf(em, PV_ERR_INVAL, "behaviour cloning: batch of 0 trajectories");
    bool shuffle = order && order->shuffle && n > 1;
    pv_traj_t *picked = NULL; /* a shuffled batch's headers (shallow copies, read only) */
    if (shuffle && !(picked = malloc((batch < n ? batch : n) * sizeof *picked)))
        return pv_errf(em, PV_ERR_NOMEM, "behaviour cloning: out of memory");
    double t0 = pv_mono_s(), step_loss = 0.0;
    pv_err_t err = PV_OK;
    for (unsigned ep = 0; ep < epochs && err == PV_OK; ep++) {
        double sum = 0.0;
        size_t steps = 0;
        uint64_t key = shuffle ? pv_rng_mix(pv_rng_mix(order->seed, ep), 0x62636f72646572ULL) : 0;
        for (size_t i = 0; i < n && err == PV_OK; i += batch) {
            bool last = ep + 1 == epochs && i + batch >= n;
            size_t m = n - i < batch ? n - i : batch;
            const pv_traj_t *b = demos + i;
            if (shuffle) {
                for (size_t j = 0; j < m; j++)
                    picked[j] = demos[pv_rng_permute(i + j, n, key)];
                b = picked;
            }
            err = pv_bc_step(t, b, m, &step_loss, last ? accuracy : NULL, em);
            sum += step_loss;
            steps++;
        }
        if (err != PV_OK)
            break;
        /* progress of long cloning runs (the LM job's takes minutes) */
        PV_LOG_INFO("behaviour cloning: epoch %u/%u, mean nll %.4f before its %zu steps, %.0f s",
                    ep + 1, epochs, steps ? sum / (double)steps : 0.0, steps, pv_mono_s() - t0);
    }
    free(picked);
    if (err == PV_OK && loss)
        *loss = step_loss;
    return err;
}
