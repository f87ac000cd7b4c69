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
 * Sizes accept K/M/G suffixes (powers of 1024).
 */
#ifndef LOOM_BENCH_COMMON_H
#define LOOM_BENCH_COMMON_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#endif

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef BENCH_IMPL
#define BENCH_IMPL "unknown"
#endif

struct bench_opts {
    size_t min_size, max_size;
    int iters, warmup;      /* -1 means "choose by message size" */
    int check, csv;
    const char *op;
    const char *impl;
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
           "       [--check] [--csv] [--op NAME] [--impl NAME]\n", prog);
}

/* Call right after MPI_Init.  Unknown options abort with exit code 2. */
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
        else {
            if (o->rank == 0) fprintf(stderr, "%s: unknown option '%s'\n", argv[0], a);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        i += takes;
    }
    if (o->min_size > o->max_size) o->max_size = o->min_size;
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
}

#endif /* LOOM_BENCH_COMMON_H */
