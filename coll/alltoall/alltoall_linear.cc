// Alltoall, alltoallv and alltoallw by posting everything at once.
//
// Steps: one round. A rank posts its p - 1 receives, each straight into its
// place in the receive buffer, and its p - 1 sends, each from its block of
// the send buffer, and copies its own block (nothing to do with
// MPI_IN_PLACE). With MPI_IN_PLACE the send blocks are first packed out of
// the receive buffer into scratch (one extra copy), because receives may
// land before the sends have read their data.
//
// Cost: (p - 1) * alpha + (p - 1) * m * beta per rank, all messages in
// flight together: one latency, but p - 1 outstanding messages per rank
// congest a large job; the choice for small and medium blocks. Every pair
// of ranks exchanges exactly one message each way, as in the pairwise
// algorithm, so ranks that chose differently (alltoallv/w key on each
// rank's own largest block) still match.
// Restrictions: none; any p, any counts and types.
#include "coll/algorithms.h"
#include "coll/move_util.h"

namespace loom::coll {

Status alltoallLinear(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  move::ExchangeBlocks x = move::exchangeBlocks(s, a);
  // Receives first, so a peer's message finds its receive posted.
  for (int k = 1; k < p; ++k) move::recvBlock(s, x.recv[(r - k + p) % p], (r - k + p) % p);
  for (int k = 1; k < p; ++k) move::sendBlock(s, x.send[(r + k) % p], (r + k) % p);
  if (!a.inPlace) move::scheduleCopyAfterPosting(s, x.send[r], x.recv[r]);
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
