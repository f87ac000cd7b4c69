// Collective operations, as the API layer calls them. Each builds the
// schedule of the algorithm the selector picks and starts it; the request
// completes when the collective has (blocking calls wait on it).
#pragma once

#include "core/comm.h"
#include "core/request.h"
#include "core/status.h"

namespace loom::coll {

Status ibarrier(Comm* comm, Request** out);

}  // namespace loom::coll
