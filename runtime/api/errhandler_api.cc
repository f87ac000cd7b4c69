// Error handlers of communicators: MPI_Comm_create_errhandler,
// MPI_Errhandler_free, MPI_Comm_set/get/call_errhandler.
//
// A user handler is an Errhandler of kind kUser (core/comm.h), reference
// counted: the handle the user holds is one reference, every communicator
// using it holds one, MPI_Comm_get_errhandler hands out a new one. So
// MPI_Errhandler_free right after MPI_Comm_set_errhandler is fine: the
// handler stays until the communicator drops it (another set, or the
// communicator's end). raise() (runtime.cc) calls its function.
// The predefined handlers live forever. Freeing one is an error
// (MPI_ERR_ARG) unless it balances a handle MPI_Comm_get_errhandler gave
// out: programs commonly get, restore and free the previous handler
// whatever it was, and Open MPI accepts that too.
#include <atomic>

#include "api/comm_internal.h"
#include "api/error_codes.h"
#include "api/runtime.h"

using loom::Comm;
using loom::Errhandler;
using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toComm;

namespace {

// Handles of each predefined handler that MPI_Comm_get_errhandler gave out
// and MPI_Errhandler_free has not taken back.
std::atomic<int>& handedOut(const Errhandler* eh) {
  static std::atomic<int> fatal{0}, abort{0}, ret{0};
  if (eh == &loom::gErrorsReturn) return ret;
  if (eh == &loom::gErrorsAbort) return abort;
  return fatal;
}

}  // namespace

namespace loom::api {
MPI_Errhandler newReference(Errhandler* eh) {
  if (eh->isPredefined()) handedOut(eh).fetch_add(1);
  eh->retain();
  return toHandle(eh);
}
}  // namespace loom::api

extern "C" int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* fn,
                                           MPI_Errhandler* errhandler) {
  const char* name = "MPI_Comm_create_errhandler";
  if (!requireRunning(name)) return MPI_ERR_OTHER;
  if (!fn) return raise(nullptr, errorf(MPI_ERR_ARG, "the handler function is NULL"), name);
  if (!errhandler) return raise(nullptr, errorf(MPI_ERR_ARG, "errhandler is NULL"), name);
  auto* eh = new Errhandler{Errhandler::Kind::kUser, "a user error handler"};
  eh->commFn = fn;
  *errhandler = loom::api::toHandle(eh);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_create_errhandler)

// MPI_Comm_create_errhandler from Fortran (libloom_fortran): the handler is
// called with Fortran handles. Exported for the bindings only.
extern "C" int loom_f_comm_create_errhandler(void* fortran_fn, MPI_Errhandler* errhandler) {
  int rc = PMPI_Comm_create_errhandler(
      reinterpret_cast<MPI_Comm_errhandler_function*>(fortran_fn), errhandler);
  if (rc == MPI_SUCCESS) loom::api::toErrhandler(*errhandler)->fortran = true;
  return rc;
}

extern "C" int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  const char* name = "MPI_Errhandler_free";
  if (!requireRunning(name)) return MPI_ERR_OTHER;
  if (!errhandler) return raise(nullptr, errorf(MPI_ERR_ARG, "errhandler is NULL"), name);
  Errhandler* eh = loom::api::toErrhandler(*errhandler);
  if (!eh) return raise(nullptr, errorf(MPI_ERR_ARG, "invalid error handler"), name);
  if (eh->isPredefined()) {
    std::atomic<int>& n = handedOut(eh);
    int have = n.load(std::memory_order_relaxed);
    while (have > 0 && !n.compare_exchange_weak(have, have - 1)) {
    }
    if (have <= 0)
      return raise(nullptr,
                   errorf(MPI_ERR_ARG,
                          "%s is predefined: only a handle from MPI_Comm_get_errhandler may be "
                          "freed",
                          eh->name),
                   name);
  } else {
    Errhandler::release(eh);
  }
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Errhandler_free)

extern "C" int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  const char* name = "MPI_Comm_set_errhandler";
  if (!requireRunning(name)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), name);
  Errhandler* eh = loom::api::toErrhandler(errhandler);
  if (!eh) return raise(c, errorf(MPI_ERR_ARG, "invalid error handler"), name);
  if (eh->kind == Errhandler::Kind::kUser && !eh->commFn)
    return raise(c, errorf(MPI_ERR_ARG, "not a communicator error handler (made by "
                           "MPI_Session_create_errhandler)"), name);
  c->setErrhandler(eh);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_set_errhandler)

extern "C" int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  const char* name = "MPI_Comm_get_errhandler";
  if (!requireRunning(name)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), name);
  if (!errhandler) return raise(c, errorf(MPI_ERR_ARG, "errhandler is NULL"), name);
  *errhandler = loom::api::newReference(c->errhandler());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_get_errhandler)

extern "C" int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  const char* name = "MPI_Comm_call_errhandler";
  if (!requireRunning(name)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), name);
  std::string text;
  if (!loom::api::errorString(errorcode, &text) || text.empty()) text = "a user error code";
  (void)raise(c, errorf(errorcode, "%s", text.c_str()), name);
  // The standard: returns MPI_SUCCESS when the handler returns.
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_call_errhandler)
