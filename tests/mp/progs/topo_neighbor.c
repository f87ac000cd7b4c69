/* Neighbourhood collectives: MPI_Neighbor_allgather(v) and
 * MPI_Neighbor_alltoall(v,w), blocking, nonblocking and persistent (started
 * three times, the send data changed between starts), on
 *   - Cartesian grids: 1D/2D/3D, periodic and not (MPI_PROC_NULL edges,
 *     whose receive blocks must stay untouched), extents 1 and 2 with
 *     wraparound (the same neighbour on both sides of a dimension);
 *   - a graph with a self loop and repeated edges;
 *   - distributed graphs: an adjacent ring, an irregular graph built with
 *     MPI_Dist_graph_create from edges other ranks named (repeated edges,
 *     self loops, uneven degrees).
 * Every receive buffer is checked whole against what the standard says it
 * holds. Plus: two nonblocking calls in flight at once, a user receive
 * posted with wildcards that must not catch collective messages, and wrong
 * arguments under MPI_ERRORS_RETURN. Any rank count up to 64. */
#include <stdlib.h>
#include <string.h>

#include "comm_checks.h"

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are the ABI's small sentinel
 * pointers, which GCC takes for arrays of size 0. */
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"

#define MAXD 128 /* neighbours per process */
#define K 3      /* elements per block (the fixed-count variants) */
#define SLOT 4   /* ints per block in the v/w layouts (counts are 1..3) */

static int wsize;

/* The value element k of the block process s sends to its j-th
 * out-neighbour carries in activation `it`. */
static int val(int s, int j, int k, int it) {
  return ((it * 64 + s) * MAXD + j) * 8 + k;
}
static int countAgv(int s) { return 1 + s % 3; }
static int countA2av(int s, int j) { return 1 + (s + j) % 3; }

/* What a process knows about its neighbourhood. */
typedef struct {
  MPI_Comm comm;
  int me, n, cart;
  int indeg, outdeg, in[MAXD], out[MAXD];
  int pair[MAXD]; /* recv block i holds in[i]'s send block pair[i] */
} Nbr;

static void describe(MPI_Comm comm, Nbr* nb) {
  int st;
  nb->comm = comm;
  MPI_Comm_rank(comm, &nb->me);
  MPI_Comm_size(comm, &nb->n);
  OK(MPI_Topo_test(comm, &st));
  nb->cart = st == MPI_CART;
  if (st == MPI_CART) {
    int nd;
    OK(MPI_Cartdim_get(comm, &nd));
    nb->indeg = nb->outdeg = 2 * nd;
    for (int d = 0; d < nd; ++d) {
      OK(MPI_Cart_shift(comm, d, 1, &nb->in[2 * d], &nb->in[2 * d + 1]));
      nb->out[2 * d] = nb->in[2 * d];
      nb->out[2 * d + 1] = nb->in[2 * d + 1];
    }
    /* The standard's pairing: what arrives from the -1 neighbour is what it
     * sent towards +1, and the other way round. */
    for (int i = 0; i < nb->indeg; ++i) nb->pair[i] = i ^ 1;
    return;
  }
  if (st == MPI_GRAPH) {
    OK(MPI_Graph_neighbors_count(comm, nb->me, &nb->indeg));
    CHECK(nb->indeg <= MAXD);
    OK(MPI_Graph_neighbors(comm, nb->me, MAXD, nb->in));
    nb->outdeg = nb->indeg;
    memcpy(nb->out, nb->in, sizeof nb->in);
  } else {
    int w;
    CHECK(st == MPI_DIST_GRAPH);
    OK(MPI_Dist_graph_neighbors_count(comm, &nb->indeg, &nb->outdeg, &w));
    CHECK(nb->indeg <= MAXD && nb->outdeg <= MAXD);
    OK(MPI_Dist_graph_neighbors(comm, MAXD, nb->in, MPI_UNWEIGHTED, MAXD, nb->out,
                                MPI_UNWEIGHTED));
  }
  /* Graphs: the m-th edge from s to me pairs with the m-th time s lists me
   * among its out-neighbours. Everyone's out-lists, to find it. */
  int* all = malloc(sizeof(int) * (MAXD + 1) * nb->n);
  int mine[MAXD + 1];
  mine[0] = nb->outdeg;
  memcpy(mine + 1, nb->out, sizeof(int) * MAXD);
  OK(MPI_Allgather(mine, MAXD + 1, MPI_INT, all, MAXD + 1, MPI_INT, comm));
  for (int i = 0; i < nb->indeg; ++i) {
    const int s = nb->in[i];
    int m = 0;
    for (int k = 0; k < i; ++k) m += nb->in[k] == s;
    const int* theirs = all + (MAXD + 1) * s;
    nb->pair[i] = -1;
    for (int j = 0, seen = 0; j < theirs[0]; ++j)
      if (theirs[1 + j] == nb->me && seen++ == m) {
        nb->pair[i] = j;
        break;
      }
    CHECK(nb->pair[i] >= 0);
  }
  free(all);
}

