/* coll_move: the data-movement collectives (bcast, gather(v), scatter(v),
 * allgather(v), alltoall(v,w)) checked element by element, for a sweep of
 * message sizes (0, 1, odd, each selector threshold -1/+0/+1, 1 MiB), every
 * root class (first, middle, last), MPI_IN_PLACE where allowed, and a
 * non-contiguous vector type. Which algorithm runs is chosen by the caller
 * through LOOM_COLL_<NAME> (coll_move_tests.cmake forces each one).
 *
 *   coll_move sweep [quick]   blocking calls over the size sweep
 *   coll_move nonblocking     MPI_I* calls in flight at once on three
 *                             communicators while the ranks compute
 *   coll_move errors          bad arguments under MPI_ERRORS_RETURN
 * Prints "coll_move: rank R ok". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define CHECK(c)                                                               \
  do {                                                                         \
    if (!(c)) {                                                                \
      fprintf(stderr, "coll_move: rank %d: line %d: %s\n", rank, __LINE__, #c); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                            \
    }                                                                          \
  } while (0)

#define CHECKB(c, what, n, root)                                                          \
  do {                                                                                    \
    if (!(c)) {                                                                           \
      fprintf(stderr, "coll_move: rank %d: %s n=%d root=%d: line %d: %s\n", rank, what, \
              (int)(n), root, __LINE__, #c);                                              \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                       \
    }                                                                                     \
  } while (0)

/* The byte rank `from` sends to rank `to` at index i. */
static unsigned char val(int from, int to, long i) {
  return (unsigned char)((from * 31 + to * 7 + i * 13 + 1) % 251);
}

static unsigned char* xmalloc(size_t n) {
  unsigned char* p = malloc(n ? n : 1);
  CHECK(p != NULL);
  return p;
}

/* ---- blocking checks, in bytes (MPI_BYTE) so thresholds are exact ---- */

static void bcastCheck(MPI_Comm comm, int n, int root) {
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  unsigned char* b = xmalloc(n);
  for (long i = 0; i < n; ++i) b[i] = r == root ? val(root, 0, i) : 0xEE;
  CHECK(MPI_Bcast(b, n, MPI_BYTE, root, comm) == MPI_SUCCESS);
  for (long i = 0; i < n; ++i) CHECKB(b[i] == val(root, 0, i), "bcast", n, root);
  free(b);
}

static void gatherCheck(MPI_Comm comm, int n, int root, int inPlace, int v) {
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  /* gatherv: rank i sends n + i bytes, stored in reverse order. */
  int* counts = malloc(sizeof(int) * p);
  int* displs = malloc(sizeof(int) * p);
  long total = 0;
  for (int i = p - 1; i >= 0; --i) {
    counts[i] = v ? n + i : n;
    displs[i] = (int)total;
    total += counts[i];
  }
  if (!v)
    for (int i = 0; i < p; ++i) displs[i] = i * n;
  int mine = counts[r];
  unsigned char* s = xmalloc(mine);
  unsigned char* d = xmalloc(total);
  for (long i = 0; i < mine; ++i) s[i] = val(r, root, i);
  memset(d, 0xEE, total);
  const void* sb = s;
  if (inPlace && r == root) {
    memcpy(d + displs[r], s, mine);
    sb = MPI_IN_PLACE;
  }
  if (v)
    CHECK(MPI_Gatherv(sb, mine, MPI_BYTE, d, counts, displs, MPI_BYTE, root, comm) == MPI_SUCCESS);
  else
    CHECK(MPI_Gather(sb, n, MPI_BYTE, d, n, MPI_BYTE, root, comm) == MPI_SUCCESS);
  if (r == root)
    for (int j = 0; j < p; ++j)
      for (long i = 0; i < counts[j]; ++i)
        CHECKB(d[displs[j] + i] == val(j, root, i), v ? "gatherv" : "gather", n, root);
  free(s), free(d), free(counts), free(displs);
}

