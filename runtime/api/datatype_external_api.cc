// MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size (and their
// large-count _c forms, which share the implementation): packing
// in the portable "external32" representation (core/datatype_external.h),
// the only data representation these functions accept; any other datarep
// is MPI_ERR_ARG.
//
// Packing goes through the native packed stream: the type is packed as by
// MPI_Pack into a scratch buffer, which is then converted value by value
// into the caller's buffer (unpacking the mirror image). The scratch costs
// count * size bytes of memory for the duration of the call.
//
// Errors are raised on MPI_COMM_WORLD's handler (no communicator): an
// invalid or uncommitted datatype is MPI_ERR_TYPE, a negative count
// MPI_ERR_COUNT, a buffer too small MPI_ERR_TRUNCATE, other bad arguments
// MPI_ERR_ARG.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "api/handles_datatype.h"
#include "api/large_count.h"
#include "api/runtime.h"
#include "core/datatype_external.h"

using loom::Datatype;
using loom::errorf;
using loom::Status;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toDatatype;

namespace {

Status checkDatarep(const char* datarep) {
  if (!datarep) return errorf(MPI_ERR_ARG, "datarep is NULL");
  if (std::strcmp(datarep, "external32") != 0)
    return errorf(MPI_ERR_ARG, "datarep \"%.64s\" is not supported (only \"external32\")",
                  datarep);
  return Status::ok();
}

// Checks shared by pack and unpack; returns the type, or nullptr with *rc
// set. `bufsize` and `position` describe the external32 buffer `packed`.
Datatype* externalArgs(const char* fn, const char* datarep, int64_t count, MPI_Datatype datatype,
                       int64_t bufsize, const int64_t* position, const void* packed,
                       int64_t* bytes, int* rc) {
  Status st = checkDatarep(datarep);
  Datatype* t = toDatatype(datatype);
  if (!st) {
  } else if (count < 0) {
    st = errorf(MPI_ERR_COUNT, "count is negative (%lld)", (long long)count);
  } else if (!t) {
    st = errorf(MPI_ERR_TYPE, datatype == MPI_DATATYPE_NULL ? "datatype is MPI_DATATYPE_NULL"
                                                            : "datatype is not a valid datatype");
  } else if (!t->isCommitted()) {
    st = errorf(MPI_ERR_TYPE, "datatype is not committed");
  } else if (bufsize < 0) {
    st = errorf(MPI_ERR_ARG, "buffer size is negative (%lld)", (long long)bufsize);
  } else if (!position) {
    st = errorf(MPI_ERR_ARG, "position is NULL");
  } else if (*position < 0 || *position > bufsize) {
    st = errorf(MPI_ERR_ARG, "position %lld is outside the buffer of %lld bytes",
                (long long)*position, (long long)bufsize);
  } else {
    // In 128 bits: a huge count is too large for the buffer, not wrapped.
    const __int128 n = static_cast<__int128>(count) * loom::external32Size(t);
    if (n > bufsize - *position)
      st = errorf(MPI_ERR_TRUNCATE, "%lld bytes do not fit in the %lld bytes left after "
                  "position %lld", (long long)std::min<__int128>(n, INT64_MAX),
                  (long long)(bufsize - *position), (long long)*position);
    else if ((*bytes = static_cast<int64_t>(n)) > 0 && !packed)
      st = errorf(MPI_ERR_BUFFER, "packed buffer is NULL");
  }
  if (!st) {
    *rc = raise(nullptr, st, fn);
    return nullptr;
  }
  return t;
}

// One implementation per call, templated on the caller's position/size type
// (MPI_Aint for the int forms, MPI_Count for the _c forms); counts are
// int64_t.
template <class Pos>
int packExternal(const char* fn, const char* datarep, const void* inbuf, int64_t incount,
                 MPI_Datatype datatype, void* outbuf, int64_t outsize, Pos* position) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  int64_t bytes = 0;
  int64_t pos = position ? static_cast<int64_t>(*position) : 0;
  Datatype* t = externalArgs(fn, datarep, incount, datatype, outsize, position ? &pos : nullptr,
                             outbuf, &bytes, &rc);
  if (!t) return rc;
  if (bytes > 0) {
    std::vector<char> native(t->packedSize(incount));
    t->pack(inbuf, incount, 0, native.data(), native.size());
    loom::toExternal32(t, incount, native.data(), static_cast<char*>(outbuf) + pos);
  }
  *position = static_cast<Pos>(pos + bytes);
  return MPI_SUCCESS;
}

