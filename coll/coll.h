// Collective operations, as the API layer calls them: fill CollArgs and call
// coll::run (selector.h), which picks the algorithm, builds its schedule and
// starts it; the request completes when the collective has.
#pragma once

#include "coll/selector.h"

namespace loom::coll {

// MPI_Finalize, before its barrier: a collective that failed on this rank
// is made known to the peers that may still wait in it (ShmColl::fail).
void settleFailures();

}  // namespace loom::coll
