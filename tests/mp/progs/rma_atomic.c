/* One-sided accumulates and atomics, every rank on the same elements:
 * - in fence epochs, several rounds of MPI_Accumulate from every rank onto
 *   every rank's same elements: MPI_SUM of ints and of doubles (exactly
 *   representable, so the sums are exact whatever the order), MPI_MAX,
 *   MPI_REPLACE (each element ends as one rank's whole value), MPI_MINLOC
 *   on MPI_2INT, MPI_SUM into a target vector type;
 * - under lock_all: MPI_Get_accumulate with MPI_NO_OP reads the sums back,
 *   MPI_Get_accumulate with derived datatypes (origin vector, result
 *   indexed, target vector) from every rank onto rank 0;
 * - a counter on rank 0 (the other ranks' windows are empty) incremented
 *   10,000 times by every rank with MPI_Fetch_and_op(MPI_SUM, +1) and
 *   MPI_Win_flush: it ends at 10000 * np and the fetched values, gathered,
 *   are exactly 0 .. 10000 * np - 1;
 * - the same counter read-modify-written with Get, flush, Put under
 *   MPI_Win_lock(MPI_LOCK_EXCLUSIVE) 500 times by every rank;
 * - a spin lock made of MPI_Compare_and_swap guarding a counter updated by
 *   MPI_Get_accumulate(MPI_NO_OP) + MPI_Accumulate(MPI_REPLACE): the lock
 *   is always found held by its owner on release, no update is lost;
 * - MPI_Fetch_and_op with SUM, REPLACE, NO_OP and PROD on every rank's own
 *   slot of rank 0's window, for int, unsigned, int64_t, uint64_t, float,
 *   double and short: exact values, int and int64_t sums that wrap. */
#include <limits.h>
#include <stdint.h>

#include "rma_checks.h"

static int me, np;

enum { N = 16, ROUNDS = 5 };
/* The int window (ints): */
enum { ISUM = 0, IMAX = 16, IREP = 32, IMIN = 48 /* 16 pairs */, IVEC = 80, IGA = 112, ILEN = 128 };

static int sumWant(int i) {
  return ROUNDS * (i + 1) * np * (np + 1) / 2;
}
static int maxVal(int r, int i) {
  return ((r * 7 + i * 3) % 11) * 100 + i;
}
static int minVal(int r, int i) {
  return (r * 5 + i * 3) % 7;
}