template <class Pos>
int unpackExternal(const char* fn, const char* datarep, const void* inbuf, int64_t insize,
                   Pos* position, void* outbuf, int64_t outcount, MPI_Datatype datatype) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  int64_t bytes = 0;
  int64_t pos = position ? static_cast<int64_t>(*position) : 0;
  Datatype* t = externalArgs(fn, datarep, outcount, datatype, insize, position ? &pos : nullptr,
                             inbuf, &bytes, &rc);
  if (!t) return rc;
  if (bytes > 0) {
    std::vector<char> native(t->packedSize(outcount));
    loom::fromExternal32(t, outcount, static_cast<const char*>(inbuf) + pos, native.data());
    t->unpack(outbuf, outcount, 0, native.data(), native.size());
  }
  *position = static_cast<Pos>(pos + bytes);
  return MPI_SUCCESS;
}

// `Size`: MPI_Aint (int form) or MPI_Count (_c form); a size past its
// range is MPI_ERR_VALUE_TOO_LARGE, never a wrapped value.
template <class Size>
int packExternalSize(const char* fn, const char* datarep, int64_t incount,
                     MPI_Datatype datatype, Size* size) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Status st = checkDatarep(datarep);
  if (!st) return raise(nullptr, st, fn);
  if (incount < 0)
    return raise(nullptr,
                 errorf(MPI_ERR_COUNT, "incount is negative (%lld)",
                        static_cast<long long>(incount)),
                 fn);
  Datatype* t = toDatatype(datatype);
  if (!t) return raise(nullptr, errorf(MPI_ERR_TYPE, "datatype is not a valid datatype"), fn);
  if (!t->isCommitted())
    return raise(nullptr, errorf(MPI_ERR_TYPE, "datatype is not committed"), fn);
  if (!size) return raise(nullptr, errorf(MPI_ERR_ARG, "size is NULL"), fn);
  const __int128 n = static_cast<__int128>(incount) * loom::external32Size(t);
  if (n > std::numeric_limits<Size>::max())
    return raise(nullptr,
                 errorf(MPI_ERR_VALUE_TOO_LARGE, "the external32 size does not fit %s",
                        sizeof(Size) < sizeof(int64_t) ? "an MPI_Aint" : "an MPI_Count"),
                 fn);
  *size = static_cast<Size>(n);
  return MPI_SUCCESS;
}

}  // namespace

// Each with its MPI_Count form (api/large_count.h).
extern "C" int PMPI_Pack_external(const char* datarep, const void* inbuf, int incount,
                                  MPI_Datatype datatype, void* outbuf, MPI_Aint outsize,
                                  MPI_Aint* position) {
  return packExternal("MPI_Pack_external", datarep, inbuf, incount, datatype, outbuf, outsize,
                      position);
}
LOOM_WEAK_ALIAS(MPI_Pack_external)
LOOM_LARGE_COUNT(Pack_external,
                 (const char* datarep, const void* inbuf, MPI_Count incount,
                  MPI_Datatype datatype, void* outbuf, MPI_Count outsize, MPI_Count* position),
                 packExternal("MPI_Pack_external_c", datarep, inbuf, incount, datatype, outbuf,
                              outsize, position))

extern "C" int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize,
                                    MPI_Aint* position, void* outbuf, int outcount,
                                    MPI_Datatype datatype) {
  return unpackExternal("MPI_Unpack_external", datarep, inbuf, insize, position, outbuf,
                        outcount, datatype);
}
LOOM_WEAK_ALIAS(MPI_Unpack_external)
LOOM_LARGE_COUNT(Unpack_external,
                 (const char datarep[], const void* inbuf, MPI_Count insize,
                  MPI_Count* position, void* outbuf, MPI_Count outcount, MPI_Datatype datatype),
                 unpackExternal("MPI_Unpack_external_c", datarep, inbuf, insize, position,
                                outbuf, outcount, datatype))

extern "C" int PMPI_Pack_external_size(const char* datarep, int incount, MPI_Datatype datatype,
                                       MPI_Aint* size) {
  return packExternalSize("MPI_Pack_external_size", datarep, incount, datatype, size);
}
LOOM_WEAK_ALIAS(MPI_Pack_external_size)
LOOM_LARGE_COUNT(Pack_external_size,
                 (const char* datarep, MPI_Count incount, MPI_Datatype datatype,
                  MPI_Count* size),
                 packExternalSize("MPI_Pack_external_size_c", datarep, incount, datatype, size))
