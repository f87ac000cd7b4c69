/*
 * rma.c - one-sided communication (MPI RMA) between ranks 0 and 1.
 *
 * Rank 0 is the origin, rank 1 the target; rank 1 makes no RMA call while
 * rank 0 is timed in the passive-target modes (it waits in MPI_Barrier,
 * which is where an implementation that needs the target's progress gets
 * it).  Ranks above 1 only create the window and take part in barriers and
 * fences.  The mode is chosen with --op NAME (or as the first argument):
 *
 *   put_lat  MPI_Put of `size` bytes, then complete it      time per op (us)
 *   get_lat  MPI_Get of `size` bytes, then complete it      time per op (us)
 *   put_bw   64 MPI_Put, then complete them all             MB/s (10^6 B/s)
 *   get_bw   64 MPI_Get, then complete them all             MB/s (10^6 B/s)
 *   acc_lat  MPI_Accumulate (MPI_SUM, MPI_INT, size/4 of them), complete  us
 *   fop_lat  MPI_Fetch_and_op (MPI_SUM, one int64_t), complete    us (size 8)
 *   cas_lat  MPI_Compare_and_swap (one int64_t), complete         us (size 8)
 *   fence    put_lat with --sync fence: MPI_Put + MPI_Win_fence per epoch
 *   lock     put_lat with --sync lock: lock + MPI_Put + unlock per epoch
 *
 * How operations are completed (--sync, default flush), as OSU does:
 *   flush  rank 0 holds MPI_Win_lock(MPI_LOCK_SHARED, 1) around the whole
 *          loop and calls MPI_Win_flush(1) after each op (or batch of 64)
 *   lock   MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1) ... MPI_Win_unlock(1) around
 *          each op (or batch): a whole passive-target epoch per iteration
 *   fence  every rank calls MPI_Win_fence(0) after each op (or batch): a
 *          whole active-target epoch per iteration
 * Window flavor (--win, default allocate): MPI_Win_allocate, MPI_Win_create
 * over memory of our own, or MPI_Win_create_dynamic + MPI_Win_attach (target
 * displacements are then absolute addresses).  Every window uses
 * disp_unit 1.
 *
 * Bench names in the output: rma_<mode>, with _<sync> and _<win> appended
 * when they differ from the defaults (e.g. rma_get_bw_lock_create).
 *
 * --check verifies data once per size before timing, with the same sync
 * and window: a put of a pattern is read back with MPI_Get by the origin
 * and checked in place by the target; a get reads a pattern the target
 * wrote; accumulate, fetch-and-op and compare-and-swap results are checked
 * against their arithmetic.
 */
#include "common.h"

#define WINDOW 64                 /* operations per iteration in the bw modes */
#define SLOT_BYTES (16u << 20)    /* distinct target slots for a batch, up to this */

enum mode { PUT_LAT, GET_LAT, PUT_BW, GET_BW, ACC_LAT, FOP_LAT, CAS_LAT, FENCE, LOCK, NMODES };
static const char *mode_names[NMODES] = { "put_lat", "get_lat", "put_bw", "get_bw", "acc_lat",
                                          "fop_lat", "cas_lat", "fence", "lock" };
enum sync { S_FLUSH, S_LOCK, S_FENCE, NSYNC };
static const char *sync_names[NSYNC] = { "flush", "lock", "fence" };
enum flavor { W_ALLOCATE, W_CREATE, W_DYNAMIC, NFLAVOR };
static const char *win_names[NFLAVOR] = { "allocate", "create", "dynamic" };

static int mode = PUT_LAT, sync_mode = S_FLUSH, flavor = W_ALLOCATE, rank;
static MPI_Win win;
static unsigned char *wbase;   /* this rank's window memory */
static MPI_Aint tbase;         /* displacement of the target's window start */
static unsigned char *obuf;    /* origin buffer (puts, accumulate input) */
static unsigned char *rbuf;    /* result buffer (gets, fetches) */
static size_t wbytes;          /* bytes in each window and in obuf/rbuf */

static int lookup(const char *name, const char **names, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (!strcmp(name, names[i])) return i;
    return -1;
}

static void rma_usage(const char *prog)
{
    bench_usage(prog);
    printf("       [--op put_lat|get_lat|put_bw|get_bw|acc_lat|fop_lat|cas_lat|fence|lock]\n"
           "       [--sync flush|lock|fence] [--win allocate|create|dynamic]\n"
           "  (the mode may also be given as the first argument: %s put_bw)\n", prog);
}

/* Take this program's own options (a leading mode word, --sync, --win) out of
 * argv so that bench_init sees only the common ones.  Returns 1 when a mode
 * was given as the first argument. */
