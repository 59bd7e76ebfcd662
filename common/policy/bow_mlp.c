/* bow_mlp.c - the first policy kind: hashed word / bigram features -> embeddings -> a small
 * MLP -> one score per admissible action -> softmax (DESIGN.md section 4).
 *
 * With D = embed_dim, H = hidden_dim, W = history_window, E the (n_buckets, D) embedding
 * table and mean_E[ids] the mean of the rows of a feature list (0 for an empty list):
 *   context, once per decision:
 *     e_T = mean_E[task unigrams + bigrams]
 *     e_O = mean_E[current observation unigrams + bigrams]
 *     e_H = mean_E[unigrams of the W history entries before the current observation,
 *                  action and observation entries tagged apart]
 *     c   = [e_T, e_O, e_H]                                                   (3D)
 *   candidate j:
 *     u_C = mean_E[its unigrams, bigrams and first word ("verb"); the words of the row of
 *           the observation it names (below), tagged apart]
 *     u_X = mean_E[cross features: verb x number of its content words (not digits, not
 *           stop words) found in the task / the current observation / the actions of the
 *           window (each capped at 3); verb x number of its object instances ("cabinet 6":
 *           a word followed by a number) found in the current observation / the window's
 *           actions; verb x "the verb occurs in the task" (heat, clean, cool...); verb x
 *           how often this exact action was already taken in the WHOLE history (capped at
 *           3); verb x "equals the previous action"; and for a candidate that names a row
 *           of the observation - its argument is a " [SEP] "-separated field, as a WebShop
 *           result's product id, followed by the row's title and "$price" - verb x the
 *           number of the title's content words found in the task (capped at 7), verb x
 *           the price against the task's "lower than N" bound (none / within / above)]
 *     x_j = [u_C, u_X, e_T * u_C, e_H * u_C]                                   (4D)
 *     z_j = W1 [c; x_j] + b1 (H),  s_j = w2 . relu(z_j) / T   (T = spec.temperature)
 *   a task that is a question (qa_feat.h: it ends with '?' or starts with a wh-word, as
 *   SearchQA's do; ALFWorld's and WebShop's synthetic instructions never are, about 0.5% of
 *   WebShop's human instructions are), instead: the candidate's question features
 *     q_j = verb x the question's fine class (wh-word + next word) x the shape of the
 *           candidate's argument (yes/no, year, number, date, name, phrase); verb x coarse
 *           class x shape; verb x class x "the question offers alternatives (or)" x how
 *           many of its content words the question holds (no content words / none / some /
 *           all); verb x its whole-word mentions in the current observation (0-3) x in the
 *           window's earlier observations (0-3); verb x where the first mention is (quarter
 *           of the observation, or none); verb x "a document title in the current / an
 *           earlier observation" x "it is the question itself"; verb x turn (0-4) x class;
 *           verb x shape x number of words (1-4); and around its mentions (qa_feat.h,
 *           S_QA_WINDOW = 10 words each side, within a passage): verb x class x the most
 *           question content words around a mention in the current observation (0-6);
 *           verb x their share of the question's content words (quarters) x "mentioned in
 *           the current observation"; verb x the same count in the window's earlier
 *           observations (0-6) x in the current one (0-6); verb x class x "the question
 *           offers alternatives" x "the candidate occurs in the question" (answers rarely
 *           repeat the question, except the alternatives of a choice); verb ^ the word
 *           before its first mention x class; verb ^ the word after it x class ("duo Love
 *           and Theft", "born in Glendale", "directed by X")             (14 ids)
 *     s_j = sum_k wide[q_jk] / T   - a linear scorer on hashed features. The MLP is not
 *   used for questions: on the HotpotQA sample (80 training questions, 58 of them with an
 *   admissible demonstration) it memorises the questions' names and passages. Behaviour
 *   cloning of those 58, seeds 1-3: step accuracy on the training demonstrations 0.96 with
 *   the MLP against 0.43 linear, on the 14 held-out ones 0.25-0.28 against 0.28, held-out
 *   exact match 0.05 against 0.10. The mention-window and neighbour-word features (the
 *   last six ids) raised training step accuracy from 0.49 to 0.77 and held-out exact match
 *   after 200 ProVer iterations from 0.10 to 0.15 on seeds 1-3 (docs/benchmarks.md, "SearchQA").
 *   p = softmax(s); entropy = -sum p log p.
 * Tensors: embed (n_buckets, D), w1 (H, 7D), b1 (H), w2 (H), wide (n_buckets). The context
 * half of W1 c + b1 is computed once per decision, so a candidate costs about 8 D H
 * multiply-adds (a question's: 14 additions after its features).
 * Initialisation: embed ~ N(0, 1) (torch.nn.Embedding), w1, b1 ~ U(+-1/sqrt(7D)) and
 * w2 ~ U(+-1/sqrt(H)) (torch.nn.Linear), from a PCG32 stream seeded with spec.seed; wide = 0
 * (a question starts from the uniform distribution; the other tensors draw the same numbers
 * as before wide existed).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/policy/featurize.h"
#include "common/policy/nn.h"
#include "common/policy/qa_feat.h"
#include "common/policy/policy_impl.h"

#define S_TASK_WORDS 64
#define S_OBS_WORDS  256
#define S_HIST_WORDS 128 /* per history entry */
#define S_CAND_WORDS 32
#define S_ROW_WORDS  48 /* words of the observation row a candidate names (its title) */
#define S_CAND_IDS   (2 * S_CAND_WORDS + 1 + S_ROW_WORDS) /* unigrams + bigrams + verb + row */
#define S_QA_IDS     14
#define S_X_IDS      (10 + S_QA_IDS) /* 8 cross ids, 2 for a row, 14 for a question */
#define S_QA_WORDS   32              /* content words of a question kept (pv_qa_content_words) */
#define S_QA_WINDOW  10              /* words on each side of a mention (pv_qa_window_overlap) */
#define S_MAX_WINDOW 64

