/* bench_weight_sync - the weights tree (pv_wsync: pipelined chunks down a tree of
 * point-to-point messages, every version hashed and verified) against a raw MPI_Bcast of the
 * same bytes, measured side by side in one run, rounds interleaved.
 *   mpirun -np 4 build/tests/bench_weight_sync [--chunk KiB] [--fanout K] [--rounds N]
 *                                               [--thread -1] [--shm -1] [MiB ...]
 * (default sizes 1 4 16 64). Rank 0 prints, per size: the median seconds per round of each
 * method, the tree's median over the Bcast's (the ratio) for pv_wsync_publish (it copies the
 * parameters into its snapshot: "tree") and for the double buffer (pv_wsync_pub_back, then
 * pv_wsync_publish_back: no copy, "tree0"), and the cost of one XXH3 of the version on one
 * core (what each rank spends verifying, if it could not overlap it), and "shm": of the
 * transfers the root started, how many its children copied out of its shared memory (the
 * same-host path; --shm -1 turns it off, as PV_WSYNC_SHM=0 does).
 * A round starts at a barrier and ends with the barrier every rank enters once it holds the
 * new version (subscribers: pv_wsync_wait returned it, verified), for both methods. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/checksum.h"
#include "common/mpi_util.h"
#include "common/weight_sync.h"

static int s_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A failed publish ends the bench: its times would mean nothing. */
static void s_check(pv_err_t rc, const char *what)
{
    if (rc != PV_OK) {
        fprintf(stderr, "bench_weight_sync: %s: %s\n", what, pv_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static double s_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, s_cmp);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int rank, size;
    if (pv_mpi_init(&argc, &argv, &rank, &size) != PV_OK)
        return 1;
    pv_wsync_opts_t opts = {0};
    int rounds = 10, first = 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            if (rank == 0)
                printf("usage: mpirun -np N bench_weight_sync [--chunk KIB] [--fanout K] "
                       "[--rounds N] [--thread -1] [--shm -1] [MIB ...]\n"
                       "Publish time of the weights tree against MPI_Bcast of the same bytes, "
                       "side by side (default sizes 1 4 16 64 MiB).\n");
            MPI_Finalize();
            return 0;
        }
    for (; first + 1 < argc && strncmp(argv[first], "--", 2) == 0; first += 2) {
        if (strcmp(argv[first], "--chunk") == 0)
            opts.chunk_bytes = (uint32_t)atoi(argv[first + 1]) * 1024u;
        else if (strcmp(argv[first], "--fanout") == 0)
            opts.fanout = atoi(argv[first + 1]);
        else if (strcmp(argv[first], "--rounds") == 0)
            rounds = atoi(argv[first + 1]);
        else if (strcmp(argv[first], "--thread") == 0) /* -1: no helper threads */
            opts.thread = atoi(argv[first + 1]);
        else if (strcmp(argv[first], "--shm") == 0) /* -1: chunk messages only */
            opts.shm = atoi(argv[first + 1]);
    }
    static const double defaults[] = {1, 4, 16, 64};
    int n_sizes = argc > first ? argc - first : 4;
    double *tb = calloc((size_t)rounds, sizeof *tb), *tw = calloc((size_t)rounds, sizeof *tw);
    double *tz = calloc((size_t)rounds, sizeof *tz);
    if (rank == 0)
        printf("%-6s %-5s %-6s %-6s %11s %11s %7s %11s %7s %11s %9s  (xxh3: %s)\n", "MiB", "ranks",
               "chunk", "fanout", "bcast s", "tree s", "ratio", "tree0 s", "ratio0", "xxh3 s",
               "shm", pv_checksum_impl());
    for (int si = 0; si < n_sizes; si++) {
        double mib = argc > first ? atof(argv[first + si]) : defaults[si];
        size_t n = (size_t)(mib * 1024 * 1024 / 4);
        if (!(mib > 0) || n == 0) {
            if (rank == 0)
                fprintf(stderr, "bench_weight_sync: '%s' is not a size in MiB (see --help)\n",
                        argv[first + si]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        float *p = calloc(n, sizeof *p);
        for (size_t i = 0; i < n; i++)
            p[i] = (float)(i % 1000) * 0.001f;
        pv_wsync_pub_t *pub = NULL;
        pv_wsync_sub_t *sub = NULL;
        if (rank == 0)
            s_check(pv_wsync_pub_new(MPI_COMM_WORLD, 0, n, &opts, &pub), "publisher");
        else
            s_check(pv_wsync_sub_new(MPI_COMM_WORLD, 0, n, &opts, &sub), "subscriber");
        for (int r = 0; r <= rounds; r++) { /* round 0 warms up */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Bcast(p, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            if (rank == 0) {
                p[0] = (float)r;
                s_check(pv_wsync_publish(pub, 2 * (uint64_t)r + 1, p), "publish");
            } else {
                uint64_t v = 0;
                bool stop = false;
                pv_wsync_wait(sub, 2 * (uint64_t)r + 1, -1, NULL, &v, &stop);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            double t2 = MPI_Wtime();
            /* the double buffer: the version is written into the publisher's back buffer
             * (as the Bcast's bytes are in place before it starts), then sent uncopied */
            if (rank == 0) {
                float *q = pv_wsync_pub_back(pub);
                if (!q) {
                    fprintf(stderr, "bench_weight_sync: no back buffer\n");
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
                memcpy(q, p, n * sizeof *p);
                q[1] = (float)r;
            }
            MPI_Barrier(MPI_COMM_WORLD);
            double t3 = MPI_Wtime();
            if (rank == 0) {
                s_check(pv_wsync_publish_back(pub, 2 * (uint64_t)r + 2), "publish_back");
            } else {
                uint64_t v = 0;
                bool stop = false;
                pv_wsync_wait(sub, 2 * (uint64_t)r + 2, -1, NULL, &v, &stop);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            double t4 = MPI_Wtime();
            if (r > 0) {
                tb[r - 1] = t1 - t0;
                tw[r - 1] = t2 - t1;
                tz[r - 1] = t4 - t3;
            }
        }
        if (rank == 0) {
            double t0 = MPI_Wtime();
            volatile uint64_t h = pv_checksum(p, n * 4);
            double th = MPI_Wtime() - t0;
            (void)h;
            double mb = s_median(tb, rounds), mw = s_median(tw, rounds), mz = s_median(tz, rounds);
            pv_wsync_stats_t st = pv_wsync_pub_stats(pub);
            char shm[32];
            snprintf(shm, sizeof shm, "%llu/%llu", (unsigned long long)st.shm_sends,
                     (unsigned long long)st.sends);
            printf("%-6.1f %-5d %-6u %-6d %11.5f %11.5f %7.2f %11.5f %7.2f %11.5f %9s\n", mib, size,
                   (opts.chunk_bytes ? opts.chunk_bytes : PV_WSYNC_CHUNK_DEFAULT) / 1024,
                   opts.fanout ? opts.fanout : 2, mb, mw, mw / mb, mz, mz / mb, th, shm);
            fflush(stdout);
            pv_wsync_stop(pub, 1000, NULL);
        } else {
            uint64_t v = 0;
            bool stop = false;
            while (!stop)
                pv_wsync_wait(sub, UINT64_MAX, -1, NULL, &v, &stop);
        }
        pv_wsync_pub_destroy(&pub);
        pv_wsync_sub_destroy(&sub);
        free(p);
    }
    free(tb);
    free(tw);
    free(tz);
    pv_mpi_finalize(10, 0);
    return 0;
}
