/* rng.h - PCG32 random number generator with explicit state.
 *
 * The generator is pcg32 (XSH-RR output, 64-bit LCG state, selectable stream) exactly as in
 * M. E. O'Neill, "PCG: A Family of Simple Fast Space-Efficient Statistically Good
 * Algorithms for Random Number Generation" (2014) and its reference code pcg-c-basic
 * (pcg32_srandom_r / pcg32_random_r / pcg32_boundedrand_r). tests/common/test_rng.c checks
 * the reference demo outputs (seed 42, stream 54).
 *
 * Every user owns its pv_rng_t and seeds it from config: there is no global generator,
 * so runs are reproducible. The struct is plain data: copy it to fork a stream, write it
 * into a checkpoint to resume.
 */
#ifndef PV_RNG_H
#define PV_RNG_H

#include <stdint.h>

typedef struct pv_rng {
    uint64_t state; /* LCG state */
    uint64_t inc;   /* stream selector, always odd */
} pv_rng_t;

/* Seed as pcg32_srandom_r(rng, seed, stream). Any values are valid. */
void pv_rng_seed(pv_rng_t *rng, uint64_t seed, uint64_t stream);

/* Next uniformly distributed 32-bit value (pcg32_random_r). */
uint32_t pv_rng_u32(pv_rng_t *rng);

/* 64 bits from two successive 32-bit outputs (high word first). */
uint64_t pv_rng_u64(pv_rng_t *rng);

/* Uniform integer in [0, bound) without modulo bias (pcg32_boundedrand_r). bound == 0
 * returns 0. */
uint32_t pv_rng_bounded(pv_rng_t *rng, uint32_t bound);

/* Uniform double in [0, 1) with 53 random bits. */
double pv_rng_uniform(pv_rng_t *rng);

/* Uniform float in [0, 1) with 24 random bits. */
float pv_rng_uniformf(pv_rng_t *rng);

/* Standard normal deviate (Box-Muller; uses two uniforms per call, no cached spare so the
 * state stays two words). */
double pv_rng_normal(pv_rng_t *rng);

/* Mix (a, b) into a well-spread 64-bit value with SplitMix64's finaliser (Steele, Lea,
 * Flood 2014). Use it to derive independent seeds: pv_rng_mix(run_seed, task_id). */
uint64_t pv_rng_mix(uint64_t a, uint64_t b);

/* Position i's element in a seeded permutation of [0, n): a bijection of [0, n) for each
 * key, computed in O(1) expected time without a table, so every process that knows
 * (n, key) agrees on the order (the actors' task schedule, behaviour cloning's epochs).
 * A 4-round Feistel network on the least range [0, 4^h) that holds n, with round function
 * pv_rng_mix(key, ...), and cycle walking to stay inside [0, n) (Black and Rogaway,
 * "Ciphers with Arbitrary Finite Domains", CT-RSA 2002); fewer than 4 walks on average.
 * n <= 2^62. n <= 1 gives 0; i >= n is returned unchanged (not a position). */
uint64_t pv_rng_permute(uint64_t i, uint64_t n, uint64_t key);

#endif
