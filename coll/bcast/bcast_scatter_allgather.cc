// Broadcast as a binomial scatter followed by a ring allgather (van de
// Geijn; MPICH's long-message broadcast).
//
// Terms: the n bytes of the message (packed, in type-map order) are cut
// into p chunks of c = ceil(n / p) bytes (the last ones shorter or empty);
// chunk i belongs to relative rank i (vr = (r - root) mod p).
// Steps:
//   1. scatter along a binomial tree: a rank receives from its parent the
//      chunks of its whole subtree [vr, vr + lowbit(vr)), then forwards to
//      each child vr + 2^k the chunks of the child's subtree;
//   2. ring allgather: in step s = 0 .. p-2 a rank sends chunk (vr - s) to
//      vr + 1 and receives chunk (vr - s - 1) from vr - 1.
// A contiguous type is moved in place in the user's buffer; any other type
// is packed into a scratch buffer at the root first and unpacked at the end
// on the other ranks (one extra copy each).
//
// Cost: scatter ceil(log2 p) * alpha + (p-1)/p * n * beta, allgather
// (p-1) * alpha + (p-1)/p * n * beta: about 2n * beta in total against
// log2(p) * n * beta for the binomial tree, for (p - 1) more latencies.
// Worth it for large n and p >= 8 or so.
// Restrictions: none; any p (the tree is cut at p, the ring wraps), any
// root, any n (chunks may be empty: empty messages still match).
#include <algorithm>

#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

Status bcastScatterAllgather(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  if (p == 1) return Status::ok();
  const int vr = move::relRank(r, a.root, p);
  const move::Block user{static_cast<char*>(a.recvbuf), a.count, a.type};
  const size_t n = user.bytes();
  const size_t c = (n + p - 1) / p;
  auto off = [n, c](int i) { return std::min(n, static_cast<size_t>(i) * c); };
  const bool direct = a.type->isContiguous();
  char* buf = direct ? user.ptr + a.type->trueLb() : static_cast<char*>(s.scratch(n));
  if (!direct && vr == 0) s.local([user, buf] { move::packBlock(user, buf); });

  // 1. Binomial scatter of the chunks.
  int mask = 1;
  while (mask < p && !(vr & mask)) mask <<= 1;
  if (vr != 0) {
    const int end = std::min(p, vr + mask);
    move::recvBytes(s, buf + off(vr), off(end) - off(vr), move::absRank(vr - mask, a.root, p));
    s.endRound();
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    const int child = vr + mask;
    if (child >= p) continue;
    const int end = std::min(p, child + mask);
    move::sendBytes(s, buf + off(child), off(end) - off(child), move::absRank(child, a.root, p));
  }
  s.endRound();

  // 2. Ring allgather of the chunks.
  const int right = move::absRank(vr + 1, a.root, p), left = move::absRank(vr - 1 + p, a.root, p);
  for (int step = 0; step < p - 1; ++step) {
    const int out = (vr - step + p) % p, in = (vr - step - 1 + 2 * p) % p;
    move::sendBytes(s, buf + off(out), off(out + 1) - off(out), right);
    move::recvBytes(s, buf + off(in), off(in + 1) - off(in), left);
    s.endRound();
  }
  if (!direct && vr != 0) s.local([user, buf] { move::unpackBlock(user, buf); });
  return Status::ok();
}

}  // namespace loom::coll
