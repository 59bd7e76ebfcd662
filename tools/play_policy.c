/* play_policy.c - `prover-env play --policy PATH`: a trained policy plays, a person watches;
 * see play_policy.h. */
#include "tools/play_policy.h"

#include "tools/play_diagnose.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include "common/arena.h"
#include "common/config.h"
#include "common/fs.h"
#include "common/policy/policy.h"
#include "common/rng.h"
#include "common/role_build.h"
#include "common/traj/episodes.h"
#include "common/traj/rollout.h"
#include "learner/train_ckpt.h"

/* dir + "/" + name into buf; false when it does not fit. */
static bool s_join(char *buf, size_t cap, const char *dir, const char *name)
{
    int n = snprintf(buf, cap, "%s/%s", dir, name);
    return n > 0 && (size_t)n < cap;
}

/* The folder that holds `path` ("." for a bare name). */
static void s_parent(char *buf, size_t cap, const char *path)
{
    snprintf(buf, cap, "%s", path);
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash)
        snprintf(buf, cap, ".");
    else if (slash == buf)
        buf[1] = '\0';
    else
        *slash = '\0';
}

/* Name the checkpoints a folder holds (prover-train-local --save writes <phase>.safetensors
 * or <phase>/), as a hint after "no checkpoint". */
static void s_list_checkpoints(const char *dir, FILE *err)
{
    DIR *d = opendir(dir);
    unsigned n = 0;
    char buf[4096];
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        bool file = len > 12 && strcmp(e->d_name + len - 12, ".safetensors") == 0;
        char sub[4096];
        bool model = e->d_name[0] != '.' && s_join(sub, sizeof sub, dir, e->d_name) &&
                     pv_is_dir(sub) && s_join(buf, sizeof buf, sub, "config.json") &&
                     pv_is_file(buf);
        if (file || model)
            fprintf(err, "%s %s/%s", n++ ? "," : "; it holds", dir, e->d_name);
    }
    if (d)
        closedir(d);
    fprintf(err, "%s\n", n ? ": give one of them to --policy" : "");
}

/* Where the configuration and the weights of PATH are (play_policy.h): *config = a
 * config.yaml or "" (none: defaults), *ckpt = a checkpoint to load or "" (none), *model_dir =
 * a Hugging Face directory to read as policy.path or "". False (message in err) when PATH is
 * none of the forms. */
static bool s_resolve(const char *path, char *config, char *ckpt, char *model_dir, size_t cap,
                      FILE *err)
{
    char buf[4096];
    config[0] = ckpt[0] = model_dir[0] = '\0';
    if (pv_is_dir(path)) {
        bool run = s_join(buf, sizeof buf, path, "config.yaml") && pv_is_file(buf);
        if (run) { /* a run folder */
            snprintf(config, cap, "%s", buf);
            if (s_join(buf, sizeof buf, path, "checkpoint/model.safetensors") && pv_is_file(buf))
                s_join(model_dir, cap, path, "checkpoint");
            else if (s_join(buf, sizeof buf, path, "checkpoint.safetensors") && pv_is_file(buf))
                snprintf(ckpt, cap, "%s", buf);
            else {
                fprintf(err,
                        "prover-env: %s: a run folder without a checkpoint (neither "
                        "checkpoint/ nor checkpoint.safetensors; the learner writes one every "
                        "learner.checkpoint_every iterations and at the end)",
                        path);
                s_list_checkpoints(path, err);
                return false;
            }
            return true;
        }
        if (s_join(buf, sizeof buf, path, "config.json") && pv_is_file(buf)) { /* a model dir */
            snprintf(model_dir, cap, "%s", path);
            char parent[4096];
            s_parent(parent, sizeof parent, path);
            if (s_join(buf, sizeof buf, parent, "config.yaml") && pv_is_file(buf))
                snprintf(config, cap, "%s", buf);
            return true;
        }
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        if (strncmp(base, "rl-", 3) == 0 && base[3]) { /* prover-train-local --save's metrics */
            char parent[4096];
            s_parent(parent, sizeof parent, path);
            fprintf(err,
                    "prover-env: %s: prover-train-local's run folder of estimator %s holds its "
                    "metrics, not its weights: the checkpoint is %s/%s (a Hugging Face folder) "
                    "or %s/%s.safetensors\n",
                    path, base + 3, parent, base + 3, parent, base + 3);
            return false;
        }
        fprintf(err,
                "prover-env: %s: not a run folder (config.yaml), nor a Hugging Face model "
                "directory (config.json)\n",
                path);
        return false;
    }
    if (!pv_is_file(path)) {
        fprintf(err, "prover-env: --policy %s: no such file or directory\n", path);
        return false;
    }
    snprintf(ckpt, cap, "%s", path); /* a checkpoint file: its run's config beside it */
    char parent[4096];
    s_parent(parent, sizeof parent, path);
    if (s_join(buf, sizeof buf, parent, "config.yaml") && pv_is_file(buf))
        snprintf(config, cap, "%s", buf);
    return true;
}

