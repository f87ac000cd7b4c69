/* coll_bottom: every data-movement collective with MPI_BOTTOM buffers and
 * datatypes whose displacements are absolute addresses (MPI_Get_address):
 * bcast, gather(v), scatter(v), allgather(v), alltoall(v,w), blocking and
 * MPI_I*. Each rank's own block (the copy to self) is the case that used to
 * be lost: both of its buffers are MPI_BOTTOM, only the types differ.
 * Which algorithm runs is chosen by the caller (LOOM_COLL_<NAME>).
 * Prints "coll_bottom: rank R: N checks passed". */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "comm_checks.h"

static int p;

static int val(int from, int to, int k) { return from * 1000 + to * 10 + k + 1; }

/* `n` ints at `base`, as a type with an absolute displacement (its lower
 * bound is the address, its extent n ints). */
static MPI_Datatype absInts(const int* base, int n) {
  MPI_Aint a;
  MPI_Datatype t, types[1] = {MPI_INT};
  OK(MPI_Get_address(base, &a));
  OK(MPI_Type_create_struct(1, &n, &a, types, &t));
  OK(MPI_Type_commit(&t));
  return t;
}

/* 2 ints at `ints` and 1 double at `d`: two separate arrays in one type. */
static MPI_Datatype absPair(const int* ints, const double* d) {
  MPI_Aint a[2];
  int bl[2] = {2, 1};
  MPI_Datatype t, types[2] = {MPI_INT, MPI_DOUBLE};
  OK(MPI_Get_address(ints, &a[0]));
  OK(MPI_Get_address(d, &a[1]));
  OK(MPI_Type_create_struct(2, bl, a, types, &t));
  OK(MPI_Type_commit(&t));
  return t;
}

static void waitOrNot(int nb, MPI_Request* req) {
  if (nb) OK(MPI_Wait(req, MPI_STATUS_IGNORE));
}

static void bcastCheck(int root) {
  int ints[2];
  double d;
  ints[0] = ints[1] = -1;
  d = -1;
  if (wrank == root) {
    ints[0] = val(root, 0, 0);
    ints[1] = val(root, 0, 1);
    d = 0.5 + root;
  }
  MPI_Datatype t = absPair(ints, &d);
  OK(MPI_Bcast(MPI_BOTTOM, 1, t, root, MPI_COMM_WORLD));
  CHECK(ints[0] == val(root, 0, 0) && ints[1] == val(root, 0, 1) && d == 0.5 + root);
  OK(MPI_Type_free(&t));
}

/* Alltoallw: peer i's block is 2 ints of one array and 1 double of another,
 * on both sides; different arrays for sending and receiving. */
static void alltoallwCheck(int nb) {
  int* si = malloc(sizeof(int) * 2 * p);
  int* ri = malloc(sizeof(int) * 2 * p);
  double* sd = malloc(sizeof(double) * p);
  double* rd = malloc(sizeof(double) * p);
  MPI_Datatype* st = malloc(sizeof(MPI_Datatype) * p);
  MPI_Datatype* rt = malloc(sizeof(MPI_Datatype) * p);
  int* ones = malloc(sizeof(int) * p);
  int* zeros = calloc(p, sizeof(int));
  for (int i = 0; i < p; ++i) {
    si[2 * i] = val(wrank, i, 0);
    si[2 * i + 1] = val(wrank, i, 1);
    sd[i] = wrank + 0.25 * i;
    ri[2 * i] = ri[2 * i + 1] = -1;
    rd[i] = -1;
    st[i] = absPair(&si[2 * i], &sd[i]);
    rt[i] = absPair(&ri[2 * i], &rd[i]);
    ones[i] = 1;
  }
  MPI_Request req;
  if (nb)
    OK(MPI_Ialltoallw(MPI_BOTTOM, ones, zeros, st, MPI_BOTTOM, ones, zeros, rt, MPI_COMM_WORLD,
                      &req));
  else
    OK(MPI_Alltoallw(MPI_BOTTOM, ones, zeros, st, MPI_BOTTOM, ones, zeros, rt, MPI_COMM_WORLD));
  /* The types may be freed while a nonblocking call is pending. */
  for (int i = 0; i < p; ++i) {
    OK(MPI_Type_free(&st[i]));
    OK(MPI_Type_free(&rt[i]));
  }
  waitOrNot(nb, &req);
  for (int i = 0; i < p; ++i) {
    CHECK(ri[2 * i] == val(i, wrank, 0));
    CHECK(ri[2 * i + 1] == val(i, wrank, 1));
    CHECK(rd[i] == i + 0.25 * wrank);
  }
  free(si), free(ri), free(sd), free(rd), free(st), free(rt), free(ones), free(zeros);
}

