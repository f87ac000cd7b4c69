/* The rest of the MPI 4.0 large-count (_c) functions, each against its int
 * twin at small counts:
 *  - the 16 persistent collectives (MPI_*_init_c): an int request and a _c
 *    request built on the same arguments, started three times with new
 *    data each time, must agree with the blocking int call;
 *  - the 15 neighbourhood collectives (MPI_Neighbor_*_c, MPI_Ineighbor_*_c,
 *    MPI_Neighbor_*_init_c) on a periodic ring, a non-periodic 2-D grid and
 *    a distributed graph, against MPI_Neighbor_*;
 *  - MPI_Isendrecv(_replace)_c and MPI_Psend/Precv_init_c on a ring;
 *  - MPI_Comm/Session_attach/detach_buffer_c (and the int detach of a
 *    buffer whose size does not fit an int);
 *  - MPI_Pack_external(_size)_c, MPI_Unpack_external_c,
 *    MPI_Type_create_darray_c, MPI_Status_set_elements_c;
 * plus wrong arguments (error classes under MPI_ERRORS_RETURN), including
 * counts an int cannot hold. The v and w forms use uneven counts and
 * displacements with gaps, so an array read with the wrong element width
 * shows. */
#include <limits.h>
#include <string.h>

#include "comm_checks.h"

/* MPI_UNWEIGHTED is a small sentinel pointer, which GCC takes for an
 * array of size 0. */
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"

static int size, rank, next, prev;
static MPI_Comm W;

enum { M = 3, CAP = 2048, FORMS = 4 };
static const MPI_Count kHuge = -((MPI_Count)1 << 40); /* negative, not an int */

static int dval(int r, int round, int j) { return r * 1000 + round * 100 + j + 1; }
static int cnt(int i) { return i < 0 ? 1 : i % 3 + 1; }
static int cnt2(int a, int b) { return a < 0 || b < 0 ? 1 : (a + b) % 3 + 1; }
static int slot(int i) { return i * (M + 1) + 1; } /* block i's displacement */

static int S[FORMS][CAP], R[FORMS][CAP];
/* int and _c views of the same counts/displacements. */
static int ia[64], ib[64], ic[64], id[64];
static MPI_Count ca[64], cc[64];
static MPI_Aint ab[64], ad[64];
static MPI_Datatype types[64];

static void expect(int rc, int want, int line) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  if (cls != want)
    fprintf(stderr, "bigcount_more: rank %d: line %d: class %d, want %d\n", rank, line, cls, want);
  CHECK(rc != MPI_SUCCESS && cls == want);
}
#define EXPECT(call, cls) expect((call), (cls), __LINE__)

static void fill(int round) {
  for (int f = 0; f < FORMS; ++f)
    for (int i = 0; i < CAP; ++i) {
      S[f][i] = dval(rank, round, i);
      R[f][i] = -1;
    }
}

static void same(const char* what, int f, int round) {
  for (int i = 0; i < CAP; ++i)
    if (S[f][i] != S[0][i] || R[f][i] != R[0][i]) {
      fprintf(stderr, "bigcount_more: rank %d: %s form %d round %d: element %d differs\n", rank,
              what, f, round, i);
      CHECK(0);
    }
  ++checks;
}

/* ---- Persistent collectives ---------------------------------------------
 * Form 0 runs the blocking int call; form 1 builds the int MPI_*_init
 * request, form 2 the _c one. */

#define FORM3(blocking, init, initc) \
  switch (f) {                       \
    case 0: OK(blocking); break;     \
    case 1: OK(init); break;         \
    default: OK(initc); break;       \
  }
#define I MPI_INFO_NULL

static void vArrays(void) {
  for (int i = 0; i < size; ++i) {
    ia[i] = cnt(i);
    ib[i] = slot(i);
    ca[i] = ia[i];
    ab[i] = ib[i];
    ic[i] = cnt2(rank, i); /* alltoallv: symmetric counts */
    cc[i] = ic[i];
    id[i] = slot(i) * (int)sizeof(int); /* alltoallw: bytes */
    ad[i] = id[i];
    types[i] = MPI_INT;
  }
}

