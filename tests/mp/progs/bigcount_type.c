/* The MPI 4.0 large-count (_c) datatype functions: every constructor built
 * through both forms from the same arguments gives the same size, extents
 * and packed bytes; the pair is usable in a message (a ring: each rank
 * sends to rank+1 with the _c type and receives with the int one);
 * MPI_Pack_c / MPI_Unpack_c / MPI_Pack_size_c match their int forms.
 * Sizes above INT_MAX (types only, no buffers): the int queries say
 * MPI_UNDEFINED or MPI_ERR_VALUE_TOO_LARGE, the _c ones the value. Bad
 * arguments get the same error class from both forms. */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "comm_checks.h"

static int size, next, prev;

enum { NSRC = 4096 };
static int src[NSRC], prevSrc[NSRC]; /* ours, and what rank-1 sends */

#define EXPECT(call, klass)         \
  do {                              \
    int rc_ = (call), cls_ = -1;    \
    CHECK(rc_ != MPI_SUCCESS);      \
    OK(MPI_Error_class(rc_, &cls_)); \
    CHECK(cls_ == (klass));         \
  } while (0)

/* Commits both, compares them, frees both. */
static void same(MPI_Datatype a, MPI_Datatype b, int count) {
  OK(MPI_Type_commit(&a));
  OK(MPI_Type_commit(&b));
  int sa, sb;
  MPI_Count sc;
  OK(MPI_Type_size(a, &sa));
  OK(MPI_Type_size(b, &sb));
  OK(MPI_Type_size_c(b, &sc));
  CHECK(sa == sb && sc == sb);
  MPI_Aint lba, exa, lbb, exb, tla, tea, tlb, teb;
  OK(MPI_Type_get_extent(a, &lba, &exa));
  OK(MPI_Type_get_extent(b, &lbb, &exb));
  OK(MPI_Type_get_true_extent(a, &tla, &tea));
  OK(MPI_Type_get_true_extent(b, &tlb, &teb));
  CHECK(lba == lbb && exa == exb && tla == tlb && tea == teb);

  /* Packed bytes: MPI_Pack of the int type == MPI_Pack_c of the _c type. */
  int psize;
  MPI_Count psizec;
  OK(MPI_Pack_size(count, a, MPI_COMM_WORLD, &psize));
  OK(MPI_Pack_size_c(count, b, MPI_COMM_WORLD, &psizec));
  CHECK(psizec == psize);
  static char pa[NSRC * sizeof(int)], pb[NSRC * sizeof(int)];
  int pos = 0;
  MPI_Count posc = 0;
  OK(MPI_Pack(src, count, a, pa, (int)sizeof pa, &pos, MPI_COMM_WORLD));
  OK(MPI_Pack_c(src, count, b, pb, (MPI_Count)sizeof pb, &posc, MPI_COMM_WORLD));
  CHECK(pos == psize && posc == psize);
  CHECK(memcmp(pa, pb, (size_t)pos) == 0);

  /* Unpack_c into a zeroed buffer, then repack: the same bytes again. */
  static int back[NSRC];
  memset(back, 0, sizeof back);
  posc = 0;
  OK(MPI_Unpack_c(pb, (MPI_Count)sizeof pb, &posc, back, count, b, MPI_COMM_WORLD));
  CHECK(posc == psize);
  pos = 0;
  OK(MPI_Pack(back, count, a, pa, (int)sizeof pa, &pos, MPI_COMM_WORLD));
  CHECK(memcmp(pa, pb, (size_t)pos) == 0);

  /* On the wire: send with the _c type, receive with the int one. */
  static int rbuf[NSRC];
  memset(rbuf, 0, sizeof rbuf);
  MPI_Request r;
  MPI_Status st;
  OK(MPI_Irecv_c(rbuf, count, a, prev, 1, MPI_COMM_WORLD, &r));
  OK(MPI_Send_c(src, count, b, next, 1, MPI_COMM_WORLD));
  OK(MPI_Wait(&r, &st));
  MPI_Count got;
  OK(MPI_Get_count_c(&st, a, &got));
  CHECK(got == count);
  pos = 0;
  OK(MPI_Pack(rbuf, count, a, pb, (int)sizeof pb, &pos, MPI_COMM_WORLD));
  pos = 0;
  OK(MPI_Pack(prevSrc, count, a, pa, (int)sizeof pa, &pos, MPI_COMM_WORLD));
  CHECK(memcmp(pa, pb, (size_t)pos) == 0);

  OK(MPI_Type_free(&a));
  OK(MPI_Type_free(&b));
}

