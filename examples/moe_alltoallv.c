/* moe_alltoallv: routing tokens to experts and back, as a mixture-of-experts
 * layer does with expert parallelism. There is one expert per rank. Each
 * rank holds T tokens (vectors of D floats), and a router picks an expert
 * for each token. Then:
 *   1. each rank sorts its tokens by expert (remembering where each came from);
 *   2. MPI_Alltoall exchanges the counts: how many tokens go to each expert;
 *   3. MPI_Alltoallv sends the tokens to their experts (counts differ, some zero);
 *   4. each expert transforms the tokens it received (here: scales them by
 *      expert + 1);
 *   5. the inverse MPI_Alltoallv (send and receive arguments swapped) returns
 *      them, and each rank puts them back in their original order.
 * The router is uneven on purpose: expert 0 gets over half of all tokens,
 * the last expert none, and some ranks send nothing to some experts. A token
 * is described to MPI as one element of a contiguous type of D floats, so
 * counts and displacements are in tokens.
 * Checks: each expert received exactly the tokens routed to it, in order, and
 * every token came back, transformed by its expert, to its own place.
 *   build/bin/loomcc examples/moe_alltoallv.c -o moe_alltoallv
 *   build/bin/loomrun -n 4 ./moe_alltoallv */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum { T = 40, D = 32 };

/* The expert for token t of rank r: expert 0 half the time, otherwise
 * spread over experts 0..p-2, never p-1 (when p > 1); odd ranks never
 * pick expert 1. */
static int route(int r, int t, int p) {
  uint64_t z = (uint64_t)r * 1000003u + (uint64_t)t * 7919u + 12345u;
  z = (z ^ (z >> 31)) * 0x9E3779B97F4A7C15ULL;
  z ^= z >> 29;
  if (p == 1 || z % 2 == 0) return 0;
  int e = (int)((z >> 8) % (uint64_t)(p - 1));
  return e == 1 && r % 2 == 1 ? 0 : e;
}

/* Element k of token t of rank r: exact in float, and says where it is from. */
static float tokenValue(int r, int t, int k) { return (float)(r * 10000 + t * 100 + k); }

