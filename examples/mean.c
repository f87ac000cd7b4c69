/* mean: the mean of a vector spread over the ranks. Each rank owns a slice
 * (slices differ in length when the ranks do not divide the vector), sums
 * it, and one MPI_Allreduce adds the sums and the counts.
 *   build/bin/loomcc examples/mean.c -o mean && build/bin/loomrun -n 4 ./mean */
#include <math.h>
#include <mpi.h>
#include <stdio.h>

enum { N = 100003 };

static double value(long i) { return (double)(i % 97) * 0.5 - 7.0; }

int main(int argc, char** argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  long lo = (long)N * rank / size, hi = (long)N * (rank + 1) / size;
  double local[2] = {0.0, (double)(hi - lo)}; /* sum, count */
  for (long i = lo; i < hi; ++i) local[0] += value(i);
  double global[2];
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double mean = global[0] / global[1], ref = 0.0;
  for (long i = 0; i < N; ++i) ref += value(i);
  ref /= N;
  int ok = global[1] == N && fabs(mean - ref) < 1e-9 * fabs(ref) + 1e-12;
  if (rank == 0) printf("mean of %d values over %d ranks: %.9f (serial %.9f): %s\n", N, size, mean,
                        ref, ok ? "ok" : "WRONG");
  MPI_Finalize();
  return ok ? 0 : 1;
}
