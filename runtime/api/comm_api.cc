// Communicator queries and error handlers.
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

extern "C" int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  if (!requireRunning("MPI_Comm_set_errhandler")) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c)
    return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"),
                 "MPI_Comm_set_errhandler");
  loom::Errhandler* eh = loom::api::toErrhandler(errhandler);
  if (!eh)
    return raise(c, errorf(MPI_ERR_ARG, "invalid error handler"), "MPI_Comm_set_errhandler");
  c->setErrhandler(eh);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_set_errhandler)

extern "C" int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  if (!requireRunning("MPI_Comm_get_errhandler")) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c)
    return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"),
                 "MPI_Comm_get_errhandler");
  if (!errhandler)
    return raise(c, errorf(MPI_ERR_ARG, "errhandler is NULL"), "MPI_Comm_get_errhandler");
  *errhandler = loom::api::toHandle(c->errhandler());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_get_errhandler)

extern "C" int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  if (!requireRunning("MPI_Comm_call_errhandler")) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c)
    return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"),
                 "MPI_Comm_call_errhandler");
  const char* text = loom::errorClassText(errorcode);
  (void)raise(c, errorf(errorcode, "%s", text ? text : "user error code"),
              "MPI_Comm_call_errhandler");
  // The standard: returns MPI_SUCCESS when the handler returns.
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_call_errhandler)
