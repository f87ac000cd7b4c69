/* Dynamic windows (MPI_Win_create_dynamic, MPI_Win_attach/detach) the way
 * linked-list codes use them:
 * - many regions attached to one window (more than Loom's 64 published in
 *   shared memory: the rest are read from the owner's own list);
 * - an access that runs from one attached region into the adjacent one;
 * - a region attached while the origin's access epoch is already open,
 *   its address sent in a message: Put, Accumulate and Get_accumulate to
 *   it work at once;
 * - a detached region is refused again (MPI_ERR_RMA_RANGE).
 * Every rank targets the next one (itself at 1 rank). */
#include <stdint.h>
#include <stdlib.h>

#include "rma_checks.h"

enum { NREG = 150, RLEN = 4, HALF = 32 };

int main(int argc, char** argv) {
  int me, np;
  prog = "rma_dynamic";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
  wrank = me;
  const int next = (me + 1) % np, prev = (me + np - 1) % np;
  MPI_Win w;
  OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w));
  OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));

  /* NREG separate regions, and one array attached as two adjacent halves. */
  int* reg[NREG];
  MPI_Aint mine[NREG + 1], theirs[NREG + 1];
  for (int i = 0; i < NREG; ++i) {
    reg[i] = calloc(RLEN, sizeof(int));
    OK(MPI_Win_attach(w, reg[i], RLEN * sizeof(int)));
    OK(MPI_Get_address(reg[i], &mine[i]));
  }
  int* two = calloc(2 * HALF, sizeof(int));
  OK(MPI_Win_attach(w, two, HALF * sizeof(int)));
  OK(MPI_Win_attach(w, two + HALF, HALF * sizeof(int)));
  OK(MPI_Get_address(two, &mine[NREG]));
  OK(MPI_Sendrecv(mine, NREG + 1, MPI_AINT, prev, 1, theirs, NREG + 1, MPI_AINT, next, 1,
                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));

  OK(MPI_Win_lock_all(0, w));
  int val[RLEN], span[2 * HALF];
  for (int i = 0; i < NREG; ++i) {
    for (int k = 0; k < RLEN; ++k) val[k] = me * 1000 + i * 10 + k;
    OK(MPI_Put(val, RLEN, MPI_INT, next, theirs[i], RLEN, MPI_INT, w));
    OK(MPI_Win_flush(next, w));
  }
  for (int k = 0; k < 2 * HALF; ++k) span[k] = me + k;
  /* Across the boundary of the two halves. */
  OK(MPI_Put(span, 2 * HALF, MPI_INT, next, theirs[NREG], 2 * HALF, MPI_INT, w));
  OK(MPI_Win_flush(next, w));

  /* A region attached now; its address travels in a message. */
  int* late = calloc(RLEN, sizeof(int));
  MPI_Aint lateAt, theirLate;
  OK(MPI_Win_attach(w, late, RLEN * sizeof(int)));
  OK(MPI_Get_address(late, &lateAt));
  OK(MPI_Sendrecv(&lateAt, 1, MPI_AINT, prev, 2, &theirLate, 1, MPI_AINT, next, 2,
                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  int one[RLEN] = {1, 2, 3, 4}, got[RLEN];
  OK(MPI_Put(one, RLEN, MPI_INT, next, theirLate, RLEN, MPI_INT, w));
  OK(MPI_Win_flush(next, w));
  OK(MPI_Accumulate(one, RLEN, MPI_INT, next, theirLate, RLEN, MPI_INT, MPI_SUM, w));
  OK(MPI_Win_flush(next, w));
  OK(MPI_Get_accumulate(one, RLEN, MPI_INT, got, RLEN, MPI_INT, next, theirLate, RLEN, MPI_INT,
                        MPI_SUM, w));
  OK(MPI_Win_flush(next, w));
  for (int k = 0; k < RLEN; ++k) EQ(got[k], 2 * one[k]);
  OK(MPI_Win_unlock_all(w));
  OK(MPI_Barrier(MPI_COMM_WORLD));

  for (int i = 0; i < NREG; ++i)
    for (int k = 0; k < RLEN; ++k) EQ(reg[i][k], prev * 1000 + i * 10 + k);
  for (int k = 0; k < 2 * HALF; ++k) EQ(two[k], prev + k);
  for (int k = 0; k < RLEN; ++k) EQ(late[k], 3 * one[k]);

  /* Detached: the origin refuses the address (same node) or the target
   * does (another node); either way the call or its flush fails. */
  OK(MPI_Win_detach(w, reg[0]));
  OK(MPI_Barrier(MPI_COMM_WORLD));
  OK(MPI_Win_lock_all(0, w));
  int rc = MPI_Put(val, RLEN, MPI_INT, next, theirs[0], RLEN, MPI_INT, w);
  if (rc == MPI_SUCCESS) rc = MPI_Win_flush(next, w);
  int cls = -1;
  MPI_Error_class(rc, &cls);
  EQ(cls, MPI_ERR_RMA_RANGE);
  OK(MPI_Win_unlock_all(w));
  OK(MPI_Barrier(MPI_COMM_WORLD));

  for (int i = 1; i < NREG; ++i) OK(MPI_Win_detach(w, reg[i]));
  OK(MPI_Win_detach(w, two));
  OK(MPI_Win_detach(w, two + HALF));
  OK(MPI_Win_detach(w, late));
  OK(MPI_Win_free(&w));
  for (int i = 0; i < NREG; ++i) free(reg[i]);
  free(two);
  free(late);
  OK(MPI_Finalize());
  passed();
  return 0;
}
