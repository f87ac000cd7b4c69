/* Puts and gets of many sizes between every pair of ranks, in every kind
 * of epoch, on every window flavor, checked byte for byte, with the bytes
 * just past each transfer checked untouched.
 *
 * Across nodes Loom moves a contiguous put or get to a rank of another
 * node as a libfabric RMA write or read from LOOM_RMA_OFI_MIN bytes up
 * (allocate and create windows), and as a message below that, for
 * non-contiguous data and on dynamic windows; this program passes through
 * all of these and expects the same bytes from each:
 * - sizes 0, 1, odd ones, 64 KiB + 5, ~200 KB, and threshold-1, threshold,
 *   threshold+1 for the threshold given as argument;
 * - epochs: fence, lock_all + flush_all, an exclusive lock per target,
 *   post-start-complete-wait, MPI_Rput / MPI_Rget completed by MPI_Waitall;
 * - non-contiguous origin or target (vector types) against contiguous,
 *   the same results;
 * - a put or get partly past a target's window: MPI_ERR_RMA_RANGE at the
 *   origin and nothing written;
 * - a counter block incremented with MPI_Get + MPI_Put under exclusive
 *   locks by every rank: no increment lost (an unlock must not release the
 *   lock before the put landed).
 *
 *   rma_sizes [threshold]      prints "rma_sizes: rank R: N checks passed" */
#include "rma_checks.h"

static int me, np;
enum { MAXB = 200003, SLOT = 200064, KEEP = 0xEE, FRESH = 0x11 };
enum { FENCE, LOCKALL, LOCKX, PSCW, REQ, NMODES };
static const char* modeName[NMODES] = {"fence", "lock_all", "lock", "pscw", "Rput/Rget"};
static const char* flavorName[3] = {"allocate", "create", "dynamic"};

typedef struct {
  MPI_Win win;
  unsigned char* mem; /* np slots of SLOT bytes */
  MPI_Aint* base;     /* dynamic: every rank's mem address; else NULL */
  int flavor;
} W;

static MPI_Aint at(const W* w, int t, MPI_Aint off) {
  return w->base ? MPI_Aint_add(w->base[t], off) : off;
}

static unsigned char pat(int o, int t, size_t s, size_t i) {
  return (unsigned char)(o * 31 + t * 7 + i * 13 + s * 3 + 1);
}

static void openW(W* w, int flavor) {
  const MPI_Aint bytes = (MPI_Aint)np * SLOT;
  w->flavor = flavor;
  w->base = NULL;
  if (flavor == 0) {
    OK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->mem, &w->win));
  } else {
    w->mem = malloc((size_t)bytes);
    if (flavor == 1) {
      OK(MPI_Win_create(w->mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
    } else {
      OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w->win));
      OK(MPI_Win_attach(w->win, w->mem, bytes));
      MPI_Aint mine;
      OK(MPI_Get_address(w->mem, &mine));
      w->base = malloc(sizeof(MPI_Aint) * (size_t)np);
      OK(MPI_Allgather(&mine, 1, MPI_AINT, w->base, 1, MPI_AINT, MPI_COMM_WORLD));
    }
  }
  OK(MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN));
}

static void closeW(W* w) {
  if (w->flavor == 2) OK(MPI_Win_detach(w->win, w->mem));
  OK(MPI_Win_free(&w->win));
  if (w->flavor != 0) free(w->mem);
  free(w->base);
}

/* Fills this rank's window with KEEP once every rank is done with the
 * previous round, then every rank may write. */
static void reset(W* w) {
  OK(MPI_Barrier(MPI_COMM_WORLD));
  OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, w->win));
  memset(w->mem, KEEP, (size_t)np * SLOT);
  OK(MPI_Win_unlock(me, w->win));
  OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Slot o of this rank's window holds origin o's s bytes, then KEEP. */
