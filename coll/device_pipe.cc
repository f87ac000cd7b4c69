#include "coll/device_pipe.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "coll/coll_stage.h"
#include "coll/op.h"
#include "coll/reduce_chunks.h"
#include "coll/reduce_cuda.h"
#include "core/params.h"

namespace loom::coll {

// ---- pools -------------------------------------------------------------------
//
// Device scratch by power-of-two size class (at least 64 KiB), up to
// kScratchCache bytes kept; streams in a free list. Never drained: the
// process's exit releases device memory, and a request may still finish
// during exit. One device per process: a stream or buffer made while
// another device was current is not moved (CUDA would fault on a launch
// across devices); see docs/gpu.md, limits.

namespace dpool {
namespace {

constexpr size_t kMinClass = 16;
constexpr size_t kClasses = 48;
constexpr size_t kScratchCache = size_t{256} << 20;

struct Pools {
  std::mutex mu;
  std::vector<void*> free[kClasses];
  size_t kept = 0;
  size_t live = 0;  // bytes allocated and not freed for real (in use or kept)
  std::vector<device::Stream> streams;
};

// LOOM_COLL_DEVICE_SCRATCH_MAX (read once; 0: no limit).
size_t scratchMax() {
  static const size_t m = static_cast<size_t>(std::max<int64_t>(0, params::getInt("LOOM_COLL_DEVICE_SCRATCH_MAX")));
  return m;
}
Pools& pools() {
  static Pools* p = new Pools();  // never destroyed (see above)
  return *p;
}
size_t classOf(size_t n) {
  size_t c = kMinClass;
  while (c < kClasses && (size_t{1} << c) < n) ++c;
  return c;
}

}  // namespace

Status streamAcquire(device::Stream* out) {
  Pools& P = pools();
  {
    std::lock_guard<std::mutex> lock(P.mu);
    if (!P.streams.empty()) {
      *out = P.streams.back();
      P.streams.pop_back();
      return Status::ok();
    }
  }
  return device::streamCreate(out);
}

void streamRelease(device::Stream s) {
  Pools& P = pools();
  std::lock_guard<std::mutex> lock(P.mu);
  P.streams.push_back(s);
}

void* scratchAlloc(size_t bytes) {
  Pools& P = pools();
  const size_t c = classOf(bytes);
  if (c >= kClasses) return nullptr;
  const size_t size = size_t{1} << c;
  {
    std::lock_guard<std::mutex> lock(P.mu);
    if (!P.free[c].empty()) {
      void* p = P.free[c].back();
      P.free[c].pop_back();
      P.kept -= size;
      return p;
    }
    // Over the limit: first give back what is kept for reuse.
    const size_t max = scratchMax();
    if (max && P.live + size > max) {
      for (auto& list : P.free) {
        for (void* q : list) {
          const size_t qs = size_t{1} << (&list - P.free);
          device::deviceFree(q);
          P.kept -= qs;
          P.live -= qs;
        }
        list.clear();
      }
      if (P.live + size > max) return nullptr;
    }
    P.live += size;
  }
  void* p = device::deviceAlloc(size);
  if (!p) {
    std::lock_guard<std::mutex> lock(P.mu);
    P.live -= size;
  }
  return p;
}

void scratchFree(void* p, size_t bytes) {
  if (!p) return;
  Pools& P = pools();
  const size_t c = classOf(bytes);
  const size_t size = size_t{1} << c;
  {
    std::lock_guard<std::mutex> lock(P.mu);
    if (P.kept + size <= kScratchCache) {
      P.free[c].push_back(p);
      P.kept += size;
      return;
    }
    P.live -= size;
  }
  device::deviceFree(p);
}

}  // namespace dpool

// ---- when a call can run on device buffers ------------------------------------

namespace {
int gNative = -1;  // LOOM_COLL_DEVICE_NATIVE, read once
}  // namespace

bool deviceNativeEnabled() {
  if (gNative < 0) [[unlikely]]
    gNative = params::getBool("LOOM_COLL_DEVICE_NATIVE") ? 1 : 0;
  return gNative == 1;
}

bool setDeviceNativeForTest(bool on) {
  const bool old = deviceNativeEnabled();
  gNative = on ? 1 : 0;
  return old;
}

bool deviceReducible(const Datatype* t, const Op* op) {
  const device::Backend b = device::backend();
  if (b != device::Backend::kMock && !(b == device::Backend::kCuda && device::cudaBuilt()))
    return false;
  if (!t || !op || op->kind() == Op::Kind::kUser || !t->isContiguous() || t->size() == 0 ||
      !opValidFor(op, t))
    return false;
  switch (t->kind()) {
    case BasicKind::kLongDouble:
    case BasicKind::kLongDoubleComplex:
    case BasicKind::kLongDoubleInt:
      return false;  // no device arithmetic (reduce_device.h)
    default:
      return elementBytesOf(t) > 0;
  }
}

bool commutativeDeviceSupports(const CollArgs& a) {
  if (!reductionCommutative(a)) return false;
  if (a.mem == device::MemKind::kHost) return true;
  return deviceReducible(a.type, a.op) && allOnDevice(a);
}

bool moveDeviceSupports(const CollArgs& a) {
  if (a.mem == device::MemKind::kHost) return true;
  if (a.coll == Collective::kAlltoallw) return false;
  if (a.coll == Collective::kBcast)  // one buffer, described by (count, type)
    return a.type && a.type->isContiguous() && allOnDevice(a);
  if (!a.recvType || !a.recvType->isContiguous()) return false;
  if (!a.inPlace && (!a.type || !a.type->isContiguous())) return false;
  return allOnDevice(a);
}

// ---- device work --------------------------------------------------------------

Status reduceOn(device::Stream s, const void* in, void* io, int64_t count, Datatype* t, Op* op) {
  if (count <= 0 || t->size() == 0) return Status::ok();
  const int64_t e = elementBytesOf(t);
  const int64_t n = static_cast<int64_t>(t->packedSize(count)) / e;
  Status err;
  switch (reduceDevice(op->kind(), t->kind(), e, static_cast<const char*>(in) + t->trueLb(),
                       static_cast<char*>(io) + t->trueLb(), n, s, &err)) {
    case DeviceReduceResult::kDone:
      return Status::ok();
    case DeviceReduceResult::kFailed:
      return err;
    default:  // supports() declined these: a bug if it happens
      return errorf(MPI_ERR_INTERN, "no device reduction of %s on %s", op->name(),
                    t->name().empty() ? "this datatype" : t->name().c_str());
  }
}

Status copyOn(device::Stream s, void* dst, const void* src, int64_t count, const Datatype* t) {
  if (count <= 0 || t->size() == 0 || src == dst) return Status::ok();
  return device::copyAsync(static_cast<char*>(dst) + t->trueLb(),
                           static_cast<const char*>(src) + t->trueLb(), t->packedSize(count), s);
}

// ---- the pipelined exchange ---------------------------------------------------

bool DevicePipe::overlapsPending(const void* p, int64_t count, bool reads) const {
  if (!pending_.count || !p || count <= 0) return false;
  auto meets = [this, p, count](const void* q, int64_t n) {
    const uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + spanBytes(count, t_);
    const uintptr_t qlo = reinterpret_cast<uintptr_t>(q), qhi = qlo + spanBytes(n, t_);
    return lo < qhi && qlo < hi;
  };
  // A send must not read what the pending reduction writes; a receive must
  // not overwrite what it reads or writes.
  return meets(pending_.io, pending_.count) || (!reads && meets(pending_.in, pending_.count));
}

void DevicePipe::queue(const Red& r) {
  Datatype* t = t_;
  Op* op = op_;
  s_.device([r, t, op](device::Stream st) { return reduceOn(st, r.in, r.io, r.count, t, op); });
}

void DevicePipe::flush() {
  if (!pending_.count) return;
  queue(pending_);
  s_.endRound();
  pending_ = Red{};
}

Status DevicePipe::exchange(const Exchange& x) {
  Datatype* t = t_;
  const int64_t ks = x.to >= 0 ? reduceChunks(x.sendCount, t) : 0;
  const int64_t kr = x.from >= 0 ? reduceChunks(x.recvCount, t) : 0;
  const bool viaScratch = kr > 0 && !x.recvInto;
  if (viaScratch) {
    const int64_t piece = (x.recvCount + kr - 1) / kr;
    if (piece > slotCap_) {
      // A larger exchange than the ones before (allocated while building,
      // so a failure is the build's error).
      for (char*& sl : slot_) {
        sl = static_cast<char*>(s_.deviceScratch(spanBytes(piece, t)));
        if (!sl)
          return errorf(MPI_ERR_NO_MEM, "no device memory for %lld bytes of collective scratch",
                        static_cast<long long>(spanBytes(piece, t)));
        sl -= t->trueLb();
      }
      slotCap_ = piece;
    }
  }
  for (int64_t c = 0; c < std::max(ks, kr); ++c) {
    const void* sp = nullptr;
    int64_t sn = 0;
    if (c < ks) {
      sp = elemAt(x.send, chunkOffset(x.sendCount, ks, c), t);
      sn = chunkSize(x.sendCount, ks, c);
    }
    void* rp = nullptr;
    int64_t rn = 0;
    Red red;
    if (c < kr) {
      const int64_t off = chunkOffset(x.recvCount, kr, c);
      rn = chunkSize(x.recvCount, kr, c);
      if (viaScratch) {
        rp = slot_[next_];
        next_ ^= 1;
        red = Red{rp, elemAt(x.dst, off, t), rn};
      } else {
        rp = elemAt(x.recvInto, off, t);
        red = Red{elemAt(x.mine, off, t), rp, rn};
      }
    }
    // The reduction received last round runs at this round's start, beside
    // these messages, unless they need it finished (the send reads what it
    // writes, or the receive lands on what it reads or writes).
    if (overlapsPending(sp, sn, true) || overlapsPending(rp, rn, false)) flush();
    if (pending_.count) queue(pending_);
    if (c < ks) s_.send(sp, sn, t, x.to);
    if (c < kr) s_.recv(rp, rn, t, x.from);
    s_.endRound();
    pending_ = rn > 0 ? red : Red{};
  }
  return Status::ok();
}

}  // namespace loom::coll
