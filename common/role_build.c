/* role_build.c - see role_build.h. */
#include "common/role_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/env/searchqa.h"
#include "common/log.h"
#include "common/policy/lm_prompt.h"
#include "common/tokenizer/corpus.h"
#include "common/tokenizer/train.h"

int pv_role_exit_status(pv_err_t err)
{
    return pv_exit_status(err);
}

/* Each line of `text` as a warning. */
static void s_warn_lines(const char *text)
{
    for (const char *w = text; *w;) {
        const char *nl = strchr(w, '\n');
        int len = nl ? (int)(nl - w) : (int)strlen(w);
        PV_LOG_WARN("%.*s", len, w);
        w += len + (nl != NULL);
    }
}

void pv_role_warn_ignored(const pv_config_t *cfg)
{
    char text[4096];
    if (pv_config_ignored(cfg, text, sizeof text))
        s_warn_lines(text);
}

pv_err_t pv_role_env_new(const pv_config_t *cfg, pv_env_model_t **model, pv_env_t **env,
                         pv_errmsg_t *em)
{
    pv_env_spec_t spec;
    pv_role_env_spec(cfg, &spec);
    pv_errmsg_t inner = {{0}};
    *model = NULL;
    *env = NULL;
    pv_err_t rc = pv_env_model_new(&spec, model, &inner);
    if (rc != PV_OK)
        return pv_errf(em, rc, "env.name=%s env.data_path='%s': %s", cfg->env.name,
                       cfg->env.data_path, inner.text[0] ? inner.text : pv_strerror(rc));
    pv_env_info_t info; /* the environment library prints nothing itself */
    pv_env_model_info(*model, &info);
    if (strchr(info.summary, ':')) { /* the environment's own line */
        PV_LOG_INFO("%s", info.summary);
    } else { /* only its name: say what was made */
        uint64_t n = pv_env_model_n_tasks(*model, PV_SPLIT_TRAIN);
        char tasks[48];
        if (n == UINT64_MAX)
            snprintf(tasks, sizeof tasks, "generated tasks");
        else
            snprintf(tasks, sizeof tasks, "%llu training tasks", (unsigned long long)n);
        PV_LOG_INFO("%s: %s, at most %u steps an episode", info.summary, tasks,
                    (unsigned)pv_env_model_max_steps(*model));
    }
    s_warn_lines(info.warnings);
    if ((rc = pv_env_new(*model, env)) != PV_OK) {
        pv_env_model_destroy(model);
        return pv_errf(em, rc, "environment instance: %s", pv_strerror(rc));
    }
    return PV_OK;
}

static pv_err_t s_add_text(void *tr, pv_tok_text_kind_t kind, const char *text, size_t len)
{
    (void)kind;
    return pv_bpe_trainer_add(tr, text, len);
}

pv_err_t pv_role_vocabulary(const pv_config_t *cfg, char **json, size_t *len, pv_errmsg_t *em)
{
    *json = NULL;
    if (cfg->policy.tokenizer[0]) {
        FILE *f = fopen(cfg->policy.tokenizer, "rb");
        long n = -1;
        if (f && fseek(f, 0, SEEK_END) == 0)
            n = ftell(f);
        char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
        bool ok = buf && fseek(f, 0, SEEK_SET) == 0 && fread(buf, 1, (size_t)n, f) == (size_t)n;
        if (f)
            fclose(f);
        if (!ok) {
            free(buf);
            return pv_errf(em, PV_ERR_IO, "policy.tokenizer=%s: cannot read it",
                           cfg->policy.tokenizer);
        }
        buf[n] = '\0';
        *json = buf;
        *len = (size_t)n;
        return PV_OK;
    }
    pv_bpe_trainer_t *tr = NULL;
    pv_err_t rc = pv_bpe_trainer_new(PV_PRETOK_QWEN2, &tr);
    pv_tok_corpus_opts_t co = {.data_dir = NULL, .episodes = 200, .seed = 0, .expert_p = -1};
    if (rc == PV_OK)
        rc = pv_tok_corpus_env(cfg->env.name, &co, s_add_text, tr, em);
    pv_lmp_env_t env = PV_LMP_ALFWORLD;
    pv_lmp_env_parse(cfg->env.name, &env);
    size_t nf = 0;
    const char *const *fixed = pv_lmp_fixed_texts(env, &nf);
    char sr1[4096];
    pv_sbuf_t b;
    pv_sbuf_init(&b, sr1, sizeof sr1);
    if (env == PV_LMP_SEARCHQA)
        pv_searchr1_prompt(&b, "");
    for (int e = 0; rc == PV_OK && e < 200; e++) { /* as often as the episodes use them */
        for (size_t i = 0; rc == PV_OK && i < nf; i++)
            rc = pv_bpe_trainer_add(tr, fixed[i], strlen(fixed[i]));
        if (rc == PV_OK && b.len)
            rc = pv_bpe_trainer_add(tr, b.p, b.len);
    }
    pv_bpe_train_opts_t to = {.vocab_size = (uint32_t)cfg->policy.vocab_size};
    if (rc == PV_OK)
        rc = pv_bpe_trainer_train(tr, &to, json, len, NULL, em);
    pv_bpe_trainer_destroy(&tr);
    if (rc != PV_OK)
        return pv_errf(em, rc, "learning the vocabulary of env.name=%s: %s", cfg->env.name,
                       em && em->text[0] ? em->text : pv_strerror(rc));
    return PV_OK;
}

