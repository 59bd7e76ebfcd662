/* latency_hist.c - log-linear histogram; see latency_hist.h. */
#include "broker/latency_hist.h"

#include <math.h>
#include <string.h>

void pv_hist_reset(pv_hist_t *self)
{
    memset(self, 0, sizeof *self);
}

uint32_t pv_hist_bucket_of(uint64_t us)
{
    if (us < PV_HIST_LINEAR)
        return (uint32_t)us;
    uint32_t e = 63u - (uint32_t)__builtin_clzll(us); /* floor(log2 us) >= 5 */
    if (e > PV_HIST_MAX_EXP)
        return PV_HIST_BUCKETS - 1;
    uint32_t sub = (uint32_t)(us >> (e - PV_HIST_SUB_BITS)) & ((1u << PV_HIST_SUB_BITS) - 1u);
    return PV_HIST_LINEAR + (e - PV_HIST_SUB_BITS - 1u) * (1u << PV_HIST_SUB_BITS) + sub;
}

void pv_hist_bucket_range(uint32_t bucket, uint64_t *lo, uint64_t *hi)
{
    if (bucket < PV_HIST_LINEAR) {
        *lo = *hi = bucket;
        return;
    }
    if (bucket >= PV_HIST_BUCKETS)
        bucket = PV_HIST_BUCKETS - 1;
    uint32_t k = bucket - PV_HIST_LINEAR;
    uint32_t e = k / (1u << PV_HIST_SUB_BITS) + PV_HIST_SUB_BITS + 1u;
    uint64_t sub = k % (1u << PV_HIST_SUB_BITS);
    uint32_t shift = e - PV_HIST_SUB_BITS;
    *lo = ((1ull << PV_HIST_SUB_BITS) + sub) << shift;
    *hi = *lo + (1ull << shift) - 1u;
}

void pv_hist_record(pv_hist_t *self, uint64_t us)
{
    self->bucket[pv_hist_bucket_of(us)]++;
    self->count++;
    self->sum = (self->sum + us < self->sum) ? UINT64_MAX : self->sum + us;
    if (us > self->max)
        self->max = us;
}

void pv_hist_merge(pv_hist_t *dst, const pv_hist_t *src)
{
    for (uint32_t i = 0; i < PV_HIST_BUCKETS; i++)
        dst->bucket[i] += src->bucket[i];
    dst->count += src->count;
    dst->sum = (dst->sum + src->sum < dst->sum) ? UINT64_MAX : dst->sum + src->sum;
    if (src->max > dst->max)
        dst->max = src->max;
}

double pv_hist_quantile(const pv_hist_t *self, double q)
{
    if (self->count == 0)
        return 0.0;
    if (!(q > 0.0))
        q = 0.0;
    if (q > 1.0)
        q = 1.0;
    uint64_t rank = (uint64_t)ceil(q * (double)self->count);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < PV_HIST_BUCKETS; i++) {
        seen += self->bucket[i];
        if (seen >= rank) {
            uint64_t lo, hi;
            pv_hist_bucket_range(i, &lo, &hi);
            double mid = 0.5 * ((double)lo + (double)hi);
            return mid > (double)self->max ? (double)self->max : mid;
        }
    }
    return (double)self->max;
}