/* feature tags (field x type) */
enum {
    S_TAG_T1 = 0x101,
    S_TAG_T2,
    S_TAG_O1,
    S_TAG_O2,
    S_TAG_HA,
    S_TAG_HO,
    S_TAG_C1,
    S_TAG_C2,
    S_TAG_CV,
    S_TAG_XT,
    S_TAG_XO,
    S_TAG_XH,
    S_TAG_REP,
    S_TAG_LAST,
    S_TAG_XOB,
    S_TAG_XHB,
    S_TAG_XTV,
    S_TAG_XRT,
    S_TAG_XRP,
    S_TAG_CR,
    S_TAG_QS,
    S_TAG_QC,
    S_TAG_QO,
    S_TAG_QM,
    S_TAG_QP,
    S_TAG_QT,
    S_TAG_QN,
    S_TAG_QW,
    S_TAG_QV,
    S_TAG_QF,
    S_TAG_QH,
    S_TAG_QI,
    S_TAG_QL,
    S_TAG_QR,
};

static const char *const s_stop[] = {"a",    "an", "the",  "to",   "from", "in", "on",
                                     "with", "at", "into", "onto", "of",   "and"};
#define S_N_STOP (sizeof s_stop / sizeof s_stop[0])

typedef struct s_work {
    size_t D, H, max_cands, window;
    uint64_t stop[S_N_STOP];
    pv_word_t words[S_OBS_WORDS]; /* tokenizer scratch */
    /* context */
    uint32_t *ctx_ids; /* T ids, then O ids, then H ids */
    size_t n_t, n_o, n_h;
    uint64_t tset[2 * S_TASK_WORDS], oset[2 * S_OBS_WORDS], *hset; /* words + bigrams */
    double price_bound;      /* the task's "lower than N" (s_price_bound), NAN when it has none */
    pv_qa_question_t qa;     /* the task as a question (qa_feat.h) */
    uint64_t qw[S_QA_WORDS]; /* its content words (pv_qa_content_words) */
    size_t n_qw;
    size_t n_tset, n_oset, n_hset;
    float *ctx; /* (3D) */
    float *pre; /* (H) b1 + W1[:, :3D] c */
    /* candidates */
    uint32_t *cand_ids; /* (max_cands, S_CAND_IDS + S_X_IDS) */
    uint8_t *n_c, *n_x; /* (max_cands) */
    float *xc;          /* (max_cands, 4D) */
    float *z;           /* (max_cands, H) */
    float *s, *logp;    /* (max_cands) */
    size_t n;
    float entropy;
    int cached;    /* a forward is cached */
    size_t chosen; /* token of the cached forward, or SIZE_MAX */
    /* backward scratch */
    float *dctx, *dzsum, *dz, *dh, *dxc, *ds;
    uint32_t token;
    float token_logp;
} s_work_t;

/* tensor indices in the table */
enum { S_EMBED = 0, S_W1, S_B1, S_W2, S_WIDE, S_N_TENSORS };

