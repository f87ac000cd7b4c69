/* Graph and distributed-graph topologies: MPI_Graph_create (a ring with a
 * repeated edge and a self loop, a graph on fewer processes than the
 * communicator), the graph queries, Graph_map; MPI_Dist_graph_create_adjacent
 * (a weighted ring, an unweighted one, MPI_WEIGHTS_EMPTY for no edges);
 * MPI_Dist_graph_create where ranks name edges of other ranks (weighted and
 * not); Topo_test, MPI_Comm_dup, and wrong arguments under
 * MPI_ERRORS_RETURN. Any rank count. */
#include <stdlib.h>
#include <string.h>

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are the ABI's small sentinel
 * pointers, which GCC takes for arrays of size 0. */
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"

#include "comm_checks.h"

static int rank, size;

/* The graph every process passes: node i is joined to i-1 and i+1 (mod p);
 * node 0 also to itself, and node p-1 to 0 a second time. */
static void ringGraph(int nnodes, int* index, int* edges) {
  int e = 0;
  for (int i = 0; i < nnodes; ++i) {
    edges[e++] = (i + nnodes - 1) % nnodes;
    edges[e++] = (i + 1) % nnodes;
    if (i == 0) edges[e++] = 0;
    if (i == nnodes - 1) edges[e++] = 0;
    index[i] = e;
  }
}

static void graph(int nnodes) {
  int index[64], edges[256];
  ringGraph(nnodes, index, edges);
  MPI_Comm g;
  OK(MPI_Graph_create(MPI_COMM_WORLD, nnodes, index, edges, 1, &g));
  if (rank >= nnodes) {
    CHECK(g == MPI_COMM_NULL);
    return;
  }
  int st, n, ne, gi[64], ge[256];
  OK(MPI_Topo_test(g, &st));
  CHECK(st == MPI_GRAPH);
  OK(MPI_Comm_size(g, &n));
  CHECK(n == nnodes);
  OK(MPI_Graphdims_get(g, &n, &ne));
  CHECK(n == nnodes && ne == index[nnodes - 1]);
  OK(MPI_Graph_get(g, 64, 256, gi, ge));
  for (int i = 0; i < nnodes; ++i) CHECK(gi[i] == index[i]);
  for (int i = 0; i < ne; ++i) CHECK(ge[i] == edges[i]);
  for (int q = 0; q < nnodes; ++q) {
    int cnt, nb[8];
    OK(MPI_Graph_neighbors_count(g, q, &cnt));
    const int begin = q == 0 ? 0 : index[q - 1];
    CHECK(cnt == index[q] - begin);
    OK(MPI_Graph_neighbors(g, q, 8, nb));
    for (int k = 0; k < cnt; ++k) CHECK(nb[k] == edges[begin + k]);
  }
  /* The duplicate keeps the graph. */
  MPI_Comm d;
  OK(MPI_Comm_dup(g, &d));
  OK(MPI_Comm_free(&g));
  OK(MPI_Topo_test(d, &st));
  CHECK(st == MPI_GRAPH);
  OK(MPI_Graphdims_get(d, &n, &ne));
  CHECK(n == nnodes && ne == index[nnodes - 1]);
  OK(MPI_Comm_free(&d));
  int nr;
  OK(MPI_Graph_map(MPI_COMM_WORLD, nnodes, index, edges, &nr));
  CHECK(nr == rank);
}

