/* coll_reduce: every reduction collective (reduce, allreduce,
 * reduce_scatter(_block), scan, exscan, blocking and nonblocking) checked
 * against a local reference, over sizes around the selector's thresholds
 * and up to 1 MB, several ops and types (int, double, float, complex,
 * float16, bool, byte, value/index pairs), every root, MPI_IN_PLACE, user
 * ops (a non-commutative 2x2 matrix product applied in rank order, and a
 * commutative one freed while its collective runs), several MPI_Iallreduce
 * in flight on two communicators while computing, and bad input under
 * MPI_ERRORS_RETURN. The algorithm is whatever LOOM_COLL_<NAME> forces.
 * Prints "coll_reduce: rank R ok". */
#include <mpi.h>
#include <mpi-ext.h>
#include <complex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define CHECK(c)                                                                 \
  do {                                                                           \
    if (!(c)) {                                                                  \
      fprintf(stderr, "coll_reduce: rank %d: line %d: %s\n", rank, __LINE__, #c); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                              \
    }                                                                            \
  } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS)

/* Rank r's element i: small integers, so double sums are exact. */
static int val(int r, long i) { return (int)((r * 31 + i * 7) % 1000) - 300; }

/* Sizes: 0, 1, odd, the allreduce threshold (16 KiB of ints/doubles) +-1
 * element, and 1 MB of doubles. */
static const long kSizes[] = {0, 1, 7, 4095, 4096, 4097, 2047, 2048, 2049, 131072};
#define NSIZES (int)(sizeof kSizes / sizeof kSizes[0])

/* ---- a non-commutative op: 2x2 matrices mod 2^32, inout = in * inout --- */
static void matmul(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  uint32_t* a = in;
  uint32_t* b = inout;
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    uint32_t c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(b, c, sizeof c);
  }
}
static void mat(int r, long i, uint32_t m[4]) {
  m[0] = (uint32_t)(r + 2);
  m[1] = (uint32_t)(i % 5 + 1);
  m[2] = (uint32_t)(r % 3);
  m[3] = 1;
}
/* x(lo) * ... * x(hi-1) for element i. */
static void matRange(int lo, int hi, long i, uint32_t out[4]) {
  uint32_t one[4];
  int len = 1;
  mat(hi - 1, i, out);
  for (int r = hi - 2; r >= lo; --r) {
    mat(r, i, one);
    matmul(one, out, &len, NULL);
  }
}

/* A commutative user op: int sum. */
static void usersum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

/* The same on elements of two ints 8 bytes past each element's origin. */
static void shiftedsum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int k = 0; k < 2 * *len; ++k) ((int*)inout)[2 + k] += ((int*)in)[2 + k];
}

static long sumRange(int lo, int hi, long i) {
  long s = 0;
  for (int r = lo; r < hi; ++r) s += val(r, i);
  return s;
}

/* Every rank holds the same bits as rank 0 (point-to-point, so the check
 * does not depend on another collective). */
static void sameAsRankZero(MPI_Comm comm, const double* d, long n) {
  if (n == 0) return;
  if (rank == 0) {
    for (int r = 1; r < size; ++r) OK(MPI_Send(d, (int)n, MPI_DOUBLE, r, 5, comm));
    return;
  }
  double* d0 = malloc(n * sizeof(double));
  OK(MPI_Recv(d0, (int)n, MPI_DOUBLE, 0, 5, comm, MPI_STATUS_IGNORE));
  CHECK(memcmp(d0, d, n * sizeof(double)) == 0);
  free(d0);
}

static void testAllreduce(MPI_Comm comm, long n) {
  int* in = malloc((n + 1) * sizeof(int));
  int* out = malloc((n + 1) * sizeof(int));
  double* d = malloc((n + 1) * sizeof(double));
  for (long i = 0; i < n; ++i) in[i] = val(rank, i);
  OK(MPI_Allreduce(in, out, (int)n, MPI_INT, MPI_SUM, comm));
  for (long i = 0; i < n; ++i) CHECK(out[i] == sumRange(0, size, i));
  /* in place, double MAX */
  for (long i = 0; i < n; ++i) d[i] = val(rank, i);
  OK(MPI_Allreduce(MPI_IN_PLACE, d, (int)n, MPI_DOUBLE, MPI_MAX, comm));
  for (long i = 0; i < n; ++i) {
    int m = val(0, i);
    for (int r = 1; r < size; ++r)
      if (val(r, i) > m) m = val(r, i);
    CHECK(d[i] == m);
  }
  /* double SUM: identical bits on every rank (compare with rank 0's). */
  for (long i = 0; i < n; ++i) d[i] = 1.0 / (1 + rank + i % 13) + val(rank, i) * 1e-3;
  OK(MPI_Allreduce(MPI_IN_PLACE, d, (int)n, MPI_DOUBLE, MPI_SUM, comm));
  sameAsRankZero(comm, d, n);
  free(in);
  free(out);
  free(d);
}