static int take_own_args(int *argc, char **argv, int *sync_given)
{
    int i, j = 1, positional = 0;
    for (i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (i == 1 && a[0] != '-') {
            mode = lookup(a, mode_names, NMODES);
            if (mode < 0) {
                fprintf(stderr, "rma: unknown mode '%s'\n", a);
                exit(2);
            }
            positional = 1;
        } else if ((!strcmp(a, "--sync") || !strcmp(a, "--win")) && i + 1 < *argc) {
            int is_sync = !strcmp(a, "--sync");
            int v = is_sync ? lookup(argv[i + 1], sync_names, NSYNC)
                            : lookup(argv[i + 1], win_names, NFLAVOR);
            if (v < 0) {
                fprintf(stderr, "rma: unknown %s '%s'\n", a, argv[i + 1]);
                exit(2);
            }
            if (is_sync) { sync_mode = v; *sync_given = 1; }
            else flavor = v;
            i++;
        } else {
            if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
                rma_usage(argv[0]);
                exit(0);
            }
            argv[j++] = argv[i];
        }
    }
    *argc = j;
    argv[j] = NULL;
    return positional;
}

/* ---- epochs: what "complete the operations" means for each --sync ---- */

static void epoch_begin(void)
{
    if (sync_mode == S_FENCE) MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    else if (sync_mode == S_FLUSH && rank == 0) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
}

/* Before the operations of one iteration (rank 0 only issues them). */
static void iter_open(void)
{
    if (sync_mode == S_LOCK && rank == 0) MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
}

/* After them: they are complete at the target when this returns. */
static void iter_close(void)
{
    if (sync_mode == S_FENCE) MPI_Win_fence(0, win);
    else if (rank == 0) {
        if (sync_mode == S_LOCK) MPI_Win_unlock(1, win);
        else MPI_Win_flush(1, win);
    }
}

static void epoch_end(void)
{
    if (sync_mode == S_FENCE) MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    else if (sync_mode == S_FLUSH && rank == 0) MPI_Win_unlock(1, win);
}

/* ---- the operations ---- */

static MPI_Aint slot(size_t size, int w)
{
    size_t nslots = size ? wbytes / size : 1;
    if (nslots > WINDOW) nslots = WINDOW;
    if (nslots < 1) nslots = 1;
    return (MPI_Aint)((size_t)w % nslots * size);
}

/* One iteration's operations, issued by rank 0. */
static void issue(size_t size)
{
    int64_t one = 1, cmp = 0;
    int w;
    switch (mode) {
    case PUT_LAT: case FENCE: case LOCK:
        MPI_Put(obuf, (int)size, MPI_BYTE, 1, tbase, (int)size, MPI_BYTE, win);
        break;
    case GET_LAT:
        MPI_Get(rbuf, (int)size, MPI_BYTE, 1, tbase, (int)size, MPI_BYTE, win);
        break;
    case PUT_BW:
        for (w = 0; w < WINDOW; w++)
            MPI_Put(obuf + slot(size, w), (int)size, MPI_BYTE, 1, tbase + slot(size, w), (int)size,
                    MPI_BYTE, win);
        break;
    case GET_BW:
        for (w = 0; w < WINDOW; w++)
            MPI_Get(rbuf + slot(size, w), (int)size, MPI_BYTE, 1, tbase + slot(size, w), (int)size,
                    MPI_BYTE, win);
        break;
    case ACC_LAT:
        MPI_Accumulate(obuf, (int)(size / sizeof(int)), MPI_INT, 1, tbase,
                       (int)(size / sizeof(int)), MPI_INT, MPI_SUM, win);
        break;
    case FOP_LAT:
        MPI_Fetch_and_op(&one, rbuf, MPI_INT64_T, 1, tbase, MPI_SUM, win);
        break;
    case CAS_LAT:
        /* Swaps once (0 -> 1) at most; after that the comparison fails. */
        MPI_Compare_and_swap(&one, &cmp, rbuf, MPI_INT64_T, 1, tbase, win);
        break;
    }
}

/* ---- --check ---- */

typedef void (*ops_fn)(size_t size);

/* One complete epoch in which rank 0 runs fn(size). */
static void one_epoch(ops_fn fn, size_t size)
{
    epoch_begin();
    iter_open();
    if (rank == 0) fn(size);
    iter_close();
    epoch_end();
}

/* The target reads or writes its own window memory, in an epoch of its own. */
static void target_local_begin(void)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
}
static void target_local_end(void) { MPI_Win_unlock(1, win); }

