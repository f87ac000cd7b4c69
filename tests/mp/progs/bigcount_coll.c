/* The MPI 4.0 large-count (_c) collectives at small counts: each of the
 * blocking and nonblocking _c forms is run next to its int twin on the same
 * input, and all four (int, I*, _c, I*_c) must give the expected result.
 * The v and w variants use uneven counts and displacements with gaps, so
 * an array read with the wrong element width (int vs MPI_Count/MPI_Aint)
 * shows. Also MPI_IN_PLACE through the _c forms, MPI_Reduce_local_c, and
 * error classes for negative counts, including ones an int cannot hold. */
#include <string.h>

#include "comm_checks.h"

static int size, rank;

enum { M = 3, W = 4, CAP = 4096 };

static int v(int r, int j) { return r * 1000 + j + 1; }
static int cnt(int i) { return i % 3 + 1; }            /* v-variant count of rank i */
static int cnt2(int a, int b) { return (a + b) % 3 + 1; } /* alltoallv, symmetric */

static int sbuf[CAP], rbuf[CAP], expect[CAP];
static int icounts[64], idispls[64], iscounts[64], isdispls[64], ircounts[64], irdispls[64];
static MPI_Count ccounts[64], cscounts[64], crcounts[64];
static MPI_Aint cdispls[64], csdispls[64], crdispls[64];
static MPI_Datatype types[64];

#define FORMS 4 /* 0 int, 1 I int, 2 _c, 3 I _c */
#define NB(f) ((f) % 2 == 1)

static void finish(int form, MPI_Request* r) {
  if (NB(form)) OK(MPI_Wait(r, MPI_STATUS_IGNORE));
}

static void reset(int fillSend) {
  for (int i = 0; i < CAP; ++i) {
    sbuf[i] = fillSend ? v(rank, i) : 0;
    rbuf[i] = -1;
    expect[i] = -1;
  }
}

static void compare(const char* what, int form, int n) {
  for (int i = 0; i < n; ++i) {
    if (rbuf[i] != expect[i]) {
      fprintf(stderr, "bigcount_coll: rank %d: %s form %d: element %d is %d, expected %d\n", rank,
              what, form, i, rbuf[i], expect[i]);
      CHECK(rbuf[i] == expect[i]);
    }
  }
  ++checks;
}

/* The v layout: rank i's block at displs[i] = i*(M+1)+1, cnt(i) elements. */
static void vLayout(void) {
  for (int i = 0; i < size; ++i) {
    icounts[i] = cnt(i);
    idispls[i] = i * (M + 1) + 1;
    ccounts[i] = icounts[i];
    cdispls[i] = idispls[i];
  }
}

static void bcast(int form) {
  reset(0);
  const int root = size - 1, n = 7;
  for (int j = 0; j < n; ++j) {
    expect[j] = v(root, j);
    rbuf[j] = rank == root ? v(root, j) : 0;
  }
  MPI_Request r;
  switch (form) {
    case 0: OK(MPI_Bcast(rbuf, n, MPI_INT, root, MPI_COMM_WORLD)); break;
    case 1: OK(MPI_Ibcast(rbuf, n, MPI_INT, root, MPI_COMM_WORLD, &r)); break;
    case 2: OK(MPI_Bcast_c(rbuf, n, MPI_INT, root, MPI_COMM_WORLD)); break;
    case 3: OK(MPI_Ibcast_c(rbuf, n, MPI_INT, root, MPI_COMM_WORLD, &r)); break;
  }
  finish(form, &r);
  compare("bcast", form, n + 1);
}

