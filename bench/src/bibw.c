/*
 * bibw.c - bidirectional bandwidth between ranks 0 and 1.
 *
 * Both ranks post a window of WINDOW receives and WINDOW sends at the same
 * time and wait for all of them.  Reported value: total bytes moved in both
 * directions / elapsed time, in MB/s (1 MB = 10^6 bytes).
 */
#include "common.h"

#define WINDOW 64

int main(int argc, char **argv)
{
    MPI_Request req[2 * WINDOW];
    size_t size;
    char *sbuf, *rbuf;
    int peer;

    MPI_Init(&argc, &argv);
    bench_init(argc, argv, 1, 4u << 20);
    if (bench_o.nranks < 2) {
        if (bench_o.rank == 0) fprintf(stderr, "bibw needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    peer = 1 - bench_o.rank;
    sbuf = bench_alloc(bench_o.rank < 2 ? bench_o.max_size : 1);
    rbuf = bench_alloc(bench_o.rank < 2 ? bench_o.max_size * WINDOW : 1);
    bench_header("bibw", "size(B)  bidirectional bandwidth");

    for (size = bench_first_size(); size <= bench_o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(size), warm = bench_warmup(size), i, w;
        int count = (int)size;
        double t0 = 0.0;

        if (bench_o.rank < 2 && bench_o.check) bench_fill(sbuf, size, 20 + bench_o.rank);
        MPI_Barrier(MPI_COMM_WORLD);
        if (bench_o.rank < 2) {
            for (i = 0; i < warm + iters; i++) {
                if (i == warm) t0 = MPI_Wtime();
                for (w = 0; w < WINDOW; w++)
                    MPI_Irecv(rbuf + (size_t)w * size, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req[w]);
                for (w = 0; w < WINDOW; w++)
                    MPI_Isend(sbuf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req[WINDOW + w]);
                MPI_Waitall(2 * WINDOW, req, MPI_STATUSES_IGNORE);
            }
            if (bench_o.rank == 0)
                bench_emit("bibw", size, 2.0 * size * WINDOW * iters / (MPI_Wtime() - t0) / 1e6, "MB/s");
            if (bench_o.check)
                for (w = 0; w < WINDOW; w++)
                    bench_verify(rbuf + (size_t)w * size, size, 20 + peer, "bibw payload");
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
