// Datatype entry points: constructors, commit/free, queries, names, and
// MPI_Pack/MPI_Unpack. The engine is runtime/core/datatype.*; this file
// checks the C arguments, converts them, and raises errors.
//
// Attributes: MPI_Type_dup runs the copy callbacks and MPI_Type_free the
// delete callbacks (type_attr_api.cc).
//
// Errors: an invalid, null or (where the standard requires it) uncommitted
// datatype is MPI_ERR_TYPE, a negative count MPI_ERR_COUNT, any other bad
// argument MPI_ERR_ARG. Functions without a communicator raise on
// MPI_COMM_WORLD's handler; MPI_Pack/MPI_Unpack/MPI_Pack_size on `comm`'s.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>
#include <vector>

#include "api/handles_datatype.h"
#include "api/large_count.h"
#include "api/runtime.h"
#include "core/device_stage.h"

using loom::Datatype;
using loom::errorf;
using loom::Status;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toDatatype;
using loom::api::toHandle;

namespace {

Status typeError(MPI_Datatype h, const char* what) {
  if (h == MPI_DATATYPE_NULL) return errorf(MPI_ERR_TYPE, "%s is MPI_DATATYPE_NULL", what);
  return errorf(MPI_ERR_TYPE, "%s is not a valid datatype", what);
}

// An int, MPI_Aint or MPI_Count array as the int64_t the core takes.
template <class T>
std::vector<int64_t> widen(const T* a, int64_t n) {
  return std::vector<int64_t>(a, a + n);
}

// The checks every constructor shares, then `build(old, &result)`.
template <class Build>
int construct(const char* fn, int64_t count, MPI_Datatype oldtype, MPI_Datatype* newtype,
              const void* const* arrays, int narrays, Build&& build) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (count < 0)
    return raise(nullptr,
                 errorf(MPI_ERR_COUNT, "count is negative (%lld)", static_cast<long long>(count)),
                 fn);
  if (!newtype) return raise(nullptr, errorf(MPI_ERR_ARG, "newtype is NULL"), fn);
  for (int i = 0; i < narrays; ++i)
    if (count > 0 && !arrays[i]) return raise(nullptr, errorf(MPI_ERR_ARG, "an array argument is NULL"), fn);
  Datatype* old = toDatatype(oldtype);
  if (!old) return raise(nullptr, typeError(oldtype, "oldtype"), fn);
  Datatype* result = nullptr;
  Status st = build(old, &result);
  if (!st) return raise(nullptr, st, fn);
  *newtype = toHandle(result);
  return MPI_SUCCESS;
}

// A committed datatype argument of a query or of MPI_Pack; nullptr after
// raising (the error code is then in *rc).
Datatype* queryType(MPI_Datatype h, const char* fn, loom::Comm* comm, int* rc) {
  Datatype* t = toDatatype(h);
  if (!t) *rc = raise(comm, typeError(h, "datatype"), fn);
  return t;
}

}  // namespace

// Every constructor exists twice: MPI_Type_foo with int counts (and int
// or MPI_Aint displacements) and MPI_Type_foo_c with MPI_Count ones. Both
// call one implementation below, templated on the array element types
// where the two forms' arrays differ (api/large_count.h).