enum { AG, AGV, A2A, A2AV, A2AW, NKINDS };
static const char* kindName[] = {"allgather", "allgatherv", "alltoall", "alltoallv",
                                 "alltoallw"};

/* The buffers and layout of one call. */
typedef struct {
  int sbuf[MAXD * SLOT], rbuf[MAXD * SLOT], want[MAXD * SLOT];
  int scounts[MAXD], sdispls[MAXD], rcounts[MAXD], rdispls[MAXD];
  MPI_Aint sbytes[MAXD], rbytes[MAXD];
  MPI_Datatype stypes[MAXD], rtypes[MAXD];
} Bufs;

static MPI_Datatype pairType; /* two contiguous ints */

static void layout(int kind, const Nbr* nb, Bufs* b) {
  for (int j = 0; j < nb->outdeg; ++j) {
    b->scounts[j] = countA2av(nb->me, j);
    b->sdispls[j] = SLOT * (nb->outdeg - 1 - j) + (SLOT - b->scounts[j]); /* reversed, gaps */
    b->sbytes[j] = (MPI_Aint)sizeof(int) * b->sdispls[j];
    b->stypes[j] = MPI_INT;
    if (kind == A2AW && b->scounts[j] == 2) { /* one pair instead of two ints */
      b->stypes[j] = pairType;
      b->scounts[j] = 1;
    }
  }
  for (int i = 0; i < nb->indeg; ++i) {
    const int s = nb->in[i];
    if (kind == AGV) b->rcounts[i] = s == MPI_PROC_NULL ? 1 : countAgv(s);
    else b->rcounts[i] = s == MPI_PROC_NULL ? 1 : countA2av(s, nb->pair[i]);
    b->rdispls[i] = SLOT * (nb->indeg - 1 - i) + 1; /* reversed, with a gap */
    b->rbytes[i] = (MPI_Aint)sizeof(int) * b->rdispls[i];
    b->rtypes[i] = MPI_INT;
  }
}

