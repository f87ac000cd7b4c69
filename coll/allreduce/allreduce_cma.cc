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
#include <cerrno>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/op.h"
#include "coll/shm/shm_steps.h"
#include "core/cma.h"

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

// Reads `len` bytes at `remote` of rank r into `dst`, recording a failure.
void readPeer(ShmColl& c, ShmOp& op, int r, uint64_t remote, void* dst, size_t len) {
  if (!op.status.isOk() || len == 0) return;
  if (!cma::read(c.pid(r), reinterpret_cast<const void*>(remote), dst, len))
    op.status = errorf(MPI_ERR_OTHER, "reading rank %d's buffer (process_vm_readv): %s; "
                       "LOOM_COLL_ALLREDUCE=ring avoids it", r, std::strerror(errno));
}

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
      readPeer(c, op, p - 1, l.addrs[2 * (p - 1)] + at, l.acc, n);
    for (int r = p - 2; r >= 0; --r) {
      const void* x = mine + at;
      if (r != me) {
        readPeer(c, op, r, l.addrs[2 * r] + at, l.tmp, n);
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
    if (op.phase == 0) {
      if (!c.slotFree(k)) return false;  // everyone is done with this slot
      auto* mine = reinterpret_cast<uint64_t*>(c.slot(me, k));
      mine[0] = reinterpret_cast<uint64_t>(static_cast<const char*>(a.sendbuf) + a.type->trueLb());
      mine[1] = reinterpret_cast<uint64_t>(static_cast<char*>(a.recvbuf) + a.type->trueLb());
      c.publish(k);
      op.phase = 1;
    }
    if (!c.allReached(k)) return false;
    for (int r = 0; r < p; ++r)
      std::memcpy(l.addrs + 2 * r, c.slot(r, k), 16);
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
      readPeer(c, op, r, l.addrs[2 * r + 1] + off, out + off, chunkOffset(op, unit, p, r + 1) - off);
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

bool allreduceCmaSupports(const CollArgs& a) {
  return a.type && a.type->isContiguous() && cma::usable() && shmReductionSupports(a);
}

Status allreduceCma(const CollArgs& a, Request** out) {
  ShmColl* c = ShmColl::of(a.comm);
  ShmOp* op = c->newOp();
  op->args = a;
  op->run = run;
  op->bytes = a.type->packedSize(a.count);
  const size_t unit = reduceUnit(a.type, a.op);
  constexpr size_t kPiece = 64 * 1024;  // read and reduced at a time; stays in L2
  op->piece = std::max(kPiece / unit, size_t{1}) * unit;
  op->steps = 3;
  op->scratch.resize(16 * static_cast<size_t>(c->size()) + 2 * op->piece);
  return c->start(op, out);
}

}  // namespace loom::coll