/* Block sizes of the v variants: what `from` sends `to`. */
static int cnt(int from, int to) { return (from + 2 * to) % 3 + 1; }

static void alltoallvCheck(int nb) {
  int *sc = malloc(sizeof(int) * p), *rc = malloc(sizeof(int) * p);
  int *sdsp = malloc(sizeof(int) * p), *rdsp = malloc(sizeof(int) * p);
  int stot = 0, rtot = 0;
  for (int i = 0; i < p; ++i) {
    sc[i] = cnt(wrank, i);
    rc[i] = cnt(i, wrank);
    sdsp[i] = stot;
    rdsp[i] = rtot;
    stot += sc[i];
    rtot += rc[i];
  }
  int *sb = malloc(sizeof(int) * stot), *rb = malloc(sizeof(int) * rtot);
  for (int i = 0; i < p; ++i)
    for (int k = 0; k < sc[i]; ++k) sb[sdsp[i] + k] = val(wrank, i, k);
  for (int j = 0; j < rtot; ++j) rb[j] = -1;
  MPI_Datatype stype = absInts(sb, 1), rtype = absInts(rb, 1);
  MPI_Request req;
  if (nb)
    OK(MPI_Ialltoallv(MPI_BOTTOM, sc, sdsp, stype, MPI_BOTTOM, rc, rdsp, rtype, MPI_COMM_WORLD,
                      &req));
  else
    OK(MPI_Alltoallv(MPI_BOTTOM, sc, sdsp, stype, MPI_BOTTOM, rc, rdsp, rtype, MPI_COMM_WORLD));
  OK(MPI_Type_free(&stype));
  OK(MPI_Type_free(&rtype));
  waitOrNot(nb, &req);
  for (int i = 0; i < p; ++i)
    for (int k = 0; k < rc[i]; ++k) CHECK(rb[rdsp[i] + k] == val(i, wrank, k));
  free(sc), free(rc), free(sdsp), free(rdsp), free(sb), free(rb);
}

static void alltoallCheck(int nb) {
  const int c = 2;
  int *sb = malloc(sizeof(int) * c * p), *rb = malloc(sizeof(int) * c * p);
  for (int i = 0; i < p; ++i)
    for (int k = 0; k < c; ++k) {
      sb[i * c + k] = val(wrank, i, k);
      rb[i * c + k] = -1;
    }
  MPI_Datatype stype = absInts(sb, 1), rtype = absInts(rb, 1);
  MPI_Request req;
  if (nb)
    OK(MPI_Ialltoall(MPI_BOTTOM, c, stype, MPI_BOTTOM, c, rtype, MPI_COMM_WORLD, &req));
  else
    OK(MPI_Alltoall(MPI_BOTTOM, c, stype, MPI_BOTTOM, c, rtype, MPI_COMM_WORLD));
  waitOrNot(nb, &req);
  for (int i = 0; i < p; ++i)
    for (int k = 0; k < c; ++k) CHECK(rb[i * c + k] == val(i, wrank, k));
  OK(MPI_Type_free(&stype));
  OK(MPI_Type_free(&rtype));
  free(sb), free(rb);
}

/* Gatherv / allgatherv: rank i contributes cnt(i, 0) ints described by one
 * absolute type (count 1); the receiver places them with an absolute
 * one-int type and displacements. */
static void gathervCheck(int all, int root, int nb) {
  int *rc = malloc(sizeof(int) * p), *dsp = malloc(sizeof(int) * p), tot = 0;
  for (int i = 0; i < p; ++i) {
    rc[i] = cnt(i, 0);
    dsp[i] = tot;
    tot += rc[i] + 1; /* a hole between blocks */
  }
  int mine[3];
  for (int k = 0; k < rc[wrank]; ++k) mine[k] = val(wrank, 0, k);
  int* rb = malloc(sizeof(int) * tot);
  for (int j = 0; j < tot; ++j) rb[j] = -1;
  MPI_Datatype stype = absInts(mine, rc[wrank]), rtype = absInts(rb, 1);
  MPI_Request req;
  if (all && nb)
    OK(MPI_Iallgatherv(MPI_BOTTOM, 1, stype, MPI_BOTTOM, rc, dsp, rtype, MPI_COMM_WORLD, &req));
  else if (all)
    OK(MPI_Allgatherv(MPI_BOTTOM, 1, stype, MPI_BOTTOM, rc, dsp, rtype, MPI_COMM_WORLD));
  else if (nb)
    OK(MPI_Igatherv(MPI_BOTTOM, 1, stype, MPI_BOTTOM, rc, dsp, rtype, root, MPI_COMM_WORLD,
                    &req));
  else
    OK(MPI_Gatherv(MPI_BOTTOM, 1, stype, MPI_BOTTOM, rc, dsp, rtype, root, MPI_COMM_WORLD));
  waitOrNot(nb, &req);
  if (all || wrank == root)
    for (int i = 0; i < p; ++i) {
      for (int k = 0; k < rc[i]; ++k) CHECK(rb[dsp[i] + k] == val(i, 0, k));
      CHECK(rb[dsp[i] + rc[i]] == -1);
    }
  OK(MPI_Type_free(&stype));
  OK(MPI_Type_free(&rtype));
  free(rc), free(dsp), free(rb);
}

