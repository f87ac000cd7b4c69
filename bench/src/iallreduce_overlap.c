/*
 * iallreduce_overlap.c - how much of a nonblocking allreduce hides behind
 * computation (same definition as the OSU nonblocking collective tests).
 *
 * Per message size, on every rank:
 *   t_pure    average time of MPI_Iallreduce + MPI_Wait, nothing else
 *   t_cpu     time of a pure compute loop sized to take about t_pure
 *   t_total   average time of MPI_Iallreduce, the compute loop, MPI_Wait
 *   overlap % = 100 * (1 - (t_total - t_cpu) / t_pure), clamped to [0, 100]
 * 100 % means the communication was fully hidden; 0 % means none of it was.
 * The compute loop makes no MPI calls, so overlap needs asynchronous
 * progress in the library.  Reported: overlap averaged over ranks, and
 * t_pure / t_total of the slowest rank in microseconds.
 */
#include "common.h"

static volatile double sink;
static double loops_per_sec;

/* Pure arithmetic, no memory traffic, no MPI calls. */
static void compute(double seconds)
{
    long k, n = (long)(seconds * loops_per_sec);
    double x = 1.0;
    for (k = 0; k < n; k++) x = x * 1.0000001 + 1e-9;
    sink = x;
}

static void calibrate(void)
{
    long n = 1000, k;
    double t, x;
    for (;;) {
        x = 1.0;
        t = MPI_Wtime();
        for (k = 0; k < n; k++) x = x * 1.0000001 + 1e-9;
        sink = x;
        t = MPI_Wtime() - t;
        if (t > 0.02) break;
        n *= 2;
    }
    loops_per_sec = n / t;
}

int main(int argc, char **argv)
{
    size_t size, i;
    float *sbuf, *rbuf;
    MPI_Request req;

    MPI_Init(&argc, &argv);
    bench_init(argc, argv, 4, 4u << 20);
    calibrate();
    sbuf = bench_alloc(bench_o.max_size + 4);
    rbuf = bench_alloc(bench_o.max_size + 4);
    bench_header("iallreduce_overlap", "size(B)  overlap | pure latency | overlapped latency");

    for (size = bench_first_size(); size <= bench_o.max_size; size = bench_next_size(size)) {
        int count = (int)(size / sizeof(float)), warm = bench_warmup(size) / 10, it;
        /* Three timed phases per size: by default a tenth of the usual iterations. */
        int iters = bench_o.iters > 0 ? bench_o.iters : bench_iters(size) / 10;
        double t0, t_pure, t_cpu, t_total, overlap, sum_overlap = 0.0, mine[2], worst[2] = { 0, 0 };

        if (count == 0) continue;
        for (i = 0; i < (size_t)count; i++) sbuf[i] = (float)((bench_o.rank + i) % 16);
        for (it = 0; it < warm; it++) {
            MPI_Iallreduce(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        if (bench_o.check) {
            memset(rbuf, 0, size);
            MPI_Iallreduce(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            for (i = 0; i < (size_t)count; i++) {
                float want = 0.0f;
                int r;
                for (r = 0; r < bench_o.nranks; r++) want += (float)((r + i) % 16);
                if (rbuf[i] != want) bench_fail("iallreduce result mismatch");
            }
        }

        /* 1. pure communication */
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (it = 0; it < iters; it++) {
            MPI_Iallreduce(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        t_pure = (MPI_Wtime() - t0) / iters;

        /* 2. pure computation of about the same length */
        t0 = MPI_Wtime();
        for (it = 0; it < iters; it++) compute(t_pure);
        t_cpu = (MPI_Wtime() - t0) / iters;

        /* 3. both at once */
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (it = 0; it < iters; it++) {
            MPI_Iallreduce(sbuf, rbuf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
            compute(t_pure);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        t_total = (MPI_Wtime() - t0) / iters;

        overlap = 100.0 * (1.0 - (t_total - t_cpu) / t_pure);
        if (overlap < 0.0) overlap = 0.0;
        if (overlap > 100.0) overlap = 100.0;
        mine[0] = t_pure;
        mine[1] = t_total;
        MPI_Reduce(&overlap, &sum_overlap, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (bench_o.rank == 0) {
            bench_emit("iallreduce_overlap", size, sum_overlap / bench_o.nranks, "%");
            bench_emit("iallreduce_pure", size, worst[0] * 1e6, "us");
            bench_emit("iallreduce_total", size, worst[1] * 1e6, "us");
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
