/* MPI_Type_match_size, MPI_Type_create_f90_{integer,real,complex},
 * MPI_Type_get_value_index and type names (predefined and derived),
 * including wrong arguments under MPI_ERRORS_RETURN; the f90 and pair
 * types are also used in reductions across the ranks. */
#include <float.h>
#include <string.h>

#include "comm_checks.h"

static int sizeOf(MPI_Datatype t) {
  int s;
  OK(MPI_Type_size(t, &s));
  return s;
}

static void checkName(MPI_Datatype t, const char* want) {
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  OK(MPI_Type_get_name(t, name, &len));
  CHECK(strcmp(name, want) == 0 && len == (int)strlen(want));
}

int main(int argc, char** argv) {
  prog = "dtype_named";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  int wsize;
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype t, u;

  /* --- match_size */
  int isizes[] = {1, 2, 4, 8};
  MPI_Datatype ints[] = {MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T};
  for (int i = 0; i < 4; ++i) {
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, isizes[i], &t));
    CHECK(t == ints[i] && sizeOf(t) == isizes[i]);
  }
  OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, (int)sizeof(float), &t));
  CHECK(t == MPI_FLOAT);
  OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, (int)sizeof(double), &t));
  CHECK(t == MPI_DOUBLE);
  OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, (int)sizeof(long double), &t));
  CHECK(t == MPI_LONG_DOUBLE);
  OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 2 * (int)sizeof(double), &t));
  CHECK(t == MPI_C_DOUBLE_COMPLEX);
  OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 8, &t));
  CHECK(t == MPI_C_FLOAT_COMPLEX);
  OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &t));
  CHECK(sizeOf(t) == 16);
  CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t) == MPI_ERR_ARG);
  CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 0, &t) == MPI_ERR_ARG);
  CHECK(MPI_Type_match_size(12345, 4, &t) == MPI_ERR_ARG);
  CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, NULL) == MPI_ERR_ARG);

  /* --- f90 types: the smallest C type with the precision and range */
  OK(MPI_Type_create_f90_integer(2, &t));
  CHECK(sizeOf(t) == 1);
  OK(MPI_Type_create_f90_integer(4, &t));
  CHECK(sizeOf(t) == 2);
  OK(MPI_Type_create_f90_integer(9, &t));
  CHECK(sizeOf(t) == 4);
  OK(MPI_Type_create_f90_integer(10, &t));
  CHECK(sizeOf(t) == 8);
  OK(MPI_Type_create_f90_integer(10, &u));
  CHECK(t == u); /* the same handle for the same arguments */
  CHECK(MPI_Type_create_f90_integer(19, &t) == MPI_ERR_ARG);
  CHECK(MPI_Type_create_f90_integer(MPI_UNDEFINED, &t) == MPI_ERR_ARG);
  CHECK(MPI_Type_create_f90_integer(5, NULL) == MPI_ERR_ARG);
  OK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t));
  CHECK(sizeOf(t) == 4);
  OK(MPI_Type_create_f90_real(7, MPI_UNDEFINED, &t));
  CHECK(sizeOf(t) == 8);
  OK(MPI_Type_create_f90_real(MPI_UNDEFINED, 37, &t));
  CHECK(sizeOf(t) == 4);
  OK(MPI_Type_create_f90_real(MPI_UNDEFINED, 38, &t));
  CHECK(sizeOf(t) == 8);
  OK(MPI_Type_create_f90_real(DBL_DIG + 1, MPI_UNDEFINED, &t));
  CHECK(sizeOf(t) == (int)sizeof(long double));
  CHECK(MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t) == MPI_ERR_ARG);
  CHECK(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t) == MPI_ERR_ARG);
  OK(MPI_Type_create_f90_complex(15, 307, &t));
  CHECK(sizeOf(t) == 16);
  OK(MPI_Type_create_f90_complex(3, MPI_UNDEFINED, &t));
  CHECK(sizeOf(t) == 8);
  /* Envelope and contents; permanent: freeing is an error. */
  OK(MPI_Type_create_f90_real(10, 200, &t));
  int ni, na, nd, comb, iv[2];
  MPI_Aint av[1];
  MPI_Datatype dv[1];
  OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
  CHECK(comb == MPI_COMBINER_F90_REAL && ni == 2 && na == 0 && nd == 0);
  OK(MPI_Type_get_contents(t, 2, 0, 0, iv, av, dv));
  CHECK(iv[0] == 10 && iv[1] == 200);
  OK(MPI_Type_create_f90_integer(7, &u));
  OK(MPI_Type_get_envelope(u, &ni, &na, &nd, &comb));
  CHECK(comb == MPI_COMBINER_F90_INTEGER && ni == 1 && na == 0 && nd == 0);
  OK(MPI_Type_get_contents(u, 1, 0, 0, iv, av, dv));
  CHECK(iv[0] == 7);
  CHECK(MPI_Type_free(&t) == MPI_ERR_TYPE);
  CHECK(t != MPI_DATATYPE_NULL);
  /* Usable in communication and reductions like the C type it matches. */
  {
    double in = wrank + 0.5, out = 0;
    OK(MPI_Allreduce(&in, &out, 1, t, MPI_SUM, MPI_COMM_WORLD));
    CHECK(out == wsize * (wsize - 1) / 2.0 + 0.5 * wsize);
    int32_t i32 = wrank + 1, s32 = 0;
    OK(MPI_Allreduce(&i32, &s32, 1, u, MPI_MAX, MPI_COMM_WORLD));
    CHECK(s32 == wsize);
  }

  /* --- value_index */
  OK(MPI_Type_get_value_index(MPI_FLOAT, MPI_INT, &t));
  CHECK(t == MPI_FLOAT_INT);
  OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t));
  CHECK(t == MPI_DOUBLE_INT);
  OK(MPI_Type_get_value_index(MPI_INT, MPI_INT, &t));
  CHECK(t == MPI_2INT);
  OK(MPI_Type_get_value_index(MPI_LONG_DOUBLE, MPI_INT, &t));
  CHECK(t == MPI_LONG_DOUBLE_INT);
  OK(MPI_Type_get_value_index(MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, &t));
  CHECK(t == MPI_2DOUBLE_PRECISION);
  OK(MPI_Type_get_value_index(MPI_FLOAT, MPI_FLOAT, &t));
  CHECK(t == MPI_DATATYPE_NULL); /* no predefined pair */
  OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_LONG, &t));
  CHECK(t == MPI_DATATYPE_NULL);
  CHECK(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &t) == MPI_ERR_TYPE);
  CHECK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_DATATYPE_NULL, &t) == MPI_ERR_TYPE);
  CHECK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, NULL) == MPI_ERR_ARG);
  {
    struct { double v; int i; } in = {(double)((wrank * 5) % 3), wrank}, out;
    OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t));
    OK(MPI_Allreduce(&in, &out, 1, t, MPI_MAXLOC, MPI_COMM_WORLD));
    double best = -1;
    int at = -1;
    for (int r = 0; r < wsize; ++r)
      if ((r * 5) % 3 > best) best = (r * 5) % 3, at = r;
    CHECK(out.v == best && out.i == at);
  }

  /* --- names: predefined types are named and renamable; derived types
   * start unnamed; a dup does not inherit the name. */
  checkName(MPI_INT, "MPI_INT");
  checkName(MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
  checkName(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG");
  OK(MPI_Type_set_name(MPI_FLOAT, "my float"));
  checkName(MPI_FLOAT, "my float");
  OK(MPI_Type_set_name(MPI_FLOAT, "MPI_FLOAT"));
  checkName(MPI_FLOAT, "MPI_FLOAT");
  OK(MPI_Type_contiguous(3, MPI_INT, &t));
  checkName(t, "");
  OK(MPI_Type_set_name(t, "three ints"));
  checkName(t, "three ints");
  OK(MPI_Type_dup(t, &u));
  checkName(u, "");
  {
    char longName[MPI_MAX_OBJECT_NAME + 50];
    memset(longName, 'x', sizeof longName - 1);
    longName[sizeof longName - 1] = 0;
    OK(MPI_Type_set_name(u, longName));
    char got[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Type_get_name(u, got, &len));
    CHECK(len == MPI_MAX_OBJECT_NAME - 1 && (int)strlen(got) == len); /* truncated */
  }
  char nm[MPI_MAX_OBJECT_NAME];
  int len;
  /* The null handle's name (MPI 4.1), as MPICH and Open MPI give it. */
  OK(MPI_Type_get_name(MPI_DATATYPE_NULL, nm, &len));
  CHECK(strcmp(nm, "MPI_DATATYPE_NULL") == 0 && len == (int)strlen(nm));
  CHECK(MPI_Type_set_name(MPI_DATATYPE_NULL, "x") == MPI_ERR_TYPE);
  CHECK(MPI_Type_set_name(t, NULL) == MPI_ERR_ARG);
  OK(MPI_Type_free(&t));
  OK(MPI_Type_free(&u));

  passed();
  MPI_Finalize();
  return 0;
}
