// Reduce on one node by reading the peers' inputs directly (single-copy
// cross-memory reads and writes, core/cma.h), synchronised through the
// communicator's shared segment (coll/shm/shm_coll.h).
//
// What: the vector is cut into p chunks, as in allreduce's cma. Every rank
// publishes the address of its input, the root also that of its result.
// Rank i then reduces chunk i, reading that chunk of every peer's input in
// pieces (so the operands stay in cache), in rank order; the root folds
// straight into its result, the others write each folded piece into the
// root's result. A last step keeps every buffer alive until all are done.
// The root's chunk is larger (kRootWeight): the others also write theirs.
// Steps: 2 (addresses, chunks written).
// Cost: per rank (p - 1)/p n beta of single-copy reads plus (p - 1)/p n
// gamma and, off the root, n/p beta of writes: the reduction's work is
// spread over the ranks, where shm and the binomial tree fold everything at
// the root (at 2 ranks the root's work halves). Against shm (the others copy
// into slots, the root folds from there) no staging copy: the peers' inputs
// are read where they lie. 2 ranks, Intel Xeon VM (CMA window from
// 16 KiB), 64 KiB / 512 KiB / 4 MiB: 4.9 / 28 / 359 us, against shm's
// 6.5 / 52 / -, the binomial tree's 9.3 / 47 / 598 and Open MPI's 4.6 /
// 30 / 956 (one run each; the benchmark pages have medians).
// The fold keeps rank order, so non-commutative ops are fine, and every
// chunk is folded once, so the result does not depend on who folds it.
// Restrictions: one node, cross-memory reads and writes allowed
// (cma::usable), a contiguous type. Any p. A failed read or write fails the
// call on the rank that made it, and the root's too (each peer says in its
// slot whether its chunk arrived); every step is still published, so nobody
// waits forever.
#include <algorithm>
#include <cstring>

#include "coll/algorithms.h"
#include "coll/shm/cma_steps.h"

namespace loom::coll {
namespace {

struct Layout {
  uint64_t* addrs;  // 2 per rank: its input, its result (the root's matters)
  std::byte* t0;    // a peer's piece
  std::byte* t1;    // another peer's piece, or the folded piece off the root
  std::byte* own;   // the rank's own piece, when its input is its result
  std::byte* acc;   // off the root: the folded piece before it is written
};

Layout layout(ShmOp& op, int p) {
  std::byte* base = op.scratch.data();
  std::byte* t = base + 16 * static_cast<size_t>(p);
  return {reinterpret_cast<uint64_t*>(base), t, t + op.piece, t + 2 * op.piece, t + 3 * op.piece};
}

// Chunk i's first byte: the chunks are whole units, the root's
// kRootWeight / kWeight times as large as the others'. Per byte of its
// chunk the root reads and folds (beta + gamma), the others also write
// (2 beta + gamma); with gamma ~0.6 beta (a float sum against a copy) that
// is 1.6 times the work, so 8 : 5 evens them out. At 2 ranks on the Intel
// Xeon VM, 64 KiB to 1 MiB, one run each: 8 : 5 beat 5 : 5 by 12-23%, and
// 10 : 5 by 7-16% from 128 KiB (3% behind at 64 KiB).
constexpr unsigned kWeight = 5, kRootWeight = 8;
size_t chunkOffset(const ShmOp& op, size_t unit, int p, int i) {
  const unsigned __int128 units = op.bytes / unit;
  const unsigned __int128 total = kWeight * static_cast<unsigned>(p - 1) + kRootWeight;
  const unsigned __int128 before =
      kWeight * static_cast<unsigned>(i) + (i > op.args.root ? kRootWeight - kWeight : 0);
  return static_cast<size_t>(units * before / total) * unit;
}

constexpr const char* kAvoid = "LOOM_COLL_REDUCE=binomial";

// x0 op (x1 op (... op x[p-1])) over the stream's bytes [at, at + n): into
// the root's result (at the root) or written there (elsewhere).
void foldPiece(ShmColl& c, ShmOp& op, const Layout& l, size_t at, size_t n) {
  const CollArgs& a = op.args;
  const int p = c.size(), me = c.rank();
  const bool root = me == a.root;
  const char* mine = static_cast<const char*>(a.sendbuf) + a.type->trueLb() + at;
  void* out = root ? static_cast<void*>(static_cast<char*>(a.recvbuf) + a.type->trueLb() + at)
                   : static_cast<void*>(l.acc);
  // In place (the root only), the input is the result: the fold starts by
  // writing there, so keep the input aside unless it is the fold's start.
  if (root && a.inPlace && me != p - 1) {
    std::memcpy(l.own, mine, n);
    mine = reinterpret_cast<const char*>(l.own);
  }
  auto get = [&](int r, std::byte* into) -> const void* {
    if (r == me) return mine;
    shm::cmaRead(c, op, r, l.addrs[2 * r] + at, into, n, kAvoid);
    return into;
  };
  const void* last = get(p - 1, l.t0);
  const void* prev = get(p - 2, l.t1);
  reducePackedFrom(prev, last, out, n, a.type, a.op);  // one pass; `last` may be `out`
  for (int r = p - 3; r >= 0; --r) reducePacked(get(r, l.t0), out, n, a.type, a.op);
  if (!root) shm::cmaWrite(c, op, a.root, out, l.addrs[2 * a.root + 1] + at, n, kAvoid);
}

bool run(ShmColl& c, ShmOp& op) {
  const CollArgs& a = op.args;
  const int p = c.size(), me = c.rank();
  const uint64_t k = op.base;
  if (op.step == 0) {
    const Layout l = layout(op, p);
    if (!shm::exchangeAddresses(c, op, k, me == a.root, l.addrs)) return false;
    const size_t unit = reduceUnit(a.type, a.op);
    const size_t end = chunkOffset(op, unit, p, me + 1);
    for (size_t at = chunkOffset(op, unit, p, me); at < end; at += op.piece)
      foldPiece(c, op, l, at, std::min(op.piece, end - at));
    op.step = 1;
    op.phase = 0;
  }
  if (op.phase == 0) {
    // Off the root, whether my chunk reached the root's result, in my slot
    // of step k + 1: I may write it (its previous use, step k + 1 - depth,
    // is long done), and nobody rewrites it before the root has moved past
    // this call.
    if (me != a.root) {
      if (!c.slotFree(k + 1)) return false;
      *reinterpret_cast<uint64_t*>(c.slot(me, k + 1)) = op.status.isOk() ? 0 : 1;
    }
    c.publish(k + 1);  // my chunk is in the root's result; I read nobody's input any more
    op.phase = 1;
  }
  if (!c.allReached(k + 1)) return false;
  if (me == a.root)
    for (int r = 0; r < p && op.status.isOk(); ++r)
      if (r != me && *reinterpret_cast<const uint64_t*>(c.slot(r, k + 1)) != 0)
        op.status = errorf(MPI_ERR_OTHER,
                           "rank %d could not write its part of the result (see its error)", r);
  op.step = 2;
  return true;
}

}  // namespace

Status reduceCma(const CollArgs& a, Request** out) {
  return shm::startCmaReduction(a, run, 2, 16 * static_cast<size_t>(a.comm->size()), 4, out);
}

}  // namespace loom::coll
