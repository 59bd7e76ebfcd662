/* gigpo.c - GiGPO anchor-state grouping and difflib's SequenceMatcher ratio; see
 * advantage.h. The advantage arithmetic itself lives in adv_tmpl.h. */
#include "learner/advantage.h"

#include <stdlib.h>
#include <string.h>

typedef struct s_match {
    size_t i, j, k;
} s_match_t;

/* difflib.SequenceMatcher.find_longest_match(alo, ahi, blo, bhi) with isjunk = None: the
 * longest a[i:i+k] == b[j:j+k] seeded only by non-popular bytes of b, ties broken by the
 * smallest i then j, then extended over equal (popular) bytes on both ends. `len` and
 * `nlen` are (lb + 1) scratch rows. */
static s_match_t s_longest(const unsigned char *a, const unsigned char *b, const bool *popular,
                           size_t alo, size_t ahi, size_t blo, size_t bhi, size_t *len,
                           size_t *nlen)
{
    s_match_t best = {alo, blo, 0};
    memset(len + blo, 0, (bhi - blo + 1) * sizeof *len);
    for (size_t i = alo; i < ahi; i++) {
        nlen[blo] = 0;
        for (size_t j = blo; j < bhi; j++) {
            size_t k = 0;
            if (a[i] == b[j] && !popular[b[j]])
                k = (j > blo ? len[j] : 0) + 1; /* len[j] is the run ending at b[j-1] */
            nlen[j + 1] = k;
            if (k > best.k) {
                best.i = i + 1 - k;
                best.j = j + 1 - k;
                best.k = k;
            }
        }
        size_t *t = len;
        len = nlen;
        nlen = t;
    }
    while (best.i > alo && best.j > blo && a[best.i - 1] == b[best.j - 1]) {
        best.i--;
        best.j--;
        best.k++;
    }
    while (best.i + best.k < ahi && best.j + best.k < bhi &&
           a[best.i + best.k] == b[best.j + best.k])
        best.k++;
    return best;
}

pv_err_t pv_seqmatch_ratio(const char *a_, size_t la, const char *b_, size_t lb, double *out)
{
    if (la + lb == 0) {
        *out = 1.0;
        return PV_OK;
    }
    const unsigned char *a = (const unsigned char *)a_, *b = (const unsigned char *)b_;
    bool popular[256] = {false};
    if (lb >= 200) { /* difflib autojunk */
        size_t count[256] = {0};
        for (size_t j = 0; j < lb; j++)
            count[b[j]]++;
        for (int c = 0; c < 256; c++)
            popular[c] = count[c] > lb / 100 + 1;
    }
    /* two (lb + 1) rows + a queue of ranges: every found block pushes at most two and there
     * are at most min(la, lb) blocks, so 2 min(la, lb) + 1 entries always suffice */
    size_t qcap = 2 * (la < lb ? la : lb) + 1;
    size_t *len = malloc((2 * (lb + 1) + 4 * qcap) * sizeof *len);
    if (!len)
        return PV_ERR_NOMEM;
    size_t *nlen = len + lb + 1, *queue = nlen + lb + 1, nq = 0, matched = 0;
    queue[nq * 4 + 0] = 0, queue[nq * 4 + 1] = la, queue[nq * 4 + 2] = 0, queue[nq * 4 + 3] = lb;
    nq++;
    while (nq) {
        nq--;
        size_t alo = queue[nq * 4], ahi = queue[nq * 4 + 1], blo = queue[nq * 4 + 2],
               bhi = queue[nq * 4 + 3];
        s_match_t m = s_longest(a, b, popular, alo, ahi, blo, bhi, len, nlen);
        if (!m.k)
            continue;
        matched += m.k;
        if (alo < m.i && blo < m.j) {
            size_t *q = queue + nq++ * 4;
            q[0] = alo, q[1] = m.i, q[2] = blo, q[3] = m.j;
        }
        if (m.i + m.k < ahi && m.j + m.k < bhi) {
            size_t *q = queue + nq++ * 4;
            q[0] = m.i + m.k, q[1] = ahi, q[2] = m.j + m.k, q[3] = bhi;
        }
    }
    free(len);
    *out = 2.0 * (double)matched / (double)(la + lb);
    return PV_OK;
}

pv_err_t pv_gigpo_step_groups(size_t rows, const char *const *anchors, const size_t *anchor_len,
                              const int64_t *index, bool enable_similarity,
                              double similarity_thresh, int64_t *labels_out, pv_errmsg_t *em)
{
    if (!rows || !anchors || !anchor_len || !index || !labels_out)
        return pv_errf(em, PV_ERR_INVAL, "gigpo: empty batch or NULL array");
    if (enable_similarity && !(similarity_thresh > 0.0 && similarity_thresh < 1.0))
        return pv_errf(em, PV_ERR_INVAL, "gigpo: similarity_thresh must be in (0, 1), got %g",
                       similarity_thresh);
    /* rep[i]: the row that represents i's cluster (clusters never merge, so the first row
     * of a cluster is its representative, as in verl-agent). */
    for (size_t i = 0; i < rows; i++) {
        size_t rep = i;
        for (size_t r = 0; r < i && rep == i; r++) {
            if (index[r] != index[i] || labels_out[r] != (int64_t)r)
                continue; /* other episode group, or r is not a representative */
            if (!enable_similarity) {
                if (anchor_len[r] == anchor_len[i] &&
                    memcmp(anchors[r], anchors[i], anchor_len[i]) == 0)
                    rep = r;
            } else {
                double ratio;
                if (pv_seqmatch_ratio(anchors[i], anchor_len[i], anchors[r], anchor_len[r],
                                      &ratio) != PV_OK)
                    return pv_errf(em, PV_ERR_NOMEM, "gigpo: no memory for similarity");
                if (ratio >= similarity_thresh)
                    rep = r;
            }
        }
        labels_out[i] = (int64_t)rep;
    }
    /* renumber representatives 0, 1, ... by first occurrence */
    int64_t next = 0;
    for (size_t i = 0; i < rows; i++) {
        if (labels_out[i] == (int64_t)i)
            labels_out[i] = -1 - next++; /* mark as new label, negative to avoid clashes */
        else
            labels_out[i] = labels_out[labels_out[i]];
    }
    for (size_t i = 0; i < rows; i++)
        labels_out[i] = -1 - labels_out[i];
    return PV_OK;
}
