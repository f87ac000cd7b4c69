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
    const uint64_t k = op.base + op.step;
    const size_t off = op.step * op.piece;
    const size_t len = std::min(op.piece, op.bytes - std::min(op.bytes, off));
    if (op.phase == 0) {
      if (!c.slotFree(k)) return false;  // the root is done with this slot
      shm::packPiece(a.sendbuf, a.count, a.type, off, c.slot(c.rank(), k), len);
      c.publish(k);
      op.phase = 1;
    }
    if (!root) continue;
    if (!c.allReached(k)) return false;
    shm::foldIntoResult(c, op, k, off, len);
  }
  return true;
}

}  // namespace

Status reduceShm(const CollArgs& a, Request** out) { return shm::startReduction(a, run, out); }

}  // namespace loom::coll
