/*
 * call_cost.c - what one small rooted collective costs each side, apart from
 * waiting for the other (built by hand, like reduce_local.c; not one of
 * bench/run's programs).
 *
 * bench/src/coll.c times back-to-back calls of the slowest rank, which mixes
 * the two sides' costs with how the library pipelines them. Here, at 2
 * ranks, one side runs `calls` calls (default 32) on a duplicated
 * communicator while the other waits in a barrier on MPI_COMM_WORLD, and
 * then the other side runs its `calls` calls, which find everything there:
 * - bcast and scatter: the root goes first (its calls must not wait for
 *   the reader; with Loom run it with LOOM_COLL_SHM_DEPTH=128 so that its
 *   slots hold every call), then the other rank reads;
 * - gather and reduce: the other rank goes first (its calls only deposit),
 *   then the root collects.
 * A library whose first side cannot complete alone hangs here: that is an
 * answer too (run it under `timeout`).
 * It also times the same call on MPI_COMM_SELF, where nothing moves: the
 * cost of the call's path through the library alone.
 *
 *   mpicc -O2 -o call_cost bench/src/call_cost.c
 *   mpirun -n 2 ./call_cost [bcast|gather|scatter|reduce] [bytes] [calls]
 *
 * Prints, per op, the median over 2000 rounds of the time per call of each
 * side (ns; MPI_Wtime around `calls` calls) and of the 1-rank call.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROUNDS = 2000, MAX_FLOATS = 1024 };

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static void call(const char* op, float* sb, float* rb, int c, MPI_Comm comm) {
  if (!strcmp(op, "bcast"))
    MPI_Bcast(sb, c, MPI_FLOAT, 0, comm);
  else if (!strcmp(op, "gather"))
    MPI_Gather(sb, c, MPI_FLOAT, rb, c, MPI_FLOAT, 0, comm);
  else if (!strcmp(op, "scatter"))
    MPI_Scatter(sb, c, MPI_FLOAT, rb, c, MPI_FLOAT, 0, comm);
  else
    MPI_Reduce(sb, rb, c, MPI_FLOAT, MPI_SUM, 0, comm);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* op = argc > 1 ? argv[1] : "bcast";
  const int bytes = argc > 2 ? atoi(argv[2]) : 8;
  const int calls = argc > 3 ? atoi(argv[3]) : 32;
  const int c = bytes / (int)sizeof(float);
  if (size != 2 || c < 1 || c > MAX_FLOATS / 2 || calls < 1 ||
      (strcmp(op, "bcast") && strcmp(op, "gather") && strcmp(op, "scatter") &&
       strcmp(op, "reduce"))) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -n 2 call_cost [bcast|gather|scatter|reduce] [bytes 4..%d] "
                      "[calls]\n", MAX_FLOATS / 2 * (int)sizeof(float));
    MPI_Finalize();
    return 1;
  }
  static float sb[MAX_FLOATS], rb[MAX_FLOATS];
  static double first[ROUNDS], second[ROUNDS], self[ROUNDS];
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  /* A first call together: a library may set the communicator up then. */
  call(op, sb, rb, c, d);
  /* The side whose calls complete alone goes first. */
  const int lead = (!strcmp(op, "bcast") || !strcmp(op, "scatter")) ? 0 : 1;

  for (int r = 0; r < ROUNDS; ++r) {
    double t0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == lead) {
      t0 = MPI_Wtime();
      for (int i = 0; i < calls; ++i) call(op, sb, rb, c, d);
      first[r] = (MPI_Wtime() - t0) / calls;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != lead) {
      t0 = MPI_Wtime();
      for (int i = 0; i < calls; ++i) call(op, sb, rb, c, d);
      second[r] = (MPI_Wtime() - t0) / calls;
    }
  }
  for (int r = 0; r < ROUNDS; ++r) {
    const double t0 = MPI_Wtime();
    for (int i = 0; i < calls; ++i) call(op, sb, rb, c, MPI_COMM_SELF);
    self[r] = (MPI_Wtime() - t0) / calls;
  }
  /* Rank 1's figures to rank 0. */
  if (rank == 1) {
    MPI_Send(lead == 1 ? first : second, ROUNDS, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(lead == 1 ? first : second, ROUNDS, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    qsort(first, ROUNDS, sizeof(double), cmp_double);
    qsort(second, ROUNDS, sizeof(double), cmp_double);
    qsort(self, ROUNDS, sizeof(double), cmp_double);
    printf("%s %d B: %s first %.1f ns, %s then %.1f ns; on MPI_COMM_SELF %.1f ns\n", op, bytes,
           lead == 0 ? "root" : "non-root", first[ROUNDS / 2] * 1e9,
           lead == 0 ? "non-root" : "root", second[ROUNDS / 2] * 1e9, self[ROUNDS / 2] * 1e9);
  }
  MPI_Comm_free(&d);
  MPI_Finalize();
  return 0;
}
