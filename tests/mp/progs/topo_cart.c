/* Cartesian topologies: MPI_Dims_create (balanced factors, preset entries,
 * invalid input), MPI_Cart_create over 1-3 dimensions (periodic and not, a
 * grid smaller than the communicator, zero dimensions), the queries
 * (Cart_get, Cartdim_get, Cart_rank, Cart_coords, Cart_shift), Cart_sub,
 * Cart_map, Topo_test, the topology following MPI_Comm_dup and surviving the
 * original's MPI_Comm_free, and wrong arguments under MPI_ERRORS_RETURN.
 * Any rank count. */
#include <string.h>

#include "comm_checks.h"

static int rank, size;

static void dimsCase(int nnodes, int ndims, const int* in, const int* want) {
  int dims[8];
  memcpy(dims, in, sizeof(int) * ndims);
  OK(MPI_Dims_create(nnodes, ndims, dims));
  for (int d = 0; d < ndims; ++d) CHECK(dims[d] == want[d]);
}

static void dimsCreate(void) {
  int z[8] = {0};
  dimsCase(6, 2, z, (int[]){3, 2});
  dimsCase(7, 2, z, (int[]){7, 1});
  dimsCase(12, 3, z, (int[]){3, 2, 2});
  dimsCase(16, 3, z, (int[]){4, 2, 2});
  dimsCase(24, 3, z, (int[]){4, 3, 2});
  dimsCase(36, 2, z, (int[]){6, 6});
  dimsCase(1, 3, z, (int[]){1, 1, 1});
  dimsCase(720, 3, z, (int[]){10, 9, 8}); /* greedy prime assignment gives 10x6x6 */
  dimsCase(1 << 20, 4, z, (int[]){32, 32, 32, 32});
  dimsCase(2147483647, 2, z, (int[]){2147483647, 1}); /* a prime */
  dimsCase(12, 3, (int[]){0, 3, 0}, (int[]){2, 3, 2});
  dimsCase(8, 3, (int[]){2, 0, 0}, (int[]){2, 2, 2});
  dimsCase(30, 3, (int[]){0, 0, 5}, (int[]){3, 2, 5});
  dimsCase(6, 2, (int[]){2, 3}, (int[]){2, 3}); /* nothing left to choose */
  dimsCase(1, 0, z, z);
  int d2[2] = {3, 0};
  CHECK(MPI_Dims_create(10, 2, d2) == MPI_ERR_DIMS); /* 3 does not divide 10 */
  int d3[2] = {2, 2};
  CHECK(MPI_Dims_create(6, 2, d3) == MPI_ERR_DIMS); /* all preset, product 4 */
  int d4[2] = {-1, 0};
  CHECK(MPI_Dims_create(4, 2, d4) == MPI_ERR_DIMS);
  int d5[2] = {0, 0};
  CHECK(MPI_Dims_create(4, -1, d5) == MPI_ERR_DIMS);
  CHECK(MPI_Dims_create(0, 2, d5) == MPI_ERR_DIMS);
  CHECK(MPI_Dims_create(4, 2, NULL) == MPI_ERR_ARG);
  CHECK(MPI_Dims_create(2, 0, NULL) == MPI_ERR_DIMS);
}

/* Everything a member can check about a grid of `ndims` (dims, periods)
 * built over the first ranks of MPI_COMM_WORLD. */