static void* alloc(size_t n) {
  void* a = calloc(n ? n : 1, 1);
  if (!a) {
    fprintf(stderr, "moe_alltoallv: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return a;
}

int main(int argc, char** argv) {
  int rank, p;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Datatype tokenType;
  MPI_Type_contiguous(D, MPI_FLOAT, &tokenType);
  MPI_Type_commit(&tokenType);

  float* tokens = alloc(sizeof(float) * T * D);
  for (int t = 0; t < T; ++t)
    for (int k = 0; k < D; ++k) tokens[t * D + k] = tokenValue(rank, t, k);

  /* 1. Sort by expert (a stable counting sort); origin[] remembers the order. */
  int *sendCounts = alloc(sizeof(int) * p), *sendDispls = alloc(sizeof(int) * p);
  int *recvCounts = alloc(sizeof(int) * p), *recvDispls = alloc(sizeof(int) * p);
  int *origin = alloc(sizeof(int) * T), *fill = alloc(sizeof(int) * p);
  for (int t = 0; t < T; ++t) ++sendCounts[route(rank, t, p)];
  for (int e = 1; e < p; ++e) sendDispls[e] = sendDispls[e - 1] + sendCounts[e - 1];
  float* sendBuf = alloc(sizeof(float) * T * D);
  for (int t = 0; t < T; ++t) {
    int e = route(rank, t, p), pos = sendDispls[e] + fill[e]++;
    origin[pos] = t;
    for (int k = 0; k < D; ++k) sendBuf[pos * D + k] = tokens[t * D + k];
  }

  /* 2. Exchange the counts, 3. the tokens. */
  MPI_Alltoall(sendCounts, 1, MPI_INT, recvCounts, 1, MPI_INT, MPI_COMM_WORLD);
  int received = 0;
  for (int s = 0; s < p; ++s) recvDispls[s] = received, received += recvCounts[s];
  float* expertBuf = alloc(sizeof(float) * (size_t)received * D);
  MPI_Alltoallv(sendBuf, sendCounts, sendDispls, tokenType, expertBuf, recvCounts, recvDispls,
                tokenType, MPI_COMM_WORLD);

  /* The expert's side: are these exactly the tokens routed here, in order? */
  int errors = 0;
  for (int s = 0; s < p; ++s) {
    int expected = 0;
    for (int t = 0; t < T; ++t) {
      if (route(s, t, p) != rank) continue;
      int pos = recvDispls[s] + expected++;
      if (expected > recvCounts[s]) continue;
      for (int k = 0; k < D; ++k)
        if (expertBuf[(size_t)pos * D + k] != tokenValue(s, t, k)) {
          if (errors++ < 5)
            fprintf(stderr, "moe_alltoallv: expert %d: token %d from rank %d arrived wrong\n",
                    rank, t, s);
          break;
        }
    }
    if (expected != recvCounts[s] && errors++ < 5)
      fprintf(stderr, "moe_alltoallv: expert %d: rank %d announced %d tokens, routed %d\n", rank,
              s, recvCounts[s], expected);
  }

  /* 4. The expert's transform. */
  for (int i = 0; i < received * D; ++i) expertBuf[i] *= (float)(rank + 1);

  /* 5. Back to the owners: the inverse exchange, then the original order. */
  float* backBuf = alloc(sizeof(float) * T * D);
  MPI_Alltoallv(expertBuf, recvCounts, recvDispls, tokenType, backBuf, sendCounts, sendDispls,
                tokenType, MPI_COMM_WORLD);
  float* out = alloc(sizeof(float) * T * D);
  for (int pos = 0; pos < T; ++pos)
    for (int k = 0; k < D; ++k) out[origin[pos] * D + k] = backBuf[pos * D + k];
  for (int t = 0; t < T; ++t) {
    float scale = (float)(route(rank, t, p) + 1);
    for (int k = 0; k < D; ++k)
      if (out[t * D + k] != tokenValue(rank, t, k) * scale) {
        if (errors++ < 5)
          fprintf(stderr, "moe_alltoallv: rank %d: token %d came back as %g..., should be %g...\n",
                  rank, t, out[t * D], tokenValue(rank, t, 0) * scale);
        break;
      }
  }

  /* The routing matrix (rows: source ranks, columns: experts), on rank 0. */
  int* matrix = alloc(sizeof(int) * p * p);
  MPI_Gather(sendCounts, p, MPI_INT, matrix, p, MPI_INT, 0, MPI_COMM_WORLD);
  int allErrors;
  MPI_Allreduce(&errors, &allErrors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("tokens sent from rank (row) to expert (column):\n       ");
    for (int e = 0; e < p; ++e) {
      char name[16];
      snprintf(name, sizeof name, "exp%d", e);
      printf(" %5s", name);
    }
    printf("\n");
    for (int s = 0; s < p; ++s) {
      printf("rank %-2d", s);
      for (int e = 0; e < p; ++e) printf(" %5d", matrix[s * p + e]);
      printf("\n");
    }
    printf("total  ");
    for (int e = 0; e < p; ++e) {
      int sum = 0;
      for (int s = 0; s < p; ++s) sum += matrix[s * p + e];
      printf(" %5d", sum);
    }
    printf("\nMoE routing over %d ranks, %d tokens of %d floats per rank: every token went to "
           "its expert\nand came back scaled by it, in its original place: %s\n",
           p, T, D, allErrors ? "WRONG" : "ok");
  }
  MPI_Type_free(&tokenType);
  free(tokens);
  free(sendCounts);
  free(sendDispls);
  free(recvCounts);
  free(recvDispls);
  free(origin);
  free(fill);
  free(sendBuf);
  free(expertBuf);
  free(backBuf);
  free(out);
  free(matrix);
  MPI_Finalize();
  return allErrors ? 1 : 0;
}
