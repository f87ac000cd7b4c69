/* fsdp_step: training steps in the style of FSDP (fully sharded data
 * parallelism, ZeRO stage 3). The parameters of a small MLP are flattened
 * into one vector, padded to a multiple of the number of ranks p, and cut
 * into p equal shards; rank r stores and updates only shard r. One step:
 *   1. MPI_Allgather the shards: every rank has the full parameters;
 *   2. forward and backward on the rank's own micro-batch, giving a gradient
 *      of the full parameter vector (FSDP would now free the full copy);
 *   3. MPI_Reduce_scatter_block the gradients: rank r receives the sum over
 *      the ranks of the gradient of its shard, and nothing else;
 *   4. SGD on the shard.
 * The loss is the mean over the global batch, so each rank scales its
 * micro-batch's gradient by 1/(global batch): the micro-batches may differ
 * in size (the batch need not divide by p) and the sum is still exact.
 *
 * The model is y = W2 tanh(W1 x + b1) + b2 (6 -> 16 -> 2), fitted to a
 * fixed function on a fixed synthetic batch. Checks: the loss falls, and
 * the gathered parameters equal those of the same steps done by a single
 * process on the whole batch (which every rank also runs).
 *   build/bin/loomcc examples/fsdp_step.c -o fsdp_step -lm && build/bin/loomrun -n 4 ./fsdp_step */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { D = 6, H = 16, E = 2, BATCH = 50, STEPS = 30 };
/* Offsets of the tensors in the flat parameter vector. */
enum { W1 = 0, B1 = W1 + H * D, W2 = B1 + H, B2 = W2 + E * H, NPARAM = B2 + E };
static const double LR = 0.2;

/* A value in [-1, 1) that depends only on (stream, index): splitmix64. */
static double uniform(uint64_t stream, uint64_t index) {
  uint64_t z = stream * 0x9E3779B97F4A7C15ULL + index + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (double)(z >> 11) / (double)(1ULL << 52) - 1.0;
}

/* Weights uniform in [-1, 1) / sqrt(fan-in), biases zero. */
static double initialParam(int i) {
  if (i < B1) return uniform(1, (uint64_t)i) / sqrt(D);
  if (i < W2) return 0.0;
  if (i < B2) return uniform(1, (uint64_t)i) / sqrt(H);
  return 0.0;
}

/* Sample i of the global batch: input x and target t = f(x). */
static void sample(int i, double* x, double* t) {
  for (int k = 0; k < D; ++k) x[k] = uniform(2, (uint64_t)i * D + (uint64_t)k);
  t[0] = sin(x[0] + 2.0 * x[1]) + 0.5 * x[2] * x[3];
  t[1] = 0.8 * x[4] - 0.3 * x[5] + 0.2;
}

/* Forward and backward over samples [lo, hi) of a batch of n: returns their
 * share of the mean loss sum_i 0.5 |y_i - t_i|^2 / n and writes the gradient
 * of that share into grad[0..NPARAM) (the caller's padding stays untouched). */
static double lossAndGrad(const double* p, int lo, int hi, int n, double* grad) {
  double loss = 0.0, x[D], t[E], h[H], y[E], dy[E], dh[H];
  memset(grad, 0, NPARAM * sizeof(double));
  for (int i = lo; i < hi; ++i) {
    sample(i, x, t);
    for (int j = 0; j < H; ++j) {
      double a = p[B1 + j];
      for (int k = 0; k < D; ++k) a += p[W1 + j * D + k] * x[k];
      h[j] = tanh(a);
    }
    for (int e = 0; e < E; ++e) {
      y[e] = p[B2 + e];
      for (int j = 0; j < H; ++j) y[e] += p[W2 + e * H + j] * h[j];
      dy[e] = (y[e] - t[e]) / n;
      loss += 0.5 * (y[e] - t[e]) * (y[e] - t[e]) / n;
    }
    for (int j = 0; j < H; ++j) {
      double g = 0.0;
      for (int e = 0; e < E; ++e) {
        grad[W2 + e * H + j] += dy[e] * h[j];
        g += p[W2 + e * H + j] * dy[e];
      }
      dh[j] = g * (1.0 - h[j] * h[j]);
      grad[B1 + j] += dh[j];
      for (int k = 0; k < D; ++k) grad[W1 + j * D + k] += dh[j] * x[k];
    }
    for (int e = 0; e < E; ++e) grad[B2 + e] += dy[e];
  }
  return loss;
}

