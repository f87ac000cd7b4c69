// Collective entry points. Each checks its arguments, starts the schedule
// the selector picks (coll/coll.h) and, for the blocking form, waits on it.
#include "api/coll_common.h"
#include "api/inter_comm.h"
#include "api/runtime.h"
#include "api/status_util.h"
#include "coll/coll.h"

using loom::Comm;
using loom::errorf;
using loom::api::raise;
using loom::api::runCollective;
using loom::api::requireRunning;
using loom::api::toComm;

namespace {

loom::coll::CollArgs barrierArgs(Comm* c, bool blocking) {
  loom::coll::CollArgs a;
  a.coll = loom::coll::Collective::kBarrier;
  a.comm = c;
  a.blocking = blocking;
  return a;
}

}  // namespace

extern "C" int PMPI_Barrier(MPI_Comm comm) {
  if (!requireRunning("MPI_Barrier")) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), "MPI_Barrier");
  if (c->isInter()) return loom::api::interBarrier(c, nullptr, loom::api::CollMode::kBlocking, "MPI_Barrier");
  return runCollective(barrierArgs(c, true), nullptr, "MPI_Barrier");
}
LOOM_WEAK_ALIAS(MPI_Barrier)

extern "C" int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  if (!requireRunning("MPI_Ibarrier")) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), "MPI_Ibarrier");
  if (!request) return raise(c, errorf(MPI_ERR_ARG, "request is NULL"), "MPI_Ibarrier");
  if (c->isInter()) return loom::api::interBarrier(c, request, loom::api::CollMode::kNonblocking, "MPI_Ibarrier");
  return runCollective(barrierArgs(c, false), request, "MPI_Ibarrier");
}
LOOM_WEAK_ALIAS(MPI_Ibarrier)
