// Broadcast through the communicator's shared segment (coll/shm/shm_coll.h).
//
// What: the root copies the message into its slot piece by piece (a slot,
// LOOM_COLL_SHM_SLOT bytes, per step); every other rank copies each piece
// out as soon as the root's flag shows it. With four slots the root fills
// the next pieces (or the next calls' messages) while the others still read
// the current one.
// Steps: ceil(n / slot) (one for n = 0). Cost: the root copies n bytes
// once, every other rank n bytes, in parallel: ~2 n beta plus one flag
// transfer per piece, against log2 p message latencies and n beta per tree
// level for a binomial tree.
// Restrictions: all ranks on one node. Any p, any datatype (non-contiguous
// ones are packed into the slot and unpacked out of it).
#include <algorithm>

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
    if (root) {
      if (!shm::rootMayWrite(c, op, k)) return false;  // everyone is done with this slot
      shm::packPiece(a.recvbuf, a.count, a.type, off, c.slot(c.rank(), k), len);
      c.publish(k);
      continue;
    }
    if (op.phase == 0) {
      c.publish(k);
      op.phase = 1;
    }
    if (!c.reached(a.root, k)) return false;
    shm::unpackPiece(a.recvbuf, a.count, a.type, off, c.slot(a.root, k), len);
  }
  if (root) shm::rootWrote(c, op);
  return true;
}

}  // namespace

Status bcastShm(const CollArgs& a, Request** out) {
  const size_t bytes = a.type->packedSize(a.count);
  return shm::startOp(a, run, bytes, bytes, out);
}

}  // namespace loom::coll
