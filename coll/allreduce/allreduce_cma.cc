// Allreduce on one node by reading the peers' buffers directly
// (single-copy cross-memory reads, core/cma.h), synchronised through the
// communicator's shared segment (coll/shm/shm_coll.h).
//
// What: the vector is cut into p chunks. Every rank publishes the addresses
// of its buffers; rank i then reduces chunk i, reading that chunk of every
// peer's input straight from the peer's memory in slot-sized pieces (so
// the accumulator stays in cache), in rank order, into its own result;
// then every rank reads every other finished chunk from its owner's result.
// A last step keeps each rank's buffers alive until every peer has read
// them.
// Steps: 3 (addresses, chunks reduced, chunks read).
// Cost: per rank 2 (p - 1)/p n beta of single copies plus (p - 1)/p n gamma,
// like a ring or Rabenseifner, but with three flag synchronisations
// instead of 2 (p - 1) or 2 log2 p message latencies and no staging copy.
// The result is computed once per chunk, so every rank gets the same bits;
// the fold keeps rank order, so non-commutative ops are fine.
// Restrictions: one node, cross-memory reads allowed (cma::usable), a
// contiguous type. Any p. A failed read fails the call on that rank (the
// others still complete: every step is still published).
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/shm/cma_steps.h"

namespace loom::coll {
namespace {

struct Layout {
  uint64_t* addrs;    // 2 per rank: input, result (copied out of the slots)
  std::byte* acc;     // one piece
  std::byte* tmp;     // one piece
};

Layout layout(ShmOp& op, int p) {
  auto* base = op.scratch.data();
  return {reinterpret_cast<uint64_t*>(base), base + 16 * p, base + 16 * p + op.piece};
}

size_t chunkOffset(const ShmOp& op, size_t unit, int p, int i) {
  return static_cast<size_t>(blockOffset(static_cast<int64_t>(op.bytes / unit), p, i)) * unit;
}

constexpr const char* kAvoid = "LOOM_COLL_ALLREDUCE=ring";

void reduceMyChunk(ShmColl& c, ShmOp& op, const Layout& l) {
  const CollArgs& a = op.args;
  const int p = c.size(), me = c.rank();
  const size_t unit = reduceUnit(a.type, a.op);
  const size_t off = chunkOffset(op, unit, p, me);
  const size_t len = chunkOffset(op, unit, p, me + 1) - off;
  const char* mine = static_cast<const char*>(a.sendbuf) + a.type->trueLb();
  char* out = static_cast<char*>(a.recvbuf) + a.type->trueLb();
  for (size_t s = 0; s < len; s += op.piece) {
    const size_t n = std::min(op.piece, len - s);
    const size_t at = off + s;
    // acc = x[p-1]; then acc = x[r] op acc for r = p-2 .. 0.
    if (p - 1 == me)
      std::memcpy(l.acc, mine + at, n);
    else
      shm::cmaRead(c, op, p - 1, l.addrs[2 * (p - 1)] + at, l.acc, n, kAvoid);
    for (int r = p - 2; r >= 0; --r) {
      const void* x = mine + at;
      if (r != me) {
        shm::cmaRead(c, op, r, l.addrs[2 * r] + at, l.tmp, n, kAvoid);
        x = l.tmp;
      }
      reducePacked(x, l.acc, n, a.type, a.op);
    }
    std::memcpy(out + at, l.acc, n);
  }
}

bool run(ShmColl& c, ShmOp& op) {
  const CollArgs& a = op.args;
  const int p = c.size(), me = c.rank();
  const Layout l = layout(op, p);
  const uint64_t k = op.base;
  if (op.step == 0) {
    if (!shm::exchangeAddresses(c, op, k, true, l.addrs)) return false;
    reduceMyChunk(c, op, l);
    op.step = 1;
    op.phase = 0;
  }
  if (op.step == 1) {
    if (op.phase == 0) {
      c.publish(k + 1);
      op.phase = 1;
    }
    if (!c.allReached(k + 1)) return false;
    const size_t unit = reduceUnit(a.type, a.op);
    char* out = static_cast<char*>(a.recvbuf) + a.type->trueLb();
    for (int r = 0; r < p; ++r) {
      if (r == me) continue;
      const size_t off = chunkOffset(op, unit, p, r);
      shm::cmaRead(c, op, r, l.addrs[2 * r + 1] + off, out + off,
                   chunkOffset(op, unit, p, r + 1) - off, kAvoid);
    }
    op.step = 2;
    op.phase = 0;
  }
  if (op.phase == 0) {
    c.publish(k + 2);
    op.phase = 1;
  }
  if (!c.allReached(k + 2)) return false;  // nobody reads our buffers any more
  op.step = 3;
  return true;
}

}  // namespace

bool cmaReductionSupports(const CollArgs& a) {
  return a.type && a.type->isContiguous() && cma::usable() && shmReductionSupports(a);
}

Status allreduceCma(const CollArgs& a, Request** out) {
  return shm::startCmaReduction(a, run, 3, 16 * static_cast<size_t>(a.comm->size()), 2, out);
}

}  // namespace loom::coll
