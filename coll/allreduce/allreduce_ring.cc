// Allreduce by ring: reduce-scatter then allgather (commutative ops).
//
// Terms: the vector of n elements is cut into p blocks whose sizes differ
// by at most one element; block b lives at element offset
// blockOffset(n, p, b) of every rank's buffer.
// Steps:
//  1. Reduce-scatter, p-1 rounds: in round k rank r sends block (r-k) mod p
//     to r+1 and receives block (r-k-1) mod p from r-1, folding it into its
//     own copy as it arrives (Schedule::recvReduce: no scratch copy, the
//     pieces are reduced while still in the cache), so a block travels the
//     ring collecting one contribution per hop. Afterwards rank r holds the
//     finished block (r+1) mod p.
//  2. Allgather, p-1 rounds: in round k rank r sends block (r+1-k) mod p to
//     r+1 and receives block (r-k) mod p from r-1 straight into its result.
// Every block is reduced exactly once, on one rank, and then only copied,
// so all ranks end with bitwise-identical results even for floats.
//
// Cost: 2(p-1)*alpha + 2(p-1)/p*n*beta + (p-1)/p*n*gamma. Bandwidth-optimal
// (each rank sends about 2n whatever p is) but linear in alpha: the choice
// for large vectors on few ranks.
//
// Restrictions: commutative ops (a block's contributions are combined in
// ring order starting anywhere). Any p; n need not divide by p (blocks
// differ by one element; with n < p some blocks are empty and their
// messages carry zero bytes).
#include "coll/algorithms.h"
#include "coll/op.h"

namespace loom::coll {

Status allreduceRing(Schedule& s, const CollArgs& a) {
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

  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  auto mod = [p](int x) { return ((x % p) + p) % p; };
  for (int k = 0; k < p - 1; ++k) {
    const int sb = mod(r - k), rb = mod(r - k - 1);
    s.send(elemAt(acc, blockOffset(n, p, sb), t), blockSize(n, p, sb), t, right);
    // Folded into our copy of block rb as it arrives (sb != rb: p > 1).
    s.recvReduce(elemAt(acc, blockOffset(n, p, rb), t), blockSize(n, p, rb), t, op, left);
    s.endRound();
  }
  for (int k = 0; k < p - 1; ++k) {
    const int sb = mod(r + 1 - k), rb = mod(r - k);
    s.send(elemAt(acc, blockOffset(n, p, sb), t), blockSize(n, p, sb), t, right);
    s.recv(elemAt(acc, blockOffset(n, p, rb), t), blockSize(n, p, rb), t, left);
    s.endRound();
  }
  return Status::ok();
}

}  // namespace loom::coll
