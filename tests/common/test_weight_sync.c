/* test_weight_sync.c - run under mpirun -np 4 (--enable-recovery for the kill case).
 * Rank 0 publishes versions whose every parameter is a known function of (version, index);
 * subscribers check each applied version is whole, versions only increase, the last one
 * arrives, corrupt messages are rejected without touching the parameters, and (with
 * argument "kill") a subscriber killed mid-run stalls nobody else. */
#include <mpi.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "common/mpi_util.h"
#include "common/rng.h"
#include "common/weight_sync.h"
#include "tests/support/pv_test.h"

enum { N_PARAMS = 100000, N_VERSIONS = 30 };

static int s_rank, s_size, s_kill;

static float s_expect(uint64_t version, size_t i)
{
    return (float)(version * 7919u % 1000u) + (float)(i % 1013u) * 0.5f;
}

static void s_nap(pv_rng_t *rng)
{
    struct timespec ts = {0, (long)pv_rng_bounded(rng, 3000) * 1000L};
    nanosleep(&ts, NULL);
}

static void s_check_whole(const float *p, uint64_t version)
{
    for (size_t i = 0; i < N_PARAMS; i++)
        if (p[i] != s_expect(version, i))
            fail_msg("version %llu torn at parameter %zu", (unsigned long long)version, i);
}

static void test_versions_arrive_whole_and_in_order(void **state)
{
    (void)state;
    float *p = malloc(N_PARAMS * sizeof *p);
    pv_rng_t rng;
    pv_rng_seed(&rng, 11, (uint64_t)s_rank);
    if (s_rank == 0) {
        pv_wsync_pub_t *pub = NULL;
        assert_int_equal(pv_wsync_pub_new(MPI_COMM_WORLD, 0, N_PARAMS, &pub), PV_OK);
        for (uint64_t v = 1; v <= N_VERSIONS; v++) {
            for (size_t i = 0; i < N_PARAMS; i++)
                p[i] = s_expect(v, i);
            assert_int_equal(pv_wsync_publish(pub, v, p), PV_OK);
            s_nap(&rng);
        }
        /* no more publishes: subscribers that skipped versions must still end on the last
         * one, by catch-up sends driven from pv_wsync_progress */
        for (int tries = 0; tries < 20000 && pv_wsync_progress(pub) > (s_kill ? 1u : 0u); tries++)
            s_nap(&rng);
        int unreached = -1;
        assert_int_equal(pv_wsync_stop(pub, 5000, &unreached), PV_OK);
        assert_true(s_kill ? unreached <= 1
                           : unreached == 0); /* eager sends to a dead rank may "complete" */
        pv_wsync_pub_stats_t st = pv_wsync_pub_stats(pub);
        assert_int_equal(st.published, N_VERSIONS);
        /* every (version, subscriber) pair was sent or skipped; skipped ones were caught up
         * with at most one send each */
        assert_true(st.sends - st.catchups + st.skipped ==
                    (uint64_t)N_VERSIONS * (uint64_t)(s_size - 1));
        assert_true(st.catchups <= st.skipped);
        print_message("sends %llu, skipped %llu, catch-ups %llu\n", (unsigned long long)st.sends,
                      (unsigned long long)st.skipped, (unsigned long long)st.catchups);
        pv_wsync_pub_destroy(&pub);
        assert_null(pub);
    } else {
        pv_wsync_sub_t *sub = NULL;
        assert_int_equal(pv_wsync_sub_new(MPI_COMM_WORLD, 0, N_PARAMS, &sub), PV_OK);
        uint64_t version = 0, last = 0;
        bool stop = false;
        int changes = 0;
        while (!stop) {
            pv_err_t rc = pv_wsync_wait(sub, last + 1, 20000, p, &version, &stop);
            assert_int_equal(rc, PV_OK);
            if (version != last) {
                assert_true(version > last);
                s_check_whole(p, version);
                last = version;
                changes++;
                if (s_kill && s_rank == s_size - 1 && version >= 3)
                    raise(SIGKILL); /* a dying actor: the others must not notice */
            }
            s_nap(&rng);
        }
        assert_int_equal(last, N_VERSIONS);
        assert_true(changes >= 1);
        assert_int_equal(pv_wsync_sub_rejected(sub), 0);
        pv_wsync_sub_destroy(&sub);
    }
    free(p);
}

static void test_corrupt_message_is_rejected(void **state)
{
    (void)state;
    if (s_kill)
        skip();
    float *p = malloc(N_PARAMS * sizeof *p);
    if (s_rank == 0) {
        /* garbage with the weight tag, then a real version */
        unsigned char junk[64];
        memset(junk, 0x5a, sizeof junk);
        for (int r = 1; r < s_size; r++)
            MPI_Send(junk, sizeof junk, MPI_BYTE, r, PV_WSYNC_TAG, MPI_COMM_WORLD);
        pv_wsync_pub_t *pub = NULL;
        assert_int_equal(pv_wsync_pub_new(MPI_COMM_WORLD, 0, N_PARAMS, &pub), PV_OK);
        for (size_t i = 0; i < N_PARAMS; i++)
            p[i] = s_expect(5, i);
        assert_int_equal(pv_wsync_publish(pub, 5, p), PV_OK);
        int unreached = -1;
        assert_int_equal(pv_wsync_stop(pub, 5000, &unreached), PV_OK);
        assert_int_equal(unreached, 0);
        pv_wsync_pub_destroy(&pub);
    } else {
        pv_wsync_sub_t *sub = NULL;
        assert_int_equal(pv_wsync_sub_new(MPI_COMM_WORLD, 0, N_PARAMS, &sub), PV_OK);
        for (size_t i = 0; i < N_PARAMS; i++)
            p[i] = -1.0f;
        uint64_t version = 0;
        bool stop = false;
        while (!stop) {
            pv_err_t rc = pv_wsync_poll(sub, p, &version, &stop);
            assert_true(rc == PV_OK || rc == PV_ERR_DATA);
            if (version == 0)
                assert_true(p[0] == -1.0f && p[N_PARAMS - 1] == -1.0f); /* untouched */
        }
        assert_int_equal(version, 5);
        s_check_whole(p, 5);
        assert_int_equal(pv_wsync_sub_rejected(sub), 1);
        pv_wsync_sub_destroy(&sub);
    }
    free(p);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_wrong_roles_are_refused(void **state)
{
    (void)state;
    pv_wsync_pub_t *pub = NULL;
    pv_wsync_sub_t *sub = NULL;
    if (s_rank != 0)
        assert_int_equal(pv_wsync_pub_new(MPI_COMM_WORLD, 0, 10, &pub), PV_ERR_INVAL);
    else
        assert_int_equal(pv_wsync_sub_new(MPI_COMM_WORLD, 0, 10, &sub), PV_ERR_INVAL);
    assert_null(pub);
    assert_null(sub);
}

int main(int argc, char **argv)
{
    if (pv_mpi_init(&argc, &argv, &s_rank, &s_size) != PV_OK)
        return 1;
    s_kill = argc > 1 && strcmp(argv[1], "kill") == 0;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wrong_roles_are_refused),
        cmocka_unit_test(test_versions_arrive_whole_and_in_order),
        cmocka_unit_test(test_corrupt_message_is_rejected),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    pv_test_mpi_verdict(s_rank, failed);
    pv_mpi_finalize(5, failed ? 1 : 0);
    return failed ? 1 : 0;
}