static void checkGrid(MPI_Comm cart, int ndims, const int* dims, const int* periods) {
  int status, nd, n;
  OK(MPI_Topo_test(cart, &status));
  CHECK(status == MPI_CART);
  OK(MPI_Cartdim_get(cart, &nd));
  CHECK(nd == ndims);
  OK(MPI_Comm_size(cart, &n));
  int prod = 1;
  for (int d = 0; d < ndims; ++d) prod *= dims[d];
  CHECK(n == prod);
  int r;
  OK(MPI_Comm_rank(cart, &r));
  CHECK(r == rank); /* no reordering */
  int gd[4], gp[4], gc[4], c[4];
  OK(MPI_Cart_get(cart, 4, gd, gp, gc));
  /* Row-major: the last dimension varies fastest. */
  int rest = r;
  for (int d = ndims - 1; d >= 0; --d) {
    c[d] = rest % dims[d];
    rest /= dims[d];
  }
  for (int d = 0; d < ndims; ++d) {
    CHECK(gd[d] == dims[d]);
    CHECK(gp[d] == (periods[d] != 0));
    CHECK(gc[d] == c[d]);
  }
  /* Cart_coords and Cart_rank invert each other for every rank. */
  for (int q = 0; q < n; ++q) {
    int qc[4], back;
    OK(MPI_Cart_coords(cart, q, 4, qc));
    OK(MPI_Cart_rank(cart, qc, &back));
    CHECK(back == q);
  }
  /* Shifts by -2..2 in every dimension against coordinates computed here. */
  for (int d = 0; d < ndims; ++d)
    for (int disp = -2; disp <= 2; ++disp) {
      int src, dst;
      OK(MPI_Cart_shift(cart, d, disp, &src, &dst));
      int want[2];
      for (int k = 0; k < 2; ++k) {
        int cc[4];
        memcpy(cc, c, sizeof c);
        cc[d] += k == 0 ? -disp : disp;
        if (cc[d] < 0 || cc[d] >= dims[d]) {
          if (!periods[d]) {
            want[k] = MPI_PROC_NULL;
            continue;
          }
          cc[d] = ((cc[d] % dims[d]) + dims[d]) % dims[d];
        }
        OK(MPI_Cart_rank(cart, cc, &want[k]));
      }
      CHECK(src == want[0]);
      CHECK(dst == want[1]);
    }
  /* A shift is usable for point-to-point: send my rank along dimension 0. */
  if (ndims > 0) {
    int src, dst, got = -7;
    OK(MPI_Cart_shift(cart, 0, 1, &src, &dst));
    OK(MPI_Sendrecv(&r, 1, MPI_INT, dst, 5, &got, 1, MPI_INT, src, 5, cart, MPI_STATUS_IGNORE));
    CHECK(got == (src == MPI_PROC_NULL ? -7 : src));
  }
  /* Periodic coordinates wrap in Cart_rank; non-periodic ones are errors. */
  for (int d = 0; d < ndims; ++d) {
    int cc[4], q;
    memcpy(cc, c, sizeof c);
    cc[d] = c[d] + dims[d];
    if (periods[d]) {
      OK(MPI_Cart_rank(cart, cc, &q));
      CHECK(q == r);
      cc[d] = c[d] - 3 * dims[d];
      OK(MPI_Cart_rank(cart, cc, &q));
      CHECK(q == r);
    } else {
      CHECK(MPI_Cart_rank(cart, cc, &q) == MPI_ERR_ARG);
    }
  }
}

static void makeGrid(int ndims, const int* dims, const int* periods) {
  MPI_Comm cart;
  OK(MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 1, &cart));
  int prod = 1;
  for (int d = 0; d < ndims; ++d) prod *= dims[d];
  if (rank >= prod) {
    CHECK(cart == MPI_COMM_NULL);
    return;
  }
  CHECK(cart != MPI_COMM_NULL);
  OK(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
  checkGrid(cart, ndims, dims, periods);
  /* A duplicate carries the same topology, also once the original is gone. */
  MPI_Comm dup;
  OK(MPI_Comm_dup(cart, &dup));
  OK(MPI_Comm_free(&cart));
  checkGrid(dup, ndims, dims, periods);
  OK(MPI_Comm_free(&dup));
}