namespace {

int contiguous(const char* fn, int64_t count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct(fn, count, oldtype, newtype, nullptr, 0, [&](Datatype* old, Datatype** out) {
    return loom::typeContiguous(count, old, out);
  });
}

int vector(const char* fn, int64_t count, int64_t blocklength, int64_t stride, bool bytes,
           MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct(fn, count, oldtype, newtype, nullptr, 0, [&](Datatype* old, Datatype** out) {
    return bytes ? loom::typeHvector(count, blocklength, stride, old, out)
                 : loom::typeVector(count, blocklength, stride, old, out);
  });
}

template <class B, class D>
int indexed(const char* fn, int64_t count, const B* blocklengths, const D* displacements,
            bool bytes, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  const void* arrays[] = {blocklengths, displacements};
  return construct(fn, count, oldtype, newtype, arrays, 2, [&](Datatype* old, Datatype** out) {
    return bytes ? loom::typeHindexed(widen(blocklengths, count), widen(displacements, count),
                                      old, out)
                 : loom::typeIndexed(widen(blocklengths, count), widen(displacements, count),
                                     old, out);
  });
}

template <class D>
int indexedBlock(const char* fn, int64_t count, int64_t blocklength, const D* displacements,
                 bool bytes, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  const void* arrays[] = {displacements};
  return construct(fn, count, oldtype, newtype, arrays, 1, [&](Datatype* old, Datatype** out) {
    return bytes ? loom::typeHindexedBlock(blocklength, widen(displacements, count), old, out)
                 : loom::typeIndexedBlock(blocklength, widen(displacements, count), old, out);
  });
}

template <class B, class D>
int structType(const char* fn, int64_t count, const B* array_of_blocklengths,
               const D* array_of_displacements, const MPI_Datatype* array_of_types,
               MPI_Datatype* newtype) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (count < 0)
    return raise(nullptr,
                 errorf(MPI_ERR_COUNT, "count is negative (%lld)", static_cast<long long>(count)),
                 fn);
  if (!newtype) return raise(nullptr, errorf(MPI_ERR_ARG, "newtype is NULL"), fn);
  if (count > 0 && (!array_of_blocklengths || !array_of_displacements || !array_of_types))
    return raise(nullptr, errorf(MPI_ERR_ARG, "an array argument is NULL"), fn);
  std::vector<Datatype*> types(count);
  for (int64_t i = 0; i < count; ++i) {
    types[i] = toDatatype(array_of_types[i]);
    if (!types[i])
      return raise(nullptr,
                   errorf(MPI_ERR_TYPE, "array_of_types[%lld] is not a valid datatype",
                          static_cast<long long>(i)),
                   fn);
  }
  Datatype* result = nullptr;
  Status st = loom::typeStruct(widen(array_of_blocklengths, count),
                               widen(array_of_displacements, count), types, &result);
  if (!st) return raise(nullptr, st, fn);
  *newtype = toHandle(result);
  return MPI_SUCCESS;
}

int resized(const char* fn, MPI_Datatype oldtype, int64_t lb, int64_t extent,
            MPI_Datatype* newtype) {
  return construct(fn, 0, oldtype, newtype, nullptr, 0, [&](Datatype* old, Datatype** out) {
    return loom::typeResized(old, lb, extent, out);
  });
}

template <class I>
int subarray(const char* fn, int ndims, const I* array_of_sizes, const I* array_of_subsizes,
             const I* array_of_starts, int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (ndims <= 0) {
    if (!requireRunning(fn)) return MPI_ERR_OTHER;
    return raise(nullptr, errorf(MPI_ERR_ARG, "ndims must be positive (got %d)", ndims), fn);
  }
  const void* arrays[] = {array_of_sizes, array_of_subsizes, array_of_starts};
  return construct(fn, ndims, oldtype, newtype, arrays, 3, [&](Datatype* old, Datatype** out) {
    return loom::typeSubarray(widen(array_of_sizes, ndims), widen(array_of_subsizes, ndims),
                              widen(array_of_starts, ndims), order, old, out);
  });
}

// MPI_Type_create_darray and its _c form: `G` is int or MPI_Count (the
// global sizes; the other arrays are int in both).
template <class G>
int darray(const char* fn, int size, int rank, int ndims, const G* gsizes, const int* distribs,
           const int* dargs, const int* psizes, int order, MPI_Datatype oldtype,
           MPI_Datatype* newtype) {
  if (ndims <= 0) {
    if (!requireRunning(fn)) return MPI_ERR_OTHER;
    return raise(nullptr, errorf(MPI_ERR_ARG, "ndims must be positive (got %d)", ndims), fn);
  }
  const void* arrays[] = {gsizes, distribs, dargs, psizes};
  return construct(fn, ndims, oldtype, newtype, arrays, 4, [&](Datatype* old, Datatype** out) {
    using S = std::span<const int>;
    return loom::typeDarray(size, rank, widen(gsizes, ndims), S(distribs, ndims),
                            S(dargs, ndims), S(psizes, ndims), order, old, out);
  });
}

}  // namespace

