/* p2p_count: MPI_Get_count, MPI_Get_elements and MPI_Get_elements_x after
 * receives that fill only part of the buffer, with predefined and derived
 * types, including counts that are not whole elements (MPI_UNDEFINED), and
 * structs mixing basic types, nested, with pair types, partly received,
 * sent as derived types or as bytes, small and past the eager limit.
 * Messages travel from the left neighbour (oneself in a job of one rank).
 * Prints "p2p_count: rank R ok". */
#include <stddef.h>

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

/* struct { int; double; char[3]; } as C lays it out: 15 data bytes, 5 basic
 * elements, extent 24. */
typedef struct {
  int i;
  double d;
  char c[3];
} Mixed;

static MPI_Datatype mixedType(void) {
  int bl[3] = {1, 1, 3};
  MPI_Aint disp[3] = {offsetof(Mixed, i), offsetof(Mixed, d), offsetof(Mixed, c)};
  MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
  MPI_Datatype t;
  MPI_OK(MPI_Type_create_struct(3, bl, disp, types, &t));
  MPI_OK(MPI_Type_commit(&t));
  MPI_Aint lb, ext;
  int size;
  MPI_OK(MPI_Type_get_extent(t, &lb, &ext));
  MPI_OK(MPI_Type_size(t, &size));
  CHECK(lb == 0 && ext == (MPI_Aint)sizeof(Mixed) && size == 15);
  return t;
}

/* The packed stream of item k of Mixed: int k, double k + 0.25, chars. */
static void mixedItem(int k, unsigned char* out) {
  int i = k;
  double d = k + 0.25;
  memcpy(out, &i, 4);
  memcpy(out + 4, &d, 8);
  for (int c = 0; c < 3; ++c) out[12 + c] = (unsigned char)('a' + (k + c) % 26);
}

static void checkMixed(const Mixed* m, int k, const char* what) {
  CHECKF(m->i == k && m->d == k + 0.25 && m->c[0] == 'a' + k % 26 &&
             m->c[2] == 'a' + (k + 2) % 26,
         "%s: item %d holds %d %g", what, k, m->i, m->d);
}

/* Structs of mixed basic types: whole and partial items, nested types, pair
 * types, zero bytes, and a message past the eager limit. */
