/* argmax: where is the largest value of a vector spread over the ranks?
 * Each rank finds its local maximum and its global index; MPI_Allreduce
 * with MPI_MAXLOC on MPI_DOUBLE_INT picks the largest value, and the
 * smallest index among equal values.
 *   build/bin/loomcc examples/argmax.c -o argmax && build/bin/loomrun -n 4 ./argmax */
#include <mpi.h>
#include <stdio.h>

enum { N = 50021 };

/* Deterministic values with ties: the maximum occurs several times. */
static double value(int i) { return (double)((i * 7919) % 1000); }

int main(int argc, char** argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int lo = (int)((long)N * rank / size), hi = (int)((long)N * (rank + 1) / size);
  struct {
    double value;
    int index;
  } local = {-1.0, -1}, global;
  for (int i = lo; i < hi; ++i)
    if (value(i) > local.value) {
      local.value = value(i);
      local.index = i;
    }
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  int best = 0;
  for (int i = 1; i < N; ++i)
    if (value(i) > value(best)) best = i;
  int ok = global.index == best && global.value == value(best);
  if (rank == 0)
    printf("argmax over %d ranks: value %.0f at index %d (serial: index %d): %s\n", size,
           global.value, global.index, best, ok ? "ok" : "WRONG");
  MPI_Finalize();
  return ok ? 0 : 1;
}