static int s_bad(FILE *err, const char *what, pv_err_t rc, const pv_errmsg_t *em)
{
    fprintf(err, "prover-env: %s: %s%s%s\n", what, pv_strerror(rc), em->text[0] ? ": " : "",
            em->text);
    return pv_exit_status(rc) == 2 ? 2 : 1;
}

/* The configuration of the run: the file found or given, then the overrides. */
static int s_config(const pv_play_opts_t *o, const char *found, const char *model_dir,
                    pv_config_t *cfg, FILE *err)
{
    pv_errmsg_t em = {{0}};
    pv_err_t rc;
    pv_config_defaults(cfg);
    const char *file = o->config_path ? o->config_path : found;
    if (file[0] && (rc = pv_config_load_file(cfg, file, &em)) != PV_OK)
        return s_bad(err, "configuration", rc, &em);
    if (model_dir[0]) {
        if ((rc = pv_config_set(cfg, "policy.kind", "transformer", &em)) != PV_OK ||
            (rc = pv_config_set(cfg, "policy.path", model_dir, &em)) != PV_OK)
            return s_bad(err, "policy.path", rc, &em);
    }
    if (!file[0] && !model_dir[0]) {
        fprintf(err,
                "prover-env: --policy %s: no config.yaml beside the checkpoint; give --config "
                "FILE, the configuration it was trained with\n",
                o->policy_path);
        return 2;
    }
    for (size_t i = 0; i < o->n_sets; i++) {
        char key[256];
        const char *eq = strchr(o->sets[i], '=');
        size_t kn = eq ? (size_t)(eq - o->sets[i]) : 0;
        if (!eq || kn >= sizeof key) {
            fprintf(err, "prover-env: '%s' is not section.key=value\n", o->sets[i]);
            return 2;
        }
        memcpy(key, o->sets[i], kn);
        key[kn] = '\0';
        if ((rc = pv_config_set(cfg, key, eq + 1, &em)) != PV_OK)
            return s_bad(err, "override", rc, &em);
    }
    if ((rc = pv_config_check(cfg, &em)) != PV_OK)
        return s_bad(err, "configuration", rc, &em);
    return 0;
}

static int s_desc(const void *a, const void *b)
{
    const float *x = *(const float *const *)a, *y = *(const float *const *)b;
    return (*y > *x) - (*y < *x);
}

/* The `top` most probable candidates other than the choice: a scorer's, or a language
 * model's under decode = rank or constrain (each candidate's log-prob under that process,
 * pv_policy_logprobs); the choice is the candidate whose text the step acted. */
static void s_alternatives(FILE *out, const pv_policy_t *p, pv_policy_work_t *work,
                           const pv_traj_t *tr, size_t s, unsigned top, float *logp,
                           const float **order)
{
    const pv_step_rec_t *st = &tr->steps[s];
    pv_policy_ctx_t ctx = {tr->task_text, tr->texts, 2 * s + 1};
    if (top == 0 || st->n_cands < 2 ||
        pv_policy_logprobs(p, &ctx, st->cands, st->n_cands, work, logp, NULL) != PV_OK)
        return;
    for (size_t i = 0; i < st->n_cands; i++)
        order[i] = &logp[i];
    qsort(order, st->n_cands, sizeof *order, s_desc);
    fprintf(out, "  (of %zu; next:", st->n_cands);
    unsigned shown = 0;
    for (size_t i = 0; i < st->n_cands && shown < top; i++) {
        size_t j = (size_t)(order[i] - logp);
        if (strcmp(st->cands[j], tr->texts[2 * s + 1]) == 0)
            continue;
        fprintf(out, "%s %s %.2f", shown ? ";" : "", st->cands[j], exp(logp[j]));
        shown++;
    }
    fprintf(out, ")");
}

static void s_transcript(FILE *out, const pv_policy_t *p, pv_policy_work_t *work,
                         const pv_traj_t *tr, unsigned top, float *logp, const float **order)
{
    bool lm = pv_policy_token_space(p) > 0;
    fprintf(out, "%s\n", tr->texts[0]);
    for (size_t s = 0; s < tr->n_steps; s++) {
        const pv_step_rec_t *st = &tr->steps[s];
        const char *a = tr->texts[2 * s + 1];
        fprintf(out, "\n> %s    [p %.2f", a[0] ? a : "(no action in the reply)",
                exp(st->behav_logprob));
        if (lm)
            fprintf(out, ", %zu tokens", pv_step_n_tokens(st));
        if (st->refused)
            fprintf(out, ", refused by the environment");
        fprintf(out, "]");
        if (!lm || pv_policy_spec(p)->decode != PV_POLICY_DECODE_GENERATE)
            s_alternatives(out, p, work, tr, s, top, logp, order);
        fprintf(out, "\n%s\n", tr->texts[2 * s + 2]);
    }
}

