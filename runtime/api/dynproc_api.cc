// The parts of dynamic process management that hold without spawning:
// MPI_Comm_get_parent. Loom starts every process itself (loomrun, srun), so
// no process has a parent and the call returns MPI_COMM_NULL, which is what
// the standard says for a process not started by MPI_Comm_spawn. Spawning,
// ports and MPI_Comm_join are not implemented (generated stubs).
#include <mpi.h>

#include "api/runtime.h"

using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;

extern "C" int PMPI_Comm_get_parent(MPI_Comm* parent) {
  static const char* fn = "MPI_Comm_get_parent";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!parent) return raise(nullptr, errorf(MPI_ERR_ARG, "parent is NULL"), fn);
  *parent = MPI_COMM_NULL;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_get_parent)
