// Allreduce by Rabenseifner's algorithm: recursive-halving reduce-scatter,
// then recursive-doubling allgather (commutative ops), on host or device
// buffers.
//
// Steps, with p' the largest power of two <= p and rem = p - p':
//  1. Fold-in when p is not a power of two: among the first 2*rem ranks
//     each even rank sends its whole vector to the odd rank above it, which
//     combines and stands for both (survivors renumbered 0..p'-1).
//  2. Reduce-scatter by recursive halving over p' blocks: with the block
//     range [lo, hi) the survivor v is responsible for (at first [0, p')),
//     for mask = p'/2, p'/4, ..., 1 it exchanges with v ^ mask: it keeps
//     the half of the range on its side of bit `mask`, sends the other
//     half and folds in the partner's copy of the kept half. At the end
//     survivor v holds the finished block v.
//  3. Allgather by recursive doubling: the same exchanges in reverse order,
//     each partner sending the range it holds, until all hold everything.
//  4. Fold-out: the odd ranks of step 1 send the result to their even ones.
// Each block is reduced on exactly one rank and then copied, so every rank
// ends with bitwise-identical results. The messages of steps 1 and 2 (the
// receiver reduces them) are cut into chunks of LOOM_COLL_REDUCE_CHUNK
// (reduce_chunks.h), alike on every rank; those of steps 3 and 4 go whole.
//
// Device buffers (CollArgs::mem == kDevice, every buffer of this rank on
// the GPU, an op and type with a device kernel): the same messages, so
// host and device ranks mix in one call. Steps 1 and 2 run through
// DevicePipe (device_pipe.h): each chunk lands in device scratch and is
// reduced into the result by a kernel in the next round, while the next
// chunk is in flight. A half sent on in the next step waits only for the
// reductions of its own chunks (the pipe compares ranges), so the last
// chunk of one step overlaps the first ones of the next where they do not
// meet. Steps 3 and 4 receive into the device result directly. Data that
// no reduction has touched yet is sent from sendbuf, so round 0 need not
// wait for the copy of sendbuf into recvbuf that runs beside it.
//
// Cost (p a power of two): 2*log2 p*alpha + 2(p-1)/p*n*beta
// + (p-1)/p*n*gamma: the ring's bandwidth with log p latency, the choice for
// large vectors on many ranks. Otherwise add 2*(alpha + n*beta) + n*gamma
// for the fold, which is why small non-power-of-two jobs prefer the ring.
//
// Restrictions: commutative ops (halving mixes the operand order). Any n:
// blocks differ by at most one element, and empty blocks send zero bytes.
// Device form: see device_pipe.h (commutativeDeviceSupports); other device
// calls are staged.
#include <vector>

#include "coll/algorithms.h"
#include "coll/device_pipe.h"
#include "coll/op.h"
#include "coll/reduce_chunks.h"

namespace loom::coll {

namespace {

// The exchanges of steps 2 and 3 for survivor v of pof2.
struct HalvingStep {
  int peer, keepLo, keepHi, giveLo, giveHi;
};
std::vector<HalvingStep> halvingSteps(int v, int pof2, int rem) {
  auto realRank = [rem](int pv) { return pv < rem ? pv * 2 + 1 : pv + rem; };
  std::vector<HalvingStep> steps;
  int lo = 0, hi = pof2;
  for (int mask = pof2 / 2; mask >= 1; mask /= 2) {
    const int mid = (lo + hi) / 2;
    HalvingStep st{realRank(v ^ mask), lo, mid, mid, hi};
    if (v & mask) st = HalvingStep{st.peer, mid, hi, lo, mid};
    steps.push_back(st);
    lo = st.keepLo;
    hi = st.keepHi;
  }
  return steps;
}

Status allreduceRabenseifnerDevice(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  Datatype* t = a.type;
  const int64_t n = a.count;
  char* const acc = static_cast<char*>(a.recvbuf);
  const char* const src = static_cast<const char*>(a.inPlace ? a.recvbuf : a.sendbuf);
  if (!a.inPlace) s.device([=](device::Stream st) { return copyOn(st, acc, src, n, t); });
  if (p == 1) return Status::ok();

  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;
  DevicePipe pipe(s, t, a.op);
  const char* from = src;  // where the not yet reduced data is read
  int v;
  if (r < 2 * rem) {
    DevicePipe::Exchange x;
    if (r % 2 == 0) {
      x.send = src;
      x.sendCount = n;
      x.to = r + 1;
      v = -1;
    } else {
      x.dst = acc;
      x.recvCount = n;
      x.from = r - 1;
      v = r / 2;
      from = acc;
    }
    LOOM_TRY(pipe.exchange(x));
  } else {
    v = r - rem;
  }

  if (v >= 0) {
    auto off = [n, pof2](int b) { return blockOffset(n, pof2, b); };
    const std::vector<HalvingStep> steps = halvingSteps(v, pof2, rem);
    for (const HalvingStep& st : steps) {
      DevicePipe::Exchange x;
      x.send = elemAt(from, off(st.giveLo), t);
      x.sendCount = off(st.giveHi) - off(st.giveLo);
      x.to = st.peer;
      x.dst = elemAt(acc, off(st.keepLo), t);
      x.recvCount = off(st.keepHi) - off(st.keepLo);
      x.from = st.peer;
      LOOM_TRY(pipe.exchange(x));
      from = acc;
    }
    pipe.flush();
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      s.send(elemAt(acc, off(it->keepLo), t), off(it->keepHi) - off(it->keepLo), t, it->peer);
      s.recv(elemAt(acc, off(it->giveLo), t), off(it->giveHi) - off(it->giveLo), t, it->peer);
      s.endRound();
    }
  }
  pipe.flush();  // an even rank of the fold: nothing pending (it only sent)

