/*
 * common.h - shared helpers for the Loom benchmark programs.
 *
 * Header-only on purpose: every benchmark is a single .c file that includes
 * this header, so building a program is one compiler call.  Only the most
 * basic MPI calls are used here (Comm_rank/size, Wtime, Abort) so that even
 * a young MPI implementation can build the simplest programs.
 *
 * Options understood by every program:
 *   --min-size BYTES   smallest message size            (default 1)
 *   --max-size BYTES   largest message size             (default 4 MiB)
 *   --iters N          timed iterations per size        (default: by size)
 *   --warmup N         untimed iterations per size      (default: by size)
 *   --check            verify received data, exit non-zero on mismatch
 *   --csv              print "bench,impl,ranks,size,value,unit" lines
 *   --op NAME          collective to time (coll only)
 *   --impl NAME        label used in CSV output (default: BENCH_IMPL)
 *   --mem host|device  where the message buffers live (latency and bw, which
 *                      define BENCH_MEM_DEVICE); device:
 *                      cudaMalloc when built with -DBENCH_CUDA and a GPU is
 *                      there, else Loom's mock device when LOOM_DEVICE_MOCK=1
 *                      (correctness only), else "skipped: no device", exit 0
 * Sizes accept K/M/G suffixes (powers of 1024).
 */
#ifndef LOOM_BENCH_COMMON_H
#define LOOM_BENCH_COMMON_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#endif

#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef BENCH_IMPL
#define BENCH_IMPL "unknown"
#endif
#ifdef BENCH_CUDA
#include <cuda_runtime_api.h>
#endif

struct bench_opts {
    size_t min_size, max_size;
    int iters, warmup;      /* -1 means "choose by message size" */
    int check, csv;
    const char *op;
    const char *impl;
    int device;             /* --mem device */
    int rank, nranks;
};

static struct bench_opts bench_o;

static inline size_t bench_parse_size(const char *s)
{
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || v < 0) {
        fprintf(stderr, "bad size '%s'\n", s);
        exit(2);
    }
    switch (*end) {
    case 'k': case 'K': v *= 1024.0; break;
    case 'm': case 'M': v *= 1024.0 * 1024.0; break;
    case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; break;
    default: break;
    }
    return (size_t)v;
}

static inline void bench_usage(const char *prog)
{
    printf("usage: %s [--min-size B] [--max-size B] [--iters N] [--warmup N]\n"
           "       [--check] [--csv] [--op NAME] [--impl NAME] [--mem host|device]\n", prog);
}

static inline void bench_dev_init(void);

/* Call right after MPI_Init.  Unknown options abort with exit code 2; with
 * --mem device and no device every rank exits here (0). */
static inline void bench_init(int argc, char **argv, size_t def_min, size_t def_max)
{
    struct bench_opts *o = &bench_o;
    int i;
    memset(o, 0, sizeof *o);
    o->min_size = def_min;
    o->max_size = def_max;
    o->iters = o->warmup = -1;
    o->op = "allreduce";
    o->impl = BENCH_IMPL;
    MPI_Comm_rank(MPI_COMM_WORLD, &o->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &o->nranks);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "--check")) { o->check = 1; takes = 0; }
        else if (!strcmp(a, "--csv")) { o->csv = 1; takes = 0; }
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            if (o->rank == 0) bench_usage(argv[0]);
            MPI_Finalize();
            exit(0);
        } else if (!v) {
            if (o->rank == 0) fprintf(stderr, "%s: unknown or incomplete option '%s'\n", argv[0], a);
            MPI_Abort(MPI_COMM_WORLD, 2);
        } else if (!strcmp(a, "--min-size")) o->min_size = bench_parse_size(v);
        else if (!strcmp(a, "--max-size")) o->max_size = bench_parse_size(v);
        else if (!strcmp(a, "--iters")) o->iters = atoi(v);
        else if (!strcmp(a, "--warmup")) o->warmup = atoi(v);
        else if (!strcmp(a, "--op")) o->op = v;
        else if (!strcmp(a, "--impl")) o->impl = v;