static void constructors(void) {
  MPI_Datatype a, b;
  OK(MPI_Type_contiguous(7, MPI_INT, &a));
  OK(MPI_Type_contiguous_c(7, MPI_INT, &b));
  same(a, b, 3);

  OK(MPI_Type_vector(5, 2, 3, MPI_INT, &a));
  OK(MPI_Type_vector_c(5, 2, 3, MPI_INT, &b));
  same(a, b, 4);

  OK(MPI_Type_create_hvector(4, 3, 20, MPI_INT, &a));
  OK(MPI_Type_create_hvector_c(4, 3, 20, MPI_INT, &b));
  same(a, b, 5);

  {
    int bl[3] = {2, 1, 3}, di[3] = {0, 5, 9};
    MPI_Count blc[3] = {2, 1, 3}, dic[3] = {0, 5, 9};
    OK(MPI_Type_indexed(3, bl, di, MPI_INT, &a));
    OK(MPI_Type_indexed_c(3, blc, dic, MPI_INT, &b));
    same(a, b, 6);
  }
  {
    int bl[3] = {1, 2, 1};
    MPI_Aint di[3] = {4, 12, 40};
    MPI_Count blc[3] = {1, 2, 1}, dic[3] = {4, 12, 40};
    OK(MPI_Type_create_hindexed(3, bl, di, MPI_INT, &a));
    OK(MPI_Type_create_hindexed_c(3, blc, dic, MPI_INT, &b));
    same(a, b, 7);
  }
  {
    int di[4] = {1, 4, 6, 11};
    MPI_Count dic[4] = {1, 4, 6, 11};
    OK(MPI_Type_create_indexed_block(4, 2, di, MPI_INT, &a));
    OK(MPI_Type_create_indexed_block_c(4, 2, dic, MPI_INT, &b));
    same(a, b, 8);
  }
  {
    MPI_Aint di[3] = {0, 16, 44};
    MPI_Count dic[3] = {0, 16, 44};
    OK(MPI_Type_create_hindexed_block(3, 2, di, MPI_INT, &a));
    OK(MPI_Type_create_hindexed_block_c(3, 2, dic, MPI_INT, &b));
    same(a, b, 9);
  }
  {
    int bl[3] = {1, 2, 3};
    MPI_Aint di[3] = {0, 8, 24};
    MPI_Count blc[3] = {1, 2, 3}, dic[3] = {0, 8, 24};
    MPI_Datatype ty[3] = {MPI_INT, MPI_SHORT, MPI_CHAR};
    OK(MPI_Type_create_struct(3, bl, di, ty, &a));
    OK(MPI_Type_create_struct_c(3, blc, dic, ty, &b));
    same(a, b, 10);
  }
  {
    MPI_Datatype v;
    OK(MPI_Type_vector(3, 1, 2, MPI_INT, &v));
    OK(MPI_Type_create_resized(v, 4, 40, &a));
    OK(MPI_Type_create_resized_c(v, 4, 40, &b));
    OK(MPI_Type_free(&v));
    same(a, b, 11);
  }
  {
    int sz[2] = {8, 10}, sub[2] = {3, 4}, st[2] = {2, 5};
    MPI_Count szc[2] = {8, 10}, subc[2] = {3, 4}, stc[2] = {2, 5};
    OK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &a));
    OK(MPI_Type_create_subarray_c(2, szc, subc, stc, MPI_ORDER_C, MPI_INT, &b));
    same(a, b, 12);
    OK(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &a));
    OK(MPI_Type_create_subarray_c(2, szc, subc, stc, MPI_ORDER_FORTRAN, MPI_INT, &b));
    same(a, b, 13);
  }
}

