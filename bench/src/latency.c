/*
 * latency.c - ping-pong between ranks 0 and 1.
 *
 * Rank 0 sends a message to rank 1, which sends it straight back.  The
 * reported value is the one-way latency: half of the average round trip,
 * in microseconds.  Ranks other than 0 and 1 only take part in barriers.
 */
#include "common.h"

int main(int argc, char **argv)
{
    size_t size;
    char *sbuf, *rbuf;
    int peer;

    MPI_Init(&argc, &argv);
    bench_init(argc, argv, 1, 4u << 20);
    if (bench_o.nranks < 2) {
        if (bench_o.rank == 0) fprintf(stderr, "latency needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    peer = 1 - bench_o.rank;
    sbuf = bench_alloc(bench_o.max_size);
    rbuf = bench_alloc(bench_o.max_size);
    bench_header("latency", "size(B)  one-way latency");

    for (size = bench_first_size(); size <= bench_o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(size), warm = bench_warmup(size), i;
        double t0 = 0.0;
        int count = (int)size;

        if (bench_o.check && bench_o.rank < 2) {
            /* One verified exchange per size, before timing. */
            bench_fill(sbuf, size, bench_o.rank + 1);
            memset(rbuf, 0, size);
            if (bench_o.rank == 0) {
                MPI_Send(sbuf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
            bench_verify(rbuf, size, peer + 1, "latency payload");
        }

        MPI_Barrier(MPI_COMM_WORLD);
        if (bench_o.rank == 0) {
            for (i = 0; i < warm + iters; i++) {
                if (i == warm) t0 = MPI_Wtime();
                MPI_Send(sbuf, count, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(rbuf, count, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            bench_emit("latency", size, (MPI_Wtime() - t0) * 1e6 / (2.0 * iters), "us");
        } else if (bench_o.rank == 1) {
            for (i = 0; i < warm + iters; i++) {
                MPI_Recv(rbuf, count, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, count, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