static void accumulates(void) {
  int* wi;
  double* wd;
  MPI_Win win, dwin;
  OK(MPI_Win_allocate(ILEN * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &wi,
                      &win));
  OK(MPI_Win_allocate(N * (MPI_Aint)sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                      &wd, &dwin));
  OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  OK(MPI_Win_set_errhandler(dwin, MPI_ERRORS_RETURN));
  for (int i = 0; i < ILEN; ++i) wi[i] = 0;
  for (int i = 0; i < N; ++i) {
    wi[IMAX + i] = -1;
    wi[IREP + i] = -1;
    wi[IMIN + 2 * i] = 1 << 30;
    wi[IMIN + 2 * i + 1] = 1 << 30;
    wd[i] = 0.0;
  }
  MPI_Datatype vec;
  OK(MPI_Type_vector(8, 1, 2, MPI_INT, &vec));
  OK(MPI_Type_commit(&vec));
  int sum[N], mx[N], rep[N], mloc[2 * N], v8[8];
  double ds[N];
  for (int i = 0; i < N; ++i) {
    sum[i] = (me + 1) * (i + 1);
    mx[i] = maxVal(me, i);
    rep[i] = me * 1000 + i;
    mloc[2 * i] = minVal(me, i);
    mloc[2 * i + 1] = me;
    ds[i] = (me + 1) * 0.25 * (i + 1);
  }
  for (int i = 0; i < 8; ++i) v8[i] = me + 1 + i;
  OK(MPI_Win_fence(0, win));
  OK(MPI_Win_fence(0, dwin));
  for (int k = 0; k < ROUNDS; ++k)
    for (int d = 0; d < np; ++d) {
      int t = (me + d) % np; /* every rank starts with a different target */
      OK(MPI_Accumulate(sum, N, MPI_INT, t, ISUM, N, MPI_INT, MPI_SUM, win));
      OK(MPI_Accumulate(mx, N, MPI_INT, t, IMAX, N, MPI_INT, MPI_MAX, win));
      OK(MPI_Accumulate(rep, N, MPI_INT, t, IREP, N, MPI_INT, MPI_REPLACE, win));
      OK(MPI_Accumulate(mloc, N, MPI_2INT, t, IMIN, N, MPI_2INT, MPI_MINLOC, win));
      OK(MPI_Accumulate(v8, 8, MPI_INT, t, IVEC, 1, vec, MPI_SUM, win));
      OK(MPI_Accumulate(ds, N, MPI_DOUBLE, t, 0, N, MPI_DOUBLE, MPI_SUM, dwin));
    }
  OK(MPI_Win_fence(0, win));
  OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, dwin));
  for (int i = 0; i < N; ++i) {
    EQ(wi[ISUM + i], sumWant(i));
    int m = -1, ml = 1 << 30, at = -1;
    for (int r = 0; r < np; ++r) {
      if (maxVal(r, i) > m) m = maxVal(r, i);
      if (minVal(r, i) < ml) ml = minVal(r, i), at = r;
    }
    EQ(wi[IMAX + i], m);
    int r = wi[IREP + i] / 1000;
    CHECK(r >= 0 && r < np);
    EQ(wi[IREP + i], r * 1000 + i);
    EQ(wi[IMIN + 2 * i], ml);
    EQ(wi[IMIN + 2 * i + 1], at); /* the lowest rank among equal values */
    double dw = ROUNDS * 0.25 * (i + 1) * np * (np + 1) / 2;
    if (wd[i] != dw)
      fprintf(stderr, "rma_atomic: rank %d: double sum %d is %.17g, expected %.17g\n", me, i, wd[i],
              dw);
    CHECK(wd[i] == dw);
  }
  for (int i = 0; i < 16; ++i)
    EQ(wi[IVEC + i], i % 2 ? 0 : ROUNDS * (np * (np + 1) / 2 + np * (i / 2)));
  OK(MPI_Win_free(&dwin));

  /* Read back with Get_accumulate(MPI_NO_OP) from every rank. */
  OK(MPI_Win_lock_all(0, win));
  int got[N], dummy[N];
  for (int t = 0; t < np; ++t) {
    OK(MPI_Get_accumulate(dummy, N, MPI_INT, got, N, MPI_INT, t, ISUM, N, MPI_INT, MPI_NO_OP, win));
    OK(MPI_Win_flush(t, win));
    for (int i = 0; i < N; ++i) EQ(got[i], sumWant(i));
  }
  /* Get_accumulate with derived datatypes onto rank 0: origin vector
   * (4 of every other int), target vector (stride 3) at IGA, result
   * indexed {1 at 0, 3 at 5}. Every fetched value is a partial sum. */
  MPI_Datatype ov, tv, rt;
  OK(MPI_Type_vector(4, 1, 2, MPI_INT, &ov));
  OK(MPI_Type_vector(4, 1, 3, MPI_INT, &tv));
  int bl[2] = {1, 3}, dl[2] = {0, 5};
  OK(MPI_Type_indexed(2, bl, dl, MPI_INT, &rt));
  OK(MPI_Type_commit(&ov));
  OK(MPI_Type_commit(&tv));
  OK(MPI_Type_commit(&rt));
  int o[8], res[8];
  for (int i = 0; i < 8; ++i) o[i] = (i % 2) ? -1000 : (me + 1) * (i / 2 + 1), res[i] = -7;
  OK(MPI_Get_accumulate(o, 1, ov, res, 1, rt, 0, IGA, 1, tv, MPI_SUM, win));
  OK(MPI_Win_flush(0, win));
  int tot = np * (np + 1) / 2;
  int at[4] = {0, 5, 6, 7};
  for (int j = 0; j < 4; ++j) CHECK(res[at[j]] >= 0 && res[at[j]] <= (tot - me - 1) * (j + 1));
  EQ(res[1], -7);
  EQ(res[4], -7);
  OK(MPI_Barrier(MPI_COMM_WORLD));
  if (me == 0) {
    OK(MPI_Get_accumulate(dummy, 12, MPI_INT, got, 12, MPI_INT, 0, IGA, 12, MPI_INT, MPI_NO_OP,
                          win));
    OK(MPI_Win_flush(0, win));
    for (int i = 0; i < 12; ++i) EQ(got[i], i % 3 ? 0 : tot * (i / 3 + 1));
  }
  OK(MPI_Win_unlock_all(win));
  OK(MPI_Type_free(&ov));
  OK(MPI_Type_free(&tv));
  OK(MPI_Type_free(&rt));
  OK(MPI_Type_free(&vec));
  OK(MPI_Win_free(&win));
}