static void put_pattern(size_t size)
{
    MPI_Put(obuf, (int)size, MPI_BYTE, 1, tbase, (int)size, MPI_BYTE, win);
}
static void get_back(size_t size)
{
    MPI_Get(rbuf, (int)size, MPI_BYTE, 1, tbase, (int)size, MPI_BYTE, win);
}
static void acc_ints(size_t size)
{
    int n = (int)(size / sizeof(int));
    MPI_Accumulate(obuf, n, MPI_INT, 1, tbase, n, MPI_INT, MPI_SUM, win);
}
static void fop_add7(size_t size)
{
    int64_t seven = 7;
    (void)size;
    MPI_Fetch_and_op(&seven, rbuf, MPI_INT64_T, 1, tbase, MPI_SUM, win);
}
static void fop_read(size_t size)
{
    int64_t ignored = 0;
    (void)size;
    MPI_Fetch_and_op(&ignored, rbuf + 8, MPI_INT64_T, 1, tbase, MPI_NO_OP, win);
}
static int64_t cas_origin, cas_compare;
static void cas_once(size_t size)
{
    (void)size;
    MPI_Compare_and_swap(&cas_origin, &cas_compare, rbuf, MPI_INT64_T, 1, tbase, win);
}

static int64_t get64(const unsigned char *p)
{
    int64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
static void put64(unsigned char *p, int64_t v) { memcpy(p, &v, sizeof v); }

static void check_value(const char *what, int64_t got, int64_t want)
{
    if (got != want) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s %s: got %lld want %lld", mode_names[mode], what,
                 (long long)got, (long long)want);
        bench_fail(msg);
    }
}

/* Target memory starts as `init` (written by the target itself), then the
 * origin's operations run and both sides verify. */