  if (r < 2 * rem) {
    if (r % 2 == 1) s.send(acc, n, t, r - 1);
    else s.recv(acc, n, t, r + 1);
    s.endRound();
  }
  return Status::ok();
}

}  // namespace

Status allreduceRabenseifner(Schedule& s, const CollArgs& a) {
  if (a.mem == device::MemKind::kDevice) return allreduceRabenseifnerDevice(s, a);
  const int p = s.comm()->size(), r = s.comm()->rank();
  Datatype* t = a.type;
  Op* op = a.op;
  const int64_t n = a.count;
  char* const acc = static_cast<char*>(a.recvbuf);
  // Nothing is copied into recvbuf first where it can be helped: what a
  // rank sends before any reduction touched it goes from sendbuf, what it
  // receives whole overwrites recvbuf, and the first half it keeps is folded
  // from sendbuf piece by piece (recvReduceChunksFrom), as is the odd
  // ranks' fold-in.
  const char* const src = static_cast<const char*>(a.inPlace ? a.recvbuf : a.sendbuf);
  if (p == 1) {
    if (!a.inPlace) s.local([=] { copyLike(src, acc, n, t); });
    return Status::ok();
  }

  int pof2 = 1;
  while (pof2 * 2 <= p) pof2 *= 2;
  const int rem = p - pof2;
  const char* from = src;  // where data no reduction touched yet is read
  int v;
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      sendChunks(s, src, n, t, r + 1);
      s.endRound();
      v = -1;
    } else {
      recvReduceChunksFrom(s, acc, src, n, t, op, r - 1);
      s.endRound();
      v = r / 2;
      from = acc;
    }
  } else {
    v = r - rem;
  }

  if (v >= 0) {
    auto off = [n, pof2](int b) { return blockOffset(n, pof2, b); };
    const std::vector<HalvingStep> steps = halvingSteps(v, pof2, rem);
    for (const HalvingStep& st : steps) {
      sendChunks(s, elemAt(from, off(st.giveLo), t), off(st.giveHi) - off(st.giveLo), t, st.peer);
      // The half we keep is folded in as it arrives (the first time
      // straight from sendbuf, piece by piece); we send the other.
      recvReduceChunksFrom(s, elemAt(acc, off(st.keepLo), t), elemAt(from, off(st.keepLo), t),
                           off(st.keepHi) - off(st.keepLo), t, op, st.peer);
      s.endRound();
      from = acc;
    }
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      s.send(elemAt(acc, off(it->keepLo), t), off(it->keepHi) - off(it->keepLo), t, it->peer);
      s.recv(elemAt(acc, off(it->giveLo), t), off(it->giveHi) - off(it->giveLo), t, it->peer);
      s.endRound();
    }
  }

  if (r < 2 * rem) {
    if (r % 2 == 1) s.send(acc, n, t, r - 1);
    else s.recv(acc, n, t, r + 1);
    s.endRound();
  }
  return Status::ok();
}

}  // namespace loom::coll
