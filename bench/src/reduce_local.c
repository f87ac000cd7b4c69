/*
 * reduce_local: how fast one rank's reduction kernel runs, against a plain
 * copy of the same buffer on the same memory.
 *
 *   reduce_local [--mem host|device] [--op sum] [--min-size B] [--max-size B]
 *
 * For each size, MPI_Reduce_local(in, inout, n, type, op) is timed, then a
 * copy of the same n bytes (memcpy on the host, cudaMemcpy device to device
 * on a GPU) on the same buffers. Both are reported as the memory traffic
 * they cause per second: a reduction reads two buffers and writes one (3n
 * bytes), a copy reads one and writes one (2n bytes). "kernel/copy" is the
 * reduction's rate over the copy's: 1.0 means the kernel runs at the
 * memory's speed. Every rank measures alone (run it at 1 rank); rank 0
 * prints. Types: float, double, int32 and, where the MPI has them,
 * MPIX_C_FLOAT16 and MPIX_BFLOAT16 (16-bit floats).
 *
 * With --check the first pass verifies a sum of small integers.
 */
#define BENCH_MEM_DEVICE 1
#include "common.h"

#include <time.h>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void dev_sync(void)
{
#ifdef BENCH_CUDA
    if (bench_o.device && bench_dev_kind == BENCH_DEV_CUDA) cudaDeviceSynchronize();
#endif
}

struct rtype {
    const char *name;
    MPI_Datatype type;
    size_t bytes;
};

/* Fill n elements of a host staging buffer with the small integer v. */
static void fill_value(void *h, size_t n, const struct rtype *t, int v)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (t->bytes == 4 && t->type == MPI_FLOAT) ((float *)h)[i] = (float)v;
        else if (t->bytes == 8) ((double *)h)[i] = (double)v;
        else if (t->bytes == 4) ((int32_t *)h)[i] = v;
        else {
            /* 16-bit floats: small integers have exact bit patterns. */
            uint16_t bits;
            if (!strcmp(t->name, "bfloat16")) {
                float f = (float)v;
                uint32_t u;
                memcpy(&u, &f, 4);
                bits = (uint16_t)(u >> 16);
            } else {
                /* half: v in 0..3 */
                static const uint16_t half[4] = {0x0000, 0x3c00, 0x4000, 0x4200};
                bits = half[v & 3];
            }
            ((uint16_t *)h)[i] = bits;
        }
    }
}

int main(int argc, char **argv)
{
    struct rtype types[5];
    int ntypes = 0, ti;
    size_t size;
    MPI_Init(&argc, &argv);
    bench_init(argc, argv, 1 << 20, 256u << 20);
    types[ntypes++] = (struct rtype){"float", MPI_FLOAT, 4};
    types[ntypes++] = (struct rtype){"double", MPI_DOUBLE, 8};
    types[ntypes++] = (struct rtype){"int32", MPI_INT32_T, 4};
#ifdef MPIX_C_FLOAT16
    types[ntypes++] = (struct rtype){"float16", MPIX_C_FLOAT16, 2};
#endif
#ifdef MPIX_BFLOAT16
    types[ntypes++] = (struct rtype){"bfloat16", MPIX_BFLOAT16, 2};
#endif
    MPI_Op op = MPI_SUM;
    if (!strcmp(bench_o.op, "max")) op = MPI_MAX;
    else if (!strcmp(bench_o.op, "prod")) op = MPI_PROD;
    else if (strcmp(bench_o.op, "sum") && strcmp(bench_o.op, "allreduce")) {
        if (bench_o.rank == 0) fprintf(stderr, "reduce_local: --op sum|max|prod\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (bench_o.rank == 0 && !bench_o.csv)
        printf("# reduce_local (%s, %s memory): traffic in GB/s (reduce 3n, copy 2n bytes)\n"
               "# %-9s %12s %12s %12s %8s\n",
               bench_o.impl, bench_o.device ? "device" : "host", "type", "size", "reduce",
               "copy", "ratio");
    void *in = bench_buf(bench_o.max_size);
    void *io = bench_buf(bench_o.max_size);
    for (ti = 0; ti < ntypes; ti++) {
        const struct rtype *t = &types[ti];
        for (size = bench_first_size(); size && size <= bench_o.max_size;
             size = bench_next_size(size)) {
            size_t n = size / t->bytes, bytes = n * t->bytes;
            int iters = bench_o.iters > 0 ? bench_o.iters : (bytes <= (8u << 20) ? 200 : 20);
            int i;
            if (!n) continue;
            if (bench_o.check) {
                void *h = malloc(bytes);
                fill_value(h, n, t, 1);
                bench_copy(in, h, bytes);
                fill_value(h, n, t, 2);
                bench_copy(io, h, bytes);
                MPI_Reduce_local(in, io, (int)n, t->type, MPI_SUM);
                void *g = malloc(bytes);
                bench_copy(g, io, bytes);
                fill_value(h, n, t, 3);
                if (memcmp(g, h, bytes)) bench_fail("reduce_local: 1 + 2 != 3");
                free(g);
                free(h);
            }
            /* Warm up both, then time each. */
            MPI_Reduce_local(in, io, (int)n, t->type, op);
            bench_copy(io, in, bytes);
            dev_sync();
            double t0 = now_s();
            for (i = 0; i < iters; i++) MPI_Reduce_local(in, io, (int)n, t->type, op);
            dev_sync();
            double tr = (now_s() - t0) / iters;
            t0 = now_s();
            for (i = 0; i < iters; i++) bench_copy(io, in, bytes);
            dev_sync();
            double tc = (now_s() - t0) / iters;
            double gr = 3.0 * bytes / tr / 1e9, gc = 2.0 * bytes / tc / 1e9;
            if (bench_o.rank == 0) {
                if (bench_o.csv)
                    printf("reduce_local_%s,%s,%d,%zu,%.6g,GB/s\n"
                           "copy_%s,%s,%d,%zu,%.6g,GB/s\n",
                           t->name, bench_o.impl, bench_o.nranks, bytes, gr, t->name,
                           bench_o.impl, bench_o.nranks, bytes, gc);
                else
                    printf("  %-9s %12zu %12.1f %12.1f %8.2f\n", t->name, bytes, gr, gc, gr / gc);
                fflush(stdout);
            }
        }
    }
    bench_buf_free(in);
    bench_buf_free(io);
    MPI_Finalize();
    return 0;
}
