#include "api/runtime.h"

#include <cstdint>
#include <cstdio>

#include "api/comm_internal.h"
#include "api/error_codes.h"
#include "core/log.h"

namespace loom::api {

Runtime gRuntime;

bool reportNotRunning(const char* function) {
  Phase p = rt().phase;
  log::error("%s called %s; returning MPI_ERR_OTHER", function,
             p == Phase::kBefore ? "before MPI_Init" : "after MPI_Finalize");
  return false;
}

Comm* toComm(MPI_Comm handle) {
  if (handle == MPI_COMM_WORLD) return rt().world.get();
  if (handle == MPI_COMM_SELF) return rt().self.get();
  auto v = reinterpret_cast<uintptr_t>(handle);
  // Predefined handles are small integers; anything else there is invalid.
  if (v < 4096 || v % alignof(Comm) != 0) return nullptr;
  auto* c = reinterpret_cast<Comm*>(handle);
  return c->valid() ? c : nullptr;
}

Errhandler* toErrhandler(MPI_Errhandler handle) {
  if (handle == MPI_ERRORS_ARE_FATAL) return &gErrorsAreFatal;
  if (handle == MPI_ERRORS_RETURN) return &gErrorsReturn;
  if (handle == MPI_ERRORS_ABORT) return &gErrorsAbort;
  auto v = reinterpret_cast<uintptr_t>(handle);
  // Other predefined handles (MPI_ERRHANDLER_NULL) are small integers.
  if (v < 4096 || v % alignof(Errhandler) != 0) return nullptr;
  auto* eh = reinterpret_cast<Errhandler*>(handle);
  return eh->valid() ? eh : nullptr;
}

MPI_Errhandler toHandle(Errhandler* eh) {
  if (eh == &gErrorsReturn) return MPI_ERRORS_RETURN;
  if (eh == &gErrorsAbort) return MPI_ERRORS_ABORT;
  if (eh == &gErrorsAreFatal) return MPI_ERRORS_ARE_FATAL;
  if (!eh) return MPI_ERRHANDLER_NULL;
  return reinterpret_cast<MPI_Errhandler>(eh);
}

void abortJob(int code, const std::string& message, bool printed) {
  std::fflush(stdout);
  std::fflush(stderr);
  rt().boot.abort(code, message, printed);
}

int raise(Comm* comm, const Status& status, const char* function) {
  if (!comm) comm = rt().world.get();
  Errhandler* eh = comm ? comm->errhandler() : &gErrorsAreFatal;
  std::string text = std::string(function) + ": " + errorName(status.code()) + ": " +
                     status.message();
  if (eh->kind == Errhandler::Kind::kReturn) {
    log::debug("err", "%s (returned to the caller)", text.c_str());
    return status.code();
  }
  if (eh->kind == Errhandler::Kind::kUser) {
    // The handler may replace itself on this communicator (or free the
    // communicator): it stays alive until it returns.
    log::debug("err", "%s (to the user's error handler)", text.c_str());
    eh->retain();
    MPI_Comm handle = toHandle(comm);
    int code = status.code();
    if (eh->fortran) {
      MPI_Fint fh = PMPI_Comm_toint(handle);
      reinterpret_cast<void (*)(MPI_Fint*, MPI_Fint*)>(eh->commFn)(&fh, &code);
    } else {
      eh->commFn(&handle, &code, function);
    }
    Errhandler::release(eh);
    return status.code();
  }
  log::error("%s", text.c_str());
  const std::string where = comm ? describeComm(comm) : "MPI_COMM_WORLD";
  abortJob(status.code(), std::string(eh->name) + " on " + where + ": " + text, true);
}

std::string commLabel(const Comm* c) {
  if (!c->name().empty()) return c->name();
  if (!c->origin().empty()) {
    // Derived origins nest ("dup of dup of ..."): a program that duplicates
    // in a loop would otherwise grow them without end.
    constexpr size_t kMax = 96;
    const std::string& o = c->origin();
    return o.size() <= kMax ? o : o.substr(0, kMax - 3) + "...";
  }
  return c->isInter() ? "an intercommunicator" : "a communicator";
}

std::string describeComm(const Comm* c) {
  if (!c->name().empty()) return c->name();
  std::string s = c->isInter() ? "an intercommunicator (" : "a communicator (";
  if (!c->origin().empty()) s += c->origin() + ", ";
  s += std::to_string(c->size()) + (c->size() == 1 ? " rank" : " ranks");
  if (c->isInter()) s += ", " + std::to_string(c->remoteGroup()->size()) + " remote";
  return s + ")";
}

}  // namespace loom::api
