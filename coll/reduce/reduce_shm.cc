// Reduce through the communicator's shared segment (coll/shm/shm_coll.h).
//
// What: every rank but the root (all of them below kDirectMin) copies its
// input into its slot, piece by piece; the root reduces all slots of each
// step and its own input, in rank
// order, into its result. The others leave as soon as their last piece is
// staged (they only wait for the root to be done with a slot before
// refilling it).
// The root reads its own input where it lies (contiguous types): nobody else
// reads it, so staging it would only add a pass over the data. With two
// ranks the root then touches each byte once: out = x0 op x1 in one pass
// over its input and the peer's slot (from 4 KiB: kDirectMin). 2 ranks,
// Intel Xeon VM, 4-8 KiB: 0.57-0.62 us against 0.61-0.64; 16 KiB:
// 1.62-1.72 us (3 runs), against a median of 1.88 when the root staged its
// input too and folded from the slots (bench/results/2026-11-29-coll-intel).
// A type that is not contiguous, and an in-place root that is not the last
// rank (its input is the result it writes), stage as the others do.
// Steps: ceil(n / slot) (one for n = 0).
// Cost: n beta per non-root to stage, plus (p - 1) n (beta + gamma) at the
// root; one flag transfer per peer per step. A binomial tree spreads the
// gamma work over ranks but pays log2 p message latencies and copies.
// Restrictions: all ranks on one node; a user op needs a contiguous type.
// Non-commutative ops keep rank order. Any p, any root.
#include "coll/algorithms.h"
#include "coll/shm/shm_steps.h"

namespace loom::coll {
namespace {

// From this size the root folds its own input where it lies. Below, the
// copy it saves is a few cache lines, and the two paths measured alike
// (2 ranks, 8-256 B, four interleaved runs: 0.19-0.23 us either way).
constexpr size_t kDirectMin = 4096;

// Where the root's own piece of a step lies when it is not staged (null:
// it is staged like the others'). In place, the root's input is its result:
// readable only while the fold has not written it, i.e. when the root is the
// last rank (the fold starts from x[p-1] and works down).
const std::byte* ownPiece(const ShmColl& c, const CollArgs& a, size_t off) {
  if (!a.type->isContiguous()) return nullptr;
  if (a.inPlace && a.root != c.size() - 1) return nullptr;
  return static_cast<const std::byte*>(a.sendbuf) + a.type->trueLb() + off;
}

// x0 op (x1 op (... op x[p-1])) of step k into dst, rank order kept, the
// root's piece from `own`.
void foldWithOwn(ShmColl& c, const CollArgs& a, uint64_t k, size_t len, const std::byte* own,
                 void* dst) {
  const int p = c.size(), me = c.rank();
  auto src = [&](int r) -> const void* { return r == me ? own : c.slot(r, k); };
  int r = p - 1;
  if (src(r) != dst) {
    if (r >= 1) {
      reducePackedFrom(src(r - 1), src(r), dst, len, a.type, a.op);  // one pass
      --r;
    } else {
      std::memcpy(dst, src(r), len);
    }
  }
  for (--r; r >= 0; --r) reducePacked(src(r), dst, len, a.type, a.op);
}

bool run(ShmColl& c, ShmOp& op) {
  const CollArgs& a = op.args;
  const bool root = c.rank() == a.root;
  const bool direct = root && op.bytes >= kDirectMin && ownPiece(c, a, 0) != nullptr;
  for (; op.step < op.steps; ++op.step, op.phase = 0) {
    const shm::Step s = shm::stepAt(op, op.bytes);
    if (direct) {
      if (op.phase == 0) {  // nothing to stage: say so at once
        c.publish(s.k);
        op.phase = 1;
      }
    } else if (!shm::stageOwn(c, op, s, a.sendbuf, a.count, a.type)) {
      return false;
    }
    if (!root) continue;
    if (!c.allReached(s.k)) return false;
    if (!direct) {
      shm::foldIntoResult(c, op, s.k, s.off, s.len);
      continue;
    }
    if (s.len == 0) continue;
    foldWithOwn(c, a, s.k, s.len, ownPiece(c, a, s.off),
                static_cast<std::byte*>(a.recvbuf) + a.type->trueLb() + s.off);
  }
  return true;
}

}  // namespace

Status reduceShm(const CollArgs& a, Request** out) { return shm::startReduction(a, run, out); }

}  // namespace loom::coll
