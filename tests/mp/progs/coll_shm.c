/* coll_shm: what is particular to the shared-memory collectives (one
 * segment per communicator, made on its first collective).
 *  - the first collective on a new communicator is nonblocking for real: an
 *    MPI_Ibarrier started there must not wait for peers that are still
 *    blocked in a receive from this rank;
 *  - blocking and nonblocking collectives interleaved on one communicator
 *    while an earlier one is still in flight, on two communicators at once;
 *  - 300 communicators created, used and freed (a segment each);
 *  - pieces larger than the slot with non-contiguous types (a vector of
 *    doubles, MPI_DOUBLE_INT with MINLOC whose packed form differs from its
 *    layout), and zero-size calls;
 *  - results bitwise identical on every rank (float sums of values that
 *    round differently in different orders);
 *  - ranks that pass different counts or roots get an error, not a hang
 *    (MPI_ERRORS_RETURN on the communicator).
 * Prints "coll_shm: rank R ok". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define CHECK(c)                                                              \
  do {                                                                        \
    if (!(c)) {                                                               \
      fprintf(stderr, "coll_shm: rank %d: line %d: %s\n", rank, __LINE__, #c); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                           \
    }                                                                         \
  } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS)

/* Rank 0 starts an Ibarrier on a fresh communicator, then sends to every
 * other rank, which receives before it joins the barrier. */
static void firstCollectiveIsNonblocking(void) {
  MPI_Comm d;
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  MPI_Request req;
  int token = 42;
  if (rank == 0) {
    OK(MPI_Ibarrier(d, &req));
    for (int r = 1; r < size; ++r) OK(MPI_Send(&token, 1, MPI_INT, r, 5, MPI_COMM_WORLD));
  } else {
    int got = 0;
    OK(MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == 42);
    OK(MPI_Ibarrier(d, &req));
  }
  OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  OK(MPI_Comm_free(&d));
}

static void interleaved(void) {
  MPI_Comm a, b;
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &a));
  OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &b)); /* reversed order */
  enum { N = 20000 };
  static long x[N], y[N], z[N];
  for (int i = 0; i < N; ++i) x[i] = rank + i;
  MPI_Request q[3];
  OK(MPI_Iallreduce(x, y, N, MPI_LONG, MPI_SUM, a, &q[0]));
  long v = rank, sum = -1;
  OK(MPI_Iallreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, b, &q[1]));
  /* A blocking call behind the pending one on a. */
  long root = rank == size - 1 ? 1234 : 0;
  OK(MPI_Bcast(&root, 1, MPI_LONG, size - 1, a));
  CHECK(root == 1234);
  OK(MPI_Iallgather(&v, 1, MPI_LONG, z, 1, MPI_LONG, a, &q[2]));
  OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
  const long ranks = (long)size * (size - 1) / 2;
  for (int i = 0; i < N; ++i) CHECK(y[i] == ranks + (long)size * i);
  CHECK(sum == ranks);
  for (int r = 0; r < size; ++r) CHECK(z[r] == r);
  OK(MPI_Comm_free(&a));
  OK(MPI_Comm_free(&b));
}

static void manyCommunicators(void) {
  for (int i = 0; i < 300; ++i) {
    MPI_Comm d;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int v = i + rank, s = 0;
    OK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, d));
    CHECK(s == size * i + size * (size - 1) / 2);
    OK(MPI_Comm_free(&d));
  }
}