static void scatterCheck(MPI_Comm comm, int n, int root, int inPlace, int v) {
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  int* counts = malloc(sizeof(int) * p);
  int* displs = malloc(sizeof(int) * p);
  long total = 0;
  for (int i = p - 1; i >= 0; --i) {
    counts[i] = v ? n + (p - i) % 3 : n;
    displs[i] = (int)total;
    total += counts[i];
  }
  if (!v)
    for (int i = 0; i < p; ++i) displs[i] = i * n;
  unsigned char* s = xmalloc(total);
  unsigned char* d = xmalloc(counts[r]);
  for (int j = 0; j < p; ++j)
    for (long i = 0; i < counts[j]; ++i) s[displs[j] + i] = val(root, j, i);
  memset(d, 0xEE, counts[r]);
  void* rb = d;
  if (inPlace && r == root) rb = MPI_IN_PLACE;
  if (v)
    CHECK(MPI_Scatterv(s, counts, displs, MPI_BYTE, rb, counts[r], MPI_BYTE, root, comm) ==
          MPI_SUCCESS);
  else
    CHECK(MPI_Scatter(s, n, MPI_BYTE, rb, n, MPI_BYTE, root, comm) == MPI_SUCCESS);
  if (rb != MPI_IN_PLACE)
    for (long i = 0; i < counts[r]; ++i) CHECKB(d[i] == val(root, r, i), v ? "scatterv" : "scatter", n, root);
  free(s), free(d), free(counts), free(displs);
}

static void allgatherCheck(MPI_Comm comm, int n, int inPlace, int v) {
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  int* counts = malloc(sizeof(int) * p);
  int* displs = malloc(sizeof(int) * p);
  long total = 0;
  for (int i = p - 1; i >= 0; --i) {
    counts[i] = v ? (i % 2 ? n : n / 2) : n;
    displs[i] = (int)total;
    total += counts[i];
  }
  if (!v)
    for (int i = 0; i < p; ++i) displs[i] = i * n;
  unsigned char* s = xmalloc(counts[r]);
  unsigned char* d = xmalloc(total);
  for (long i = 0; i < counts[r]; ++i) s[i] = val(r, 0, i);
  memset(d, 0xEE, total);
  const void* sb = s;
  if (inPlace) {
    memcpy(d + displs[r], s, counts[r]);
    sb = MPI_IN_PLACE;
  }
  if (v)
    CHECK(MPI_Allgatherv(sb, counts[r], MPI_BYTE, d, counts, displs, MPI_BYTE, comm) == MPI_SUCCESS);
  else
    CHECK(MPI_Allgather(sb, n, MPI_BYTE, d, n, MPI_BYTE, comm) == MPI_SUCCESS);
  for (int j = 0; j < p; ++j)
    for (long i = 0; i < counts[j]; ++i)
      CHECKB(d[displs[j] + i] == val(j, 0, i), v ? "allgatherv" : "allgather", n, -1);
  free(s), free(d), free(counts), free(displs);
}

/* kind 0: alltoall, 1: alltoallv, 2: alltoallw. v/w: r sends n + (r+j)%3
 * bytes to j (symmetric, so in-place works), blocks in reverse order. */
