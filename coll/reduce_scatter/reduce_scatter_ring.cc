// Reduce-scatter (and reduce-scatter-block) by ring (commutative ops), on
// host or device buffers.
//
// Terms: block b is rank b's share of the result, counts[b] elements at
// element offset displ(b) = counts[0] + ... + counts[b-1] of the input.
// Steps: p-1 rounds. In round k rank r sends block (r-k-1) mod p to r+1
// and receives block (r-k-2) mod p from r-1. What it sends in round 0 is
// its own input block; each block it receives is folded with its own input
// block as it arrives and forwarded as it is in the next round. The block
// received in the last round is r's own, and lands folded in recvbuf. Two
// scratch blocks alternate (one in flight out, one in flight in); none at
// 2 ranks. Blocks larger than LOOM_COLL_REDUCE_CHUNK travel as several
// messages (reduce_chunks.h), alike on every rank.
//
// Device buffers (CollArgs::mem == kDevice, every buffer of this rank on
// the GPU, an op and type with a device kernel): the same messages, so
// host and device ranks mix in one call. The two scratch blocks are device
// memory; DevicePipe (device_pipe.h) folds this rank's input into each
// chunk by a kernel in the round after it arrived, while the next chunk is
// in flight, and the chunk is sent on once that has finished. The last
// block is received straight into recvbuf and finished there (in place:
// into scratch, then copied on the device, since recvbuf is the input).
// The kernel computes mine op received, as the host does (baseFirst): a
// commutative op may still round differently with its operands swapped
// (a complex product contracted into FMAs), and host and device ranks must
// give the same bits.
//
// Cost: (p-1)*alpha + (p-1)/p*n*beta + (p-1)/p*n*gamma for n input
// elements split evenly: bandwidth-optimal, linear in alpha. On the device
// gamma hides behind the transfers but for the last chunk of each block; a
// block of one chunk waits for its reduction before it is sent on.
//
// Restrictions: commutative ops (each block collects its contributions in
// ring order, starting at the rank after its owner). Any p; blocks of any
// (even zero) size. In place: the input is recvbuf itself, and the result
// is written to its start only after the last round (from scratch). Device form: see
// device_pipe.h (commutativeDeviceSupports); other device calls are staged.
#include <algorithm>

#include "coll/algorithms.h"
#include "coll/device_pipe.h"
#include "coll/op.h"
#include "coll/reduce_chunks.h"

namespace loom::coll {

namespace {

Status reduceScatterRingDevice(Schedule& s, const CollArgs& a, const std::vector<int64_t>& cnt,
                               const std::vector<int64_t>& displ, int64_t maxCnt) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  Datatype* t = a.type;
  const char* in = static_cast<const char*>(a.sendbuf);
  char* out = static_cast<char*>(a.recvbuf);
  auto mod = [p](int x) { return ((x % p) + p) % p; };
  if (p == 1) {
    const int64_t n = cnt[0];
    if (in != out) s.device([=](device::Stream st) { return copyOn(st, out, in, n, t); });
    return Status::ok();
  }
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  char* buf[2];
  for (char*& b : buf) {
    b = static_cast<char*>(s.deviceScratch(std::max<size_t>(spanBytes(maxCnt, t), 1)));
    if (!b)
      return errorf(MPI_ERR_NO_MEM, "no device memory for %lld bytes of reduce-scatter scratch",
                    static_cast<long long>(spanBytes(maxCnt, t)));
    b -= t->trueLb();
  }
  DevicePipe pipe(s, t, a.op);
  int cur = 0;  // buf[cur] receives this round
  char* last = nullptr;
  for (int k = 0; k < p - 1; ++k) {
    const int sb = mod(r - k - 1), rb = mod(r - k - 2);
    DevicePipe::Exchange x;
    // Round 0 sends this rank's input block; later ones the block received
    // (and folded with this rank's input by the pipe) one exchange before.
    x.send = k == 0 ? elemAt(in, displ[sb], t) : buf[1 - cur];
    x.sendCount = cnt[sb];
    x.to = right;
    x.recvInto = k == p - 2 && !a.inPlace ? out : buf[cur];
    x.mine = elemAt(in, displ[rb], t);
    x.recvCount = cnt[rb];
    x.from = left;
    LOOM_TRY(pipe.exchange(x));
    last = static_cast<char*>(x.recvInto);
    cur = 1 - cur;
  }
  pipe.flush();
  if (last != out) {
    const int64_t c = cnt[r];
    s.device([=](device::Stream st) { return copyOn(st, out, last, c, t); });
    s.endRound();
  }
  return Status::ok();
}

}  // namespace

Status reduceScatterRing(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  Datatype* t = a.type;
  Op* op = a.op;
  const std::vector<int64_t> cnt = reduceScatterCounts(a, p);
  std::vector<int64_t> displ(p + 1, 0);
  for (int i = 0; i < p; ++i) displ[i + 1] = displ[i] + cnt[i];
  const int64_t maxCnt = *std::max_element(cnt.begin(), cnt.end());
  if (a.mem == device::MemKind::kDevice) return reduceScatterRingDevice(s, a, cnt, displ, maxCnt);
  const char* in = static_cast<const char*>(a.sendbuf);
  char* out = static_cast<char*>(a.recvbuf);
  auto mod = [p](int x) { return ((x % p) + p) % p; };

  if (p == 1) {
    if (in != out) {
      const int64_t n = cnt[0];
      s.local([=] { copyLike(in, out, n, t); });
    }
    return Status::ok();
  }
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  // Each block arrives folded with this rank's input block as it lands
  // (recvReduceChunksFrom: mine op received, one pass) and goes on as it
  // is; the last one, this rank's block, lands straight in the result. In
  // place the result's place is the input's block 0, which may still be
  // sent in that round: it lands in scratch and is copied after. 2 ranks,
  // Intel Xeon VM, 1 MiB in all: see docs/benchmarks.md (the receive into
  // fresh scratch and the separate fold and copy took 2-3x as long).
  char* buf[2] = {nullptr, nullptr};
  auto scratch = [&](int i) {
    if (!buf[i]) buf[i] = scratchLike(s, maxCnt, t);
    return buf[i];
  };
  int cur = 0;  // buf[cur] receives this round
  char* last = nullptr;
  for (int k = 0; k < p - 1; ++k) {
    const int sb = mod(r - k - 1), rb = mod(r - k - 2);
    sendChunks(s, k == 0 ? elemAt(in, displ[sb], t) : last, cnt[sb], t, right);
    last = k == p - 2 && !a.inPlace ? out : scratch(cur);
    recvReduceChunksFrom(s, last, elemAt(in, displ[rb], t), cnt[rb], t, op, left,
                         /*baseFirst=*/true);
    s.endRound();
    cur = 1 - cur;
  }
  if (last != out) {
    const int64_t c = cnt[r];
    s.local([=] { copyLike(last, out, c, t); });
  }
  return Status::ok();
}

}  // namespace loom::coll
