/* MPI_Type_create_darray against layouts computed by hand (block, cyclic,
 * cyclic(k), block(k) with empty parts, none; C and Fortran order), its
 * wrong arguments, and messages: every rank sends its darray part of a
 * global array to rank 0, which receives each into one array with the
 * sender's darray type; and a subarray sent around a ring into a
 * contiguous buffer. */
#include <string.h>

#include "comm_checks.h"

/* Packs one element of `t` from `global` and compares with `want`. */
static void expectLayout(MPI_Datatype t, const int* global, const int* want, int n,
                         MPI_Aint extent) {
  OK(MPI_Type_commit(&t));
  int size;
  MPI_Aint lb, ex;
  OK(MPI_Type_size(t, &size));
  OK(MPI_Type_get_extent(t, &lb, &ex));
  if (size != n * (int)sizeof(int)) fprintf(stderr, "size %d, want %d elements\n", size, n);
  CHECK(size == n * (int)sizeof(int));
  CHECK(lb == 0 && ex == extent);
  int got[64];
  int pos = 0;
  CHECK(n <= 64);
  OK(MPI_Pack(global, 1, t, got, sizeof got, &pos, MPI_COMM_WORLD));
  CHECK(pos == size);
  for (int i = 0; i < n; ++i) {
    if (got[i] != want[i]) fprintf(stderr, "element %d: got %d, want %d\n", i, got[i], want[i]);
    CHECK(got[i] == want[i]);
  }
  OK(MPI_Type_free(&t));
}