static void noncontiguous(void) {
  /* Every other double of 2 * N: a vector type, through many slots. */
  enum { N = 70001 };
  double* in = malloc(sizeof(double) * 2 * N);
  double* out = malloc(sizeof(double) * 2 * N);
  CHECK(in && out);
  MPI_Datatype every2;
  OK(MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &every2));
  OK(MPI_Type_commit(&every2));
  for (int i = 0; i < 2 * N; ++i) {
    in[i] = (i % 2) ? -1.0 : (double)(rank * 3 + i);
    out[i] = -7.0;
  }
  OK(MPI_Allreduce(in, out, 1, every2, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < 2 * N; ++i)
    CHECK(out[i] == ((i % 2) ? -7.0 : (double)(3 * size * (size - 1) / 2 + size * i)));
  /* Bcast and allgather of the same type. */
  if (rank == 1 % size)
    for (int i = 0; i < 2 * N; i += 2) out[i] = i * 0.5;
  OK(MPI_Bcast(out, 1, every2, 1 % size, MPI_COMM_WORLD));
  for (int i = 0; i < 2 * N; ++i) CHECK(out[i] == ((i % 2) ? -7.0 : i * 0.5));
  OK(MPI_Type_free(&every2));
  free(in);
  free(out);

  /* MINLOC on (double, int) pairs: 12 packed bytes, 16 in memory. */
  enum { M = 9001 };
  struct { double v; int i; } *p = malloc(sizeof *p * M), *r = malloc(sizeof *r * M);
  CHECK(p && r);
  for (int k = 0; k < M; ++k) {
    p[k].v = (double)((k + rank) % size);
    p[k].i = rank;
  }
  OK(MPI_Allreduce(p, r, M, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
  for (int k = 0; k < M; ++k) {
    /* value 0 is held by rank (size - k % size) % size, the only one */
    CHECK(r[k].v == 0.0);
    CHECK(r[k].i == (size - k % size) % size);
  }
  free(p);
  free(r);

  /* Zero sizes. */
  OK(MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  OK(MPI_Bcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
  OK(MPI_Allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD));
  OK(MPI_Reduce(NULL, NULL, 0, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
}

static void identicalBits(void) {
  enum { N = 50000 };
  float* x = malloc(sizeof(float) * N);
  float* y = malloc(sizeof(float) * N);
  float* lo = malloc(sizeof(float) * N);
  float* hi = malloc(sizeof(float) * N);
  CHECK(x && y && lo && hi);
  unsigned s = 12345u + 977u * (unsigned)rank;
  for (int i = 0; i < N; ++i) {
    s = s * 1103515245u + 12345u;
    x[i] = (float)((s >> 8) % 100000) * 1e-3f * ((s & 1) ? 1.0f : -1e4f);
  }
  OK(MPI_Allreduce(x, y, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
  /* The same bits everywhere: min and max of the bit patterns agree. */
  OK(MPI_Allreduce(y, lo, N, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  OK(MPI_Allreduce(y, hi, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  CHECK(memcmp(lo, hi, sizeof(float) * N) == 0);
  CHECK(memcmp(lo, y, sizeof(float) * N) == 0);
  free(x);
  free(y);
  free(lo);
  free(hi);
}

/* Only where the shared-memory algorithms are forced: with the rules, ranks
 * that pass different sizes may pick different algorithms (message-based
 * ones cannot tell such a mismatch from a slow peer). */
static void mismatches(void) {
  const char* ar = getenv("LOOM_COLL_ALLREDUCE");
  const char* re = getenv("LOOM_COLL_REDUCE");
  if (size < 2 || !ar || strcmp(ar, "shm") || !re || strcmp(re, "shm")) return;
  MPI_Comm d;
  /* Counts differ: every rank waits for all, so every rank finds out. */
  long big[40000];
  for (int i = 0; i < 40000; ++i) big[i] = i;
  for (int k = 0; k < 2; ++k) {
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    long out[40000];
    const int n = k == 0 ? (rank == 0 ? 2 : 1) : (rank == 0 ? 40000 : 10);
    int rc = MPI_Allreduce(big, out, n, MPI_LONG, MPI_SUM, d);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE);
    OK(MPI_Comm_free(&d));
  }
  /* Roots differ: rank 0, the root for all but the last rank, waits for
   * every rank's data, so it finds out. */
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
  int v = rank, w = 0;
  int rc = MPI_Reduce(&v, &w, 1, MPI_INT, MPI_SUM, rank == size - 1 ? size - 1 : 0, d);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  if (rank == 0) CHECK(cls == MPI_ERR_ROOT);
  OK(MPI_Comm_free(&d));
  OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  firstCollectiveIsNonblocking();
  interleaved();
  manyCommunicators();
  noncontiguous();
  identicalBits();
  mismatches();
  printf("coll_shm: rank %d ok\n", rank);
  MPI_Finalize();
  return 0;
}
