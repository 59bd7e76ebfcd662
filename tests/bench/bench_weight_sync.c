/* bench_weight_sync - weight distribution (pv_wsync star of MPI_Isend) against a raw
 * MPI_Bcast of the same bytes, measured side by side, rounds interleaved.
 *   mpirun -np 4 build/tests/bench_weight_sync [MiB ...]     (default: 4 64)
 * Rank 0 prints, per size: seconds per round and GB/s (bytes * subscribers / time) of each,
 * and the ratio wsync/bcast. A round ends when every subscriber holds the new version
 * (an MPI_Barrier after each round for both methods, so the timings are comparable). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mpi_util.h"
#include "common/weight_sync.h"

int main(int argc, char **argv)
{
    int rank, size;
    if (pv_mpi_init(&argc, &argv, &rank, &size) != PV_OK)
        return 1;
    int n_sizes = argc > 1 ? argc - 1 : 2;
    const int rounds = 10;
    if (rank == 0)
        printf("%-8s %-6s %12s %12s %12s %12s %8s\n", "MiB", "ranks", "bcast s", "bcast GB/s",
               "wsync s", "wsync GB/s", "ratio");
    for (int si = 0; si < n_sizes; si++) {
        double mib = argc > 1 ? atof(argv[si + 1]) : (si == 0 ? 4 : 64);
        size_t n = (size_t)(mib * 1024 * 1024 / 4);
        float *p = calloc(n, sizeof *p);
        pv_wsync_pub_t *pub = NULL;
        pv_wsync_sub_t *sub = NULL;
        if (rank == 0)
            pv_wsync_pub_new(MPI_COMM_WORLD, 0, n, &pub);
        else
            pv_wsync_sub_new(MPI_COMM_WORLD, 0, n, &sub);
        double t_b = 0, t_w = 0;
        for (int r = 0; r <= rounds; r++) { /* round 0 warms up */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Bcast(p, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            if (rank == 0) {
                p[0] = (float)r;
                pv_wsync_publish(pub, (uint64_t)r + 1, p);
                pv_wsync_pub_stats_t st;
                do { /* the root's sends complete when the subscribers took the bytes */
                    st = pv_wsync_pub_stats(pub);
                } while (st.lagging > 0);
            } else {
                uint64_t v = 0;
                bool stop = false;
                pv_wsync_wait(sub, (uint64_t)r + 1, -1, p, &v, &stop);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            double t2 = MPI_Wtime();
            if (r > 0) {
                t_b += t1 - t0;
                t_w += t2 - t1;
            }
        }
        if (rank == 0) {
            double bytes = (double)n * 4 * (size - 1) * rounds;
            printf("%-8.1f %-6d %12.5f %12.2f %12.5f %12.2f %8.2f\n", mib, size, t_b / rounds,
                   bytes / t_b / 1e9, t_w / rounds, bytes / t_w / 1e9, t_w / t_b);
            int unreached = 0;
            pv_wsync_stop(pub, 1000, &unreached);
        } else {
            uint64_t v = 0;
            bool stop = false;
            while (!stop)
                pv_wsync_wait(sub, UINT64_MAX, -1, p, &v, &stop);
        }
        pv_wsync_pub_destroy(&pub);
        pv_wsync_sub_destroy(&sub);
        free(p);
    }
    pv_mpi_finalize(10, 0);
    return 0;
}
