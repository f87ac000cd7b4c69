/*
 * coll.c - latency of one collective, chosen with --op NAME.
 *
 * Ops: barrier bcast reduce allreduce gather scatter allgather
 *      reduce_scatter_block alltoall
 *
 * Data are MPI_FLOAT (reductions: MPI_SUM).  The "size" follows nccl-tests:
 *   bcast, reduce, allreduce      size = bytes of the (whole) buffer
 *   gather, scatter, allgather,   size = total bytes over all ranks, i.e.
 *   reduce_scatter_block,                n * per-rank chunk
 *   alltoall                      size = bytes each rank sends in total
 * Sizes too small to give every rank at least one float are skipped.
 *
 * Each rank times `iters` back-to-back calls; we report the average time
 * per call of the slowest rank (MPI_MAX) in microseconds, plus
 *   algbw = size / time                      (GB/s, 1 GB = 10^9 B)
 *   busbw = algbw * factor, factor = 2(n-1)/n for allreduce,
 *           (n-1)/n for gather/scatter/allgather/reduce_scatter/alltoall,
 *           1 for bcast and reduce.
 *
 * --mem device: the buffers passed to MPI are GPU memory (cudaMalloc; under
 * Loom with LOOM_DEVICE_MOCK=1, Loom's mock device instead, for a check of
 * the path, not for timings). The CUDA runtime is looked up when the
 * program starts (dlopen of libcudart), so the program builds everywhere
 * without CUDA headers; with no CUDA runtime or no device every rank
 * prints "skipped: no device" and the program exits 0. One device per
 * rank of a node (local rank modulo the device count). --check fills and
 * reads the device buffers through host copies (cudaMemcpy), outside the
 * timed loop.
 */
#include "common.h"

#include <dlfcn.h>

enum { BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER, ALLGATHER, RSB, ALLTOALL, NOPS };
static const char *op_names[NOPS] = { "barrier", "bcast", "reduce", "allreduce", "gather",
                                      "scatter", "allgather", "reduce_scatter_block", "alltoall" };

static int op, n, rank;
static float *sbuf, *rbuf; /* what MPI gets: host or device memory */
static float *hs, *hr;     /* host copies for --check (sbuf, rbuf themselves on the host) */
static int on_device;

/* ---- --mem device: CUDA through dlopen, or Loom's mock device */
enum { kMemcpyDefault = 4 }; /* cudaMemcpyDefault */
static struct {
    int (*get_count)(int *);
    int (*set_device)(int);
    int (*alloc)(void **, size_t);
    int (*release)(void *);
    int (*memcpy_)(void *, const void *, size_t, int);
} cu;
/* Loom's test hooks (tests/gpu/loom_mock.h); absent elsewhere. */
extern void *loom_mock_device_malloc(size_t) __attribute__((weak));
extern void loom_mock_device_free(void *) __attribute__((weak));
extern void loom_mock_device_memcpy(void *, const void *, size_t) __attribute__((weak));
static int use_mock;

static int local_rank(void)
{
    MPI_Comm node;
    int lr = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &lr);
    MPI_Comm_free(&node);
    return lr;
}