static void checkSlots(const W* w, size_t s, const char* what) {
  for (int o = 0; o < np; ++o) {
    const unsigned char* p = w->mem + (size_t)o * SLOT;
    for (size_t i = 0; i < s; ++i)
      if (p[i] != pat(o, me, s, i)) {
        fprintf(stderr, "%s: rank %d: %s: %zu-byte put from rank %d: byte %zu is %d, expected %d\n",
                prog, wrank, what, s, o, i, p[i], pat(o, me, s, i));
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    EQ(p[s], KEEP);
  }
  ++checks;
}

/* got[t] holds what target t has for this rank (s bytes), then FRESH. */
static void checkGot(unsigned char* got, size_t s, const char* what) {
  for (int t = 0; t < np; ++t) {
    const unsigned char* p = got + (size_t)t * SLOT;
    for (size_t i = 0; i < s; ++i)
      if (p[i] != pat(me, t, s, i)) {
        fprintf(stderr, "%s: rank %d: %s: %zu-byte get from rank %d: byte %zu is %d, expected %d\n",
                prog, wrank, what, s, t, i, p[i], pat(me, t, s, i));
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    EQ(p[s], FRESH);
  }
  ++checks;
}

static void puts_(W* w, unsigned char* src, size_t s, int mode) {
  const int n = (int)s;
  MPI_Group all;
  MPI_Request* rq = malloc(sizeof(MPI_Request) * (size_t)np);
  OK(MPI_Comm_group(MPI_COMM_WORLD, &all));
  for (int t = 0; t < np; ++t)
    for (size_t i = 0; i < s; ++i) src[(size_t)t * SLOT + i] = pat(me, t, s, i);
  reset(w);
  switch (mode) {
    case FENCE:
      OK(MPI_Win_fence(0, w->win));
      break;
    case LOCKALL:
    case REQ:
      OK(MPI_Win_lock_all(0, w->win));
      break;
    case PSCW:
      OK(MPI_Win_post(all, 0, w->win));
      OK(MPI_Win_start(all, 0, w->win));
      break;
  }
  for (int k = 0; k < np; ++k) {
    const int t = (me + k) % np;
    unsigned char* from = src + (size_t)t * SLOT;
    const MPI_Aint d = at(w, t, (MPI_Aint)me * SLOT);
    if (mode == LOCKX) OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w->win));
    if (mode == REQ)
      OK(MPI_Rput(from, n, MPI_BYTE, t, d, n, MPI_BYTE, w->win, &rq[t]));
    else
      OK(MPI_Put(from, n, MPI_BYTE, t, d, n, MPI_BYTE, w->win));
    if (mode == LOCKX) OK(MPI_Win_unlock(t, w->win));
  }
  switch (mode) {
    case FENCE:
      OK(MPI_Win_fence(0, w->win));
      break;
    case LOCKALL:
      OK(MPI_Win_flush_all(w->win));
      OK(MPI_Win_unlock_all(w->win));
      break;
    case REQ:
      /* Local completion only: the flush makes it remote. */
      OK(MPI_Waitall(np, rq, MPI_STATUSES_IGNORE));
      OK(MPI_Win_flush_all(w->win));
      OK(MPI_Win_unlock_all(w->win));
      break;
    case PSCW:
      OK(MPI_Win_complete(w->win));
      OK(MPI_Win_wait(w->win));
      break;
  }
  OK(MPI_Barrier(MPI_COMM_WORLD));
  OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w->win));
  checkSlots(w, s, modeName[mode]);
  OK(MPI_Win_unlock(me, w->win));
  OK(MPI_Group_free(&all));
  free(rq);
}

