// The process-wide state behind the C API: what MPI_Init set up and what
// MPI_Finalize tears down, plus the helpers every entry point uses to check
// that state, translate handles and report errors.
#pragma once

#include <mpi.h>
#include <pthread.h>

#include <memory>
#include <vector>

#include "core/bootstrap.h"
#include "core/comm.h"
#include "core/status.h"
#include "core/locality.h"
#include "core/topology.h"

namespace loom::api {

enum class Phase { kBefore, kRunning, kAfter };

using loom::Locality;  // core/locality.h

// `phase` is the runtime's (PMIx, transports, the job's communicators):
// it comes up with the first of MPI_Init and MPI_Session_init and goes down
// with the last of MPI_Finalize and MPI_Session_finalize (`users` counts
// them). `worldActive` / `worldFinalized` are the world model's own state,
// what MPI_Initialized and MPI_Finalized report.
struct Runtime {
  Phase phase = Phase::kBefore;
  int users = 0;
  bool worldActive = false;
  bool worldFinalized = false;
  int threadLevel = MPI_THREAD_SINGLE;
  pthread_t mainThread{};
  bool oversubscribed = false;
  ProcInfo proc;
  Topology topo;
  Bootstrap boot;
  std::vector<Locality>& locality = jobLocality();  // indexed by job rank
  std::unique_ptr<Comm> world;
  std::unique_ptr<Comm> self;
};

// The one instance (a plain global: rt() is on the path of every call).
extern Runtime gRuntime;
inline Runtime& rt() { return gRuntime; }

// True while MPI_Init has run and MPI_Finalize has not. Otherwise prints
// "loom: MPI_Foo called before MPI_Init" (or after MPI_Finalize) and
// returns false; the caller then returns MPI_ERR_OTHER.
bool reportNotRunning(const char* function);
inline bool requireRunning(const char* function) {
  if (gRuntime.phase == Phase::kRunning) [[likely]]
    return true;
  return reportNotRunning(function);
}

// One more user of the runtime (MPI_Init, each MPI_Session_init): the
// first brings it up (collective over the job: the PMIx fence), asking for
// thread level `required`. Fails with MPI_ERR_OTHER once the runtime was
// torn down: Loom does not bring it up twice in one process.
Status acquireRuntime(int required);
// One user fewer; the last tears the runtime down (collective over the job,
// like MPI_Finalize).
Status releaseRuntime();

// Handle translation; nullptr for null, invalid or freed handles.
Comm* toComm(MPI_Comm handle);
Errhandler* toErrhandler(MPI_Errhandler handle);
MPI_Errhandler toHandle(Errhandler* eh);
// A new reference to `eh` for the caller of MPI_Comm/Session_get_errhandler,
// which frees it with MPI_Errhandler_free (predefined handlers included).
MPI_Errhandler newReference(Errhandler* eh);

// Reports a failure through `comm`'s error handler (MPI_COMM_WORLD's when
// comm is nullptr) and returns the code the C function must return. With
// MPI_ERRORS_ARE_FATAL / MPI_ERRORS_ABORT it does not return.
int raise(Comm* comm, const Status& status, const char* function);

// A communicator as messages name it: its name, else how it was made and
// its size, e.g. "a communicator (dup of MPI_COMM_WORLD, 4 ranks)".
std::string describeComm(const Comm* c);
// The short form that a derived communicator's origin builds on: the name,
// else the origin ("dup of MPI_COMM_WORLD"), else "a communicator".
std::string commLabel(const Comm* c);

// Ends the whole job: through the launcher when there is one.
[[noreturn]] void abortJob(int code, const std::string& message, bool printed = false);

}  // namespace loom::api

// Entry points are defined once, as PMPI_Foo, and MPI_Foo is a weak alias
// of it, so a profiling tool can interpose MPI_Foo and call PMPI_Foo.
//
// Inside runtime/api the implemented functions are renamed (api_names.h,
// generated): PMPI_Foo is defined as LOOM_IMPL_Foo and this alias is then an
// unexported LOOM_IMPLW_Foo; the exported PMPI_Foo / MPI_Foo pair is
// generated beside the stubs and calls LOOM_IMPL_Foo under the API lock
// (core/progress_async.h). The alias target is therefore the macro-expanded
// name.
#define LOOM_STR_(x) #x
#define LOOM_STR(x) LOOM_STR_(x)
#define LOOM_WEAK_ALIAS(name) \
  extern "C" __typeof__(P##name) name __attribute__((weak, alias(LOOM_STR(P##name))));