static pv_err_t s_resolve(pv_policy_spec_t *sp, pv_errmsg_t *em)
{
    if (!sp->n_buckets)
        sp->n_buckets = 1u << 15;
    if (!sp->embed_dim)
        sp->embed_dim = 32;
    if (!sp->hidden_dim)
        sp->hidden_dim = 64;
    if (!sp->history_window)
        sp->history_window = 8;
    if (!sp->max_cands)
        sp->max_cands = 512;
    if (sp->n_buckets < 16 || sp->n_buckets > (1u << 24))
        return pv_errf(em, PV_ERR_INVAL, "bow_mlp: n_buckets must be in [16, 2^24], got %u",
                       sp->n_buckets);
    if (sp->embed_dim > 1024 || sp->hidden_dim > 4096)
        return pv_errf(em, PV_ERR_INVAL, "bow_mlp: embed_dim <= 1024 and hidden_dim <= 4096");
    if (sp->history_window > S_MAX_WINDOW)
        return pv_errf(em, PV_ERR_INVAL, "bow_mlp: history_window must be <= %d, got %u",
                       S_MAX_WINDOW, sp->history_window);
    if (sp->max_cands > 65536)
        return pv_errf(em, PV_ERR_INVAL, "bow_mlp: max_cands must be <= 65536");
    return PV_OK;
}

static void s_tensors(const pv_policy_spec_t *sp, pv_policy_tensor_t *t, size_t *n)
{
    uint64_t D = sp->embed_dim, H = sp->hidden_dim;
    t[S_EMBED] = (pv_policy_tensor_t){.name = "embed", .ndim = 2, .shape = {sp->n_buckets, D}};
    t[S_W1] = (pv_policy_tensor_t){.name = "w1", .ndim = 2, .shape = {H, 7 * D}};
    t[S_B1] = (pv_policy_tensor_t){.name = "b1", .ndim = 1, .shape = {H}};
    t[S_W2] = (pv_policy_tensor_t){.name = "w2", .ndim = 1, .shape = {H}};
    t[S_WIDE] = (pv_policy_tensor_t){.name = "wide", .ndim = 1, .shape = {sp->n_buckets}};
    *n = S_N_TENSORS;
}

static void s_init(pv_policy_t *p)
{
    pv_rng_t rng;
    pv_rng_seed(&rng, p->spec.seed, 0x686173686d6c70ULL /* "hashmlp" */);
    const pv_policy_tensor_t *t = p->table;
    float *e = p->params + t[S_EMBED].offset;
    for (size_t i = 0; i < t[S_EMBED].numel; i++)
        e[i] = (float)pv_rng_normal(&rng);
    float b = 1.0f / sqrtf((float)t[S_W1].shape[1]);
    for (int k = S_W1; k <= S_B1; k++)
        for (size_t i = 0; i < t[k].numel; i++)
            p->params[t[k].offset + i] = (2.0f * pv_rng_uniformf(&rng) - 1.0f) * b;
    b = 1.0f / sqrtf((float)p->spec.hidden_dim);
    for (size_t i = 0; i < t[S_W2].numel; i++)
        p->params[t[S_W2].offset + i] = (2.0f * pv_rng_uniformf(&rng) - 1.0f) * b;
    memset(p->params + t[S_WIDE].offset, 0, t[S_WIDE].numel * sizeof(float));
}

static void s_work_destroy(void *w_)
{
    s_work_t *w = w_;
    if (!w)
        return;
    free(w->ctx_ids);
    free(w->hset);
    free(w->ctx);
    free(w->cand_ids);
    free(w->n_c);
    free(w);
}

static pv_err_t s_work_new(const pv_policy_t *p, void **out)
{
    const pv_policy_spec_t *sp = &p->spec;
    s_work_t *w = calloc(1, sizeof *w);
    if (!w)
        return PV_ERR_NOMEM;
    size_t D = w->D = sp->embed_dim, H = w->H = sp->hidden_dim, C = w->max_cands = sp->max_cands;
    size_t W = w->window = sp->history_window;
    w->ctx_ids = malloc((2 * S_TASK_WORDS + 2 * S_OBS_WORDS + W * S_HIST_WORDS) * sizeof(uint32_t));
    w->hset = malloc((2 * W * S_HIST_WORDS + 1) * sizeof(uint64_t));
    /* floats: ctx 3D, pre H, dctx 3D, dzsum H, dz H, dh H, dxc 4D, then per candidate
     * xc 4D, z H, s, logp, ds */
    w->ctx = malloc((10 * D + 4 * H + C * (4 * D + H + 3)) * sizeof(float));
    w->cand_ids = malloc(C * (S_CAND_IDS + S_X_IDS) * sizeof(uint32_t));
    w->n_c = malloc(2 * C);
    if (!w->ctx_ids || !w->hset || !w->ctx || !w->cand_ids || !w->n_c) {
        s_work_destroy(w);
        return PV_ERR_NOMEM;
    }
    w->n_x = w->n_c + C;
    w->pre = w->ctx + 3 * D;
    w->dctx = w->pre + H;
    w->dzsum = w->dctx + 3 * D;
    w->dz = w->dzsum + H;
    w->dh = w->dz + H;
    w->dxc = w->dh + H;
    w->xc = w->dxc + 4 * D;
    w->z = w->xc + C * 4 * D;
    w->s = w->z + C * H;
    w->logp = w->s + C;
    w->ds = w->logp + C;
    for (size_t i = 0; i < S_N_STOP; i++)
        w->stop[i] = pv_feat_hash(s_stop[i], strlen(s_stop[i]));
    w->chosen = SIZE_MAX;
    *out = w;
    return PV_OK;
}

