/* Collectives on intercommunicators, blocking and nonblocking, every result
 * checked: barrier, bcast / gather(v) / scatter(v) / reduce with the root on
 * each side (MPI_ROOT at the root, MPI_PROC_NULL beside it, the root's
 * remote rank on the other side), allgather(v), alltoall(v,w), allreduce
 * (each side gets the other side's reduction, a non-commutative op checks
 * the order), reduce_scatter(_block), and the errors: scan/exscan
 * (MPI_ERR_COMM), bad roots (MPI_ERR_ROOT), MPI_IN_PLACE (MPI_ERR_BUFFER).
 * Sides: even/odd world ranks, then world rank 0 against the rest. */
#include <string.h>

#include <stdlib.h>

#include "comm_checks.h"

static int wsize, side, rank, nl, nr;
static MPI_Comm ic;

static int val(int s, int r, int i) { return 1000 * s + 100 * r + i; }

/* MPI_Name(args) or MPI_Iname(args, &request) and a wait. */
#define RUN(nb, Name, name, ...)             \
  do {                                       \
    if (nb) {                                \
      MPI_Request q_;                        \
      OK(MPI_I##name(__VA_ARGS__, &q_));     \
      OK(MPI_Wait(&q_, MPI_STATUS_IGNORE));  \
    } else {                                 \
      OK(MPI_##Name(__VA_ARGS__));           \
    }                                        \
  } while (0)

/* The root argument for a rooted call whose root is local rank `root` of
 * side `rs`. */
static int rootArg(int rs, int root) {
  if (side != rs) return root;
  return rank == root ? MPI_ROOT : MPI_PROC_NULL;
}

static void rooted(int nb, int rs) {
  const int sizeR = rs == side ? nl : nr;
  const int root = sizeR - 1;
  const int arg = rootArg(rs, root);
  const int isRoot = arg == MPI_ROOT, recv = side != rs;
  int buf[256], out[256];

  /* Bcast */
  for (int i = 0; i < 3; ++i) buf[i] = isRoot ? val(rs, root, i) : -1;
  RUN(nb, Bcast, bcast, buf, 3, MPI_INT, arg, ic);
  for (int i = 0; i < 3; ++i) CHECK(buf[i] == (isRoot || recv ? val(rs, root, i) : -1));

  /* Gather, gatherv: the root gets remote rank j's j+1 elements. */
  for (int i = 0; i < 2; ++i) buf[i] = val(side, rank, i);
  memset(out, 0xff, sizeof out);
  RUN(nb, Gather, gather, buf, 2, MPI_INT, out, 2, MPI_INT, arg, ic);
  if (isRoot)
    for (int j = 0; j < nr; ++j)
      for (int i = 0; i < 2; ++i) CHECK(out[2 * j + i] == val(1 - side, j, i));
  if (!isRoot) CHECK(out[0] == -1);
  int counts[64], displs[64], at = 0;
  for (int j = 0; j < nr; ++j) {
    counts[j] = j + 1;
    displs[j] = at;
    at += j + 2; /* a gap after each block */
  }
  for (int i = 0; i < rank + 1; ++i) buf[i] = val(side, rank, i);
  memset(out, 0xff, sizeof out);
  RUN(nb, Gatherv, gatherv, buf, rank + 1, MPI_INT, out, counts, displs, MPI_INT, arg, ic);
  if (isRoot)
    for (int j = 0; j < nr; ++j) {
      for (int i = 0; i < j + 1; ++i) CHECK(out[displs[j] + i] == val(1 - side, j, i));
      CHECK(out[displs[j] + j + 1] == -1);
    }

  /* Scatter, scatterv: remote rank j gets its block. */
  for (int j = 0; j < nr; ++j)
    for (int i = 0; i < 2; ++i) buf[2 * j + i] = val(side, j, 10 + i);
  memset(out, 0xff, sizeof out);
  RUN(nb, Scatter, scatter, buf, 2, MPI_INT, out, 2, MPI_INT, arg, ic);
  if (recv)
    for (int i = 0; i < 2; ++i) CHECK(out[i] == val(rs, rank, 10 + i));
  for (int j = 0; j < nr; ++j)
    for (int i = 0; i < j + 1; ++i) buf[displs[j] + i] = val(side, j, 20 + i);
  memset(out, 0xff, sizeof out);
  RUN(nb, Scatterv, scatterv, buf, counts, displs, MPI_INT, out, rank + 1, MPI_INT, arg, ic);
  if (recv) {
    for (int i = 0; i < rank + 1; ++i) CHECK(out[i] == val(rs, rank, 20 + i));
    CHECK(out[rank + 1] == -1);
  }

  /* Reduce: sum and a non-commutative op (see leftOp). */
  for (int i = 0; i < 4; ++i) buf[i] = val(side, rank, i);
  memset(out, 0xff, sizeof out);
  RUN(nb, Reduce, reduce, buf, out, 4, MPI_INT, MPI_SUM, arg, ic);
  if (isRoot)
    for (int i = 0; i < 4; ++i) {
      int s = 0;
      for (int j = 0; j < nr; ++j) s += val(1 - side, j, i);
      CHECK(out[i] == s);
    }
  if (!isRoot) CHECK(out[0] == -1);
}

/* in op inout = in: a reduction y0 op (y1 op ...) gives y0. */
static void leftFn(void* in, void* inout, int* len, MPI_Datatype* t) {
  (void)t;
  memcpy(inout, in, sizeof(int) * (size_t)*len);
}

static void everyone(int nb, MPI_Op left) {
  int buf[256], out[256];
  RUN(nb, Barrier, barrier, ic);

  /* Allgather, allgatherv: the other side's blocks. */
  for (int i = 0; i < 2; ++i) buf[i] = val(side, rank, i);
  memset(out, 0xff, sizeof out);
  RUN(nb, Allgather, allgather, buf, 2, MPI_INT, out, 2, MPI_INT, ic);
  for (int j = 0; j < nr; ++j)
    for (int i = 0; i < 2; ++i) CHECK(out[2 * j + i] == val(1 - side, j, i));
  int counts[64], displs[64], at = 0;
  for (int j = 0; j < nr; ++j) {
    counts[j] = j + 1;
    displs[j] = at;
    at += j + 1;
  }
  for (int i = 0; i < rank + 1; ++i) buf[i] = val(side, rank, 5 + i);
  memset(out, 0xff, sizeof out);
  RUN(nb, Allgatherv, allgatherv, buf, rank + 1, MPI_INT, out, counts, displs, MPI_INT, ic);
  for (int j = 0; j < nr; ++j)
    for (int i = 0; i < j + 1; ++i) CHECK(out[displs[j] + i] == val(1 - side, j, 5 + i));

  /* Alltoall: block j to remote rank j. */
  for (int j = 0; j < nr; ++j)
    for (int i = 0; i < 2; ++i) buf[2 * j + i] = val(side, rank, 10 * j + i);
  memset(out, 0xff, sizeof out);
  RUN(nb, Alltoall, alltoall, buf, 2, MPI_INT, out, 2, MPI_INT, ic);
  for (int j = 0; j < nr; ++j)
    for (int i = 0; i < 2; ++i) CHECK(out[2 * j + i] == val(1 - side, j, 10 * rank + i));

  /* Alltoallv, alltoallw: (rank + j) % 3 + 1 elements between rank and j. */
  int sc[64], sd[64], rc[64], rd[64], sdb[64], rdb[64];
  MPI_Datatype types[64];
  int sat = 0, rat = 0;
  for (int j = 0; j < nr; ++j) {
    sc[j] = rc[j] = (rank + j) % 3 + 1;
    sd[j] = sat;
    rd[j] = rat;
    sdb[j] = sat * (int)sizeof(int);
    rdb[j] = rat * (int)sizeof(int);
    types[j] = MPI_INT;
    for (int i = 0; i < sc[j]; ++i) buf[sat + i] = val(side, rank, 10 * j + i);
    sat += sc[j];
    rat += rc[j] + 1;
  }
  for (int w = 0; w < 2; ++w) {
    memset(out, 0xff, sizeof out);
    if (w)
      RUN(nb, Alltoallw, alltoallw, buf, sc, sdb, types, out, rc, rdb, types, ic);
    else
      RUN(nb, Alltoallv, alltoallv, buf, sc, sd, MPI_INT, out, rc, rd, MPI_INT, ic);
    for (int j = 0; j < nr; ++j) {
      for (int i = 0; i < rc[j]; ++i) CHECK(out[rd[j] + i] == val(1 - side, j, 10 * rank + i));
      CHECK(out[rd[j] + rc[j]] == -1);
    }
  }

  /* Allreduce: the other side's sum, max, and its rank 0's data. */
  for (int i = 0; i < 4; ++i) buf[i] = val(side, rank, i);
  RUN(nb, Allreduce, allreduce, buf, out, 4, MPI_INT, MPI_SUM, ic);
  for (int i = 0; i < 4; ++i) {
    int s = 0;
    for (int j = 0; j < nr; ++j) s += val(1 - side, j, i);
    CHECK(out[i] == s);
  }
  RUN(nb, Allreduce, allreduce, buf, out, 4, MPI_INT, MPI_MAX, ic);
  for (int i = 0; i < 4; ++i) CHECK(out[i] == val(1 - side, nr - 1, i));
  RUN(nb, Allreduce, allreduce, buf, out, 4, MPI_INT, left, ic);
  for (int i = 0; i < 4; ++i) CHECK(out[i] == val(1 - side, 0, i));

  /* Reduce_scatter_block: both sides' vectors have 2 nl nr elements, so
   * this side's block is 2 nr. */
  const int total = 2 * nl * nr, blk = 2 * nr;
  for (int i = 0; i < total; ++i) buf[i] = val(side, rank, i);
  memset(out, 0xff, sizeof out);
  RUN(nb, Reduce_scatter_block, reduce_scatter_block, buf, out, blk, MPI_INT, MPI_SUM, ic);
  for (int i = 0; i < blk; ++i) {
    int s = 0;
    for (int j = 0; j < nr; ++j) s += val(1 - side, j, rank * blk + i);
    CHECK(out[i] == s);
  }
  CHECK(out[blk] == -1);
  /* Reduce_scatter: rank 0 takes one more, the last one less. */
  int rcs[64], off = 0;
  for (int r = 0; r < nl; ++r) rcs[r] = blk;
  if (nl > 1) {
    ++rcs[0];
    --rcs[nl - 1];
  }
  for (int r = 0; r < rank; ++r) off += rcs[r];
  memset(out, 0xff, sizeof out);
  RUN(nb, Reduce_scatter, reduce_scatter, buf, out, rcs, MPI_INT, MPI_SUM, ic);
  for (int i = 0; i < rcs[rank]; ++i) {
    int s = 0;
    for (int j = 0; j < nr; ++j) s += val(1 - side, j, off + i);
    CHECK(out[i] == s);
  }
  CHECK(out[rcs[rank]] == -1);
}

static void errors(void) {
  int a[4] = {0}, b[4];
  MPI_Request q;
  CHECK(MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, ic) == MPI_ERR_COMM);
  CHECK(MPI_Exscan(a, b, 1, MPI_INT, MPI_SUM, ic) == MPI_ERR_COMM);
  CHECK(MPI_Iscan(a, b, 1, MPI_INT, MPI_SUM, ic, &q) == MPI_ERR_COMM);
  CHECK(MPI_Iexscan(a, b, 1, MPI_INT, MPI_SUM, ic, &q) == MPI_ERR_COMM);
  CHECK(MPI_Bcast(a, 1, MPI_INT, -100, ic) == MPI_ERR_ROOT);
  CHECK(MPI_Bcast(a, 1, MPI_INT, 64, ic) == MPI_ERR_ROOT);
  CHECK(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, 64, ic) == MPI_ERR_ROOT);
  CHECK(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, -100, ic) == MPI_ERR_ROOT);
  CHECK(MPI_Allreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, ic) == MPI_ERR_BUFFER);
  CHECK(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, ic) == MPI_ERR_BUFFER);
  CHECK(MPI_Allreduce(a, b, -1, MPI_INT, MPI_SUM, ic) == MPI_ERR_COUNT);
  CHECK(MPI_Ibarrier(ic, NULL) == MPI_ERR_ARG);
  /* The communicator still works after the refused calls. */
  OK(MPI_Barrier(ic));
}