static void grids(void) {
  int d1[1] = {size}, p0[3] = {0, 0, 0}, p1[3] = {1, 1, 1}, pm[3] = {1, 0, 1};
  makeGrid(1, d1, p0);
  makeGrid(1, d1, p1);
  int d2[2] = {0, 0};
  OK(MPI_Dims_create(size, 2, d2));
  makeGrid(2, d2, p0);
  makeGrid(2, d2, p1);
  makeGrid(2, d2, pm);
  int d3[3] = {0, 0, 0};
  OK(MPI_Dims_create(size, 3, d3));
  makeGrid(3, d3, p1);
  makeGrid(3, d3, pm);
  makeGrid(3, d3, p0);
  if (size > 1) { /* smaller than the communicator: the last rank is left out */
    int ds[1] = {size - 1};
    makeGrid(1, ds, p1);
  }
  /* Zero dimensions: a one-process grid (rank 0). */
  MPI_Comm zero;
  OK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &zero));
  if (rank == 0) {
    int n, nd, status;
    OK(MPI_Comm_size(zero, &n));
    CHECK(n == 1);
    OK(MPI_Cartdim_get(zero, &nd));
    CHECK(nd == 0);
    OK(MPI_Topo_test(zero, &status));
    CHECK(status == MPI_CART);
    int q = -1;
    OK(MPI_Cart_rank(zero, NULL, &q));
    CHECK(q == 0);
    OK(MPI_Comm_free(&zero));
  } else {
    CHECK(zero == MPI_COMM_NULL);
  }
}

/* Cart_sub of a 2D grid: rows, columns, everything, nothing. */
static void subgrids(void) {
  int dims[2] = {0, 0}, periods[2] = {1, 0};
  OK(MPI_Dims_create(size, 2, dims));
  MPI_Comm cart;
  OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
  int c[2];
  OK(MPI_Cart_coords(cart, rank, 2, c));
  for (int keep = 0; keep < 4; ++keep) {
    int remain[2] = {keep & 1, (keep >> 1) & 1};
    MPI_Comm sub;
    OK(MPI_Cart_sub(cart, remain, &sub));
    int nd, n, r, status;
    OK(MPI_Topo_test(sub, &status));
    CHECK(status == MPI_CART);
    OK(MPI_Cartdim_get(sub, &nd));
    CHECK(nd == remain[0] + remain[1]);
    OK(MPI_Comm_size(sub, &n));
    CHECK(n == (remain[0] ? dims[0] : 1) * (remain[1] ? dims[1] : 1));
    OK(MPI_Comm_rank(sub, &r));
    int sd[2], sp[2], sc[2], k = 0;
    OK(MPI_Cart_get(sub, 2, sd, sp, sc));
    for (int d = 0; d < 2; ++d)
      if (remain[d]) {
        CHECK(sd[k] == dims[d]);
        CHECK(sp[k] == periods[d]);
        CHECK(sc[k] == c[d]);
        ++k;
      }
    /* The members are the processes sharing my dropped coordinates: their
     * world ranks, gathered in sub-rank order, say so. */
    int all[64];
    OK(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, sub));
    for (int q = 0; q < n; ++q) {
      int qc[2], wc[2];
      OK(MPI_Cart_coords(sub, q, 2, qc));
      OK(MPI_Cart_coords(cart, all[q], 2, wc));
      k = 0;
      for (int d = 0; d < 2; ++d) {
        if (remain[d]) CHECK(wc[d] == qc[k++]);
        else CHECK(wc[d] == c[d]);
      }
    }
    OK(MPI_Comm_free(&sub));
  }
  OK(MPI_Comm_free(&cart));
  /* Cart_sub of a 3D grid keeping the outer dimensions. */
  int d3[3] = {0, 0, 0}, p3[3] = {0, 1, 0}, remain3[3] = {1, 0, 1};
  OK(MPI_Dims_create(size, 3, d3));
  OK(MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 0, &cart));
  MPI_Comm sub;
  OK(MPI_Cart_sub(cart, remain3, &sub));
  int n, sd[2], sp[2], sc[2], c3[3];
  OK(MPI_Comm_size(sub, &n));
  CHECK(n == d3[0] * d3[2]);
  OK(MPI_Cart_get(sub, 2, sd, sp, sc));
  OK(MPI_Cart_coords(cart, rank, 3, c3));
  CHECK(sd[0] == d3[0] && sd[1] == d3[2] && sp[0] == 0 && sp[1] == 0);
  CHECK(sc[0] == c3[0] && sc[1] == c3[2]);
  OK(MPI_Comm_free(&sub));
  OK(MPI_Comm_free(&cart));
}

