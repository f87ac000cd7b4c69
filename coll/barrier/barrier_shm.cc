// Barrier through the communicator's shared segment (coll/shm/shm_coll.h).
//
// What: every rank publishes the call's step in its flag, then waits until
// every flag has reached it.
// Steps: one. Cost: one flag store plus p flag loads per rank, i.e. about
// one cache-line transfer per peer (~0.1 us on one socket) instead of
// ceil(log2 p) message latencies.
// Restrictions: all ranks on one node (ShmColl::eligible). Any p.
#include "coll/algorithms.h"
#include "coll/shm/shm_steps.h"

namespace loom::coll {
namespace {

bool run(ShmColl& c, ShmOp& op) {
  const uint64_t k = op.base;
  if (op.phase == 0) {
    c.publish(k);
    op.phase = 1;
  }
  return c.allReached(k);
}

}  // namespace

Status barrierShm(const CollArgs& a, Request** out) {
  return shm::startOp(a, run, 0, 0, out);  // one step
}

}  // namespace loom::coll