/* Send data for activation `it`, receive buffer reset, expected result. */
static void prepare(int kind, const Nbr* nb, Bufs* b, int it) {
  for (int x = 0; x < MAXD * SLOT; ++x) b->sbuf[x] = b->rbuf[x] = b->want[x] = -1;
  if (kind == AG || kind == AGV) {
    const int c = kind == AG ? K : countAgv(nb->me);
    for (int k = 0; k < c; ++k) b->sbuf[k] = val(nb->me, 0, k, it);
  } else if (kind == A2A) {
    for (int j = 0; j < nb->outdeg; ++j)
      for (int k = 0; k < K; ++k) b->sbuf[j * K + k] = val(nb->me, j, k, it);
  } else {
    for (int j = 0; j < nb->outdeg; ++j)
      for (int k = 0; k < countA2av(nb->me, j); ++k)
        b->sbuf[b->sdispls[j] + k] = val(nb->me, j, k, it);
  }
  for (int i = 0; i < nb->indeg; ++i) {
    const int s = nb->in[i];
    if (s == MPI_PROC_NULL) continue; /* untouched */
    if (kind == AG)
      for (int k = 0; k < K; ++k) b->want[i * K + k] = val(s, 0, k, it);
    else if (kind == AGV)
      for (int k = 0; k < countAgv(s); ++k) b->want[b->rdispls[i] + k] = val(s, 0, k, it);
    else if (kind == A2A)
      for (int k = 0; k < K; ++k) b->want[i * K + k] = val(s, nb->pair[i], k, it);
    else
      for (int k = 0; k < countA2av(s, nb->pair[i]); ++k)
        b->want[b->rdispls[i] + k] = val(s, nb->pair[i], k, it);
  }
}

/* form 0: blocking, 1: nonblocking, 2: persistent init (request returned). */
static int call(int kind, int form, const Nbr* nb, Bufs* b, MPI_Request* req) {
  MPI_Comm c = nb->comm;
  const int scount = kind == AGV ? countAgv(nb->me) : K;
  switch (kind * 3 + form) {
    case AG * 3 + 0: return MPI_Neighbor_allgather(b->sbuf, K, MPI_INT, b->rbuf, K, MPI_INT, c);
    case AG * 3 + 1:
      return MPI_Ineighbor_allgather(b->sbuf, K, MPI_INT, b->rbuf, K, MPI_INT, c, req);
    case AG * 3 + 2:
      return MPI_Neighbor_allgather_init(b->sbuf, K, MPI_INT, b->rbuf, K, MPI_INT, c,
                                         MPI_INFO_NULL, req);
    case AGV * 3 + 0:
      return MPI_Neighbor_allgatherv(b->sbuf, scount, MPI_INT, b->rbuf, b->rcounts, b->rdispls,
                                     MPI_INT, c);
    case AGV * 3 + 1:
      return MPI_Ineighbor_allgatherv(b->sbuf, scount, MPI_INT, b->rbuf, b->rcounts, b->rdispls,
                                      MPI_INT, c, req);
    case AGV * 3 + 2:
      return MPI_Neighbor_allgatherv_init(b->sbuf, scount, MPI_INT, b->rbuf, b->rcounts,
                                          b->rdispls, MPI_INT, c, MPI_INFO_NULL, req);
    case A2A * 3 + 0: return MPI_Neighbor_alltoall(b->sbuf, K, MPI_INT, b->rbuf, K, MPI_INT, c);
    case A2A * 3 + 1:
      return MPI_Ineighbor_alltoall(b->sbuf, K, MPI_INT, b->rbuf, K, MPI_INT, c, req);
    case A2A * 3 + 2:
      return MPI_Neighbor_alltoall_init(b->sbuf, K, MPI_INT, b->rbuf, K, MPI_INT, c,
                                        MPI_INFO_NULL, req);
    case A2AV * 3 + 0:
      return MPI_Neighbor_alltoallv(b->sbuf, b->scounts, b->sdispls, MPI_INT, b->rbuf,
                                    b->rcounts, b->rdispls, MPI_INT, c);
    case A2AV * 3 + 1:
      return MPI_Ineighbor_alltoallv(b->sbuf, b->scounts, b->sdispls, MPI_INT, b->rbuf,
                                     b->rcounts, b->rdispls, MPI_INT, c, req);
    case A2AV * 3 + 2:
      return MPI_Neighbor_alltoallv_init(b->sbuf, b->scounts, b->sdispls, MPI_INT, b->rbuf,
                                         b->rcounts, b->rdispls, MPI_INT, c, MPI_INFO_NULL, req);
    case A2AW * 3 + 0:
      return MPI_Neighbor_alltoallw(b->sbuf, b->scounts, b->sbytes, b->stypes, b->rbuf,
                                    b->rcounts, b->rbytes, b->rtypes, c);
    case A2AW * 3 + 1:
      return MPI_Ineighbor_alltoallw(b->sbuf, b->scounts, b->sbytes, b->stypes, b->rbuf,
                                     b->rcounts, b->rbytes, b->rtypes, c, req);
    case A2AW * 3 + 2:
      return MPI_Neighbor_alltoallw_init(b->sbuf, b->scounts, b->sbytes, b->stypes, b->rbuf,
                                         b->rcounts, b->rbytes, b->rtypes, c, MPI_INFO_NULL, req);
  }
  return MPI_ERR_OTHER;
}

