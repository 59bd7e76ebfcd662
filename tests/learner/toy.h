/* toy.h - a tiny text task for the learner tests (header-only): "open the <color> box".
 * Five boxes; the task names one colour; each step the agent opens a box (the candidates,
 * in a fixed order); the right box ends the episode with reward 1, a wrong one answers
 * "The <c> box is empty." and after TOY_MAX_STEPS wrong boxes the reward is 0. */
#ifndef PV_TEST_TOY_H
#define PV_TEST_TOY_H

#include <stdio.h>
#include <string.h>

#include "common/policy/policy.h"
#include "learner/batch.h"

#define TOY_N_BOX     5
#define TOY_MAX_STEPS 3

static const char *const toy_colors[TOY_N_BOX] = {"red", "blue", "green", "yellow", "white"};
static const char *const toy_cands[TOY_N_BOX] = {"open red box", "open blue box", "open green box",
                                                 "open yellow box", "open white box"};

typedef struct toy_traj {
    char task[64];
    char obs[TOY_MAX_STEPS + 1][64];
    const char *texts[2 * TOY_MAX_STEPS + 1];
    pv_step_rec_t steps[TOY_MAX_STEPS];
    pv_traj_t traj;
} toy_traj_t;

static void toy_begin(toy_traj_t *t, unsigned target, int64_t group)
{
    memset(t, 0, sizeof *t);
    snprintf(t->task, sizeof t->task, "open the %s box.", toy_colors[target]);
    snprintf(t->obs[0], sizeof t->obs[0], "You see five boxes.");
    t->texts[0] = t->obs[0];
    t->traj =
        (pv_traj_t){.task_text = t->task, .texts = t->texts, .steps = t->steps, .group = group};
}

/* Record choice c at the current step; returns 1 when the episode is over. */
static int toy_step(toy_traj_t *t, unsigned target, unsigned c, float logp)
{
    size_t s = t->traj.n_steps++;
    t->steps[s] = (pv_step_rec_t){
        .cands = toy_cands, .n_cands = TOY_N_BOX, .token = c, .behav_logprob = logp};
    t->texts[2 * s + 1] = toy_cands[c];
    snprintf(t->obs[s + 1], sizeof t->obs[s + 1], "The %s box is %s.", toy_colors[c],
             c == target ? "open, you win" : "empty");
    t->texts[2 * s + 2] = t->obs[s + 1];
    if (c == target) {
        t->traj.reward = 1.0;
        t->traj.won = true;
        return 1;
    }
    return t->traj.n_steps == TOY_MAX_STEPS;
}

/* Play one episode with the policy (rng NULL = greedy). */
static void toy_play(toy_traj_t *t, const pv_policy_t *p, pv_policy_work_t *w, pv_rng_t *rng,
                     unsigned target, int64_t group)
{
    toy_begin(t, target, group);
    for (;;) {
        pv_policy_ctx_t ctx = {t->task, t->texts, 2 * t->traj.n_steps + 1};
        pv_policy_step_t st;
        if (pv_policy_act(p, &ctx, toy_cands, TOY_N_BOX, rng, w, &st) != PV_OK)
            return;
        if (toy_step(t, target, (unsigned)st.choice, st.logprob))
            return;
    }
}

#endif
