// Reduce by binomial tree (commutative ops).
//
// Steps: ranks are renumbered relative to the root (v = (rank - root) mod p)
// so the tree hangs from any root. In round k (mask = 2^k) a rank whose
// bit k is set sends its partial result to v - mask and leaves; the others
// receive from v + mask (when it exists) and fold that partial into theirs
// at the start of the next round. After ceil(log2 p) rounds the root holds
// the reduction of all p contributions.
//
// Cost: ceil(log2 p) * (alpha + n*beta + n*gamma) on the root's path; the
// total data moved is (p-1)*n. Latency-optimal, so the choice for small
// and medium messages; for large ones every level re-sends the whole
// vector (a reduce-scatter + gather would halve the bandwidth term).
//
// A partial result larger than LOOM_COLL_REDUCE_CHUNK travels as several
// messages (reduce_chunks.h), alike on every rank.
//
// Device buffers (every buffer of this rank on the GPU, an op and type with
// a device kernel; commutativeDeviceSupports): the same messages, so host
// and device ranks mix in one call. Children's partials are received
// through DevicePipe (device_pipe.h) into device scratch and folded into
// the partial by a kernel while the next chunk travels; an inner rank's
// partial is device scratch (a device copy of sendbuf), the root's its
// recvbuf. The kernel computes recv op mine as the host fold does.
//
// Restrictions: commutative ops only, because the rotation mixes the
// operand order (non-commutative calls go to "linear"). Any p: a rank
// whose partner v + mask is >= p just skips that round's receive, so a
// non-power-of-two tree is a truncated one, nothing special.
#include "coll/algorithms.h"
#include "coll/device_pipe.h"
#include "coll/op.h"
#include "coll/reduce_chunks.h"

namespace loom::coll {

namespace {

Status reduceBinomialDevice(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size(), r = s.comm()->rank();
  const int v = (r - a.root + p) % p;
  Datatype* t = a.type;
  const int64_t n = a.count;
  const bool isRoot = r == a.root;
  const bool leaf = (v & 1) || v + 1 >= p;
  const char* const src = static_cast<const char*>(a.sendbuf);
  char* acc;
  if (isRoot) {
    acc = static_cast<char*>(a.recvbuf);
    if (!a.inPlace) s.device([=](device::Stream st) { return copyOn(st, acc, src, n, t); });
  } else if (leaf) {
    acc = const_cast<char*>(src);
  } else {
    const int64_t bytes = n * t->extent();
    acc = static_cast<char*>(s.deviceScratch(bytes > 0 ? static_cast<size_t>(bytes) : 1));
    if (!acc)
      return errorf(MPI_ERR_NO_MEM, "no device memory for %lld bytes of reduce scratch",
                    static_cast<long long>(bytes));
    acc -= t->trueLb();
    s.device([=](device::Stream st) { return copyOn(st, acc, src, n, t); });
  }
  DevicePipe pipe(s, t, a.op);
  for (int mask = 1; mask < p; mask <<= 1) {
    if (v & mask) {
      pipe.flush();  // every child's partial is in `acc`
      sendChunks(s, acc, n, t, (v - mask + a.root) % p);
      s.endRound();
      return Status::ok();
    }
    if (v + mask < p) {
      DevicePipe::Exchange x;
      x.dst = acc;
      x.recvCount = n;
      x.from = (v + mask + a.root) % p;
      LOOM_TRY(pipe.exchange(x));
    }
  }
  pipe.flush();
  return Status::ok();
}

}  // namespace

Status reduceBinomial(Schedule& s, const CollArgs& a) {
  if (a.mem == device::MemKind::kDevice) return reduceBinomialDevice(s, a);
  const int p = s.comm()->size(), r = s.comm()->rank();
  const int v = (r - a.root + p) % p;
  Datatype* t = a.type;
  Op* op = a.op;
  const int64_t n = a.count;
  const bool isRoot = r == a.root;

  // The partial result: the root's recvbuf, else scratch (only when this
  // rank receives anything; a leaf sends its sendbuf as it is). It starts
  // as this rank's input: the first child's partial is folded with the
  // input into it as it arrives (one pass, where copying the input first
  // and folding into the copy took two; 2 ranks, Intel Xeon VM, 64 KiB:
  // see docs/benchmarks.md).
  const bool leaf = (v & 1) || v + 1 >= p;
  const char* const src = static_cast<const char*>(a.sendbuf);
  char* acc;
  if (isRoot)
    acc = static_cast<char*>(a.recvbuf);
  else if (leaf)
    acc = const_cast<char*>(src);
  else
    acc = scratchLike(s, n, t);
  // A rank with no child (a root alone) still needs its input as result.
  if (acc != src && leaf) s.local([=] { copyLike(src, acc, n, t); });
  for (int mask = 1; mask < p; mask <<= 1) {
    if (v & mask) {
      sendChunks(s, acc, n, t, (v - mask + a.root) % p);
      s.endRound();
      break;
    }
    // A child's partial result, folded into ours as it arrives.
    if (v + mask < p) {
      const int child = (v + mask + a.root) % p;
      if (mask == 1 && acc != src)
        recvReduceChunksFrom(s, acc, src, n, t, op, child);
      else
        recvReduceChunks(s, acc, n, t, op, child);
    }
    s.endRound();
  }
  return Status::ok();
}

}  // namespace loom::coll