extern "C" int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return contiguous("MPI_Type_contiguous", count, oldtype, newtype);
}
LOOM_WEAK_ALIAS(MPI_Type_contiguous)
LOOM_LARGE_COUNT(Type_contiguous, (MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype),
                 contiguous("MPI_Type_contiguous_c", count, oldtype, newtype))

extern "C" int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                                MPI_Datatype* newtype) {
  return vector("MPI_Type_vector", count, blocklength, stride, false, oldtype, newtype);
}
LOOM_WEAK_ALIAS(MPI_Type_vector)
LOOM_LARGE_COUNT(Type_vector,
                 (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                  MPI_Datatype* newtype),
                 vector("MPI_Type_vector_c", count, blocklength, stride, false, oldtype, newtype))

extern "C" int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                                        MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return vector("MPI_Type_create_hvector", count, blocklength, stride, true, oldtype, newtype);
}
LOOM_WEAK_ALIAS(MPI_Type_create_hvector)
LOOM_LARGE_COUNT(Type_create_hvector,
                 (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                  MPI_Datatype* newtype),
                 vector("MPI_Type_create_hvector_c", count, blocklength, stride, true, oldtype,
                        newtype))

extern "C" int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                                 const int array_of_displacements[], MPI_Datatype oldtype,
                                 MPI_Datatype* newtype) {
  return indexed("MPI_Type_indexed", count, array_of_blocklengths, array_of_displacements, false,
                 oldtype, newtype);
}
LOOM_WEAK_ALIAS(MPI_Type_indexed)
LOOM_LARGE_COUNT(Type_indexed,
                 (MPI_Count count, const MPI_Count array_of_blocklengths[],
                  const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                  MPI_Datatype* newtype),
                 indexed("MPI_Type_indexed_c", count, array_of_blocklengths,
                         array_of_displacements, false, oldtype, newtype))

extern "C" int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                                         const MPI_Aint array_of_displacements[],
                                         MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return indexed("MPI_Type_create_hindexed", count, array_of_blocklengths,
                 array_of_displacements, true, oldtype, newtype);
}
LOOM_WEAK_ALIAS(MPI_Type_create_hindexed)
LOOM_LARGE_COUNT(Type_create_hindexed,
                 (MPI_Count count, const MPI_Count array_of_blocklengths[],
                  const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                  MPI_Datatype* newtype),
                 indexed("MPI_Type_create_hindexed_c", count, array_of_blocklengths,
                         array_of_displacements, true, oldtype, newtype))

extern "C" int PMPI_Type_create_indexed_block(int count, int blocklength,
                                              const int array_of_displacements[],
                                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return indexedBlock("MPI_Type_create_indexed_block", count, blocklength,
                      array_of_displacements, false, oldtype, newtype);
}
LOOM_WEAK_ALIAS(MPI_Type_create_indexed_block)
LOOM_LARGE_COUNT(Type_create_indexed_block,
                 (MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                  MPI_Datatype oldtype, MPI_Datatype* newtype),
                 indexedBlock("MPI_Type_create_indexed_block_c", count, blocklength,
                              array_of_displacements, false, oldtype, newtype))

extern "C" int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                               const MPI_Aint array_of_displacements[],
                                               MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return indexedBlock("MPI_Type_create_hindexed_block", count, blocklength,
                      array_of_displacements, true, oldtype, newtype);
}
LOOM_WEAK_ALIAS(MPI_Type_create_hindexed_block)
LOOM_LARGE_COUNT(Type_create_hindexed_block,
                 (MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[],
                  MPI_Datatype oldtype, MPI_Datatype* newtype),
                 indexedBlock("MPI_Type_create_hindexed_block_c", count, blocklength,
                              array_of_displacements, true, oldtype, newtype))

