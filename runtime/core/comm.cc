#include "core/comm.h"

namespace loom {
Errhandler gErrorsAreFatal{Errhandler::Kind::kFatal, "MPI_ERRORS_ARE_FATAL"};
Errhandler gErrorsAbort{Errhandler::Kind::kAbort, "MPI_ERRORS_ABORT"};
Errhandler gErrorsReturn{Errhandler::Kind::kReturn, "MPI_ERRORS_RETURN"};
}  // namespace loom