/* Types larger than INT_MAX bytes or elements (no buffers of that size). */
static void large(void) {
  const MPI_Count big = ((MPI_Count)1 << 31) + 65536;
  MPI_Datatype t;
  int si, cls;
  MPI_Count sc, lb, ext;

  OK(MPI_Type_contiguous_c(big, MPI_BYTE, &t));
  OK(MPI_Type_commit(&t));
  OK(MPI_Type_size(t, &si));
  OK(MPI_Type_size_c(t, &sc));
  CHECK(si == MPI_UNDEFINED && sc == big);
  OK(MPI_Type_get_extent_c(t, &lb, &ext));
  CHECK(lb == 0 && ext == big);
  int pi = -1;
  EXPECT(MPI_Pack_size(1, t, MPI_COMM_WORLD, &pi), MPI_ERR_VALUE_TOO_LARGE);
  CHECK(pi == -1);
  OK(MPI_Pack_size_c(3, t, MPI_COMM_WORLD, &sc));
  CHECK(sc == 3 * big);
  OK(MPI_Type_free(&t));
  /* count * size past INT64_MAX: too large for the _c form too. */
  OK(MPI_Type_contiguous_c((MPI_Count)1 << 40, MPI_DOUBLE, &t));
  OK(MPI_Type_commit(&t));
  EXPECT(MPI_Pack_size_c((MPI_Count)1 << 40, t, MPI_COMM_WORLD, &sc), MPI_ERR_VALUE_TOO_LARGE);
  OK(MPI_Type_free(&t));

  OK(MPI_Pack_size_c(big, MPI_BYTE, MPI_COMM_WORLD, &sc));
  CHECK(sc == big);
  EXPECT(MPI_Pack_size(INT_MAX, MPI_INT, MPI_COMM_WORLD, &pi), MPI_ERR_VALUE_TOO_LARGE);

  /* 3e9 one-byte blocks with stride 2. */
  const MPI_Count n = 3000000000LL;
  OK(MPI_Type_vector_c(n, 1, 2, MPI_BYTE, &t));
  OK(MPI_Type_commit(&t));
  OK(MPI_Type_size(t, &si));
  OK(MPI_Type_size_c(t, &sc));
  CHECK(si == MPI_UNDEFINED && sc == n);
  OK(MPI_Type_get_extent_c(t, &lb, &ext));
  CHECK(lb == 0 && ext == 2 * n - 1);
  OK(MPI_Type_free(&t));

  /* A stride past 4 GiB and a resized extent of 32 GiB. */
  OK(MPI_Type_create_hvector_c(2, 1, (MPI_Count)1 << 33, MPI_INT, &t));
  OK(MPI_Type_get_extent_c(t, &lb, &ext));
  CHECK(lb == 0 && ext == ((MPI_Count)1 << 33) + 4);
  MPI_Datatype r;
  OK(MPI_Type_create_resized_c(t, -8, (MPI_Count)1 << 35, &r));
  OK(MPI_Type_get_extent_c(r, &lb, &ext));
  CHECK(lb == -8 && ext == (MPI_Count)1 << 35);
  OK(MPI_Type_free(&r));
  OK(MPI_Type_free(&t));

  /* Displacements past INT_MAX in the indexed forms. */
  MPI_Count blc[2] = {1, 1}, dic[2] = {0, (MPI_Count)1 << 32};
  OK(MPI_Type_indexed_c(2, blc, dic, MPI_INT, &t));
  OK(MPI_Type_get_extent_c(t, &lb, &ext));
  CHECK(ext == ((MPI_Count)1 << 34) + 4);
  OK(MPI_Type_free(&t));
  OK(MPI_Type_create_hindexed_c(2, blc, dic, MPI_INT, &t));
  OK(MPI_Type_get_extent_c(t, &lb, &ext));
  CHECK(ext == ((MPI_Count)1 << 32) + 4);
  OK(MPI_Type_free(&t));
}

