// Gather through the communicator's shared segment (coll/shm/shm_coll.h).
//
// What: every rank copies its block into its slot, piece by piece; the root
// copies every rank's piece into its place in the result. The others leave
// as soon as their last piece is staged. The root's own block (contiguous
// types) goes straight from its send buffer to the result.
// Steps: ceil(block / slot) (one for empty blocks).
// Cost: block beta per rank to stage, p * block beta at the root; one flag
// transfer per peer per step, against log2 p (binomial) or p messages.
// Restrictions: one node. Any p, any root, any datatypes, MPI_IN_PLACE at
// the root.
#include "coll/algorithms.h"
#include "coll/shm/shm_steps.h"

namespace loom::coll {
namespace {

bool run(ShmColl& c, ShmOp& op) {
  const CollArgs& a = op.args;
  const int p = c.size();
  const int me = c.rank();
  const bool root = me == a.root;
  // The root's own block goes straight from its send buffer to its place in
  // the result (contiguous types): nobody else reads it, so staging it would
  // copy it twice. In place it is there already.
  const bool direct = root && !a.inPlace && a.type->isContiguous() && a.recvType->isContiguous();
  for (; op.step < op.steps; ++op.step, op.phase = 0) {
    const uint64_t k = op.base + op.step;
    const size_t off = op.step * op.piece;
    const size_t len = std::min(op.piece, op.bytes - std::min(op.bytes, off));
    if (op.phase == 0) {
      if (!root || !(a.inPlace || direct)) {
        if (!c.slotFree(k)) return false;  // the readers are done with this slot
        shm::packPiece(a.sendbuf, a.count, a.type, off, c.slot(me, k), len);
      } else if (direct) {
        shm::copyDirect(a.sendbuf, a.count, a.type, off, a.recvbuf, a.recvCount * p, a.recvType,
                        me * op.bytes + off, len);
      }
      c.publish(k);
      op.phase = 1;
    }
    if (!root) continue;
    if (!c.allReached(k)) return false;
    for (int r = 0; r < p; ++r) {
      if (r == me && (a.inPlace || direct)) continue;
      shm::unpackPiece(a.recvbuf, a.recvCount * p, a.recvType, r * op.bytes + off, c.slot(r, k),
                       len);
    }
  }
  return true;
}

}  // namespace

Status gatherShm(const CollArgs& a, Request** out) {
  return shm::startOp(a, run, a.bytes, a.bytes, out);  // bytes: one block, alike everywhere
}

}  // namespace loom::coll