static void gather(int form, int vary) {
  reset(1);
  vLayout();
  const int root = 0, me = vary ? cnt(rank) : M;
  MPI_Request r;
  if (rank == root)
    for (int i = 0; i < size; ++i)
      for (int j = 0; j < (vary ? cnt(i) : M); ++j) expect[(vary ? idispls[i] : i * M) + j] = v(i, j);
  if (!vary) {
    switch (form) {
      case 0: OK(MPI_Gather(sbuf, M, MPI_INT, rbuf, M, MPI_INT, root, MPI_COMM_WORLD)); break;
      case 1: OK(MPI_Igather(sbuf, M, MPI_INT, rbuf, M, MPI_INT, root, MPI_COMM_WORLD, &r)); break;
      case 2: OK(MPI_Gather_c(sbuf, M, MPI_INT, rbuf, M, MPI_INT, root, MPI_COMM_WORLD)); break;
      case 3: OK(MPI_Igather_c(sbuf, M, MPI_INT, rbuf, M, MPI_INT, root, MPI_COMM_WORLD, &r)); break;
    }
  } else {
    switch (form) {
      case 0: OK(MPI_Gatherv(sbuf, me, MPI_INT, rbuf, icounts, idispls, MPI_INT, root,
                             MPI_COMM_WORLD)); break;
      case 1: OK(MPI_Igatherv(sbuf, me, MPI_INT, rbuf, icounts, idispls, MPI_INT, root,
                              MPI_COMM_WORLD, &r)); break;
      case 2: OK(MPI_Gatherv_c(sbuf, me, MPI_INT, rbuf, ccounts, cdispls, MPI_INT, root,
                               MPI_COMM_WORLD)); break;
      case 3: OK(MPI_Igatherv_c(sbuf, me, MPI_INT, rbuf, ccounts, cdispls, MPI_INT, root,
                                MPI_COMM_WORLD, &r)); break;
    }
  }
  finish(form, &r);
  compare(vary ? "gatherv" : "gather", form, size * (M + 1) + 2);
}

static void scatter(int form, int vary) {
  reset(1);
  vLayout();
  const int root = size / 2, me = vary ? cnt(rank) : M;
  MPI_Request r;
  for (int j = 0; j < me; ++j) expect[j] = v(root, (vary ? idispls[rank] : rank * M) + j);
  if (!vary) {
    switch (form) {
      case 0: OK(MPI_Scatter(sbuf, M, MPI_INT, rbuf, M, MPI_INT, root, MPI_COMM_WORLD)); break;
      case 1: OK(MPI_Iscatter(sbuf, M, MPI_INT, rbuf, M, MPI_INT, root, MPI_COMM_WORLD, &r)); break;
      case 2: OK(MPI_Scatter_c(sbuf, M, MPI_INT, rbuf, M, MPI_INT, root, MPI_COMM_WORLD)); break;
      case 3: OK(MPI_Iscatter_c(sbuf, M, MPI_INT, rbuf, M, MPI_INT, root, MPI_COMM_WORLD, &r)); break;
    }
  } else {
    switch (form) {
      case 0: OK(MPI_Scatterv(sbuf, icounts, idispls, MPI_INT, rbuf, me, MPI_INT, root,
                              MPI_COMM_WORLD)); break;
      case 1: OK(MPI_Iscatterv(sbuf, icounts, idispls, MPI_INT, rbuf, me, MPI_INT, root,
                               MPI_COMM_WORLD, &r)); break;
      case 2: OK(MPI_Scatterv_c(sbuf, ccounts, cdispls, MPI_INT, rbuf, me, MPI_INT, root,
                                MPI_COMM_WORLD)); break;
      case 3: OK(MPI_Iscatterv_c(sbuf, ccounts, cdispls, MPI_INT, rbuf, me, MPI_INT, root,
                                 MPI_COMM_WORLD, &r)); break;
    }
  }
  finish(form, &r);
  compare(vary ? "scatterv" : "scatter", form, M + 2);
}

static void allgather(int form, int vary, int inPlace) {
  reset(1);
  vLayout();
  const int me = vary ? cnt(rank) : M;
  MPI_Request r;
  for (int i = 0; i < size; ++i)
    for (int j = 0; j < (vary ? cnt(i) : M); ++j) expect[(vary ? idispls[i] : i * M) + j] = v(i, j);
  const void* s = sbuf;
  if (inPlace) {
    s = MPI_IN_PLACE;
    for (int j = 0; j < me; ++j) rbuf[(vary ? idispls[rank] : rank * M) + j] = v(rank, j);
  }
  if (!vary) {
    switch (form) {
      case 0: OK(MPI_Allgather(s, M, MPI_INT, rbuf, M, MPI_INT, MPI_COMM_WORLD)); break;
      case 1: OK(MPI_Iallgather(s, M, MPI_INT, rbuf, M, MPI_INT, MPI_COMM_WORLD, &r)); break;
      case 2: OK(MPI_Allgather_c(s, M, MPI_INT, rbuf, M, MPI_INT, MPI_COMM_WORLD)); break;
      case 3: OK(MPI_Iallgather_c(s, M, MPI_INT, rbuf, M, MPI_INT, MPI_COMM_WORLD, &r)); break;
    }
  } else {
    switch (form) {
      case 0: OK(MPI_Allgatherv(s, me, MPI_INT, rbuf, icounts, idispls, MPI_INT,
                                MPI_COMM_WORLD)); break;
      case 1: OK(MPI_Iallgatherv(s, me, MPI_INT, rbuf, icounts, idispls, MPI_INT,
                                 MPI_COMM_WORLD, &r)); break;
      case 2: OK(MPI_Allgatherv_c(s, me, MPI_INT, rbuf, ccounts, cdispls, MPI_INT,
                                  MPI_COMM_WORLD)); break;
      case 3: OK(MPI_Iallgatherv_c(s, me, MPI_INT, rbuf, ccounts, cdispls, MPI_INT,
                                   MPI_COMM_WORLD, &r)); break;
    }
  }
  finish(form, &r);
  compare(vary ? "allgatherv" : "allgather", form, size * (M + 1) + 2);
}