/* Reads back what puts_ left (each target's slot `me`). */
static void gets_(W* w, unsigned char* got, size_t s, int mode) {
  const int n = (int)s;
  MPI_Group all;
  MPI_Request* rq = malloc(sizeof(MPI_Request) * (size_t)np);
  OK(MPI_Comm_group(MPI_COMM_WORLD, &all));
  memset(got, FRESH, (size_t)np * SLOT);
  if (mode == FENCE) OK(MPI_Win_fence(0, w->win));
  if (mode == LOCKALL || mode == REQ) OK(MPI_Win_lock_all(0, w->win));
  if (mode == PSCW) {
    OK(MPI_Win_post(all, 0, w->win));
    OK(MPI_Win_start(all, 0, w->win));
  }
  for (int k = 0; k < np; ++k) {
    const int t = (me + np - k) % np;
    unsigned char* into = got + (size_t)t * SLOT;
    const MPI_Aint d = at(w, t, (MPI_Aint)me * SLOT);
    if (mode == LOCKX) OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, w->win));
    if (mode == REQ)
      OK(MPI_Rget(into, n, MPI_BYTE, t, d, n, MPI_BYTE, w->win, &rq[t]));
    else
      OK(MPI_Get(into, n, MPI_BYTE, t, d, n, MPI_BYTE, w->win));
    if (mode == LOCKX) OK(MPI_Win_unlock(t, w->win));
  }
  if (mode == REQ) {
    /* A get's request completes with its data. */
    OK(MPI_Waitall(np, rq, MPI_STATUSES_IGNORE));
    checkGot(got, s, "MPI_Rget before unlock_all");
  }
  if (mode == FENCE) OK(MPI_Win_fence(0, w->win));
  if (mode == LOCKALL) OK(MPI_Win_flush_all(w->win));
  if (mode == LOCKALL || mode == REQ) OK(MPI_Win_unlock_all(w->win));
  if (mode == PSCW) {
    OK(MPI_Win_complete(w->win));
    OK(MPI_Win_wait(w->win));
  }
  checkGot(got, s, modeName[mode]);
  OK(MPI_Group_free(&all));
  free(rq);
}