enum { FOPS = 10000, RMW = 500, CS = 50 };
enum { CFOP = 0, CRMW = 1, CLOCK = 2, CCS = 3 }; /* long longs on rank 0 */

static MPI_Win cwin;
static long long* cnt;

static long long read0(int at) {
  long long none = 0, v = -1;
  OK(MPI_Fetch_and_op(&none, &v, MPI_LONG_LONG, 0, at, MPI_NO_OP, cwin));
  OK(MPI_Win_flush(0, cwin));
  return v;
}

static int cmpll(const void* a, const void* b) {
  long long x = *(const long long*)a, y = *(const long long*)b;
  return x < y ? -1 : x > y;
}

static void counter(void) {
  long long* mine = malloc(sizeof(long long) * FOPS);
  long long one = 1;
  OK(MPI_Barrier(MPI_COMM_WORLD));
  OK(MPI_Win_lock_all(0, cwin));
  for (int k = 0; k < FOPS; ++k) {
    OK(MPI_Fetch_and_op(&one, &mine[k], MPI_LONG_LONG, 0, CFOP, MPI_SUM, cwin));
    OK(MPI_Win_flush(0, cwin));
  }
  for (int k = 1; k < FOPS; ++k) CHECK(mine[k] > mine[k - 1]); /* one origin's are ordered */
  OK(MPI_Barrier(MPI_COMM_WORLD));
  EQ(read0(CFOP), (long long)FOPS * np);
  OK(MPI_Win_unlock_all(cwin));
  long long* all = me == 0 ? malloc(sizeof(long long) * FOPS * (size_t)np) : NULL;
  OK(MPI_Gather(mine, FOPS, MPI_LONG_LONG, all, FOPS, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
  if (me == 0) {
    qsort(all, (size_t)FOPS * np, sizeof(long long), cmpll);
    long long bad = -1;
    for (long long k = 0; k < (long long)FOPS * np && bad < 0; ++k)
      if (all[k] != k) bad = k;
    if (bad >= 0)
      fprintf(stderr, "rma_atomic: rank 0: fetched values sorted: position %lld holds %lld\n", bad,
              all[bad]);
    EQ(bad, -1);
    free(all);
  }
  free(mine);
}

static void exclusiveRmw(void) {
  OK(MPI_Barrier(MPI_COMM_WORLD));
  for (int k = 0; k < RMW; ++k) {
    long long v = -1;
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, cwin));
    OK(MPI_Get(&v, 1, MPI_LONG_LONG, 0, CRMW, 1, MPI_LONG_LONG, cwin));
    OK(MPI_Win_flush(0, cwin));
    CHECK(v >= 0 && v < (long long)RMW * np);
    ++v;
    OK(MPI_Put(&v, 1, MPI_LONG_LONG, 0, CRMW, 1, MPI_LONG_LONG, cwin));
    OK(MPI_Win_unlock(0, cwin));
  }
  OK(MPI_Barrier(MPI_COMM_WORLD));
  long long v = -1;
  OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, cwin));
  OK(MPI_Get(&v, 1, MPI_LONG_LONG, 0, CRMW, 1, MPI_LONG_LONG, cwin));
  OK(MPI_Win_unlock(0, cwin));
  EQ(v, (long long)RMW * np);
}

static void spinLock(void) {
  long long id = me + 1, zero = 0, none = 0;
  OK(MPI_Barrier(MPI_COMM_WORLD));
  OK(MPI_Win_lock_all(0, cwin));
  for (int k = 0; k < CS; ++k) {
    long long was = -1;
    do {
      OK(MPI_Compare_and_swap(&id, &zero, &was, MPI_LONG_LONG, 0, CLOCK, cwin));
      OK(MPI_Win_flush(0, cwin));
      CHECK(was >= 0 && was <= np);
    } while (was != 0);
    /* Held: nobody else may change the lock or the counter now. */
    long long v = -1, owner = -1;
    OK(MPI_Get_accumulate(&none, 1, MPI_LONG_LONG, &v, 1, MPI_LONG_LONG, 0, CCS, 1, MPI_LONG_LONG,
                          MPI_NO_OP, cwin));
    OK(MPI_Win_flush(0, cwin));
    CHECK(v >= 0 && v < (long long)CS * np);
    ++v;
    OK(MPI_Accumulate(&v, 1, MPI_LONG_LONG, 0, CCS, 1, MPI_LONG_LONG, MPI_REPLACE, cwin));
    OK(MPI_Win_flush(0, cwin));
    OK(MPI_Compare_and_swap(&zero, &id, &owner, MPI_LONG_LONG, 0, CLOCK, cwin));
    OK(MPI_Win_flush(0, cwin));
    EQ(owner, id);
  }
  OK(MPI_Barrier(MPI_COMM_WORLD));
  EQ(read0(CCS), (long long)CS * np);
  EQ(read0(CLOCK), 0);
  OK(MPI_Win_unlock_all(cwin));
}