/* Persistent collectives on the intercommunicator, each started three times
 * with new data: allreduce (the other side's sum), bcast from each side, a
 * barrier and an alltoallv, all from one Startall. `otherSum` is the sum of
 * the other side's WORLD ranks. */
static void persistent(int otherSum) {
  int in = 0, out = -1, bc = -1, rootSide = 1;
  int root = rootArg(rootSide, 0);
  int* sc = malloc(sizeof(int) * nr);
  int* sd = malloc(sizeof(int) * nr);
  int* sb = malloc(sizeof(int) * nr);
  int* rb = malloc(sizeof(int) * nr);
  for (int j = 0; j < nr; ++j) sc[j] = 1, sd[j] = j;
  MPI_Request q[4];
  OK(MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &q[0]));
  OK(MPI_Bcast_init(&bc, 1, MPI_INT, root, ic, MPI_INFO_NULL, &q[1]));
  OK(MPI_Barrier_init(ic, MPI_INFO_NULL, &q[2]));
  OK(MPI_Alltoallv_init(sb, sc, sd, MPI_INT, rb, sc, sd, MPI_INT, ic, MPI_INFO_NULL, &q[3]));
  for (int j = 0; j < nr; ++j) sc[j] = -7; /* the request keeps its own copy */
  for (int round = 0; round < 3; ++round) {
    in = wrank + round;
    bc = (side == rootSide && rank == 0) ? 77 + round : -1;
    for (int j = 0; j < nr; ++j) sb[j] = val(side, rank, j) + round, rb[j] = -1;
    OK(MPI_Startall(4, q));
    OK(MPI_Waitall(4, q, MPI_STATUSES_IGNORE));
    CHECK(out == otherSum + nr * round);
    if (side != rootSide) CHECK(bc == 77 + round);
    for (int j = 0; j < nr; ++j) CHECK(rb[j] == val(1 - side, j, rank) + round);
  }
  for (int k = 0; k < 4; ++k) OK(MPI_Request_free(&q[k]));
  free(sc), free(sd), free(sb), free(rb);
}

