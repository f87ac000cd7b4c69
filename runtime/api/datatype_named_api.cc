// Functions that answer with a predefined (or permanent) datatype rather
// than build one: MPI_Type_match_size, MPI_Type_create_f90_{integer,real,
// complex}, MPI_Type_get_value_index.
//
// Choices where the standard leaves room (Loom has no Fortran bindings, so
// the C types are the natural answers):
// - match_size returns the C type of that size (MPI_INT8_T..MPI_INT64_T,
//   MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE and their complexes), falling
//   back to the sized Fortran types (MPI_INTEGER16, MPI_REAL2, MPI_COMPLEX4)
//   for sizes no C type has; MPI_ERR_ARG when nothing matches.
// - create_f90_* picks the smallest C type with at least the requested
//   decimal precision p and exponent range r (as Fortran's
//   SELECTED_*_KIND does) and returns a permanent type with its layout and
//   combiner MPI_COMBINER_F90_*, the same handle for the same arguments;
//   it cannot be freed. MPI_ERR_ARG when no type is precise enough.
// - get_value_index returns the predefined pair type (MPI_FLOAT_INT, ...,
//   MPI_2INTEGER) for a value/index pair that has one, MPI_DATATYPE_NULL
//   for any other pair of valid types.
#include <mpi.h>

#include <cfloat>
#include <complex>

#include "api/handles_datatype.h"
#include "api/runtime.h"

using loom::Datatype;
using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toDatatype;
using loom::api::toHandle;

namespace {

struct Candidate {
  MPI_Datatype type;
  int digits;  // decimal precision (reals) or decimal range (integers)
  int range;   // decimal exponent range (reals)
};

// Fortran's RANGE of a C floating type: the smaller of the two decimal
// exponent limits.
constexpr int range(int min10, int max10) { return -min10 < max10 ? -min10 : max10; }

const Candidate kReals[] = {
    {MPI_FLOAT, FLT_DIG, range(FLT_MIN_10_EXP, FLT_MAX_10_EXP)},
    {MPI_DOUBLE, DBL_DIG, range(DBL_MIN_10_EXP, DBL_MAX_10_EXP)},
    {MPI_LONG_DOUBLE, LDBL_DIG, range(LDBL_MIN_10_EXP, LDBL_MAX_10_EXP)},
};
const Candidate kComplexes[] = {
    {MPI_C_FLOAT_COMPLEX, FLT_DIG, range(FLT_MIN_10_EXP, FLT_MAX_10_EXP)},
    {MPI_C_DOUBLE_COMPLEX, DBL_DIG, range(DBL_MIN_10_EXP, DBL_MAX_10_EXP)},
    {MPI_C_LONG_DOUBLE_COMPLEX, LDBL_DIG, range(LDBL_MIN_10_EXP, LDBL_MAX_10_EXP)},
};
// An n-byte two's complement integer holds every value below 10^r for
// r <= floor(log10(2^(8n-1))): 2, 4, 9, 18.
const Candidate kIntegers[] = {
    {MPI_INT8_T, 2, 0}, {MPI_INT16_T, 4, 0}, {MPI_INT32_T, 9, 0}, {MPI_INT64_T, 18, 0}};

int f90Real(const char* fn, int combiner, int p, int r, MPI_Datatype* newtype,
            const Candidate (&table)[3]) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!newtype) return raise(nullptr, errorf(MPI_ERR_ARG, "newtype is NULL"), fn);
  if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
    return raise(nullptr, errorf(MPI_ERR_ARG, "p and r are both MPI_UNDEFINED"), fn);
  for (const Candidate& c : table) {
    if ((p == MPI_UNDEFINED || p <= c.digits) && (r == MPI_UNDEFINED || r <= c.range)) {
      Datatype* base = toDatatype(c.type);
      *newtype = toHandle(loom::typeF90(combiner, p, r, base));
      return MPI_SUCCESS;
    }
  }
  return raise(nullptr, errorf(MPI_ERR_ARG, "no floating type has precision %d and range %d", p,
                               r), fn);
}

}  // namespace

extern "C" int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  return f90Real("MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, p, r, newtype, kReals);
}
LOOM_WEAK_ALIAS(MPI_Type_create_f90_real)

extern "C" int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  return f90Real("MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, p, r, newtype,
                 kComplexes);
}
LOOM_WEAK_ALIAS(MPI_Type_create_f90_complex)

extern "C" int PMPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  const char* fn = "MPI_Type_create_f90_integer";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!newtype) return raise(nullptr, errorf(MPI_ERR_ARG, "newtype is NULL"), fn);
  if (r == MPI_UNDEFINED) return raise(nullptr, errorf(MPI_ERR_ARG, "r is MPI_UNDEFINED"), fn);
  for (const Candidate& c : kIntegers) {
    if (r <= c.digits) {
      *newtype = toHandle(loom::typeF90(MPI_COMBINER_F90_INTEGER, 0, r, toDatatype(c.type)));
      return MPI_SUCCESS;
    }
  }
  return raise(nullptr, errorf(MPI_ERR_ARG, "no integer type has a decimal range of %d", r), fn);
}
LOOM_WEAK_ALIAS(MPI_Type_create_f90_integer)

extern "C" int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  const char* fn = "MPI_Type_match_size";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!datatype) return raise(nullptr, errorf(MPI_ERR_ARG, "datatype is NULL"), fn);
  static const MPI_Datatype integers[] = {MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T,
                                          MPI_INTEGER16};
  static const MPI_Datatype reals[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_REAL2};
  static const MPI_Datatype complexes[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                                           MPI_C_LONG_DOUBLE_COMPLEX, MPI_COMPLEX4};
  const MPI_Datatype* list;
  size_t n;
  switch (typeclass) {
    case MPI_TYPECLASS_INTEGER: list = integers; n = std::size(integers); break;
    case MPI_TYPECLASS_REAL: list = reals; n = std::size(reals); break;
    case MPI_TYPECLASS_COMPLEX: list = complexes; n = std::size(complexes); break;
    default:
      return raise(nullptr, errorf(MPI_ERR_ARG, "typeclass %d is not an MPI_TYPECLASS_* value",
                                   typeclass), fn);
  }
  for (size_t i = 0; i < n; ++i) {
    if (toDatatype(list[i])->size() == size) {
      *datatype = list[i];
      return MPI_SUCCESS;
    }
  }
  return raise(nullptr, errorf(MPI_ERR_ARG, "no predefined type of this class has %d bytes", size),
               fn);
}
LOOM_WEAK_ALIAS(MPI_Type_match_size)

extern "C" int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                                         MPI_Datatype* pair_type) {
  const char* fn = "MPI_Type_get_value_index";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!toDatatype(value_type))
    return raise(nullptr, errorf(MPI_ERR_TYPE, "value_type is not a valid datatype"), fn);
  if (!toDatatype(index_type))
    return raise(nullptr, errorf(MPI_ERR_TYPE, "index_type is not a valid datatype"), fn);
  if (!pair_type) return raise(nullptr, errorf(MPI_ERR_ARG, "pair_type is NULL"), fn);
  static const MPI_Datatype pairs[][3] = {
      {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
      {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
      {MPI_LONG, MPI_INT, MPI_LONG_INT},
      {MPI_INT, MPI_INT, MPI_2INT},
      {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
      {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
      {MPI_REAL, MPI_REAL, MPI_2REAL},
      {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
      {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
  };
  *pair_type = MPI_DATATYPE_NULL;
  for (const auto& p : pairs)
    if (p[0] == value_type && p[1] == index_type) *pair_type = p[2];
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Type_get_value_index)
