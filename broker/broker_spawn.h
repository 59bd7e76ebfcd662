/* broker_spawn.h - start a prover-broker process and learn where it listens.
 *
 * For tests and benchmarks: fork/exec the binary with `key=value` arguments, read the
 * "prover-broker: listening on ENDPOINT metrics PORT" line it prints once ready, and stop
 * it again. The child gets PR_SET_PDEATHSIG(SIGKILL), so it never outlives its parent.
 */
#ifndef PV_BROKER_SPAWN_H
#define PV_BROKER_SPAWN_H

#include <sys/types.h>

#include "common/err.h"

typedef struct pv_broker_proc {
    pid_t pid;
    char endpoint[128];    /* with the port resolved */
    unsigned metrics_port; /* 0 when off */
} pv_broker_proc_t;

/* Run `bin` with the NULL-terminated `args` (argv[1..]) and wait up to timeout_ms for its
 * listening line. Errors: PV_ERR_IO (cannot start), PV_ERR_TIMEOUT (no line: the child is
 * killed), PV_ERR_PARSE (another first line: killed). */
pv_err_t pv_broker_spawn(const char *bin, const char *const *args, int timeout_ms,
                         pv_broker_proc_t *out);

/* Send `sig` and reap the process (SIGTERM for a clean stop, SIGKILL for a crash).
 * Returns its exit code, 128 + signal when a signal ended it, or -1 when none was running. */
int pv_broker_proc_kill(pv_broker_proc_t *proc, int sig);

/* The same for any child process id. */
int pv_proc_stop(pid_t pid, int sig);

/* Resident set size of process `pid` in bytes (from /proc/PID/status), or 0. */
size_t pv_proc_rss_bytes(pid_t pid);

#endif