int main(int argc, char** argv) {
  prog = "dtype_darray";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  int wsize;
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype t;

  { /* 4 x 6, C order: rows BLOCK over 2, columns CYCLIC over 3.
     * g[i][j] = 100 i + j. */
    int g[24];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 6; ++j) g[i * 6 + j] = 100 * i + j;
    int gs[2] = {4, 6}, ds[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        da[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 3};
    const int r0[] = {0, 3, 100, 103}, r4[] = {201, 204, 301, 304}, r5[] = {202, 205, 302, 305};
    OK(MPI_Type_create_darray(6, 0, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t));
    expectLayout(t, g, r0, 4, sizeof g);
    OK(MPI_Type_create_darray(6, 4, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t));
    expectLayout(t, g, r4, 4, sizeof g);
    OK(MPI_Type_create_darray(6, 5, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t));
    expectLayout(t, g, r5, 4, sizeof g);
  }
  { /* 5 x 4, Fortran order (i fastest, element (i,j) at i + 5 j):
     * dimension 0 CYCLIC(2) over 2, dimension 1 BLOCK over 2. g = 10 i + j. */
    int g[20];
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < 5; ++i) g[i + 5 * j] = 10 * i + j;
    int gs[2] = {5, 4}, ds[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
        da[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
    const int r0[] = {0, 10, 40, 1, 11, 41}, r1[] = {2, 12, 42, 3, 13, 43},
              r2[] = {20, 30, 21, 31}, r3[] = {22, 32, 23, 33};
    const int* want[4] = {r0, r1, r2, r3};
    const int n[4] = {6, 6, 4, 4};
    for (int r = 0; r < 4; ++r) {
      OK(MPI_Type_create_darray(4, r, 2, gs, ds, da, ps, MPI_ORDER_FORTRAN, MPI_INT, &t));
      expectLayout(t, g, want[r], n[r], sizeof g);
    }
  }
  { /* 1-D, 10 elements over 4: BLOCK(3) gives 3,3,3,1; BLOCK(4) gives 4,4,2,0;
     * CYCLIC(2) gives {0,1,8,9}, {2,3}, {4,5}, {6,7}. */
    int g[10];
    for (int i = 0; i < 10; ++i) g[i] = i;
    int gs = 10, ps = 4, block = MPI_DISTRIBUTE_BLOCK, cyc = MPI_DISTRIBUTE_CYCLIC, two = 2,
        three = 3, four = 4;
    const int b3[4][3] = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}};
    const int n3[4] = {3, 3, 3, 1};
    const int b4[4][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}, {0}};
    const int n4[4] = {4, 4, 2, 0};
    const int c2[4][4] = {{0, 1, 8, 9}, {2, 3}, {4, 5}, {6, 7}};
    const int nc[4] = {4, 2, 2, 2};
    for (int r = 0; r < 4; ++r) {
      OK(MPI_Type_create_darray(4, r, 1, &gs, &block, &three, &ps, MPI_ORDER_C, MPI_INT, &t));
      expectLayout(t, g, b3[r], n3[r], sizeof g);
      OK(MPI_Type_create_darray(4, r, 1, &gs, &block, &four, &ps, MPI_ORDER_C, MPI_INT, &t));
      expectLayout(t, g, b4[r], n4[r], sizeof g);
      OK(MPI_Type_create_darray(4, r, 1, &gs, &cyc, &two, &ps, MPI_ORDER_FORTRAN, MPI_INT, &t));
      expectLayout(t, g, c2[r], nc[r], sizeof g);
    }
  }
  { /* 3 x 2 x 4, C order, dimension 1 not distributed: rank 1 of a 3 x 1 x 1
     * grid (BLOCK) owns row 1 whole: 8 elements 8..15. */
    int g[24];
    for (int i = 0; i < 24; ++i) g[i] = i;
    int gs[3] = {3, 2, 4}, ds[3] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE,
                                   MPI_DISTRIBUTE_CYCLIC},
        da[3] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG},
        ps[3] = {3, 1, 1};
    const int want[8] = {8, 9, 10, 11, 12, 13, 14, 15};
    OK(MPI_Type_create_darray(3, 1, 3, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t));
    expectLayout(t, g, want, 8, sizeof g);
  }
  { /* Wrong arguments. */
    int gs[2] = {4, 6}, ds[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        da[2] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 3};
    CHECK(MPI_Type_create_darray(5, 0, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t) ==
          MPI_ERR_ARG); /* grid of 6 != size 5 */
    CHECK(MPI_Type_create_darray(6, 6, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t) ==
          MPI_ERR_ARG); /* rank out of range */
    CHECK(MPI_Type_create_darray(6, -1, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t) ==
          MPI_ERR_ARG);
    CHECK(MPI_Type_create_darray(6, 0, 0, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t) ==
          MPI_ERR_ARG);
    CHECK(MPI_Type_create_darray(6, 0, 2, gs, ds, da, ps, 77, MPI_INT, &t) == MPI_ERR_ARG);
    CHECK(MPI_Type_create_darray(6, 0, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_DATATYPE_NULL, &t) ==
          MPI_ERR_TYPE);
    CHECK(MPI_Type_create_darray(6, 0, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, NULL) ==
          MPI_ERR_ARG);
    CHECK(MPI_Type_create_darray(6, 0, 2, NULL, ds, da, ps, MPI_ORDER_C, MPI_INT, &t) ==
          MPI_ERR_ARG);
    int small[2] = {1, MPI_DISTRIBUTE_DFLT_DARG}; /* BLOCK(1) x 2 procs < 4 rows */
    CHECK(MPI_Type_create_darray(6, 0, 2, gs, ds, small, ps, MPI_ORDER_C, MPI_INT, &t) ==
          MPI_ERR_ARG);
    int zero[2] = {0, 1};
    CHECK(MPI_Type_create_darray(6, 0, 2, gs, ds, zero, ps, MPI_ORDER_C, MPI_INT, &t) ==
          MPI_ERR_ARG);
    int none[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC}; /* NONE over 2 procs */
    CHECK(MPI_Type_create_darray(6, 0, 2, gs, none, da, ps, MPI_ORDER_C, MPI_INT, &t) ==
          MPI_ERR_ARG);
    int bad[2] = {MPI_DISTRIBUTE_BLOCK, 12345};
    CHECK(MPI_Type_create_darray(6, 0, 2, gs, bad, da, ps, MPI_ORDER_C, MPI_INT, &t) ==
          MPI_ERR_ARG);
    int negative[2] = {4, -6};
    CHECK(MPI_Type_create_darray(6, 0, 2, negative, ds, da, ps, MPI_ORDER_C, MPI_INT, &t) ==
          MPI_ERR_ARG);
  }
  { /* Messages: every rank sends its darray part of a 6 x 7 array to rank 0,
     * which receives each part with the sender's type into one array. */
    enum { R = 6, C = 7 };
    int g[R * C], got[R * C];
    for (int i = 0; i < R * C; ++i) g[i] = 1000 + i;
    memset(got, 0, sizeof got);
    int gs[2] = {R, C}, ds[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
        da[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {wsize, 1};
    MPI_Datatype mine;
    OK(MPI_Type_create_darray(wsize, wrank, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &mine));
    OK(MPI_Type_commit(&mine));
    MPI_Request req;
    OK(MPI_Isend(g, 1, mine, 0, 7, MPI_COMM_WORLD, &req));
    if (wrank == 0) {
      int total = 0;
      for (int src = 0; src < wsize; ++src) {
        MPI_Datatype theirs;
        OK(MPI_Type_create_darray(wsize, src, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &theirs));
        OK(MPI_Type_commit(&theirs));
        MPI_Status st;
        OK(MPI_Recv(got, 1, theirs, src, 7, MPI_COMM_WORLD, &st));
        int n;
        OK(MPI_Get_count(&st, MPI_INT, &n));
        total += n;
        OK(MPI_Type_free(&theirs));
      }
      CHECK(total == R * C); /* the parts cover the array exactly once */
      CHECK(memcmp(g, got, sizeof g) == 0);
    }
    OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    OK(MPI_Type_free(&mine));
  }
  { /* A subarray around the ring, received into a contiguous buffer:
     * rows 1..3, columns 2..4 of an 5 x 6 array, values 100 * rank + index. */
    int a[30], sizes[2] = {5, 6}, subs[2] = {3, 3}, starts[2] = {1, 2};
    for (int i = 0; i < 30; ++i) a[i] = 100 * wrank + i;
    MPI_Datatype sub;
    OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub));
    OK(MPI_Type_commit(&sub));
    int right = (wrank + 1) % wsize, left = (wrank + wsize - 1) % wsize, in[9];
    OK(MPI_Sendrecv(a, 1, sub, right, 8, in, 9, MPI_INT, left, 8, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) CHECK(in[i * 3 + j] == 100 * left + (1 + i) * 6 + 2 + j);
    OK(MPI_Type_free(&sub));
  }

  passed();
  MPI_Finalize();
  return 0;
}
