/*
 * bw.c - streaming (unidirectional) bandwidth between ranks 0 and 1.
 *
 * Each iteration, rank 0 posts a window of WINDOW nonblocking sends and
 * rank 1 a window of matching nonblocking receives (each into its own
 * buffer slot); both wait for all of them, then rank 1 returns a 4-byte
 * acknowledgement so the timing covers delivery.  Reported value:
 * bytes moved / elapsed time in MB/s (1 MB = 10^6 bytes).
 * --mem device: send and receive buffers in device memory (common.h).
 */
#define BENCH_MEM_DEVICE 1
#include "common.h"

#define WINDOW 64

int main(int argc, char **argv)
{
    MPI_Request req[WINDOW];
    size_t size;
    char *sbuf, *rbuf, *check;
    int ack = 0;

    MPI_Init(&argc, &argv);
    bench_init(argc, argv, 1, 4u << 20);
    if (bench_o.nranks < 2) {
        if (bench_o.rank == 0) fprintf(stderr, "bw needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Sends may share one buffer (read-only); receives get distinct slots. */
    sbuf = bench_buf(bench_o.max_size);
    rbuf = bench_buf(bench_o.rank == 1 ? bench_o.max_size * WINDOW : 1);
    check = bench_alloc(bench_o.max_size); /* host view of either for --check */
    bench_header("bw", "size(B)  bandwidth");

    for (size = bench_first_size(); size <= bench_o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(size), warm = bench_warmup(size), i, w;
        int count = (int)size;
        double t0 = 0.0;

        if (bench_o.rank == 0 && bench_o.check) {
            bench_fill(check, size, 11);
            bench_copy(sbuf, check, size);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (bench_o.rank == 0) {
            for (i = 0; i < warm + iters; i++) {
                if (i == warm) t0 = MPI_Wtime();
                for (w = 0; w < WINDOW; w++)
                    MPI_Isend(sbuf, count, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &req[w]);
                MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                MPI_Recv(&ack, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            bench_emit("bw", size, (double)size * WINDOW * iters / (MPI_Wtime() - t0) / 1e6, "MB/s");
        } else if (bench_o.rank == 1) {
            for (i = 0; i < warm + iters; i++) {
                for (w = 0; w < WINDOW; w++)
                    MPI_Irecv(rbuf + (size_t)w * size, count, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &req[w]);
                MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
                MPI_Send(&ack, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
            }
            if (bench_o.check)
                for (w = 0; w < WINDOW; w++) {
                    bench_copy(check, rbuf + (size_t)w * size, size);
                    bench_verify(check, size, 11, "bw payload");
                }
        }
    }
    bench_buf_free(sbuf);
    bench_buf_free(rbuf);
    free(check);
    MPI_Finalize();
    return 0;
}