int pv_play_policy(const pv_play_opts_t *o, FILE *out, FILE *err)
{
    char config[4096], ckpt[4096], model_dir[4096];
    if (!s_resolve(o->policy_path, config, ckpt, model_dir, sizeof config, err))
        return 2;
    pv_config_t *cfg = malloc(sizeof *cfg);
    if (!cfg)
        return 1;
    int status = s_config(o, config, model_dir, cfg, err);
    pv_env_model_t *model = NULL;
    pv_env_t *env = NULL;
    pv_policy_t *policy = NULL;
    pv_policy_work_t *work = NULL;
    pv_arena_t *arena = NULL;
    float *logp = NULL;
    const float **order = NULL;
    pv_errmsg_t em = {{0}};
    pv_err_t rc;
    if (status != 0)
        goto out;
    if ((rc = pv_role_env_new(cfg, &model, &env, &em)) != PV_OK) {
        status = s_bad(err, "environment", rc, &em);
        goto out;
    }
    if ((rc = pv_role_policy_new(cfg, &policy, &work, &em)) != PV_OK) {
        status = s_bad(err, "policy", rc, &em);
        goto out;
    }
    /* a prover checkpoint directory also restores the version, its tensors checksum-checked */
    char state[4096 + 32];
    if (!ckpt[0] && model_dir[0] &&
        s_join(state, sizeof state, model_dir, "trainer_state.safetensors") && pv_is_file(state))
        snprintf(ckpt, sizeof ckpt, "%s", model_dir);
    if (ckpt[0] && (rc = pv_ckpt_load(ckpt, policy, NULL, NULL, NULL, 0, &em)) != PV_OK) {
        status = s_bad(err, "checkpoint", rc, &em);
        goto out;
    }
    size_t max_cands = pv_policy_spec(policy)->max_cands;
    if ((rc = pv_arena_new(1 << 20, 0, &arena)) != PV_OK ||
        !(logp = malloc(max_cands * sizeof *logp)) ||
        !(order = malloc(max_cands * sizeof *order))) {
        status = 1;
        goto out;
    }
    fprintf(out, "policy %s v%llu from %s (%s), %s\n", cfg->policy.kind,
            (unsigned long long)pv_policy_version(policy), ckpt[0] ? ckpt : model_dir,
            config[0] ? config : "default configuration", o->sample ? "sampled" : "greedy");
    pv_rng_t rng;
    pv_rng_seed(&rng, o->sample_seed, 17);
    uint64_t n = o->episodes ? o->episodes : 1;
    uint64_t won = 0;
    pv_diag_totals_t diag = {0};
    status = 0;
    for (uint64_t ep = 0; ep < n; ep++) {
        pv_task_t t = o->task;
        t.task_id += ep;
        if (!o->seed_given) /* the run's own tasks: what its evaluation played */
            t = pv_episode_task((uint64_t)cfg->run.seed, (pv_env_split_t)t.split, t.task_id);
        if (t.task_id >= pv_env_model_n_tasks(model, t.split)) {
            fprintf(err, "prover-env: task %llu: the %s split has %llu tasks\n",
                    (unsigned long long)t.task_id, t.split ? "test" : "train",
                    (unsigned long long)pv_env_model_n_tasks(model, t.split));
            status = 2;
            break;
        }
        pv_arena_reset(arena);
        pv_traj_t tr;
        pv_cost_t cost = {0};
        pv_rollout_opts_t ro = {.max_steps = 0};
        rc = pv_rollout_episode(model, env, &t, policy, work, o->sample ? &rng : NULL, &ro, 0,
                                arena, &tr, &cost, &em);
        if (rc != PV_OK) {
            fprintf(err, "prover-env: task %llu: %s: %s\n", (unsigned long long)t.task_id,
                    pv_strerror(rc), em.text);
            status = 1;
            break;
        }
        if (o->diagnose) {
            rc = pv_diagnose_episode(out, model, env, &t, policy, work, &tr, logp, order, &diag,
                                     &em);
            if (rc != PV_OK) {
                status = s_bad(err, "diagnosis", rc, &em);
                break;
            }
            won += tr.won;
            continue;
        }
        fprintf(out, "\n==== task %llu (%s, seed %llu)%s%s\n", (unsigned long long)t.task_id,
                t.split ? "test" : "train", (unsigned long long)t.seed,
                pv_env_task_type(env) ? ", " : "",
                pv_env_task_type(env) ? pv_env_task_type(env) : "");
        s_transcript(out, policy, work, &tr, o->top, logp, order);
        fprintf(out, "\n%s (reward %g after %zu steps)\n", tr.won ? "Won." : "Episode over: lost.",
                tr.reward, tr.n_steps);
        won += tr.won;
    }
    if (status == 0 && o->diagnose)
        pv_diagnose_totals(out, &diag);
    if (status == 0 && n > 1)
        fprintf(out, "\nwon %llu of %llu episodes\n", (unsigned long long)won,
                (unsigned long long)n);
out:
    free(order);
    free(logp);
    pv_arena_destroy(&arena);
    pv_policy_work_destroy(&work);
    pv_policy_destroy(&policy);
    pv_env_destroy(&env);
    pv_env_model_destroy(&model);
    free(cfg);
    return status;
}
