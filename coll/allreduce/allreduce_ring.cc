// Allreduce by ring: reduce-scatter then allgather (commutative ops), on
// host or device buffers.
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
//     finished block (r+1) mod p. A block larger than LOOM_COLL_REDUCE_CHUNK
//     travels as several messages (reduce_chunks.h), alike on every rank.
//  2. Allgather, p-1 rounds: in round k rank r sends block (r+1-k) mod p to
//     r+1 and receives block (r-k) mod p from r-1 straight into its result.
// Every block is reduced exactly once, on one rank, and then only copied,
// so all ranks end with bitwise-identical results even for floats.
//
// Device buffers (CollArgs::mem == kDevice, every buffer of this rank on
// the GPU, an op and type with a device kernel): the same messages, so
// host and device ranks mix in one call. Step 1 runs through DevicePipe
// (device_pipe.h): each chunk is received into device scratch and reduced
// into the result by a kernel in the next round, while the next chunk is
// in flight; the first round sends from sendbuf while the copy of sendbuf
// into recvbuf runs on the device. Step 2 receives into the device result
// directly (p2p moves device memory). The device reduction computes
// recv op mine exactly as the host fold does, so the bits are the host's.
//
// Cost: 2(p-1)*alpha + 2(p-1)/p*n*beta + (p-1)/p*n*gamma. Bandwidth-optimal
// (each rank sends about 2n whatever p is) but linear in alpha: the choice
// for large vectors on few ranks. Chunks add (c-1)*alpha per block of c
// chunks. On the device gamma is the kernel's, hidden behind the next
// chunk's transfer except for the last chunk of each step; a block of one
// chunk waits for its reduction before it is sent on (one round more).
//
// Restrictions: commutative ops (a block's contributions are combined in
// ring order starting anywhere). Any p; n need not divide by p (blocks
// differ by one element; with n < p some blocks are empty and their
// messages carry zero bytes). Device form: see device_pipe.h
// (commutativeDeviceSupports); other device calls are staged.
#include "coll/algorithms.h"
#include "coll/device_pipe.h"
#include "coll/op.h"
#include "coll/reduce_chunks.h"

namespace loom::coll {

namespace {

Status allreduceRingDevice(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  Datatype* t = a.type;
  const int64_t n = a.count;
  char* const acc = static_cast<char*>(a.recvbuf);
  const char* const src = static_cast<const char*>(a.inPlace ? a.recvbuf : a.sendbuf);
  // The copy runs beside round 0, whose send reads sendbuf and whose
  // receive lands in scratch; the first reduction is queued after it.
  if (!a.inPlace) s.device([=](device::Stream st) { return copyOn(st, acc, src, n, t); });
  if (p == 1) return Status::ok();

  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  auto mod = [p](int x) { return ((x % p) + p) % p; };
  DevicePipe pipe(s, t, a.op);
  for (int k = 0; k < p - 1; ++k) {
    const int sb = mod(r - k), rb = mod(r - k - 1);
    DevicePipe::Exchange x;
    x.send = elemAt(k == 0 ? src : acc, blockOffset(n, p, sb), t);
    x.sendCount = blockSize(n, p, sb);
    x.to = right;
    x.dst = elemAt(acc, blockOffset(n, p, rb), t);
    x.recvCount = blockSize(n, p, rb);
    x.from = left;
    LOOM_TRY(pipe.exchange(x));
  }
  pipe.flush();
  for (int k = 0; k < p - 1; ++k) {
    const int sb = mod(r + 1 - k), rb = mod(r - k);
    s.send(elemAt(acc, blockOffset(n, p, sb), t), blockSize(n, p, sb), t, right);
    s.recv(elemAt(acc, blockOffset(n, p, rb), t), blockSize(n, p, rb), t, left);
    s.endRound();
  }
  return Status::ok();
}

}  // namespace

Status allreduceRing(Schedule& s, const CollArgs& a) {
  if (a.mem == device::MemKind::kDevice) return allreduceRingDevice(s, a);
  const int p = s.comm()->size(), r = s.comm()->rank();
  Datatype* t = a.type;
  Op* op = a.op;
  const int64_t n = a.count;
  char* const acc = static_cast<char*>(a.recvbuf);
  const char* const src = static_cast<const char*>(a.inPlace ? a.recvbuf : a.sendbuf);
  if (p == 1) {
    if (!a.inPlace) s.local([=] { copyLike(src, acc, n, t); });
    return Status::ok();
  }

  // Nothing is copied into recvbuf first: our own block goes out from
  // sendbuf, every other block is folded from sendbuf as the left
  // neighbour's partial sum of it arrives (recvReduceChunksFrom), and our
  // own block's result arrives whole in the allgather.
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  auto mod = [p](int x) { return ((x % p) + p) % p; };
  for (int k = 0; k < p - 1; ++k) {
    const int sb = mod(r - k), rb = mod(r - k - 1);
    sendChunks(s, elemAt(k == 0 ? src : acc, blockOffset(n, p, sb), t), blockSize(n, p, sb), t,
               right);
    // Folded into our copy of block rb as it arrives (sb != rb: p > 1).
    recvReduceChunksFrom(s, elemAt(acc, blockOffset(n, p, rb), t),
                         elemAt(src, blockOffset(n, p, rb), t), blockSize(n, p, rb), t, op, left);
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