static void oneKind(int kind, MPI_Op left) {
  side = kind == 0 ? wrank % 2 : (wrank == 0 ? 0 : 1);
  MPI_Comm local;
  OK(MPI_Comm_split(MPI_COMM_WORLD, side, 0, &local));
  OK(MPI_Comm_rank(local, &rank));
  OK(MPI_Comm_size(local, &nl));
  nr = wsize - nl;
  /* The other side's local rank 0 in WORLD. */
  int remoteLeader = -1;
  for (int r = 0; r < wsize && remoteLeader < 0; ++r)
    if ((kind == 0 ? r % 2 : (r == 0 ? 0 : 1)) != side) remoteLeader = r;
  OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remoteLeader, 3, &ic));
  for (int nb = 0; nb < 2; ++nb) {
    rooted(nb, 0);
    rooted(nb, 1);
    everyone(nb, left);
  }
  /* Several nonblocking calls in flight at once. */
  int a[2] = {wrank, wrank}, b[2], c[2];
  MPI_Request q[3];
  OK(MPI_Iallreduce(&a[0], &b[0], 1, MPI_INT, MPI_SUM, ic, &q[0]));
  OK(MPI_Ibarrier(ic, &q[1]));
  OK(MPI_Iallreduce(&a[1], &c[0], 1, MPI_INT, MPI_MAX, ic, &q[2]));
  OK(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
  int s = 0, m = -1;
  for (int r = 0; r < wsize; ++r)
    if ((kind == 0 ? r % 2 : (r == 0 ? 0 : 1)) != side) {
      s += r;
      m = r > m ? r : m;
    }
  CHECK(b[0] == s && c[0] == m);
  persistent(s);
  errors();
  OK(MPI_Comm_free(&ic));
  OK(MPI_Comm_free(&local));
}

int main(int argc, char** argv) {
  prog = "inter_coll";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_Op left;
  OK(MPI_Op_create(leftFn, 0, &left));
  if (wsize >= 2) {
    oneKind(0, left);
    oneKind(1, left);
  } else {
    int flag = 1;
    OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    CHECK(flag == 0);
  }
  OK(MPI_Op_free(&left));
  OK(MPI_Barrier(MPI_COMM_WORLD));
  passed();
  OK(MPI_Finalize());
  return 0;
}
