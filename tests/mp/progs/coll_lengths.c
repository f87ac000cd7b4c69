/* coll_lengths: collectives whose ranks pass different counts (small, so
 * that every rank runs the call through the shared segment in one step),
 * under MPI_ERRORS_RETURN, on one node:
 * - the ranks that must see the difference get MPI_ERR_TRUNCATE: every
 *   non-root of a bcast (the root may succeed), every rank of an allreduce,
 *   allgather or alltoall (each differs from some peer), the root of a
 *   gather; also every rank of an allgather or alltoall where only rank 0
 *   sends fewer bytes than every rank receives per block (its send buffer
 *   is read no further than it reaches);
 * - ranks that pass different ops to a reduction (rank 0 MPI_PROD, the
 *   others MPI_SUM): MPI_ERR_OP at every rank of an allreduce and at the
 *   root of a reduce (a non-root of a reduce only writes; it would need a
 *   synchronisation per call to learn of it);
 * - the communicator stays usable: after each such call an allreduce with
 *   matching counts gives the right sum;
 * - counts so different that the ranks take different step counts (bcast of
 *   40 bytes against 48 KiB, one step against three) poison the
 *   communicator as before: every later collective on it fails with
 *   MPI_ERR_OTHER, and a new communicator works.
 * Needs at least 2 ranks. Prints "coll_lengths: rank R: N checks passed". */
#include <stdlib.h>
#include <string.h>

#include "comm_checks.h"

static int me, np;
static MPI_Comm c;

static int cls(int rc) {
  int k = -1;
  MPI_Error_class(rc, &k);
  return k;
}

static void expectTruncate(int rc, int must, const char* what) {
  ++checks;
  if (rc == MPI_SUCCESS && !must) return;
  if (cls(rc) != MPI_ERR_TRUNCATE) {
    fprintf(stderr, "coll_lengths: rank %d: %s: class %d (rc %d), want MPI_ERR_TRUNCATE%s\n", me,
            what, cls(rc), rc, must ? "" : " or success");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static void expectOp(int rc, int must, const char* what) {
  ++checks;
  if (rc == MPI_SUCCESS && !must) return;
  if (cls(rc) != MPI_ERR_OP) {
    fprintf(stderr, "coll_lengths: rank %d: %s: class %d (rc %d), want MPI_ERR_OP%s\n", me, what,
            cls(rc), rc, must ? "" : " or success");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static void usable(const char* after) {
  int one = 1, sum = 0;
  int rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
  if (rc != MPI_SUCCESS || sum != np) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &len);
    fprintf(stderr, "coll_lengths: rank %d: allreduce after %s: rc %d (class %d, %s), sum %d\n",
            me, after, rc, cls(rc), text, sum);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  ++checks;
}

int main(int argc, char** argv) {
  prog = "coll_lengths";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
  wrank = me;
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
  OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  int* buf = calloc((size_t)(16 * np), sizeof(int));
  int* out = calloc((size_t)(16 * np), sizeof(int));
  const int mine = me == 0 ? 1 : 10, other = me == 0 ? 10 : 1;
  int rc;

  for (int round = 0; round < 3; ++round) {
    /* bcast: root 1 int, the others 10; then the other way round. */
    rc = MPI_Bcast(buf, mine, MPI_INT, 0, c);
    if (rc == MPI_SUCCESS && me != 0) fprintf(stderr, "coll_lengths: round %d\n", round);
    expectTruncate(rc, me != 0, "bcast (root short)");
    usable("bcast (root short)");
    rc = MPI_Bcast(buf, other, MPI_INT, 0, c);
    expectTruncate(rc, me != 0, "bcast (root long)");
    usable("bcast (root long)");
    /* allreduce: rank 0 one int, the others 10. */
    rc = MPI_Allreduce(buf, out, mine, MPI_INT, MPI_SUM, c);
    expectTruncate(rc, 1, "allreduce");
    usable("allreduce");
    /* reduce to rank 0. */
    rc = MPI_Reduce(buf, out, mine, MPI_INT, MPI_SUM, 0, c);
    expectTruncate(rc, me == 0, "reduce");
    usable("reduce");
    /* gather at rank 0: the root expects 10 per rank, the others send 10,
     * the root itself 1. */
    rc = MPI_Gather(buf, mine, MPI_INT, out, 10, MPI_INT, 0, c);
    expectTruncate(rc, 0, "gather");
    usable("gather");
    /* allgather and alltoall. */
    rc = MPI_Allgather(buf, mine, MPI_INT, out, mine, MPI_INT, c);
    expectTruncate(rc, 1, "allgather");
    usable("allgather");
    rc = MPI_Alltoall(buf, mine, MPI_INT, out, mine, MPI_INT, c);
    expectTruncate(rc, 1, "alltoall");
    usable("alltoall");
    /* Rank 0 sends one int where every rank receives 10 per block: the
     * send side differs, the receive sides agree. The send buffer is a
     * separate allocation of exactly what rank 0 says it sends. */
    int* small = malloc(sizeof(int) * (size_t)(me == 0 ? np : 10 * np));
    for (int i = 0; i < (me == 0 ? np : 10 * np); ++i) small[i] = me;
    rc = MPI_Allgather(small, me == 0 ? 1 : 10, MPI_INT, out, 10, MPI_INT, c);
    expectTruncate(rc, 1, "allgather (rank 0 sends less)");
    usable("allgather (rank 0 sends less)");
    rc = MPI_Alltoall(small, me == 0 ? 1 : 10, MPI_INT, out, 10, MPI_INT, c);
    expectTruncate(rc, 1, "alltoall (rank 0 sends less)");
    usable("alltoall (rank 0 sends less)");
    free(small);
    /* Different ops. */
    MPI_Op o = me == 0 ? MPI_PROD : MPI_SUM;
    rc = MPI_Allreduce(buf, out, 4, MPI_INT, o, c);
    expectOp(rc, 1, "allreduce (ops differ)");
    usable("allreduce (ops differ)");
    rc = MPI_Reduce(buf, out, 4, MPI_INT, o, 0, c);
    expectOp(rc, me == 0, "reduce (ops differ)");
    usable("reduce (ops differ)");
  }

  /* Different step counts: poisoned. */
  char* big = calloc(48 * 1024, 1);
  rc = MPI_Bcast(big, me == 0 ? 40 : 48 * 1024, MPI_BYTE, 0, c);
  (void)rc; /* an error, or (the root) success */
  int one = 1, sum = 0;
  rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
  /* Either this allreduce already meets the failure, or (a rank that saw
   * none yet) the next call does. */
  if (rc == MPI_SUCCESS) rc = MPI_Barrier(c);
  CHECK(rc != MPI_SUCCESS);
  MPI_Comm d;
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  sum = 0;
  OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d));
  CHECK(sum == np);
  OK(MPI_Comm_free(&d));
  OK(MPI_Comm_free(&c));
  free(big);
  free(buf);
  free(out);
  OK(MPI_Barrier(MPI_COMM_WORLD));
  OK(MPI_Finalize());
  passed();
  return 0;
}