static bool s_in(const uint64_t *set, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == h)
            return true;
    return false;
}

/* A word pair's hash for the context sets ("cabinet 6" as one unit). */
static uint64_t s_pair(uint64_t a, uint64_t b)
{
    return (a * 0x9e3779b97f4a7c15ULL) ^ b;
}

/* Append unigram (and bigram when tag2 != 0) ids of `words` to ids; optionally record the
 * word hashes in set. Returns the number of ids added. */
static size_t s_ngrams(const pv_word_t *words, size_t nw, uint64_t tag1, uint64_t tag2, uint32_t nb,
                       uint32_t *ids, uint64_t *set, size_t *n_set)
{
    size_t n = 0;
    for (size_t i = 0; i < nw; i++) {
        ids[n++] = pv_feat_id(tag1, words[i].h, 0, nb);
        if (tag2 && i + 1 < nw)
            ids[n++] = pv_feat_id(tag2, words[i].h, words[i + 1].h, nb);
        if (set) {
            set[(*n_set)++] = words[i].h;
            if (i + 1 < nw)
                set[(*n_set)++] = s_pair(words[i].h, words[i + 1].h);
        }
    }
    return n;
}

/* The task's price bound: the number after "lower than " (WebShop's instructions end "and
 * price lower than 50.00 dollars"), or NAN. */
static double s_price_bound(const char *task)
{
    const char *k = task ? strstr(task, "lower than ") : NULL;
    if (!k)
        return NAN;
    char *end;
    double v = strtod(k + 11, &end);
    return end == k + 11 ? NAN : v;
}

static void s_context(const pv_policy_t *p, s_work_t *w, const pv_policy_ctx_t *ctx)
{
    uint32_t nb = p->spec.n_buckets;
    size_t D = w->D, nh = ctx->n_history;
    const float *E = p->params + p->table[S_EMBED].offset;
    size_t nw = pv_feat_words(ctx->task_text, w->words, S_TASK_WORDS);
    w->n_tset = 0;
    w->n_t = s_ngrams(w->words, nw, S_TAG_T1, S_TAG_T2, nb, w->ctx_ids, w->tset, &w->n_tset);
    w->price_bound = s_price_bound(ctx->task_text); /* once per decision, for every row */
    pv_qa_question(ctx->task_text, &w->qa);
    w->n_qw = w->qa.is_question ? pv_qa_content_words(ctx->task_text, w->qw, S_QA_WORDS) : 0;
    nw = pv_feat_words(ctx->history[nh - 1], w->words, S_OBS_WORDS);
    w->n_oset = 0;
    w->n_o =
        s_ngrams(w->words, nw, S_TAG_O1, S_TAG_O2, nb, w->ctx_ids + w->n_t, w->oset, &w->n_oset);
    uint32_t *hid = w->ctx_ids + w->n_t + w->n_o;
    w->n_h = w->n_hset = 0;
    for (size_t k = 1; k <= p->spec.history_window && k < nh; k++) {
        bool action = k % 2 == 1; /* history[nh-1] is an observation, entries alternate */
        nw = pv_feat_words(ctx->history[nh - 1 - k], w->words, S_HIST_WORDS);
        w->n_h += s_ngrams(w->words, nw, action ? S_TAG_HA : S_TAG_HO, 0, nb, hid + w->n_h,
                           action ? w->hset : NULL, &w->n_hset);
    }
    pv_nn_embed_mean_fwd(w->ctx, E, w->ctx_ids, w->n_t, D);
    pv_nn_embed_mean_fwd(w->ctx + D, E, w->ctx_ids + w->n_t, w->n_o, D);
    pv_nn_embed_mean_fwd(w->ctx + 2 * D, E, hid, w->n_h, D);
    const float *W1 = p->params + p->table[S_W1].offset, *b1 = p->params + p->table[S_B1].offset;
    pv_nn_linear_fwd(w->pre, W1, 7 * D, b1, w->ctx, w->H, 3 * D);
}

/* The row of the observation a candidate names: for "verb[ARG]" whose ARG is a field of
 * `obs` (fields separated by " [SEP] ", compared without case), the next field (the title)
 * into title (NUL-terminated, cut to cap - 1) and the number after a "$" in the field after
 * it into *price (NAN when absent). False when the candidate names no field. */
