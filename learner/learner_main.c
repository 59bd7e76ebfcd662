/* prover-learner - the learner role: credited groups in, PPO updates, versioned weights out.
 *
 *   prover-learner [--config FILE] [section.key=value ...]
 *
 * Takes CREDITED_GROUPs from the broker's "learn" service (learner/intake.h: duplicates,
 * stale groups beyond learner.max_policy_lag and malformed payloads are counted, never
 * trained on), computes advantages with algorithm.adv_estimator ("prover" = GRPO plus the
 * verified segments' lambda * max(delta, 0); "gigpo" = verl-agent's GiGPO over the batch's
 * steps, learner/gigpo_batch.h), runs the PPO update, and publishes the new
 * policy version over MPI and to the broker relay (common/role.h). Writes
 * run.out_dir/metrics.jsonl (learner/report.h), evaluates greedily on held-out tasks every
 * learner.eval_every iterations, checkpoints every learner.checkpoint_every iterations, at
 * the end and on SIGTERM (run.out_dir/checkpoint.safetensors; a language model: the Hugging
 * Face directory run.out_dir/checkpoint), resumes from learner.resume,
 * and at the end writes summary.json and sends the stop message to every rank of the job.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/rng.h"
#include "common/net/broker_client.h"
#include "common/net/stats_fetch.h"
#include "common/role.h"
#include "common/role_build.h"
#include "common/task_cursor.h"
#include "learner/train_cfg.h"
#include "learner/intake.h"
#include "common/traj/episodes.h"
#include "learner/report.h"
#include "learner/train_ckpt.h"

static const char s_usage[] =
    "usage: prover-learner [--config FILE] [section.key=value ...]\n"
    "The learner role of a prover run (launched by cluster/launch under mpirun).\n";

typedef struct s_learner {
    pv_role_ctx_t rc;
    pv_env_model_t *model;
    pv_env_t *env;
    pv_arena_t *arena;
    pv_policy_t *policy;
    pv_policy_t *ref; /* frozen copy of the starting policy, for learner.use_kl_loss */
    pv_adam_t *adam;
    pv_trainer_t trainer;
    bool trainer_ok;
    pv_episodes_t E; /* evaluation and expert demonstrations */
    pv_intake_t *intake;
    pv_worker_t *worker;
    pv_weights_out_t *wout;
    pv_metrics_t *metrics;
    pv_train_cfg_t tc; /* plan, optimiser, update, advantages, behaviour cloning */
    pv_run_totals_t run;
    char run_name[PV_CONFIG_STR_MAX]; /* pv_config_run_name: the progress line's first word */
    pv_health_t health;               /* the broker's books (learner/health.h) */
    pv_stats_link_t *hlink;           /* its statistics requests and RUN_STATUS */
    uint64_t step;                    /* iterations done */
    uint64_t t0_ms;
    /* a resumed run continues the counters of the run that wrote its checkpoint */
    uint64_t base_rollout, base_verify;               /* env steps before this process */
    uint64_t base_rollout_tokens, base_verify_tokens; /* generated tokens before it */
    double base_wall_s;                               /* wall time before this process */
    bool skip_first_eval;                             /* the resumed step was evaluated already */
    bool totals_resumed;       /* the intake totals continue the checkpoint's */
    pv_intake_stats_t trained; /* intake totals after the last iteration trained (checkpoints) */
    pv_task_cursor_t cursor;   /* the actors' groups received (common/task_cursor.h) */
    pv_task_cursor_t cursor_trained; /* ... as of the last iteration trained (checkpoints) */
    bool training;                   /* past start-up: an error now is a runtime failure (exit 1) */
    bool failed;                     /* the run ends as failed: s->run.reason says why (s_fail) */
    char dir[PV_CONFIG_STR_MAX];
} s_learner_t;