static void testReduce(MPI_Comm comm, long n) {
  int roots[3] = {0, size - 1, size / 2};
  int* in = malloc((n + 1) * sizeof(int));
  int* out = malloc((n + 1) * sizeof(int));
  for (int k = 0; k < 3; ++k) {
    int root = roots[k];
    for (long i = 0; i < n; ++i) in[i] = val(rank, i);
    OK(MPI_Reduce(in, rank == root ? out : NULL, (int)n, MPI_INT, MPI_SUM, root, comm));
    if (rank == root)
      for (long i = 0; i < n; ++i) CHECK(out[i] == sumRange(0, size, i));
    /* in place at the root, MIN */
    if (rank == root) {
      for (long i = 0; i < n; ++i) out[i] = val(rank, i);
      OK(MPI_Reduce(MPI_IN_PLACE, out, (int)n, MPI_INT, MPI_MIN, root, comm));
      for (long i = 0; i < n; ++i) {
        int m = val(0, i);
        for (int r = 1; r < size; ++r)
          if (val(r, i) < m) m = val(r, i);
        CHECK(out[i] == m);
      }
    } else {
      OK(MPI_Reduce(in, NULL, (int)n, MPI_INT, MPI_MIN, root, comm));
    }
  }
  free(in);
  free(out);
}

static void testReduceScatter(MPI_Comm comm, long blk) {
  long total = blk * size;
  double* in = malloc((total + 1) * sizeof(double));
  double* out = malloc((total + 11) * sizeof(double)); /* and the irregular blocks (<= 10) */
  for (long i = 0; i < total; ++i) in[i] = val(rank, i);
  OK(MPI_Reduce_scatter_block(in, out, (int)blk, MPI_DOUBLE, MPI_SUM, comm));
  for (long i = 0; i < blk; ++i) CHECK(out[i] == sumRange(0, size, rank * blk + i));
  /* in place */
  for (long i = 0; i < total; ++i) out[i] = val(rank, i);
  OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, out, (int)blk, MPI_DOUBLE, MPI_SUM, comm));
  for (long i = 0; i < blk; ++i) CHECK(out[i] == sumRange(0, size, rank * blk + i));
  /* irregular counts (some zero) */
  int* counts = malloc(size * sizeof(int));
  long t2 = 0, my0 = 0;
  for (int r = 0; r < size; ++r) {
    counts[r] = (int)((r * 3 + blk) % 11);
    if (r < rank) my0 += counts[r];
    t2 += counts[r];
  }
  double* in2 = malloc((t2 + 1) * sizeof(double));
  for (long i = 0; i < t2; ++i) in2[i] = val(rank, i);
  OK(MPI_Reduce_scatter(in2, out, counts, MPI_DOUBLE, MPI_SUM, comm));
  for (long i = 0; i < counts[rank]; ++i) CHECK(out[i] == sumRange(0, size, my0 + i));
  for (long i = 0; i < t2; ++i) in2[i] = val(rank, i);
  OK(MPI_Reduce_scatter(MPI_IN_PLACE, in2, counts, MPI_DOUBLE, MPI_SUM, comm));
  for (long i = 0; i < counts[rank]; ++i) CHECK(in2[i] == sumRange(0, size, my0 + i));
  free(in2);
  free(counts);
  free(in);
  free(out);
}

static void testScan(MPI_Comm comm, long n) {
  long* in = malloc((n + 1) * sizeof(long));
  long* out = malloc((n + 1) * sizeof(long));
  for (long i = 0; i < n; ++i) in[i] = val(rank, i);
  OK(MPI_Scan(in, out, (int)n, MPI_LONG, MPI_SUM, comm));
  for (long i = 0; i < n; ++i) CHECK(out[i] == sumRange(0, rank + 1, i));
  OK(MPI_Exscan(in, out, (int)n, MPI_LONG, MPI_SUM, comm));
  if (rank > 0)
    for (long i = 0; i < n; ++i) CHECK(out[i] == sumRange(0, rank, i));
  for (long i = 0; i < n; ++i) out[i] = val(rank, i);
  OK(MPI_Scan(MPI_IN_PLACE, out, (int)n, MPI_LONG, MPI_SUM, comm));
  for (long i = 0; i < n; ++i) CHECK(out[i] == sumRange(0, rank + 1, i));
  for (long i = 0; i < n; ++i) out[i] = val(rank, i);
  OK(MPI_Exscan(MPI_IN_PLACE, out, (int)n, MPI_LONG, MPI_SUM, comm));
  if (rank > 0)
    for (long i = 0; i < n; ++i) CHECK(out[i] == sumRange(0, rank, i));
  free(in);
  free(out);
}