static bool s_row(const char *obs, const char *cand, char *title, size_t cap, double *price)
{
    const char *lb = strchr(cand, '['), *rb = strrchr(cand, ']');
    if (!lb || !rb || rb <= lb + 1)
        return false;
    size_t alen = (size_t)(rb - lb - 1);
    static const char sep[] = " [SEP] ";
    const size_t sl = sizeof sep - 1;
    for (const char *f = obs; f;) {
        const char *end = strstr(f, sep);
        size_t flen = end ? (size_t)(end - f) : strlen(f);
        if (flen == alen && strncasecmp(f, lb + 1, alen) == 0 && end) {
            const char *t = end + sl, *tend = strstr(t, sep);
            size_t tl = tend ? (size_t)(tend - t) : strlen(t);
            if (tl >= cap)
                tl = cap - 1;
            memcpy(title, t, tl);
            title[tl] = '\0';
            *price = NAN;
            if (tend && tend[sl] == '$')
                *price = strtod(tend + sl + 1, NULL);
            return true;
        }
        f = end ? end + sl : NULL;
    }
    return false;
}

static uint64_t s_cap(size_t v, size_t cap)
{
    return v < cap ? v : cap;
}

/* The question-answering cross features of a candidate when the task is a question (the
 * header's u_X list, qa_feat.h): 8 ids into x. `content` / `in_task` count the candidate's
 * content words and those found in the task. */
static size_t s_qa_features(const s_work_t *w, const pv_policy_ctx_t *ctx, const char *cand,
                            uint64_t verb, uint64_t content, uint64_t in_task, uint32_t *x,
                            uint32_t nb)
{
    const pv_qa_question_t *q = &w->qa;
    const char *arg = strchr(cand, '['), *rb = strrchr(cand, ']');
    size_t n;
    if (arg && rb && rb > arg) {
        n = (size_t)(rb - ++arg);
    } else { /* no brackets: the words after the first */
        arg = cand + strcspn(cand, " ");
        arg += *arg == ' ';
        n = strlen(arg);
    }
    size_t words, first = SIZE_MAX;
    pv_qa_shape_t shape = pv_qa_shape(arg, n, &words);
    /* mentions in the current observation (where the first one is) and in the window's
     * earlier observations; as a document title there; is it the task itself? */
    size_t nh = ctx->n_history, hist = 0, win_hist = 0;
    const char *obs = nh ? ctx->history[nh - 1] : "";
    size_t cur = pv_qa_count(obs, arg, n, &first);
    bool title_cur = pv_qa_is_title(obs, arg, n), title_hist = false;
    for (size_t k = 2; k <= w->window && k < nh; k += 2) {
        size_t c = pv_qa_count(ctx->history[nh - 1 - k], arg, n, NULL);
        hist += c;
        title_hist = title_hist || pv_qa_is_title(ctx->history[nh - 1 - k], arg, n);
        if (c) {
            size_t o =
                pv_qa_window_overlap(ctx->history[nh - 1 - k], arg, n, w->qw, w->n_qw, S_QA_WINDOW);
            win_hist = o > win_hist ? o : win_hist;
        }
    }
    /* question words around its mentions: how many, and their share of the question's */
    size_t win = cur ? pv_qa_window_overlap(obs, arg, n, w->qw, w->n_qw, S_QA_WINDOW) : 0;
    uint64_t share = w->n_qw ? (uint64_t)(4 * win / w->n_qw) : 0;
    bool in_question = pv_qa_count(ctx->task_text, arg, n, NULL) > 0;
    size_t len = strlen(obs), pos = first == SIZE_MAX ? 4 : 4 * first / (len ? len : 1);
    bool is_task = strlen(ctx->task_text) == n && strncasecmp(ctx->task_text, arg, n) == 0;
    uint64_t overlap = !content ? 0 : !in_task ? 1 : in_task < content ? 2 : 3;
    uint64_t cls = q->cls, turn = s_cap(nh / 2, 4);
    x[0] = pv_feat_id(S_TAG_QS, verb ^ q->fine, shape, nb);
    x[1] = pv_feat_id(S_TAG_QC, verb, cls * 8 + shape, nb);
    x[2] = pv_feat_id(S_TAG_QO, verb, cls * 16 + (uint64_t)q->choice * 4 + overlap, nb);
    x[3] = pv_feat_id(S_TAG_QM, verb, s_cap(cur, 3) * 4 + s_cap(hist, 3), nb);
    x[4] = pv_feat_id(S_TAG_QP, verb, pos, nb);
    x[5] = pv_feat_id(S_TAG_QT, verb, title_cur * 4u + title_hist * 2u + is_task, nb);
    x[6] = pv_feat_id(S_TAG_QN, verb, turn * 8 + cls, nb);
    x[7] = pv_feat_id(S_TAG_QW, verb, shape * 8u + s_cap(words, 4), nb);
    x[8] = pv_feat_id(S_TAG_QV, verb, cls * 8 + s_cap(win, 6), nb);
    x[9] = pv_feat_id(S_TAG_QF, verb, share * 2 + (cur > 0), nb);
    x[10] = pv_feat_id(S_TAG_QH, verb, s_cap(win_hist, 6) * 8 + s_cap(win, 6), nb);
    x[11] = pv_feat_id(S_TAG_QI, verb, cls * 4 + (uint64_t)q->choice * 2 + in_question, nb);
    uint64_t left = first == SIZE_MAX ? 0 : pv_qa_next_word(obs, first, true);
    uint64_t right = first == SIZE_MAX ? 0 : pv_qa_next_word(obs, first + n, false);
    x[12] = pv_feat_id(S_TAG_QL, verb ^ left, cls, nb);
    x[13] = pv_feat_id(S_TAG_QR, verb ^ right, cls, nb);
    return S_QA_IDS;
}

