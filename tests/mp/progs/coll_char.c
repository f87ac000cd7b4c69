/* coll_char: MPI_SUM, MPI_PROD, MPI_MIN and MPI_MAX on MPI_CHAR (reduced as
 * a signed 8-bit integer, as Open MPI and MPICH do), MPI_SIGNED_CHAR and
 * MPI_UNSIGNED_CHAR, through MPI_Allreduce, MPI_Reduce, MPI_Reduce_local and
 * a derived type of MPI_CHAR; the logical and bitwise ops on MPI_CHAR too
 * (MPICH accepts them: the same extension), and MPI_Compare_and_swap on it;
 * MINLOC stays undefined (MPI_ERR_OP under MPI_ERRORS_RETURN).
 * Prints "coll_char: rank R: N checks passed". */
#include <mpi.h>
#include <string.h>

#include "comm_checks.h"

#define N 37

static int p;

/* Rank r's element i, small enough that a sum over 5 ranks fits in int8. */
static int elem(int r, int i) { return ((r * 7 + i * 3) % 21) - 10; }

static int ref(MPI_Op op, int i, int isUnsigned) {
  int acc = 0;
  for (int r = 0; r < p; ++r) {
    int v = elem(r, i);
    if (isUnsigned) v = (unsigned char)v;
    if (r == 0) acc = v;
    else if (op == MPI_SUM) acc += v;
    else if (op == MPI_PROD) acc *= v;
    else if (op == MPI_MIN) acc = v < acc ? v : acc;
    else acc = v > acc ? v : acc;
  }
  return isUnsigned ? (unsigned char)acc : (signed char)acc;
}

static void check(MPI_Datatype type, int isUnsigned) {
  MPI_Op ops[4] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
  for (int o = 0; o < 4; ++o) {
    char in[N], out[N];
    for (int i = 0; i < N; ++i) in[i] = (char)elem(wrank, i);
    memset(out, 0x55, sizeof out);
    OK(MPI_Allreduce(in, out, N, type, ops[o], MPI_COMM_WORLD));
    for (int i = 0; i < N; ++i) {
      int got = isUnsigned ? (unsigned char)out[i] : (signed char)out[i];
      CHECK(got == ref(ops[o], i, isUnsigned));
    }
    memset(out, 0x55, sizeof out);
    OK(MPI_Reduce(in, out, N, type, ops[o], p - 1, MPI_COMM_WORLD));
    if (wrank == p - 1)
      for (int i = 0; i < N; ++i) {
        int got = isUnsigned ? (unsigned char)out[i] : (signed char)out[i];
        CHECK(got == ref(ops[o], i, isUnsigned));
      }
  }
}

int main(int argc, char** argv) {
  prog = "coll_char";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  check(MPI_CHAR, 0);
  check(MPI_SIGNED_CHAR, 0);
  check(MPI_UNSIGNED_CHAR, 1);

  /* MPI_CHAR is signed: -3 is smaller than 2, 100 + 100 wraps to -56. */
  char a[3] = {-3, 100, 5}, b[3] = {2, 100, -5};
  OK(MPI_Reduce_local(a, b, 3, MPI_CHAR, MPI_MIN));
  CHECK(b[0] == -3);
  b[0] = 2;
  OK(MPI_Reduce_local(a, b, 3, MPI_CHAR, MPI_SUM));
  CHECK((signed char)b[1] == -56 && b[2] == 0 && b[0] == -1);

  /* A derived type of MPI_CHAR reduces element by element. */
  MPI_Datatype pair;
  OK(MPI_Type_contiguous(2, MPI_CHAR, &pair));
  OK(MPI_Type_commit(&pair));
  char in[4] = {1, 2, 3, 4}, out[4];
  OK(MPI_Allreduce(in, out, 2, pair, MPI_SUM, MPI_COMM_WORLD));
  for (int i = 0; i < 4; ++i) CHECK(out[i] == (char)(p * (i + 1)));
  OK(MPI_Type_free(&pair));

  /* Logical and bitwise ops on MPI_CHAR, as on a signed 8-bit integer. */
  {
    char x[4] = {0, 3, 0x0f, -1}, y[4] = {0, 0, 0x3c, 1};
    char z[4];
    memcpy(z, y, sizeof z);
    OK(MPI_Reduce_local(x, z, 4, MPI_CHAR, MPI_LAND));
    CHECK(z[0] == 0 && z[1] == 0 && z[2] == 1 && z[3] == 1);
    memcpy(z, y, sizeof z);
    OK(MPI_Reduce_local(x, z, 4, MPI_CHAR, MPI_LOR));
    CHECK(z[0] == 0 && z[1] == 1 && z[2] == 1 && z[3] == 1);
    memcpy(z, y, sizeof z);
    OK(MPI_Reduce_local(x, z, 4, MPI_CHAR, MPI_LXOR));
    CHECK(z[0] == 0 && z[1] == 1 && z[2] == 0 && z[3] == 0);
    memcpy(z, y, sizeof z);
    OK(MPI_Reduce_local(x, z, 4, MPI_CHAR, MPI_BAND));
    CHECK(z[0] == 0 && z[1] == 0 && z[2] == 0x0c && z[3] == 1);
    memcpy(z, y, sizeof z);
    OK(MPI_Reduce_local(x, z, 4, MPI_CHAR, MPI_BOR));
    CHECK(z[0] == 0 && z[1] == 3 && z[2] == 0x3f && z[3] == -1);
    memcpy(z, y, sizeof z);
    OK(MPI_Reduce_local(x, z, 4, MPI_CHAR, MPI_BXOR));
    CHECK(z[0] == 0 && z[1] == 3 && z[2] == 0x33 && z[3] == -2);
    /* Across ranks: rank r contributes bit (r % 7). */
    char bit = (char)(1 << (wrank % 7)), all = 0;
    OK(MPI_Allreduce(&bit, &all, 1, MPI_CHAR, MPI_BOR, MPI_COMM_WORLD));
    char want = 0;
    for (int r = 0; r < p; ++r) want |= (char)(1 << (r % 7));
    CHECK(all == want);
  }
  /* Still undefined on MPI_CHAR: MINLOC (a pair type only). */
  int cls = 0;
  int rc = MPI_Reduce_local(a, b, 3, MPI_CHAR, MPI_MINLOC);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP);
  /* Compare-and-swap on MPI_CHAR. */
  {
    char cell = 7, res = 0, cmp = 7, nv = 9;
    MPI_Win w;
    OK(MPI_Win_create(&cell, 1, 1, MPI_INFO_NULL, MPI_COMM_SELF, &w));
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w));
    OK(MPI_Compare_and_swap(&nv, &cmp, &res, MPI_CHAR, 0, 0, w));
    OK(MPI_Win_unlock(0, w));
    CHECK(res == 7 && cell == 9);
    OK(MPI_Win_free(&w));
  }
  /* Bitwise ops on the integer char types are standard. */
  OK(MPI_Reduce_local(a, b, 3, MPI_UNSIGNED_CHAR, MPI_BXOR));
  OK(MPI_Reduce_local(a, b, 3, MPI_SIGNED_CHAR, MPI_BOR));

  MPI_Barrier(MPI_COMM_WORLD);
  passed();
  MPI_Finalize();
  return 0;
}