/* Other ops and types, one small vector each. */
static void testTypes(MPI_Comm comm) {
  enum { N = 5 };
  /* PROD on doubles (powers of two stay exact) */
  double dp[N], dq[N];
  for (int i = 0; i < N; ++i) dp[i] = (rank + i) % 2 ? 2.0 : 1.0;
  OK(MPI_Allreduce(dp, dq, N, MPI_DOUBLE, MPI_PROD, comm));
  for (int i = 0; i < N; ++i) {
    double e = 1;
    for (int r = 0; r < size; ++r) e *= (r + i) % 2 ? 2.0 : 1.0;
    CHECK(dq[i] == e);
  }
  /* complex SUM */
  double _Complex ca[N], cb[N];
  for (int i = 0; i < N; ++i) ca[i] = rank + i * I;
  OK(MPI_Allreduce(ca, cb, N, MPI_C_DOUBLE_COMPLEX, MPI_SUM, comm));
  for (int i = 0; i < N; ++i)
    CHECK(creal(cb[i]) == size * (size - 1) / 2.0 && cimag(cb[i]) == (double)i * size);
  /* float16 SUM: ones add up exactly below 2048 */
  uint16_t h[N], hs[N];
  for (int i = 0; i < N; ++i) h[i] = 0x3c00; /* 1.0 */
  OK(MPI_Allreduce(h, hs, N, MPIX_C_FLOAT16, MPI_SUM, comm));
  uint16_t expect16[9] = {0, 0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700, 0x4800};
  for (int i = 0; i < N; ++i) CHECK(size > 8 || hs[i] == expect16[size]);
  OK(MPI_Allreduce(h, hs, N, MPIX_BFLOAT16, MPI_MAX, comm));
  /* bool LOR: true only on the last rank */
  _Bool b = rank == size - 1, bo = 0;
  OK(MPI_Allreduce(&b, &bo, 1, MPI_C_BOOL, MPI_LOR, comm));
  CHECK(bo == 1);
  OK(MPI_Allreduce(&b, &bo, 1, MPI_C_BOOL, MPI_LAND, comm));
  CHECK(bo == (size == 1));
  /* byte BXOR */
  unsigned char by = (unsigned char)(1u << (rank % 8)), bx = 0, ex = 0;
  for (int r = 0; r < size; ++r) ex ^= (unsigned char)(1u << (r % 8));
  OK(MPI_Allreduce(&by, &bx, 1, MPI_BYTE, MPI_BXOR, comm));
  CHECK(bx == ex);
  /* MINLOC with ties (every rank offers the same minimum) and MAXLOC */
  struct { int v, i; } p2 = {7, rank}, r2;
  OK(MPI_Allreduce(&p2, &r2, 1, MPI_2INT, MPI_MINLOC, comm));
  CHECK(r2.v == 7 && r2.i == 0);
  struct { double v; int i; } pd = {(double)(rank % 3), rank}, rd;
  OK(MPI_Allreduce(&pd, &rd, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm));
  CHECK(rd.v == (size >= 3 ? 2 : size - 1) && rd.i == (size >= 3 ? 2 : size - 1));
  /* a derived type: vector of ints (every other one), SUM */
  MPI_Datatype vec;
  OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
  OK(MPI_Type_commit(&vec));
  int vin[10], vout[10];
  for (int i = 0; i < 10; ++i) vin[i] = rank + i, vout[i] = -1;
  OK(MPI_Allreduce(vin, vout, 2, vec, MPI_SUM, comm)); /* ints 0,2,4 and 5,7,9 */
  for (int i = 0; i < 10; ++i) {
    int data = i == 0 || i == 2 || i == 4 || i == 5 || i == 7 || i == 9;
    CHECK(vout[i] == (data ? size * (size - 1) / 2 + size * i : -1));
  }
  OK(MPI_Type_free(&vec));
  /* A contiguous type whose data starts 8 bytes past its origin (true lower
   * bound 8): eager and pipelined messages, whose pieces are folded as they
   * arrive, and the user sum on it. */
  {
    int two = 2;
    MPI_Aint eight = 8;
    MPI_Datatype sh;
    OK(MPI_Type_create_hindexed(1, &two, &eight, MPI_INT, &sh));
    OK(MPI_Type_commit(&sh));
    MPI_Op us;
    OK(MPI_Op_create(shiftedsum, 1, &us));
    const long counts[] = {1, 3000, 70000};
    for (int c = 0; c < 3; ++c) {
      long n = counts[c];
      int* in = malloc((2 * n + 4) * sizeof(int));
      int* out = malloc((2 * n + 4) * sizeof(int));
      CHECK(in && out);
      for (int u = 0; u < 2; ++u) {
        for (long i = 0; i < 2 * n + 4; ++i) in[i] = i < 2 ? -5 : val(rank, i), out[i] = -7;
        OK(MPI_Allreduce(in, out, (int)n, sh, u ? us : MPI_SUM, comm));
        CHECK(out[0] == -7 && out[1] == -7);
        for (long i = 2; i < 2 * n + 2; ++i) CHECK(out[i] == sumRange(0, size, i));
        CHECK(out[2 * n + 2] == -7);
      }
      free(in);
      free(out);
    }
    OK(MPI_Op_free(&us));
    OK(MPI_Type_free(&sh));
  }
  /* MPI_Reduce_local */
  int la[3] = {1, 2, 3}, lb[3] = {10, 20, 30};
  OK(MPI_Reduce_local(la, lb, 3, MPI_INT, MPI_SUM));
  CHECK(lb[0] == 11 && lb[1] == 22 && lb[2] == 33);
}

