// Reduce through the communicator's shared segment (coll/shm/shm_coll.h).
//
// What: every rank but the root (all of them below kDirectMin) copies its
// input into its slot, piece by piece; the root reduces all slots of each
// step and its own input, in rank order, into its result. The others leave
// as soon as their last piece is staged (they only wait for the root to be
// done with a slot before refilling it).
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

// Whether the root folds its own input where it lies: a contiguous type
// from kDirectMin. In place the input is the result, readable only while
// the fold has not written it, i.e. when the root is the last rank (the
// fold starts from x[p-1] and works down).
bool foldsInPlace(const ShmColl& c, const ShmOp& op) {
  const CollArgs& a = op.args;
  return c.rank() == a.root && op.bytes >= kDirectMin && a.type->isContiguous() &&
         (!a.inPlace || a.root == c.size() - 1);
}

// x0 op (x1 op (... op x[p-1])) of step k into dst (p >= 2), rank order
// kept, the root's piece from `own`.
void foldWithOwn(ShmColl& c, const CollArgs& a, uint64_t k, size_t len, const void* own,
                 void* dst) {
  const int me = c.rank();
  auto src = [&](int r) -> const void* { return r == me ? own : c.slot(r, k); };
  const int last = c.size() - 1;
  int r = last - 1;  // the next to fold in
  if (src(last) != dst) {  // else the root's input, in place, is x[p-1]
    reducePackedFrom(src(r), src(last), dst, len, a.type, a.op);  // one pass
    --r;
  }
  for (; r >= 0; --r) reducePacked(src(r), dst, len, a.type, a.op);
}

bool run(ShmColl& c, ShmOp& op) {
  const CollArgs& a = op.args;
  const bool root = c.rank() == a.root;
  const bool direct = foldsInPlace(c, op);
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
    } else if (s.len != 0) {
      const std::ptrdiff_t at = a.type->trueLb() + static_cast<std::ptrdiff_t>(s.off);
      foldWithOwn(c, a, s.k, s.len, static_cast<const char*>(a.sendbuf) + at,
                  static_cast<char*>(a.recvbuf) + at);
    }
  }
  return true;
}

}  // namespace

Status reduceShm(const CollArgs& a, Request** out) { return shm::startReduction(a, run, out); }

}  // namespace loom::coll
