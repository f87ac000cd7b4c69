/*
 * poll_ring.c - computation interleaved with polling, the pattern of HPL's
 * panel broadcast (issue 16): how fast a ring of ranks passes a message
 * along when every rank only looks for it between slices of work.
 *
 * One iteration, on every rank: SLICES slices of pure arithmetic (a fixed
 * number of loop steps each, no memory traffic, no MPI calls). Iteration i
 * starts at root = i mod n: the root computes one slice, then sends a message
 * of the current size to its right neighbour and computes its other slices.
 * Every other rank computes its slices and, after each one until the message
 * is there, polls for it once; when it has arrived (and is received), the
 * rank forwards it to its right neighbour unless that is the root. A rank
 * that has done all its slices before the message came polls in a loop
 * without computing, as HPL does when its update is finished. No barrier
 * separates iterations. The message therefore moves one hop per slice at
 * best, and a rank that polls without giving up the processor delays the
 * ranks that share its core, the sender it waits for among them.
 *
 * Two ways of polling, each timed separately:
 *   iprobe  MPI_Iprobe from the left neighbour, then MPI_Recv (HPL's 1ring)
 *   test    MPI_Irecv posted at the start of the iteration, then MPI_Test
 * Reported, per message size (microseconds per iteration, the slowest rank's
 * average, lower is better):
 *   poll_ring_iprobe, poll_ring_test   the two loops above
 *   poll_ring_ideal   the processor time of one iteration's slices (thread
 *                     CPU time, averaged over ranks) times max(1, ranks /
 *                     online cores): what an iteration would take if the
 *                     cores did nothing but arithmetic and shared it fairly.
 *                     It does not depend on the MPI library; the ratio of
 *                     a poll row to it is the cost of polling and waiting.
 * Options beyond common.h's: --slices K (default 8), --work N (loop steps
 * per slice, default 20000: about 20-30 us on a current core). Sizes go
 * from --min-size to --max-size in steps of x16 (default 8 B .. 128 KiB:
 * 8, 128, 2K, 32K); 200 timed iterations per size and mode by default
 * (warm-up 20).
 */
#include "common.h"

#include <time.h>
#include <unistd.h>

static volatile double sink;
static long work = 20000;
static int slices = 8;

/* One slice: a dependent chain of multiply-adds. */
static void slice(void)
{
    long k;
    double x = sink;
    for (k = 0; k < work; k++) x = x * 1.0000001 + 1e-9;
    sink = x;
}

/* The options common.h does not know; removed from argv before bench_init. */
static void own_options(int *argc, char **argv)
{
    int i, j = 1;
    for (i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--slices") && i + 1 < *argc) slices = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--work") && i + 1 < *argc) work = atol(argv[++i]);
        else argv[j++] = argv[i];
    }
    *argc = j;
    argv[j] = NULL;
    if (slices < 1) slices = 1;
    if (work < 0) work = 0;
}

/* One iteration of the ring; returns nothing, checks the payload if asked. */
static void ring_iteration(int it, int use_test, char *buf, size_t size)
{
    int n = bench_o.nranks, me = bench_o.rank;
    int root = it % n, left = (me + n - 1) % n, right = (me + 1) % n;
    int count = (int)size, done = 0, got = 0, flag;
    MPI_Request req = MPI_REQUEST_NULL;

    if (n == 1) {
        for (done = 0; done < slices; done++) slice();
        return;
    }
    if (me == root) {
        slice();
        if (bench_o.check) bench_fill(buf, size, it);
        MPI_Send(buf, count, MPI_BYTE, right, 7, MPI_COMM_WORLD);
        for (done = 1; done < slices; done++) slice();
        return;
    }
    if (use_test) MPI_Irecv(buf, count, MPI_BYTE, left, 7, MPI_COMM_WORLD, &req);
    while (done < slices || !got) {
        if (done < slices) {
            slice();
            done++;
        }
        if (got) continue;
        if (use_test) {
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        } else {
            MPI_Iprobe(left, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (flag) MPI_Recv(buf, count, MPI_BYTE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (!flag) continue;
        got = 1;
        if (bench_o.check) bench_verify(buf, size, it, "ring message");
        if (right != root) MPI_Send(buf, count, MPI_BYTE, right, 7, MPI_COMM_WORLD);
    }
}

/* Average microseconds per iteration of the slowest rank. */
static double time_ring(int use_test, int iters, int warm, char *buf, size_t size)
{
    double t0, mine, worst = 0.0;
    int it;
    for (it = 0; it < warm; it++) ring_iteration(it, use_test, buf, size);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (it = 0; it < iters; it++) ring_iteration(warm + it, use_test, buf, size);
    mine = (MPI_Wtime() - t0) / iters * 1e6;
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return worst;
}

/* Processor time of the calling thread, in seconds. */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    size_t size;
    char *buf;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int cores = online > 0 ? (int)online : 1;

    MPI_Init(&argc, &argv);
    own_options(&argc, argv);
    bench_init(argc, argv, 8, 128u << 10);
    buf = bench_alloc(bench_o.max_size);
    if (bench_o.rank == 0 && !bench_o.csv)
        printf("# %d slices of %ld steps per iteration, %d cores online\n", slices, work, cores);
    bench_header("poll_ring", "size(B)  us per iteration: iprobe | test | ideal (arithmetic only)");

    for (size = bench_first_size(); size <= bench_o.max_size; size = size ? size * 16 : 1) {
        int iters = bench_o.iters > 0 ? bench_o.iters : 200;
        int warm = bench_o.warmup >= 0 ? bench_o.warmup : 20, it, k;
        double t_probe, t_test, mine, ideal_us = 0.0;

        t_probe = time_ring(0, iters, warm, buf, size);
        t_test = time_ring(1, iters, warm, buf, size);
        /* The ideal: processor time of the slices, as if the cores were shared fairly. */
        mine = cpu_seconds();
        for (it = 0; it < iters; it++)
            for (k = 0; k < slices; k++) slice();
        mine = (cpu_seconds() - mine) / iters * 1e6;
        MPI_Reduce(&mine, &ideal_us, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        ideal_us = ideal_us / bench_o.nranks * (bench_o.nranks > cores ? (double)bench_o.nranks / cores : 1.0);
        if (bench_o.rank == 0) {
            bench_emit("poll_ring_iprobe", size, t_probe, "us");
            bench_emit("poll_ring_test", size, t_test, "us");
            bench_emit("poll_ring_ideal", size, ideal_us, "us");
        }
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
