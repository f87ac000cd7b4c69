/*
 * msgrate.c - small-message rate.
 *
 * Ranks are split into sender/receiver pairs: rank i (first half) streams
 * windows of WINDOW messages to rank i + n/2 (second half), which answers
 * each window with a 4-byte acknowledgement.  With an odd rank count the
 * last rank idles.  Reported value: messages per second summed over all
 * pairs, in millions (Mmsg/s).  Default sizes: 1 B .. 8 KiB.
 */
#include "common.h"

#define WINDOW 64

int main(int argc, char **argv)
{
    MPI_Request req[WINDOW];
    size_t size;
    char *sbuf, *rbuf;
    int pairs, sender, receiver, peer = -1, ack = 0;

    MPI_Init(&argc, &argv);
    bench_init(argc, argv, 1, 8192);
    pairs = bench_o.nranks / 2;
    if (pairs < 1) {
        if (bench_o.rank == 0) fprintf(stderr, "msgrate needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    sender = bench_o.rank < pairs;
    receiver = bench_o.rank >= pairs && bench_o.rank < 2 * pairs;
    if (sender) peer = bench_o.rank + pairs;
    if (receiver) peer = bench_o.rank - pairs;
    sbuf = bench_alloc(bench_o.max_size);
    rbuf = bench_alloc(receiver ? bench_o.max_size * WINDOW : 1);
    bench_header("msgrate", "size(B)  aggregate message rate");

    for (size = bench_first_size(); size <= bench_o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(size), warm = bench_warmup(size), i, w;
        int count = (int)size;
        double t0 = 0.0, elapsed;

        if (sender && bench_o.check) bench_fill(sbuf, size, 30 + bench_o.rank);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (i = 0; (sender || receiver) && i < warm + iters; i++) {
            if (i == warm) {
                /* Start the clock together on every pair. */
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = MPI_Wtime();
            }
            for (w = 0; w < WINDOW; w++) {
                if (sender)
                    MPI_Isend(sbuf, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req[w]);
                else
                    MPI_Irecv(rbuf + (size_t)w * size, count, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req[w]);
            }
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
            if (sender)
                MPI_Recv(&ack, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else
                MPI_Send(&ack, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
        }
        if (!sender && !receiver) {
            MPI_Barrier(MPI_COMM_WORLD); /* matches the barrier at i == warm */
        }
        /* Slowest pair defines the aggregate rate. */
        elapsed = MPI_Wtime() - t0;
        {
            double worst = 0.0;
            MPI_Reduce(&elapsed, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (bench_o.rank == 0)
                bench_emit("msgrate", size, (double)pairs * WINDOW * iters / worst / 1e6, "Mmsg/s");
        }
        if (receiver && bench_o.check)
            for (w = 0; w < WINDOW; w++)
                bench_verify(rbuf + (size_t)w * size, size, 30 + peer, "msgrate payload");
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
