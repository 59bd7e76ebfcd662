/* play_policy.h - `prover-env play --policy PATH`: watch a trained policy play.
 *
 * PATH is what a run leaves behind (issue 12, item 6):
 *   a run folder          runs/NAME: its config.yaml (the learner writes the effective
 *                         configuration there) and its checkpoint: the Hugging Face directory
 *                         runs/NAME/checkpoint (a language model) or the file
 *                         runs/NAME/checkpoint.safetensors (the candidate scorer);
 *   a checkpoint          a checkpoint file or a Hugging Face directory inside a run folder
 *                         (the run's config.yaml beside it is read), or anywhere with
 *                         --config FILE naming the configuration it was trained with;
 *   a model directory     any Hugging Face directory (config.json, model.safetensors,
 *                         tokenizer.json) without a run around it: policy.kind=transformer,
 *                         policy.path=DIR, the environment of the other options.
 * The environment and the policy's settings come from that configuration (env.* with its
 * generator seed, policy.*), so the policy sees the tasks it was trained and evaluated on;
 * the environment options given explicitly on the command line override them (key=value
 * overrides in `sets`). A language model's checkpoint directory is read as policy.path (its
 * own tokenizer.json), a scorer's file through pv_ckpt_load (shapes and checksums checked).
 *
 * Task i of a split is the run's task i (seed pv_episode_task(run.seed, split, i), as in the
 * learner's evaluation, which plays test tasks 0 .. learner.eval_tasks - 1) unless --seed
 * fixes the seed. Each episode is played with the common rollout (common/traj/rollout.h, the
 * actor's own loop): greedy by default, sampled with `sample`. The transcript shows every
 * observation and action with the action's probability under the policy (exp of its behaviour
 * log-prob: the candidate's probability for the scorer, the product of the token
 * probabilities for a language model, whose refused replies are marked) and, for the
 * scorer, the `top` most probable alternatives; then the outcome, reward and steps. With
 * diagnose, each episode prints tools/play_diagnose.h's block instead (which candidates
 * would have won at each step, where the gold answer was, a verdict) and the verdicts are
 * tallied at the end.
 */
#ifndef PV_TOOLS_PLAY_POLICY_H
#define PV_TOOLS_PLAY_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/env/env.h"

typedef struct pv_play_opts {
    const char *policy_path; /* PATH above */
    const char *config_path; /* --config FILE, or NULL */
    const char *const *sets; /* (n_sets) "section.key=value" overrides, applied last */
    size_t n_sets;
    pv_task_t task;    /* first task; episodes play task_id, task_id + 1, ... */
    bool seed_given;   /* task.seed as given; else each task's seed is the run's
                        * (pv_episode_task with run.seed), so task i of the test split is
                        * the game the run's evaluation played */
    uint64_t episodes; /* 0 = 1 */
    bool sample;       /* sample actions (seeded by sample_seed) instead of argmax */
    uint64_t sample_seed;
    unsigned top;  /* alternatives shown per scorer decision (0 = none) */
    bool diagnose; /* --diagnose: per episode the failure diagnosis of play_diagnose.h
                    * instead of the transcript, and the verdicts' tally at the end */
} pv_play_opts_t;

/* Play opts->episodes episodes and print their transcripts to `out`; errors go to `err`
 * naming the path or key at fault. Returns the exit status: 0, 2 for bad input (a path that
 * is no run, checkpoint or model; a configuration or checkpoint that does not load; a
 * checkpoint of other shapes than the configuration's policy), 1 for a failure while
 * playing. */
int pv_play_policy(const pv_play_opts_t *opts, FILE *out, FILE *err);

#endif