/* The non-commutative matrix op through every collective. */
static void testUserOps(MPI_Comm comm) {
  enum { N = 7 };
  MPI_Datatype m4;
  MPI_Op op;
  int commute = -1;
  OK(MPI_Type_contiguous(4, MPI_UINT32_T, &m4));
  OK(MPI_Type_commit(&m4));
  OK(MPI_Op_create(matmul, 0, &op));
  OK(MPI_Op_commutative(op, &commute));
  CHECK(commute == 0);
  OK(MPI_Op_commutative(MPI_SUM, &commute));
  CHECK(commute == 1);
  uint32_t in[N][4], out[N][4], e[4], all[64][4];
  for (long i = 0; i < N; ++i) mat(rank, i, in[i]);
  OK(MPI_Allreduce(in, out, N, m4, op, comm));
  for (long i = 0; i < N; ++i) {
    matRange(0, size, i, e);
    CHECK(memcmp(e, out[i], sizeof e) == 0);
  }
  for (int root = size - 1; root >= 0; root -= size > 1 ? size - 1 : 1) { /* last, first */
    OK(MPI_Reduce(in, out, N, m4, op, root, comm));
    if (rank == root)
      for (long i = 0; i < N; ++i) {
        matRange(0, size, i, e);
        CHECK(memcmp(e, out[i], sizeof e) == 0);
      }
    /* in place: the root's input is its result */
    if (rank == root) memcpy(out, in, sizeof out);
    OK(MPI_Reduce(rank == root ? MPI_IN_PLACE : in, out, N, m4, op, root, comm));
    if (rank == root)
      for (long i = 0; i < N; ++i) {
        matRange(0, size, i, e);
        CHECK(memcmp(e, out[i], sizeof e) == 0);
      }
  }
  OK(MPI_Scan(in, out, N, m4, op, comm));
  for (long i = 0; i < N; ++i) {
    matRange(0, rank + 1, i, e);
    CHECK(memcmp(e, out[i], sizeof e) == 0);
  }
  OK(MPI_Exscan(in, out, N, m4, op, comm));
  if (rank > 0)
    for (long i = 0; i < N; ++i) {
      matRange(0, rank, i, e);
      CHECK(memcmp(e, out[i], sizeof e) == 0);
    }
  if (size <= 64) {
    for (int r = 0; r < size; ++r) mat(rank, r, all[r]);
    OK(MPI_Reduce_scatter_block(all, out, 1, m4, op, comm));
    matRange(0, size, rank, e);
    CHECK(memcmp(e, out[0], sizeof e) == 0);
  }
  /* nonblocking, freeing the op and the type while it runs */
  MPI_Request req;
  OK(MPI_Iallreduce(in, out, N, m4, op, comm, &req));
  OK(MPI_Op_free(&op));
  CHECK(op == MPI_OP_NULL);
  OK(MPI_Type_free(&m4));
  OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  for (long i = 0; i < N; ++i) {
    matRange(0, size, i, e);
    CHECK(memcmp(e, out[i], sizeof e) == 0);
  }
}

