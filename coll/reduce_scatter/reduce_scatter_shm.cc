// Reduce-scatter-block through the communicator's shared segment
// (coll/shm/shm_coll.h).
//
// What: every rank copies its whole input (p blocks) into its slot, piece
// by piece; once all pieces of a step are there, each rank folds, in rank
// order, the part of the step that falls in its own block into its result.
// Steps: ceil(p * n / slot) for blocks of n bytes, one synchronisation
// each (one for n = 0).
// Cost: per rank p n beta to stage its input plus (p - 1) n (beta + gamma)
// to fold its block from every slot, and one flag transfer per peer per
// step: for small blocks one cache-line round per peer instead of the
// ring's p - 1 message latencies, which matters most where each latency is
// a context switch (ranks outnumber cores).
// Restrictions: all ranks on one node; a user op needs a contiguous type
// (shmReductionSupports). Any op: the fold keeps rank order. Any p. In
// place: the input is recvbuf, and the result lands on its first block's
// bytes only after the step that staged them.
#include <cstring>

#include "coll/algorithms.h"
#include "coll/shm/shm_steps.h"

namespace loom::coll {
namespace {

bool run(ShmColl& c, ShmOp& op) {
  const CollArgs& a = op.args;
  const size_t blk = a.type->packedSize(a.recvCount);
  const size_t lo = static_cast<size_t>(c.rank()) * blk, hi = lo + blk;
  const int p = c.size();
  for (; op.step < op.steps; ++op.step, op.phase = 0) {
    const shm::Step s = shm::stepAt(op, op.bytes);
    const uint64_t k = s.k;
    const size_t off = s.off, len = s.len;
    if (!shm::stageOwn(c, op, s, a.sendbuf, a.count, a.type)) return false;
    if (!c.allReached(k)) return false;
    const shm::Overlap o = shm::overlap(lo, hi, off, len);
    if (o.len == 0) continue;
    const size_t at = o.at - off;  // where the part lies in every slot
    // Staged input cannot overlap the result: in place, the bytes written
    // here ([o.at - lo, ...) of recvbuf's stream) come before o.at + o.len,
    // and those were staged by this step or earlier ones.
    auto* dst = a.type->isContiguous()
                    ? static_cast<std::byte*>(a.recvbuf) + a.type->trueLb() + (o.at - lo)
                    : op.scratch.data();
    std::memcpy(dst, c.slot(p - 1, k) + at, o.len);
    for (int r = p - 2; r >= 0; --r) reducePacked(c.slot(r, k) + at, dst, o.len, a.type, a.op);
    if (!a.type->isContiguous())
      shm::unpackPiece(a.recvbuf, a.recvCount, a.type, o.at - lo, dst, o.len);
  }
  return true;
}

}  // namespace

Status reduceScatterBlockShm(const CollArgs& a, Request** out) {
  return shm::startReduction(a, run, out);
}

}  // namespace loom::coll
