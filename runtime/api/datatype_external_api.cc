// MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size: packing
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

#include <cstring>
#include <vector>

#include "api/handles_datatype.h"
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
                       int64_t bufsize, const MPI_Aint* position, const void* packed,
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
    *bytes = count * loom::external32Size(t);
    if (*bytes > bufsize - *position)
      st = errorf(MPI_ERR_TRUNCATE, "%lld bytes do not fit in the %lld bytes left after "
                  "position %lld", (long long)*bytes, (long long)(bufsize - *position),
                  (long long)*position);
    else if (*bytes > 0 && !packed)
      st = errorf(MPI_ERR_BUFFER, "packed buffer is NULL");
  }
  if (!st) {
    *rc = raise(nullptr, st, fn);
    return nullptr;
  }
  return t;
}

}  // namespace

extern "C" int PMPI_Pack_external(const char* datarep, const void* inbuf, int incount,
                                  MPI_Datatype datatype, void* outbuf, MPI_Aint outsize,
                                  MPI_Aint* position) {
  const char* fn = "MPI_Pack_external";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  int64_t bytes = 0;
  Datatype* t = externalArgs(fn, datarep, incount, datatype, outsize, position, outbuf, &bytes,
                             &rc);
  if (!t) return rc;
  if (bytes > 0) {
    std::vector<char> native(t->packedSize(incount));
    t->pack(inbuf, incount, 0, native.data(), native.size());
    loom::toExternal32(t, incount, native.data(), static_cast<char*>(outbuf) + *position);
  }
  *position += bytes;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Pack_external)

extern "C" int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize,
                                    MPI_Aint* position, void* outbuf, int outcount,
                                    MPI_Datatype datatype) {
  const char* fn = "MPI_Unpack_external";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  int64_t bytes = 0;
  Datatype* t = externalArgs(fn, datarep, outcount, datatype, insize, position, inbuf, &bytes,
                             &rc);
  if (!t) return rc;
  if (bytes > 0) {
    std::vector<char> native(t->packedSize(outcount));
    loom::fromExternal32(t, outcount, static_cast<const char*>(inbuf) + *position,
                         native.data());
    t->unpack(outbuf, outcount, 0, native.data(), native.size());
  }
  *position += bytes;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Unpack_external)

extern "C" int PMPI_Pack_external_size(const char* datarep, int incount, MPI_Datatype datatype,
                                       MPI_Aint* size) {
  const char* fn = "MPI_Pack_external_size";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Status st = checkDatarep(datarep);
  if (!st) return raise(nullptr, st, fn);
  if (incount < 0)
    return raise(nullptr, errorf(MPI_ERR_COUNT, "incount is negative (%d)", incount), fn);
  Datatype* t = toDatatype(datatype);
  if (!t) return raise(nullptr, errorf(MPI_ERR_TYPE, "datatype is not a valid datatype"), fn);
  if (!t->isCommitted())
    return raise(nullptr, errorf(MPI_ERR_TYPE, "datatype is not committed"), fn);
  if (!size) return raise(nullptr, errorf(MPI_ERR_ARG, "size is NULL"), fn);
  *size = static_cast<MPI_Aint>(incount) * loom::external32Size(t);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Pack_external_size)