static void verify(int kind, int form, const Bufs* b, const char* topo) {
  for (int x = 0; x < MAXD * SLOT; ++x)
    if (b->rbuf[x] != b->want[x]) {
      fprintf(stderr, "%s: rank %d: %s %s form %d: rbuf[%d]=%d, want %d\n", prog, wrank, topo,
              kindName[kind], form, x, b->rbuf[x], b->want[x]);
      CHECK(0);
    }
  ++checks;
}

static Bufs bufs;

static void exercise(MPI_Comm comm, const char* topo) {
  Nbr nb;
  describe(comm, &nb);
  for (int kind = 0; kind < NKINDS; ++kind) {
    Bufs* b = &bufs;
    layout(kind, &nb, b);
    for (int form = 0; form < 2; ++form) {
      MPI_Request req;
      prepare(kind, &nb, b, form);
      OK(call(kind, form, &nb, b, &req));
      if (form == 1) OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
      verify(kind, form, b, topo);
    }
    MPI_Request req;
    OK(call(kind, 2, &nb, b, &req));
    for (int it = 0; it < 3; ++it) {
      prepare(kind, &nb, b, 2 + it); /* new data each time, same buffers */
      OK(MPI_Start(&req));
      if (it == 1) {
        int flag = 0;
        while (!flag)
          if (MPI_Test(&req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) CHECK(0);
      } else {
        OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
      }
      CHECK(req != MPI_REQUEST_NULL); /* persistent: inactive, not freed */
      verify(kind, 2, b, topo);
    }
    OK(MPI_Request_free(&req));
    CHECK(req == MPI_REQUEST_NULL);
  }

  /* Two persistent calls started together, twice, and a nonblocking one
   * overlapping them. */
  static Bufs b2, b3;
  layout(A2A, &nb, &bufs);
  layout(AG, &nb, &b2);
  layout(A2AV, &nb, &b3);
  MPI_Request reqs[3];
  OK(call(A2A, 2, &nb, &bufs, &reqs[0]));
  OK(call(AG, 2, &nb, &b2, &reqs[1]));
  for (int it = 0; it < 2; ++it) {
    prepare(A2A, &nb, &bufs, it);
    prepare(AG, &nb, &b2, it + 1);
    prepare(A2AV, &nb, &b3, it + 2);
    OK(MPI_Startall(2, reqs));
    OK(call(A2AV, 1, &nb, &b3, &reqs[2]));
    OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
    verify(A2A, 2, &bufs, topo);
    verify(AG, 2, &b2, topo);
    verify(A2AV, 1, &b3, topo);
  }
  OK(MPI_Request_free(&reqs[0]));
  OK(MPI_Request_free(&reqs[1]));

  /* A persistent request freed while active still completes its
   * activation (the next blocking call on the communicator progresses it),
   * and the data arrives. */
  layout(A2AV, &nb, &b3);
  prepare(A2AV, &nb, &b3, 6);
  OK(call(A2AV, 2, &nb, &b3, &reqs[0]));
  OK(MPI_Start(&reqs[0]));
  OK(MPI_Request_free(&reqs[0]));
  CHECK(reqs[0] == MPI_REQUEST_NULL);
  OK(MPI_Barrier(comm));
  layout(AG, &nb, &b2);
  prepare(AG, &nb, &b2, 6);
  OK(call(AG, 0, &nb, &b2, NULL));
  verify(AG, 0, &b2, topo);
  OK(MPI_Barrier(comm));
  verify(A2AV, 2, &b3, topo);

  /* A user receive with wildcards, posted first, must not see the
   * collective's messages. */
  MPI_Request user;
  int got = -1, token = 4242;
  OK(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &user));
  layout(A2A, &nb, &bufs);
  prepare(A2A, &nb, &bufs, 7);
  OK(call(A2A, 0, &nb, &bufs, NULL));
  verify(A2A, 0, &bufs, topo);
  int flag;
  OK(MPI_Test(&user, &flag, MPI_STATUS_IGNORE));
  CHECK(!flag);
  OK(MPI_Send(&token, 1, MPI_INT, nb.me, 1, comm));
  OK(MPI_Wait(&user, MPI_STATUS_IGNORE));
  CHECK(got == token);

  /* The nonblocking call keeps a freed duplicate alive until done. */
  MPI_Comm dup;
  OK(MPI_Comm_dup(comm, &dup));
  nb.comm = dup;
  prepare(A2A, &nb, &bufs, 5);
  MPI_Request r;
  OK(call(A2A, 1, &nb, &bufs, &r));
  OK(MPI_Comm_free(&dup));
  OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
  verify(A2A, 1, &bufs, topo);
}