static void alltoall(int form) {
  reset(1);
  MPI_Request r;
  for (int i = 0; i < size; ++i)
    for (int j = 0; j < M; ++j) expect[i * M + j] = v(i, rank * M + j);
  switch (form) {
    case 0: OK(MPI_Alltoall(sbuf, M, MPI_INT, rbuf, M, MPI_INT, MPI_COMM_WORLD)); break;
    case 1: OK(MPI_Ialltoall(sbuf, M, MPI_INT, rbuf, M, MPI_INT, MPI_COMM_WORLD, &r)); break;
    case 2: OK(MPI_Alltoall_c(sbuf, M, MPI_INT, rbuf, M, MPI_INT, MPI_COMM_WORLD)); break;
    case 3: OK(MPI_Ialltoall_c(sbuf, M, MPI_INT, rbuf, M, MPI_INT, MPI_COMM_WORLD, &r)); break;
  }
  finish(form, &r);
  compare("alltoall", form, size * M + 2);
}

/* Alltoallv (w = 0) and alltoallw (w = 1, byte displacements). */
static void alltoallv(int form, int w) {
  reset(1);
  MPI_Request r;
  const int unit = w ? (int)sizeof(int) : 1;
  for (int i = 0; i < size; ++i) {
    iscounts[i] = ircounts[i] = cnt2(rank, i);
    isdispls[i] = W * i * unit;
    irdispls[i] = (W * i + 1) * unit;
    cscounts[i] = crcounts[i] = iscounts[i];
    csdispls[i] = isdispls[i];
    crdispls[i] = irdispls[i];
    types[i] = MPI_INT;
    for (int j = 0; j < cnt2(rank, i); ++j) expect[W * i + 1 + j] = v(i, W * rank + j);
  }
  if (!w) {
    switch (form) {
      case 0: OK(MPI_Alltoallv(sbuf, iscounts, isdispls, MPI_INT, rbuf, ircounts, irdispls,
                               MPI_INT, MPI_COMM_WORLD)); break;
      case 1: OK(MPI_Ialltoallv(sbuf, iscounts, isdispls, MPI_INT, rbuf, ircounts, irdispls,
                                MPI_INT, MPI_COMM_WORLD, &r)); break;
      case 2: OK(MPI_Alltoallv_c(sbuf, cscounts, csdispls, MPI_INT, rbuf, crcounts, crdispls,
                                 MPI_INT, MPI_COMM_WORLD)); break;
      case 3: OK(MPI_Ialltoallv_c(sbuf, cscounts, csdispls, MPI_INT, rbuf, crcounts, crdispls,
                                  MPI_INT, MPI_COMM_WORLD, &r)); break;
    }
  } else {
    switch (form) {
      case 0: OK(MPI_Alltoallw(sbuf, iscounts, isdispls, types, rbuf, ircounts, irdispls, types,
                               MPI_COMM_WORLD)); break;
      case 1: OK(MPI_Ialltoallw(sbuf, iscounts, isdispls, types, rbuf, ircounts, irdispls, types,
                                MPI_COMM_WORLD, &r)); break;
      case 2: OK(MPI_Alltoallw_c(sbuf, cscounts, csdispls, types, rbuf, crcounts, crdispls,
                                 types, MPI_COMM_WORLD)); break;
      case 3: OK(MPI_Ialltoallw_c(sbuf, cscounts, csdispls, types, rbuf, crcounts, crdispls,
                                  types, MPI_COMM_WORLD, &r)); break;
    }
  }
  finish(form, &r);
  compare(w ? "alltoallw" : "alltoallv", form, size * W + 2);
}

static int sumOver(int from, int to, int j) { /* sum of v(q, j) for q in [from, to) */
  int s = 0;
  for (int q = from; q < to; ++q) s += v(q, j);
  return s;
}