static void adjacentRing(void) {
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  int src[1] = {left}, sw[1] = {10 * left + rank}, dst[1] = {right}, dw[1] = {10 * rank + right};
  MPI_Comm ring;
  OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, sw, 1, dst, dw, MPI_INFO_NULL, 0,
                                    &ring));
  int st, in, out, weighted, s[2], w1[2], d[2], w2[2];
  OK(MPI_Topo_test(ring, &st));
  CHECK(st == MPI_DIST_GRAPH);
  OK(MPI_Dist_graph_neighbors_count(ring, &in, &out, &weighted));
  CHECK(in == 1 && out == 1 && weighted == 1);
  OK(MPI_Dist_graph_neighbors(ring, 2, s, w1, 2, d, w2));
  CHECK(s[0] == left && w1[0] == 10 * left + rank && d[0] == right && w2[0] == 10 * rank + right);
  MPI_Comm dup;
  OK(MPI_Comm_dup(ring, &dup));
  OK(MPI_Comm_free(&ring));
  OK(MPI_Dist_graph_neighbors_count(dup, &in, &out, &weighted));
  CHECK(in == 1 && out == 1 && weighted == 1);
  OK(MPI_Comm_free(&dup));

  /* Unweighted: weight arrays are left alone. */
  OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 1, dst,
                                    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &ring));
  OK(MPI_Dist_graph_neighbors_count(ring, &in, &out, &weighted));
  CHECK(in == 1 && out == 1 && weighted == 0);
  w1[0] = w2[0] = -5;
  OK(MPI_Dist_graph_neighbors(ring, 1, s, w1, 1, d, w2));
  CHECK(s[0] == left && d[0] == right && w1[0] == -5 && w2[0] == -5);
  OK(MPI_Dist_graph_neighbors(ring, 1, s, MPI_UNWEIGHTED, 1, d, MPI_UNWEIGHTED));
  OK(MPI_Comm_free(&ring));

  /* Rank 0 receives from everyone, nobody else has in-edges; weighted with
   * MPI_WEIGHTS_EMPTY where a side has no edges. */
  int srcs[64], ws[64];
  for (int i = 0; i < size; ++i) srcs[i] = i, ws[i] = i + 1;
  int to0[1] = {0}, w0[1] = {rank + 1};
  OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, rank == 0 ? size : 0,
                                    rank == 0 ? srcs : NULL, rank == 0 ? ws : MPI_WEIGHTS_EMPTY,
                                    1, to0, w0, MPI_INFO_NULL, 0, &ring));
  OK(MPI_Dist_graph_neighbors_count(ring, &in, &out, &weighted));
  CHECK(in == (rank == 0 ? size : 0) && out == 1 && weighted == 1);
  int gs[64], gw[64];
  OK(MPI_Dist_graph_neighbors(ring, 64, gs, gw, 1, d, w2));
  for (int i = 0; i < in; ++i) CHECK(gs[i] == i && gw[i] == i + 1);
  CHECK(d[0] == 0 && w2[0] == rank + 1);
  OK(MPI_Comm_free(&ring));
}

/* An edge list every process can compute: edge k runs from a(k) to b(k)
 * with weight w(k); process k % size names it. Several edges are repeated
 * and some are self loops. */
#define NEDGES(p) (3 * (p) + 2)
static void edgeOf(int k, int p, int* a, int* b, int* w) {
  if (k < p) *a = k, *b = (k + 1) % p;                 /* ring */
  else if (k < 2 * p) *a = (k - p), *b = (k - p) * 2 % p; /* doubling (self loop at 0) */
  else if (k < 3 * p) *a = p - 1, *b = (k - 2 * p);     /* p-1 to everyone */
  else *a = 0, *b = p - 1;                             /* 0 -> p-1 twice more */
  *w = 1000 + k;
}

typedef struct {
  int peer, weight;
} Adj;

static int cmpAdj(const void* x, const void* y) {
  const Adj *a = x, *b = y;
  if (a->peer != b->peer) return a->peer - b->peer;
  return a->weight - b->weight;
}