/* Feature ids of candidate j into w->cand_ids; counts into n_c / n_x. */
static void s_cand_features(const pv_policy_t *p, s_work_t *w, const pv_policy_ctx_t *ctx,
                            const char *cand, size_t j)
{
    uint32_t nb = p->spec.n_buckets;
    uint32_t *ids = w->cand_ids + j * (S_CAND_IDS + S_X_IDS);
    size_t nw = pv_feat_words(cand, w->words, S_CAND_WORDS);
    size_t n = s_ngrams(w->words, nw, S_TAG_C1, S_TAG_C2, nb, ids, NULL, NULL);
    uint64_t verb = nw ? w->words[0].h : 0;
    if (nw)
        ids[n++] = pv_feat_id(S_TAG_CV, verb, 0, nb);
    /* the row the candidate names: its title's words join the candidate's (so e_T * u_C can
     * match them with the task's), their overlap with the task and the price are counted */
    char title[512];
    double price = NAN;
    uint64_t mr = 0, pr = 0;
    bool row = ctx->n_history &&
               s_row(ctx->history[ctx->n_history - 1], cand, title, sizeof title, &price);
    if (row) {
        pv_word_t tw[S_ROW_WORDS];
        size_t ntw = pv_feat_words(title, tw, S_ROW_WORDS);
        for (size_t i = 0; i < ntw; i++) {
            ids[n++] = pv_feat_id(S_TAG_CR, tw[i].h, 0, nb);
            if (!tw[i].digits && !s_in(w->stop, S_N_STOP, tw[i].h))
                mr += s_in(w->tset, w->n_tset, tw[i].h);
        }
        if (!isnan(price) && !isnan(w->price_bound))
            pr = price <= w->price_bound ? 1 : 2;
    }
    w->n_c[j] = (uint8_t)n;
    uint64_t mt = 0, mo = 0, mh = 0, rep = 0, last = 0, mob = 0, mhb = 0, content = 0;
    for (size_t i = 1; i + 1 < nw; i++) { /* object instances: "<word> <number>" pairs */
        if (!w->words[i + 1].digits)
            continue;
        uint64_t pair = s_pair(w->words[i].h, w->words[i + 1].h);
        mob += s_in(w->oset, w->n_oset, pair);
        mhb += s_in(w->hset, w->n_hset, pair);
    }
    for (size_t i = 1; i < nw; i++) {
        if (w->words[i].digits || s_in(w->stop, S_N_STOP, w->words[i].h))
            continue;
        content++;
        mt += s_in(w->tset, w->n_tset, w->words[i].h);
        mo += s_in(w->oset, w->n_oset, w->words[i].h);
        mh += s_in(w->hset, w->n_hset, w->words[i].h);
    }
    size_t nh = ctx->n_history;
    for (size_t k = 1; k < nh; k += 2) /* every earlier action, newest first */
        if (strcmp(ctx->history[nh - 1 - k], cand) == 0) {
            rep++;
            last |= k == 1;
        }
    uint32_t *x = ids + n;
    x[0] = pv_feat_id(S_TAG_XT, verb, mt < 3 ? mt : 3, nb);
    x[1] = pv_feat_id(S_TAG_XO, verb, mo < 3 ? mo : 3, nb);
    x[2] = pv_feat_id(S_TAG_XH, verb, mh < 3 ? mh : 3, nb);
    x[3] = pv_feat_id(S_TAG_REP, verb, rep < 3 ? rep : 3, nb);
    x[4] = pv_feat_id(S_TAG_LAST, verb, last, nb);
    x[5] = pv_feat_id(S_TAG_XOB, verb, mob < 3 ? mob : 3, nb);
    x[6] = pv_feat_id(S_TAG_XHB, verb, mhb < 3 ? mhb : 3, nb);
    x[7] = pv_feat_id(S_TAG_XTV, verb, nw && s_in(w->tset, w->n_tset, verb), nb);
    size_t nx = 8; /* candidates that name no row (ALFWorld's): 8 cross ids */
    if (row) {
        x[nx++] = pv_feat_id(S_TAG_XRT, verb, mr < 7 ? mr : 7, nb);
        x[nx++] = pv_feat_id(S_TAG_XRP, verb, pr, nb);
    }
    if (w->qa.is_question)
        nx += s_qa_features(w, ctx, cand, verb, content, mt, x + nx, nb);
    w->n_x[j] = (uint8_t)nx;
}