extern "C" int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                                       const MPI_Aint array_of_displacements[],
                                       const MPI_Datatype array_of_types[],
                                       MPI_Datatype* newtype) {
  return structType("MPI_Type_create_struct", count, array_of_blocklengths,
                    array_of_displacements, array_of_types, newtype);
}
LOOM_WEAK_ALIAS(MPI_Type_create_struct)
LOOM_LARGE_COUNT(Type_create_struct,
                 (MPI_Count count, const MPI_Count array_of_blocklengths[],
                  const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
                  MPI_Datatype* newtype),
                 structType("MPI_Type_create_struct_c", count, array_of_blocklengths,
                            array_of_displacements, array_of_types, newtype))

extern "C" int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                                        MPI_Datatype* newtype) {
  return resized("MPI_Type_create_resized", oldtype, lb, extent, newtype);
}
LOOM_WEAK_ALIAS(MPI_Type_create_resized)
LOOM_LARGE_COUNT(Type_create_resized,
                 (MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype* newtype),
                 resized("MPI_Type_create_resized_c", oldtype, lb, extent, newtype))

extern "C" int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                                         const int array_of_subsizes[],
                                         const int array_of_starts[], int order,
                                         MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return subarray("MPI_Type_create_subarray", ndims, array_of_sizes, array_of_subsizes,
                  array_of_starts, order, oldtype, newtype);
}
LOOM_WEAK_ALIAS(MPI_Type_create_subarray)
LOOM_LARGE_COUNT(Type_create_subarray,
                 (int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
                  const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                  MPI_Datatype* newtype),
                 subarray("MPI_Type_create_subarray_c", ndims, array_of_sizes, array_of_subsizes,
                          array_of_starts, order, oldtype, newtype))

extern "C" int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                                       const int array_of_distribs[], const int array_of_dargs[],
                                       const int array_of_psizes[], int order,
                                       MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return darray("MPI_Type_create_darray", size, rank, ndims, array_of_gsizes, array_of_distribs,
                array_of_dargs, array_of_psizes, order, oldtype, newtype);
}
LOOM_WEAK_ALIAS(MPI_Type_create_darray)
LOOM_LARGE_COUNT(Type_create_darray,
                 (int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                  const int array_of_distribs[], const int array_of_dargs[],
                  const int array_of_psizes[], int order, MPI_Datatype oldtype,
                  MPI_Datatype* newtype),
                 darray("MPI_Type_create_darray_c", size, rank, ndims, array_of_gsizes,
                        array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype,
                        newtype))

extern "C" int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct("MPI_Type_dup", 0, oldtype, newtype, nullptr, 0,
                   [&](Datatype* old, Datatype** out) {
                     LOOM_TRY(loom::typeDup(old, out));
                     // The new type gets the attributes the copy callbacks
                     // hand over; if one fails, no new type.
                     Status st = loom::api::copyTypeAttributes(old, oldtype, *out);
                     if (!st) {
                       (void)loom::api::deleteTypeAttributes(*out, toHandle(*out));
                       (*out)->release();
                       *out = nullptr;
                     }
                     return st;
                   });
}
LOOM_WEAK_ALIAS(MPI_Type_dup)

extern "C" int PMPI_Type_commit(MPI_Datatype* datatype) {
  const char* fn = "MPI_Type_commit";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!datatype) return raise(nullptr, errorf(MPI_ERR_ARG, "datatype is NULL"), fn);
  Datatype* t = toDatatype(*datatype);
  if (!t) return raise(nullptr, typeError(*datatype, "datatype"), fn);
  t->commit();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Type_commit)

