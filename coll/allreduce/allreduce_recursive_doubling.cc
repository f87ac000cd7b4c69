// Allreduce by recursive doubling (any op; rank order kept).
//
// Steps, with p' the largest power of two <= p and rem = p - p':
//  1. Fold-in (only when p is not a power of two): among the first 2*rem
//     ranks, each even rank sends its vector to the odd rank above it,
//     which computes x(even) op x(odd) and stands for both; the even ranks
//     wait. Survivors are renumbered 0..p'-1 in rank order.
//  2. log2 p' rounds: in round k the survivor with new number v exchanges
//     its whole partial with v ^ 2^k and combines them, the lower-numbered
//     partner's operand on the left. Both partners thus compute the same
//     expression (IEEE + and * are commutative bit for bit, and for a
//     non-commutative op the order is the same on both sides), so every
//     rank ends with bitwise-identical results.
//  3. Fold-out: each odd rank of step 1 sends the result to its even rank.
//
// Cost: log2 p' * (alpha + n*beta + n*gamma), plus 2*(alpha + n*beta) and
// n*gamma for the fold when p is not a power of two. Latency-optimal: the
// choice for small vectors, where alpha dominates.
//
// Restrictions: none. Non-commutative ops work because the survivors'
// numbering keeps rank order and each combine keeps lower-on-the-left.
#include <utility>

#include "coll/algorithms.h"
#include "coll/op.h"

namespace loom::coll {

Status allreduceRecursiveDoubling(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  Datatype* t = a.type;
  Op* op = a.op;
  const int64_t n = a.count;
  char* const result = static_cast<char*>(a.recvbuf);
  if (!a.inPlace) {
    const void* src = a.sendbuf;
    s.local([=] { copyLike(src, result, n, t); });
  }
  if (p == 1) return Status::ok();

  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;

  char* acc = result;              // this rank's partial
  char* tmp = scratchLike(s, n, t);  // the partner's partial (buffers swap)
  int v;                           // number among the survivors, -1 if folded in
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      s.send(acc, n, t, r + 1);
      s.endRound();
      v = -1;
    } else {
      s.recv(tmp, n, t, r - 1);
      s.endRound();
      s.local([=] { (void)reduceLocal(tmp, acc, n, t, op); });  // x(r-1) op x(r)
      v = r / 2;
    }
  } else {
    v = r - rem;
  }

  if (v >= 0) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int pv = v ^ mask;
      const int peer = pv < rem ? pv * 2 + 1 : pv + rem;
      s.send(acc, n, t, peer);
      s.recv(tmp, n, t, peer);
      s.endRound();
      if (pv < v) {
        s.local([=] { (void)reduceLocal(tmp, acc, n, t, op); });  // acc = peer op acc
      } else {
        s.local([=] { (void)reduceLocal(acc, tmp, n, t, op); });  // tmp = acc op peer
        std::swap(acc, tmp);
      }
    }
    if (acc != result) s.local([=] { copyLike(acc, result, n, t); });
  }

  if (r < 2 * rem) {
    if (r % 2 == 1) {
      s.send(result, n, t, r - 1);
    } else {
      s.recv(result, n, t, r + 1);
    }
    s.endRound();
  }
  return Status::ok();
}

}  // namespace loom::coll
