// What the window entry points share (win_api.cc, win_rma_api.cc).
#pragma once

#include <mpi.h>

#include "core/status.h"
#include "rma/window.h"

namespace loom::api {

// Reports a failure through `w`'s error handler (MPI_COMM_WORLD's when w is
// null) and returns the code the C function must return.
int raiseWin(rma::Window* w, const Status& status, const char* function);
// MPI_ERR_WIN for an invalid window handle (on MPI_COMM_WORLD's handler).
int badWin(const char* function);
// The allgather and barrier window creation, fence and free use.
const rma::Collectives& windowCollectives();

}  // namespace loom::api