static void gatherCheck(int all, int root) {
  int mine[2] = {val(wrank, 0, 0), val(wrank, 0, 1)};
  int* rb = malloc(sizeof(int) * 2 * p);
  for (int j = 0; j < 2 * p; ++j) rb[j] = -1;
  MPI_Datatype stype = absInts(mine, 2), rtype = absInts(rb, 1);
  if (all)
    OK(MPI_Allgather(MPI_BOTTOM, 1, stype, MPI_BOTTOM, 2, rtype, MPI_COMM_WORLD));
  else
    OK(MPI_Gather(MPI_BOTTOM, 1, stype, MPI_BOTTOM, 2, rtype, root, MPI_COMM_WORLD));
  if (all || wrank == root)
    for (int i = 0; i < p; ++i) CHECK(rb[2 * i] == val(i, 0, 0) && rb[2 * i + 1] == val(i, 0, 1));
  OK(MPI_Type_free(&stype));
  OK(MPI_Type_free(&rtype));
  free(rb);
}

static void scattervCheck(int v, int root, int nb) {
  int *sc = malloc(sizeof(int) * p), *dsp = malloc(sizeof(int) * p), tot = 0;
  for (int i = 0; i < p; ++i) {
    sc[i] = v ? cnt(root, i) : 2;
    dsp[i] = tot;
    tot += sc[i] + (v ? 1 : 0);
  }
  int* sb = malloc(sizeof(int) * tot);
  for (int i = 0; i < p; ++i)
    for (int k = 0; k < sc[i]; ++k) sb[dsp[i] + k] = val(root, i, k);
  int mine[4] = {-1, -1, -1, -1};
  MPI_Datatype stype = absInts(sb, 1), rtype = absInts(mine, sc[wrank]);
  MPI_Request req;
  if (!v)
    OK(MPI_Scatter(MPI_BOTTOM, 2, stype, MPI_BOTTOM, 1, rtype, root, MPI_COMM_WORLD));
  else if (nb)
    OK(MPI_Iscatterv(MPI_BOTTOM, sc, dsp, stype, MPI_BOTTOM, 1, rtype, root, MPI_COMM_WORLD,
                     &req));
  else
    OK(MPI_Scatterv(MPI_BOTTOM, sc, dsp, stype, MPI_BOTTOM, 1, rtype, root, MPI_COMM_WORLD));
  waitOrNot(v && nb, &req);
  for (int k = 0; k < sc[wrank]; ++k) CHECK(mine[k] == val(root, wrank, k));
  CHECK(mine[sc[wrank]] == -1);
  OK(MPI_Type_free(&stype));
  OK(MPI_Type_free(&rtype));
  free(sc), free(dsp), free(sb);
}

/* The reference: point-to-point with MPI_BOTTOM to self. */
static void sendrecvCheck(void) {
  int a[2] = {7, 8}, b[2] = {0, 0};
  double da = 1.5, db = 0;
  MPI_Datatype ta = absPair(a, &da), tb = absPair(b, &db);
  OK(MPI_Sendrecv(MPI_BOTTOM, 1, ta, wrank, 3, MPI_BOTTOM, 1, tb, wrank, 3, MPI_COMM_WORLD,
                  MPI_STATUS_IGNORE));
  CHECK(b[0] == 7 && b[1] == 8 && db == 1.5);
  OK(MPI_Type_free(&ta));
  OK(MPI_Type_free(&tb));
}

int main(int argc, char** argv) {
  prog = "coll_bottom";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  sendrecvCheck();
  for (int root = 0; root < p; root += (p > 2 ? p - 1 : 1)) {
    bcastCheck(root);
    gatherCheck(0, root);
    scattervCheck(0, root, 0);
    for (int nb = 0; nb < 2; ++nb) {
      gathervCheck(0, root, nb);
      scattervCheck(1, root, nb);
    }
  }
  gatherCheck(1, 0);
  for (int nb = 0; nb < 2; ++nb) {
    alltoallwCheck(nb);
    alltoallvCheck(nb);
    alltoallCheck(nb);
    gathervCheck(1, 0, nb);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  passed();
  MPI_Finalize();
  return 0;
}
