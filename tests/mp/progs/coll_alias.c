/* coll_alias: collectives whose send and receive buffers overlap, which the
 * standard forbids (MPI_IN_PLACE is the way to use one buffer), under
 * MPI_ERRORS_RETURN. Every such call fails with MPI_ERR_BUFFER before it
 * starts anything, blocking, nonblocking (no request is made) and
 * persistent: Gather(v) and Scatter(v) at the root only (as a program that
 * calls them only there would), Allgather(v) with the own block inside the
 * receive buffer, Alltoall(v, w), the reductions, and Exscan on every rank
 * (rank 0 included, whose receive buffer is otherwise not significant).
 * MPI_Reduce_local with MPI_IN_PLACE or overlapping buffers too. After all
 * that the communicator still works (nothing was started), and an
 * Alltoallv within one buffer whose send and receive blocks are disjoint is
 * legal and runs.
 * Prints "coll_alias: rank R: N checks passed". */
#include <stdlib.h>

#include "comm_checks.h"

enum { N = 2 };
static int me, np;

static void expectBuffer(int rc, const char* what) {
  int cls = -1;
  ++checks;
  MPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_BUFFER) {
    fprintf(stderr, "coll_alias: rank %d: %s gave class %d, want MPI_ERR_BUFFER\n", me, what, cls);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

int main(int argc, char** argv) {
  prog = "coll_alias";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &me));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &np));
  wrank = me;
  MPI_Comm c = MPI_COMM_WORLD;
  OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  int* b = calloc((size_t)(N * np), sizeof(int));
  int* cnt = malloc(sizeof(int) * (size_t)np);
  int* dsp = malloc(sizeof(int) * (size_t)np);
  MPI_Datatype* ty = malloc(sizeof(MPI_Datatype) * (size_t)np);
  for (int i = 0; i < np; ++i) {
    cnt[i] = N;
    dsp[i] = i * N;
    ty[i] = MPI_INT;
  }
  int* bw = malloc(sizeof(int) * (size_t)np); /* byte displacements (alltoallw) */
  for (int i = 0; i < np; ++i) bw[i] = i * N * (int)sizeof(int);
  MPI_Request r = MPI_REQUEST_NULL;

  for (int nb = 0; nb < 2; ++nb) {
    if (me == 0) {
      expectBuffer(nb ? MPI_Igather(b, N, MPI_INT, b, N, MPI_INT, 0, c, &r)
                      : MPI_Gather(b, N, MPI_INT, b, N, MPI_INT, 0, c), "gather");
      expectBuffer(nb ? MPI_Igatherv(b, N, MPI_INT, b, cnt, dsp, MPI_INT, 0, c, &r)
                      : MPI_Gatherv(b, N, MPI_INT, b, cnt, dsp, MPI_INT, 0, c), "gatherv");
      expectBuffer(nb ? MPI_Iscatter(b, N, MPI_INT, b, N, MPI_INT, 0, c, &r)
                      : MPI_Scatter(b, N, MPI_INT, b, N, MPI_INT, 0, c), "scatter");
      expectBuffer(nb ? MPI_Iscatterv(b, cnt, dsp, MPI_INT, b, N, MPI_INT, 0, c, &r)
                      : MPI_Scatterv(b, cnt, dsp, MPI_INT, b, N, MPI_INT, 0, c), "scatterv");
      /* The receive buffer of the root's own block only, not its start. */
      if (np > 1)
        expectBuffer(MPI_Gather(b + N * (np - 1), N, MPI_INT, b, N, MPI_INT, 0, c), "gather end");
    }
    expectBuffer(nb ? MPI_Iallgather(b + me, 1, MPI_INT, b, 1, MPI_INT, c, &r)
                    : MPI_Allgather(b + me, 1, MPI_INT, b, 1, MPI_INT, c), "allgather");
    expectBuffer(nb ? MPI_Iallgatherv(b + me * N, N, MPI_INT, b, cnt, dsp, MPI_INT, c, &r)
                    : MPI_Allgatherv(b + me * N, N, MPI_INT, b, cnt, dsp, MPI_INT, c),
                 "allgatherv");
    expectBuffer(nb ? MPI_Ialltoall(b, N, MPI_INT, b, N, MPI_INT, c, &r)
                    : MPI_Alltoall(b, N, MPI_INT, b, N, MPI_INT, c), "alltoall");
    expectBuffer(nb ? MPI_Ialltoallv(b, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, c, &r)
                    : MPI_Alltoallv(b, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, c), "alltoallv");
    expectBuffer(nb ? MPI_Ialltoallw(b, cnt, bw, ty, b, cnt, bw, ty, c, &r)
                    : MPI_Alltoallw(b, cnt, bw, ty, b, cnt, bw, ty, c), "alltoallw");
    expectBuffer(nb ? MPI_Iallreduce(b, b + 1, N, MPI_INT, MPI_SUM, c, &r)
                    : MPI_Allreduce(b, b + 1, N, MPI_INT, MPI_SUM, c), "allreduce (partial)");
    expectBuffer(nb ? MPI_Ireduce_scatter_block(b, b, N, MPI_INT, MPI_SUM, c, &r)
                    : MPI_Reduce_scatter_block(b, b, N, MPI_INT, MPI_SUM, c),
                 "reduce_scatter_block");
    expectBuffer(nb ? MPI_Iscan(b, b, N, MPI_INT, MPI_SUM, c, &r)
                    : MPI_Scan(b, b, N, MPI_INT, MPI_SUM, c), "scan");
    expectBuffer(nb ? MPI_Iexscan(b, b, N, MPI_INT, MPI_SUM, c, &r)
                    : MPI_Exscan(b, b, N, MPI_INT, MPI_SUM, c), "exscan");
    if (me == 0)
      expectBuffer(nb ? MPI_Ireduce(b, b, N, MPI_INT, MPI_SUM, 0, c, &r)
                      : MPI_Reduce(b, b, N, MPI_INT, MPI_SUM, 0, c), "reduce");
    CHECK(r == MPI_REQUEST_NULL);
  }
  /* Persistent forms refuse at init. */
  expectBuffer(MPI_Alltoall_init(b, N, MPI_INT, b, N, MPI_INT, c, MPI_INFO_NULL, &r),
               "alltoall_init");
  expectBuffer(MPI_Allgather_init(b + me, 1, MPI_INT, b, 1, MPI_INT, c, MPI_INFO_NULL, &r),
               "allgather_init");
  CHECK(r == MPI_REQUEST_NULL);

  /* MPI_Reduce_local. */
  int in[4] = {1, 2, 3, 4};
  expectBuffer(MPI_Reduce_local(MPI_IN_PLACE, in, 2, MPI_INT, MPI_SUM), "reduce_local in place");
  expectBuffer(MPI_Reduce_local(in, in + 1, 2, MPI_INT, MPI_SUM), "reduce_local overlap");
  OK(MPI_Reduce_local(in, in + 2, 2, MPI_INT, MPI_SUM));
  CHECK(in[2] == 4 && in[3] == 6);

  /* Nothing was started: the communicator works. */
  int one = 1, sum = 0;
  OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
  CHECK(sum == np);

  /* One buffer, disjoint halves: legal. */
  int* whole = malloc(sizeof(int) * (size_t)(2 * np));
  int* sc = malloc(sizeof(int) * (size_t)np);
  int* sd = malloc(sizeof(int) * (size_t)np);
  int* rd = malloc(sizeof(int) * (size_t)np);
  for (int i = 0; i < np; ++i) {
    whole[i] = me * 100 + i;
    whole[np + i] = -1;
    sc[i] = 1;
    sd[i] = i;
    rd[i] = np + i;
  }
  OK(MPI_Alltoallv(whole, sc, sd, MPI_INT, whole, sc, rd, MPI_INT, c));
  for (int i = 0; i < np; ++i) CHECK(whole[np + i] == i * 100 + me);

  OK(MPI_Barrier(c));
  free(b);
  free(cnt);
  free(dsp);
  free(ty);
  free(bw);
  free(whole);
  free(sc);
  free(sd);
  free(rd);
  OK(MPI_Finalize());
  passed();
  return 0;
}
