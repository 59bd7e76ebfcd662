/* rng.c - PCG32; see rng.h for the source. */
#include "common/rng.h"

#include <math.h>

#define PV_PCG_MULT 6364136223846793005ULL

uint32_t pv_rng_u32(pv_rng_t *rng)
{
    uint64_t old = rng->state;
    rng->state = old * PV_PCG_MULT + rng->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

void pv_rng_seed(pv_rng_t *rng, uint64_t seed, uint64_t stream)
{
    rng->state = 0u;
    rng->inc = (stream << 1u) | 1u;
    pv_rng_u32(rng);
    rng->state += seed;
    pv_rng_u32(rng);
}

uint64_t pv_rng_u64(pv_rng_t *rng)
{
    uint64_t hi = pv_rng_u32(rng);
    return (hi << 32) | pv_rng_u32(rng);
}

uint32_t pv_rng_bounded(pv_rng_t *rng, uint32_t bound)
{
    if (bound == 0)
        return 0;
    uint32_t threshold = (uint32_t)(-bound) % bound;
    for (;;) {
        uint32_t r = pv_rng_u32(rng);
        if (r >= threshold)
            return r % bound;
    }
}

double pv_rng_uniform(pv_rng_t *rng)
{
    return (double)(pv_rng_u64(rng) >> 11) * (1.0 / 9007199254740992.0);
}

float pv_rng_uniformf(pv_rng_t *rng)
{
    return (float)(pv_rng_u32(rng) >> 8) * (1.0f / 16777216.0f);
}

double pv_rng_normal(pv_rng_t *rng)
{
    double u1 = 1.0 - pv_rng_uniform(rng); /* (0, 1]: log is finite */
    double u2 = pv_rng_uniform(rng);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

uint64_t pv_rng_mix(uint64_t a, uint64_t b)
{
    uint64_t z = a + 0x9e3779b97f4a7c15ULL * (b + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t pv_rng_permute(uint64_t i, uint64_t n, uint64_t key)
{
    if (n <= 1 || i >= n)
        return n <= 1 ? 0 : i;
    unsigned h = 1; /* half width: the network permutes [0, 4^h), the least such range >= n */
    while (h < 31 && ((uint64_t)1 << (2 * h)) < n)
        h++;
    const uint64_t mask = ((uint64_t)1 << h) - 1;
    uint64_t x = i;
    do { /* cycle walking: stay in [0, n), a bijection because the network is one on 4^h */
        uint64_t l = x >> h, r = x & mask;
        for (uint64_t round = 0; round < 4; round++) {
            uint64_t f = pv_rng_mix(key, (r << 2) | round) & mask;
            uint64_t t = l ^ f;
            l = r;
            r = t;
        }
        x = (l << h) | r;
    } while (x >= n);
    return x;
}
