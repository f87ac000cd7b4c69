/* tp_mlp: the forward pass of a tensor-parallel MLP, Y = relu(X W1) W2, as
 * in Megatron-style tensor parallelism.
 *   X  is B x D (the same on every rank),
 *   W1 is D x H, split by columns: rank r holds columns [h0, h1) (column-parallel),
 *   W2 is H x E, split by rows:    rank r holds rows    [h0, h1) (row-parallel).
 * Rank r computes its slice of the hidden layer, relu(X W1[:, h0:h1]) (B x (h1-h0)),
 * with no communication: relu acts element by element. Multiplying by its rows
 * of W2 gives a B x E partial output, and the true output is the sum of the
 * partials over the ranks: one MPI_Allreduce of B x E values. (H need not be
 * divisible by the number of ranks: the slices then differ by one column.)
 *
 * Every rank draws the same weights from the same pseudo-random generator,
 * keeps its slices, and checks the result against the whole computation
 * done serially.
 *   build/bin/loomcc examples/tp_mlp.c -o tp_mlp -lm && build/bin/loomrun -n 4 ./tp_mlp */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { B = 32, D = 64, H = 250, E = 48 };

/* A 64-bit linear congruential generator; returns values in [-1, 1). */
static uint64_t lcgState = 0x2545F4914F6CDD1DULL;
static float lcgUniform(void) {
  lcgState = lcgState * 6364136223846793005ULL + 1442695040888963407ULL;
  return (float)((double)(lcgState >> 40) / (double)(1ULL << 23) - 1.0);
}

static float* alloc(size_t n) {
  float* p = calloc(n ? n : 1, sizeof(float));
  if (!p) {
    fprintf(stderr, "tp_mlp: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return p;
}

int main(int argc, char** argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* The full tensors, drawn in the same order on every rank (row-major). */
  float *X = alloc(B * D), *W1 = alloc(D * H), *W2 = alloc(H * E);
  for (int i = 0; i < B * D; ++i) X[i] = lcgUniform();
  for (int i = 0; i < D * H; ++i) W1[i] = lcgUniform() / sqrtf((float)D);
  for (int i = 0; i < H * E; ++i) W2[i] = lcgUniform() / sqrtf((float)H);

  /* This rank's shards: columns [h0, h1) of W1 and the same rows of W2. */
  int h0 = (int)((long)H * rank / size), h1 = (int)((long)H * (rank + 1) / size), hn = h1 - h0;
  float *W1s = alloc((size_t)D * hn), *W2s = alloc((size_t)hn * E);
  for (int d = 0; d < D; ++d)
    for (int j = 0; j < hn; ++j) W1s[d * hn + j] = W1[d * H + h0 + j];
  for (int j = 0; j < hn; ++j)
    for (int e = 0; e < E; ++e) W2s[j * E + e] = W2[(h0 + j) * E + e];

  /* Column-parallel layer: this rank's slice of the hidden activations. */
  float *Hs = alloc((size_t)B * hn), *Y = alloc(B * E);
  for (int b = 0; b < B; ++b)
    for (int j = 0; j < hn; ++j) {
      float acc = 0.0f;
      for (int d = 0; d < D; ++d) acc += X[b * D + d] * W1s[d * hn + j];
      Hs[b * hn + j] = acc > 0.0f ? acc : 0.0f;
    }
  /* Row-parallel layer: a partial output from this rank's rows, then the sum. */
  for (int b = 0; b < B; ++b)
    for (int e = 0; e < E; ++e) {
      float acc = 0.0f;
      for (int j = 0; j < hn; ++j) acc += Hs[b * hn + j] * W2s[j * E + e];
      Y[b * E + e] = acc;
    }
  MPI_Allreduce(MPI_IN_PLACE, Y, B * E, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);

  /* Serial reference, in double, over the full weights. */
  double worst = 0.0, scale = 0.0;
  double* hidden = malloc(H * sizeof(double));
  for (int b = 0; b < B; ++b) {
    for (int j = 0; j < H; ++j) {
      double acc = 0.0;
      for (int d = 0; d < D; ++d) acc += (double)X[b * D + d] * W1[d * H + j];
      hidden[j] = acc > 0.0 ? acc : 0.0;
    }
    for (int e = 0; e < E; ++e) {
      double ref = 0.0;
      for (int j = 0; j < H; ++j) ref += hidden[j] * W2[j * E + e];
      worst = fmax(worst, fabs(Y[b * E + e] - ref));
      scale = fmax(scale, fabs(ref));
    }
  }
  free(hidden);
  /* float sums of a few hundred terms: a few units in the last place of the scale. */
  int ok = worst <= 1e-5 * scale, allOk;
  if (!ok)
    fprintf(stderr, "tp_mlp: rank %d: max |Y - serial| = %.3e, more than 1e-5 x max |Y| = %.3e\n",
            rank, worst, 1e-5 * scale);
  MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  double worstAll;
  MPI_Reduce(&worst, &worstAll, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("tensor-parallel MLP over %d ranks: X %dx%d, W1 %dx%d split by columns, W2 %dx%d by "
           "rows (rank 0 holds %d of %d hidden units)\n"
           "max |Y - serial| = %.2e, max |Y| = %.2f: %s\n",
           size, B, D, D, H, H, E, hn, H, worstAll, scale, allOk ? "ok" : "WRONG");
  free(X);
  free(W1);
  free(W2);
  free(W1s);
  free(W2s);
  free(Hs);
  free(Y);
  MPI_Finalize();
  return allOk ? 0 : 1;
}
