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

#include <climits>
#include <cstring>
#include <vector>

#include "api/handles_datatype.h"
#include "api/runtime.h"

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

std::vector<int64_t> widen(const int* a, int n) { return std::vector<int64_t>(a, a + n); }
std::vector<int64_t> widen(const MPI_Aint* a, int n) { return std::vector<int64_t>(a, a + n); }

// The checks every constructor shares, then `build(old, &result)`.
template <class Build>
int construct(const char* fn, int count, MPI_Datatype oldtype, MPI_Datatype* newtype,
              const void* const* arrays, int narrays, Build&& build) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (count < 0) return raise(nullptr, errorf(MPI_ERR_COUNT, "count is negative (%d)", count), fn);
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

extern "C" int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct("MPI_Type_contiguous", count, oldtype, newtype, nullptr, 0,
                   [&](Datatype* old, Datatype** out) {
                     return loom::typeContiguous(count, old, out);
                   });
}
LOOM_WEAK_ALIAS(MPI_Type_contiguous)

extern "C" int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                                MPI_Datatype* newtype) {
  return construct("MPI_Type_vector", count, oldtype, newtype, nullptr, 0,
                   [&](Datatype* old, Datatype** out) {
                     return loom::typeVector(count, blocklength, stride, old, out);
                   });
}
LOOM_WEAK_ALIAS(MPI_Type_vector)

extern "C" int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                                        MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return construct("MPI_Type_create_hvector", count, oldtype, newtype, nullptr, 0,
                   [&](Datatype* old, Datatype** out) {
                     return loom::typeHvector(count, blocklength, stride, old, out);
                   });
}
LOOM_WEAK_ALIAS(MPI_Type_create_hvector)

extern "C" int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                                 const int array_of_displacements[], MPI_Datatype oldtype,
                                 MPI_Datatype* newtype) {
  const void* arrays[] = {array_of_blocklengths, array_of_displacements};
  return construct("MPI_Type_indexed", count, oldtype, newtype, arrays, 2,
                   [&](Datatype* old, Datatype** out) {
                     return loom::typeIndexed(widen(array_of_blocklengths, count),
                                              widen(array_of_displacements, count), old, out);
                   });
}
LOOM_WEAK_ALIAS(MPI_Type_indexed)

extern "C" int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                                         const MPI_Aint array_of_displacements[],
                                         MPI_Datatype oldtype, MPI_Datatype* newtype) {
  const void* arrays[] = {array_of_blocklengths, array_of_displacements};
  return construct("MPI_Type_create_hindexed", count, oldtype, newtype, arrays, 2,
                   [&](Datatype* old, Datatype** out) {
                     return loom::typeHindexed(widen(array_of_blocklengths, count),
                                               widen(array_of_displacements, count), old, out);
                   });
}
LOOM_WEAK_ALIAS(MPI_Type_create_hindexed)

extern "C" int PMPI_Type_create_indexed_block(int count, int blocklength,
                                              const int array_of_displacements[],
                                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  const void* arrays[] = {array_of_displacements};
  return construct("MPI_Type_create_indexed_block", count, oldtype, newtype, arrays, 1,
                   [&](Datatype* old, Datatype** out) {
                     return loom::typeIndexedBlock(blocklength,
                                                   widen(array_of_displacements, count), old, out);
                   });
}
LOOM_WEAK_ALIAS(MPI_Type_create_indexed_block)

extern "C" int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                               const MPI_Aint array_of_displacements[],
                                               MPI_Datatype oldtype, MPI_Datatype* newtype) {
  const void* arrays[] = {array_of_displacements};
  return construct("MPI_Type_create_hindexed_block", count, oldtype, newtype, arrays, 1,
                   [&](Datatype* old, Datatype** out) {
                     return loom::typeHindexedBlock(blocklength,
                                                    widen(array_of_displacements, count), old, out);
                   });
}
LOOM_WEAK_ALIAS(MPI_Type_create_hindexed_block)

extern "C" int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                                       const MPI_Aint array_of_displacements[],
                                       const MPI_Datatype array_of_types[],
                                       MPI_Datatype* newtype) {
  const char* fn = "MPI_Type_create_struct";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (count < 0) return raise(nullptr, errorf(MPI_ERR_COUNT, "count is negative (%d)", count), fn);
  if (!newtype) return raise(nullptr, errorf(MPI_ERR_ARG, "newtype is NULL"), fn);
  if (count > 0 && (!array_of_blocklengths || !array_of_displacements || !array_of_types))
    return raise(nullptr, errorf(MPI_ERR_ARG, "an array argument is NULL"), fn);
  std::vector<Datatype*> types(count);
  for (int i = 0; i < count; ++i) {
    types[i] = toDatatype(array_of_types[i]);
    if (!types[i])
      return raise(nullptr, errorf(MPI_ERR_TYPE, "array_of_types[%d] is not a valid datatype", i),
                   fn);
  }
  Datatype* result = nullptr;
  Status st = loom::typeStruct(widen(array_of_blocklengths, count),
                               widen(array_of_displacements, count), types, &result);
  if (!st) return raise(nullptr, st, fn);
  *newtype = toHandle(result);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Type_create_struct)