static void generalGraph(int weighted) {
  const int ne = NEDGES(size);
  /* What this process names: sources with their edges, grouped by source
   * in the order met (a source may appear more than once). */
  int srcs[256], degs[256], dsts[256], wts[256], n = 0, m = 0;
  for (int k = rank; k < ne; k += size) {
    int a, b, w;
    edgeOf(k, size, &a, &b, &w);
    srcs[n] = a;
    degs[n] = 1;
    ++n;
    dsts[m] = b;
    wts[m] = w;
    ++m;
  }
  MPI_Comm g;
  OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts, weighted ? wts : MPI_UNWEIGHTED,
                           MPI_INFO_NULL, 1, &g));
  int st, in, out, isw;
  OK(MPI_Topo_test(g, &st));
  CHECK(st == MPI_DIST_GRAPH);
  OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &isw));
  CHECK(isw == weighted);
  Adj wantIn[512], wantOut[512], gotIn[512], gotOut[512];
  int ni = 0, no = 0;
  for (int k = 0; k < ne; ++k) {
    int a, b, w;
    edgeOf(k, size, &a, &b, &w);
    if (b == rank) wantIn[ni++] = (Adj){a, weighted ? w : 0};
    if (a == rank) wantOut[no++] = (Adj){b, weighted ? w : 0};
  }
  CHECK(in == ni && out == no);
  int s[512], sw[512], d[512], dw[512];
  OK(MPI_Dist_graph_neighbors(g, in, s, sw, out, d, dw));
  for (int i = 0; i < in; ++i) gotIn[i] = (Adj){s[i], weighted ? sw[i] : 0};
  for (int i = 0; i < out; ++i) gotOut[i] = (Adj){d[i], weighted ? dw[i] : 0};
  /* The order of a process's neighbours is the implementation's; the sets
   * (with repetitions) are the standard's. */
  qsort(wantIn, ni, sizeof(Adj), cmpAdj);
  qsort(gotIn, ni, sizeof(Adj), cmpAdj);
  qsort(wantOut, no, sizeof(Adj), cmpAdj);
  qsort(gotOut, no, sizeof(Adj), cmpAdj);
  CHECK(memcmp(wantIn, gotIn, sizeof(Adj) * ni) == 0);
  CHECK(memcmp(wantOut, gotOut, sizeof(Adj) * no) == 0);
  OK(MPI_Comm_free(&g));

  /* Edges named in one call with degrees > 1, by rank 0 only. */
  int s0[1] = {size - 1}, deg0[1] = {size}, dst0[64], w0[64];
  for (int i = 0; i < size; ++i) dst0[i] = i, w0[i] = 7 * i;
  OK(MPI_Dist_graph_create(MPI_COMM_WORLD, rank == 0 ? 1 : 0, s0, deg0, dst0,
                           rank == 0 ? w0 : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
  OK(MPI_Dist_graph_neighbors_count(g, &in, &out, &isw));
  CHECK(in == 1 && out == (rank == size - 1 ? size : 0) && isw == 1);
  OK(MPI_Dist_graph_neighbors(g, 1, s, sw, 64, d, dw));
  CHECK(s[0] == size - 1 && sw[0] == 7 * rank);
  for (int i = 0; i < out; ++i) CHECK(d[i] == i && dw[i] == 7 * i);
  OK(MPI_Comm_free(&g));
}

static void errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int index[64], edges[256], q, a, b, w, nb[4];
  MPI_Comm out = MPI_COMM_NULL;
  ringGraph(size, index, edges);
  CHECK(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &out) == MPI_ERR_ARG);
  CHECK(MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &out) == MPI_ERR_ARG);
  CHECK(MPI_Graph_create(MPI_COMM_WORLD, size, NULL, edges, 0, &out) == MPI_ERR_ARG);
  int bad = edges[0];
  edges[0] = size;
  CHECK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &out) == MPI_ERR_RANK);
  edges[0] = bad;
  if (size > 1) {
    int dec[2] = {2, 1};
    CHECK(MPI_Graph_create(MPI_COMM_WORLD, 2, dec, edges, 0, &out) == MPI_ERR_ARG);
  }
  CHECK(out == MPI_COMM_NULL);
  CHECK(MPI_Graphdims_get(MPI_COMM_WORLD, &a, &b) == MPI_ERR_TOPOLOGY);
  CHECK(MPI_Graph_neighbors(MPI_COMM_WORLD, 0, 4, nb) == MPI_ERR_TOPOLOGY);
  CHECK(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &a, &b, &w) == MPI_ERR_TOPOLOGY);
  CHECK(MPI_Dist_graph_neighbors(MPI_COMM_WORLD, 0, nb, nb, 0, nb, nb) == MPI_ERR_TOPOLOGY);
  MPI_Comm g;
  OK(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g));
  CHECK(MPI_Graph_neighbors_count(g, size, &q) == MPI_ERR_RANK);
  CHECK(MPI_Graph_neighbors(g, -1, 4, nb) == MPI_ERR_RANK);
  CHECK(MPI_Cartdim_get(g, &q) == MPI_ERR_TOPOLOGY);
  CHECK(MPI_Dist_graph_neighbors_count(g, &a, &b, &w) == MPI_ERR_TOPOLOGY);
  OK(MPI_Comm_free(&g));
  /* Distributed graphs. */
  int src[1] = {size}, ok1[1] = {0}, neg[1] = {-1};
  CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 0, NULL,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &out) == MPI_ERR_RANK);
  CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, NULL, MPI_UNWEIGHTED, 0, NULL,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &out) == MPI_ERR_ARG);
  CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, ok1, neg, 0, NULL, MPI_WEIGHTS_EMPTY,
                                       MPI_INFO_NULL, 0, &out) == MPI_ERR_ARG);
  CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, ok1, MPI_WEIGHTS_EMPTY, 0, NULL,
                                       MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &out) == MPI_ERR_ARG);
  int deg[1] = {1}, dst[1] = {size}, deg_neg[1] = {-1};
  CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, ok1, deg, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                              &out) == MPI_ERR_RANK);
  CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, ok1, deg_neg, ok1, MPI_UNWEIGHTED,
                              MPI_INFO_NULL, 0, &out) == MPI_ERR_ARG);
  CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, -2, ok1, deg, ok1, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                              &out) == MPI_ERR_ARG);
  CHECK(out == MPI_COMM_NULL);
  /* Arrays too short for the neighbours. */
  int one[1] = {0};
  OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, one, MPI_UNWEIGHTED, 1, one,
                                    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
  int s2[2], d2[2];
  CHECK(MPI_Dist_graph_neighbors(g, 0, s2, MPI_UNWEIGHTED, 1, d2, MPI_UNWEIGHTED) == MPI_ERR_ARG);
  CHECK(MPI_Graphdims_get(g, &a, &b) == MPI_ERR_TOPOLOGY);
  OK(MPI_Comm_free(&g));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  prog = "topo_graph";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  wrank = rank;
  CHECK(size <= 64);
  graph(size);
  if (size > 2) graph(size - 1);
  graph(1);
  adjacentRing();
  generalGraph(1);
  generalGraph(0);
  errors();
  OK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_Finalize();
  passed();
  return 0;
}
