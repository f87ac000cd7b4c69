/* coll_truncate: a broadcast whose ranks pass different counts, and what
 * comes after it. Every rank uses MPI_ERRORS_RETURN; rank 0 broadcasts
 * 16 MiB, the others receive it with a count of 40 bytes (MPI_BYTE), then
 * every rank calls MPI_Allreduce of one int.
 *
 * The rules key on each rank's own bytes, so ranks may pick different
 * algorithms for the bcast (16 MiB: a message-based one, 40 B: shm); it
 * used to leave rank 0 waiting forever in the allreduce. Now:
 *   - no rank hangs (the test's timeout catches one that does);
 *   - every rank but the root gets an error from the bcast (the root may);
 *   - the allreduce returns an error, or the right sum;
 *   - the job goes on: an allreduce on a new communicator (MPI_Comm_dup of
 *     MPI_COMM_WORLD) gives the right sum on every rank.
 * argv[1] picks other mismatches of the same kind, where only "no rank
 * hangs, the job goes on" is checked:
 *   root-small  the root broadcasts 40 bytes, the others expect 16 MiB
 *   root-small-shm  the root 40 bytes, the others 48 KiB: both take the
 *               shared segment, in 1 and 3 steps
 *   reduce      rank 1 reduces 10 ints to rank 0, the others 1 Mi ints
 *   allgather   rank 1 passes blocks of 40 bytes, the others of 1 MiB
 * Prints "coll_truncate: rank R ok" on success. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void check(int ok, const char* what) {
  if (ok) return;
  fprintf(stderr, "coll_truncate: rank %d: %s\n", rank, what);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const char* mode = argc > 1 ? argv[1] : "bcast";
  const int big = 16 << 20;
  /* Never freed: a peer's abandoned transfer may still read or write them. */
  char* buf = calloc(big, 1);
  char* out = calloc((size_t)big * (size_t)size, 1);
  int rc;
  if (!strcmp(mode, "bcast")) {
    rc = MPI_Bcast(buf, rank == 0 ? big : 40, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank != 0) check(rc != MPI_SUCCESS, "the truncated MPI_Bcast succeeded");
  } else if (!strcmp(mode, "root-small")) {
    rc = MPI_Bcast(buf, rank == 0 ? 40 : big, MPI_BYTE, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "root-small-shm")) {
    rc = MPI_Bcast(buf, rank == 0 ? 40 : 48 << 10, MPI_BYTE, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "reduce")) {
    rc = MPI_Reduce(buf, out, rank == 1 ? 10 : 1 << 20, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  } else if (!strcmp(mode, "allgather")) {
    const int n = rank == 1 ? 40 : 1 << 20;
    rc = MPI_Allgather(buf, n, MPI_BYTE, out, n, MPI_BYTE, MPI_COMM_WORLD);
  } else {
    check(0, "unknown mode");
  }

  int one = 1, sum = -1;
  rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rc == MPI_SUCCESS) check(sum == size, "MPI_Allreduce succeeded with a wrong sum");
  printf("coll_truncate: rank %d: %s then allreduce: %s\n", rank, mode,
         rc == MPI_SUCCESS ? "success" : "error");

  MPI_Comm dup;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS, "MPI_Comm_dup failed");
  sum = -1;
  check(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup) == MPI_SUCCESS && sum == size,
        "MPI_Allreduce on a new communicator failed");
  MPI_Comm_free(&dup);
  printf("coll_truncate: rank %d ok\n", rank);
  MPI_Finalize();
  return 0;
}