static void alltoallCheck(MPI_Comm comm, int n, int inPlace, int kind) {
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  int *sc = malloc(sizeof(int) * p), *rc = malloc(sizeof(int) * p);
  int *sd = malloc(sizeof(int) * p), *rd = malloc(sizeof(int) * p);
  MPI_Datatype* ty = malloc(sizeof(MPI_Datatype) * p);
  long st = 0, rt = 0;
  for (int j = p - 1; j >= 0; --j) {
    sc[j] = kind ? n + (r + j) % 3 : n;
    rc[j] = kind ? n + (j + r) % 3 : n;
    sd[j] = (int)st;
    rd[j] = (int)rt;
    st += sc[j];
    rt += rc[j];
    ty[j] = MPI_BYTE;
  }
  if (!kind)
    for (int j = 0; j < p; ++j) sd[j] = rd[j] = j * n;
  unsigned char* s = xmalloc(st);
  unsigned char* d = xmalloc(rt);
  memset(d, 0xEE, rt);
  unsigned char* src = inPlace ? d : s;
  for (int j = 0; j < p; ++j)
    for (long i = 0; i < sc[j]; ++i) src[sd[j] + i] = val(r, j, i);
  const void* sb = inPlace ? MPI_IN_PLACE : s;
  int err;
  if (kind == 0)
    err = MPI_Alltoall(sb, n, MPI_BYTE, d, n, MPI_BYTE, comm);
  else if (kind == 1)
    err = MPI_Alltoallv(sb, sc, sd, MPI_BYTE, d, rc, rd, MPI_BYTE, comm);
  else
    err = MPI_Alltoallw(sb, sc, sd, ty, d, rc, rd, ty, comm);
  CHECK(err == MPI_SUCCESS);
  for (int j = 0; j < p; ++j)
    for (long i = 0; i < rc[j]; ++i)
      CHECKB(d[rd[j] + i] == val(j, r, i), kind == 0 ? "alltoall" : kind == 1 ? "alltoallv" : "alltoallw", n, -1);
  free(s), free(d), free(sc), free(rc), free(sd), free(rd), free(ty);
}

/* A vector type (2 ints, 1-int hole) on one side, MPI_INT on the other. */
static void noncontigCheck(MPI_Comm comm, int c) {
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  MPI_Datatype vec;
  CHECK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec) == MPI_SUCCESS);
  CHECK(MPI_Type_commit(&vec) == MPI_SUCCESS);
  int* s = malloc(sizeof(int) * (3 * c * p + 1));
  int* d = malloc(sizeof(int) * (2 * c * p + 1));
  /* bcast of c vectors from the last rank */
  for (int i = 0; i < 3 * c; ++i) s[i] = r == p - 1 ? i * 5 + 1 : -1;
  CHECK(MPI_Bcast(s, c, vec, p - 1, comm) == MPI_SUCCESS);
  for (int i = 0; i < 3 * c; ++i) CHECK(s[i] == (i % 3 == 1 ? (r == p - 1 ? i * 5 + 1 : -1) : i * 5 + 1));
  /* allgather: c vectors out, 2c ints in */
  for (int i = 0; i < 3 * c; ++i) s[i] = r * 1000 + i;
  CHECK(MPI_Allgather(s, c, vec, d, 2 * c, MPI_INT, comm) == MPI_SUCCESS);
  for (int j = 0; j < p; ++j)
    for (int k = 0; k < 2 * c; ++k) CHECK(d[j * 2 * c + k] == j * 1000 + (k / 2) * 3 + (k % 2) * 2);
  /* alltoall: 2c ints out, c vectors in */
  for (int i = 0; i < 2 * c * p; ++i) d[i] = r * 100000 + i;
  for (int i = 0; i < 3 * c * p; ++i) s[i] = -7;
  CHECK(MPI_Alltoall(d, 2 * c, MPI_INT, s, c, vec, comm) == MPI_SUCCESS);
  for (int j = 0; j < p; ++j)
    for (int e = 0; e < c; ++e) {
      int* el = s + (j * c + e) * 3;
      CHECK(el[0] == j * 100000 + r * 2 * c + 2 * e);
      CHECK(el[1] == -7);
      CHECK(el[2] == j * 100000 + r * 2 * c + 2 * e + 1);
    }
  /* gather to the middle rank: c vectors -> 2c ints */
  int root = p / 2;
  for (int i = 0; i < 3 * c; ++i) s[i] = r * 1000 + i;
  CHECK(MPI_Gather(s, c, vec, d, 2 * c, MPI_INT, root, comm) == MPI_SUCCESS);
  if (r == root)
    for (int j = 0; j < p; ++j)
      for (int k = 0; k < 2 * c; ++k) CHECK(d[j * 2 * c + k] == j * 1000 + (k / 2) * 3 + (k % 2) * 2);
  /* scatter from the middle rank: 2c ints -> c vectors */
  for (int i = 0; i < 2 * c * p; ++i) d[i] = root * 100 + i;
  for (int i = 0; i < 3 * c; ++i) s[i] = -7;
  CHECK(MPI_Scatter(d, 2 * c, MPI_INT, s, c, vec, root, comm) == MPI_SUCCESS);
  for (int e = 0; e < c; ++e) {
    CHECK(s[3 * e] == root * 100 + r * 2 * c + 2 * e);
    CHECK(s[3 * e + 1] == -7);
    CHECK(s[3 * e + 2] == root * 100 + r * 2 * c + 2 * e + 1);
  }
  MPI_Type_free(&vec);
  free(s), free(d);
}

