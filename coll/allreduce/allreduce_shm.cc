// Allreduce through the communicator's shared segment (coll/shm/shm_coll.h).
//
// What: every rank copies its input into its slot, piece by piece; once all
// pieces of a step are there, every rank reduces all of them itself, in rank
// order, into its result. No rank waits for another's partial result, and
// every rank computes the same bits.
// Steps: ceil(n / slot), one synchronisation each (one for n = 0).
// Cost: per rank n beta to stage its input plus (p - 1) n (beta + gamma) to
// reduce every slot, and one flag transfer per peer per step. For small n
// this is one cache-line round per peer instead of log2 p message latencies;
// for large n on many ranks the (p - 1) n reads lose to a reduce-scatter, so
// the rules keep it to small messages there.
// Restrictions: all ranks on one node; a user op needs a contiguous type
// (shmReductionSupports). Non-commutative ops are fine: the fold keeps rank
// order. Any p.
#include "coll/algorithms.h"
#include "coll/shm/shm_steps.h"

namespace loom::coll {
namespace {

bool run(ShmColl& c, ShmOp& op) {
  const CollArgs& a = op.args;
  for (; op.step < op.steps; ++op.step, op.phase = 0) {
    const shm::Step s = shm::stepAt(op, op.bytes);
    if (!shm::stageOwn(c, op, s, a.sendbuf, a.count, a.type)) return false;
    if (!c.allReached(s.k)) return false;
    shm::foldIntoResult(c, op, s.k, s.off, s.len);
  }
  return true;
}

}  // namespace

Status allreduceShm(const CollArgs& a, Request** out) { return shm::startReduction(a, run, out); }

}  // namespace loom::coll