/* Forward of the whole decision: scores, log-probs and entropy cached in w. */
static void s_forward(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                      size_t n, s_work_t *w)
{
    size_t D = w->D, H = w->H;
    const float *E = p->params + p->table[S_EMBED].offset;
    const float *W1 = p->params + p->table[S_W1].offset;
    const float *w2 = p->params + p->table[S_W2].offset;
    const float *V = p->params + p->table[S_WIDE].offset;
    const float inv_t = 1.0f / p->spec.temperature;
    s_context(p, w, ctx);
    for (size_t j = 0; j < n; j++) {
        s_cand_features(p, w, ctx, cands[j], j);
        const uint32_t *ids = w->cand_ids + j * (S_CAND_IDS + S_X_IDS);
        if (w->qa.is_question) { /* s_j = v . onehot(question features) / T */
            const uint32_t *q = ids + w->n_c[j] + w->n_x[j] - S_QA_IDS;
            float v = 0.0f;
            for (size_t k = 0; k < S_QA_IDS; k++)
                v += V[q[k]];
            w->s[j] = v * inv_t;
            continue;
        }
        float *x = w->xc + j * 4 * D, *z = w->z + j * H;
        pv_nn_embed_mean_fwd(x, E, ids, w->n_c[j], D);                 /* u_C */
        pv_nn_embed_mean_fwd(x + D, E, ids + w->n_c[j], w->n_x[j], D); /* u_X */
        pv_nn_mul_fwd(x + 2 * D, w->ctx, x, D);                        /* e_T * u_C */
        pv_nn_mul_fwd(x + 3 * D, w->ctx + 2 * D, x, D);                /* e_H * u_C */
        pv_nn_linear_fwd(z, W1 + 3 * D, 7 * D, w->pre, x, H, 4 * D);
        pv_nn_relu_fwd(w->dh, z, H);
        w->s[j] = pv_nn_dot(w2, w->dh, H) * inv_t;
    }
    w->entropy = pv_nn_log_softmax_fwd(w->logp, w->s, n);
    w->n = n;
    w->cached = 1;
    w->chosen = SIZE_MAX;
}

static pv_err_t s_act(const pv_policy_t *p, const pv_policy_ctx_t *ctx, const char *const *cands,
                      size_t n, pv_rng_t *rng, void *w_, pv_policy_step_t *out)
{
    s_work_t *w = w_;
    s_forward(p, ctx, cands, n, w);
    size_t c = 0;
    if (rng) {
        double u = pv_rng_uniform(rng), acc = 0.0;
        c = n - 1; /* rounding: the last candidate takes what is left */
        for (size_t j = 0; j < n; j++) {
            acc += exp((double)w->logp[j]);
            if (u < acc) {
                c = j;
                break;
            }
        }
    } else {
        for (size_t j = 1; j < n; j++)
            if (w->logp[j] > w->logp[c])
                c = j;
    }
    w->chosen = c;
    w->token = (uint32_t)c;
    w->token_logp = w->logp[c];
    *out = (pv_policy_step_t){.choice = c,
                              .logprob = w->logp[c],
                              .entropy = w->entropy,
                              .n_tokens = 1,
                              .tokens = &w->token,
                              .token_logprobs = &w->token_logp};
    return PV_OK;
}

static pv_err_t s_logprobs(const pv_policy_t *p, const pv_policy_ctx_t *ctx,
                           const char *const *cands, size_t n, void *w_, float *logp,
                           float *entropy)
{
    s_work_t *w = w_;
    s_forward(p, ctx, cands, n, w);
    memcpy(logp, w->logp, n * sizeof *logp);
    if (entropy)
        *entropy = w->entropy;
    return PV_OK;
}

static pv_err_t s_fwd_tokens(const pv_policy_t *p, const pv_policy_ctx_t *ctx,
                             const char *const *cands, size_t n, const uint32_t *tokens,
                             size_t n_tokens, void *w_, float *logp_out, float *ent_out)
{
    s_work_t *w = w_;
    if (n_tokens != 1 || tokens[0] >= n)
        return PV_ERR_RANGE;
    s_forward(p, ctx, cands, n, w);
    w->chosen = tokens[0];
    logp_out[0] = w->logp[tokens[0]];
    if (ent_out)
        ent_out[0] = w->entropy;
    return PV_OK;
}