extern "C" int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                                        MPI_Datatype* newtype) {
  return construct("MPI_Type_create_resized", 0, oldtype, newtype, nullptr, 0,
                   [&](Datatype* old, Datatype** out) {
                     return loom::typeResized(old, lb, extent, out);
                   });
}
LOOM_WEAK_ALIAS(MPI_Type_create_resized)

extern "C" int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[],
                                         const int array_of_subsizes[],
                                         const int array_of_starts[], int order,
                                         MPI_Datatype oldtype, MPI_Datatype* newtype) {
  const char* fn = "MPI_Type_create_subarray";
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
LOOM_WEAK_ALIAS(MPI_Type_create_subarray)

extern "C" int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                                       const int array_of_distribs[], const int array_of_dargs[],
                                       const int array_of_psizes[], int order,
                                       MPI_Datatype oldtype, MPI_Datatype* newtype) {
  const char* fn = "MPI_Type_create_darray";
  if (ndims <= 0) {
    if (!requireRunning(fn)) return MPI_ERR_OTHER;
    return raise(nullptr, errorf(MPI_ERR_ARG, "ndims must be positive (got %d)", ndims), fn);
  }
  const void* arrays[] = {array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes};
  return construct(fn, ndims, oldtype, newtype, arrays, 4, [&](Datatype* old, Datatype** out) {
    using S = std::span<const int>;
    return loom::typeDarray(size, rank, widen(array_of_gsizes, ndims), S(array_of_distribs, ndims),
                            S(array_of_dargs, ndims), S(array_of_psizes, ndims), order, old, out);
  });
}
LOOM_WEAK_ALIAS(MPI_Type_create_darray)

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

namespace {

// Checks shared by MPI_Pack and MPI_Unpack: the communicator, the count,
// the datatype (committed), the position within a buffer of `bufsize` bytes
// and room for `count` elements. Returns the type, or nullptr with *rc set.
Datatype* packArgs(const char* fn, MPI_Comm comm, int count, MPI_Datatype datatype,
                   int bufsize, const int* position, const void* packed, int* rc) {
  loom::Comm* c = loom::api::toComm(comm);
  if (!c) {
    *rc = raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
    return nullptr;
  }
  Status st;
  Datatype* t = toDatatype(datatype);
  if (count < 0) st = errorf(MPI_ERR_COUNT, "count is negative (%d)", count);
  else if (!t) st = typeError(datatype, "datatype");
  else if (!t->isCommitted()) st = errorf(MPI_ERR_TYPE, "datatype is not committed");
  else if (bufsize < 0) st = errorf(MPI_ERR_ARG, "buffer size is negative (%d)", bufsize);
  else if (!position) st = errorf(MPI_ERR_ARG, "position is NULL");
  else if (*position < 0 || *position > bufsize)
    st = errorf(MPI_ERR_ARG, "position %d is outside the buffer of %d bytes", *position, bufsize);
  else if (t->packedSize(count) > static_cast<size_t>(bufsize - *position))
    st = errorf(MPI_ERR_TRUNCATE, "%zu bytes do not fit in the %d bytes left after position %d",
                t->packedSize(count), bufsize - *position, *position);
  else if (!packed && t->packedSize(count) > 0)
    st = errorf(MPI_ERR_BUFFER, "packed buffer is NULL");
  if (!st) {
    *rc = raise(c, st, fn);
    return nullptr;
  }
  return t;
}

}  // namespace

extern "C" int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                         int outsize, int* position, MPI_Comm comm) {
  const char* fn = "MPI_Pack";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  Datatype* t = packArgs(fn, comm, incount, datatype, outsize, position, outbuf, &rc);
  if (!t) return rc;
  size_t n = t->packedSize(incount);
  if (n > 0) t->pack(inbuf, incount, 0, static_cast<char*>(outbuf) + *position, n);
  *position += static_cast<int>(n);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Pack)

extern "C" int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf,
                           int outcount, MPI_Datatype datatype, MPI_Comm comm) {
  const char* fn = "MPI_Unpack";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  Datatype* t = packArgs(fn, comm, outcount, datatype, insize, position, inbuf, &rc);
  if (!t) return rc;
  size_t n = t->packedSize(outcount);
  if (n > 0) t->unpack(outbuf, outcount, 0, static_cast<const char*>(inbuf) + *position, n);
  *position += static_cast<int>(n);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Unpack)

extern "C" int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  const char* fn = "MPI_Pack_size";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  loom::Comm* c = loom::api::toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (incount < 0) return raise(c, errorf(MPI_ERR_COUNT, "incount is negative (%d)", incount), fn);
  Datatype* t = toDatatype(datatype);
  if (!t) return raise(c, typeError(datatype, "datatype"), fn);
  if (!t->isCommitted()) return raise(c, errorf(MPI_ERR_TYPE, "datatype is not committed"), fn);
  if (!size) return raise(c, errorf(MPI_ERR_ARG, "size is NULL"), fn);
  size_t n = t->packedSize(incount);
  if (n > INT_MAX)
    return raise(c, errorf(MPI_ERR_VALUE_TOO_LARGE, "packed size %zu does not fit an int", n), fn);
  *size = static_cast<int>(n);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Pack_size)

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