static void sweep(int quick) {
  /* Sizes: 0, 1, odd, and each threshold of coll/selector.cc -1/+0/+1. */
  static const int full[] = {0,     1,     13,    255,   256,   257,   1023,  1024,  1025,
                             2047,  2048,  2049,  12287, 12288, 12289, 16383, 16384, 16385,
                             32767, 32768, 32769, 65535, 65536, 65537, 1 << 20};
  static const int few[] = {0, 1, 13, 256, 257, 2049, 16385, 32769};
  const int* sizes = quick ? few : full;
  int ns = quick ? (int)(sizeof few / sizeof *few) : (int)(sizeof full / sizeof *full);
  int roots[3] = {0, size / 2, size - 1};
  for (int k = 0; k < ns; ++k) {
    int n = sizes[k];
    int big = n >= (1 << 20);
    for (int ri = 0; ri < 3; ++ri) {
      int root = roots[ri];
      if (ri > 0 && root == roots[ri - 1]) continue;
      if (big && ri != 2) continue; /* 1 MiB: the last root only */
      bcastCheck(MPI_COMM_WORLD, n, root);
      for (int ip = 0; ip < 2; ++ip) {
        gatherCheck(MPI_COMM_WORLD, n, root, ip, 0);
        scatterCheck(MPI_COMM_WORLD, n, root, ip, 0);
        if (!big) {
          gatherCheck(MPI_COMM_WORLD, n, root, ip, 1);
          scatterCheck(MPI_COMM_WORLD, n, root, ip, 1);
        }
      }
    }
    for (int ip = 0; ip < 2; ++ip) {
      if (big && ip) continue;
      allgatherCheck(MPI_COMM_WORLD, n, ip, 0);
      allgatherCheck(MPI_COMM_WORLD, n, ip, 1);
      if (big && size > 4) continue;
      for (int kind = 0; kind < 3; ++kind) alltoallCheck(MPI_COMM_WORLD, n, ip, kind);
    }
  }
  noncontigCheck(MPI_COMM_WORLD, 1);
  noncontigCheck(MPI_COMM_WORLD, 500);
}

/* ---- nonblocking: many in flight on world, a dup and a split ---- */

