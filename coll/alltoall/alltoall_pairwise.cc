// Alltoall, alltoallv and alltoallw by pairwise exchange.
//
// Steps: copy the own block (nothing to do with MPI_IN_PLACE), then p - 1
// rounds; in round k = 1 .. p-1 a rank exchanges one block with one peer:
// with p a power of two the peer is r XOR k (both directions with the same
// rank), otherwise it sends to (r + k) mod p and receives from
// (r - k) mod p. Blocks go straight from and to the user's buffers; with
// MPI_IN_PLACE the send blocks are first packed out of the receive buffer
// into scratch (one extra copy).
//
// Cost: (p - 1) * alpha + (p - 1) * m * beta per rank, one message in each
// direction at a time: no congestion, so the choice for large blocks.
// Every pair exchanges exactly one message each way, as in the linear
// algorithm, so ranks that chose differently still match.
// Restrictions: none; any p (the modular pairing covers non-powers of two),
// any counts and types.
#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

Status alltoallPairwise(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  const bool pow2 = (p & (p - 1)) == 0;
  move::ExchangeBlocks x = move::exchangeBlocks(s, a);
  if (!a.inPlace) move::scheduleCopy(s, x.send[r], x.recv[r]);
  for (int k = 1; k < p; ++k) {
    const int to = pow2 ? r ^ k : (r + k) % p, from = pow2 ? r ^ k : (r - k + p) % p;
    move::recvBlock(s, x.recv[from], from);
    move::sendBlock(s, x.send[to], to);
    s.endRound();
  }
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
