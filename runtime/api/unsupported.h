// MPI functions Loom declares but does not implement yet. Their entry points
// are generated (gen_unsupported.py) and all land in unsupported(), which
// reports MPI_ERR_UNSUPPORTED_OPERATION naming the function and its area.
#pragma once

#include <mpi.h>

#include "api/runtime.h"

namespace loom::api {

struct UnsupportedFunction {
  const char* name;  // "MPI_Win_create"
  const char* area;  // "one-sided communication (windows)"
};

// Every unimplemented function, in mpi.h's order, ended by {nullptr, nullptr}.
extern const UnsupportedFunction kUnsupportedFunctions[];
// How many of mpi.h's MPI_ functions have a real implementation.
extern const int kImplementedFunctions;

namespace Unsupported {
enum Handler {
  kComm,    // the communicator argument's error handler
  kWorld,   // MPI_COMM_WORLD's (no object, or an object Loom cannot create)
  kReturn,  // return the code only (files: their default handler returns)
  kTool,    // MPI_T: tool functions return MPI_T_ERR_NOT_SUPPORTED, no handler
};
}

// Reports `name` as not implemented and returns the code for the caller.
int unsupported(const char* name, const char* area, Unsupported::Handler how, MPI_Comm comm);

}  // namespace loom::api