static pv_err_t s_backward(const pv_policy_t *p, void *w_, const float *dlogp, const float *dent,
                           float *grad)
{
    s_work_t *w = w_;
    if (!w->cached || w->chosen == SIZE_MAX)
        return PV_ERR_STATE;
    size_t D = w->D, H = w->H, n = w->n;
    const float *W1 = p->params + p->table[S_W1].offset;
    const float *w2 = p->params + p->table[S_W2].offset;
    float *gE = grad + p->table[S_EMBED].offset, *gW1 = grad + p->table[S_W1].offset;
    float *gb1 = grad + p->table[S_B1].offset, *gw2 = grad + p->table[S_W2].offset;
    float *gV = grad + p->table[S_WIDE].offset;
    memset(w->ds, 0, n * sizeof *w->ds);
    pv_nn_log_softmax_bwd(w->ds, w->logp, n, w->chosen, dlogp[0], dent ? dent[0] : 0.0f,
                          w->entropy);
    const float inv_t = 1.0f / p->spec.temperature;
    if (w->qa.is_question) { /* the linear scorer: only v gets a gradient */
        for (size_t j = 0; j < n; j++) {
            const uint32_t *q =
                w->cand_ids + j * (S_CAND_IDS + S_X_IDS) + w->n_c[j] + w->n_x[j] - S_QA_IDS;
            for (size_t k = 0; k < S_QA_IDS; k++)
                gV[q[k]] += w->ds[j] * inv_t;
        }
        return PV_OK;
    }
    memset(w->dctx, 0, 3 * D * sizeof(float));
    memset(w->dzsum, 0, H * sizeof(float));
    const float *eT = w->ctx, *eH = w->ctx + 2 * D;
    for (size_t j = 0; j < n; j++) {
        float dsj = w->ds[j] * inv_t; /* s_j = (w2 . relu(z_j)) / T */
        if (dsj == 0.0f)
            continue;
        const float *z = w->z + j * H, *x = w->xc + j * 4 * D;
        const uint32_t *ids = w->cand_ids + j * (S_CAND_IDS + S_X_IDS);
        /* s_j = w2 . relu(z_j) */
        pv_nn_relu_fwd(w->dh, z, H);
        for (size_t h = 0; h < H; h++) {
            gw2[h] += dsj * w->dh[h];
            w->dh[h] = dsj * w2[h];
        }
        memset(w->dz, 0, H * sizeof(float));
        pv_nn_relu_bwd(w->dz, z, w->dh, H);
        for (size_t h = 0; h < H; h++)
            w->dzsum[h] += w->dz[h];
        /* z_j = pre + W1[:, 3D:] x_j */
        memset(w->dxc, 0, 4 * D * sizeof(float));
        pv_nn_linear_bwd(w->dxc, gW1 + 3 * D, NULL, W1 + 3 * D, 7 * D, x, w->dz, H, 4 * D);
        /* x_j = [u_C, u_X, e_T * u_C, e_H * u_C] */
        float *du = w->dxc; /* reuse: du_C accumulates in dxc[0:D] */
        pv_nn_mul_bwd(w->dctx, du, eT, x, w->dxc + 2 * D, D);
        pv_nn_mul_bwd(w->dctx + 2 * D, du, eH, x, w->dxc + 3 * D, D);
        pv_nn_embed_mean_bwd(gE, du, ids, w->n_c[j], D);
        pv_nn_embed_mean_bwd(gE, w->dxc + D, ids + w->n_c[j], w->n_x[j], D);
    }
    /* pre = b1 + W1[:, :3D] c */
    pv_nn_linear_bwd(w->dctx, gW1, gb1, W1, 7 * D, w->ctx, w->dzsum, H, 3 * D);
    pv_nn_embed_mean_bwd(gE, w->dctx, w->ctx_ids, w->n_t, D);
    pv_nn_embed_mean_bwd(gE, w->dctx + D, w->ctx_ids + w->n_t, w->n_o, D);
    pv_nn_embed_mean_bwd(gE, w->dctx + 2 * D, w->ctx_ids + w->n_t + w->n_o, w->n_h, D);
    return PV_OK;
}

const pv_policy_ops_t pv_policy_bow_mlp_ops = {
    .kind = "bow_mlp",
    .resolve = s_resolve,
    .tensors = s_tensors,
    .init = s_init,
    .work_new = s_work_new,
    .work_destroy = s_work_destroy,
    .act = s_act,
    .logprobs = s_logprobs,
    .forward = s_fwd_tokens,
    .backward = s_backward,
};