/* Vector types on one side, contiguous on the other: the same ints move. */
static void strided(W* w, int count) {
  MPI_Datatype vec;
  OK(MPI_Type_vector(count, 1, 2, MPI_INT, &vec));
  OK(MPI_Type_commit(&vec));
  int* src = malloc(sizeof(int) * 2 * (size_t)count);
  int* back = malloc(sizeof(int) * 2 * (size_t)count);
  const int t = (me + 1) % np, from = (me + np - 1) % np;
  for (int i = 0; i < 2 * count; ++i) src[i] = (i % 2) ? -7 : me * 100000 + i / 2;
  reset(w);
  OK(MPI_Win_fence(0, w->win));
  /* Strided origin -> contiguous slot `me`; contiguous origin -> strided
   * target in the second half of the slot. */
  OK(MPI_Put(src, 1, vec, t, at(w, t, (MPI_Aint)me * SLOT), count, MPI_INT, w->win));
  int* dense = malloc(sizeof(int) * (size_t)count);
  for (int i = 0; i < count; ++i) dense[i] = me * 100000 + i;
  const MPI_Aint half = SLOT / 2 / sizeof(int) * sizeof(int);
  OK(MPI_Put(dense, count, MPI_INT, t, at(w, t, (MPI_Aint)me * SLOT + half), 1, vec, w->win));
  OK(MPI_Win_fence(0, w->win));
  int* a = (int*)(w->mem + (size_t)from * SLOT);
  int* b = (int*)(w->mem + (size_t)from * SLOT + half);
  for (int i = 0; i < count; ++i) {
    if (a[i] != from * 100000 + i || b[2 * i] != from * 100000 + i) {
      fprintf(stderr, "%s: rank %d: strided put of %d ints from %d: element %d is %d / %d\n", prog,
              wrank, count, from, i, a[i], b[2 * i]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  ++checks;
  /* Strided get of the contiguous data: every other int of `back`. */
  for (int i = 0; i < 2 * count; ++i) back[i] = -1;
  OK(MPI_Get(back, 1, vec, t, at(w, t, (MPI_Aint)me * SLOT), count, MPI_INT, w->win));
  OK(MPI_Win_fence(0, w->win));
  for (int i = 0; i < count; ++i) {
    EQ(back[2 * i], me * 100000 + i);
    EQ(back[2 * i + 1], -1);
  }
  /* Strided target into a contiguous origin. */
  for (int i = 0; i < count; ++i) dense[i] = -1;
  OK(MPI_Get(dense, count, MPI_INT, t, at(w, t, (MPI_Aint)me * SLOT + half), 1, vec, w->win));
  OK(MPI_Win_fence(0, w->win));
  for (int i = 0; i < count; ++i) EQ(dense[i], me * 100000 + i);
  OK(MPI_Win_fence(0, w->win));
  OK(MPI_Type_free(&vec));
  free(src);
  free(back);
  free(dense);
}

/* Partly past the window's end: an error at the origin, nothing moved. */
static void outOfRange(W* w, size_t s) {
  if (w->flavor == 2) return; /* dynamic: checked by the target */
  const int t = (me + 1) % np, n = (int)s;
  unsigned char* buf = malloc(s);
  memset(buf, 0x5A, s);
  reset(w);
  OK(MPI_Win_lock_all(0, w->win));
  const MPI_Aint d = (MPI_Aint)np * SLOT - (MPI_Aint)s + 1;
  expectErr(MPI_Put(buf, n, MPI_BYTE, t, d, n, MPI_BYTE, w->win), MPI_ERR_RMA_RANGE,
            "MPI_Put partly past the window end");
  expectErr(MPI_Get(buf, n, MPI_BYTE, t, d, n, MPI_BYTE, w->win), MPI_ERR_RMA_RANGE,
            "MPI_Get partly past the window end");
  OK(MPI_Win_unlock_all(w->win));
  OK(MPI_Barrier(MPI_COMM_WORLD));
  for (size_t i = 0; i < s; ++i) EQ(buf[i], 0x5A);
  OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w->win));
  for (size_t i = (size_t)np * SLOT - s; i < (size_t)np * SLOT; ++i)
    if (w->mem[i] != KEEP) {
      fprintf(stderr, "%s: rank %d: a put out of range wrote byte %zu\n", prog, wrank, i);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  ++checks;
  OK(MPI_Win_unlock(me, w->win));
  free(buf);
}

/* A block of `ints` counters on rank 0, each rank adding 1 to all of them
 * `rounds` times by get + put under an exclusive lock. */
static void exclusiveCounter(W* w, int ints, int rounds) {
  int* v = malloc(sizeof(int) * (size_t)ints);
  reset(w);
  if (me == 0) {
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win));
    memset(w->mem, 0, sizeof(int) * (size_t)ints);
    OK(MPI_Win_unlock(0, w->win));
  }
  OK(MPI_Barrier(MPI_COMM_WORLD));
  const MPI_Aint d = at(w, 0, 0);
  for (int r = 0; r < rounds; ++r) {
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w->win));
    OK(MPI_Get(v, ints, MPI_INT, 0, d, ints, MPI_INT, w->win));
    OK(MPI_Win_flush(0, w->win));
    for (int i = 0; i < ints; ++i) ++v[i];
    OK(MPI_Put(v, ints, MPI_INT, 0, d, ints, MPI_INT, w->win));
    OK(MPI_Win_unlock(0, w->win));
  }
  OK(MPI_Barrier(MPI_COMM_WORLD));
  if (me == 0) {
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w->win));
    const int* c = (const int*)w->mem;
    for (int i = 0; i < ints; ++i) EQ(c[i], np * rounds);
    OK(MPI_Win_unlock(0, w->win));
  }
  free(v);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  prog = "rma_sizes";
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  wrank = me;
  const long th = argc > 1 ? atol(argv[1]) : 0;
  size_t sizes[16] = {0, 1, 3, 8, 13, 127, 1000, 4093, 65541, MAXB};
  int ns = 10;
  if (th > 1 && th + 1 <= MAXB) {
    sizes[ns++] = (size_t)th - 1;
    sizes[ns++] = (size_t)th;
    sizes[ns++] = (size_t)th + 1;
  }
  unsigned char* src = malloc((size_t)np * SLOT);
  unsigned char* got = malloc((size_t)np * SLOT);
  for (int f = 0; f < 3; ++f) {
    W w;
    openW(&w, f);
    for (int k = 0; k < ns; ++k)
      for (int m = 0; m < NMODES; ++m) {
        puts_(&w, src, sizes[k], m);
        gets_(&w, got, sizes[k], m);
      }
    strided(&w, 1);
    strided(&w, 1001);
    strided(&w, 12000);
    outOfRange(&w, 4);
    outOfRange(&w, 100000);
    exclusiveCounter(&w, 1, 20);
    exclusiveCounter(&w, 16384, 5);
    if (me == 0) fprintf(stderr, "rma_sizes: %s window done\n", flavorName[f]);
    closeW(&w);
  }
  free(src);
  free(got);
  passed();
  MPI_Finalize();
  return 0;
}