#ifdef BENCH_MEM_DEVICE /* the programs that allocate through bench_buf */
        else if (!strcmp(a, "--mem") && (!strcmp(v, "host") || !strcmp(v, "device")))
            o->device = !strcmp(v, "device");
#endif
        else {
            if (o->rank == 0) fprintf(stderr, "%s: unknown option '%s'\n", argv[0], a);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        i += takes;
    }
    if (o->min_size > o->max_size) o->max_size = o->min_size;
    if (o->device) bench_dev_init();
}

/* Size loop helpers: powers of two from min_size to max_size (0 stays 0). */
static inline size_t bench_first_size(void) { return bench_o.min_size; }
static inline size_t bench_next_size(size_t s) { return s ? s * 2 : 1; }

/* Default iteration counts: many for small messages, fewer for big ones. */
static inline int bench_iters(size_t size)
{
    if (bench_o.iters > 0) return bench_o.iters;
    if (size <= 8192) return 10000;
    if (size <= 262144) return 1000;
    return 100;
}

static inline int bench_warmup(size_t size)
{
    if (bench_o.warmup >= 0) return bench_o.warmup;
    return size <= 8192 ? 1000 : 10;
}

static inline void *bench_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0) bytes = 1;
    if (posix_memalign(&p, 64, bytes) != 0 || !p) {
        fprintf(stderr, "rank %d: out of memory (%zu bytes)\n", bench_o.rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    memset(p, 0, bytes);
    return p;
}

/*
 * Device buffers (--mem device).  The device is picked once by
 * bench_dev_init(): CUDA (one device per rank of a node, round robin) when
 * the program was built with -DBENCH_CUDA and a device is there; otherwise
 * Loom's mock device (its test hooks, found with dlsym, so the program
 * still builds and runs against any MPI) when LOOM_DEVICE_MOCK=1; otherwise
 * none: rank 0 prints "skipped: no device" and every rank exits 0.
 * Only MPIs that take device pointers can run this mode (Open MPI and
 * MPICH as Debian builds them are not CUDA-aware).
 */
enum { BENCH_DEV_NONE, BENCH_DEV_CUDA, BENCH_DEV_MOCK };
static int bench_dev_kind = BENCH_DEV_NONE;
static void *(*bench_mock_malloc)(size_t);
static void (*bench_mock_free)(void *);
static void (*bench_mock_memcpy)(void *, const void *, size_t);

static inline void bench_dev_init(void)
{
    const char *mock = getenv("LOOM_DEVICE_MOCK");
    const int want_mock = mock && !strcmp(mock, "1");
    int have = 0, all = 0;
#ifdef BENCH_CUDA
    MPI_Comm node;
    int local = 0, n = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    if (!want_mock && cudaGetDeviceCount(&n) == cudaSuccess && n > 0 &&
        cudaSetDevice(local % n) == cudaSuccess) {
        bench_dev_kind = BENCH_DEV_CUDA;
        have = 1;
    }
#endif
    if (!have && want_mock) {
        void *self = dlopen(NULL, RTLD_LAZY);
        if (self) {
            *(void **)&bench_mock_malloc = dlsym(self, "loom_mock_device_malloc");
            *(void **)&bench_mock_free = dlsym(self, "loom_mock_device_free");
            *(void **)&bench_mock_memcpy = dlsym(self, "loom_mock_device_memcpy");
        }
        if (bench_mock_malloc && bench_mock_free && bench_mock_memcpy) {
            bench_dev_kind = BENCH_DEV_MOCK;
            have = 1;
        }
    }
    /* Every rank or none: a pair with one host side would measure something else. */
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        if (bench_o.rank == 0) {
            printf("skipped: no device\n");
            fflush(stdout);
        }
        MPI_Finalize();
        exit(0);
    }
    if (bench_dev_kind == BENCH_DEV_MOCK && bench_o.rank == 0)
        fprintf(stderr, "# device buffers: Loom's mock device (LOOM_DEVICE_MOCK=1): "
                        "correctness only, its speed means nothing\n");
}