/* Several MPI_Iallreduce in flight on two communicators, computing while
 * testing; then the other nonblocking reductions. */
static void testNonblocking(MPI_Comm comm) {
  enum { K = 4, N = 3000 };
  MPI_Comm dup;
  MPI_Op usum;
  OK(MPI_Comm_dup(comm, &dup));
  OK(MPI_Op_create(usersum, 1, &usum));
  static int in[2 * K][N], out[2 * K][N];
  MPI_Request reqs[2 * K];
  for (int k = 0; k < 2 * K; ++k) {
    for (int i = 0; i < N; ++i) in[k][i] = val(rank, i + k);
    OK(MPI_Iallreduce(in[k], out[k], k % 3 == 0 ? 5 : N, MPI_INT, k == 1 ? usum : MPI_SUM,
                      k % 2 ? dup : comm, &reqs[k]));
  }
  OK(MPI_Op_free(&usum)); /* still used by reqs[1] */
  volatile double work = 0;
  int done = 0;
  while (!done) {
    for (int j = 0; j < 1000; ++j) work += j * 0.5;
    OK(MPI_Testall(2 * K, reqs, &done, MPI_STATUSES_IGNORE));
  }
  for (int k = 0; k < 2 * K; ++k)
    for (int i = 0; i < (k % 3 == 0 ? 5 : N); ++i) CHECK(out[k][i] == sumRange(0, size, i + k));

  long a[10], b[10], c[10];
  int counts[64];
  double rs[64 * 2], rso[2];
  for (int i = 0; i < 10; ++i) a[i] = val(rank, i);
  for (int r = 0; r < size && r < 64; ++r) counts[r] = 2;
  for (int i = 0; i < 2 * size && i < 128; ++i) rs[i] = val(rank, i);
  MPI_Request q[5];
  OK(MPI_Ireduce(a, b, 10, MPI_LONG, MPI_SUM, size / 2, comm, &q[0]));
  OK(MPI_Iscan(a, c, 10, MPI_LONG, MPI_SUM, dup, &q[1]));
  OK(MPI_Ireduce_scatter_block(rs, rso, 2, MPI_DOUBLE, MPI_SUM, comm, &q[2]));
  OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
  if (rank == size / 2)
    for (int i = 0; i < 10; ++i) CHECK(b[i] == sumRange(0, size, i));
  for (int i = 0; i < 10; ++i) CHECK(c[i] == sumRange(0, rank + 1, i));
  for (int i = 0; i < 2; ++i) CHECK(rso[i] == sumRange(0, size, rank * 2 + i));
  OK(MPI_Iexscan(a, c, 10, MPI_LONG, MPI_SUM, comm, &q[3]));
  OK(MPI_Ireduce_scatter(rs, rso, counts, MPI_DOUBLE, MPI_SUM, dup, &q[4]));
  OK(MPI_Wait(&q[3], MPI_STATUS_IGNORE));
  OK(MPI_Wait(&q[4], MPI_STATUS_IGNORE));
  if (rank > 0)
    for (int i = 0; i < 10; ++i) CHECK(c[i] == sumRange(0, rank, i));
  for (int i = 0; i < 2; ++i) CHECK(rso[i] == sumRange(0, size, rank * 2 + i));
  OK(MPI_Comm_free(&dup));
}