static void reduce(int form, int inPlace) {
  reset(1);
  const int n = 9, root = size > 1 ? 1 : 0;
  MPI_Request r;
  const void* s = sbuf;
  if (inPlace && rank == root) {
    s = MPI_IN_PLACE;
    for (int j = 0; j < n; ++j) rbuf[j] = v(rank, j);
  }
  if (rank == root)
    for (int j = 0; j < n; ++j) expect[j] = sumOver(0, size, j);
  else
    for (int j = 0; j < n; ++j) expect[j] = -1;
  switch (form) {
    case 0: OK(MPI_Reduce(s, rbuf, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD)); break;
    case 1: OK(MPI_Ireduce(s, rbuf, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &r)); break;
    case 2: OK(MPI_Reduce_c(s, rbuf, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD)); break;
    case 3: OK(MPI_Ireduce_c(s, rbuf, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &r)); break;
  }
  finish(form, &r);
  compare("reduce", form, n + 1);
}

/* Allreduce (kind 0), scan (1), exscan (2). */
static void allKind(int form, int kind, int inPlace) {
  reset(1);
  const int n = 11;
  MPI_Request r;
  const void* s = sbuf;
  if (inPlace) {
    s = MPI_IN_PLACE;
    for (int j = 0; j < n; ++j) rbuf[j] = v(rank, j);
  }
  for (int j = 0; j < n; ++j)
    expect[j] = kind == 0 ? sumOver(0, size, j) : kind == 1 ? sumOver(0, rank + 1, j)
                                                            : sumOver(0, rank, j);
  const char* what = kind == 0 ? "allreduce" : kind == 1 ? "scan" : "exscan";
  if (kind == 0) {
    switch (form) {
      case 0: OK(MPI_Allreduce(s, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD)); break;
      case 1: OK(MPI_Iallreduce(s, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r)); break;
      case 2: OK(MPI_Allreduce_c(s, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD)); break;
      case 3: OK(MPI_Iallreduce_c(s, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r)); break;
    }
  }
  if (kind == 1) {
    switch (form) {
      case 0: OK(MPI_Scan(s, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD)); break;
      case 1: OK(MPI_Iscan(s, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r)); break;
      case 2: OK(MPI_Scan_c(s, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD)); break;
      case 3: OK(MPI_Iscan_c(s, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r)); break;
    }
  } else if (kind == 2) {
    switch (form) {
      case 0: OK(MPI_Exscan(s, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD)); break;
      case 1: OK(MPI_Iexscan(s, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r)); break;
      case 2: OK(MPI_Exscan_c(s, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD)); break;
      case 3: OK(MPI_Iexscan_c(s, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r)); break;
    }
    if (rank == 0) return; /* undefined there */
  }
  finish(form, &r);
  compare(what, form, n + 1);
}