static void nonblocking(void) {
  MPI_Comm dup, half;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS);
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half) == MPI_SUCCESS);
  int hr, hp;
  MPI_Comm_rank(half, &hr);
  MPI_Comm_size(half, &hp);
  enum { N = 3000 };
  int p = size;
  int* bc = malloc(sizeof(int) * N * 3);
  int* ag = malloc(sizeof(int) * N * p);
  int* a2s = malloc(sizeof(int) * 7 * p);
  int* a2r = malloc(sizeof(int) * 7 * p);
  int* gv = malloc(sizeof(int) * (hp * (hp + 1) / 2 + 1));
  int* sv = malloc(sizeof(int) * 64);
  int *counts = malloc(sizeof(int) * p), *displs = malloc(sizeof(int) * p);
  int* w = malloc(sizeof(int) * p * 2);
  int* wr = malloc(sizeof(int) * p * 2);
  int *one = malloc(sizeof(int) * p), *two = malloc(sizeof(int) * p);
  int *d1 = malloc(sizeof(int) * p), *d2 = malloc(sizeof(int) * p);
  MPI_Datatype* wt = malloc(sizeof(MPI_Datatype) * p);
  MPI_Request req[8];
  /* 1. Ibcast of a vector type on dup, freed right after the call. */
  MPI_Datatype vec;
  CHECK(MPI_Type_vector(N, 1, 3, MPI_INT, &vec) == MPI_SUCCESS);
  CHECK(MPI_Type_commit(&vec) == MPI_SUCCESS);
  for (int i = 0; i < 3 * N; ++i) bc[i] = rank == 0 ? i : -1;
  CHECK(MPI_Ibcast(bc, 1, vec, 0, dup, &req[0]) == MPI_SUCCESS);
  CHECK(MPI_Type_free(&vec) == MPI_SUCCESS);
  /* 2. Iallgather in place on world. */
  for (int i = 0; i < N; ++i) ag[rank * N + i] = rank * N + i;
  CHECK(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ag, N, MPI_INT, MPI_COMM_WORLD,
                       &req[1]) == MPI_SUCCESS);
  /* 3. Ialltoall on dup. */
  for (int i = 0; i < 7 * p; ++i) a2s[i] = rank * 1000 + i, a2r[i] = -1;
  CHECK(MPI_Ialltoall(a2s, 7, MPI_INT, a2r, 7, MPI_INT, dup, &req[2]) == MPI_SUCCESS);
  /* 4. Igatherv on half to its last rank: rank i sends i + 1 ints. */
  for (int i = 0, at = 0; i < hp; ++i) counts[i] = i + 1, displs[i] = at, at += i + 1;
  int mine[64];
  for (int i = 0; i <= hr; ++i) mine[i] = hr * 10 + i;
  CHECK(MPI_Igatherv(mine, hr + 1, MPI_INT, gv, counts, displs, MPI_INT, hp - 1, half, &req[3]) ==
        MPI_SUCCESS);
  /* 5. Iscatter on half from its rank 0. */
  int scat[64];
  for (int i = 0; i < 2 * hp; ++i) scat[i] = 500 + i;
  CHECK(MPI_Iscatter(scat, 2, MPI_INT, sv, 2, MPI_INT, 0, half, &req[4]) == MPI_SUCCESS);
  /* 6. Ialltoallw on world: one int to even ranks, two to odd ones. */
  for (int j = 0, at = 0; j < p; ++j) {
    one[j] = j % 2 + 1;
    two[j] = rank % 2 + 1;
    d1[j] = at * (int)sizeof(int);
    at += 2;
    d2[j] = d1[j];
    wt[j] = MPI_INT;
    w[2 * j] = rank * 10 + j, w[2 * j + 1] = rank * 10 + j + 1;
    wr[2 * j] = wr[2 * j + 1] = -1;
  }
  CHECK(MPI_Ialltoallw(w, one, d1, wt, wr, two, d2, wt, MPI_COMM_WORLD, &req[5]) == MPI_SUCCESS);
  /* Compute while they progress; test until all are done. */
  int flag = 0;
  volatile double x = 0;
  while (!flag) {
    for (int i = 0; i < 1000; ++i) x += i * 0.5;
    CHECK(MPI_Testall(6, req, &flag, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  }
  for (int i = 0; i < 3 * N; ++i) CHECK(bc[i] == (i % 3 == 0 || rank == 0 ? i : -1));
  for (int i = 0; i < N * p; ++i) CHECK(ag[i] == i);
  for (int j = 0; j < p; ++j)
    for (int i = 0; i < 7; ++i) CHECK(a2r[j * 7 + i] == j * 1000 + rank * 7 + i);
  if (hr == hp - 1)
    for (int j = 0; j < hp; ++j)
      for (int i = 0; i <= j; ++i) CHECK(gv[displs[j] + i] == j * 10 + i);
  CHECK(sv[0] == 500 + 2 * hr && sv[1] == 501 + 2 * hr);
  for (int j = 0; j < p; ++j) {
    CHECK(wr[2 * j] == j * 10 + rank);
    if (rank % 2) CHECK(wr[2 * j + 1] == j * 10 + rank + 1);
    else CHECK(wr[2 * j + 1] == -1);
  }
  /* The same collective several times at once on one communicator. */
  int b[4][5];
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 5; ++i) b[k][i] = rank == k % size ? k * 100 + i : 0;
    CHECK(MPI_Ibcast(b[k], 5, MPI_INT, k % size, MPI_COMM_WORLD, &req[k]) == MPI_SUCCESS);
  }
  for (int k = 3; k >= 0; --k) CHECK(MPI_Wait(&req[k], MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 5; ++i) CHECK(b[k][i] == k * 100 + i);
  /* More calls in flight than finished schedules are kept for reuse (8),
   * each of another size and root (so another shape of rounds), waited in
   * reverse; then blocking calls of yet other sizes, which reuse them. */
  enum { kMany = 12, kManyMax = 8 * kMany };
  static int many[kMany][kManyMax];
  MPI_Request mreq[kMany];
  for (int k = 0; k < kMany; ++k) {
    const int n = 1 + 7 * k, root = (k * 5) % size;
    for (int i = 0; i < n; ++i) many[k][i] = rank == root ? k * 1000 + i : -1;
    CHECK(MPI_Ibcast(many[k], n, MPI_INT, root, MPI_COMM_WORLD, &mreq[k]) == MPI_SUCCESS);
  }
  for (int k = kMany - 1; k >= 0; --k) CHECK(MPI_Wait(&mreq[k], MPI_STATUS_IGNORE) == MPI_SUCCESS);
  for (int k = 0; k < kMany; ++k)
    for (int i = 0; i < 1 + 7 * k; ++i) CHECK(many[k][i] == k * 1000 + i);
  for (int k = 0; k < kMany; ++k) {
    const int n = kManyMax - 5 * k, root = (k * 3 + 1) % size;
    for (int i = 0; i < n; ++i) many[k][i] = rank == root ? k * 2000 + i : -1;
    CHECK(MPI_Bcast(many[k], n, MPI_INT, root, MPI_COMM_WORLD) == MPI_SUCCESS);
    for (int i = 0; i < n; ++i) CHECK(many[k][i] == k * 2000 + i);
  }
  /* Iscatterv, Iallgatherv, Ialltoallv, Igather on half, waited all. */
  int sc2[64], r2[64], ga[64], a2[64], av[64], avr[64], gg[64];
  for (int i = 0; i < hp; ++i) counts[i] = 1 + i % 2, displs[i] = 3 * i;
  for (int i = 0; i < 3 * hp; ++i) sc2[i] = 900 + i;
  CHECK(MPI_Iscatterv(sc2, counts, displs, MPI_INT, r2, counts[hr], MPI_INT, hp / 2, half,
                      &req[0]) == MPI_SUCCESS);
  int ag2[2] = {hr, -hr};
  CHECK(MPI_Iallgatherv(ag2, counts[hr], MPI_INT, ga, counts, displs, MPI_INT, half, &req[1]) ==
        MPI_SUCCESS);
  int ones[64], od[64];
  for (int i = 0; i < hp; ++i) ones[i] = 1, od[i] = i, av[i] = hr * 100 + i;
  CHECK(MPI_Ialltoallv(av, ones, od, MPI_INT, avr, ones, od, MPI_INT, half, &req[2]) == MPI_SUCCESS);
  a2[0] = hr + 40;
  CHECK(MPI_Igather(a2, 1, MPI_INT, gg, 1, MPI_INT, 0, half, &req[3]) == MPI_SUCCESS);
  CHECK(MPI_Waitall(4, req, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  for (int i = 0; i < counts[hr]; ++i) CHECK(r2[i] == 900 + displs[hr] + i);
  for (int j = 0; j < hp; ++j) {
    CHECK(ga[displs[j]] == j);
    if (counts[j] == 2) CHECK(ga[displs[j] + 1] == -j);
    CHECK(avr[j] == j * 100 + hr);
    if (hr == 0) CHECK(gg[j] == j + 40);
  }
  CHECK(MPI_Comm_free(&half) == MPI_SUCCESS);
  CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS);
  free(bc), free(ag), free(a2s), free(a2r), free(gv), free(sv), free(counts), free(displs);
  free(w), free(wr), free(one), free(two), free(d1), free(d2), free(wt);
}

/* ---- bad input: every rank fails the same way, so nothing starts ---- */

static void errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int buf[16] = {0}, out[16 * 64];
  int counts[64], displs[64];
  MPI_Datatype types[64];
  for (int i = 0; i < size; ++i) counts[i] = 1, displs[i] = i, types[i] = MPI_INT;
  MPI_Request req;
  CHECK(MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_NULL) == MPI_ERR_COMM);
  CHECK(MPI_Bcast(buf, -1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_ERR_COUNT);
  CHECK(MPI_Bcast(buf, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD) == MPI_ERR_TYPE);
  CHECK(MPI_Bcast(buf, 1, MPI_INT, size, MPI_COMM_WORLD) == MPI_ERR_ROOT);
  CHECK(MPI_Bcast(buf, 1, MPI_INT, -3, MPI_COMM_WORLD) == MPI_ERR_ROOT);
  CHECK(MPI_Bcast(NULL, 4, MPI_INT, 0, MPI_COMM_WORLD) == MPI_ERR_BUFFER);
  CHECK(MPI_Bcast(MPI_IN_PLACE, 4, MPI_INT, 0, MPI_COMM_WORLD) == MPI_ERR_BUFFER);
  CHECK(MPI_Ibcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD, NULL) == MPI_ERR_ARG);
  MPI_Datatype unc;
  CHECK(MPI_Type_contiguous(2, MPI_INT, &unc) == MPI_SUCCESS);
  CHECK(MPI_Allgather(buf, 1, unc, out, 1, unc, MPI_COMM_WORLD) == MPI_ERR_TYPE);
  CHECK(MPI_Type_free(&unc) == MPI_SUCCESS);
  CHECK(MPI_Allgather(buf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_WORLD) == MPI_ERR_BUFFER);
  CHECK(MPI_Alltoall(buf, 1, MPI_INT, out, -1, MPI_INT, MPI_COMM_WORLD) == MPI_ERR_COUNT);
  CHECK(MPI_Gather(buf, 1, MPI_INT, out, 1, MPI_INT, size + 2, MPI_COMM_WORLD) == MPI_ERR_ROOT);
  CHECK(MPI_Scatter(buf, 1, MPI_INT, out, 1, MPI_INT, -1, MPI_COMM_WORLD) == MPI_ERR_ROOT);
  CHECK(MPI_Alltoallv(buf, NULL, displs, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD) ==
        MPI_ERR_ARG);
  counts[size - 1] = -2;
  CHECK(MPI_Alltoallv(buf, counts, displs, MPI_INT, out, counts, displs, MPI_INT,
                      MPI_COMM_WORLD) == MPI_ERR_COUNT);
  CHECK(MPI_Allgatherv(buf, 1, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD) ==
        MPI_ERR_COUNT);
  counts[size - 1] = 1;
  types[size - 1] = MPI_DATATYPE_NULL;
  CHECK(MPI_Alltoallw(buf, counts, displs, types, out, counts, displs, types, MPI_COMM_WORLD) ==
        MPI_ERR_TYPE);
  CHECK(MPI_Ialltoallw(buf, counts, displs, types, out, counts, displs, types, MPI_COMM_WORLD,
                       NULL) == MPI_ERR_ARG);
  CHECK(MPI_Igather(buf, 1, MPI_INT, out, 1, MPI_INT, 0, MPI_COMM_NULL, &req) == MPI_ERR_COMM);
  /* Still usable afterwards. */
  buf[0] = rank == 0 ? 42 : 0;
  CHECK(MPI_Bcast(buf, 1, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(buf[0] == 42);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "sweep";
  if (!strcmp(mode, "sweep"))
    sweep(argc > 2 && !strcmp(argv[2], "quick"));
  else if (!strcmp(mode, "nonblocking"))
    nonblocking();
  else if (!strcmp(mode, "errors"))
    errors();
  else
    CHECK(!"unknown mode");
  printf("coll_move: rank %d ok\n", rank);
  MPI_Finalize();
  return 0;
}
