/*
 * latency.c - ping-pong between ranks 0 and 1.
 *
 * Rank 0 sends a message to rank 1, which sends it straight back.  The
 * reported value is the one-way latency: half of the average round trip,
 * in microseconds.  Ranks other than 0 and 1 only take part in barriers.
 * --mem device: both buffers in device memory (common.h).
 */
#define BENCH_MEM_DEVICE 1
#include "common.h"

int main(int argc, char **argv)
{
    size_t size;
    char *sbuf, *rbuf, *check;
    int peer;

    MPI_Init(&argc, &argv);
    bench_init(argc, argv, 1, 4u << 20);
    if (bench_o.nranks < 2) {
        if (bench_o.rank == 0) fprintf(stderr, "latency needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    peer = 1 - bench_o.rank;
    sbuf = bench_buf(bench_o.max_size);
    rbuf = bench_buf(bench_o.max_size);
    check = bench_alloc(bench_o.max_size); /* host view of either for --check */
    bench_header("latency", "size(B)  one-way latency");

    for (size = bench_first_size(); size <= bench_o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(size), warm = bench_warmup(size), i;
        double t0 = 0.0;
        int count = (int)size;

        if (bench_o.check && bench_o.rank < 2) {
            /* One verified exchange per size, before timing. */
            bench_fill(check, size, bench_o.rank + 1);
            bench_copy(sbuf, check, size);
            memset(check, 0, size);
            bench_copy(rbuf, check, size);
            if (bench_o.rank == 0) {
                MPI_Send(sbuf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(rbuf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
            bench_copy(check, rbuf, size);
            bench_verify(check, size, peer + 1, "latency payload");
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
    bench_buf_free(sbuf);
    bench_buf_free(rbuf);
    free(check);
    MPI_Finalize();
    return 0;
}
