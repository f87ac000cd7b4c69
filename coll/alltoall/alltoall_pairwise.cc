// Alltoall, alltoallv and alltoallw by pairwise exchange, on host or
// device buffers.
//
// Steps: copy the own block (nothing to do with MPI_IN_PLACE), then p - 1
// rounds; in round k = 1 .. p-1 a rank exchanges one block with one peer:
// with p a power of two the peer is r XOR k (both directions with the same
// rank), otherwise it sends to (r + k) mod p and receives from
// (r - k) mod p. Blocks go straight from and to the user's buffers; with
// MPI_IN_PLACE the send blocks are first packed out of the receive buffer
// into scratch (one extra copy).
//
// Device buffers (CollArgs::mem == kDevice: every buffer of this rank on
// the GPU, contiguous types, alltoall and alltoallv): the same messages,
// p2p moving device memory. The own block is copied on the device (a
// schedule device step) beside round 1, which touches other blocks only.
// In place, the blocks to send are copied into device scratch in a round
// of their own first (they must be there before round 1 sends them).
//
// Cost: (p - 1) * alpha + (p - 1) * m * beta per rank, one message in each
// direction at a time: no congestion, so the choice for large blocks.
// Every pair exchanges exactly one message each way, as in the linear
// algorithm, so ranks that chose differently still match.
// Restrictions: none; any p (the modular pairing covers non-powers of two),
// any counts and types. Device form: moveDeviceSupports (device_pipe.h);
// other device calls are staged.
#include <vector>

#include "coll/algorithms.h"
#include "coll/device_pipe.h"
#include "coll/move_util.h"

namespace loom::coll {

namespace {

// The device form's blocks: as exchangeBlocks, but an in-place call's send
// blocks are device scratch filled by device copies.
Status deviceBlocks(Schedule& s, const CollArgs& a, move::ExchangeBlocks* x) {
  const int p = s.comm()->size();
  if (!a.inPlace) {
    *x = move::exchangeBlocks(s, a);  // no scratch, no host access without MPI_IN_PLACE
    return Status::ok();
  }
  CollArgs recvOnly = a;
  recvOnly.inPlace = false;
  recvOnly.sendbuf = a.recvbuf;  // blocks computed, never read: replaced below
  recvOnly.sendCounts = a.recvCounts;
  recvOnly.sendDispls = a.recvDispls;
  recvOnly.type = a.recvType;
  recvOnly.count = a.recvCount;
  *x = move::exchangeBlocks(s, recvOnly);
  size_t total = 0;
  std::vector<size_t> off(p);
  for (int i = 0; i < p; ++i) {
    off[i] = total;
    total += x->recv[i].bytes();
  }
  char* tmp = static_cast<char*>(s.deviceScratch(total ? total : 1));
  if (!tmp)
    return errorf(MPI_ERR_NO_MEM, "no device memory for %zu bytes of alltoall scratch", total);
  const std::vector<move::Block> src = x->recv;
  for (int i = 0; i < p; ++i)
    x->send[i] = move::Block{tmp + off[i], int64_t(src[i].bytes()), move::byteType()};
  s.device([src, tmp, off](device::Stream st) {
    for (size_t i = 0; i < src.size(); ++i)
      if (src[i].bytes())
        LOOM_TRY(device::copyAsync(tmp + off[i], src[i].ptr + src[i].type->trueLb(), src[i].bytes(),
                                   st));
    return Status::ok();
  });
  s.endRound();  // the copies finish before round 1 sends them
  return Status::ok();
}

}  // namespace

Status alltoallPairwise(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  const bool pow2 = (p & (p - 1)) == 0;
  move::ExchangeBlocks x;
  if (a.mem == device::MemKind::kDevice) {
    LOOM_TRY(deviceBlocks(s, a, &x));
    if (!a.inPlace) move::scheduleDeviceCopy(s, x.send[r], x.recv[r]);
  } else {
    x = move::exchangeBlocks(s, a);
    // The own block (which no message reads or writes) is copied while the
    // first exchange moves: 2 ranks, 128 KiB blocks, 8.1 us against 11.5
    // with the copy first (Intel Xeon VM).
    if (!a.inPlace) move::scheduleCopyAfterPosting(s, x.send[r], x.recv[r]);
  }
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