/* 1 when device buffers can be had, with the runtime's entry points set. */
static int device_open(void)
{
    static const char *libs[] = { "libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                  "libcudart.so.11.0" };
    const char *mock = getenv("LOOM_DEVICE_MOCK");
    void *h = NULL;
    int i, count = 0;
    if (mock && !strcmp(mock, "1") && loom_mock_device_malloc) {
        void *probe = loom_mock_device_malloc(1);
        if (probe) {
            loom_mock_device_free(probe);
            use_mock = 1;
            return 1;
        }
    }
    for (i = 0; i < 4 && !h; i++) h = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) return 0;
    *(void **)&cu.get_count = dlsym(h, "cudaGetDeviceCount");
    *(void **)&cu.set_device = dlsym(h, "cudaSetDevice");
    *(void **)&cu.alloc = dlsym(h, "cudaMalloc");
    *(void **)&cu.release = dlsym(h, "cudaFree");
    *(void **)&cu.memcpy_ = dlsym(h, "cudaMemcpy");
    if (!cu.get_count || !cu.set_device || !cu.alloc || !cu.release || !cu.memcpy_) return 0;
    if (cu.get_count(&count) != 0 || count <= 0) return 0;
    return cu.set_device(local_rank() % count) == 0;
}

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    if (use_mock) p = loom_mock_device_malloc(bytes);
    else if (cu.alloc(&p, bytes) != 0) p = NULL;
    if (!p) {
        fprintf(stderr, "rank %d: cannot allocate %zu bytes of device memory\n", rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return p;
}

static void dev_free(void *p)
{
    if (use_mock) loom_mock_device_free(p);
    else cu.release(p);
}

/* Either direction (the runtime finds out which). */
static void dev_copy(void *dst, const void *src, size_t bytes)
{
    if (use_mock) loom_mock_device_memcpy(dst, src, bytes);
    else if (cu.memcpy_(dst, src, bytes, kMemcpyDefault) != 0) bench_fail("cudaMemcpy failed");
}

/* Value of element i of the block that rank `src` contributes for rank `dst`. */
static float val(int src, int dst, size_t i) { return (float)((src * 31 + dst * 7 + i) % 4096); }
static float small(int src, int dst, size_t i) { return (float)((src + dst + i) % 16); }

/* Elements per rank-chunk for a given size, 0 if the size is too small. */
static size_t chunk_elems(size_t size)
{
    switch (op) {
    case BCAST: case REDUCE: case ALLREDUCE: return size / sizeof(float);
    case BARRIER: return 0;
    default: return size / sizeof(float) / (size_t)n;
    }
}

static void run_op(size_t c)
{
    int k = (int)c;
    switch (op) {
    case BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
    case BCAST: MPI_Bcast(sbuf, k, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
    case REDUCE: MPI_Reduce(sbuf, rbuf, k, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD); break;
    case ALLREDUCE: MPI_Allreduce(sbuf, rbuf, k, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case GATHER: MPI_Gather(sbuf, k, MPI_FLOAT, rbuf, k, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
    case SCATTER: MPI_Scatter(sbuf, k, MPI_FLOAT, rbuf, k, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
    case ALLGATHER: MPI_Allgather(sbuf, k, MPI_FLOAT, rbuf, k, MPI_FLOAT, MPI_COMM_WORLD); break;
    case RSB: MPI_Reduce_scatter_block(sbuf, rbuf, k, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case ALLTOALL: MPI_Alltoall(sbuf, k, MPI_FLOAT, rbuf, k, MPI_FLOAT, MPI_COMM_WORLD); break;
    }
}

/* Fill inputs with known values, run the op once, verify the outputs. */
static void check_op(size_t c)
{
    size_t i, b, total = (op <= ALLREDUCE) ? c : c * (size_t)n;
    int r;
    float *dev_s = sbuf, *dev_r = rbuf; /* what MPI gets */
    float *sbuf = hs, *rbuf = hr;       /* their host side (the same without --mem device) */
    for (i = 0; i < total; i++) {
        b = (op <= ALLREDUCE) ? 0 : i / c;
        sbuf[i] = (op == REDUCE || op == ALLREDUCE || op == RSB) ? small(rank, (int)b, i % c)
                  : (op == BCAST && rank != 0) ? -1.0f : val(rank, (int)b, i % c);
        rbuf[i] = -1.0f;
    }
    if (op == GATHER || op == ALLGATHER) /* each rank sends its own block */
        for (i = 0; i < c; i++) sbuf[i] = val(rank, 0, i);
    if (on_device) {
        dev_copy(dev_s, hs, total * sizeof(float));
        dev_copy(dev_r, hr, total * sizeof(float));
    }
    run_op(c);
    if (on_device) {
        dev_copy(hs, dev_s, total * sizeof(float));
        dev_copy(hr, dev_r, total * sizeof(float));
    }
    for (i = 0; i < total; i++) {
        float want, got;
        b = (op <= ALLREDUCE) ? 0 : i / c;
        switch (op) {
        case BCAST: want = val(0, 0, i); got = sbuf[i]; break;
        case REDUCE: case ALLREDUCE: case RSB:
            if (op == REDUCE && rank != 0) return;
            if (op == RSB && i >= c) return;
            for (want = 0.0f, r = 0; r < n; r++) want += small(r, op == RSB ? rank : 0, i % c);
            got = rbuf[i];
            break;
        case GATHER: if (rank != 0) return; /* fall through */
        case ALLGATHER: want = val((int)b, 0, i % c); got = rbuf[i]; break;
        case SCATTER: if (i >= c) return; want = val(0, rank, i); got = rbuf[i]; break;
        case ALLTOALL: want = val((int)b, rank, i % c); got = rbuf[i]; break;
        default: return;
        }
        if (got != want) {
            char msg[160];
            snprintf(msg, sizeof msg, "%s element %zu: got %g want %g", op_names[op], i,
                     (double)got, (double)want);
            bench_fail(msg);
        }
    }
}

int main(int argc, char **argv)
{
    size_t size, cap;
    double factor = 1.0;
    int i, j;

    MPI_Init(&argc, &argv);
    /* --mem host|device is this program's own: taken out before bench_init. */
    for (i = 1, j = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mem") && i + 1 < argc) {
            on_device = !strcmp(argv[++i], "device");
            continue;
        }
        argv[j++] = argv[i];
    }
    argc = j;
    bench_init(argc, argv, 1, 4u << 20);
    n = bench_o.nranks;
    rank = bench_o.rank;
    for (op = 0; op < NOPS && strcmp(op_names[op], bench_o.op); op++) {}
    if (op == NOPS) {
        if (rank == 0) fprintf(stderr, "coll: unknown --op '%s'\n", bench_o.op);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (op == ALLREDUCE) factor = 2.0 * (n - 1) / n;
    else if (op >= GATHER) factor = (double)(n - 1) / n;
    if (op == BARRIER) bench_o.min_size = bench_o.max_size = 0;

    /* Largest buffer any rank needs: a whole size, plus slack for rounding. */
    cap = bench_o.max_size + 64;
    hs = bench_alloc(cap);
    hr = bench_alloc(cap);
    sbuf = hs;
    rbuf = hr;
    if (on_device) {
        int ok = device_open(), all = 0;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all) {
            printf("coll: rank %d: --mem device skipped: no device%s\n", rank,
                   ok ? " on another rank" : "");
            free(hs);
            free(hr);
            MPI_Finalize();
            return 0;
        }
        sbuf = dev_alloc(cap);
        rbuf = dev_alloc(cap);
    }
    bench_header(op_names[op], on_device ? "size(B)  latency | algbw | busbw  (device buffers)"
                                         : "size(B)  latency | algbw | busbw");

    for (size = bench_first_size(); size <= bench_o.max_size; size = bench_next_size(size)) {
        size_t c = chunk_elems(size);
        int iters = bench_iters(size), warm = bench_warmup(size), i;
        double t0, t, worst = 0.0, bytes;

        if (op != BARRIER && c == 0) continue;
        if (bench_o.check) check_op(c);
        for (i = 0; i < warm; i++) run_op(c);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (i = 0; i < iters; i++) run_op(c);
        t = (MPI_Wtime() - t0) / iters;
        MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank != 0) continue;
        bench_emit(op_names[op], size, worst * 1e6, "us");
        if (op == BARRIER) continue;
        bytes = (double)c * sizeof(float) * (op <= ALLREDUCE ? 1 : n);
        bench_emit(op_names[op], size, bytes / worst / 1e9, "algbw_GB/s");
        bench_emit(op_names[op], size, bytes / worst / 1e9 * factor, "busbw_GB/s");
    }
    if (on_device) {
        dev_free(sbuf);
        dev_free(rbuf);
    }
    free(hs);
    free(hr);
    MPI_Finalize();
    return 0;
}