static void p_bcast(int f, MPI_Request* r) {
  const int root = size - 1;
  FORM3(MPI_Bcast(S[f], 5, MPI_INT, root, W), MPI_Bcast_init(S[f], 5, MPI_INT, root, W, I, r),
        MPI_Bcast_init_c(S[f], 5, MPI_INT, root, W, I, r))
}
static void p_gather(int f, MPI_Request* r) {
  FORM3(MPI_Gather(S[f], 2, MPI_INT, R[f], 2, MPI_INT, 0, W),
        MPI_Gather_init(S[f], 2, MPI_INT, R[f], 2, MPI_INT, 0, W, I, r),
        MPI_Gather_init_c(S[f], 2, MPI_INT, R[f], 2, MPI_INT, 0, W, I, r))
}
static void p_gatherv(int f, MPI_Request* r) {
  const int root = size / 2;
  FORM3(MPI_Gatherv(S[f], cnt(rank), MPI_INT, R[f], ia, ib, MPI_INT, root, W),
        MPI_Gatherv_init(S[f], cnt(rank), MPI_INT, R[f], ia, ib, MPI_INT, root, W, I, r),
        MPI_Gatherv_init_c(S[f], cnt(rank), MPI_INT, R[f], ca, ab, MPI_INT, root, W, I, r))
}
static void p_scatter(int f, MPI_Request* r) {
  FORM3(MPI_Scatter(S[f], 2, MPI_INT, R[f], 2, MPI_INT, 0, W),
        MPI_Scatter_init(S[f], 2, MPI_INT, R[f], 2, MPI_INT, 0, W, I, r),
        MPI_Scatter_init_c(S[f], 2, MPI_INT, R[f], 2, MPI_INT, 0, W, I, r))
}
static void p_scatterv(int f, MPI_Request* r) {
  const int root = size - 1;
  FORM3(MPI_Scatterv(S[f], ia, ib, MPI_INT, R[f], cnt(rank), MPI_INT, root, W),
        MPI_Scatterv_init(S[f], ia, ib, MPI_INT, R[f], cnt(rank), MPI_INT, root, W, I, r),
        MPI_Scatterv_init_c(S[f], ca, ab, MPI_INT, R[f], cnt(rank), MPI_INT, root, W, I, r))
}
static void p_allgather(int f, MPI_Request* r) {
  FORM3(MPI_Allgather(S[f], 2, MPI_INT, R[f], 2, MPI_INT, W),
        MPI_Allgather_init(S[f], 2, MPI_INT, R[f], 2, MPI_INT, W, I, r),
        MPI_Allgather_init_c(S[f], 2, MPI_INT, R[f], 2, MPI_INT, W, I, r))
}
static void p_allgatherv(int f, MPI_Request* r) {
  FORM3(MPI_Allgatherv(S[f], cnt(rank), MPI_INT, R[f], ia, ib, MPI_INT, W),
        MPI_Allgatherv_init(S[f], cnt(rank), MPI_INT, R[f], ia, ib, MPI_INT, W, I, r),
        MPI_Allgatherv_init_c(S[f], cnt(rank), MPI_INT, R[f], ca, ab, MPI_INT, W, I, r))
}
static void p_alltoall(int f, MPI_Request* r) {
  FORM3(MPI_Alltoall(S[f], 2, MPI_INT, R[f], 2, MPI_INT, W),
        MPI_Alltoall_init(S[f], 2, MPI_INT, R[f], 2, MPI_INT, W, I, r),
        MPI_Alltoall_init_c(S[f], 2, MPI_INT, R[f], 2, MPI_INT, W, I, r))
}
static void p_alltoallv(int f, MPI_Request* r) {
  FORM3(MPI_Alltoallv(S[f], ic, ib, MPI_INT, R[f], ic, ib, MPI_INT, W),
        MPI_Alltoallv_init(S[f], ic, ib, MPI_INT, R[f], ic, ib, MPI_INT, W, I, r),
        MPI_Alltoallv_init_c(S[f], cc, ab, MPI_INT, R[f], cc, ab, MPI_INT, W, I, r))
}
static void p_alltoallw(int f, MPI_Request* r) {
  FORM3(MPI_Alltoallw(S[f], ic, id, types, R[f], ic, id, types, W),
        MPI_Alltoallw_init(S[f], ic, id, types, R[f], ic, id, types, W, I, r),
        MPI_Alltoallw_init_c(S[f], cc, ad, types, R[f], cc, ad, types, W, I, r))
}
static void p_reduce(int f, MPI_Request* r) {
  const int root = size - 1;
  FORM3(MPI_Reduce(S[f], R[f], 4, MPI_INT, MPI_SUM, root, W),
        MPI_Reduce_init(S[f], R[f], 4, MPI_INT, MPI_SUM, root, W, I, r),
        MPI_Reduce_init_c(S[f], R[f], 4, MPI_INT, MPI_SUM, root, W, I, r))
}
static void p_allreduce(int f, MPI_Request* r) {
  FORM3(MPI_Allreduce(S[f], R[f], 4, MPI_INT, MPI_SUM, W),
        MPI_Allreduce_init(S[f], R[f], 4, MPI_INT, MPI_SUM, W, I, r),
        MPI_Allreduce_init_c(S[f], R[f], 4, MPI_INT, MPI_SUM, W, I, r))
}
static void p_scan(int f, MPI_Request* r) {
  FORM3(MPI_Scan(S[f], R[f], 4, MPI_INT, MPI_MAX, W),
        MPI_Scan_init(S[f], R[f], 4, MPI_INT, MPI_MAX, W, I, r),
        MPI_Scan_init_c(S[f], R[f], 4, MPI_INT, MPI_MAX, W, I, r))
}
static void p_exscan(int f, MPI_Request* r) {
  FORM3(MPI_Exscan(S[f], R[f], 4, MPI_INT, MPI_SUM, W),
        MPI_Exscan_init(S[f], R[f], 4, MPI_INT, MPI_SUM, W, I, r),
        MPI_Exscan_init_c(S[f], R[f], 4, MPI_INT, MPI_SUM, W, I, r))
}
static void p_rsblock(int f, MPI_Request* r) {
  FORM3(MPI_Reduce_scatter_block(S[f], R[f], 2, MPI_INT, MPI_SUM, W),
        MPI_Reduce_scatter_block_init(S[f], R[f], 2, MPI_INT, MPI_SUM, W, I, r),
        MPI_Reduce_scatter_block_init_c(S[f], R[f], 2, MPI_INT, MPI_SUM, W, I, r))
}
static void p_rs(int f, MPI_Request* r) {
  FORM3(MPI_Reduce_scatter(S[f], R[f], ia, MPI_INT, MPI_SUM, W),
        MPI_Reduce_scatter_init(S[f], R[f], ia, MPI_INT, MPI_SUM, W, I, r),
        MPI_Reduce_scatter_init_c(S[f], R[f], ca, MPI_INT, MPI_SUM, W, I, r))
}

typedef void (*PColl)(int f, MPI_Request* r);