extern "C" int PMPI_Type_free(MPI_Datatype* datatype) {
  const char* fn = "MPI_Type_free";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!datatype) return raise(nullptr, errorf(MPI_ERR_ARG, "datatype is NULL"), fn);
  Datatype* t = toDatatype(*datatype);
  if (!t) return raise(nullptr, typeError(*datatype, "datatype"), fn);
  if (t->isPermanent())
    return raise(nullptr, errorf(MPI_ERR_TYPE, "%s is predefined and cannot be freed",
                                 t->isPredefined() ? t->name().c_str()
                                                   : "a type from MPI_Type_create_f90_*"), fn);
  // Delete callbacks first; if one fails, the type stays.
  Status st = loom::api::deleteTypeAttributes(t, *datatype);
  if (!st) return raise(nullptr, st, fn);
  // Operations in flight and types built from this one hold their own
  // references; the object goes when the last of them lets go.
  t->markUserFreed();
  t->release();
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Type_free)

// --- Queries ---------------------------------------------------------------

namespace {

// Shared body of the size/extent queries: checks, then fill(t).
template <class Fill>
int query(const char* fn, MPI_Datatype datatype, const void* out1, const void* out2,
          Fill&& fill) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  Datatype* t = queryType(datatype, fn, nullptr, &rc);
  if (!t) return rc;
  if (!out1 || !out2) return raise(nullptr, errorf(MPI_ERR_ARG, "an output argument is NULL"), fn);
  fill(t);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  return query("MPI_Type_size", datatype, size, size, [&](Datatype* t) {
    *size = t->size() > INT_MAX ? MPI_UNDEFINED : static_cast<int>(t->size());
  });
}
LOOM_WEAK_ALIAS(MPI_Type_size)

extern "C" int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  return query("MPI_Type_size_x", datatype, size, size,
               [&](Datatype* t) { *size = t->size(); });
}
LOOM_WEAK_ALIAS(MPI_Type_size_x)

extern "C" int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count* size) {
  return query("MPI_Type_size_c", datatype, size, size,
               [&](Datatype* t) { *size = t->size(); });
}
LOOM_WEAK_ALIAS(MPI_Type_size_c)

extern "C" int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  return query("MPI_Type_get_extent", datatype, lb, extent, [&](Datatype* t) {
    *lb = t->lb();
    *extent = t->extent();
  });
}
LOOM_WEAK_ALIAS(MPI_Type_get_extent)

extern "C" int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  return query("MPI_Type_get_extent_x", datatype, lb, extent, [&](Datatype* t) {
    *lb = t->lb();
    *extent = t->extent();
  });
}
LOOM_WEAK_ALIAS(MPI_Type_get_extent_x)

extern "C" int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  return query("MPI_Type_get_extent_c", datatype, lb, extent, [&](Datatype* t) {
    *lb = t->lb();
    *extent = t->extent();
  });
}
LOOM_WEAK_ALIAS(MPI_Type_get_extent_c)

extern "C" int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb,
                                         MPI_Aint* true_extent) {
  return query("MPI_Type_get_true_extent", datatype, true_lb, true_extent, [&](Datatype* t) {
    *true_lb = t->trueLb();
    *true_extent = t->trueExtent();
  });
}
LOOM_WEAK_ALIAS(MPI_Type_get_true_extent)

extern "C" int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb,
                                           MPI_Count* true_extent) {
  return query("MPI_Type_get_true_extent_x", datatype, true_lb, true_extent, [&](Datatype* t) {
    *true_lb = t->trueLb();
    *true_extent = t->trueExtent();
  });
}
LOOM_WEAK_ALIAS(MPI_Type_get_true_extent_x)

extern "C" int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count* true_lb,
                                           MPI_Count* true_extent) {
  return query("MPI_Type_get_true_extent_c", datatype, true_lb, true_extent, [&](Datatype* t) {
    *true_lb = t->trueLb();
    *true_extent = t->trueExtent();
  });
}
LOOM_WEAK_ALIAS(MPI_Type_get_true_extent_c)

