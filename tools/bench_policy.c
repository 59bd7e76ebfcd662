/* bench_policy.c - prover-bench-policy: throughput of the bow_mlp policy on one core.
 *
 *   prover-bench-policy [n_cands=30] [history_steps=50] [seconds=1.0]
 *   prover-bench-policy transformer ...   the transformer (tools/bench_transformer.h)
 *   prover-bench-policy group ...         a group's episodes one by one or in lockstep
 *                                         (tools/bench_group.h)
 *
 * Builds an ALFWorld-like context (a task, `history_steps` observation/action pairs, the
 * current observation) and `n_cands` admissible actions, then measures act() (sampling)
 * decisions per second and forward+backward decisions per second with the default spec.
 * A benchmark, not a test: timing never decides pass/fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/policy/policy.h"
#include "tools/bench_group.h"
#include "tools/bench_transformer.h"

static const char *const s_recs[] = {"cabinet",    "countertop", "drawer", "fridge",
                                     "microwave",  "sinkbasin",  "shelf",  "stoveburner",
                                     "garbagecan", "toaster"};
static const char *const s_objs[] = {"apple", "potato", "mug", "knife", "egg", "bread", "plate"};

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "transformer") == 0)
        return pv_bench_transformer(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "group") == 0)
        return pv_bench_group(argc - 1, argv + 1);
    size_t nc = argc > 1 ? (size_t)atoi(argv[1]) : 30, hs = argc > 2 ? (size_t)atoi(argv[2]) : 50;
    double secs = argc > 3 ? atof(argv[3]) : 1.0;
    if (nc < 1 || nc > 512) {
        fprintf(stderr, "prover-bench-policy: n_cands must be in [1, 512]\n");
        return 2;
    }
    char **cands = calloc(nc, sizeof *cands), **hist = calloc(2 * hs + 1, sizeof *hist);
    for (size_t i = 0; i < nc; i++) {
        cands[i] = malloc(64);
        if (i % 3 == 0)
            snprintf(cands[i], 64, "go to %s %zu", s_recs[i % 10], i / 10 + 1);
        else if (i % 3 == 1)
            snprintf(cands[i], 64, "take %s %zu from %s 1", s_objs[i % 7], i % 4 + 1,
                     s_recs[i % 10]);
        else
            snprintf(cands[i], 64, "open %s %zu", s_recs[i % 10], i % 5 + 1);
    }
    for (size_t k = 0; k < 2 * hs + 1; k++) {
        hist[k] = malloc(200);
        if (k % 2)
            snprintf(hist[k], 200, "go to %s %zu", s_recs[k % 10], k % 7 + 1);
        else
            snprintf(hist[k], 200,
                     "You arrive at %s %zu. On the %s %zu, you see a %s 1, a %s 2, and a %s 3.",
                     s_recs[k % 10], k % 7 + 1, s_recs[k % 10], k % 7 + 1, s_objs[k % 7],
                     s_objs[(k + 1) % 7], s_objs[(k + 2) % 7]);
    }
    pv_policy_spec_t sp = {.kind = "bow_mlp", .seed = 1};
    pv_policy_t *p = NULL;
    pv_policy_work_t *w = NULL;
    pv_errmsg_t em;
    if (pv_policy_new(&sp, &p, &em) != PV_OK || pv_policy_work_new(p, &w) != PV_OK) {
        fprintf(stderr, "prover-bench-policy: %s\n", em.text);
        return 1;
    }
    float *grad = calloc(pv_policy_n_params(p), sizeof *grad);
    pv_policy_ctx_t ctx = {"put a clean potato in fridge.", (const char *const *)hist, 2 * hs + 1};
    pv_rng_t rng;
    pv_rng_seed(&rng, 1, 1);
    pv_policy_step_t st;
    size_t n = 0;
    double t0 = pv_mono_s(), t = t0;
    while (t - t0 < secs) {
        for (int k = 0; k < 100; k++, n++)
            pv_policy_act(p, &ctx, (const char *const *)cands, nc, &rng, w, &st);
        t = pv_mono_s();
    }
    double act_rate = (double)n / (t - t0);
    n = 0;
    t0 = t = pv_mono_s();
    float g = -0.01f, ge = 0.001f;
    while (t - t0 < secs) {
        for (int k = 0; k < 100; k++, n++) {
            uint32_t tok = (uint32_t)(n % nc);
            float lp, ent;
            pv_policy_forward(p, &ctx, (const char *const *)cands, nc, &tok, 1, w, &lp, &ent);
            pv_policy_backward(p, w, &g, &ge, grad);
        }
        t = pv_mono_s();
    }
    double bwd_rate = (double)n / (t - t0);
    printf("bow_mlp: n_params %zu (buckets %u, D %u, H %u, window %u), %zu candidates, "
           "%zu-step history\n",
           pv_policy_n_params(p), pv_policy_spec(p)->n_buckets, pv_policy_spec(p)->embed_dim,
           pv_policy_spec(p)->hidden_dim, pv_policy_spec(p)->history_window, nc, hs);
    printf("act (sample):       %9.0f decisions/s  (%.1f us each)\n", act_rate, 1e6 / act_rate);
    printf("forward + backward: %9.0f decisions/s  (%.1f us each)\n", bwd_rate, 1e6 / bwd_rate);
    free(grad);
    pv_policy_work_destroy(&w);
    pv_policy_destroy(&p);
    for (size_t i = 0; i < nc; i++)
        free(cands[i]);
    for (size_t k = 0; k < 2 * hs + 1; k++)
        free(hist[k]);
    free(cands);
    free(hist);
    return 0;
}