/* A message buffer: device memory with --mem device, else host memory. */
static inline void *bench_buf(size_t bytes)
{
    void *p = NULL;
    if (!bench_o.device) return bench_alloc(bytes);
    if (bytes == 0) bytes = 1;
#ifdef BENCH_CUDA
    if (bench_dev_kind == BENCH_DEV_CUDA && cudaMalloc(&p, bytes) != cudaSuccess) p = NULL;
#endif
    if (bench_dev_kind == BENCH_DEV_MOCK) p = bench_mock_malloc(bytes);
    if (!p) {
        fprintf(stderr, "rank %d: cannot allocate %zu bytes of device memory\n", bench_o.rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return p;
}

static inline void bench_buf_free(void *p)
{
    if (!bench_o.device) {
        free(p);
        return;
    }
#ifdef BENCH_CUDA
    if (bench_dev_kind == BENCH_DEV_CUDA) cudaFree(p);
#endif
    if (bench_dev_kind == BENCH_DEV_MOCK) bench_mock_free(p);
}

/* Copies between a message buffer (either kind) and host memory. */
static inline void bench_copy(void *dst, const void *src, size_t n)
{
    if (!n) return;
    if (!bench_o.device) {
        memcpy(dst, src, n);
        return;
    }
#ifdef BENCH_CUDA
    if (bench_dev_kind == BENCH_DEV_CUDA) {
        cudaMemcpy(dst, src, n, cudaMemcpyDefault);
        return;
    }
#endif
    bench_mock_memcpy(dst, src, n);
}

/* Deterministic byte pattern, different for each (seed, position). */
static inline unsigned char bench_byte(int seed, size_t i)
{
    return (unsigned char)((seed * 131u + i * 7u + (i >> 8)) & 0xffu);
}

static inline void bench_fill(void *buf, size_t n, int seed)
{
    unsigned char *b = buf;
    size_t i;
    for (i = 0; i < n; i++) b[i] = bench_byte(seed, i);
}

/* Verify a buffer filled by bench_fill(seed); abort the job on mismatch. */
static inline void bench_verify(const void *buf, size_t n, int seed, const char *what)
{
    const unsigned char *b = buf;
    size_t i;
    for (i = 0; i < n; i++) {
        if (b[i] != bench_byte(seed, i)) {
            fprintf(stderr, "CHECK FAILED rank %d: %s byte %zu of %zu: got %u want %u\n",
                    bench_o.rank, what, i, n, b[i], bench_byte(seed, i));
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
    }
}

static inline void bench_fail(const char *msg)
{
    fprintf(stderr, "CHECK FAILED rank %d: %s\n", bench_o.rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 4);
}

/* Print the table header (human mode only), on rank 0. */
static inline void bench_header(const char *bench, const char *cols)
{
    if (bench_o.rank != 0 || bench_o.csv) return;
    printf("# %s (%s, %d ranks)\n# %s\n", bench, bench_o.impl, bench_o.nranks, cols);
}

/* Emit one result; call on rank 0 only. */
static inline void bench_emit(const char *bench, size_t size, double value, const char *unit)
{
    if (bench_o.csv)
        printf("%s,%s,%d,%zu,%.6g,%s\n", bench, bench_o.impl, bench_o.nranks, size, value, unit);
    else
        printf("%-24s %10zu %14.3f %s\n", bench, size, value, unit);
    fflush(stdout);
    /* Let the launcher forward the line (and its reader take it) now, not
     * during the next size's timed loop: on a node with more ranks than
     * cores they share the cores with the ranks, and a job's first line
     * cost the next size ~150 us (8 ranks on 2 cores, a 100-call loop of
     * 1 us calls measured 2.1-2.8 us instead of 1.2-1.3). */
    {
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
}

#endif /* LOOM_BENCH_COMMON_H */
