// Native RMA between nodes (rma/window.h, Peer::native): contiguous puts
// and gets to a rank of another node as libfabric RMA writes and reads of
// its registered window memory, instead of requests its progress applies.
//
// Why: a put by message is packed into a request the target receives and
// copies out; above the transport's record size that request itself takes
// a rendezvous (a round trip more) before the target can apply it, so a
// 64-256 KiB put with flush cost 1.3-1.55x a bare fi_writemsg. An RMA write
// moves the origin's bytes straight into the target's window.
//
// Completion: a write is posted with FI_DELIVERY_COMPLETE (p2p/ofi), so its
// completion means the data is in the target's memory; a read's completion
// means it is in ours. Every synchronisation that promises remote
// completion (flush, unlock, fence, complete, free) first waits for the
// native operations to its targets (waitNative), and only then sends its
// own messages: an unlock reaches the target after the writes landed, so
// an exclusive lock is never released under a write still in flight.
//
// Accumulates, compare-and-swap and fetch-and-op stay messages: the target
// applies them under its accumulate mutex, which is what makes them atomic
// with respect to each other. Puts and gets do not take that mutex in any
// path (MPI leaves a put that conflicts with an accumulate undefined).
//
// Progress: libfabric's progress is manual on the TCP providers, so the
// target's endpoint has to be polled for an RMA aimed at it to finish. A
// window with targets on other nodes runs the progress thread
// (core/progress_async.h) whenever the rank is outside MPI, which polls
// the endpoint; inside MPI calls every wait polls it anyway.
//
// LOOM_RMA_OFI=0 keeps every operation a message; LOOM_RMA_OFI_MIN is the
// smallest put or get that goes native. Its default is 0: on net an 8-byte
// put + flush took 10.6-10.8 us as a write against 11.1-11.5 us as a
// message, and the gap grows with size (docs/rma.md); a provider whose
// small RMA is slow can raise it.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/params.h"
#include "core/progress.h"
#include "core/request.h"
#include "p2p/p2p.h"
#include "rma/window.h"

namespace loom::rma {

struct Window::NativeOp {
  Window* win;
  int target;
  Request* user;  // MPI_Rput / MPI_Rget: completes with the operation
};

bool Window::nativeEnabled() {
  static const bool on = [] {
    bool yes = true;
    const std::string v = params::getString("LOOM_RMA_OFI");
    if (v != "auto" && params::parseBool(v, &yes) && !yes) return false;
    return true;
  }();
  return on;
}

namespace {

size_t nativeMin() {
  static const size_t min =
      static_cast<size_t>(std::max<int64_t>(0, params::getInt("LOOM_RMA_OFI_MIN")));
  return min;
}

}  // namespace

bool Window::exposeNative(void* addr, uint64_t bytes, p2p::RemoteKey* key) {
  if (!nativeEnabled() || bytes == 0) return false;
  if (!p2p::rmaExpose(addr, bytes, key, &exposed_)) {
    exposed_ = nullptr;
    return false;
  }
  return true;
}

void Window::unexposeNative() {
  if (exposed_) p2p::rmaUnexpose(exposed_);
  exposed_ = nullptr;
  for (NativeOp* op : nativeFree_) delete op;
  nativeFree_.clear();
}

bool Window::goesNative(int target, size_t bytes) const {
  const Peer& p = peers_[target];
  return p.native && bytes > 0 && bytes >= nativeMin() && !originStaged_;
}

void Window::nativeDone(void* ctx, size_t bytes, int err) {
  auto* op = static_cast<NativeOp*>(ctx);
  Window* w = op->win;
  Peer& p = w->peers_[op->target];
  ++p.nativeDone;
  --w->nativeInFlight_;
  if (err != MPI_SUCCESS && p.nativeError == MPI_SUCCESS) {
    p.nativeError = err;
    w->nativeFailed_ = true;
  }
  if (Request* u = op->user) {
    u->bytes = static_cast<int64_t>(bytes);
    u->statusError = err;
    u->finish();
  }
  w->nativeFree_.push_back(op);
}

namespace {

// A request for MPI_Rput / MPI_Rget, completed by nativeDone.
Request* userRequest(size_t bytes) {
  Request* u = Request::alloc(ReqKind::kColl);
  u->active = true;
  u->total = bytes;
  return u;
}

}  // namespace

bool Window::startNative(bool write, int target, uint64_t addr, void* local, size_t bytes,
                         Request** req) {
  Peer& p = peers_[target];
  NativeOp* op;
  if (nativeFree_.empty()) {
    op = new NativeOp;
  } else {
    op = nativeFree_.back();
    nativeFree_.pop_back();
  }
  *op = {this, target, req ? userRequest(bytes) : nullptr};
  // Counted before the call: done may run inside it.
  ++p.nativeStarted;
  ++nativeInFlight_;
  const uint64_t offset = addr - p.base;
  const bool started = write
                           ? p2p::rmaWrite(p.jobRank, p.rkey, offset, local, bytes, nativeDone, op)
                           : p2p::rmaRead(p.jobRank, p.rkey, offset, local, bytes, nativeDone, op);
  if (!started) {
    --p.nativeStarted;
    --nativeInFlight_;
    if (op->user) Request::release(op->user);
    nativeFree_.push_back(op);
    return false;
  }
  if (req) *req = op->user;
  return true;
}

Status Window::waitNative(int target) {
  if (nativeInFlight_ == 0 && !nativeFailed_) return Status::ok();
  auto finished = [this](int t) { return peers_[t].nativeDone == peers_[t].nativeStarted; };
  if (target >= 0)
    progress::waitUntil([&] { return finished(target); });
  else
    progress::waitUntil([this] { return nativeInFlight_ == 0; });
  for (int t = 0; t < size(); ++t) {
    Peer& p = peers_[t];
    if ((target >= 0 && t != target) || p.nativeError == MPI_SUCCESS) continue;
    const int code = p.nativeError;
    p.nativeError = MPI_SUCCESS;
    nativeFailed_ = false;  // others still failed are reported by the next wait
    for (const Peer& q : peers_) nativeFailed_ = nativeFailed_ || q.nativeError != MPI_SUCCESS;
    return errorf(code, "an RMA read or write with target rank %d failed", t);
  }
  return Status::ok();
}

}  // namespace loom::rma
