/* latency_hist.h - log-linear latency histogram with bounded relative error.
 *
 * The broker records one lease-to-ack latency per completed job and reports p50/p99 per
 * service. Values are microseconds (uint64). Buckets follow HdrHistogram's log-linear idea
 * (G. Tene, HdrHistogram, "significant digits" in base 2): values below 32 have a bucket
 * each; above, every power of two [2^e, 2^(e+1)) is split into 16 equal sub-buckets, so a
 * reported percentile (the bucket midpoint) is within 1/32 (~3%) of the recorded value.
 * Values from 2^48 us (~9 years) up land in the last bucket.
 *
 * The struct is plain data (no pointers): recording is one add, percentiles walk the
 * buckets. Merge two histograms with pv_hist_merge() (the broker keeps a current and a
 * previous window and reports their union, so percentiles follow recent traffic).
 */
#ifndef PV_LATENCY_HIST_H
#define PV_LATENCY_HIST_H

#include <stdint.h>

#define PV_HIST_SUB_BITS 4                        /* 16 sub-buckets per octave */
#define PV_HIST_LINEAR   (2u << PV_HIST_SUB_BITS) /* 32 exact buckets */
#define PV_HIST_MAX_EXP  47                       /* last octave [2^47, 2^48) */
#define PV_HIST_BUCKETS                                                                            \
    (PV_HIST_LINEAR + (PV_HIST_MAX_EXP - PV_HIST_SUB_BITS) * (1u << PV_HIST_SUB_BITS))

typedef struct pv_hist {
    uint64_t count;                   /* values recorded */
    uint64_t sum;                     /* sum of recorded values (us), saturating */
    uint64_t max;                     /* largest value recorded */
    uint64_t bucket[PV_HIST_BUCKETS]; /* counts per bucket */
} pv_hist_t;

/* Zero the histogram. */
void pv_hist_reset(pv_hist_t *self);

/* Record one value `us` (microseconds). */
void pv_hist_record(pv_hist_t *self, uint64_t us);

/* Add every count of `src` into `dst`. */
void pv_hist_merge(pv_hist_t *dst, const pv_hist_t *src);

/* The q-quantile (0 <= q <= 1) in microseconds: the midpoint of the bucket holding the
 * value of rank ceil(q * count) (nearest-rank definition, rank at least 1), clamped to the
 * largest recorded value. Returns 0 for an empty histogram. */
double pv_hist_quantile(const pv_hist_t *self, double q);

/* Bucket index of a value and the inclusive value range [*lo, *hi] of a bucket (for tests
 * and exporters). */
uint32_t pv_hist_bucket_of(uint64_t us);
void pv_hist_bucket_range(uint32_t bucket, uint64_t *lo, uint64_t *hi);

#endif
