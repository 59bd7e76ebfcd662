/* clock.h - the clocks prover reads (header-only).
 *
 * Monotonic time for timeouts, rates and latencies (never goes back); Unix time only for
 * stamps a person reads (created_unix_ms, job-id nonces). POSIX clock_gettime/nanosleep.
 */
#ifndef PV_CLOCK_H
#define PV_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Monotonic clock in milliseconds / microseconds / seconds. */
static inline uint64_t pv_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static inline uint64_t pv_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static inline double pv_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Milliseconds since the Unix epoch. */
static inline uint64_t pv_unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Sleep `ms` milliseconds (idle waits: a rank that sleeps leaves the core to the others). */
static inline void pv_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

#endif