extern "C" int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  // The null handle has a name too (MPI 4.1: "MPI_DATATYPE_NULL").
  if (datatype == MPI_DATATYPE_NULL && type_name && resultlen &&
      loom::api::requireRunning("MPI_Type_get_name")) {
    std::strcpy(type_name, "MPI_DATATYPE_NULL");
    *resultlen = static_cast<int>(std::strlen(type_name));
    return MPI_SUCCESS;
  }
  return query("MPI_Type_get_name", datatype, type_name, resultlen, [&](Datatype* t) {
    size_t n = std::min<size_t>(t->name().size(), MPI_MAX_OBJECT_NAME - 1);
    std::memcpy(type_name, t->name().data(), n);
    type_name[n] = '\0';
    *resultlen = static_cast<int>(n);
  });
}
LOOM_WEAK_ALIAS(MPI_Type_get_name)

extern "C" int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  return query("MPI_Type_set_name", datatype, type_name, type_name, [&](Datatype* t) {
    t->setName(std::string(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1)));
  });
}
LOOM_WEAK_ALIAS(MPI_Type_set_name)

// --- Pack / unpack ------------------------------------------------------------
//
// Each with its MPI_Count form: one implementation, templated on the type
// of the caller's position or size (int or MPI_Count). A position never
// exceeds the buffer size the caller gave in the same type, so writing it
// back cannot overflow; MPI_Pack_size's int form reports
// MPI_ERR_VALUE_TOO_LARGE for a size above INT_MAX.

namespace {

// Checks shared by MPI_Pack and MPI_Unpack: the communicator, the count,
// the datatype (committed), the position within a buffer of `bufsize` bytes
// and room for `count` elements. Returns the type, or nullptr with *rc set.
Datatype* packArgs(const char* fn, MPI_Comm comm, int64_t count, MPI_Datatype datatype,
                   int64_t bufsize, const int64_t* position, const void* packed, int* rc) {
  loom::Comm* c = loom::api::toComm(comm);
  if (!c) {
    *rc = raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
    return nullptr;
  }
  Status st;
  Datatype* t = toDatatype(datatype);
  auto ll = [](int64_t v) { return static_cast<long long>(v); };
  if (count < 0) st = errorf(MPI_ERR_COUNT, "count is negative (%lld)", ll(count));
  else if (!t) st = typeError(datatype, "datatype");
  else if (!t->isCommitted()) st = errorf(MPI_ERR_TYPE, "datatype is not committed");
  else if (bufsize < 0) st = errorf(MPI_ERR_ARG, "buffer size is negative (%lld)", ll(bufsize));
  else if (!position) st = errorf(MPI_ERR_ARG, "position is NULL");
  else if (*position < 0 || *position > bufsize)
    st = errorf(MPI_ERR_ARG, "position %lld is outside the buffer of %lld bytes", ll(*position),
                ll(bufsize));
  else if (t->packedSize(count) > static_cast<size_t>(bufsize - *position))
    st = errorf(MPI_ERR_TRUNCATE, "%zu bytes do not fit in the %lld bytes left after position %lld",
                t->packedSize(count), ll(bufsize - *position), ll(*position));
  else if (!packed && t->packedSize(count) > 0)
    st = errorf(MPI_ERR_BUFFER, "packed buffer is NULL");
  if (!st) {
    *rc = raise(c, st, fn);
    return nullptr;
  }
  return t;
}

template <class Pos>
int pack(const char* fn, const void* inbuf, int64_t incount, MPI_Datatype datatype, void* outbuf,
         int64_t outsize, Pos* position, MPI_Comm comm) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  int64_t pos = position ? *position : 0;
  Datatype* t = packArgs(fn, comm, incount, datatype, outsize, position ? &pos : nullptr, outbuf,
                         &rc);
  if (!t) return rc;
  size_t n = t->packedSize(incount);
  // Either buffer may be on a GPU (device_stage.h).
  Status st = loom::device::packAny(t, inbuf, incount, static_cast<char*>(outbuf) + pos, n);
  if (!st) return raise(nullptr, st, fn);
  *position = static_cast<Pos>(pos + static_cast<int64_t>(n));
  return MPI_SUCCESS;
}