static pv_err_t s_setup(void *self, pv_errmsg_t *em)
{
    s_learner_t *s = self;
    const pv_config_t *c = &s->rc.cfg;
    pv_err_t err;
    if ((err = pv_train_cfg_from_config(c, &s->tc, em)) ||
        (err = pv_role_env_new(c, &s->model, &s->env, em)) ||
        (err = pv_arena_new(1 << 20, 0, &s->arena)) ||
        (err = pv_role_policy_make(c, &s->policy, em)) ||
        (err = pv_adam_new(pv_policy_n_params(s->policy), &s->tc.adam, &s->adam, em)) ||
        (err = pv_trainer_init(&s->trainer, s->policy, NULL, s->adam, em)))
        return err;
    s->trainer_ok = true;
    s->E = (pv_episodes_t){.model = s->model,
                           .env = s->env,
                           .policy = s->policy,
                           .work = s->trainer.work,
                           .arena = s->arena,
                           .task_seed = (uint64_t)c->run.seed};
    snprintf(s->dir, sizeof s->dir, "%s", c->run.out_dir);
    if ((err = pv_mkdirs(s->dir, 0755, em)))
        return err;
    char path[PV_CONFIG_STR_MAX + 64];
    snprintf(path, sizeof path, "%s/config.yaml", s->dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return pv_errf(em, PV_ERR_IO, "%s: %s", path, strerror(errno));
    pv_config_write_yaml(c, f);
    fclose(f);
    pv_role_warn_ignored(c);
    if ((err = pv_intake_new((size_t)c->learner.batch_groups, &s->intake)) ||
        (err = pv_stats_link_new(s->rc.net, c->broker.endpoint, c->broker.curve_dir,
                                 c->broker.curve_client, "learner", &s->hlink)))
        return err;
    pv_intake_set_token_space(s->intake, pv_policy_token_space(s->policy));
    s->run.eval_first = s->run.eval_last = (pv_eval_result_t){.greedy = -1, .sampled = -1};
    s->run.train_first = s->run.train_last = -1;
    s->run.run_name = pv_config_run_name(c, s->run_name, sizeof s->run_name);
    return PV_OK;
}

static void s_teardown(void *self)
{
    s_learner_t *s = self;
    /* the learner leaves the broker first (its goodbye is then in the broker's queue before
     * the stop), then everyone else ends with it (status 1 when the run failed) */
    pv_worker_destroy(&s->worker);
    pv_world_stop_all(&s->rc.world, s->failed ? PV_WORLD_STOP_FAILED : PV_WORLD_STOP_DONE, 3000);
    pv_weights_out_destroy(&s->wout);
    pv_metrics_close(&s->metrics);
    pv_intake_destroy(&s->intake);
    pv_train_cfg_fini(&s->tc);
    pv_stats_link_destroy(&s->hlink);
    if (s->trainer_ok)
        pv_trainer_fini(&s->trainer);
    pv_adam_destroy(&s->adam);
    pv_policy_destroy(&s->policy);
    pv_policy_destroy(&s->ref);
    pv_arena_destroy(&s->arena);
    pv_env_destroy(&s->env);
    pv_env_model_destroy(&s->model);
}

static pv_err_t s_checkpoint(s_learner_t *s, pv_errmsg_t *em)
{
    char path[PV_CONFIG_STR_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", s->dir, pv_ckpt_name(s->policy));
    size_t cap = pv_config_yaml_max(), len = 0;
    char *yaml = malloc(cap);
    if (!yaml)
        return PV_ERR_NOMEM;
    pv_config_to_yaml(&s->rc.cfg, yaml, cap, &len);
    char totals[PV_INTAKE_STATS_TEXT_MAX];
    if (pv_intake_stats_format(&s->trained, totals, sizeof totals) != PV_OK)
        totals[0] = '\0';
    /* the counters of iterations 1 .. step, so a resumed run continues them (issue 15, 7) */
    /* and where the actors' task schedule stands, so they go on from there (issue 15, 3) */
    static char cursor[PV_TASK_CURSOR_TEXT_MAX];
    if (pv_task_cursor_format(&s->cursor_trained, cursor, sizeof cursor) != PV_OK)
        cursor[0] = '\0';
    pv_run_meta_t meta = {.step = s->step,
                          .config = yaml,
                          .run_totals = totals,
                          .task_cursor = cursor,
                          .values = s->tc.adv.spopp};
    /* pv_ckpt_save writes a temporary file and renames it: a crash mid-write keeps the last
     * good checkpoint */
    pv_err_t err = pv_ckpt_save(path, s->policy, s->adam, &meta, em);
    free(yaml);
    if (err == PV_OK)
        PV_LOG_INFO("checkpoint %s (iteration %llu, v%llu)", path, (unsigned long long)s->step,
                    (unsigned long long)pv_policy_version(s->policy));
    return err;
}

/* After a resume: continue the counters, curves and summary means of the run that wrote the
 * checkpoint, from the metrics.jsonl beside it (pv_report_history). Without one the
 * counters start at zero, as said in the log. */
static void s_take_history(s_learner_t *s)
{
    char path[PV_CONFIG_STR_MAX + 32];
    const char *ckpt = s->rc.cfg.learner.resume, *slash = strrchr(ckpt, '/');
    snprintf(path, sizeof path, "%.*s%smetrics.jsonl", slash ? (int)(slash - ckpt) : 0, ckpt,
             slash ? "/" : "");
    pv_run_history_t h;
    pv_errmsg_t em = {{0}};
    if (pv_report_history(path, s->step, &h, &em) != PV_OK) {
        PV_LOG_WARN("no history of the resumed run (%s): environment steps, wall time and the "
                    "summary's means start from this process",
                    em.text);
        return;
    }
    /* the intake totals, when the checkpoint had them, count the earlier legs' steps too */
    s->base_rollout = s->totals_resumed ? 0 : h.rollout_env_steps;
    s->base_verify = s->totals_resumed ? 0 : h.verify_env_steps;
    s->base_rollout_tokens = s->totals_resumed ? 0 : h.rollout_tokens;
    s->base_verify_tokens = s->totals_resumed ? 0 : h.verify_tokens;
    s->base_wall_s = h.wall_s;
    s->run.rollout_env_steps = h.rollout_env_steps;
    s->run.verify_env_steps = h.verify_env_steps;
    s->run.rollout_tokens = h.rollout_tokens;
    s->run.verify_tokens = h.verify_tokens;
    s->run.wall_s = h.wall_s;
    if (h.eval_first.greedy >= 0) {
        s->run.eval_first = h.eval_first;
        s->run.eval_last = h.eval_last;
    }
    s->skip_first_eval = h.eval_last_iteration == (int64_t)s->step;
    memcpy(s->run.train_recent, h.recent, sizeof s->run.train_recent);
    s->run.train_n = h.n_train;
    if (h.n_train) {
        s->run.train_first = h.train_first;
        s->run.train_last = pv_report_train_mean(&s->run);
    }
    PV_LOG_INFO("continuing %s: %llu training lines, %llu + %llu env steps, %.0f s so far%s", path,
                (unsigned long long)h.n_train, (unsigned long long)h.rollout_env_steps,
                (unsigned long long)h.verify_env_steps, h.wall_s,
                h.bad_lines ? " (some lines were not JSON and were skipped)" : "");
}

static pv_err_t s_resume_or_init(s_learner_t *s, pv_errmsg_t *em)
{
    const pv_config_t *c = &s->rc.cfg;
    pv_err_t err;
    if (c->learner.resume[0]) {
        char totals[PV_INTAKE_STATS_TEXT_MAX];
        static char cursor[PV_TASK_CURSOR_TEXT_MAX];
        pv_run_meta_t meta = {.run_totals_buf = totals,
                              .run_totals_cap = sizeof totals,
                              .task_cursor_buf = cursor,
                              .task_cursor_cap = sizeof cursor};
        if ((err = pv_ckpt_load(c->learner.resume, s->policy, s->adam, &meta, NULL, 0, em)) ||
            (s->tc.adv.spopp &&
             (err = pv_ckpt_load_values(c->learner.resume, s->tc.adv.spopp, em))))
            return err;
        if (meta.step >= (uint64_t)c->run.iterations)
            return pv_errf(em, PV_ERR_CONFIG,
                           "learner.resume: %s is at iteration %llu and run.iterations is %lld: "
                           "nothing to do (set run.iterations above %llu to train further)",
                           c->learner.resume, (unsigned long long)meta.step,
                           (long long)c->run.iterations, (unsigned long long)meta.step);
        if (!meta.checksummed)
            PV_LOG_WARN("%s carries no checksums (written before format 2): its integrity "
                        "cannot be checked",
                        c->learner.resume);
        pv_intake_stats_t before;
        pv_errmsg_t why = {{0}};
        if (totals[0] && (err = pv_intake_stats_parse(totals, &before, &why)) != PV_OK)
            return pv_errf(em, err, "%s: %s", c->learner.resume, why.text);
        if (totals[0]) {
            pv_intake_resume(s->intake, &before);
            s->totals_resumed = true;
        } else {
            PV_LOG_WARN("%s carries no run totals (written before they were saved): groups, "
                        "segments and refusals count from this process",
                        c->learner.resume);
        }
        s->trained = *pv_intake_totals(s->intake);
        if (cursor[0] && (err = pv_task_cursor_parse(cursor, &s->cursor, &why)) != PV_OK)
            return pv_errf(em, err, "%s: %s", c->learner.resume, why.text);
        s->cursor_trained = s->cursor;
        s->step = meta.step;
        PV_LOG_INFO("resumed from %s at iteration %llu, v%llu", c->learner.resume,
                    (unsigned long long)s->step, (unsigned long long)pv_policy_version(s->policy));
        s_take_history(s);
        if (s->totals_resumed) {
            const pv_intake_stats_t *t = pv_intake_totals(s->intake);
            s->run.rollout_env_steps = t->steps + t->dropped_steps;
            s->run.verify_env_steps = t->verify_env_steps;
            s->run.rollout_tokens = t->action_tokens;
            s->run.verify_tokens = t->verify_tokens;
        }
        return PV_OK;
    }
    if (c->policy.init_checkpoint[0]) {
        pv_run_meta_t meta = {0};
        if ((err = pv_ckpt_load(c->policy.init_checkpoint, s->policy, NULL, &meta, NULL, 0, em)))
            return err;
        if (!meta.checksummed)
            PV_LOG_WARN("%s carries no checksums (written before format 2): its integrity "
                        "cannot be checked",
                        c->policy.init_checkpoint);
        PV_LOG_INFO("policy initialised from %s", c->policy.init_checkpoint);
    }
    if (s->tc.bc_episodes > 0) {
        double loss = 0, acc = 0;
        uint64_t steps = 0;
        if ((err = pv_train_bc(&s->tc, &s->E, &s->trainer, &loss, &acc, &steps, em)))
            return err;
        PV_LOG_INFO("behaviour cloning on %zu expert episodes (%llu env steps): nll %.3f, step "
                    "accuracy %.2f",
                    s->tc.bc_episodes, (unsigned long long)steps, loss, acc);
    }
    if (pv_policy_version(s->policy) == 0)
        pv_policy_set_version(s->policy, 1);
    return PV_OK;
}

/* learner.use_kl_loss: the reference is a frozen copy of the policy this process starts
 * training from (after init_checkpoint / behaviour cloning; after a resume, the resumed
 * policy), as verl keeps the initial actor as its reference. */
static pv_err_t s_reference(s_learner_t *s, pv_errmsg_t *em)
{
    if (!s->rc.cfg.learner.use_kl_loss)
        return PV_OK;
    return pv_trainer_freeze_reference(&s->trainer, &s->ref, em);
}

static pv_err_t s_eval(s_learner_t *s, pv_errmsg_t *em)
{
    const pv_config_t *c = &s->rc.cfg;
    pv_eval_result_t r = {0};
    pv_cost_t cost = {0};
    pv_rollout_opts_t ro = {.max_steps = (uint32_t)c->env.max_steps};
    /* greedy (argmax), then sampled at learner.eval_temperature; every evaluation samples
     * with the same random stream, so before and after are compared on common random
     * numbers */
    pv_eval_detail_t g, sm;
    pv_err_t err =
        pv_episodes_eval_heldout(&s->E, 1, s->policy, pv_episodes_eval_split(c->learner.eval_split),
                                 (size_t)c->learner.eval_tasks, &ro, (uint64_t)c->run.seed,
                                 (float)c->learner.eval_temperature, &g, &sm, &cost, em);
    if (err != PV_OK)
        return err;
    pv_report_eval_result(&g, &sm, &r);
    if (s->run.eval_first.greedy < 0)
        s->run.eval_first = r;
    s->run.eval_last = r;
    s->run.wall_s = s->base_wall_s + (double)(pv_mono_ms() - s->t0_ms) / 1000.0;
    return pv_report_eval(s->metrics, s->step, pv_policy_version(s->policy), &r, (uint64_t)g.n,
                          &s->run);
}

/* End the run as failed: the reason (printf-style) goes to the log and the summary.
 * Returns PV_ERR_INTERRUPTED. */
static pv_err_t s_fail(s_learner_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static pv_err_t s_fail(s_learner_t *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->run.reason, sizeof s->run.reason, fmt, ap);
    va_end(ap);
    s->failed = true;
    s->run.outcome = "failed";
    PV_LOG_ERROR("the run failed at iteration %llu: %s", (unsigned long long)s->step,
                 s->run.reason);
    return PV_ERR_INTERRUPTED;
}

/* "broker (rank 0, host h, pid p)" under mpirun, else "the broker at ENDPOINT". */
static void s_broker_name(const s_learner_t *s, char *buf, size_t cap)
{
    const pv_world_t *w = &s->rc.world;
    for (int r = 0; w->mpi && w->peers && r < w->size; r++)
        if (w->peers[r].role == PV_ROLE_BROKER) {
            pv_world_describe(w, r, buf, cap);
            return;
        }
    snprintf(buf, cap, "broker at %.100s", s->rc.cfg.broker.endpoint);
}

/* The stop message of a broker that ended the job because a role is gone: the run failed,
 * and the reason names the process (role, rank, host, pid). */
static pv_err_t s_fail_stopped(s_learner_t *s, pv_world_stop_t why)
{
    int rank = pv_world_stop_rank(&s->rc.world);
    char who[160] = "";
    if (rank >= 0)
        pv_world_describe(&s->rc.world, rank, who, sizeof who);
    return s_fail(s, "%s%s%s", pv_world_stop_text(why), rank >= 0 ? "; the last one: " : "", who);
}

/* Fill the batch from the "learn" service. Returns PV_ERR_INTERRUPTED on a signal or a stop
 * message, and after s_fail when the run cannot go on (no group for run.stall_timeout_s, or
 * no broker for broker.role_timeout_s); PV_ERR_TIMEOUT at run.time_limit_s. */
static pv_err_t s_collect(s_learner_t *s, pv_errmsg_t *em)
{
    const pv_config_t *c = &s->rc.cfg;
    pv_intake_reset(s->intake);
    uint64_t last_wait_log = pv_mono_ms();
    uint64_t last_group = pv_mono_ms(); /* progress: an update (just now) or a group */
    const uint64_t stall_ms = (uint64_t)c->run.stall_timeout_s * 1000u;
    const int64_t broker_ms = c->broker.role_timeout_s * 1000;
    while (pv_intake_groups(s->intake) < (size_t)c->learner.batch_groups) {
        if (pv_role_should_stop(&s->rc)) { /* a signal, or the broker ended the job */
            pv_world_stop_t why = pv_world_stop_reason(&s->rc.world);
            if (why != PV_WORLD_STOP_NONE && why != PV_WORLD_STOP_DONE)
                return s_fail_stopped(s, why);
            return PV_ERR_INTERRUPTED;
        }
        uint64_t now = pv_mono_ms();
        if (c->run.time_limit_s > 0 && now - s->t0_ms > (uint64_t)c->run.time_limit_s * 1000u)
            return PV_ERR_TIMEOUT;
        int64_t silent = pv_bclient_silent_ms(pv_worker_client(s->worker));
        if (broker_ms > 0 && silent > broker_ms) {
            char who[160];
            s_broker_name(s, who, sizeof who);
            return s_fail(s,
                          "the %s has not answered for %.0f s (broker.role_timeout_s = %lld s): "
                          "it is gone",
                          who, (double)silent / 1000.0, (long long)c->broker.role_timeout_s);
        }
        if (stall_ms > 0 && now - last_group > stall_ms)
            return s_fail(s,
                          "no group arrived for %.0f s (run.stall_timeout_s = %lld s; %zu of "
                          "%lld in this batch): the run is stalled",
                          (double)(now - last_group) / 1000.0, (long long)c->run.stall_timeout_s,
                          pv_intake_groups(s->intake), (long long)c->learner.batch_groups);
        pv_lease_t lease;
        /* while weights are on their way, wake often to move them (MPI progresses only
         * inside MPI calls); otherwise block longer */
        int wait_ms = pv_weights_out_progress(s->wout) > 0 ? 5 : 200;
        pv_err_t err = pv_worker_recv(s->worker, wait_ms, &lease);
        if (err == PV_ERR_TIMEOUT) {
            if (pv_mono_ms() - last_wait_log > 30000) {
                PV_LOG_INFO("waiting for groups (%zu of %lld in this batch)",
                            pv_intake_groups(s->intake), (long long)c->learner.batch_groups);
                last_wait_log = pv_mono_ms();
            }
            continue;
        }
        if (err != PV_OK)
            return pv_errf(em, err, "receiving from the broker: %s", pv_strerror(err));
        last_group = pv_mono_ms();
        pv_task_cursor_note(&s->cursor, lease.job_id); /* played, whatever its verdict */
        pv_intake_verdict_t verdict;
        pv_errmsg_t why = {{0}};
        err = pv_intake_add(s->intake, lease.payload, lease.len, pv_policy_version(s->policy),
                            (uint64_t)c->learner.max_policy_lag, &verdict, &why);
        if (err != PV_OK)
            return pv_errf(em, err, "taking a group: %s", pv_strerror(err));
        if (verdict == PV_INTAKE_MALFORMED)
            PV_LOG_WARN("malformed group (job %llu) refused: %s", (unsigned long long)lease.job_id,
                        why.text);
        /* every verdict consumes the job: a refusal is counted, never retried */
        pv_worker_ack(s->worker, lease.job_id, verdict != PV_INTAKE_MALFORMED,
                      verdict == PV_INTAKE_MALFORMED ? why.text : NULL, NULL, 0);
    }
    return PV_OK;
}

/* The learner's RUN_STATUS for one attempt of s_health's exchange (pv_stats_status_fn). */
static pv_err_t s_status_attempt(void *ctx, int attempt, const char *last_error, pv_arena_t *arena,
                                 pv_wire_run_status_t *out)
{
    (void)attempt;
    s_learner_t *s = ctx;
    if (last_error)
        PV_LOG_INFO("the broker's statistics: %s; asking again", last_error);
    size_t n_judges = 0;
    const pv_judge_tally_t *judges = pv_intake_judges(s->intake, true, &n_judges);
    return pv_health_status(s->step, (uint64_t)s->rc.cfg.run.iterations,
                            pv_policy_version(s->policy), s->run.run_name, judges, n_judges, arena,
                            out);
}

/* Tell the broker how the run goes (RUN_STATUS: iteration, version, acceptance per judge)
 * and take its books in the answer (learner/health.h): a "broker" line in metrics.jsonl (and
 * an "llm_judge" line when the judge reported its cost). A broker that does not answer is
 * logged and counted, never fatal. `attempts` > 1 (the last fetch of a run that completed or
 * reached its time limit, whose books go into the summary) asks again with twice the
 * timeout each time (2, 4, 8 s: pv_stats_link_exchange_retry), so a broker slowed by a
 * loaded machine still gets its say; books a fetch could not renew are kept as the last
 * reply's and marked stale (pv_health_fetch_failed). A reply is recorded once. */
static void s_health(s_learner_t *s, int attempts)
{
    pv_errmsg_t em = {{0}};
    pv_wire_stats_reply_t st;
    pv_err_t rc =
        pv_stats_link_exchange_retry(s->hlink, attempts, 2000, s_status_attempt, s, &st, NULL, &em);
    if (rc != PV_OK) {
        pv_health_fetch_failed(&s->health, em.text[0] ? em.text : pv_strerror(rc));
        PV_LOG_WARN("the broker's statistics: %s", em.text[0] ? em.text : pv_strerror(rc));
    } else if (pv_health_record(&s->health, &st, s->step, s->metrics) != PV_OK) {
        /* the books are recorded; only their metrics line could not be written */
        PV_LOG_WARN("the broker's statistics: writing their metrics line failed");
    }
}

static pv_err_t s_train(s_learner_t *s, pv_update_stats_t *up, pv_errmsg_t *em)
{
    size_t n = 0, n_segs = 0;
    const pv_traj_t *trajs = pv_intake_trajs(s->intake, &n);
    const pv_verified_seg_t *segs = pv_intake_segments(s->intake, &n_segs);
    pv_batch_t b = {0};
    pv_adv_stats_t as = {0};
    pv_err_t err = pv_batch_build(trajs, n, &b, em);
    if (err == PV_OK)
        err = pv_batch_advantages(&b, trajs, n, &s->tc.adv, segs, n_segs, &as, em);
    pv_report_adv_stats(&s->run, &as);
    if (err == PV_OK)
        err = pv_update_ppo(&s->trainer, trajs, &b, &s->tc.update, up, em);
    if (err == PV_OK) /* a diverged run stops here, before it publishes or saves NaNs */
        err = pv_update_check_finite(up, s->step + 1, em);
    pv_batch_free(&b);
    return err;
}

/* Write summary.json and summary.txt and print the summary (with the broker's books as last
 * fetched: s_health). */
static pv_err_t s_summary(s_learner_t *s, pv_errmsg_t *em)
{
    const pv_config_t *c = &s->rc.cfg;
    s->run.health = &s->health;
    s->run.judges_run = pv_intake_judges(s->intake, true, &s->run.n_judges_run);
    char *text = NULL;
    pv_err_t err =
        pv_report_summary(s->dir, c->env.name, s->tc.plan.name,
                          s->tc.plan.prover ? pv_judge_kind_name(s->tc.plan.judge) : "none",
                          pv_intake_totals(s->intake), &s->run, &text, em);
    if (text) {
        fputs(text, stdout);
        fflush(stdout);
        free(text);
    }
    return err;
}

static pv_err_t s_run(s_learner_t *s, pv_errmsg_t *em)
{
    const pv_config_t *c = &s->rc.cfg;
    pv_err_t err;
    bool signalled = false; /* stopped by a signal: one quick fetch of the books at the end */
    pv_bclient_opts_t bo;
    pv_role_bclient_opts(&s->rc, "learner", &bo);
    bo.name = "learner";
    char path[PV_CONFIG_STR_MAX + 64];
    snprintf(path, sizeof path, "%s/metrics.jsonl", s->dir);
    if ((err = s_resume_or_init(s, em)) || (err = s_reference(s, em)) ||
        (err = pv_metrics_open(path, c->learner.resume[0] != '\0', &s->metrics, em)) ||
        (err = pv_weights_out_new(&s->rc, pv_policy_n_params(s->policy), &s->wout, em)) ||
        (err = pv_weights_out_publish(s->wout, s->policy)) ||
        (err = pv_worker_new(&bo, "learn", (uint32_t)c->learner.batch_groups, &s->worker, em)))
        return err;
    PV_LOG_INFO("learner ready: %s on %s, %zu parameters, v%llu published, %lld groups of %lld "
                "per update, %lld iterations",
                s->tc.plan.name, c->env.name, pv_policy_n_params(s->policy),
                (unsigned long long)pv_policy_version(s->policy),
                (long long)c->learner.batch_groups, (long long)c->actor.group_size,
                (long long)c->run.iterations);
    uint64_t per_update = (uint64_t)c->learner.ppo_epochs * s->tc.update.mini_batches;
    if (per_update > (uint64_t)c->learner.max_policy_lag)
        PV_LOG_WARN("learner: one update takes %llu policy versions (ppo_epochs x mini-batches) "
                    "and learner.max_policy_lag is %lld: groups played one update behind are "
                    "dropped as stale (dropped_stale); raise learner.max_policy_lag to at least "
                    "%llu",
                    (unsigned long long)per_update, (long long)c->learner.max_policy_lag,
                    (unsigned long long)per_update);
    s->t0_ms = pv_mono_ms();
    s->training = true;
    if (c->learner.eval_every > 0 && !s->skip_first_eval && (err = s_eval(s, em)))
        return err;
    s->run.iterations = s->step;
    s->run.iterations_planned = (uint64_t)c->run.iterations;
    while (s->step < (uint64_t)c->run.iterations) {
        err = s_collect(s, em);
        if (s->failed) { /* keep the work done, and say in the summary why the run failed */
            if (s->step > 0)
                s_checkpoint(s, em);
            s->run.wall_s = s->base_wall_s + (double)(pv_mono_ms() - s->t0_ms) / 1000.0;
            /* the broker's books at the end, unless the broker is the one gone */
            if (pv_bclient_silent_ms(pv_worker_client(s->worker)) <
                c->broker.heartbeat_ms * c->broker.liveness)
                s_health(s, 1);
            s_summary(s, em);
            return pv_errf(em, PV_ERR_INTERRUPTED, "%s", s->run.reason);
        }
        if (err == PV_ERR_INTERRUPTED || err == PV_ERR_TIMEOUT) {
            signalled = err == PV_ERR_INTERRUPTED; /* the broker is likely stopping too */
            PV_LOG_INFO("%s: stopping at iteration %llu",
                        err == PV_ERR_TIMEOUT ? "run.time_limit_s reached" : "signal",
                        (unsigned long long)s->step);
            if (err == PV_ERR_TIMEOUT) {
                s->run.outcome = "time_limit";
                snprintf(s->run.reason, sizeof s->run.reason,
                         "run.time_limit_s (%lld s) reached at iteration %llu of %lld",
                         (long long)c->run.time_limit_s, (unsigned long long)s->step,
                         (long long)c->run.iterations);
            }
            break;
        }
        if (err != PV_OK)
            return err;
        pv_update_stats_t up = {0};
        if ((err = s_train(s, &up, em)) || (err = pv_weights_out_publish(s->wout, s->policy)))
            return err;
        s->step++;
        const pv_intake_stats_t *b = pv_intake_stats(s->intake), *t = pv_intake_totals(s->intake);
        s->trained = *t;
        s->cursor_trained = s->cursor;
        pv_report_take_iteration(&s->run, s->intake, s->step, &up.lag);
        s->run.rollout_env_steps += s->base_rollout; /* the legs before a resume */
        s->run.verify_env_steps += s->base_verify;
        s->run.rollout_tokens += s->base_rollout_tokens;
        s->run.verify_tokens += s->base_verify_tokens;
        s->run.wall_s = s->base_wall_s + (double)(pv_mono_ms() - s->t0_ms) / 1000.0;
        if ((err = pv_report_iteration(s->metrics, s->step, (uint64_t)c->run.iterations,
                                       pv_policy_version(s->policy), b, t, &up, &s->run)))
            return err;
        if (c->learner.eval_every > 0 && s->step % (uint64_t)c->learner.eval_every == 0 &&
            (err = s_eval(s, em)))
            return err;
        if (c->learner.health_every > 0 && s->step % (uint64_t)c->learner.health_every == 0)
            s_health(s, 1);
        if (c->learner.checkpoint_every > 0 &&
            s->step % (uint64_t)c->learner.checkpoint_every == 0 && (err = s_checkpoint(s, em)))
            return err;
    }
    if (c->learner.eval_every > 0 && s->step % (uint64_t)c->learner.eval_every != 0 &&
        (err = s_eval(s, em)))
        return err;
    bool just_saved = c->learner.checkpoint_every > 0 && s->step > 0 &&
                      s->step % (uint64_t)c->learner.checkpoint_every == 0;
    if (!just_saved && (err = s_checkpoint(s, em)))
        return err;
    s_health(s, signalled ? 1 : 3);
    return s_summary(s, em);
}

/* pv_role_main's run: the training loop, its error logged, the exit status returned. */
static int s_run_status(void *self)
{
    s_learner_t *s = self;
    pv_errmsg_t em = {{0}};
    pv_err_t err = s_run(s, &em);
    if (err == PV_OK)
        return 0;
    PV_LOG_ERROR("%s", em.text[0] ? em.text : pv_strerror(err));
    /* bad input (a checkpoint, the config) is 2 at start-up; once training, a failure is 1 */
    return s->training ? 1 : pv_role_exit_status(err);
}

int main(int argc, char **argv)
{
    static s_learner_t s;
    static const pv_role_main_t m = {.prog = "prover-learner",
                                     .role = PV_ROLE_LEARNER,
                                     .usage = s_usage,
                                     .setup = s_setup,
                                     .run = s_run_status,
                                     .teardown = s_teardown};
    return pv_role_main(&m, &s.rc, &s, argc, argv);
}
