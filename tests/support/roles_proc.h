/* roles_proc.h - start prover role processes for the multi-process tests (header-only),
 * with the configuration of roles_fixture.h and the broker fixture of tests/broker. */
#ifndef PV_TEST_ROLES_PROC_H
#define PV_TEST_ROLES_PROC_H

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "net_fixture.h"
#include "roles_fixture.h"

/* Start build/bin/<bin> with rf_config, the broker endpoint, fast heartbeats and `extra`
 * (NULL-terminated). Output goes to $PV_ROLES_LOG_DIR/<name>.log, else nowhere. */
static inline pid_t rp_spawn(const char *bin, const char *name, const char *endpoint,
                             const char *const *extra)
{
    char path[512], ep[300], log[512];
    pv_test_bin(bin, path, sizeof path);
    snprintf(ep, sizeof ep, "broker.endpoint=%s", endpoint);
    const char *dir = getenv("PV_ROLES_LOG_DIR");
    if (dir && *dir)
        snprintf(log, sizeof log, "%s/%s.log", dir, name);
    else
        snprintf(log, sizeof log, "/dev/null");
    const char *argv[40] = {path, ep, "broker.heartbeat_ms=100", "broker.liveness=3",
                            "run.log_level=debug"};
    int n = 5;
    for (int i = 0; rf_config[i]; i++)
        argv[n++] = rf_config[i];
    for (int i = 0; extra && extra[i] && n < 39; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(path, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Wait up to timeout_ms for `pid` to exit; its status, or -1 if it is still running. */
static inline int rp_wait_exit(pid_t pid, int timeout_ms)
{
    int64_t end = nf_now_ms() + timeout_ms;
    int st;
    while (nf_now_ms() < end) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        nf_sleep_ms(20);
    }
    return -1;
}

#endif