static void mixedStructs(void) {
  MPI_Datatype mixed = mixedType();
  enum { kMany = 100000 }; /* 1.5 MB packed: rendezvous on every transport */
  unsigned char* stream = malloc((size_t)kMany * 15 + 64);
  Mixed* items = malloc(sizeof(Mixed) * (kMany + 1));
  CHECK(stream && items);
  for (int k = 0; k < kMany; ++k) mixedItem(k, stream + (size_t)k * 15);
  MPI_Status st;

  /* Bytes received into room for 4 items. */
  st = xfer(stream, 30, items, 4, mixed, 20);
  expectCounts(&st, mixed, 2, 10, "2 mixed structs");
  checkMixed(&items[1], 1, "2 mixed structs");
  st = xfer(stream, 30 + 13, items, 4, mixed, 21); /* int, double, 1 char */
  expectCounts(&st, mixed, MPI_UNDEFINED, 13, "2 mixed structs + 13 bytes");
  CHECK(items[2].i == 2 && items[2].d == 2.25 && items[2].c[0] == 'c');
  st = xfer(stream, 15 + 4, items, 4, mixed, 22); /* and the int of the next */
  expectCounts(&st, mixed, MPI_UNDEFINED, 6, "1 mixed struct + its int");
  st = xfer(stream, 15 + 6, items, 4, mixed, 23); /* ends inside the double */
  expectCounts(&st, mixed, MPI_UNDEFINED, MPI_UNDEFINED, "ends inside a double");
  st = xfer(stream, 0, items, 4, mixed, 24);
  expectCounts(&st, mixed, 0, 0, "zero bytes as mixed structs");

  /* Sent as the struct itself, fewer items than the receive allows. */
  for (int k = 0; k < 3; ++k) {
    items[k].i = k;
    items[k].d = k + 0.25;
    for (int c = 0; c < 3; ++c) items[k].c[c] = (char)('a' + (k + c) % 26);
  }
  {
    Mixed in[5];
    MPI_Request r;
    memset(in, 0, sizeof in);
    MPI_OK(MPI_Irecv(in, 5, mixed, left, 25, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Send(items, 3, mixed, right, 25, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, &st));
    expectCounts(&st, mixed, 3, 15, "3 mixed structs of 5");
    expectCounts(&st, MPI_CHAR, 45, 45, "3 mixed structs as chars");
    for (int k = 0; k < 3; ++k) checkMixed(&in[k], k, "3 mixed structs of 5");
    CHECK(in[3].i == 0 && in[4].d == 0.0);
  }

  /* Nested: struct { MPI_SHORT_INT; Mixed[2] at 8 } resized to 56: 6 + 30
   * bytes and 2 + 10 elements per item (a pair type counts two). */
  {
    int bl[2] = {1, 2};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_SHORT_INT, mixed}, s, nested;
    MPI_OK(MPI_Type_create_struct(2, bl, disp, types, &s));
    MPI_OK(MPI_Type_create_resized(s, 0, 8 + 2 * (MPI_Aint)sizeof(Mixed), &nested));
    MPI_OK(MPI_Type_free(&s));
    MPI_OK(MPI_Type_commit(&nested));
    unsigned char raw[128];
    memset(raw, 7, sizeof raw);
    void* room = malloc(4 * 64);
    CHECK(room);
    st = xfer(raw, 36, room, 3, nested, 26);
    expectCounts(&st, nested, 1, 12, "nested struct");
    st = xfer(raw, 36 + 6 + 15 + 4, room, 3, nested, 27);
    expectCounts(&st, nested, MPI_UNDEFINED, 12 + 2 + 5 + 1, "nested struct + 25 bytes");
    st = xfer(raw, 36 + 2, room, 3, nested, 28); /* the short of the pair */
    expectCounts(&st, nested, MPI_UNDEFINED, 13, "nested struct + a short");
    st = xfer(raw, 36 + 3, room, 3, nested, 29);
    expectCounts(&st, nested, MPI_UNDEFINED, MPI_UNDEFINED, "nested struct + 3 bytes");
    /* A vector of the nested type: 2 blocks of 1, stride 2. */
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(2, 1, 2, nested, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    free(room);
    room = malloc(4 * 4 * 64);
    CHECK(room);
    st = xfer(raw, 72 + 36 + 6 + 12, room, 4, vec, 30);
    expectCounts(&st, vec, MPI_UNDEFINED, 24 + 12 + 2 + 2, "vector of nested structs");
    st = xfer(raw, 0, room, 4, vec, 31);
    expectCounts(&st, vec, 0, 0, "zero bytes as vector of nested structs");
    free(room);
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&nested));
  }

  /* Pair types count two basic elements (MPICH's get-elements-pairtype):
   * a {double, int, double} received as MPI_DOUBLE_INTs is 3 elements. */
  {
    struct {
      double a;
      int b;
    } pairs[2];
    unsigned char raw[20];
    double a = 1.5, c = 2.5;
    int b = 7;
    memcpy(raw, &a, 8);
    memcpy(raw + 8, &b, 4);
    memcpy(raw + 12, &c, 8);
    st = xfer(raw, 20, pairs, 2, MPI_DOUBLE_INT, 32);
    expectCounts(&st, MPI_DOUBLE_INT, MPI_UNDEFINED, 3, "double, int, double as DOUBLE_INTs");
    CHECK(pairs[0].a == 1.5 && pairs[0].b == 7 && pairs[1].a == 2.5);
    st = xfer(raw, 12, pairs, 2, MPI_DOUBLE_INT, 33);
    expectCounts(&st, MPI_DOUBLE_INT, 1, 2, "one DOUBLE_INT");
    st = xfer(raw, 10, pairs, 2, MPI_DOUBLE_INT, 34);
    expectCounts(&st, MPI_DOUBLE_INT, MPI_UNDEFINED, MPI_UNDEFINED, "10 bytes as DOUBLE_INT");
    st = xfer(raw, 16, pairs, 2, MPI_2INT, 35);
    expectCounts(&st, MPI_2INT, 2, 4, "four ints as 2INTs");
  }

  /* Past the eager limit: kMany items as bytes plus a partial item, then as
   * the struct type, received into room for one more (probed first). */
  st = xfer(stream, kMany * 15 - 15 + 13, items, kMany + 1, mixed, 36);
  expectCounts(&st, mixed, MPI_UNDEFINED, (kMany - 1) * 5 + 3, "large, partial last item");
  checkMixed(&items[kMany / 2], kMany / 2, "large, partial last item");
  {
    Mixed* out = malloc(sizeof(Mixed) * kMany);
    CHECK(out);
    for (int k = 0; k < kMany; ++k) {
      out[k].i = k;
      out[k].d = k + 0.25;
      for (int c = 0; c < 3; ++c) out[k].c[c] = (char)('a' + (k + c) % 26);
    }
    MPI_Request sr;
    MPI_OK(MPI_Isend(out, kMany, mixed, right, 37, MPI_COMM_WORLD, &sr));
    MPI_OK(MPI_Probe(left, 37, MPI_COMM_WORLD, &st));
    expectCounts(&st, mixed, kMany, kMany * 5, "large, probed");
    memset(items, 0, sizeof(Mixed) * (kMany + 1));
    MPI_OK(MPI_Recv(items, kMany + 1, mixed, left, 37, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    expectCounts(&st, mixed, kMany, kMany * 5, "large, as the struct");
    for (int k = 0; k < kMany; k += 997) checkMixed(&items[k], k, "large, as the struct");
    checkMixed(&items[kMany - 1], kMany - 1, "large, as the struct");
    free(out);
  }
  free(items);
  free(stream);
  MPI_OK(MPI_Type_free(&mixed));
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

  mixedStructs();

  /* MPI_PROC_NULL: count 0. */
  MPI_OK(MPI_Recv(ibuf, 5, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
  expectCounts(&st, MPI_INT, 0, 0, "PROC_NULL");

  MPI_OK(MPI_Type_free(&three));
  MPI_OK(MPI_Type_free(&vec));
  p2p_barrier(MPI_COMM_WORLD);
  p2p_done();
  return 0;
}
