/* coll_barrier: MPI_Barrier and MPI_Ibarrier really synchronise. Ranks
 * enter at staggered times; CLOCK_MONOTONIC is shared by the processes of a
 * node, so the latest entry must precede the earliest exit. Also: several
 * nonblocking barriers in flight at once on different communicators, a
 * barrier on MPI_COMM_SELF and on a split communicator.
 * Prints "coll_barrier: rank R ok". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int rank, size;

#define CHECK(c)                                                                  \
  do {                                                                            \
    if (!(c)) {                                                                   \
      fprintf(stderr, "coll_barrier: rank %d: line %d: %s\n", rank, __LINE__, #c); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                               \
    }                                                                             \
  } while (0)

/* Entry and exit times of every rank, gathered on rank 0 by send/recv. */
static void checkOrdered(double in, double out) {
  double mine[2] = {in, out};
  if (rank != 0) {
    CHECK(MPI_Send(mine, 2, MPI_DOUBLE, 0, 77, MPI_COMM_WORLD) == MPI_SUCCESS);
    return;
  }
  double lastIn = in, firstOut = out, t[2];
  for (int r = 1; r < size; ++r) {
    CHECK(MPI_Recv(t, 2, MPI_DOUBLE, r, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    if (t[0] > lastIn) lastIn = t[0];
    if (t[1] < firstOut) firstOut = t[1];
  }
  CHECK(lastIn <= firstOut);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  for (int round = 0; round < 5; ++round) {
    usleep((useconds_t)(((rank * 7 + round * 3) % size) * 2000));
    double in = MPI_Wtime();
    CHECK(MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS);
    checkOrdered(in, MPI_Wtime());
  }

  /* Nonblocking: the last rank arrives late; the others test meanwhile. */
  MPI_Request req;
  int flag = 0, tests = 0;
  if (rank == size - 1) usleep(20000);
  double in = MPI_Wtime();
  CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &req) == MPI_SUCCESS);
  while (!flag) {
    CHECK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    ++tests;
  }
  CHECK(req == MPI_REQUEST_NULL);
  checkOrdered(in, MPI_Wtime());

  /* Several in flight at once, completed in reverse order. */
  MPI_Comm dup, half;
  CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS);
  CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half) == MPI_SUCCESS);
  MPI_Request reqs[4];
  CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &reqs[0]) == MPI_SUCCESS);
  CHECK(MPI_Ibarrier(dup, &reqs[1]) == MPI_SUCCESS);
  CHECK(MPI_Ibarrier(half, &reqs[2]) == MPI_SUCCESS);
  CHECK(MPI_Ibarrier(MPI_COMM_WORLD, &reqs[3]) == MPI_SUCCESS);
  for (int i = 3; i >= 0; --i) CHECK(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE) == MPI_SUCCESS);
  CHECK(MPI_Waitall(0, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS);

  CHECK(MPI_Barrier(MPI_COMM_SELF) == MPI_SUCCESS);
  CHECK(MPI_Barrier(half) == MPI_SUCCESS);
  CHECK(MPI_Comm_free(&half) == MPI_SUCCESS);
  CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS);

  /* Bad input under MPI_ERRORS_RETURN. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(MPI_Barrier(MPI_COMM_NULL) == MPI_ERR_COMM);
  CHECK(MPI_Ibarrier(MPI_COMM_WORLD, NULL) == MPI_ERR_ARG);

  printf("coll_barrier: rank %d ok\n", rank);
  MPI_Finalize();
  return 0;
}
