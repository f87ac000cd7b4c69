/* p2p_count: MPI_Get_count, MPI_Get_elements and MPI_Get_elements_x after
 * receives that fill only part of the buffer, with predefined and derived
 * types, including counts that are not whole elements (MPI_UNDEFINED).
 * Messages travel from the left neighbour (oneself in a job of one rank).
 * Prints "p2p_count: rank R ok". */
#include "p2p_util.h"

static int right, left;

/* Sends `bytes` bytes to the right, receives from the left into `buf`
 * with (count, type), returns the status. */
static MPI_Status xfer(const void* out, int bytes, void* buf, int count, MPI_Datatype type,
                       int tag) {
  MPI_Status st;
  MPI_Request r;
  MPI_OK(MPI_Irecv(buf, count, type, left, tag, MPI_COMM_WORLD, &r));
  MPI_OK(MPI_Send(out, bytes, MPI_BYTE, right, tag, MPI_COMM_WORLD));
  MPI_OK(MPI_Wait(&r, &st));
  return st;
}

static void expectCounts(const MPI_Status* st, MPI_Datatype type, int count, int elements,
                         const char* what) {
  int c = -2, e = -2;
  MPI_Count ex = -2;
  MPI_OK(MPI_Get_count(st, type, &c));
  MPI_OK(MPI_Get_elements(st, type, &e));
  MPI_OK(MPI_Get_elements_x(st, type, &ex));
  CHECKF(c == count && e == elements && ex == elements,
         "%s: count %d elements %d elements_x %lld, expected %d %d", what, c, e, (long long)ex,
         count, elements);
}

int main(int argc, char** argv) {
  p2p_init(&argc, &argv, "p2p_count");
  right = (g_rank + 1) % g_size;
  left = (g_rank - 1 + g_size) % g_size;
  int ints[64];
  double dbl[64];
  for (int i = 0; i < 64; ++i) {
    ints[i] = i;
    dbl[i] = i * 0.5;
  }
  int ibuf[64];
  double dbuf[64];
  MPI_Status st;

  /* 10 ints into room for 20. */
  st = xfer(ints, 10 * (int)sizeof(int), ibuf, 20, MPI_INT, 1);
  expectCounts(&st, MPI_INT, 10, 10, "10 ints");
  expectCounts(&st, MPI_SHORT, 20, 20, "10 ints as shorts");
  expectCounts(&st, MPI_DOUBLE, 5, 5, "10 ints as doubles");
  expectCounts(&st, MPI_BYTE, 40, 40, "10 ints as bytes");
  for (int i = 0; i < 10; ++i) CHECK(ibuf[i] == i);

  /* 7 bytes: not a whole number of ints. */
  st = xfer(ints, 7, ibuf, 20, MPI_INT, 2);
  expectCounts(&st, MPI_INT, MPI_UNDEFINED, MPI_UNDEFINED, "7 bytes as ints");
  expectCounts(&st, MPI_BYTE, 7, 7, "7 bytes");

  /* Zero bytes. */
  st = xfer(ints, 0, ibuf, 20, MPI_INT, 3);
  expectCounts(&st, MPI_INT, 0, 0, "empty");

  /* A contiguous derived type of 3 ints, 10 ints received: 3 1/3 elements. */
  MPI_Datatype three;
  MPI_OK(MPI_Type_contiguous(3, MPI_INT, &three));
  MPI_OK(MPI_Type_commit(&three));
  st = xfer(ints, 10 * (int)sizeof(int), ibuf, 5, three, 4);
  expectCounts(&st, three, MPI_UNDEFINED, 10, "10 ints as contiguous(3)");
  st = xfer(ints, 9 * (int)sizeof(int), ibuf, 5, three, 5);
  expectCounts(&st, three, 3, 9, "9 ints as contiguous(3)");

  /* A strided vector of doubles (2 blocks of 1, stride 3), 5 doubles
   * received into 4 vectors: 2.5 vectors, 5 elements, landing at 0,3,6,9,12. */
  MPI_Datatype vec;
  MPI_OK(MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &vec));
  MPI_OK(MPI_Type_commit(&vec));
  for (int i = 0; i < 64; ++i) dbuf[i] = -1.0;
  st = xfer(dbl, 5 * (int)sizeof(double), dbuf, 4, vec, 6);
  expectCounts(&st, vec, MPI_UNDEFINED, 5, "5 doubles as vector(2,1,3)");
  MPI_Aint lb, ext;
  MPI_OK(MPI_Type_get_extent(vec, &lb, &ext));
  CHECK(ext == 4 * (MPI_Aint)sizeof(double));
  /* element e's blocks at e*4 + {0, 3} doubles */
  const int at[5] = {0, 3, 4, 7, 8};
  for (int i = 0; i < 5; ++i) CHECKF(dbuf[at[i]] == i * 0.5, "double %d", i);
  CHECK(dbuf[1] == -1.0 && dbuf[2] == -1.0 && dbuf[9] == -1.0);

  /* A derived type freed while a receive and a send using it are pending:
   * both still complete with it. */
  MPI_Datatype tmp;
  MPI_Request rr, sr;
  MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &tmp));
  MPI_OK(MPI_Type_commit(&tmp));
  for (int i = 0; i < 64; ++i) ibuf[i] = -1;
  MPI_OK(MPI_Irecv(ibuf, 2, tmp, left, 7, MPI_COMM_WORLD, &rr));
  MPI_OK(MPI_Isend(ints, 2, tmp, right, 7, MPI_COMM_WORLD, &sr));
  MPI_OK(MPI_Type_free(&tmp));
  CHECK(tmp == MPI_DATATYPE_NULL);
  MPI_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
  MPI_OK(MPI_Wait(&rr, &st));
  expectCounts(&st, MPI_INT, 6, 6, "6 ints through a freed vector");
  /* element e at e*5 ints (extent 5), blocks at +0, +2, +4 */
  const int pos[6] = {0, 2, 4, 5, 7, 9};
  for (int i = 0; i < 6; ++i) CHECKF(ibuf[pos[i]] == pos[i], "freed vector: int %d", i);
  CHECK(ibuf[1] == -1 && ibuf[3] == -1 && ibuf[6] == -1 && ibuf[10] == -1);

  /* MPI_PROC_NULL: count 0. */
  MPI_OK(MPI_Recv(ibuf, 5, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
  expectCounts(&st, MPI_INT, 0, 0, "PROC_NULL");

  MPI_OK(MPI_Type_free(&three));
  MPI_OK(MPI_Type_free(&vec));
  p2p_barrier(MPI_COMM_WORLD);
  p2p_done();
  return 0;
}
