// Allgather (and allgatherv) around a ring, on host or device buffers.
//
// Steps: in step s = 0 .. p-2 a rank sends block (r - s) mod p to r + 1 and
// receives block (r - s - 1) mod p from r - 1, each straight from and into
// the user's buffer. Step 0 sends its own block from the send buffer, and
// the copy of it into its place in the receive buffer (nothing to do with
// MPI_IN_PLACE) runs once that step's messages are posted: no later step
// sends it from there. Copying first kept the peer waiting for the copy (2
// ranks, 32 KiB blocks: 3.3 us against 7.5, Intel Xeon VM). With
// allgatherv the blocks are the per-rank counts and displacements.
//
// Device buffers (CollArgs::mem == kDevice: every buffer of this rank on
// the GPU, contiguous types): the same messages, p2p moving device memory.
// The own block is copied on the device (a schedule device step) beside
// step 0; the call completes only after the copy has.
//
// Cost: (p - 1) * alpha + (p-1)/p * n * beta for n bytes in all: the least
// data, and each rank talks only to its neighbours, but p - 1 latencies:
// the choice for large blocks.
// Restrictions: none; any p (the ring wraps), any counts. Device form:
// contiguous types (moveDeviceSupports); other device calls are staged.
#include "coll/algorithms.h"
#include "coll/device_pipe.h"
#include "coll/move_util.h"

namespace loom::coll {

namespace {
move::Block recvBlock(const CollArgs& a, int i) {
  if (a.coll == Collective::kAllgatherv)
    return move::Block{static_cast<char*>(a.recvbuf) + a.recvDispls[i] * a.recvType->extent(),
                       a.recvCounts[i], a.recvType};
  return move::equalBlock(a.recvbuf, a.recvCount, a.recvType, i);
}
}  // namespace

Status allgatherRing(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  const bool dev = a.mem == device::MemKind::kDevice;
  const move::Block own{static_cast<char*>(const_cast<void*>(a.sendbuf)), a.count, a.type};
  if (!a.inPlace) {
    if (dev) {
      // Both contiguous with the same signature: a copy of the bytes.
      move::scheduleDeviceCopy(s, own, recvBlock(a, r));
    } else {
      // The first step sends the rank's own block from the send buffer, so
      // its copy into place runs while that message moves.
      move::scheduleCopyAfterPosting(s, own, recvBlock(a, r));
    }
  }
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int step = 0; step < p - 1; ++step) {
    if (step == 0 && !a.inPlace)
      move::sendBlock(s, own, right);  // the copy into recvbuf may still run
    else
      move::sendBlock(s, recvBlock(a, (r - step + p) % p), right);
    move::recvBlock(s, recvBlock(a, (r - step - 1 + 2 * p) % p), left);
    s.endRound();
  }
  s.endRound();
  return Status::ok();
}

}  // namespace loom::coll
