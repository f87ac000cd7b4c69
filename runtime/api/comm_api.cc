// Communicator queries (error handlers: errhandler_api.cc).
#include "api/runtime.h"

using loom::Comm;
using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toComm;

extern "C" int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  if (!requireRunning("MPI_Comm_rank")) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), "MPI_Comm_rank");
  if (!rank) return raise(c, errorf(MPI_ERR_ARG, "rank is NULL"), "MPI_Comm_rank");
  *rank = c->rank();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_rank)

extern "C" int PMPI_Comm_size(MPI_Comm comm, int* size) {
  if (!requireRunning("MPI_Comm_size")) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), "MPI_Comm_size");
  if (!size) return raise(c, errorf(MPI_ERR_ARG, "size is NULL"), "MPI_Comm_size");
  *size = c->size();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_size)