static void errors(void) {
  const MPI_Count huge = -((MPI_Count)1 << 40);
  MPI_Datatype t;
  MPI_Count one[1] = {1}, c;
  MPI_Datatype ty[1] = {MPI_INT};
  EXPECT(MPI_Type_contiguous_c(huge, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT(MPI_Type_contiguous_c(1, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
  EXPECT(MPI_Type_contiguous_c(1, MPI_INT, NULL), MPI_ERR_ARG);
  EXPECT(MPI_Type_vector_c(huge, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT(MPI_Type_create_hvector_c(-1, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT(MPI_Type_indexed_c(huge, one, one, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT(MPI_Type_indexed_c(1, NULL, one, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT(MPI_Type_create_hindexed_c(1, one, NULL, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT(MPI_Type_create_indexed_block_c(-2, 1, one, MPI_INT, &t), MPI_ERR_COUNT);
  EXPECT(MPI_Type_create_hindexed_block_c(1, 1, NULL, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT(MPI_Type_create_struct_c(huge, one, one, ty, &t), MPI_ERR_COUNT);
  ty[0] = MPI_DATATYPE_NULL;
  EXPECT(MPI_Type_create_struct_c(1, one, one, ty, &t), MPI_ERR_TYPE);
  EXPECT(MPI_Type_create_resized_c(MPI_DATATYPE_NULL, 0, 4, &t), MPI_ERR_TYPE);
  EXPECT(MPI_Type_create_subarray_c(0, one, one, one, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
  /* Sizes or bounds past 2^63 bytes: refused, not wrapped. */
  const MPI_Count p40 = (MPI_Count)1 << 40, p62 = (MPI_Count)1 << 62;
  MPI_Count far[1] = {p62};
  EXPECT(MPI_Type_contiguous_c(p62, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT(MPI_Type_vector_c(p40, 1, p40, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT(MPI_Type_create_hvector_c(3, 1, p62, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT(MPI_Type_indexed_c(1, one, far, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT(MPI_Type_create_indexed_block_c(1, 1, far, MPI_INT, &t), MPI_ERR_ARG);
  far[0] = INT64_MAX - 2;
  EXPECT(MPI_Type_create_hindexed_c(1, one, far, MPI_INT, &t), MPI_ERR_ARG);
  EXPECT(MPI_Type_create_resized_c(MPI_INT, INT64_MAX - 2, 8, &t), MPI_ERR_ARG);

  int buf[4] = {1, 2, 3, 4};
  char packed[64];
  MPI_Count pos = 0;
  EXPECT(MPI_Pack_c(buf, huge, MPI_INT, packed, 64, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT(MPI_Pack_c(buf, 4, MPI_INT, packed, 8, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
  EXPECT(MPI_Pack_c(buf, 4, MPI_INT, packed, -1, &pos, MPI_COMM_WORLD), MPI_ERR_ARG);
  EXPECT(MPI_Pack_c(buf, 4, MPI_INT, packed, 64, NULL, MPI_COMM_WORLD), MPI_ERR_ARG);
  pos = 65;
  EXPECT(MPI_Pack_c(buf, 1, MPI_INT, packed, 64, &pos, MPI_COMM_WORLD), MPI_ERR_ARG);
  CHECK(pos == 65);
  pos = 0;
  EXPECT(MPI_Pack_c(buf, 1, MPI_INT, packed, 64, &pos, MPI_COMM_NULL), MPI_ERR_COMM);
  EXPECT(MPI_Unpack_c(packed, 64, &pos, buf, huge, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
  EXPECT(MPI_Unpack_c(packed, 4, &pos, buf, 2, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
  EXPECT(MPI_Pack_size_c(huge, MPI_INT, MPI_COMM_WORLD, &c), MPI_ERR_COUNT);
  EXPECT(MPI_Pack_size_c(1, MPI_DATATYPE_NULL, MPI_COMM_WORLD, &c), MPI_ERR_TYPE);
  EXPECT(MPI_Pack_size_c(1, MPI_INT, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  /* The position advances the same in both forms, starting mid-buffer. */
  int ipos = 4;
  pos = 4;
  OK(MPI_Pack(buf, 3, MPI_INT, packed, 64, &ipos, MPI_COMM_WORLD));
  OK(MPI_Pack_c(buf, 3, MPI_INT, packed, 64, &pos, MPI_COMM_WORLD));
  CHECK(ipos == 16 && pos == 16);
}

int main(int argc, char** argv) {
  prog = "bigcount_type";
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  next = (wrank + 1) % size;
  prev = (wrank + size - 1) % size;
  for (int i = 0; i < NSRC; ++i) {
    src[i] = wrank * 1000000 + i;
    prevSrc[i] = prev * 1000000 + i;
  }
  constructors();
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  large();
  errors();
  OK(MPI_Barrier(MPI_COMM_WORLD));
  passed();
  OK(MPI_Finalize());
  return 0;
}
