// Allreduce by Rabenseifner's algorithm: recursive-halving reduce-scatter,
// then recursive-doubling allgather (commutative ops).
//
// Steps, with p' the largest power of two <= p and rem = p - p':
//  1. Fold-in when p is not a power of two: among the first 2*rem ranks
//     each even rank sends its whole vector to the odd rank above it, which
//     combines and stands for both (survivors renumbered 0..p'-1).
//  2. Reduce-scatter by recursive halving over p' blocks: with the block
//     range [lo, hi) the survivor v is responsible for (at first [0, p')),
//     for mask = p'/2, p'/4, ..., 1 it exchanges with v ^ mask: it keeps
//     the half of the range on its side of bit `mask`, sends the other
//     half and folds in the partner's copy of the kept half. At the end
//     survivor v holds the finished block v.
//  3. Allgather by recursive doubling: the same exchanges in reverse order,
//     each partner sending the range it holds, until all hold everything.
//  4. Fold-out: the odd ranks of step 1 send the result to their even ones.
// Each block is reduced on exactly one rank and then copied, so every rank
// ends with bitwise-identical results.
//
// Cost (p a power of two): 2*log2 p*alpha + 2(p-1)/p*n*beta
// + (p-1)/p*n*gamma: the ring's bandwidth with log p latency, the choice for
// large vectors on many ranks. Otherwise add 2*(alpha + n*beta) + n*gamma
// for the fold, which is why small non-power-of-two jobs prefer the ring.
//
// Restrictions: commutative ops (halving mixes the operand order). Any n:
// blocks differ by at most one element, and empty blocks send zero bytes.
#include <vector>

#include "coll/algorithms.h"
#include "coll/op.h"

namespace loom::coll {

Status allreduceRabenseifner(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  Datatype* t = a.type;
  Op* op = a.op;
  const int64_t n = a.count;
  char* const acc = static_cast<char*>(a.recvbuf);
  if (!a.inPlace) {
    const void* src = a.sendbuf;
    s.local([=] { copyLike(src, acc, n, t); });
  }
  if (p == 1) return Status::ok();

  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;
  int v;
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      s.send(acc, n, t, r + 1);
      s.endRound();
      v = -1;
    } else {
      s.recvReduce(acc, n, t, op, r - 1);
      s.endRound();
      v = r / 2;
    }
  } else {
    v = r - rem;
  }

  if (v >= 0) {
    auto realRank = [rem](int pv) { return pv < rem ? pv * 2 + 1 : pv + rem; };
    auto off = [n, pof2](int b) { return blockOffset(n, pof2, b); };
    struct Step {
      int peer, keepLo, keepHi, giveLo, giveHi;
    };
    std::vector<Step> steps;
    int lo = 0, hi = pof2;
    for (int mask = pof2 / 2; mask >= 1; mask /= 2) {
      const int mid = (lo + hi) / 2;
      Step st{realRank(v ^ mask), lo, mid, mid, hi};
      if (v & mask) st = Step{st.peer, mid, hi, lo, mid};
      s.send(elemAt(acc, off(st.giveLo), t), off(st.giveHi) - off(st.giveLo), t, st.peer);
      // The half we keep is folded in as it arrives; we send the other.
      s.recvReduce(elemAt(acc, off(st.keepLo), t), off(st.keepHi) - off(st.keepLo), t, op,
                   st.peer);
      s.endRound();
      steps.push_back(st);
      lo = st.keepLo;
      hi = st.keepHi;
    }
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      s.send(elemAt(acc, off(it->keepLo), t), off(it->keepHi) - off(it->keepLo), t, it->peer);
      s.recv(elemAt(acc, off(it->giveLo), t), off(it->giveHi) - off(it->giveLo), t, it->peer);
      s.endRound();
    }
  }

  if (r < 2 * rem) {
    if (r % 2 == 1) s.send(acc, n, t, r - 1);
    else s.recv(acc, n, t, r + 1);
    s.endRound();
  }
  return Status::ok();
}

}  // namespace loom::coll
