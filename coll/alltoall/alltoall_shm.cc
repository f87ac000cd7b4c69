// Alltoall through the communicator's shared segment (coll/shm/shm_coll.h).
//
// What: every rank copies its whole send buffer (p blocks, in rank order)
// into its slot, piece by piece; every rank copies, from every slot, the
// part of each piece that is its block.
// Steps: ceil(p * block / slot) (one for empty blocks).
// Cost: p * block beta to stage plus p * block beta to collect, per rank;
// one flag transfer per peer per step, against p - 1 messages (linear,
// pairwise) or log2 p rounds of log2(p)/2 times the data (Bruck).
// Restrictions: one node; MPI_IN_PLACE only when everything fits one step
// (a later piece of the buffer must not be overwritten before it is
// staged). Any p, any datatypes.
#include "coll/algorithms.h"
#include "coll/shm/shm_steps.h"

namespace loom::coll {
namespace {

bool run(ShmColl& c, ShmOp& op) {
  const CollArgs& a = op.args;
  const int p = c.size(), me = c.rank();
  const size_t total = op.bytes * p;
  const size_t mineLo = me * op.bytes, mineHi = mineLo + op.bytes;
  for (; op.step < op.steps; ++op.step, op.phase = 0) {
    const uint64_t k = op.base + op.step;
    const size_t off = op.step * op.piece;
    const size_t len = std::min(op.piece, total - std::min(total, off));
    if (op.phase == 0) {
      if (!c.slotFree(k)) return false;  // everyone is done with this slot
      if (a.inPlace)
        shm::packPiece(a.recvbuf, a.recvCount * p, a.recvType, off, c.slot(me, k), len);
      else
        shm::packPiece(a.sendbuf, a.count * p, a.type, off, c.slot(me, k), len);
      c.publish(k);
      op.phase = 1;
    }
    if (!c.allReached(k)) return false;
    const shm::Overlap o = shm::overlap(mineLo, mineHi, off, len);
    if (o.len == 0) continue;
    for (int j = 0; j < p; ++j)
      shm::unpackPiece(a.recvbuf, a.recvCount * p, a.recvType, j * op.bytes + (o.at - mineLo),
                       c.slot(j, k) + (o.at - off), o.len);
  }
  return true;
}

}  // namespace

bool alltoallShmSupports(const CollArgs& a) {
  if (!shmSupports(a)) return false;
  return !a.inPlace || a.bytes * a.comm->size() <= ShmColl::configuredSlot();
}

Status alltoallShm(const CollArgs& a, Request** out) {
  // bytes: one block, alike on every rank; the slots carry all p blocks.
  const size_t sent = a.inPlace ? a.bytes : a.type->packedSize(a.count);
  return shm::startOp(a, run, a.bytes, a.bytes * a.comm->size(), out, 1, false, sent);
}

}  // namespace loom::coll
