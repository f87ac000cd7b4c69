// Allgather through the communicator's shared segment (coll/shm/shm_coll.h).
//
// What: every rank copies its block into its slot, piece by piece; once a
// step's pieces are all there, every rank copies all of them into its
// result.
// Steps: ceil(block / slot) (one for empty blocks).
// Cost: block beta to stage plus p * block beta to collect, per rank, in
// parallel; one flag transfer per peer per step, against log2 p (recursive
// doubling, Bruck) or p - 1 (ring) message latencies.
// Restrictions: all ranks on one node. Any p, any datatypes (packed through
// the slots), MPI_IN_PLACE (the own block is left where it is).
#include "coll/algorithms.h"
#include "coll/shm/shm_steps.h"

namespace loom::coll {
namespace {

bool run(ShmColl& c, ShmOp& op) {
  const CollArgs& a = op.args;
  const int p = c.size();
  const int64_t blockExtent = a.recvCount * a.recvType->extent();
  // In place, this rank's block of recvbuf is its input.
  const void* in = a.inPlace ? static_cast<char*>(a.recvbuf) + c.rank() * blockExtent : a.sendbuf;
  const int64_t inCount = a.inPlace ? a.recvCount : a.count;
  Datatype* inType = a.inPlace ? a.recvType : a.type;
  for (; op.step < op.steps; ++op.step, op.phase = 0) {
    const shm::Step s = shm::stepAt(op, op.bytes);
    const uint64_t k = s.k;
    const size_t off = s.off, len = s.len;
    if (!shm::stageOwn(c, op, s, in, inCount, inType)) return false;
    if (!c.allReached(k)) return false;
    for (int r = 0; r < p; ++r) {
      if (r == c.rank() && a.inPlace) continue;
      shm::unpackPiece(static_cast<char*>(a.recvbuf) + r * blockExtent, a.recvCount, a.recvType,
                       off, c.slot(r, k), len);
    }
  }
  return true;
}

}  // namespace

Status allgatherShm(const CollArgs& a, Request** out) {
  const size_t block = a.recvType->packedSize(a.recvCount);  // = the send signature's
  const size_t sent = a.inPlace ? block : a.type->packedSize(a.count);
  return shm::startOp(a, run, block, block, out, 1, false, sent);
}

}  // namespace loom::coll
