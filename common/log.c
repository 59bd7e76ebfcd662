/* log.c - see log.h. */
#include "common/log.h"

#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

pv_log_level_t pv_log_level = PV_LOG_LEVEL_INFO;

static FILE *s_sink;
static char s_role[32] = "prover";
static int s_rank = -1;

void pv_log_init(const char *role, int rank)
{
    if (role) {
        strncpy(s_role, role, sizeof s_role - 1);
        s_role[sizeof s_role - 1] = '\0';
    }
    s_rank = rank;
}

void pv_log_set_level(pv_log_level_t level)
{
    pv_log_level = level;
}

int pv_log_parse_level(const char *text, pv_log_level_t *out)
{
    static const char *const names[] = {"debug", "info", "warn", "error", "off"};
    for (int i = 0; i < 5; i++) {
        if (text && strcasecmp(text, names[i]) == 0) {
            *out = (pv_log_level_t)i;
            return 0;
        }
    }
    return -1;
}

void pv_log_set_sink(FILE *sink)
{
    s_sink = sink;
}

void pv_log_write(pv_log_level_t level, const char *fmt, ...)
{
    static const char letters[] = "DIWE";
    FILE *out = s_sink ? s_sink : stderr;
    struct timeval tv;
    struct tm tm;
    char line[2048];
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ %c [%s",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (int)(tv.tv_usec / 1000), letters[level < 4 ? level : 3], s_role);
    if (s_rank >= 0 && n > 0 && (size_t)n < sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " r%d", s_rank);
    if (n > 0 && (size_t)n < sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " p%d] ", (int)getpid());
    if (n > 0 && (size_t)n < sizeof line) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
        va_end(ap);
    }
    /* one fputs per line keeps lines whole when several ranks share a terminal */
    size_t len = strlen(line);
    if (len + 1 < sizeof line) {
        line[len] = '\n';
        line[len + 1] = '\0';
    } else {
        line[sizeof line - 2] = '\n';
    }
    fputs(line, out);
    fflush(out);
}