static void testErrors(void) {
  MPI_Comm w = MPI_COMM_WORLD;
  float f[2] = {1, 2}, g[2];
  int x[2] = {1, 2}, y[2];
  MPI_Request req;
  MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
  CHECK(MPI_Allreduce(f, g, 2, MPI_FLOAT, MPI_BAND, w) == MPI_ERR_OP);
  CHECK(MPI_Reduce(f, g, 2, MPI_FLOAT, MPI_LXOR, 0, w) == MPI_ERR_OP);
  CHECK(MPI_Allreduce(x, y, 2, MPI_INT, MPI_MINLOC, w) == MPI_ERR_OP);
  CHECK(MPI_Allreduce(x, y, 2, MPI_INT, MPI_OP_NULL, w) == MPI_ERR_OP);
  CHECK(MPI_Allreduce(x, y, 2, MPI_INT, MPI_REPLACE, w) == MPI_ERR_OP);
  CHECK(MPI_Scan(f, g, 2, MPI_FLOAT, MPI_BOR, w) == MPI_ERR_OP);
  CHECK(MPI_Reduce_local(f, g, 2, MPI_FLOAT, MPI_BAND) == MPI_ERR_OP);
  CHECK(MPI_Allreduce(x, y, -1, MPI_INT, MPI_SUM, w) == MPI_ERR_COUNT);
  CHECK(MPI_Allreduce(x, y, 2, MPI_DATATYPE_NULL, MPI_SUM, w) == MPI_ERR_TYPE);
  CHECK(MPI_Allreduce(x, y, 2, MPI_INT, MPI_SUM, MPI_COMM_NULL) == MPI_ERR_COMM);
  CHECK(MPI_Reduce(x, y, 2, MPI_INT, MPI_SUM, size, w) == MPI_ERR_ROOT);
  CHECK(MPI_Reduce(x, y, 2, MPI_INT, MPI_SUM, -1, w) == MPI_ERR_ROOT);
  CHECK(MPI_Allreduce(x, MPI_IN_PLACE, 2, MPI_INT, MPI_SUM, w) == MPI_ERR_ARG);
  CHECK(MPI_Allreduce(NULL, y, 2, MPI_INT, MPI_SUM, w) == MPI_ERR_BUFFER);
  CHECK(MPI_Allreduce(x, x, 2, MPI_INT, MPI_SUM, w) == MPI_ERR_BUFFER);
  CHECK(MPI_Iallreduce(x, y, 2, MPI_INT, MPI_SUM, w, NULL) == MPI_ERR_ARG);
  CHECK(MPI_Reduce_scatter(x, y, NULL, MPI_INT, MPI_SUM, w) == MPI_ERR_ARG);
  CHECK(MPI_Reduce_scatter_block(x, y, -2, MPI_INT, MPI_SUM, w) == MPI_ERR_COUNT);
  if (size > 1 && rank != 0)
    CHECK(MPI_Reduce(MPI_IN_PLACE, y, 2, MPI_INT, MPI_SUM, 0, w) == MPI_ERR_ARG);
  CHECK(MPI_Iscan(f, g, 2, MPI_FLOAT, MPI_BAND, w, &req) == MPI_ERR_OP);
  MPI_Op sum = MPI_SUM, bad = (MPI_Op)(uintptr_t)0x27;
  CHECK(MPI_Op_free(&sum) == MPI_ERR_OP);
  CHECK(MPI_Op_free(&bad) == MPI_ERR_OP);
  CHECK(MPI_Op_create(NULL, 1, &bad) == MPI_ERR_ARG);
  int c;
  CHECK(MPI_Op_commutative(MPI_OP_NULL, &c) == MPI_ERR_OP);
  MPI_Op u, stale;
  OK(MPI_Op_create(usersum, 1, &u));
  stale = u;
  OK(MPI_Op_free(&u));
  CHECK(MPI_Allreduce(x, y, 2, MPI_INT, stale, w) == MPI_ERR_OP); /* a freed handle */
  /* the world still works after the errors */
  OK(MPI_Allreduce(x, y, 2, MPI_INT, MPI_SUM, w));
  CHECK(y[0] == size && y[1] == 2 * size);
  MPI_Comm_set_errhandler(w, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* quick = getenv("COLL_REDUCE_QUICK"); /* skip the 1 MB size */

  for (int s = 0; s < NSIZES; ++s) {
    long n = kSizes[s];
    if (quick && n > 10000) continue;
    testAllreduce(MPI_COMM_WORLD, n);
    testReduce(MPI_COMM_WORLD, n);
    if (n <= 4097) testScan(MPI_COMM_WORLD, n);
    testReduceScatter(MPI_COMM_WORLD, n > 10000 ? n / size : n);
  }
  /* A split communicator (odd/even ranks, reversed order). */
  MPI_Comm half;
  OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
  {
    int wr = rank, ws = size;
    MPI_Comm_rank(half, &rank);
    MPI_Comm_size(half, &size);
    testAllreduce(half, 1000);
    testReduce(half, 7);
    testScan(half, 7);
    testReduceScatter(half, 3);
    rank = wr;
    size = ws;
  }
  OK(MPI_Comm_free(&half));
  testTypes(MPI_COMM_WORLD);
  testUserOps(MPI_COMM_WORLD);
  testNonblocking(MPI_COMM_WORLD);
  testErrors();

  printf("coll_reduce: rank %d ok\n", rank);
  MPI_Finalize();
  return 0;
}