static void cart(int ndims, const int* dims, const int* periods, const char* name) {
  MPI_Comm c;
  OK(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &c));
  if (c == MPI_COMM_NULL) return;
  exercise(c, name);
  OK(MPI_Comm_free(&c));
}

/* Symmetric multigraph: a ring, a self loop at 0, and 0 -- p-1 doubled. */
static void graph(void) {
  int index[64], edges[256], e = 0, p = wsize;
  for (int i = 0; i < p; ++i) {
    edges[e++] = (i + p - 1) % p;
    edges[e++] = (i + 1) % p;
    if (i == 0) edges[e++] = 0, edges[e++] = p - 1;
    if (i == p - 1) edges[e++] = 0;
    index[i] = e;
  }
  MPI_Comm g;
  OK(MPI_Graph_create(MPI_COMM_WORLD, p, index, edges, 0, &g));
  exercise(g, "graph");
  OK(MPI_Comm_free(&g));
}

static void distGraphs(int rank) {
  const int p = wsize;
  int left = (rank + p - 1) % p, right = (rank + 1) % p, right2 = (rank + 2) % p;
  /* In from the left, out to the right and two to the right. */
  int src[2] = {left, (rank + p - 2) % p}, dst[2] = {right, right2};
  MPI_Comm g;
  OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst,
                                    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
  exercise(g, "dist ring");
  OK(MPI_Comm_free(&g));
  /* Irregular: edge k (of 3p+2) names a -> b; rank k % p names it. */
  int srcs[64], degs[64], dsts[64], n = 0;
  for (int k = rank; k < 3 * p + 2; k += p) {
    int a, b;
    if (k < p) a = k, b = (k + 1) % p;
    else if (k < 2 * p) a = k - p, b = (k - p) * 2 % p;
    else if (k < 3 * p) a = p - 1, b = k - 2 * p;
    else a = 0, b = p - 1;
    srcs[n] = a, degs[n] = 1, dsts[n] = b, ++n;
  }
  OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                           &g));
  exercise(g, "dist irregular");
  OK(MPI_Comm_free(&g));
  /* Nobody talks to anybody. */
  OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL,
                                    MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g));
  exercise(g, "dist empty");
  OK(MPI_Comm_free(&g));
}