template <class Pos>
int unpack(const char* fn, const void* inbuf, int64_t insize, Pos* position, void* outbuf,
           int64_t outcount, MPI_Datatype datatype, MPI_Comm comm) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  int64_t pos = position ? *position : 0;
  Datatype* t = packArgs(fn, comm, outcount, datatype, insize, position ? &pos : nullptr, inbuf,
                         &rc);
  if (!t) return rc;
  size_t n = t->packedSize(outcount);
  Status st =
      loom::device::unpackAny(t, outbuf, outcount, static_cast<const char*>(inbuf) + pos, n);
  if (!st) return raise(nullptr, st, fn);
  *position = static_cast<Pos>(pos + static_cast<int64_t>(n));
  return MPI_SUCCESS;
}

template <class Size>
int packSize(const char* fn, int64_t incount, MPI_Datatype datatype, MPI_Comm comm, Size* size) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  loom::Comm* c = loom::api::toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (incount < 0)
    return raise(c,
                 errorf(MPI_ERR_COUNT, "incount is negative (%lld)",
                        static_cast<long long>(incount)),
                 fn);
  Datatype* t = toDatatype(datatype);
  if (!t) return raise(c, typeError(datatype, "datatype"), fn);
  if (!t->isCommitted()) return raise(c, errorf(MPI_ERR_TYPE, "datatype is not committed"), fn);
  if (!size) return raise(c, errorf(MPI_ERR_ARG, "size is NULL"), fn);
  // count * size in 128 bits: a product past INT64_MAX is too large for
  // either form, not a wrapped value.
  const __int128 n = static_cast<__int128>(incount) * t->size();
  if (n > std::numeric_limits<Size>::max())
    return raise(c,
                 errorf(MPI_ERR_VALUE_TOO_LARGE, "packed size %lld does not fit %s",
                        static_cast<long long>(std::min<__int128>(n, INT64_MAX)),
                        sizeof(Size) < sizeof(int64_t) ? "an int (use MPI_Pack_size_c)"
                                                       : "an MPI_Count"),
                 fn);
  *size = static_cast<Size>(n);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                         int outsize, int* position, MPI_Comm comm) {
  return pack("MPI_Pack", inbuf, incount, datatype, outbuf, outsize, position, comm);
}
LOOM_WEAK_ALIAS(MPI_Pack)
LOOM_LARGE_COUNT(Pack,
                 (const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf,
                  MPI_Count outsize, MPI_Count* position, MPI_Comm comm),
                 pack("MPI_Pack_c", inbuf, incount, datatype, outbuf, outsize, position, comm))

extern "C" int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf,
                           int outcount, MPI_Datatype datatype, MPI_Comm comm) {
  return unpack("MPI_Unpack", inbuf, insize, position, outbuf, outcount, datatype, comm);
}
LOOM_WEAK_ALIAS(MPI_Unpack)
LOOM_LARGE_COUNT(Unpack,
                 (const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf,
                  MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm),
                 unpack("MPI_Unpack_c", inbuf, insize, position, outbuf, outcount, datatype,
                        comm))

extern "C" int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  return packSize("MPI_Pack_size", incount, datatype, comm, size);
}
LOOM_WEAK_ALIAS(MPI_Pack_size)
LOOM_LARGE_COUNT(Pack_size, (MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
                             MPI_Count* size),
                 packSize("MPI_Pack_size_c", incount, datatype, comm, size))

// --- Addresses: pure arithmetic, callable at any time. -------------------------

extern "C" int PMPI_Get_address(const void* location, MPI_Aint* address) {
  if (!address) {
    if (!requireRunning("MPI_Get_address")) return MPI_ERR_OTHER;
    return raise(nullptr, errorf(MPI_ERR_ARG, "address is NULL"), "MPI_Get_address");
  }
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Get_address)

extern "C" MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  return static_cast<MPI_Aint>(static_cast<uintptr_t>(base) + static_cast<uintptr_t>(disp));
}
LOOM_WEAK_ALIAS(MPI_Aint_add)

extern "C" MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return static_cast<MPI_Aint>(static_cast<uintptr_t>(addr1) - static_cast<uintptr_t>(addr2));
}
LOOM_WEAK_ALIAS(MPI_Aint_diff)
