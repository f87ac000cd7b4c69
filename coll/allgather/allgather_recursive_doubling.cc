// Allgather by recursive doubling (power-of-two rank counts).
//
// Steps: a rank first copies its own block into its place in the receive
// buffer (nothing to do with MPI_IN_PLACE). In step k = 0, 1, ... it holds
// the 2^k blocks of the ranks that share its bits above k, a run of
// consecutive blocks starting at r & ~(2^k - 1); it exchanges that run with
// r XOR 2^k, which holds the neighbouring run. Runs of consecutive blocks
// are consecutive elements of the receive type, so every message is sent
// and received in place in the user's buffer, non-contiguous or not.
//
// Cost: log2(p) * alpha + (p-1)/p * n * beta for n = p * m bytes in all:
// the fewest latencies and the least data of any allgather.
// Restrictions: p must be a power of two (supports() declines the others:
// Bruck covers small non-power-of-two cases, the ring large ones).
#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

bool allgatherRecursiveDoublingSupports(const CollArgs& a) {
  const int p = a.comm->size();
  return (p & (p - 1)) == 0;
}

Status allgatherRecursiveDoubling(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  if (p & (p - 1)) return errorf(MPI_ERR_INTERN, "recursive doubling needs a power of two");
  const move::Block own{static_cast<char*>(const_cast<void*>(a.sendbuf)), a.count, a.type};
  // The first round sends only this rank's own block: from the send
  // buffer, with its copy into place running while the message moves (the
  // later rounds send it from there). 2 ranks, 32 KiB blocks: 3.3 us
  // against 7.3 with the copy first (Intel Xeon VM).
  if (!a.inPlace)
    move::scheduleCopyAfterPosting(s, own, move::equalBlock(a.recvbuf, a.recvCount, a.recvType, r));
  for (int k = 1; k < p; k <<= 1) {
    const int peer = r ^ k;
    const int mineStart = r & ~(k - 1), peerStart = peer & ~(k - 1);
    if (k == 1 && !a.inPlace)
      move::sendBlock(s, own, peer);
    else
      s.send(move::equalBlock(a.recvbuf, a.recvCount, a.recvType, mineStart).ptr,
             k * a.recvCount, a.recvType, peer);
    s.recv(move::equalBlock(a.recvbuf, a.recvCount, a.recvType, peerStart).ptr, k * a.recvCount,
           a.recvType, peer);
    s.endRound();
  }
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