static void reduceScatter(int form, int block) {
  reset(1);
  MPI_Request r;
  int off = 0;
  for (int i = 0; i < size; ++i) {
    icounts[i] = block ? M : cnt(i);
    ccounts[i] = icounts[i];
    if (i < rank) off += icounts[i];
  }
  for (int j = 0; j < icounts[rank]; ++j) expect[j] = sumOver(0, size, off + j);
  if (block) {
    switch (form) {
      case 0: OK(MPI_Reduce_scatter_block(sbuf, rbuf, M, MPI_INT, MPI_SUM, MPI_COMM_WORLD)); break;
      case 1: OK(MPI_Ireduce_scatter_block(sbuf, rbuf, M, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
              break;
      case 2: OK(MPI_Reduce_scatter_block_c(sbuf, rbuf, M, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
              break;
      case 3: OK(MPI_Ireduce_scatter_block_c(sbuf, rbuf, M, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                             &r)); break;
    }
  } else {
    switch (form) {
      case 0: OK(MPI_Reduce_scatter(sbuf, rbuf, icounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD)); break;
      case 1: OK(MPI_Ireduce_scatter(sbuf, rbuf, icounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
              break;
      case 2: OK(MPI_Reduce_scatter_c(sbuf, rbuf, ccounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
              break;
      case 3: OK(MPI_Ireduce_scatter_c(sbuf, rbuf, ccounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
              break;
    }
  }
  finish(form, &r);
  compare(block ? "reduce_scatter_block" : "reduce_scatter", form, M + 2);
}

static void reduceLocal(void) {
  int in[5], io[5], io2[5];
  for (int j = 0; j < 5; ++j) {
    in[j] = j + 1;
    io[j] = io2[j] = 10 * j;
  }
  OK(MPI_Reduce_local(in, io, 5, MPI_INT, MPI_SUM));
  OK(MPI_Reduce_local_c(in, io2, 5, MPI_INT, MPI_SUM));
  for (int j = 0; j < 5; ++j) CHECK(io[j] == 11 * j + 1 && io2[j] == io[j]);
}

#define EXPECT(call, klass)          \
  do {                               \
    int rc_ = (call), cls_ = -1;     \
    CHECK(rc_ != MPI_SUCCESS);       \
    OK(MPI_Error_class(rc_, &cls_)); \
    CHECK(cls_ == (klass));          \
  } while (0)

/* Local checks only: every rank fails the same way, nothing is started. */
static void errors(void) {
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  const MPI_Count huge = -((MPI_Count)1 << 40);
  MPI_Request r;
  vLayout();
  EXPECT(MPI_Bcast_c(rbuf, huge, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT(MPI_Ibcast_c(rbuf, -1, MPI_INT, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);
  EXPECT(MPI_Bcast_c(rbuf, (MPI_Count)1 << 62, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT(MPI_Allreduce_c(sbuf, rbuf, (MPI_Count)1 << 62, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_ERR_COUNT);
  EXPECT(MPI_Bcast_c(rbuf, 1, MPI_INT, size, MPI_COMM_WORLD), MPI_ERR_ROOT);
  EXPECT(MPI_Allreduce_c(sbuf, rbuf, huge, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT(MPI_Reduce_c(sbuf, rbuf, huge, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT(MPI_Scan_c(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
  EXPECT(MPI_Reduce_local_c(sbuf, rbuf, huge, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
  EXPECT(MPI_Allgather_c(sbuf, huge, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT(MPI_Alltoall_c(sbuf, 1, MPI_INT, rbuf, huge, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT(MPI_Reduce_scatter_block_c(sbuf, rbuf, huge, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_ERR_COUNT);
  /* A negative count inside an MPI_Count array, far below INT_MIN. */
  ccounts[size - 1] = huge;
  EXPECT(MPI_Allgatherv_c(sbuf, cnt(rank), MPI_INT, rbuf, ccounts, cdispls, MPI_INT,
                          MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT(MPI_Reduce_scatter_c(sbuf, rbuf, ccounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
         MPI_ERR_COUNT);
  EXPECT(MPI_Alltoallv_c(sbuf, ccounts, cdispls, MPI_INT, rbuf, ccounts, cdispls, MPI_INT,
                         MPI_COMM_WORLD), MPI_ERR_COUNT);
  if (rank == 0)
    EXPECT(MPI_Gatherv_c(sbuf, 1, MPI_INT, rbuf, ccounts, cdispls, MPI_INT, 0, MPI_COMM_WORLD),
           MPI_ERR_COUNT);
  if (rank == 0)
    EXPECT(MPI_Scatterv_c(sbuf, ccounts, cdispls, MPI_INT, rbuf, 1, MPI_INT, 0, MPI_COMM_WORLD),
           MPI_ERR_COUNT);
  EXPECT(MPI_Allgatherv_c(sbuf, 1, MPI_INT, rbuf, NULL, cdispls, MPI_INT, MPI_COMM_WORLD),
         MPI_ERR_ARG);
  EXPECT(MPI_Reduce_scatter_c(sbuf, rbuf, NULL, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_ARG);
  EXPECT(MPI_Alltoallw_c(sbuf, cscounts, csdispls, NULL, rbuf, crcounts, crdispls, types,
                         MPI_COMM_WORLD), MPI_ERR_ARG);
  EXPECT(MPI_Iallreduce_c(sbuf, rbuf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Bcast_c(rbuf, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  prog = "bigcount_coll";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  wrank = rank;
  CHECK(size <= 64);
  for (int f = 0; f < FORMS; ++f) {
    bcast(f);
    gather(f, 0);
    gather(f, 1);
    scatter(f, 0);
    scatter(f, 1);
    allgather(f, 0, 0);
    allgather(f, 1, 0);
    allgather(f, 0, 1);
    allgather(f, 1, 1);
    alltoall(f);
    alltoallv(f, 0);
    alltoallv(f, 1);
    reduce(f, 0);
    reduce(f, 1);
    for (int kind = 0; kind < 3; ++kind) {
      allKind(f, kind, 0);
      allKind(f, kind, 1);
    }
    reduceScatter(f, 0);
    reduceScatter(f, 1);
  }
  reduceLocal();
  errors();
  OK(MPI_Barrier(MPI_COMM_WORLD));
  passed();
  OK(MPI_Finalize());
  return 0;
}