static void persistent(const char* name, PColl call) {
  MPI_Request req[3];
  for (int round = 0; round < 3; ++round) {
    fill(round);
    if (round == 0) {
      call(1, &req[1]);
      call(2, &req[2]);
    }
    call(0, NULL);
    if (round == 1) {
      OK(MPI_Start(&req[2]));
      OK(MPI_Start(&req[1]));
    } else {
      OK(MPI_Startall(2, &req[1]));
    }
    OK(MPI_Waitall(2, &req[1], MPI_STATUSES_IGNORE));
    if (call == p_exscan && rank == 0) /* rank 0's result is undefined */
      for (int f = 1; f < 3; ++f) memcpy(R[f], R[0], sizeof R[0]);
    same(name, 1, round);
    same(name, 2, round);
    /* The reference itself is right (a few spot checks). */
    if (call == p_bcast)
      for (int j = 0; j < 5; ++j) CHECK(S[0][j] == dval(size - 1, round, j));
    if (call == p_allreduce)
      for (int j = 0; j < 4; ++j) {
        int sum = 0;
        for (int q = 0; q < size; ++q) sum += dval(q, round, j);
        CHECK(R[0][j] == sum);
      }
    if (call == p_gather && rank == 0)
      for (int q = 0; q < size; ++q) CHECK(R[0][2 * q + 1] == dval(q, round, 1));
  }
  for (int f = 1; f < 3; ++f) {
    OK(MPI_Request_free(&req[f]));
    CHECK(req[f] == MPI_REQUEST_NULL);
  }
}

