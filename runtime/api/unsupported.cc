#include "api/unsupported.h"

#include "core/log.h"

namespace loom::api {

int unsupported(const char* name, const char* area, Unsupported::Handler how, MPI_Comm comm) {
  if (how == Unsupported::kTool) {
    log::debug("err", "%s: not implemented in Loom yet (%s)", name, area);
    return MPI_T_ERR_NOT_SUPPORTED;
  }
  Status st = errorf(MPI_ERR_UNSUPPORTED_OPERATION, "not implemented in Loom yet (%s)", area);
  // Outside MPI_Init..MPI_Finalize there is no handler to call (sessions and
  // a few queries may legally come first): say so and return.
  if (how == Unsupported::kReturn || rt().phase != Phase::kRunning) {
    log::debug("err", "%s: %s", name, st.message().c_str());
    return st.code();
  }
  Comm* c = nullptr;
  if (how == Unsupported::kComm) {
    c = toComm(comm);
    if (!c && comm != MPI_COMM_NULL)
      return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), name);
  }
  return raise(c, st, name);
}

}  // namespace loom::api
