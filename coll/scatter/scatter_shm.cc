// Scatter through the communicator's shared segment (coll/shm/shm_coll.h).
//
// What: the root copies its whole send buffer (p blocks, in rank order)
// into its slot, piece by piece; every rank copies the part of each piece
// that belongs to its block, and publishes the other steps without waiting
// for them.
// Steps: ceil(p * block / slot) (one for empty blocks).
// Cost: p * block beta at the root, block beta per rank; one flag transfer
// per step at the root, and per step of its block at the others, against
// log2 p (binomial) or p messages.
// Restrictions: one node. Any p, any root, any datatypes, MPI_IN_PLACE at
// the root.
#include "coll/algorithms.h"
#include "coll/shm/shm_steps.h"

namespace loom::coll {
namespace {

bool run(ShmColl& c, ShmOp& op) {
  const CollArgs& a = op.args;
  const int p = c.size(), me = c.rank();
  const bool root = me == a.root;
  const size_t total = op.bytes * p;
  const size_t mineLo = me * op.bytes, mineHi = mineLo + op.bytes;
  // The root's own block goes straight from its send buffer to its result
  // (contiguous types): nobody else reads it, so staging it would copy it
  // twice. In place it is there already.
  const bool direct = root && !a.inPlace && a.type->isContiguous() && a.recvType->isContiguous();
  for (; op.step < op.steps; ++op.step, op.phase = 0) {
    const uint64_t k = op.base + op.step;
    const size_t off = op.step * op.piece;
    const size_t len = std::min(op.piece, total - std::min(total, off));
    const shm::Overlap o = shm::overlap(mineLo, mineHi, off, len);
    if (op.phase == 0) {
      if (root) {
        if (!shm::rootMayWrite(c, op, k)) return false;  // everyone is done with this slot
        std::byte* slot = c.slot(me, k);
        if (direct && o.len) {
          // The piece around the root's own part, which goes to the result.
          shm::packPiece(a.sendbuf, a.count * p, a.type, off, slot, o.at - off);
          shm::packPiece(a.sendbuf, a.count * p, a.type, o.at + o.len,
                         slot + (o.at + o.len - off), off + len - (o.at + o.len));
          shm::copyDirect(a.sendbuf, a.count * p, a.type, o.at, a.recvbuf, a.recvCount,
                          a.recvType, o.at - mineLo, o.len);
        } else {
          shm::packPiece(a.sendbuf, a.count * p, a.type, off, slot, len);
        }
      }
      c.publish(k);
      op.phase = 1;
    }
    // A step without any of this rank's block is published and left: it
    // reads nothing the root writes there. (An empty block still waits for
    // every step, so the call meets the root at least once.)
    if (!root && o.len == 0 && op.bytes != 0) continue;
    if (!c.reached(a.root, k)) return false;
    if (root && (a.inPlace || direct)) continue;
    shm::unpackPiece(a.recvbuf, a.recvCount, a.recvType, o.at - mineLo,
                     c.slot(a.root, k) + (o.at - off), o.len);
  }
  if (root) shm::rootWrote(c, op);
  return true;
}

}  // namespace

Status scatterShm(const CollArgs& a, Request** out) {
  // bytes: one block, alike on every rank; the slots carry all p blocks.
  return shm::startOp(a, run, a.bytes, a.bytes * a.comm->size(), out);
}

}  // namespace loom::coll