static void errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int s[4] = {0}, r[4] = {0}, counts[4] = {1, 1, 1, 1}, displs[4] = {0};
  MPI_Request req;
  CHECK(MPI_Neighbor_allgather(s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_WORLD) == MPI_ERR_TOPOLOGY);
  CHECK(MPI_Ineighbor_alltoall(s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_WORLD, &req) ==
        MPI_ERR_TOPOLOGY);
  CHECK(MPI_Neighbor_alltoallv_init(s, counts, displs, MPI_INT, r, counts, displs, MPI_INT,
                                    MPI_COMM_WORLD, MPI_INFO_NULL, &req) == MPI_ERR_TOPOLOGY);
  CHECK(MPI_Neighbor_allgather(s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_NULL) == MPI_ERR_COMM);
  int dims[1] = {wsize}, periods[1] = {1};
  MPI_Comm c;
  OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c));
  CHECK(MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, r, 1, MPI_INT, c) == MPI_ERR_BUFFER);
  CHECK(MPI_Neighbor_alltoall(s, -1, MPI_INT, r, 1, MPI_INT, c) == MPI_ERR_COUNT);
  CHECK(MPI_Neighbor_alltoall(s, 1, MPI_DATATYPE_NULL, r, 1, MPI_INT, c) == MPI_ERR_TYPE);
  CHECK(MPI_Neighbor_alltoall(s, 1, MPI_INT, NULL, 1, MPI_INT, c) == MPI_ERR_BUFFER);
  CHECK(MPI_Ineighbor_allgather(s, 1, MPI_INT, r, 1, MPI_INT, c, NULL) == MPI_ERR_ARG);
  CHECK(MPI_Neighbor_allgather_init(s, 1, MPI_INT, r, 1, MPI_INT, c, MPI_INFO_NULL, NULL) ==
        MPI_ERR_ARG);
  CHECK(MPI_Neighbor_allgatherv(s, 1, MPI_INT, r, NULL, displs, MPI_INT, c) == MPI_ERR_ARG);
  CHECK(MPI_Neighbor_alltoallw(s, counts, NULL, NULL, r, counts, NULL, NULL, c) == MPI_ERR_ARG);
  /* Nothing was started: a matched call still works. */
  int one = 1, got[2] = {0, 0};
  OK(MPI_Neighbor_allgather(&one, 1, MPI_INT, got, 1, MPI_INT, c));
  CHECK(got[0] == 1 && got[1] == 1);
  OK(MPI_Comm_free(&c));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  prog = "topo_neighbor";
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  wrank = rank;
  CHECK(wsize <= 64);
  MPI_Type_contiguous(2, MPI_INT, &pairType);
  MPI_Type_commit(&pairType);

  int p1[3] = {1, 1, 1}, p0[3] = {0, 0, 0}, pm[3] = {1, 0, 1};
  int d1[1] = {wsize};
  cart(1, d1, p1, "cart 1D periodic");
  cart(1, d1, p0, "cart 1D open");
  int d2[2] = {0, 0};
  OK(MPI_Dims_create(wsize, 2, d2));
  cart(2, d2, p1, "cart 2D periodic");
  cart(2, d2, pm, "cart 2D mixed");
  int d3[3] = {0, 0, 0};
  OK(MPI_Dims_create(wsize, 3, d3));
  cart(3, d3, p1, "cart 3D periodic");
  cart(3, d3, pm, "cart 3D mixed");
  int dx[2] = {wsize, 1}; /* extent 1 with wraparound: I am my own neighbour */
  cart(2, dx, p1, "cart extent 1");
  if (wsize >= 2) { /* extent 2 with wraparound: one neighbour on both sides */
    int dd[2] = {2, wsize / 2};
    cart(2, dd, p1, "cart extent 2");
  }
  graph();
  distGraphs(rank);
  errors();
  MPI_Type_free(&pairType);
  OK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_Finalize();
  passed();
  return 0;
}
