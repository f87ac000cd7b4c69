/* softmax: softmax of a vector sharded over the ranks, computed stably:
 * MPI_Allreduce(MAX) gives the global maximum m, each rank sums exp(x - m)
 * over its shard, MPI_Allreduce(SUM) gives the denominator. Each rank then
 * holds its shard of the result; the check compares with a serial softmax
 * of the whole vector (regenerated on every rank).
 *   build/bin/loomcc examples/softmax.c -o softmax -lm && build/bin/loomrun -n 4 ./softmax */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 10007 };

static double logit(int i) { return 30.0 * sin(0.37 * i) + 0.01 * i; }

int main(int argc, char** argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int lo = (int)((long)N * rank / size), hi = (int)((long)N * (rank + 1) / size);

  double localMax = -INFINITY, m, localSum = 0.0, denom;
  for (int i = lo; i < hi; ++i) localMax = fmax(localMax, logit(i));
  MPI_Allreduce(&localMax, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int i = lo; i < hi; ++i) localSum += exp(logit(i) - m);
  MPI_Allreduce(&localSum, &denom, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

  /* Serial reference over the whole vector. */
  double rm = -INFINITY, rs = 0.0, worst = 0.0, shardSum = 0.0, total;
  for (int i = 0; i < N; ++i) rm = fmax(rm, logit(i));
  for (int i = 0; i < N; ++i) rs += exp(logit(i) - rm);
  for (int i = lo; i < hi; ++i) {
    double p = exp(logit(i) - m) / denom, ref = exp(logit(i) - rm) / rs;
    worst = fmax(worst, fabs(p - ref) / (ref > 1e-300 ? ref : 1.0));
    shardSum += p;
  }
  MPI_Allreduce(&shardSum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double worstAll;
  MPI_Allreduce(&worst, &worstAll, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  int ok = worstAll < 1e-9 && fabs(total - 1.0) < 1e-9;
  if (rank == 0)
    printf("softmax of %d logits over %d ranks: probabilities sum to %.12f, worst relative "
           "error %.2e: %s\n", N, size, total, worstAll, ok ? "ok" : "WRONG");
  MPI_Finalize();
  return ok ? 0 : 1;
}