static void cartMap(void) {
  int dims[1] = {size > 1 ? size - 1 : 1}, periods[1] = {0}, nr;
  OK(MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &nr));
  CHECK(nr == (rank < dims[0] ? rank : MPI_UNDEFINED));
}

static void errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int nd, st, dims[2] = {size, 1}, periods[2] = {0, 0}, c[2], q, s, d;
  MPI_Comm out = MPI_COMM_NULL;
  /* No topology on MPI_COMM_WORLD. */
  OK(MPI_Topo_test(MPI_COMM_WORLD, &st));
  CHECK(st == MPI_UNDEFINED);
  CHECK(MPI_Cartdim_get(MPI_COMM_WORLD, &nd) == MPI_ERR_TOPOLOGY);
  CHECK(MPI_Cart_get(MPI_COMM_WORLD, 2, dims, periods, c) == MPI_ERR_TOPOLOGY);
  CHECK(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &s, &d) == MPI_ERR_TOPOLOGY);
  CHECK(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, c) == MPI_ERR_TOPOLOGY);
  CHECK(MPI_Cart_sub(MPI_COMM_WORLD, periods, &out) == MPI_ERR_TOPOLOGY);
  CHECK(MPI_Cartdim_get(MPI_COMM_NULL, &nd) == MPI_ERR_COMM);
  CHECK(MPI_Topo_test(MPI_COMM_NULL, &st) == MPI_ERR_COMM);
  /* Bad grids. */
  int big[2] = {size + 1, 1}, zero[2] = {0, 1};
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, big, periods, 0, &out) == MPI_ERR_ARG);
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, periods, 0, &out) == MPI_ERR_DIMS);
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &out) == MPI_ERR_DIMS);
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, NULL, periods, 0, &out) == MPI_ERR_ARG);
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, NULL) == MPI_ERR_ARG);
  CHECK(MPI_Cart_map(MPI_COMM_WORLD, 2, big, periods, &q) == MPI_ERR_ARG);
  CHECK(out == MPI_COMM_NULL);
  /* Bad queries on a real grid (its handler is inherited: ERRORS_RETURN). */
  MPI_Comm cart;
  OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
  CHECK(MPI_Cart_coords(cart, size, 2, c) == MPI_ERR_RANK);
  CHECK(MPI_Cart_coords(cart, -1, 2, c) == MPI_ERR_RANK);
  CHECK(MPI_Cart_coords(cart, 0, 1, c) == MPI_ERR_ARG);
  CHECK(MPI_Cart_get(cart, 1, dims, periods, c) == MPI_ERR_ARG);
  CHECK(MPI_Cart_shift(cart, 2, 1, &s, &d) == MPI_ERR_ARG);
  CHECK(MPI_Cart_shift(cart, -1, 1, &s, &d) == MPI_ERR_ARG);
  int off[2] = {size, 0};
  CHECK(MPI_Cart_rank(cart, off, &q) == MPI_ERR_ARG);
  CHECK(MPI_Graph_neighbors_count(cart, 0, &q) == MPI_ERR_TOPOLOGY);
  int a, b, w;
  CHECK(MPI_Dist_graph_neighbors_count(cart, &a, &b, &w) == MPI_ERR_TOPOLOGY);
  /* A non-periodic edge: a shift past it is MPI_PROC_NULL. */
  OK(MPI_Cart_shift(cart, 0, size, &s, &d));
  CHECK(s == MPI_PROC_NULL && d == MPI_PROC_NULL);
  OK(MPI_Cart_shift(cart, 1, 1, &s, &d)); /* extent 1, not periodic */
  CHECK(s == MPI_PROC_NULL && d == MPI_PROC_NULL);
  OK(MPI_Cart_shift(cart, 0, 0, &s, &d));
  CHECK(s == rank && d == rank);
  OK(MPI_Comm_free(&cart));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  prog = "topo_cart";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  wrank = rank;
  CHECK(size <= 64);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  dimsCreate();
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  grids();
  subgrids();
  cartMap();
  errors();
  OK(MPI_Barrier(MPI_COMM_WORLD));
  MPI_Finalize();
  passed();
  return 0;
}
