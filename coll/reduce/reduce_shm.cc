// Reduce through the communicator's shared segment (coll/shm/shm_coll.h).
//
// What: every rank copies its input into its slot, piece by piece; the root
// reduces all slots of each step, in rank order, into its result. The others
// leave as soon as their last piece is staged (they only wait for the root
// to be done with a slot before refilling it).
// Steps: ceil(n / slot) (one for n = 0).
// Cost: n beta per rank to stage, plus (p - 1) n (beta + gamma) at the root;
// one flag transfer per peer per step. A binomial tree spreads the gamma
// work over ranks but pays log2 p message latencies and copies.
// Restrictions: all ranks on one node; a user op needs a contiguous type.
// Non-commutative ops keep rank order. Any p, any root.
#include "coll/algorithms.h"
#include "coll/shm/shm_steps.h"

namespace loom::coll {
namespace {

bool run(ShmColl& c, ShmOp& op) {
  const CollArgs& a = op.args;
  const bool root = c.rank() == a.root;
  for (; op.step < op.steps; ++op.step, op.phase = 0) {
    const shm::Step s = shm::stepAt(op, op.bytes);
    if (!shm::stageOwn(c, op, s, a.sendbuf, a.count, a.type)) return false;
    if (!root) continue;
    if (!c.allReached(s.k)) return false;
    shm::foldIntoResult(c, op, s.k, s.off, s.len);
  }
  return true;
}

}  // namespace

Status reduceShm(const CollArgs& a, Request** out) { return shm::startReduction(a, run, out); }

}  // namespace loom::coll
