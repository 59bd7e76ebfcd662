/* log.h - levelled logging with a role/rank/pid prefix.
 *
 * The PV_LOG_* macros test the level before evaluating their arguments (Redis' serverLog
 * habit), so a disabled debug line costs one comparison. Lines go to one sink (stderr by
 * default) as
 *     2026-11-30T10:57:51.123Z I [learner r1 p4242] iteration 3 ...
 * The sink and level are the only mutable globals the codebase allows; library code logs
 * nothing on its own: roles and tools log.
 */
#ifndef PV_LOG_H
#define PV_LOG_H

#include <stdio.h>

typedef enum pv_log_level {
    PV_LOG_LEVEL_DEBUG = 0,
    PV_LOG_LEVEL_INFO = 1,
    PV_LOG_LEVEL_WARN = 2,
    PV_LOG_LEVEL_ERROR = 3,
    PV_LOG_LEVEL_OFF = 4,
} pv_log_level_t;

/* Current threshold; lines below it are skipped. Read by the macros. */
extern pv_log_level_t pv_log_level;

/* Set the prefix: `role` (copied, e.g. "broker"), MPI rank (-1 when not under MPI).
 * The pid is read at each call so forked children report their own. */
void pv_log_init(const char *role, int rank);

/* Set the threshold. */
void pv_log_set_level(pv_log_level_t level);

/* Parse "debug" | "info" | "warn" | "error" | "off" into `*out`; returns 0 on success,
 * -1 for any other text (out untouched). */
int pv_log_parse_level(const char *text, pv_log_level_t *out);

/* Send lines to `sink` instead of stderr (NULL restores stderr). Not owned. */
void pv_log_set_sink(FILE *sink);

/* Format and write one line; use the macros instead so the level is checked first. */
void pv_log_write(pv_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define PV_LOG_AT_(lvl, ...)                                                                       \
    do {                                                                                           \
        if ((lvl) >= pv_log_level)                                                                 \
            pv_log_write((lvl), __VA_ARGS__);                                                      \
    } while (0)
#define PV_LOG_DEBUG(...) PV_LOG_AT_(PV_LOG_LEVEL_DEBUG, __VA_ARGS__)
#define PV_LOG_INFO(...)  PV_LOG_AT_(PV_LOG_LEVEL_INFO, __VA_ARGS__)
#define PV_LOG_WARN(...)  PV_LOG_AT_(PV_LOG_LEVEL_WARN, __VA_ARGS__)
#define PV_LOG_ERROR(...) PV_LOG_AT_(PV_LOG_LEVEL_ERROR, __VA_ARGS__)

#endif
