// Collective entry points. Each checks its arguments, starts the schedule
// the selector picks (coll/coll.h) and, for the blocking form, waits on it.
#include "api/runtime.h"
#include "api/status_util.h"
#include "coll/coll.h"
#include "core/progress.h"

using loom::Comm;
using loom::Request;
using loom::Status;
using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toComm;

namespace {

// Waits for a collective's request, releases it, reports its error.
int waitCollective(Request* r, Comm* comm, const char* fn) {
  loom::progress::waitUntil([r] { return r->complete; });
  int code = r->statusError;
  Request::release(r);
  if (code != MPI_SUCCESS) return raise(comm, errorf(code, "the collective failed"), fn);
  return MPI_SUCCESS;
}

// Starts a collective; with `request` NULL waits for it (blocking form),
// else hands its request to the caller.
int runCollective(const loom::coll::CollArgs& args, MPI_Request* request, const char* fn) {
  Request* r = nullptr;
  Status st = loom::coll::run(args, &r);
  if (!st.isOk()) {
    if (r) Request::release(r);
    return raise(args.comm, st, fn);
  }
  if (request) {
    *request = loom::api::toHandle(r);
    return MPI_SUCCESS;
  }
  return waitCollective(r, args.comm, fn);
}

loom::coll::CollArgs barrierArgs(Comm* c) {
  loom::coll::CollArgs a;
  a.coll = loom::coll::Collective::kBarrier;
  a.comm = c;
  return a;
}

}  // namespace

extern "C" int PMPI_Barrier(MPI_Comm comm) {
  if (!requireRunning("MPI_Barrier")) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), "MPI_Barrier");
  return runCollective(barrierArgs(c), nullptr, "MPI_Barrier");
}
LOOM_WEAK_ALIAS(MPI_Barrier)

extern "C" int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  if (!requireRunning("MPI_Ibarrier")) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), "MPI_Ibarrier");
  if (!request) return raise(c, errorf(MPI_ERR_ARG, "request is NULL"), "MPI_Ibarrier");
  return runCollective(barrierArgs(c), request, "MPI_Ibarrier");
}
LOOM_WEAK_ALIAS(MPI_Ibarrier)