/* Every rank on its own 8-byte-aligned 16-byte slot of rank 0's window:
 * fetched values and the final value exact for each op and type. */
#define FOP_TYPE(T, MT, START, ADD, WANT_SUM)                                    \
  do {                                                                         \
    T* slot = (T*)(fbase + 16 * me);                                           \
    T v = (START), one = (ADD), old = 0, rep = (T)(me + 3), two = 2;           \
    MPI_Aint at = 16 * me;                                                     \
    OK(MPI_Put(&v, 1, MT, 0, at, 1, MT, fwin));                                \
    OK(MPI_Win_flush(0, fwin));                                                \
    OK(MPI_Fetch_and_op(&one, &old, MT, 0, at, MPI_SUM, fwin));                \
    OK(MPI_Win_flush(0, fwin));                                                \
    CHECK(old == (T)(START));                                                  \
    OK(MPI_Fetch_and_op(NULL, &old, MT, 0, at, MPI_NO_OP, fwin));              \
    OK(MPI_Win_flush(0, fwin));                                                \
    CHECK(old == (T)(WANT_SUM));                                               \
    OK(MPI_Fetch_and_op(&rep, &old, MT, 0, at, MPI_REPLACE, fwin));            \
    OK(MPI_Win_flush(0, fwin));                                                \
    CHECK(old == (T)(WANT_SUM));                                               \
    OK(MPI_Fetch_and_op(&two, &old, MT, 0, at, MPI_PROD, fwin));               \
    OK(MPI_Win_flush(0, fwin));                                                \
    CHECK(old == rep);                                                         \
    OK(MPI_Fetch_and_op(NULL, &old, MT, 0, at, MPI_NO_OP, fwin));              \
    OK(MPI_Win_flush(0, fwin));                                                \
    CHECK(old == (T)(2 * rep));                                                \
    if (me == 0) CHECK(*slot == (T)(2 * rep));                                 \
  } while (0)

static void fetchOpTypes(void) {
  char* fbase;
  MPI_Win fwin;
  OK(MPI_Win_allocate(me == 0 ? 16 * (MPI_Aint)np : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &fbase,
                      &fwin));
  OK(MPI_Win_set_errhandler(fwin, MPI_ERRORS_RETURN));
  OK(MPI_Win_lock_all(0, fwin));
  FOP_TYPE(int, MPI_INT, INT_MAX, 1, INT_MIN);
  FOP_TYPE(unsigned, MPI_UNSIGNED, 7u + me, 5u, 12u + me);
  FOP_TYPE(int64_t, MPI_INT64_T, INT64_MAX, 1, INT64_MIN);
  FOP_TYPE(uint64_t, MPI_UINT64_T, UINT64_MAX, 2, 1);
  FOP_TYPE(float, MPI_FLOAT, 1.5f + me, 0.25f, 1.75f + me);
  FOP_TYPE(double, MPI_DOUBLE, -2.5 - me, 1.0, -1.5 - me);
  FOP_TYPE(short, MPI_SHORT, 100 + me, -7, 93 + me);
  OK(MPI_Win_unlock_all(fwin));
  OK(MPI_Win_free(&fwin));
}

int main(int argc, char** argv) {
  prog = "rma_atomic";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
  wrank = me;
  accumulates();
  fetchOpTypes();
  /* The counters live on rank 0; the other ranks' windows are empty. */
  OK(MPI_Win_allocate(me == 0 ? 4 * (MPI_Aint)sizeof(long long) : 0, sizeof(long long),
                      MPI_INFO_NULL, MPI_COMM_WORLD, &cnt, &cwin));
  OK(MPI_Win_set_errhandler(cwin, MPI_ERRORS_RETURN));
  if (me == 0)
    for (int i = 0; i < 4; ++i) cnt[i] = 0;
  OK(MPI_Win_fence(MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED, cwin));
  counter();
  exclusiveRmw();
  spinLock();
  OK(MPI_Win_free(&cwin));
  OK(MPI_Finalize());
  passed();
  return 0;
}
