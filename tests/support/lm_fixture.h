/* lm_fixture.h - a tiny language-model policy for the tests (header-only): a vocabulary
 * learnt from a few generated ALFWorld episodes (as pv_role_vocabulary does, smaller) and a
 * 2-layer Qwen3-family transformer of hidden size 64. Link pv_policy and pv_tokenizer_env. */
#ifndef PV_TEST_LM_FIXTURE_H
#define PV_TEST_LM_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/policy/policy.h"
#include "common/tokenizer/corpus.h"
#include "common/tokenizer/train.h"

static pv_err_t lm_fixture_add(void *tr, pv_tok_text_kind_t kind, const char *text, size_t len)
{
    (void)kind;
    return pv_bpe_trainer_add(tr, text, len);
}

/* tokenizer.json text of a 512-id vocabulary from 30 ALFWorld episodes (malloc'd). */
static inline char *lm_fixture_vocab(size_t *len)
{
    pv_bpe_trainer_t *tr = NULL;
    char *json = NULL;
    pv_tok_corpus_opts_t co = {.episodes = 30, .seed = 0, .expert_p = -1};
    pv_bpe_train_opts_t to = {.vocab_size = 512};
    if (pv_bpe_trainer_new(PV_PRETOK_QWEN2, &tr) != PV_OK ||
        pv_tok_corpus_env("alfworld", &co, lm_fixture_add, tr, NULL) != PV_OK ||
        pv_bpe_trainer_train(tr, &to, &json, len, NULL, NULL) != PV_OK)
        json = NULL;
    pv_bpe_trainer_destroy(&tr);
    return json;
}

/* The tiny model's spec (vocabulary borrowed from json). */
static inline pv_policy_spec_t lm_fixture_spec(const char *json, size_t len, uint64_t seed)
{
    return (pv_policy_spec_t){.kind = "transformer",
                              .tokenizer_json = json,
                              .tokenizer_json_len = len,
                              .env = "alfworld",
                              .seed = seed,
                              .max_new_tokens = 12,
                              .prompt_window = 2,
                              .max_context = 512,
                              .layers = 2,
                              .hidden = 64,
                              .heads = 4,
                              .kv_heads = 2,
                              .head_dim = 16,
                              .intermediate = 128};
}

/* A history of an ALFWorld-like episode: o_0, a_0, ..., o_5. */
static const char *const lm_fixture_hist[] = {
    "-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly "
    "around you, you see a cabinet 1, a countertop 1, a fridge 1, a sinkbasin 1.\n\nYour task is "
    "to: put a clean potato in fridge.",
    "go to countertop 1",
    "You arrive at countertop 1. On the countertop 1, you see a potato 1, a mug 2.",
    "take potato 1 from countertop 1",
    "You pick up the potato 1 from the countertop 1.",
    "go to sinkbasin 1",
    "You arrive at sinkbasin 1. On the sinkbasin 1, you see nothing.",
    "clean potato 1 with sinkbasin 1",
    "You clean the potato 1 using the sinkbasin 1.",
    "go to fridge 1",
    "You arrive at fridge 1. The fridge 1 is closed.",
};
#define LM_FIXTURE_TASK "put a clean potato in fridge."

static const char *const lm_fixture_cands[] = {
    "go to fridge 1", "open fridge 1", "go to cabinet 1", "examine potato 1", "look", "inventory",
};

/* The fixture's context at step t: the task and lm_fixture_hist up to o_t. */
static inline pv_policy_ctx_t lm_fixture_ctx(size_t t)
{
    return (pv_policy_ctx_t){LM_FIXTURE_TASK, lm_fixture_hist, 2 * t + 1};
}

/* The fixture's vocabulary (*json, *len) and a policy of lm_fixture_spec(seed) at
 * temperature 0.9 with `decode` and max_new_tokens (0 = the spec's 12), and a work for it;
 * -1 (the error on stderr) on failure. */
static inline int lm_fixture_setup(uint64_t seed, pv_policy_decode_t decode, uint32_t max_new,
                                   char **json, size_t *len, pv_policy_t **p, pv_policy_work_t **w)
{
    if (!(*json = lm_fixture_vocab(len)))
        return -1;
    pv_policy_spec_t sp = lm_fixture_spec(*json, *len, seed);
    sp.temperature = 0.9f;
    sp.decode = decode;
    if (max_new)
        sp.max_new_tokens = max_new;
    pv_errmsg_t em = {{0}};
    if (pv_policy_new(&sp, p, &em) != PV_OK || pv_policy_work_new(*p, w) != PV_OK) {
        fprintf(stderr, "lm fixture: %s\n", em.text);
        return -1;
    }
    return 0;
}

/* A test group's state: the vocabulary, the policy and its work (lm_fixture_setup). */
typedef struct lm_fixture {
    char *json;
    size_t len;
    pv_policy_t *p;
    pv_policy_work_t *w;
} lm_fixture_t;

/* cmocka group teardown of a state that is (or starts with) an lm_fixture_t: destroys what
 * lm_fixture_setup made (NULL-safe). */
static inline int lm_fixture_teardown(void **state)
{
    lm_fixture_t *f = *state;
    pv_policy_work_destroy(&f->w);
    pv_policy_destroy(&f->p);
    free(f->json);
    f->json = NULL;
    return 0;
}

#endif
