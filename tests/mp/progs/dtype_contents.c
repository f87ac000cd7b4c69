/* MPI_Type_get_envelope / MPI_Type_get_contents (and the _c forms) for
 * every combiner Loom's constructors produce: the envelope counts, the
 * recorded arguments, and a round trip that rebuilds each type from its
 * contents and checks that it packs the same bytes as the original.
 * Wrong arguments return the right error class under MPI_ERRORS_RETURN. */
#include <string.h>

#include "comm_checks.h"

#define BUF (1 << 16)
static unsigned char src[BUF];

/* Packs 2 elements of t from the middle of src (types may have lb < 0). */
static int packOf(MPI_Datatype t, unsigned char* out, int cap) {
  int pos = 0;
  OK(MPI_Pack(src + BUF / 2, 2, t, out, cap, &pos, MPI_COMM_WORLD));
  return pos;
}

/* Predefined, or from MPI_Type_create_f90_*: returned as itself, not freed. */
static int isPermanent(MPI_Datatype t) {
  int ni, na, nd, comb;
  OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
  return comb == MPI_COMBINER_NAMED ||
         (comb >= MPI_COMBINER_F90_REAL && comb <= MPI_COMBINER_F90_INTEGER);
}

/* Rebuilds t from its contents with the constructor its combiner names. */
static MPI_Datatype rebuild(MPI_Datatype t) {
  int ni, na, nd, comb;
  OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
  MPI_Count cni, cna, cnc, cnd;
  int ccomb;
  OK(MPI_Type_get_envelope_c(t, &cni, &cna, &cnc, &cnd, &ccomb));
  CHECK(cni == ni && cna == na && cnc == 0 && cnd == nd && ccomb == comb);
  int ints[256];
  MPI_Aint addrs[256];
  MPI_Datatype types[64];
  CHECK(ni <= 256 && na <= 256 && nd <= 64);
  OK(MPI_Type_get_contents(t, ni, na, nd, ints, addrs, types));
  /* The _c form gives the same values for a type built by an int constructor. */
  int ints2[256];
  MPI_Aint addrs2[256];
  MPI_Count counts2[1];
  MPI_Datatype types2[64];
  OK(MPI_Type_get_contents_c(t, ni, na, 0, nd, ints2, addrs2, counts2, types2));
  CHECK(memcmp(ints, ints2, ni * sizeof(int)) == 0);
  CHECK(memcmp(addrs, addrs2, na * sizeof(MPI_Aint)) == 0);
  for (int i = 0; i < nd; ++i)
    if (!isPermanent(types2[i])) OK(MPI_Type_free(&types2[i]));

  MPI_Datatype r = MPI_DATATYPE_NULL;
  switch (comb) {
    case MPI_COMBINER_DUP: CHECK(ni == 0 && na == 0 && nd == 1); OK(MPI_Type_dup(types[0], &r)); break;
    case MPI_COMBINER_CONTIGUOUS:
      CHECK(ni == 1 && na == 0 && nd == 1);
      OK(MPI_Type_contiguous(ints[0], types[0], &r));
      break;
    case MPI_COMBINER_VECTOR:
      CHECK(ni == 3 && na == 0 && nd == 1);
      OK(MPI_Type_vector(ints[0], ints[1], ints[2], types[0], &r));
      break;
    case MPI_COMBINER_HVECTOR:
      CHECK(ni == 2 && na == 1 && nd == 1);
      OK(MPI_Type_create_hvector(ints[0], ints[1], addrs[0], types[0], &r));
      break;
    case MPI_COMBINER_INDEXED:
      CHECK(ni == 2 * ints[0] + 1 && na == 0 && nd == 1);
      OK(MPI_Type_indexed(ints[0], ints + 1, ints + 1 + ints[0], types[0], &r));
      break;
    case MPI_COMBINER_HINDEXED:
      CHECK(ni == ints[0] + 1 && na == ints[0] && nd == 1);
      OK(MPI_Type_create_hindexed(ints[0], ints + 1, addrs, types[0], &r));
      break;
    case MPI_COMBINER_INDEXED_BLOCK:
      CHECK(ni == ints[0] + 2 && na == 0 && nd == 1);
      OK(MPI_Type_create_indexed_block(ints[0], ints[1], ints + 2, types[0], &r));
      break;
    case MPI_COMBINER_HINDEXED_BLOCK:
      CHECK(ni == 2 && na == ints[0] && nd == 1);
      OK(MPI_Type_create_hindexed_block(ints[0], ints[1], addrs, types[0], &r));
      break;
    case MPI_COMBINER_STRUCT:
      CHECK(ni == ints[0] + 1 && na == ints[0] && nd == ints[0]);
      OK(MPI_Type_create_struct(ints[0], ints + 1, addrs, types, &r));
      break;
    case MPI_COMBINER_SUBARRAY: {
      int n = ints[0];
      CHECK(ni == 3 * n + 2 && na == 0 && nd == 1);
      OK(MPI_Type_create_subarray(n, ints + 1, ints + 1 + n, ints + 1 + 2 * n, ints[1 + 3 * n],
                                  types[0], &r));
      break;
    }
    case MPI_COMBINER_DARRAY: {
      int n = ints[2];
      CHECK(ni == 4 * n + 4 && na == 0 && nd == 1);
      OK(MPI_Type_create_darray(ints[0], ints[1], n, ints + 3, ints + 3 + n, ints + 3 + 2 * n,
                                ints + 3 + 3 * n, ints[3 + 4 * n], types[0], &r));
      break;
    }
    case MPI_COMBINER_RESIZED:
      CHECK(ni == 0 && na == 2 && nd == 1);
      OK(MPI_Type_create_resized(types[0], addrs[0], addrs[1], &r));
      break;
    case MPI_COMBINER_F90_REAL:
      CHECK(ni == 2 && na == 0 && nd == 0);
      OK(MPI_Type_create_f90_real(ints[0], ints[1], &r));
      break;
    case MPI_COMBINER_F90_COMPLEX:
      CHECK(ni == 2 && na == 0 && nd == 0);
      OK(MPI_Type_create_f90_complex(ints[0], ints[1], &r));
      break;
    case MPI_COMBINER_F90_INTEGER:
      CHECK(ni == 1 && na == 0 && nd == 0);
      OK(MPI_Type_create_f90_integer(ints[0], &r));
      break;
    default: CHECK(0 && "unexpected combiner");
  }
  for (int i = 0; i < nd; ++i)
    if (!isPermanent(types[i])) OK(MPI_Type_free(&types[i]));
  int rc;
  OK(MPI_Type_get_envelope(r, &ni, &na, &nd, &rc));
  CHECK(rc == comb);
  return r;
}