static double* alloc(size_t n) {
  double* a = calloc(n, sizeof(double));
  if (!a) {
    fprintf(stderr, "fsdp_step: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return a;
}

int main(int argc, char** argv) {
  int rank, p;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int shard = (NPARAM + p - 1) / p, padded = shard * p; /* padding: always 0 */
  const int lo = (int)((long)BATCH * rank / p), hi = (int)((long)BATCH * (rank + 1) / p);

  double *mine = alloc((size_t)shard), *full = alloc((size_t)padded);
  double *grad = alloc((size_t)padded), *gradShard = alloc((size_t)shard);
  for (int i = 0; i < shard; ++i) {
    int g = rank * shard + i;
    mine[i] = g < NPARAM ? initialParam(g) : 0.0;
  }

  double firstLoss = 0.0, loss = 0.0;
  for (int step = 0; step < STEPS; ++step) {
    MPI_Allgather(mine, shard, MPI_DOUBLE, full, shard, MPI_DOUBLE, MPI_COMM_WORLD);
    double local = lossAndGrad(full, lo, hi, BATCH, grad);
    MPI_Reduce_scatter_block(grad, gradShard, shard, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < shard; ++i) mine[i] -= LR * gradShard[i];
    MPI_Allreduce(&local, &loss, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (step == 0) firstLoss = loss;
    if (rank == 0 && (step % 10 == 0 || step == STEPS - 1))
      printf("step %2d: loss %.6f\n", step, loss);
  }
  MPI_Allgather(mine, shard, MPI_DOUBLE, full, shard, MPI_DOUBLE, MPI_COMM_WORLD);

  /* The same training by one process on the whole batch. */
  double *ref = alloc(NPARAM), *refGrad = alloc(NPARAM), refLoss = 0.0;
  for (int i = 0; i < NPARAM; ++i) ref[i] = initialParam(i);
  for (int step = 0; step < STEPS; ++step) {
    refLoss = lossAndGrad(ref, 0, BATCH, BATCH, refGrad);
    for (int i = 0; i < NPARAM; ++i) ref[i] -= LR * refGrad[i];
  }
  double maxDiff = 0.0;
  for (int i = 0; i < NPARAM; ++i) maxDiff = fmax(maxDiff, fabs(full[i] - ref[i]));
  int padOk = 1;
  for (int i = NPARAM; i < padded; ++i) padOk = padOk && full[i] == 0.0;

  int falls = loss < 0.5 * firstLoss, matches = maxDiff <= 1e-12 && padOk;
  int ok = falls && matches && fabs(loss - refLoss) <= 1e-12, allOk;
  if (!falls)
    fprintf(stderr, "fsdp_step: rank %d: the loss did not halve: %.6f -> %.6f\n", rank,
            firstLoss, loss);
  if (!matches)
    fprintf(stderr,
            "fsdp_step: rank %d: parameters differ from the single-process ones by %.3e "
            "(padding %s)\n",
            rank, maxDiff, padOk ? "zero" : "NOT ZERO");
  if (fabs(loss - refLoss) > 1e-12)
    fprintf(stderr, "fsdp_step: rank %d: last loss %.17g, single process %.17g\n", rank, loss,
            refLoss);
  MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (rank == 0)
    printf("FSDP over %d ranks: %d parameters in shards of %d, global batch %d in micro-batches "
           "of %d..%d\n%d steps, loss %.4f -> %.4f, parameters match the single-process run "
           "(max diff %.1e): %s\n",
           p, NPARAM, shard, BATCH, BATCH / p, (BATCH + p - 1) / p, STEPS, firstLoss, loss,
           maxDiff, allOk ? "ok" : "WRONG");
  free(mine);
  free(full);
  free(grad);
  free(gradShard);
  free(ref);
  free(refGrad);
  MPI_Finalize();
  return allOk ? 0 : 1;
}
