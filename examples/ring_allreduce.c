/* ring_allreduce: the ring allreduce written by hand with MPI_Sendrecv, and
 * checked against MPI_Allreduce on the same input.
 *
 * The vector of n values is cut into p chunks (chunk c is [n*c/p, n*(c+1)/p),
 * so chunks differ by at most one value and may be empty). Each rank sends to
 * its right neighbour (rank+1) and receives from its left one (rank-1).
 *   reduce-scatter, p-1 steps: at step s a rank sends chunk (rank-s) and adds
 *     the chunk (rank-s-1) it receives into its own copy. After p-1 steps
 *     rank r holds the complete sum of chunk (r+1).
 *   allgather, p-1 steps: at step s a rank sends chunk (rank+1-s), which is
 *     complete, and stores the complete chunk (rank-s) it receives.
 * Each rank sends 2(p-1)/p * n values in all, whatever p is: the reason this
 * is the algorithm of choice for large vectors.
 *
 * The inputs are small integers stored in doubles, so every sum is exact and
 * the hand-written result must equal MPI_Allreduce's bit for bit.
 *   build/bin/loomcc examples/ring_allreduce.c -o ring_allreduce
 *   build/bin/loomrun -n 4 ./ring_allreduce */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int chunkLo(int n, int p, int c) { return (int)((long)n * c / p); }

/* Sums buf (n doubles) over comm in place, with p-1 + p-1 Sendrecv steps.
 * tmp must hold n/p + 1 doubles (the largest chunk). */
static void ringAllreduce(double* buf, int n, double* tmp, MPI_Comm comm) {
  int rank, p;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  int right = (rank + 1) % p, left = (rank - 1 + p) % p;

  for (int s = 0; s < p - 1; ++s) { /* reduce-scatter */
    int sc = ((rank - s) % p + p) % p, rc = ((rank - s - 1) % p + p) % p;
    int slo = chunkLo(n, p, sc), shi = chunkLo(n, p, sc + 1);
    int rlo = chunkLo(n, p, rc), rhi = chunkLo(n, p, rc + 1);
    MPI_Sendrecv(buf + slo, shi - slo, MPI_DOUBLE, right, s, tmp, rhi - rlo, MPI_DOUBLE, left, s,
                 comm, MPI_STATUS_IGNORE);
    for (int i = 0; i < rhi - rlo; ++i) buf[rlo + i] += tmp[i];
  }
  for (int s = 0; s < p - 1; ++s) { /* allgather: received chunks go straight into buf */
    int sc = ((rank + 1 - s) % p + p) % p, rc = ((rank - s) % p + p) % p;
    int slo = chunkLo(n, p, sc), shi = chunkLo(n, p, sc + 1);
    int rlo = chunkLo(n, p, rc), rhi = chunkLo(n, p, rc + 1);
    MPI_Sendrecv(buf + slo, shi - slo, MPI_DOUBLE, right, p + s, buf + rlo, rhi - rlo, MPI_DOUBLE,
                 left, p + s, comm, MPI_STATUS_IGNORE);
  }
}

/* Rank r's input: integers in [-100, 100], different on every rank. */
static double input(int rank, int i) { return (double)((rank * 37 + i * 11) % 201 - 100); }

int main(int argc, char** argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* 0, 1, fewer values than ranks, counts not divisible by 2, 3 or 4, and a large one. */
  const int counts[] = {0, 1, 2, 3, 5, 7, 64, 1000, 4099, 100003};
  const int ncounts = (int)(sizeof counts / sizeof counts[0]);
  int allOk = 1;
  for (int k = 0; k < ncounts; ++k) {
    int n = counts[k];
    double* ring = malloc(((size_t)n + 1) * sizeof(double));
    double* in = malloc(((size_t)n + 1) * sizeof(double));
    double* ref = malloc(((size_t)n + 1) * sizeof(double));
    double* tmp = malloc(((size_t)n / size + 2) * sizeof(double));
    if (!ring || !in || !ref || !tmp) {
      fprintf(stderr, "ring_allreduce: out of memory\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < n; ++i) ring[i] = in[i] = input(rank, i);

    double t0 = MPI_Wtime();
    ringAllreduce(ring, n, tmp, MPI_COMM_WORLD);
    double tRing = MPI_Wtime() - t0;
    t0 = MPI_Wtime();
    MPI_Allreduce(in, ref, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double tLib = MPI_Wtime() - t0;

    /* Exact comparison with MPI_Allreduce and with the sum worked out here. */
    int bad = -1;
    for (int i = 0; i < n && bad < 0; ++i) {
      double want = 0.0;
      for (int r = 0; r < size; ++r) want += input(r, i);
      if (ring[i] != ref[i] || ring[i] != want) bad = i;
    }
    if (bad >= 0) {
      double want = 0.0;
      for (int r = 0; r < size; ++r) want += input(r, bad);
      fprintf(stderr,
              "ring_allreduce: rank %d, count %d: element %d is %.17g by the ring, %.17g by "
              "MPI_Allreduce, should be %.17g\n",
              rank, n, bad, ring[bad], ref[bad], want);
    }
    int ok = bad < 0, allRanksOk;
    MPI_Allreduce(&ok, &allRanksOk, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0)
      printf("count %6d: ring %s MPI_Allreduce (ring %.3f ms, MPI_Allreduce %.3f ms)\n", n,
             allRanksOk ? "==" : "!=", tRing * 1e3, tLib * 1e3);
    allOk = allOk && allRanksOk;
    free(ring);
    free(in);
    free(ref);
    free(tmp);
  }
  if (rank == 0)
    printf("ring allreduce over %d ranks, %d counts from 0 to %d: %s\n", size, ncounts,
           counts[ncounts - 1], allOk ? "ok" : "WRONG");
  MPI_Finalize();
  return allOk ? 0 : 1;
}