pv_err_t pv_role_policy_make(const pv_config_t *cfg, pv_policy_t **policy, pv_errmsg_t *em)
{
    pv_policy_spec_t spec;
    pv_role_policy_spec(cfg, &spec);
    pv_errmsg_t inner = {{0}};
    *policy = NULL;
    char *vocab = NULL;
    size_t vlen = 0;
    pv_err_t rc = PV_OK;
    if (strcmp(cfg->policy.kind, "transformer") == 0 && !cfg->policy.path[0]) {
        if ((rc = pv_role_vocabulary(cfg, &vocab, &vlen, &inner)) != PV_OK)
            return pv_errf(em, rc, "policy.kind=transformer: %s", inner.text);
        spec.tokenizer_json = vocab;
        spec.tokenizer_json_len = vlen;
    }
    rc = pv_policy_new(&spec, policy, &inner);
    free(vocab);
    if (rc != PV_OK)
        return pv_errf(em, rc, "policy.kind=%s%s%s (policy.*): %s", cfg->policy.kind,
                       cfg->policy.path[0] ? " policy.path=" : "", cfg->policy.path,
                       inner.text[0] ? inner.text : pv_strerror(rc));
    return PV_OK;
}

pv_err_t pv_role_policy_new(const pv_config_t *cfg, pv_policy_t **policy, pv_policy_work_t **work,
                            pv_errmsg_t *em)
{
    *work = NULL;
    pv_err_t rc = pv_role_policy_make(cfg, policy, em);
    if (rc != PV_OK)
        return rc;
    if ((rc = pv_policy_work_new(*policy, work)) != PV_OK) {
        pv_policy_destroy(policy);
        return pv_errf(em, rc, "policy work area: %s", pv_strerror(rc));
    }
    return PV_OK;
}

pv_err_t pv_role_broker_err(pv_err_t err, pv_errmsg_t *em)
{
    if (err != PV_ERR_INVAL)
        return err;
    char detail[PV_ERRMSG_MAX];
    snprintf(detail, sizeof detail, "%s", em && em->text[0] ? em->text : pv_strerror(err));
    return pv_errf(em, PV_ERR_CONFIG, "broker.endpoint: %s", detail);
}

pv_err_t pv_role_kit_new(pv_role_ctx_t *rc, pv_role_kit_t *kit, pv_errmsg_t *em)
{
    memset(kit, 0, sizeof *kit);
    pv_err_t err = pv_role_env_new(&rc->cfg, &kit->model, &kit->env, em);
    if (err == PV_OK)
        err = pv_role_policy_new(&rc->cfg, &kit->policy, &kit->work, em);
    if (err == PV_OK)
        err = pv_role_broker_err(pv_weights_in_new(rc, kit->policy, &kit->weights, em), em);
    return err;
}

void pv_role_kit_free(pv_role_kit_t *kit)
{
    pv_weights_in_destroy(&kit->weights);
    pv_policy_work_destroy(&kit->work);
    pv_policy_destroy(&kit->policy);
    pv_env_destroy(&kit->env);
    pv_env_model_destroy(&kit->model);
}

int pv_role_main(const pv_role_main_t *m, pv_role_ctx_t *rc, void *self, int argc, char **argv)
{
    pv_errmsg_t em = {{0}};
    pv_err_t err = pv_role_start(rc, m->role, argc, argv, m->usage, m->sighup, &em);
    if (err == PV_ERR_INTERRUPTED) /* --help */
        return 0;
    if (err != PV_OK) {
        fprintf(stderr, "%s: %s\n", m->prog, em.text[0] ? em.text : pv_strerror(err));
        return err == PV_ERR_MPI ? 1 : 2;
    }
    int status;
    if ((err = m->setup(self, &em)) != PV_OK) {
        PV_LOG_ERROR("start-up: %s", em.text[0] ? em.text : pv_strerror(err));
        status = pv_role_exit_status(err);
    } else {
        status = m->run(self);
    }
    pv_world_stop_t why = pv_world_stop_reason(&rc->world);
    if (why != PV_WORLD_STOP_NONE && why != PV_WORLD_STOP_DONE && status == 0) {
        PV_LOG_ERROR("%s", pv_world_stop_text(why)); /* a failed run said so already */
        status = 1;
    }
    m->teardown(self);
    pv_net_destroy(&rc->net); /* every socket of the process is closed by now */
    pv_world_finalize(&rc->world, 5, status);
    return status;
}