static void check_size(size_t size)
{
    size_t i, n = size / sizeof(int);
    int *ti = (int *)(void *)wbase, *oi = (int *)(void *)obuf, *ri = (int *)(void *)rbuf;

    if (rank == 1) {
        target_local_begin();
        if (mode == GET_LAT || mode == GET_BW) bench_fill(wbase, size, 21);
        else if (mode == ACC_LAT) for (i = 0; i < n; i++) ti[i] = (int)(i % 1000);
        else if (mode == FOP_LAT || mode == CAS_LAT) put64(wbase, 5);
        else memset(wbase, 0, size);
        target_local_end();
    }
    MPI_Barrier(MPI_COMM_WORLD);

    switch (mode) {
    case PUT_LAT: case PUT_BW: case FENCE: case LOCK:
        if (rank == 0) { bench_fill(obuf, size, 17); memset(rbuf, 0, size); }
        one_epoch(put_pattern, size);
        one_epoch(get_back, size);
        if (rank == 0) bench_verify(rbuf, size, 17, "rma put, read back with MPI_Get");
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            target_local_begin();
            bench_verify(wbase, size, 17, "rma put, at the target");
            target_local_end();
        }
        break;
    case GET_LAT: case GET_BW:
        if (rank == 0) memset(rbuf, 0, size);
        one_epoch(get_back, size);
        if (rank == 0) bench_verify(rbuf, size, 21, "rma get");
        break;
    case ACC_LAT:
        if (rank == 0) {
            for (i = 0; i < n; i++) oi[i] = (int)((i * 3) % 100) - 7;
            memset(rbuf, 0, size);
        }
        one_epoch(acc_ints, size);
        one_epoch(acc_ints, size);
        one_epoch(get_back, n * sizeof(int));
        if (rank == 0)
            for (i = 0; i < n; i++)
                check_value("accumulate element", ri[i], (int)(i % 1000) + 2 * oi[i]);
        break;
    case FOP_LAT:
        if (rank == 0) memset(rbuf, 0xff, 16);
        one_epoch(fop_add7, 8);
        one_epoch(fop_read, 8);
        if (rank == 0) {
            check_value("fetch_and_op(SUM 7) fetched", get64(rbuf), 5);
            check_value("fetch_and_op(NO_OP) fetched", get64(rbuf + 8), 12);
        }
        break;
    case CAS_LAT:
        cas_origin = 99, cas_compare = 5; /* matches: swaps */
        one_epoch(cas_once, 8);
        if (rank == 0) check_value("compare_and_swap (equal) fetched", get64(rbuf), 5);
        cas_origin = 1, cas_compare = 7;  /* does not match: no swap */
        one_epoch(cas_once, 8);
        if (rank == 0) check_value("compare_and_swap (unequal) fetched", get64(rbuf), 99);
        one_epoch(get_back, 8);
        if (rank == 0) check_value("value after compare_and_swap", get64(rbuf), 99);
        break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- window ---- */

static void make_window(void)
{
    MPI_Aint mine = 0;
    if (flavor == W_ALLOCATE) {
        MPI_Win_allocate((MPI_Aint)wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wbase, &win);
    } else {
        wbase = bench_alloc(wbytes);
        if (flavor == W_CREATE) {
            MPI_Win_create(wbase, (MPI_Aint)wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        } else {
            MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
            if (wbytes) MPI_Win_attach(win, wbase, (MPI_Aint)wbytes);
            MPI_Get_address(wbase, &mine);
        }
    }
    /* Displacement of the target's window start, as the origin names it. */
    if (flavor == W_DYNAMIC) {
        MPI_Bcast(&mine, 1, MPI_AINT, 1, MPI_COMM_WORLD);
        tbase = mine;
    }
    if (rank == 1 && wbytes) {
        target_local_begin();
        memset(wbase, 0, wbytes);
        target_local_end();
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void free_window(void)
{
    if (flavor == W_DYNAMIC && wbytes) MPI_Win_detach(win, wbase);
    MPI_Win_free(&win);
    if (flavor != W_ALLOCATE) free(wbase);
}

int main(int argc, char **argv)
{
    char name[64];
    size_t size;
    int positional, sync_given = 0, bw, fixed8;

    positional = take_own_args(&argc, argv, &sync_given);
    MPI_Init(&argc, &argv);
    bench_init(argc, argv, 1, 4u << 20);
    rank = bench_o.rank;
    if (!positional && strcmp(bench_o.op, "allreduce") != 0) { /* "allreduce": no --op given */
        mode = lookup(bench_o.op, mode_names, NMODES);
        if (mode < 0) {
            if (rank == 0) fprintf(stderr, "rma: unknown --op '%s'\n", bench_o.op);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (mode == FENCE || mode == LOCK) {
        int forced = mode == FENCE ? S_FENCE : S_LOCK;
        if (sync_given && sync_mode != forced) {
            if (rank == 0) fprintf(stderr, "rma: mode %s takes no other --sync\n", mode_names[mode]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        sync_mode = forced;
    }
    if (bench_o.nranks < 2) {
        if (rank == 0) fprintf(stderr, "rma needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    bw = mode == PUT_BW || mode == GET_BW;
    fixed8 = mode == FOP_LAT || mode == CAS_LAT;
    if (fixed8) bench_o.min_size = bench_o.max_size = 8;

    /* The batch of the bw modes goes to distinct slots while they fit. */
    wbytes = bench_o.max_size < 16 ? 16 : bench_o.max_size;
    if (bw) {
        size_t want = bench_o.max_size * WINDOW;
        wbytes = want <= SLOT_BYTES ? want : (wbytes > SLOT_BYTES ? wbytes : SLOT_BYTES);
    }
    obuf = bench_alloc(wbytes);
    rbuf = bench_alloc(wbytes);
    if (rank > 1) wbytes = 0; /* bystanders expose nothing */
    make_window();

    snprintf(name, sizeof name, "rma_%s%s%s%s", mode_names[mode],
             (sync_mode != S_FLUSH && mode != FENCE && mode != LOCK) ? "_" : "",
             (sync_mode != S_FLUSH && mode != FENCE && mode != LOCK) ? sync_names[sync_mode] : "",
             flavor != W_ALLOCATE ? (flavor == W_CREATE ? "_create" : "_dynamic") : "");
    bench_header(name, bw ? "size(B)  bandwidth" : "size(B)  time per operation");

    for (size = bench_first_size(); size <= bench_o.max_size; size = bench_next_size(size)) {
        int iters = bench_iters(size), warm = bench_warmup(size), i;
        double t0 = 0.0, t;

        if (mode == ACC_LAT && size < sizeof(int)) continue; /* no whole int */
        if (bench_o.check) check_size(size);
        if (mode == ACC_LAT && rank == 0) {
            int *oi = (int *)(void *)obuf;
            size_t k;
            for (k = 0; k < size / sizeof(int); k++) oi[k] = 1;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0 || sync_mode == S_FENCE) {
            epoch_begin();
            for (i = 0; i < warm + iters; i++) {
                if (i == warm) t0 = MPI_Wtime();
                iter_open();
                if (rank == 0) issue(size);
                iter_close();
            }
            t = MPI_Wtime() - t0;
            epoch_end();
            if (rank == 0) {
                if (bw) bench_emit(name, size, (double)size * WINDOW * iters / t / 1e6, "MB/s");
                else bench_emit(name, size, t * 1e6 / iters, "us");
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free_window();
    free(obuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
