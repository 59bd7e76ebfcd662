/* tcp_relay.h - a loopback TCP relay that records every byte it forwards (header-only).
 *
 * Stands in for a packet capture (none is available in tests): clients connect to the
 * relay's port instead of the broker's, the relay forwards both directions and keeps a
 * copy of the bytes, and the test then searches that copy for plaintext. Up to
 * RELAY_MAX_CONN connections at once (clients reconnect on fresh sockets); the first
 * RELAY_KEEP bytes are kept.
 */
#ifndef PV_TEST_TCP_RELAY_H
#define PV_TEST_TCP_RELAY_H

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define RELAY_MAX_CONN 32
#define RELAY_KEEP     (8u << 20)

typedef struct relay {
    int lfd;
    uint16_t port, target;
    pthread_t thread;
    atomic_int stop;
    int fd[RELAY_MAX_CONN][2]; /* [client side, broker side], -1 = free */
    uint8_t *seen;             /* (n_seen) bytes forwarded, both directions */
    size_t n_seen;
} relay_t;

static inline void relay_close_pair(relay_t *r, int i)
{
    close(r->fd[i][0]);
    close(r->fd[i][1]);
    r->fd[i][0] = r->fd[i][1] = -1;
}

static inline void relay_accept(relay_t *r)
{
    int c = accept(r->lfd, NULL, NULL);
    if (c < 0)
        return;
    int b = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons(r->target),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (int i = 0; i < RELAY_MAX_CONN; i++)
        if (r->fd[i][0] < 0) {
            if (connect(b, (struct sockaddr *)&a, sizeof a) != 0)
                break;
            r->fd[i][0] = c;
            r->fd[i][1] = b;
            return;
        }
    close(c);
    close(b);
}

/* Forward what is readable on side `s` of pair `i`; false when the pair closed. */
static inline int relay_forward(relay_t *r, int i, int s)
{
    uint8_t buf[65536];
    ssize_t n = read(r->fd[i][s], buf, sizeof buf);
    if (n <= 0)
        return 0;
    size_t keep = RELAY_KEEP - r->n_seen < (size_t)n ? RELAY_KEEP - r->n_seen : (size_t)n;
    memcpy(r->seen + r->n_seen, buf, keep);
    r->n_seen += keep;
    for (ssize_t done = 0; done < n;) {
        ssize_t w = write(r->fd[i][1 - s], buf + done, (size_t)(n - done));
        if (w <= 0)
            return 0;
        done += w;
    }
    return 1;
}

static inline void *relay_main(void *arg)
{
    relay_t *r = arg;
    while (!atomic_load(&r->stop)) {
        struct pollfd p[1 + 2 * RELAY_MAX_CONN];
        int idx[1 + 2 * RELAY_MAX_CONN], n = 1;
        p[0] = (struct pollfd){.fd = r->lfd, .events = POLLIN};
        for (int i = 0; i < RELAY_MAX_CONN; i++)
            for (int s = 0; s < 2 && r->fd[i][0] >= 0; s++) {
                p[n] = (struct pollfd){.fd = r->fd[i][s], .events = POLLIN};
                idx[n++] = 2 * i + s;
            }
        if (poll(p, (nfds_t)n, 50) <= 0)
            continue;
        if (p[0].revents & POLLIN)
            relay_accept(r);
        for (int k = 1; k < n; k++) {
            int i = idx[k] / 2, s = idx[k] % 2;
            if ((p[k].revents & (POLLIN | POLLHUP | POLLERR)) && r->fd[i][0] >= 0 &&
                !relay_forward(r, i, s))
                relay_close_pair(r, i);
        }
    }
    for (int i = 0; i < RELAY_MAX_CONN; i++)
        if (r->fd[i][0] >= 0)
            relay_close_pair(r, i);
    close(r->lfd);
    return NULL;
}

/* Listen on a free loopback port and forward to 127.0.0.1:target. Returns 0 on success. */
static inline int relay_start(relay_t *r, uint16_t target)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < RELAY_MAX_CONN; i++)
        r->fd[i][0] = r->fd[i][1] = -1;
    r->target = target;
    r->seen = malloc(RELAY_KEEP);
    r->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (!r->seen || r->lfd < 0 || bind(r->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(r->lfd, 16) != 0 || getsockname(r->lfd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    r->port = ntohs(a.sin_port);
    return pthread_create(&r->thread, NULL, relay_main, r) == 0 ? 0 : -1;
}

/* Stop forwarding and close every connection; the recorded bytes stay until relay_free. */
static inline void relay_stop(relay_t *r)
{
    atomic_store(&r->stop, 1);
    pthread_join(r->thread, NULL);
}

static inline void relay_free(relay_t *r)
{
    free(r->seen);
    r->seen = NULL;
}

/* True when `needle` occurs in the recorded bytes. */
static inline int relay_saw(const relay_t *r, const void *needle, size_t len)
{
    for (size_t i = 0; len && i + len <= r->n_seen; i++)
        if (memcmp(r->seen + i, needle, len) == 0)
            return 1;
    return 0;
}

#endif
