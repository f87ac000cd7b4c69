// Setting and reading MPI_Status fields: MPI_Status_set_elements(_x, _c),
// MPI_Status_set_cancelled (for generalized requests' query_fn), and the
// MPI 5.0 accessors MPI_Status_get/set_source, _tag, _error.
//
// The count lives in the status as a byte count (status_util.h), so setting
// `count` elements of `datatype` stores the bytes that hold them: whole
// elements of the type, then the leading basic elements of one more.
// MPI_Get_elements then returns `count`, and MPI_Get_count the number of
// whole elements (MPI_UNDEFINED when there is a partial one), as the
// standard asks.
#include "api/handles_datatype.h"
#include "api/large_count.h"
#include "api/runtime.h"
#include "api/status_util.h"

using loom::Datatype;
using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;

namespace {

// Bytes of the first `count` basic elements of a stream of `t`; -1 when
// there is no such prefix (count < 0).
int64_t bytesOfElements(const Datatype* t, int64_t count) {
  if (count < 0) return -1;
  const int64_t e = t->basicElements();
  if (count == 0 || t->size() == 0 || e == 0) return 0;
  int64_t bytes = count / e * t->size();
  const int64_t rest = count % e;
  if (rest == 0) return bytes;
  // The smallest prefix of one element holding `rest` basic elements.
  for (int64_t b = 1; b < t->size(); ++b)
    if (t->basicElementsIn(b) == rest) return bytes + b;
  return -1;
}

int setElements(MPI_Status* status, MPI_Datatype datatype, int64_t count, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!status) return raise(nullptr, errorf(MPI_ERR_ARG, "status is NULL"), fn);
  Datatype* t = loom::api::toDatatype(datatype);
  if (!t) return raise(nullptr, errorf(MPI_ERR_TYPE, "invalid datatype"), fn);
  if (count < 0)
    return raise(nullptr, errorf(MPI_ERR_COUNT, "count=%lld < 0", static_cast<long long>(count)),
                 fn);
  int64_t bytes = bytesOfElements(t, count);
  if (bytes < 0) return raise(nullptr, errorf(MPI_ERR_COUNT, "no such element count"), fn);
  loom::api::setStatusBytes(status, bytes);
  return MPI_SUCCESS;
}

// The accessors: a NULL status is the only wrong argument.
template <class Fn>
int access(const void* status, const void* out, const char* fn, Fn&& body) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!status || !out) return raise(nullptr, errorf(MPI_ERR_ARG, "status or result is NULL"), fn);
  body();
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  return setElements(status, datatype, count, "MPI_Status_set_elements");
}
LOOM_WEAK_ALIAS(MPI_Status_set_elements)
LOOM_LARGE_COUNT(Status_set_elements,
                 (MPI_Status* status, MPI_Datatype datatype, MPI_Count count),
                 setElements(status, datatype, count, "MPI_Status_set_elements_c"))

extern "C" int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype,
                                          MPI_Count count) {
  return setElements(status, datatype, count, "MPI_Status_set_elements_x");
}
LOOM_WEAK_ALIAS(MPI_Status_set_elements_x)

extern "C" int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  return access(status, status, "MPI_Status_set_cancelled",
                [&] { status->MPI_internal[2] = flag ? 1 : 0; });
}
LOOM_WEAK_ALIAS(MPI_Status_set_cancelled)

extern "C" int PMPI_Status_get_source(const MPI_Status* status, int* source) {
  return access(status, source, "MPI_Status_get_source", [&] { *source = status->MPI_SOURCE; });
}
LOOM_WEAK_ALIAS(MPI_Status_get_source)

extern "C" int PMPI_Status_get_tag(const MPI_Status* status, int* tag) {
  return access(status, tag, "MPI_Status_get_tag", [&] { *tag = status->MPI_TAG; });
}
LOOM_WEAK_ALIAS(MPI_Status_get_tag)

extern "C" int PMPI_Status_get_error(const MPI_Status* status, int* error) {
  return access(status, error, "MPI_Status_get_error", [&] { *error = status->MPI_ERROR; });
}
LOOM_WEAK_ALIAS(MPI_Status_get_error)

extern "C" int PMPI_Status_set_source(MPI_Status* status, int source) {
  return access(status, status, "MPI_Status_set_source", [&] { status->MPI_SOURCE = source; });
}
LOOM_WEAK_ALIAS(MPI_Status_set_source)

extern "C" int PMPI_Status_set_tag(MPI_Status* status, int tag) {
  return access(status, status, "MPI_Status_set_tag", [&] { status->MPI_TAG = tag; });
}
LOOM_WEAK_ALIAS(MPI_Status_set_tag)

extern "C" int PMPI_Status_set_error(MPI_Status* status, int error) {
  return access(status, status, "MPI_Status_set_error", [&] { status->MPI_ERROR = error; });
}
LOOM_WEAK_ALIAS(MPI_Status_set_error)
