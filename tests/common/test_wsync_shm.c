/* test_wsync_shm.c - the checks a subscriber makes before it maps a parent's shared weights
 * buffer (ws_shm_map_peer, common/wsync_shm.c): a parent that lies in its offer must be
 * refused, never crash the child. A buffer that is not sealed against shrinking could be
 * truncated under the mapping (the next read is SIGBUS: seen with a forged BEGIN in review),
 * so it is refused; so are a wrong nonce or size, a file too small, something that is not a
 * regular file, and a descriptor that does not exist. The buffers here are this process's
 * own memfds, reached through /proc/self's pid as a child reaches its parent's. */
#define _GNU_SOURCE /* memfd_create, file seals */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/wsync_int.h"

#define S_BYTES (3u * 4096u + 100u) /* a version's bytes: not a page multiple */

/* A memfd laid out as a shared buffer (header page, then bytes), optionally sealed. */
static int s_buffer(uint64_t nonce, uint64_t bytes, size_t file_len, bool seal)
{
    int fd = memfd_create("test-wsync", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)file_len), 0);
    ws_shm_hdr_t h = {.magic = WS_SHM_MAGIC, .nonce = nonce, .bytes = bytes};
    assert_int_equal(pwrite(fd, &h, sizeof h, 0), (ssize_t)sizeof h);
    if (seal)
        assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
    return fd;
}

static void test_sealed_buffer_maps(void **state)
{
    (void)state;
    int fd = s_buffer(42, S_BYTES, WS_SHM_HDR + S_BYTES, true);
    unsigned char *p = ws_shm_map_peer((int)getpid(), fd, 42, S_BYTES);
    assert_non_null(p);
    assert_int_equal(((const ws_shm_hdr_t *)p)->nonce, 42);
    /* what the seal buys: the owner itself can no longer shrink it under the mapping */
    assert_int_equal(ftruncate(fd, 0), -1);
    assert_int_equal(errno, EPERM);
    munmap(p, WS_SHM_HDR + S_BYTES);
    close(fd);
}

static void test_unsealed_buffer_is_refused(void **state)
{
    (void)state;
    int fd = s_buffer(42, S_BYTES, WS_SHM_HDR + S_BYTES, false);
    assert_null(ws_shm_map_peer((int)getpid(), fd, 42, S_BYTES));
    /* the same buffer once sealed is accepted: the refusal was the missing seal */
    assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
    unsigned char *p = ws_shm_map_peer((int)getpid(), fd, 42, S_BYTES);
    assert_non_null(p);
    munmap(p, WS_SHM_HDR + S_BYTES);
    close(fd);
}

static void test_wrong_offers_are_refused(void **state)
{
    (void)state;
    int fd = s_buffer(42, S_BYTES, WS_SHM_HDR + S_BYTES, true);
    assert_null(ws_shm_map_peer((int)getpid(), fd, 43, S_BYTES));     /* another nonce */
    assert_null(ws_shm_map_peer((int)getpid(), fd, 42, S_BYTES - 4)); /* another size */
    close(fd);
    int small = s_buffer(7, S_BYTES, WS_SHM_HDR + S_BYTES / 2, true); /* too short a file */
    assert_null(ws_shm_map_peer((int)getpid(), small, 7, S_BYTES));
    close(small);
    int pipefd[2];
    assert_int_equal(pipe(pipefd), 0); /* not a regular file: never opened */
    assert_null(ws_shm_map_peer((int)getpid(), pipefd[0], 42, S_BYTES));
    close(pipefd[0]);
    close(pipefd[1]);
    assert_null(ws_shm_map_peer((int)getpid(), 100000, 42, S_BYTES)); /* no such fd */
    assert_null(ws_shm_map_peer(-1, 0, 42, S_BYTES));                 /* no such process */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sealed_buffer_maps),
        cmocka_unit_test(test_unsealed_buffer_is_refused),
        cmocka_unit_test(test_wrong_offers_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