static void persistentErrors(void) {
  MPI_Request r;
  EXPECT(MPI_Bcast_init_c(S[0], -1, MPI_INT, 0, W, I, &r), MPI_ERR_COUNT);
  EXPECT(MPI_Bcast_init_c(S[0], kHuge, MPI_INT, 0, W, I, &r), MPI_ERR_COUNT);
  EXPECT(MPI_Gather_init_c(S[0], 1, MPI_INT, R[0], 1, MPI_INT, size, W, I, &r), MPI_ERR_ROOT);
  EXPECT(MPI_Allreduce_init_c(S[0], R[0], 4, MPI_INT, MPI_SUM, W, I, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Allreduce_init_c(S[0], R[0], 4, MPI_DATATYPE_NULL, MPI_SUM, W, I, &r),
         MPI_ERR_TYPE);
  EXPECT(MPI_Alltoallv_init_c(S[0], NULL, ab, MPI_INT, R[0], cc, ab, MPI_INT, W, I, &r),
         MPI_ERR_ARG);
  EXPECT(MPI_Reduce_scatter_block_init_c(S[0], R[0], kHuge, MPI_INT, MPI_SUM, W, I, &r),
         MPI_ERR_COUNT);
  EXPECT(MPI_Scan_init_c(S[0], R[0], 1, MPI_INT, MPI_SUM, MPI_COMM_NULL, I, &r), MPI_ERR_COMM);
}

/* ---- Neighbourhood collectives -------------------------------------------
 * Form 0: MPI_Neighbor_* (int, the reference); 1: MPI_Neighbor_*_c;
 * 2: MPI_Ineighbor_*_c; 3: MPI_Neighbor_*_init_c. */

static int nin, nout, inN[16], outN[16];
static int nia[16], nib[16], nic[16], nid[16], nsd[16];
static MPI_Count nca[16], ncr[16], ncc[16];
static MPI_Aint nab[16], nad[16], nbb[16], nbd[16];
static MPI_Datatype ntypes[16];

static void neighbours(MPI_Comm c) {
  int kind;
  OK(MPI_Topo_test(c, &kind));
  if (kind == MPI_CART) {
    int nd;
    OK(MPI_Cartdim_get(c, &nd));
    for (int d = 0; d < nd; ++d) {
      int lo, hi;
      OK(MPI_Cart_shift(c, d, 1, &lo, &hi));
      inN[2 * d] = outN[2 * d] = lo;
      inN[2 * d + 1] = outN[2 * d + 1] = hi;
    }
    nin = nout = 2 * nd;
  } else {
    int w;
    OK(MPI_Dist_graph_neighbors_count(c, &nin, &nout, &w));
    OK(MPI_Dist_graph_neighbors(c, nin, inN, MPI_UNWEIGHTED, nout, outN, MPI_UNWEIGHTED));
  }
  /* Receive block i: from inN[i]; send block j: to outN[j]. A count is a
   * function of (sender, receiver), so both ends agree. */
  for (int i = 0; i < nin; ++i) {
    nia[i] = cnt(inN[i]);            /* allgatherv */
    nic[i] = cnt2(inN[i], rank);     /* alltoallv/w receive */
    nib[i] = slot(i);
    nca[i] = nia[i];
    ncr[i] = nic[i];
    nab[i] = nib[i];
    nbb[i] = (MPI_Aint)nib[i] * (MPI_Aint)sizeof(int);
    ntypes[i] = MPI_INT;
  }
  for (int j = 0; j < nout; ++j) {
    nid[j] = cnt2(rank, outN[j]); /* alltoallv/w send */
    ncc[j] = nid[j];
    nsd[j] = slot(j);
    nad[j] = slot(j);
    nbd[j] = (MPI_Aint)slot(j) * (MPI_Aint)sizeof(int);
  }
}

#define FORM4(base, ...)                                           \
  switch (f) {                                                     \
    case 0: OK(MPI_Neighbor_##base(__VA_ARGS__)); break;           \
    case 1: OK(MPI_Neighbor_##base##_c(__VA_ARGS__)); break;       \
    case 2: OK(MPI_Ineighbor_##base##_c(__VA_ARGS__, r)); break;   \
    default: OK(MPI_Neighbor_##base##_init_c(__VA_ARGS__, I, r));  \
  }

typedef void (*NColl)(MPI_Comm c, int f, MPI_Request* r);

static void n_allgather(MPI_Comm c, int f, MPI_Request* r) {
  FORM4(allgather, S[f], 2, MPI_INT, R[f], 2, MPI_INT, c)
}
static void n_alltoall(MPI_Comm c, int f, MPI_Request* r) {
  FORM4(alltoall, S[f], 2, MPI_INT, R[f], 2, MPI_INT, c)
}
/* The int and the _c forms take different array types: one call each. */
static void n_allgatherv(MPI_Comm c, int f, MPI_Request* r) {
  switch (f) {
    case 0: OK(MPI_Neighbor_allgatherv(S[f], cnt(rank), MPI_INT, R[f], nia, nib, MPI_INT, c)); break;
    case 1: OK(MPI_Neighbor_allgatherv_c(S[f], cnt(rank), MPI_INT, R[f], nca, nab, MPI_INT, c)); break;
    case 2:
      OK(MPI_Ineighbor_allgatherv_c(S[f], cnt(rank), MPI_INT, R[f], nca, nab, MPI_INT, c, r));
      break;
    default:
      OK(MPI_Neighbor_allgatherv_init_c(S[f], cnt(rank), MPI_INT, R[f], nca, nab, MPI_INT, c, I,
                                        r));
  }
}
static void n_alltoallv(MPI_Comm c, int f, MPI_Request* r) {
  switch (f) {
    case 0: OK(MPI_Neighbor_alltoallv(S[f], nid, nsd, MPI_INT, R[f], nic, nib, MPI_INT, c)); break;
    case 1: OK(MPI_Neighbor_alltoallv_c(S[f], ncc, nad, MPI_INT, R[f], ncr, nab, MPI_INT, c)); break;
    case 2:
      OK(MPI_Ineighbor_alltoallv_c(S[f], ncc, nad, MPI_INT, R[f], ncr, nab, MPI_INT, c, r));
      break;
    default:
      OK(MPI_Neighbor_alltoallv_init_c(S[f], ncc, nad, MPI_INT, R[f], ncr, nab, MPI_INT, c, I, r));
  }
}
static void n_alltoallw(MPI_Comm c, int f, MPI_Request* r) {
  switch (f) {
    case 0:
      OK(MPI_Neighbor_alltoallw(S[f], nid, nbd, ntypes, R[f], nic, nbb, ntypes, c));
      break;
    case 1:
      OK(MPI_Neighbor_alltoallw_c(S[f], ncc, nbd, ntypes, R[f], ncr, nbb, ntypes, c));
      break;
    case 2:
      OK(MPI_Ineighbor_alltoallw_c(S[f], ncc, nbd, ntypes, R[f], ncr, nbb, ntypes, c, r));
      break;
    default:
      OK(MPI_Neighbor_alltoallw_init_c(S[f], ncc, nbd, ntypes, R[f], ncr, nbb, ntypes, c, I, r));
  }
}

static void neighbor(const char* name, MPI_Comm c, NColl call, int isRing) {
  MPI_Request pr, ir;
  for (int round = 0; round < 3; ++round) {
    fill(round);
    if (round == 0) call(c, 3, &pr);
    call(c, 0, NULL);
    call(c, 1, NULL);
    call(c, 2, &ir);
    OK(MPI_Start(&pr));
    OK(MPI_Wait(&ir, MPI_STATUS_IGNORE));
    OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    for (int f = 1; f < FORMS; ++f) same(name, f, round);
    if (isRing && call == n_allgather) {
      CHECK(R[0][0] == dval(prev, round, 0) && R[0][1] == dval(prev, round, 1));
      CHECK(R[0][2] == dval(next, round, 0) && R[0][3] == dval(next, round, 1));
    }
  }
  OK(MPI_Request_free(&pr));
}

static void neighborAll(MPI_Comm c, int isRing) {
  OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
  neighbours(c);
  neighbor("neighbor_allgather", c, n_allgather, isRing);
  neighbor("neighbor_allgatherv", c, n_allgatherv, isRing);
  neighbor("neighbor_alltoall", c, n_alltoall, isRing);
  neighbor("neighbor_alltoallv", c, n_alltoallv, isRing);
  neighbor("neighbor_alltoallw", c, n_alltoallw, isRing);
  /* Wrong arguments, on every rank alike. */
  MPI_Request r;
  EXPECT(MPI_Neighbor_allgather_c(S[0], -1, MPI_INT, R[0], 1, MPI_INT, c), MPI_ERR_COUNT);
  EXPECT(MPI_Neighbor_alltoall_c(S[0], 1, MPI_INT, R[0], kHuge, MPI_INT, c), MPI_ERR_COUNT);
  EXPECT(MPI_Ineighbor_alltoall_c(S[0], 1, MPI_INT, R[0], 1, MPI_INT, c, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Neighbor_allgather_init_c(S[0], 1, MPI_DATATYPE_NULL, R[0], 1, MPI_INT, c, I, &r),
         MPI_ERR_TYPE);
  if (nout > 0)
    EXPECT(MPI_Neighbor_alltoallv_init_c(S[0], NULL, nad, MPI_INT, R[0], nca, nab, MPI_INT, c, I,
                                         &r),
           MPI_ERR_ARG);
  MPI_Count bad[16];
  for (int i = 0; i < 16; ++i) bad[i] = kHuge;
  if (nin > 0)
    EXPECT(MPI_Ineighbor_alltoallw_c(S[0], ncc, nbd, ntypes, R[0], bad, nbb, ntypes, c, &r),
           MPI_ERR_COUNT);
}

static void neighborTests(void) {
  MPI_Comm ring, grid, graph;
  int dims1[1] = {size}, per1[1] = {1};
  OK(MPI_Cart_create(W, 1, dims1, per1, 0, &ring));
  neighborAll(ring, 1);
  int dims2[2] = {0, 0}, per2[2] = {0, 1};
  OK(MPI_Dims_create(size, 2, dims2));
  OK(MPI_Cart_create(W, 2, dims2, per2, 0, &grid));
  neighborAll(grid, 0);
  int src[2] = {(rank + size - 1) % size, (rank + 2) % size};
  int dst[2] = {(rank + 1) % size, (rank + 2 * size - 2) % size};
  OK(MPI_Dist_graph_create_adjacent(W, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED, I, 0,
                                    &graph));
  neighborAll(graph, 0);
  /* No topology. */
  EXPECT(MPI_Neighbor_allgather_c(S[0], 1, MPI_INT, R[0], 1, MPI_INT, W), MPI_ERR_TOPOLOGY);
  OK(MPI_Comm_free(&ring));
  OK(MPI_Comm_free(&grid));
  OK(MPI_Comm_free(&graph));
}

/* ---- Point to point: MPI_Isendrecv(_replace)_c, partitioned ------------- */

static void isendrecvTests(void) {
  int s[8], r1[8], r2[8], b1[8], b2[8];
  for (int i = 0; i < 8; ++i) {
    s[i] = b1[i] = b2[i] = dval(rank, 0, i);
    r1[i] = r2[i] = -1;
  }
  MPI_Request q;
  MPI_Status st;
  int n;
  MPI_Count nc;
  OK(MPI_Isendrecv(s, 5, MPI_INT, next, 7, r1, 8, MPI_INT, prev, 7, W, &q));
  OK(MPI_Wait(&q, &st));
  OK(MPI_Get_count(&st, MPI_INT, &n));
  CHECK(n == 5 && st.MPI_SOURCE == prev && st.MPI_TAG == 7);
  OK(MPI_Isendrecv_c(s, 5, MPI_INT, next, 8, r2, 8, MPI_INT, prev, MPI_ANY_TAG, W, &q));
  OK(MPI_Wait(&q, &st));
  OK(MPI_Get_count_c(&st, MPI_INT, &nc));
  CHECK(nc == 5 && st.MPI_SOURCE == prev && st.MPI_TAG == 8);
  CHECK(memcmp(r1, r2, sizeof r1) == 0 && r2[4] == dval(prev, 0, 4) && r2[5] == -1);
  OK(MPI_Isendrecv_replace(b1, 6, MPI_INT, next, 9, prev, 9, W, &q));
  OK(MPI_Wait(&q, &st));
  OK(MPI_Isendrecv_replace_c(b2, 6, MPI_INT, next, 9, MPI_ANY_SOURCE, 9, W, &q));
  OK(MPI_Wait(&q, &st));
  OK(MPI_Get_count_c(&st, MPI_INT, &nc));
  CHECK(nc == 6 && st.MPI_SOURCE == prev);
  CHECK(memcmp(b1, b2, sizeof b1) == 0 && b2[5] == dval(prev, 0, 5) && b2[6] == dval(rank, 0, 6));
  /* MPI_PROC_NULL both ways: complete at once, empty status. */
  OK(MPI_Isendrecv_c(s, 5, MPI_INT, MPI_PROC_NULL, 1, r2, 8, MPI_INT, MPI_PROC_NULL, 1, W, &q));
  OK(MPI_Wait(&q, &st));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
  EXPECT(MPI_Isendrecv_c(s, -1, MPI_INT, next, 1, r2, 8, MPI_INT, prev, 1, W, &q), MPI_ERR_COUNT);
  EXPECT(MPI_Isendrecv_c(s, 1, MPI_INT, next, 1, r2, kHuge, MPI_INT, prev, 1, W, &q),
         MPI_ERR_COUNT);
  EXPECT(MPI_Isendrecv_c(s, 1, MPI_INT, next, 1, r2, 1, MPI_INT, prev, 1, W, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Isendrecv_replace_c(b2, kHuge, MPI_INT, next, 1, prev, 1, W, &q), MPI_ERR_COUNT);
  EXPECT(MPI_Isendrecv_replace_c(b2, 1, MPI_INT, size, 1, prev, 1, W, &q), MPI_ERR_RANK);
}

/* One partitioned round trip around the ring per round; `sc`/`rc` pick the
 * _c form for the send and the receive side. */
static void partitioned(int sc, int rc, int tag) {
  enum { P = 3, C = 2 };
  int s[P * C], r[P * C];
  MPI_Request q[2];
  if (sc)
    OK(MPI_Psend_init_c(s, P, (MPI_Count)C, MPI_INT, next, tag, W, I, &q[0]));
  else
    OK(MPI_Psend_init(s, P, C, MPI_INT, next, tag, W, I, &q[0]));
  if (rc)
    OK(MPI_Precv_init_c(r, P, (MPI_Count)C, MPI_INT, prev, tag, W, I, &q[1]));
  else
    OK(MPI_Precv_init(r, P, C, MPI_INT, prev, tag, W, I, &q[1]));
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < P * C; ++i) {
      s[i] = dval(rank, round, i);
      r[i] = -1;
    }
    OK(MPI_Startall(2, q));
    for (int p = P - 1; p >= 0; --p) OK(MPI_Pready(p, q[0]));
    OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    for (int i = 0; i < P * C; ++i) CHECK(r[i] == dval(prev, round, i));
  }
  OK(MPI_Request_free(&q[0]));
  OK(MPI_Request_free(&q[1]));
}

static void partitionedTests(void) {
  partitioned(0, 0, 10);
  partitioned(1, 1, 11);
  partitioned(1, 0, 12);
  partitioned(0, 1, 13);
  MPI_Request q;
  int s[4];
  EXPECT(MPI_Psend_init_c(s, 2, -1, MPI_INT, next, 1, W, I, &q), MPI_ERR_COUNT);
  EXPECT(MPI_Precv_init_c(s, 2, kHuge, MPI_INT, prev, 1, W, I, &q), MPI_ERR_COUNT);
  /* partitions * count past MPI_Count. */
  EXPECT(MPI_Psend_init_c(s, 4, (MPI_Count)1 << 62, MPI_INT, next, 1, W, I, &q), MPI_ERR_COUNT);
  EXPECT(MPI_Precv_init_c(s, -1, 1, MPI_INT, prev, 1, W, I, &q), MPI_ERR_ARG);
  EXPECT(MPI_Psend_init_c(s, 2, 1, MPI_INT, next, 1, W, I, NULL), MPI_ERR_ARG);
}

/* ---- Buffers --------------------------------------------------------------- */

static void bsendRing(MPI_Comm c, int tag) {
  int x = dval(rank, 0, tag), y = -1;
  OK(MPI_Bsend(&x, 1, MPI_INT, next, tag, c));
  OK(MPI_Recv(&y, 1, MPI_INT, prev, tag, c, MPI_STATUS_IGNORE));
  CHECK(y == dval(prev, 0, tag));
}

/* A buffer "attached" with a size above INT_MAX: only a small block behind
 * it, never used for a send, to see the int detach refuse it. */
static const MPI_Count kBigSize = (MPI_Count)INT_MAX + 10;

static void bufferTests(void) {
  MPI_Comm dup;
  OK(MPI_Comm_dup(W, &dup));
  OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
  int size1 = 4 * ((int)sizeof(int) + MPI_BSEND_OVERHEAD);
  char* buf = malloc((size_t)size1);
  void* got;
  MPI_Count gs;
  int gi;
  OK(MPI_Comm_attach_buffer_c(dup, buf, size1));
  bsendRing(dup, 1);
  OK(MPI_Comm_detach_buffer_c(dup, &got, &gs));
  CHECK(got == buf && gs == size1);
  /* The twins mix: attach with one form, detach with the other. */
  OK(MPI_Comm_attach_buffer(dup, buf, size1));
  bsendRing(dup, 2);
  OK(MPI_Comm_detach_buffer_c(dup, &got, &gs));
  CHECK(got == buf && gs == size1);
  OK(MPI_Comm_attach_buffer_c(dup, buf, size1));
  OK(MPI_Comm_detach_buffer(dup, &got, &gi));
  CHECK(got == buf && gi == size1);
  OK(MPI_Comm_attach_buffer_c(dup, buf, kBigSize));
  EXPECT(MPI_Comm_detach_buffer(dup, &got, &gi), MPI_ERR_VALUE_TOO_LARGE);
  OK(MPI_Comm_detach_buffer_c(dup, &got, &gs)); /* still attached */
  CHECK(got == buf && gs == kBigSize);
  OK(MPI_Comm_attach_buffer_c(dup, MPI_BUFFER_AUTOMATIC, 0));
  bsendRing(dup, 3);
  OK(MPI_Comm_detach_buffer_c(dup, &got, &gs));
  CHECK(got == MPI_BUFFER_AUTOMATIC && gs == 0);
  EXPECT(MPI_Comm_attach_buffer_c(dup, buf, -1), MPI_ERR_ARG);
  EXPECT(MPI_Comm_attach_buffer_c(dup, buf, kHuge), MPI_ERR_ARG);
  EXPECT(MPI_Comm_detach_buffer_c(dup, &got, &gs), MPI_ERR_BUFFER); /* none attached */
  EXPECT(MPI_Comm_detach_buffer_c(dup, &got, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Comm_attach_buffer_c(MPI_COMM_NULL, buf, size1), MPI_ERR_COMM);
  OK(MPI_Comm_free(&dup));

  MPI_Session s;
  MPI_Group g;
  MPI_Comm sc;
  OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
  OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
  OK(MPI_Comm_create_from_group(g, "bigcount_more", MPI_INFO_NULL, MPI_ERRORS_RETURN, &sc));
  OK(MPI_Group_free(&g));
  OK(MPI_Session_attach_buffer_c(s, buf, size1));
  bsendRing(sc, 4);
  OK(MPI_Session_detach_buffer_c(s, &got, &gs));
  CHECK(got == buf && gs == size1);
  OK(MPI_Session_attach_buffer(s, buf, size1));
  OK(MPI_Session_detach_buffer_c(s, &got, &gs));
  CHECK(got == buf && gs == size1);
  OK(MPI_Session_attach_buffer_c(s, buf, kBigSize));
  EXPECT(MPI_Session_detach_buffer(s, &got, &gi), MPI_ERR_VALUE_TOO_LARGE);
  OK(MPI_Session_detach_buffer_c(s, &got, &gs));
  CHECK(got == buf && gs == kBigSize);
  EXPECT(MPI_Session_attach_buffer_c(s, buf, -1), MPI_ERR_ARG);
  EXPECT(MPI_Session_detach_buffer_c(s, &got, &gs), MPI_ERR_BUFFER);
  EXPECT(MPI_Session_detach_buffer_c(s, NULL, &gs), MPI_ERR_ARG);
  EXPECT(MPI_Session_attach_buffer_c(MPI_SESSION_NULL, buf, size1), MPI_ERR_SESSION);
  OK(MPI_Comm_free(&sc));
  OK(MPI_Session_finalize(&s));
  free(buf);
}

/* ---- External32, darray, status ------------------------------------------- */

static void externalTests(void) {
  MPI_Datatype vec;
  OK(MPI_Type_vector(2, 2, 3, MPI_INT, &vec));
  OK(MPI_Type_commit(&vec));
  int in[32], o1[32], o2[32];
  double d[3] = {1.5, -2.25, rank + 0.5}, e1[3], e2[3];
  for (int i = 0; i < 32; ++i) {
    in[i] = dval(rank, 0, i);
    o1[i] = o2[i] = -1;
  }
  MPI_Aint sz;
  MPI_Count szc;
  OK(MPI_Pack_external_size("external32", 3, vec, &sz));
  OK(MPI_Pack_external_size_c("external32", 3, vec, &szc));
  CHECK(sz == 3 * 4 * 4 && szc == sz);
  char b1[256], b2[256];
  MPI_Aint p1 = 0;
  MPI_Count p2 = 0;
  OK(MPI_Pack_external("external32", in, 3, vec, b1, sizeof b1, &p1));
  OK(MPI_Pack_external("external32", d, 3, MPI_DOUBLE, b1, sizeof b1, &p1));
  OK(MPI_Pack_external_c("external32", in, 3, vec, b2, sizeof b2, &p2));
  OK(MPI_Pack_external_c("external32", d, 3, MPI_DOUBLE, b2, sizeof b2, &p2));
  CHECK(p1 == 48 + 24 && p2 == p1 && memcmp(b1, b2, (size_t)p1) == 0);
  /* Big-endian on the wire. */
  const unsigned v0 = (unsigned)in[0];
  CHECK((unsigned char)b2[0] == (v0 >> 24) && (unsigned char)b2[3] == (v0 & 0xff));
  MPI_Aint q1 = 0;
  MPI_Count q2 = 0;
  OK(MPI_Unpack_external("external32", b1, p1, &q1, o1, 3, vec));
  OK(MPI_Unpack_external("external32", b1, p1, &q1, e1, 3, MPI_DOUBLE));
  OK(MPI_Unpack_external_c("external32", b2, p2, &q2, o2, 3, vec));
  OK(MPI_Unpack_external_c("external32", b2, p2, &q2, e2, 3, MPI_DOUBLE));
  CHECK(q1 == p1 && q2 == p2);
  CHECK(memcmp(o1, o2, sizeof o1) == 0 && memcmp(e1, e2, sizeof e1) == 0 && e2[2] == d[2]);
  CHECK(o2[0] == in[0] && o2[4] == in[4] && o2[2] == -1 && o2[14] == in[14] && o2[15] == -1);
  /* Wrong arguments. */
  MPI_Count p = 0;
  EXPECT(MPI_Pack_external_c("external32", in, -1, MPI_INT, b2, 64, &p), MPI_ERR_COUNT);
  EXPECT(MPI_Pack_external_c("external32", in, kHuge, MPI_INT, b2, 64, &p), MPI_ERR_COUNT);
  EXPECT(MPI_Pack_external_c("native", in, 1, MPI_INT, b2, 64, &p), MPI_ERR_ARG);
  EXPECT(MPI_Pack_external_c("external32", in, 17, MPI_INT, b2, 64, &p), MPI_ERR_TRUNCATE);
  /* count * 4 bytes past 2^63: too large for the buffer, not wrapped. */
  EXPECT(MPI_Pack_external_c("external32", in, (MPI_Count)1 << 62, MPI_INT, b2, 64, &p),
         MPI_ERR_TRUNCATE);
  EXPECT(MPI_Pack_external_c("external32", in, 1, MPI_INT, b2, 64, NULL), MPI_ERR_ARG);
  p = 65;
  EXPECT(MPI_Unpack_external_c("external32", b2, 64, &p, o2, 1, MPI_INT), MPI_ERR_ARG);
  p = 60;
  EXPECT(MPI_Unpack_external_c("external32", b2, 64, &p, o2, 2, MPI_INT), MPI_ERR_TRUNCATE);
  EXPECT(MPI_Pack_external_size_c("external32", kHuge, MPI_INT, &szc), MPI_ERR_COUNT);
  EXPECT(MPI_Pack_external_size_c("external32", 1, MPI_DATATYPE_NULL, &szc), MPI_ERR_TYPE);
  EXPECT(MPI_Pack_external_size_c("external32", (MPI_Count)1 << 62, MPI_INT, &szc),
         MPI_ERR_VALUE_TOO_LARGE);
  OK(MPI_Pack_external_size_c("external32", (MPI_Count)1 << 40, MPI_INT, &szc));
  CHECK(szc == (MPI_Count)4 << 40);
  OK(MPI_Type_free(&vec));
}

static void darrayTests(void) {
  int ps[2] = {0, 0};
  OK(MPI_Dims_create(size, 2, ps));
  int gi[2] = {8, 6}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
  int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2};
  MPI_Count gc[2] = {8, 6};
  MPI_Datatype t1, t2;
  OK(MPI_Type_create_darray(size, rank, 2, gi, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t1));
  OK(MPI_Type_create_darray_c(size, rank, 2, gc, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t2));
  OK(MPI_Type_commit(&t1));
  OK(MPI_Type_commit(&t2));
  MPI_Count s1, s2, lb1, lb2, x1, x2;
  OK(MPI_Type_size_c(t1, &s1));
  OK(MPI_Type_size_c(t2, &s2));
  OK(MPI_Type_get_extent_c(t1, &lb1, &x1));
  OK(MPI_Type_get_extent_c(t2, &lb2, &x2));
  CHECK(s1 == s2 && lb1 == lb2 && x1 == x2 && x2 == 48 * 4);
  int all[48], k1[48], k2[48];
  for (int i = 0; i < 48; ++i) all[i] = i;
  int n1 = 0, n2 = 0;
  OK(MPI_Pack(all, 1, t1, k1, sizeof k1, &n1, W));
  OK(MPI_Pack(all, 1, t2, k2, sizeof k2, &n2, W));
  CHECK(n1 == n2 && n1 == s1 && memcmp(k1, k2, (size_t)n1) == 0);
  MPI_Count ni, na, nc, nt;
  int comb;
  OK(MPI_Type_get_envelope_c(t2, &ni, &na, &nc, &nt, &comb));
  CHECK(comb == MPI_COMBINER_DARRAY);
  OK(MPI_Type_free(&t1));
  OK(MPI_Type_free(&t2));
  /* A global size an int cannot hold (at up to 4 ranks, each rank's part is
   * more than INT_MAX bytes too). */
  MPI_Count big[2] = {(MPI_Count)3 << 31, 2};
  int dist2[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE};
  int darg2[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
  int ps2[2] = {size, 1};
  OK(MPI_Type_create_darray_c(size, rank, 2, big, dist2, darg2, ps2, MPI_ORDER_C, MPI_BYTE, &t2));
  const MPI_Count b = (big[0] + size - 1) / size;
  const MPI_Count mine = (big[0] - rank * b < b ? big[0] - rank * b : b) * 2;
  OK(MPI_Type_size_c(t2, &s2));
  OK(MPI_Type_get_extent_c(t2, &lb2, &x2));
  CHECK(s2 == mine && x2 == big[0] * 2);
  int si;
  OK(MPI_Type_size(t2, &si));
  CHECK(si == (mine > INT_MAX ? MPI_UNDEFINED : (int)mine));
  OK(MPI_Type_free(&t2));
  EXPECT(MPI_Type_create_darray_c(size, rank, 0, gc, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t2),
         MPI_ERR_ARG);
  EXPECT(MPI_Type_create_darray_c(size, rank, 2, gc, dist, darg, ps, MPI_ORDER_C,
                                  MPI_DATATYPE_NULL, &t2),
         MPI_ERR_TYPE);
}

static void statusTests(void) {
  MPI_Status a, b;
  MPI_Count e;
  int n;
  OK(MPI_Status_set_elements(&a, MPI_INT, 7));
  OK(MPI_Status_set_elements_c(&b, MPI_INT, 7));
  OK(MPI_Get_elements_c(&b, MPI_INT, &e));
  CHECK(e == 7);
  OK(MPI_Get_count(&b, MPI_INT, &n));
  CHECK(n == 7);
  OK(MPI_Get_elements_c(&a, MPI_INT, &e));
  CHECK(e == 7);
  MPI_Datatype pair;
  OK(MPI_Type_contiguous(2, MPI_INT, &pair));
  OK(MPI_Type_commit(&pair));
  OK(MPI_Status_set_elements_c(&b, pair, 3)); /* one pair and a half */
  OK(MPI_Get_elements_c(&b, pair, &e));
  OK(MPI_Get_count(&b, pair, &n));
  CHECK(e == 3 && n == MPI_UNDEFINED);
  OK(MPI_Type_free(&pair));
  const MPI_Count big = (MPI_Count)1 << 40;
  OK(MPI_Status_set_elements_c(&b, MPI_BYTE, big));
  OK(MPI_Get_elements_c(&b, MPI_BYTE, &e));
  CHECK(e == big);
  OK(MPI_Get_elements(&b, MPI_BYTE, &n));
  CHECK(n == MPI_UNDEFINED);
  EXPECT(MPI_Status_set_elements_c(&b, MPI_INT, -1), MPI_ERR_COUNT);
  EXPECT(MPI_Status_set_elements_c(&b, MPI_INT, kHuge), MPI_ERR_COUNT);
  EXPECT(MPI_Status_set_elements_c(NULL, MPI_INT, 1), MPI_ERR_ARG);
  EXPECT(MPI_Status_set_elements_c(&b, MPI_DATATYPE_NULL, 1), MPI_ERR_TYPE);
}

int main(int argc, char** argv) {
  prog = "bigcount_more";
  OK(MPI_Init(&argc, &argv));
  W = MPI_COMM_WORLD;
  OK(MPI_Comm_rank(W, &rank));
  OK(MPI_Comm_size(W, &size));
  wrank = rank;
  CHECK(size <= 16);
  next = (rank + 1) % size;
  prev = (rank + size - 1) % size;
  OK(MPI_Comm_set_errhandler(W, MPI_ERRORS_RETURN));
  vArrays();
  persistent("bcast_init", p_bcast);
  persistent("gather_init", p_gather);
  persistent("gatherv_init", p_gatherv);
  persistent("scatter_init", p_scatter);
  persistent("scatterv_init", p_scatterv);
  persistent("allgather_init", p_allgather);
  persistent("allgatherv_init", p_allgatherv);
  persistent("alltoall_init", p_alltoall);
  persistent("alltoallv_init", p_alltoallv);
  persistent("alltoallw_init", p_alltoallw);
  persistent("reduce_init", p_reduce);
  persistent("allreduce_init", p_allreduce);
  persistent("scan_init", p_scan);
  persistent("exscan_init", p_exscan);
  persistent("reduce_scatter_block_init", p_rsblock);
  persistent("reduce_scatter_init", p_rs);
  persistentErrors();
  neighborTests();
  isendrecvTests();
  partitionedTests();
  bufferTests();
  externalTests();
  darrayTests();
  statusTests();
  OK(MPI_Barrier(W));
  passed();
  OK(MPI_Finalize());
  return 0;
}