/* The round trip: t (uncommitted, owned by the caller and freed here). */
static void roundTrip(MPI_Datatype t, int expectCombiner) {
  int ni, na, nd, comb;
  OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
  CHECK(comb == expectCombiner);
  MPI_Datatype r = rebuild(t);
  OK(MPI_Type_commit(&t));
  OK(MPI_Type_commit(&r));
  MPI_Aint lb1, ex1, lb2, ex2;
  OK(MPI_Type_get_extent(t, &lb1, &ex1));
  OK(MPI_Type_get_extent(r, &lb2, &ex2));
  CHECK(lb1 == lb2 && ex1 == ex2);
  static unsigned char a[BUF], b[BUF];
  int na1 = packOf(t, a, BUF), nb1 = packOf(r, b, BUF);
  CHECK(na1 == nb1 && memcmp(a, b, na1) == 0);
  if (!isPermanent(t)) OK(MPI_Type_free(&t));
  if (!isPermanent(r)) OK(MPI_Type_free(&r));
}

int main(int argc, char** argv) {
  prog = "dtype_contents";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  int wsize;
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  for (int i = 0; i < BUF; ++i) src[i] = (unsigned char)(i * 7 + i / 251);

  /* Named types: an empty envelope; no contents. */
  int ni, na, nd, comb;
  OK(MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nd, &comb));
  CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0);
  OK(MPI_Type_get_envelope(MPI_FLOAT_INT, &ni, &na, &nd, &comb));
  CHECK(comb == MPI_COMBINER_NAMED);
  int ints[8];
  MPI_Aint addrs[8];
  MPI_Datatype types[8];
  CHECK(MPI_Type_get_contents(MPI_INT, 8, 8, 8, ints, addrs, types) == MPI_ERR_TYPE);

  /* Recorded values, checked one by one for a vector. */
  MPI_Datatype v;
  OK(MPI_Type_vector(3, 2, 5, MPI_INT, &v));
  OK(MPI_Type_get_envelope(v, &ni, &na, &nd, &comb));
  CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1);
  OK(MPI_Type_get_contents(v, 3, 0, 1, ints, addrs, types));
  CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && types[0] == MPI_INT);
  MPI_Count c4[4];
  int cc;
  OK(MPI_Type_get_envelope_c(v, &c4[0], &c4[1], &c4[2], &c4[3], &cc));
  CHECK(c4[0] == 3 && c4[1] == 0 && c4[2] == 0 && c4[3] == 1 && cc == MPI_COMBINER_VECTOR);

  /* Wrong arguments. */
  CHECK(MPI_Type_get_envelope(MPI_DATATYPE_NULL, &ni, &na, &nd, &comb) == MPI_ERR_TYPE);
  CHECK(MPI_Type_get_envelope_c(MPI_DATATYPE_NULL, &c4[0], &c4[1], &c4[2], &c4[3], &cc) ==
        MPI_ERR_TYPE);
  CHECK(MPI_Type_get_envelope(v, NULL, &na, &nd, &comb) == MPI_ERR_ARG);
  CHECK(MPI_Type_get_contents(v, 2, 0, 1, ints, addrs, types) == MPI_ERR_ARG);
  CHECK(MPI_Type_get_contents(v, 3, 0, 0, ints, addrs, types) == MPI_ERR_ARG);
  CHECK(MPI_Type_get_contents(v, 3, 0, 1, NULL, addrs, types) == MPI_ERR_ARG);
  CHECK(MPI_Type_get_contents(MPI_DATATYPE_NULL, 3, 0, 1, ints, addrs, types) == MPI_ERR_TYPE);
  CHECK(MPI_Type_get_contents_c(MPI_INT, 1, 1, 1, 1, ints, addrs, c4, types) == MPI_ERR_TYPE);

  /* A returned derived type is a new handle: freeing it leaves the type it
   * describes alive, and a type freed by the user can still be described
   * through a type built on it. */
  MPI_Datatype c;
  OK(MPI_Type_contiguous(2, v, &c));
  OK(MPI_Type_free(&v));
  OK(MPI_Type_get_contents(c, 1, 0, 1, ints, addrs, types));
  CHECK(ints[0] == 2);
  MPI_Datatype inner = types[0];
  OK(MPI_Type_get_envelope(inner, &ni, &na, &nd, &comb));
  CHECK(comb == MPI_COMBINER_VECTOR && ni == 3);
  OK(MPI_Type_get_contents(c, 1, 0, 1, ints, addrs, types));
  OK(MPI_Type_free(&types[0]));
  OK(MPI_Type_get_envelope(inner, &ni, &na, &nd, &comb)); /* still valid */
  OK(MPI_Type_free(&inner));
  OK(MPI_Type_get_envelope(c, &ni, &na, &nd, &comb));
  CHECK(comb == MPI_COMBINER_CONTIGUOUS);

  /* Every combiner, rebuilt from its contents. */
  MPI_Datatype t, base;
  OK(MPI_Type_vector(2, 3, 4, MPI_SHORT, &base)); /* a derived base type */
  OK(MPI_Type_dup(MPI_DOUBLE, &t)); roundTrip(t, MPI_COMBINER_DUP);
  OK(MPI_Type_dup(base, &t)); roundTrip(t, MPI_COMBINER_DUP);
  OK(MPI_Type_contiguous(5, base, &t)); roundTrip(t, MPI_COMBINER_CONTIGUOUS);
  OK(MPI_Type_vector(4, 2, -3, MPI_INT, &t)); roundTrip(t, MPI_COMBINER_VECTOR);
  OK(MPI_Type_create_hvector(3, 2, 40, base, &t)); roundTrip(t, MPI_COMBINER_HVECTOR);
  {
    int bl[3] = {1, 3, 2}, dp[3] = {7, 0, -4};
    OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &t)); roundTrip(t, MPI_COMBINER_INDEXED);
    MPI_Aint hd[3] = {100, 4, -60};
    OK(MPI_Type_create_hindexed(3, bl, hd, base, &t)); roundTrip(t, MPI_COMBINER_HINDEXED);
    OK(MPI_Type_create_indexed_block(3, 2, dp, MPI_DOUBLE, &t));
    roundTrip(t, MPI_COMBINER_INDEXED_BLOCK);
    OK(MPI_Type_create_hindexed_block(3, 2, hd, MPI_CHAR, &t));
    roundTrip(t, MPI_COMBINER_HINDEXED_BLOCK);
    MPI_Datatype st[3] = {MPI_CHAR, base, MPI_DOUBLE};
    MPI_Aint sd[3] = {0, 8, 64};
    OK(MPI_Type_create_struct(3, bl, sd, st, &t)); roundTrip(t, MPI_COMBINER_STRUCT);
  }
  {
    int sizes[3] = {4, 5, 6}, subs[3] = {2, 3, 2}, starts[3] = {1, 2, 3};
    OK(MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t));
    roundTrip(t, MPI_COMBINER_SUBARRAY);
    OK(MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_FORTRAN, base, &t));
    roundTrip(t, MPI_COMBINER_SUBARRAY);
    int gs[2] = {7, 9}, ds[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        da[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 3};
    for (int r = 0; r < 6; ++r) {
      OK(MPI_Type_create_darray(6, r, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_FLOAT, &t));
      roundTrip(t, MPI_COMBINER_DARRAY);
      OK(MPI_Type_create_darray(6, r, 2, gs, ds, da, ps, MPI_ORDER_FORTRAN, base, &t));
      roundTrip(t, MPI_COMBINER_DARRAY);
    }
  }
  OK(MPI_Type_create_resized(base, -8, 100, &t)); roundTrip(t, MPI_COMBINER_RESIZED);
  OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t)); roundTrip(t, MPI_COMBINER_F90_REAL);
  OK(MPI_Type_create_f90_complex(12, 100, &t)); roundTrip(t, MPI_COMBINER_F90_COMPLEX);
  OK(MPI_Type_create_f90_integer(5, &t)); roundTrip(t, MPI_COMBINER_F90_INTEGER);
  /* Contents of a type made of an F90 type: that type comes back as itself. */
  {
    MPI_Datatype f, cf;
    OK(MPI_Type_create_f90_integer(3, &f));
    OK(MPI_Type_contiguous(4, f, &cf));
    OK(MPI_Type_get_contents(cf, 1, 0, 1, ints, addrs, types));
    CHECK(types[0] == f);
    CHECK(MPI_Type_free(&f) == MPI_ERR_TYPE); /* permanent, like a predefined type */
    roundTrip(cf, MPI_COMBINER_CONTIGUOUS);
  }
  /* A deeper nest: struct of resized of subarray of vector. */
  {
    int sizes[2] = {6, 6}, subs[2] = {3, 2}, starts[2] = {2, 1};
    MPI_Datatype sa, rs, st;
    OK(MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, base, &sa));
    OK(MPI_Type_create_resized(sa, 4, 1000, &rs));
    int bl[2] = {2, 1};
    MPI_Aint dp[2] = {0, 3000};
    MPI_Datatype ty[2] = {rs, MPI_INT};
    OK(MPI_Type_create_struct(2, bl, dp, ty, &st));
    OK(MPI_Type_free(&sa));
    OK(MPI_Type_free(&rs));
    roundTrip(st, MPI_COMBINER_STRUCT);
  }
  OK(MPI_Type_free(&base));
  OK(MPI_Type_free(&c));

  passed();
  MPI_Finalize();
  (void)wsize;
  return 0;
}
