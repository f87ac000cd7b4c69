// The origin side of MPI_Put, MPI_Get, the accumulates and
// MPI_Compare_and_swap (rma/window.h).
//
// Every operation first turns the target side into pieces, (address,
// length) in the target's address space, range-checked against the
// target's window, so one description serves all three ways of access:
// kDirect copies through the mapping, kCma hands the pieces to
// process_vm_writev/readv as the remote iovec, kMessage ships them in the
// request. Accumulates gather the target's elements into a packed buffer,
// combine with the packed origin data, and scatter them back, all under the
// target's accumulate mutex.
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "coll/op.h"
#include "core/cma.h"
#include "core/copy_small.h"
#include "core/datatype.h"
#include "core/device_stage.h"
#include "core/progress.h"
#include "p2p/p2p.h"
#include "rma/am.h"
#include "rma/ops_util.h"
#include "rma/window.h"

namespace loom::rma {

Request* completedRequest() {
  Request* r = Request::alloc(ReqKind::kColl);
  r->active = true;
  r->finish();
  return r;
}

const Datatype* elementType(const Datatype* t) {
  while (!t->isPredefined() && !t->parts().empty()) t = t->parts()[0].type;
  return t;
}

void lockAccContended(Control* c) {
  for (unsigned spins = 0; c->accLock.exchange(1, std::memory_order_acquire) != 0; ++spins) {
    while (c->accLock.load(std::memory_order_relaxed) != 0) {
      if (progress::oversubscribed() || spins > 64)
        sched_yield();
      else
        __builtin_ia32_pause();
      ++spins;
    }
  }
}

void copyPieces(const std::vector<iovec>& dst, const std::vector<iovec>& src) {
  size_t di = 0, doff = 0;
  for (const iovec& s : src) {
    size_t soff = 0;
    while (soff < s.iov_len && di < dst.size()) {
      size_t n = std::min(s.iov_len - soff, dst[di].iov_len - doff);
      std::memcpy(static_cast<char*>(dst[di].iov_base) + doff,
                  static_cast<const char*>(s.iov_base) + soff, n);
      soff += n;
      doff += n;
      if (doff == dst[di].iov_len) {
        ++di;
        doff = 0;
      }
    }
  }
}

void gatherPieces(const std::vector<iovec>& src, char* out) {
  for (const iovec& s : src) {
    std::memcpy(out, s.iov_base, s.iov_len);
    out += s.iov_len;
  }
}

void scatterPieces(const char* in, const std::vector<iovec>& dst) {
  for (const iovec& d : dst) {
    std::memcpy(d.iov_base, in, d.iov_len);
    in += d.iov_len;
  }
}

Status combine(coll::Op* op, const Datatype* elem, const void* origin, void* target,
               size_t bytes) {
  switch (op->kind()) {
    case coll::Op::Kind::kNoOp:
      return Status::ok();
    case coll::Op::Kind::kReplace:
      std::memcpy(target, origin, bytes);
      return Status::ok();
    default:
      if (!coll::opValidFor(op, elem))
        return errorf(MPI_ERR_OP, "%s is not defined on %s", op->name(),
                      elem->name().empty() ? "this datatype" : elem->name().c_str());
      coll::reducePacked(origin, target, bytes, const_cast<Datatype*>(elem), op);
      return Status::ok();
  }
}

namespace {

// Origin buffers in device memory: the operation runs on host twins of
// them. An input is copied to the host first; an output (a get's origin, a
// result buffer) is copied back by done() where the operation fills it
// during the call (mapped and CMA targets). A target reached by message
// sends its data back to a p2p receive, which stages a device buffer by
// itself, so outputs to such targets are passed through as they are.
struct OriginTwins {
  device::Stage stage;
  Status st;
  OriginTwins() { stage.setWhat("a one-sided operation"); }
  static bool needed(const void* p, int64_t count, const Datatype* t) {
    return device::active() && count > 0 && t && t->size() > 0 && device::isDevice(p);
  }
  const void* in(const void* p, int64_t count, const Datatype* t) {
    int64_t lo = 0, hi = 0;
    device::typeSpan(count, t, &lo, &hi);
    return stage.add(p, lo, hi, true, &st);
  }
  void* out(void* p, int64_t count, const Datatype* t) {
    int64_t lo = 0, hi = 0;
    device::typeSpan(count, t, &lo, &hi);
    void* h = stage.add(p, lo, hi, false, &st);
    if (h) stage.writes(0, count, t);
    return h;
  }
  Status done(const Status& op) {
    if (!op.isOk()) return op;
    return stage.finish();
  }
};

}  // namespace

Status Window::requestOutsidePassive() {
  return errorf(MPI_ERR_RMA_SYNC, "request-based operations need a passive-target epoch "
                "(MPI_Win_lock or MPI_Win_lock_all)");
}

bool Window::inEpoch(int target) const {
  if (fenceOpen_ || lockAll_ || peers_[target].lockHeld) return true;
  return started_ &&
         std::find(accessGroup_.begin(), accessGroup_.end(), target) != accessGroup_.end();
}

bool Window::targetSpan(const Target& t, __int128* lo, __int128* hi) const {
  const Peer& p = peers_[t.rank];
  const __int128 at = static_cast<__int128>(static_cast<int64_t>(t.disp)) * p.dispUnit;
  const Datatype* ty = t.type;
  *lo = at + ty->trueLb();
  *hi = at + static_cast<__int128>(t.count - 1) * ty->extent() + ty->trueUb();
  if (ty->extent() < 0) *lo = at + static_cast<__int128>(t.count - 1) * ty->extent() + ty->trueLb();
  const __int128 limit = static_cast<__int128>(1) << 62;
  return *lo > -limit && *hi < limit;
}

// Covered by regions, adjacent ones joining (an access may run from one
// attached region into the next, as MPICH allows): from `lo`, the region
// holding the current byte, then its end, until `hi`.
bool regionsCover(const Control::Region* r, size_t n, __int128 lo, __int128 hi) {
  for (__int128 at = lo;;) {
    size_t i = 0;
    while (i < n && !(at >= r[i].addr && at < static_cast<__int128>(r[i].addr) + r[i].bytes)) ++i;
    if (i == n) return false;
    at = static_cast<__int128>(r[i].addr) + r[i].bytes;
    if (hi <= at) return true;
  }
}

bool Window::attachedSpan(const Peer& p, __int128 lo, __int128 hi) const {
  auto inside = [lo, hi](const Control::Region* r, size_t n) { return regionsCover(r, n, lo, hi); };
  if (&p == &peers_[rank()]) return inside(ownRegions(), regions_.size());
  const Control* c = p.ctl;
  std::vector<Control::Region> list;
  for (;;) {
    const uint32_t seq = c->regionsSeq.load(std::memory_order_acquire);
    if (seq & 1) {
      sched_yield();
      continue;
    }
    const uint32_t nr = c->nregions.load(std::memory_order_acquire);
    bool in;
    if (nr <= static_cast<uint32_t>(kMaxRegions)) {
      in = inside(c->regions, nr);
    } else {
      // The owner's whole list, read from its process; a list it freed or
      // moved meanwhile fails the read or the sequence check below.
      list.resize(nr);
      const uint64_t at = c->listAddr;
      std::atomic_thread_fence(std::memory_order_acquire);
      if (c->regionsSeq.load(std::memory_order_relaxed) != seq) continue;
      if (!cma::read(p.pid, reinterpret_cast<const void*>(at), list.data(),
                     nr * sizeof(Control::Region))) {
        if (c->regionsSeq.load(std::memory_order_acquire) != seq) continue;
        return false;
      }
      in = inside(list.data(), nr);
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    if (c->regionsSeq.load(std::memory_order_relaxed) == seq) return in;
  }
}

Status Window::targetPieces(const Target& t, std::vector<iovec>* out, size_t* bytes) {
  const Peer& p = peers_[t.rank];
  *bytes = t.type->packedSize(t.count);
  out->clear();
  if (*bytes == 0) return Status::ok();
  // The whole span first, in 128 bits: no piece can then wrap an address.
  __int128 lo, hi;
  bool ok = targetSpan(t, &lo, &hi);
  if (flavor_ == Flavor::kDynamic) {
    // The attached regions: this rank's own list, a node peer's Control
    // block; a rank of another node checks them itself.
    if (ok && p.access != Access::kMessage) ok = attachedSpan(p, lo, hi);
    if (!ok)
      return errorf(MPI_ERR_RMA_RANGE, "target rank %d has no memory attached at %#llx..%#llx "
                    "in this dynamic window", t.rank, static_cast<unsigned long long>(lo),
                    static_cast<unsigned long long>(hi));
  } else if (!ok || lo < 0 || hi > static_cast<__int128>(p.size)) {
    return errorf(MPI_ERR_RMA_RANGE, "target rank %d: bytes %lld..%lld of its window are "
                  "outside it (%llu bytes)", t.rank, static_cast<long long>(lo),
                  static_cast<long long>(hi), static_cast<unsigned long long>(p.size));
  }
  const uint64_t addr = p.base + t.disp * static_cast<uint64_t>(p.dispUnit);
  t.type->segments(reinterpret_cast<void*>(addr), t.count, 0, *bytes, out);
  return Status::ok();
}

namespace {

// The target pieces as addresses of this process (kDirect).
void mapPieces(const Peer& p, std::vector<iovec>* v) {
  for (iovec& x : *v)
    x.iov_base = p.mapped + (reinterpret_cast<uint64_t>(x.iov_base) - p.base);
}

void originPieces(const void* buf, int64_t count, const Datatype* type, size_t bytes,
                  std::vector<iovec>* out) {
  out->clear();
  if (bytes) type->segments(buf, count, 0, bytes, out);
}

// Header + pieces + `data` bytes, malloc'ed; *data points at the data.
char* buildRequest(const AmHeader& h, const std::vector<iovec>& pieces, char** data) {
  const size_t at = sizeof h + pieces.size() * sizeof(AmPiece);
  char* m = static_cast<char*>(std::malloc(at + h.bytes * (h.op == AmOp::kCas ? 2 : 1) + 1));
  std::memcpy(m, &h, sizeof h);
  auto* pc = reinterpret_cast<AmPiece*>(m + sizeof h);
  for (size_t i = 0; i < pieces.size(); ++i)
    pc[i] = {reinterpret_cast<uint64_t>(pieces[i].iov_base), pieces[i].iov_len};
  *data = m + at;
  return m;
}

size_t requestBytes(const AmHeader& h, bool withData) {
  return sizeof h + h.pieces * sizeof(AmPiece) +
         (withData ? h.bytes * (h.op == AmOp::kCas ? 2 : 1) : 0);
}

}  // namespace

namespace {

// A user's request for a get by message (MPI_Rget, MPI_Rget_accumulate)
// completes when the window's own receive of the data does; the window
// keeps the receive, so flush and unlock wait for it too.
void replyDone(Request* r) {
  auto* u = static_cast<Request*>(r->owner);
  u->bytes = r->bytes;
  u->statusError = r->statusError != MPI_SUCCESS ? r->statusError
                   : static_cast<size_t>(r->bytes) != u->total ? MPI_ERR_RMA_RANGE
                                                                : MPI_SUCCESS;
  u->finish();
}

}  // namespace

Status Window::requestWithReply(int target, const AmHeader& h, char* msg, size_t msgBytes,
                                void* buf, int64_t count, Datatype* type, size_t bytes,
                                Request** user) {
  Request* r = nullptr;
  Status st = p2p::irecv(buf, count, type, target, h.replyTag, comm_, Channel::kPt2pt, &r);
  if (!st.isOk()) {
    std::free(msg);
    return st;
  }
  Request* u = nullptr;
  if (user) {
    u = Request::alloc(ReqKind::kColl);
    u->active = true;
    u->total = bytes;
    r->owner = u;
    r->onComplete = replyDone;
  }
  st = sendOwned(this, target, kTagRequest, msg, msgBytes);
  if (!st.isOk()) {
    r->onComplete = nullptr;
    (void)p2p::cancelRecv(r);
    Request::release(r);
    if (u) Request::release(u);
    return st;
  }
  gets_.emplace_back(r, bytes);
  if (user) *user = u;
  return Status::ok();
}

int Window::nextReplyTag() {
  replyTag_ = (replyTag_ + 1) % kTagReplySpan;
  return kTagReplyBase + replyTag_;
}

Status Window::checkOp(const Target& t, int64_t count, const Datatype* type,
                       std::vector<iovec>* pieces, size_t* bytes) {
  if (!inEpoch(t.rank))
    return errorf(MPI_ERR_RMA_SYNC, "no access epoch is open to target rank %d (MPI_Win_fence, "
                  "MPI_Win_start or MPI_Win_lock first)", t.rank);
  LOOM_TRY(targetPieces(t, pieces, bytes));
  if (type && type->packedSize(count) != *bytes)
    return errorf(MPI_ERR_TYPE, "the origin data (%zu bytes) and the target data (%zu bytes) "
                  "differ in size", type->packedSize(count), *bytes);
  return Status::ok();
}

// The common case of a put or get without allocation: both sides
// contiguous, the target mapped here (non-dynamic window). Returns the
// target's bytes as mapped here, nullptr when the general path must run
// (which also reports the errors).
inline char* Window::directContiguous(const Target& t, int64_t count, const Datatype* type,
                                      size_t* bytes) {
  Peer& p = peers_[t.rank];
  if (p.access != Access::kDirect || flavor_ == Flavor::kDynamic || !type->isContiguous() ||
      !t.type->isContiguous() || !inEpoch(t.rank))
    return nullptr;
  const size_t n = t.type->packedSize(t.count);
  if (n != type->packedSize(count) || n == 0) return nullptr;
  // Contiguous: the data is the n bytes from disp * unit + trueLb. (Overflow
  // or anything outside takes the general path, which reports it.)
  int64_t lo;
  if (__builtin_mul_overflow(static_cast<int64_t>(t.disp), static_cast<int64_t>(p.dispUnit), &lo) ||
      __builtin_add_overflow(lo, t.type->trueLb(), &lo) || lo < 0 || n > p.size ||
      static_cast<uint64_t>(lo) > p.size - n)
    return nullptr;
  *bytes = n;
  return p.mapped + lo;
}

Status Window::put(const void* origin, int64_t count, Datatype* type, const Target& t,
                   Request** req) {
  if (OriginTwins::needed(origin, count, type)) [[unlikely]] {
    OriginTwins tw;
    const void* h = tw.in(origin, count, type);
    if (!h) return tw.st;
    originStaged_ = true;
    Status st = put(h, count, type, t, req);
    originStaged_ = false;
    return st;
  }
  if (req && !passive(t.rank)) return requestOutsidePassive();
  size_t n = 0;
  if (char* dst = directContiguous(t, count, type, &n)) {
    copySmall(dst, static_cast<const char*>(origin) + type->trueLb(), n);
    if (req) *req = completedRequest();
    return Status::ok();
  }
  std::vector<iovec> pieces, src;
  size_t bytes = 0;
  LOOM_TRY(checkOp(t, count, type, &pieces, &bytes));
  Peer& p = peers_[t.rank];
  if (bytes > 0) {
    if (p.access == Access::kDirect) {
      if (pieces.size() == 1 && type->isContiguous()) {
        std::memcpy(p.mapped + (reinterpret_cast<uint64_t>(pieces[0].iov_base) - p.base),
                    static_cast<const char*>(origin) + type->trueLb(), bytes);
      } else {
        mapPieces(p, &pieces);
        originPieces(origin, count, type, bytes, &src);
        copyPieces(pieces, src);
      }
    } else if (p.access == Access::kCma) {
      originPieces(origin, count, type, bytes, &src);
      if (!cma::writev(p.pid, src.data(), src.size(), pieces.data(), pieces.size()))
        return errorf(MPI_ERR_RMA_RANGE, "writing to rank %d's window failed (%s)", t.rank,
                      std::strerror(errno));
    } else if (pieces.size() == 1 && type->isContiguous() && goesNative(t.rank, bytes) &&
               startNative(true, t.rank, reinterpret_cast<uint64_t>(pieces[0].iov_base),
                           const_cast<char*>(static_cast<const char*>(origin)) + type->trueLb(),
                           bytes, req)) {
      return Status::ok();  // an RMA write (native.cc); *req completes with it
    } else {
      AmHeader h{AmOp::kPut, 0, 0, 0, 0, 0, static_cast<uint32_t>(pieces.size()), 0, bytes};
      char* data;
      char* m = buildRequest(h, pieces, &data);
      type->pack(origin, count, 0, data, bytes);
      LOOM_TRY(sendOwned(this, t.rank, kTagRequest, m, requestBytes(h, true)));
      ++p.sent;
    }
  }
  if (req) *req = completedRequest();
  return Status::ok();
}

Status Window::get(void* origin, int64_t count, Datatype* type, const Target& t, Request** req) {
  if (OriginTwins::needed(origin, count, type) && peers_[t.rank].access != Access::kMessage)
      [[unlikely]] {
    OriginTwins tw;
    void* h = tw.out(origin, count, type);
    return h ? tw.done(get(h, count, type, t, req)) : tw.st;
  }
  if (req && !passive(t.rank)) return requestOutsidePassive();
  size_t n = 0;
  if (char* src = directContiguous(t, count, type, &n)) {
    copySmall(static_cast<char*>(origin) + type->trueLb(), src, n);
    if (req) *req = completedRequest();
    return Status::ok();
  }
  std::vector<iovec> pieces, dst;
  size_t bytes = 0;
  LOOM_TRY(checkOp(t, count, type, &pieces, &bytes));
  Peer& p = peers_[t.rank];
  if (bytes > 0 && p.access == Access::kMessage) {
    // A device origin stays with messages: the reply's receive stages it,
    // where an RMA read would write device memory from the host.
    if (pieces.size() == 1 && type->isContiguous() && goesNative(t.rank, bytes) &&
        !OriginTwins::needed(origin, count, type) &&
        startNative(false, t.rank, reinterpret_cast<uint64_t>(pieces[0].iov_base),
                    static_cast<char*>(origin) + type->trueLb(), bytes, req))
      return Status::ok();  // an RMA read (native.cc); *req completes with it
    AmHeader h{AmOp::kGet, 0, 0, nextReplyTag(), 0, 0, static_cast<uint32_t>(pieces.size()), 0,
               bytes};
    char* data;
    char* m = buildRequest(h, pieces, &data);
    return requestWithReply(t.rank, h, m, requestBytes(h, false), origin, count, type, bytes, req);
  }
  if (bytes > 0) {
    if (p.access == Access::kDirect) {
      if (pieces.size() == 1 && type->isContiguous()) {
        std::memcpy(static_cast<char*>(origin) + type->trueLb(),
                    p.mapped + (reinterpret_cast<uint64_t>(pieces[0].iov_base) - p.base), bytes);
      } else {
        mapPieces(p, &pieces);
        originPieces(origin, count, type, bytes, &dst);
        copyPieces(dst, pieces);
      }
    } else {
      originPieces(origin, count, type, bytes, &dst);
      if (!cma::readv(p.pid, dst.data(), dst.size(), pieces.data(), pieces.size()))
        return errorf(MPI_ERR_RMA_RANGE, "reading rank %d's window failed (%s)", t.rank,
                      std::strerror(errno));
    }
  }
  if (req) *req = completedRequest();
  return Status::ok();
}

namespace {

template <class T>
inline void fetchOp(coll::OpKind op, const void* origin, void* result, char* at) {
  T cur, in = 0;
  std::memcpy(&cur, at, sizeof(T));
  if (op != coll::OpKind::kNoOp) std::memcpy(&in, origin, sizeof(T));
  std::memcpy(result, &cur, sizeof(T));
  if (op == coll::OpKind::kSum) {
    T sum;
    if constexpr (std::is_integral_v<T>)  // wraps, as the reduction kernels do
      sum = static_cast<T>(static_cast<std::make_unsigned_t<T>>(cur) +
                           static_cast<std::make_unsigned_t<T>>(in));
    else
      sum = cur + in;
    std::memcpy(at, &sum, sizeof(T));
  } else if (op == coll::OpKind::kReplace) {
    std::memcpy(at, &in, sizeof(T));
  }
}

// result = *at; *at = origin op *at, for SUM, REPLACE and NO_OP on 4- and
// 8-byte integers and on float and double (the caller holds the target's
// mutex). False: anything else, untouched, for the general path.
inline bool fetchOpInline(coll::OpKind op, BasicKind k, const void* origin, void* result,
                          char* at) {
  if (op != coll::OpKind::kSum && op != coll::OpKind::kReplace && op != coll::OpKind::kNoOp)
    return false;
  switch (k) {
    case BasicKind::kInt32: fetchOp<int32_t>(op, origin, result, at); return true;
    case BasicKind::kUint32: fetchOp<uint32_t>(op, origin, result, at); return true;
    case BasicKind::kInt64: fetchOp<int64_t>(op, origin, result, at); return true;
    case BasicKind::kUint64: fetchOp<uint64_t>(op, origin, result, at); return true;
    case BasicKind::kFloat: fetchOp<float>(op, origin, result, at); return true;
    case BasicKind::kDouble: fetchOp<double>(op, origin, result, at); return true;
    default: return false;
  }
}

}  // namespace

Status Window::accumulate(const void* origin, int64_t count, Datatype* type, void* result,
                          int64_t rcount, Datatype* rtype, const Target& t, coll::Op* op,
                          Request** req) {
  const bool noopOp = op->kind() == coll::Op::Kind::kNoOp;
  const bool stageIn = !noopOp && OriginTwins::needed(origin, count, type);
  const bool stageOut = result && OriginTwins::needed(result, rcount, rtype) &&
                        peers_[t.rank].access != Access::kMessage;
  if (stageIn || stageOut) [[unlikely]] {
    OriginTwins tw;
    const void* o = stageIn ? tw.in(origin, count, type) : origin;
    void* r = o && stageOut ? tw.out(result, rcount, rtype) : result;
    if (!o || (stageOut && !r)) return tw.st;
    return tw.done(accumulate(o, count, type, r, rcount, rtype, t, op, req));
  }
  if (req && !passive(t.rank)) return requestOutsidePassive();
  // MPI_Fetch_and_op on a mapped target (counters; OSU's osu_fop_latency):
  // one predefined element, the common ops on the common types in line.
  if (count == 1 && rcount == 1 && t.count == 1 && result && type == rtype && type == t.type &&
      type->isPredefined()) {
    size_t n = 0;
    if (char* at = directContiguous(t, 1, type, &n)) {
      lockAcc(peers_[t.rank].ctl);
      const bool done = fetchOpInline(op->kind(), type->kind(), origin, result, at);
      unlockAcc(peers_[t.rank].ctl);
      if (done) {
        if (req) *req = completedRequest();
        return Status::ok();
      }
    }
  }
  const bool noop = noopOp;
  const Datatype* elem = elementType(t.type);
  // Nothing to combine (no target element, nothing fetched): the op and
  // types are not checked, as Open MPI and MPICH do not (mpi4py's suite
  // relies on it: MPI_SUM on zero MPI_BYTEs).
  const bool empty = t.type->packedSize(t.count) == 0 && (noop || type->packedSize(count) == 0) &&
                     (!result || rtype->packedSize(rcount) == 0);
  if (!noop && !empty && elementType(type)->kind() != elem->kind())
    return errorf(MPI_ERR_TYPE, "origin and target datatypes are built from different basic "
                  "types");
  if (!noop && !empty && op->kind() != coll::Op::Kind::kReplace && !coll::opValidFor(op, elem))
    return errorf(MPI_ERR_OP, "%s is not defined on %s", op->name(),
                  elem->name().empty() ? "this datatype" : elem->name().c_str());
  Peer& p = peers_[t.rank];
  // Mapped here and contiguous on every side: combine in place, no copies.
  // (Anything unusual, errors included, takes the general path below.)
  size_t n = 0;
  char* at = nullptr;
  if ((noop || type->isContiguous()) && (!result || rtype->isContiguous()) &&
      (at = directContiguous(t, noop ? t.count : count, noop ? t.type : type, &n)) &&
      (!result || rtype->packedSize(rcount) == n)) {
    lockAcc(p.ctl);
    if (result) std::memcpy(static_cast<char*>(result) + rtype->trueLb(), at, n);
    Status st = noop ? Status::ok()
                     : combine(op, elem, static_cast<const char*>(origin) + type->trueLb(), at, n);
    unlockAcc(p.ctl);
    if (st.isOk() && req) *req = completedRequest();
    return st;
  }
  std::vector<iovec> pieces;
  size_t bytes = 0;
  LOOM_TRY(checkOp(t, count, noop ? nullptr : type, &pieces, &bytes));
  if (result && rtype->packedSize(rcount) != bytes)
    return errorf(MPI_ERR_TYPE, "the result buffer (%zu bytes) and the target data (%zu bytes) "
                  "differ in size", rtype->packedSize(rcount), bytes);
  if (bytes == 0) {
    if (req) *req = completedRequest();
    return Status::ok();
  }
  if (p.access == Access::kMessage) {
    if (elem->abiValue() == 0)
      return errorf(MPI_ERR_TYPE, "accumulates to another node take predefined element types "
                    "only (this one is %s)", elem->name().c_str());
    AmHeader h{result ? AmOp::kGetAcc : AmOp::kAcc, 0, 0, result ? nextReplyTag() : 0,
               static_cast<uint32_t>(reinterpret_cast<uintptr_t>(coll::toHandle(op))),
               elem->abiValue(), static_cast<uint32_t>(pieces.size()), 0, bytes};
    char* data;
    char* m = buildRequest(h, pieces, &data);
    if (!noop) type->pack(origin, count, 0, data, bytes);
    if (result)
      return requestWithReply(t.rank, h, m, requestBytes(h, !noop), result, rcount, rtype, bytes,
                              req);
    LOOM_TRY(sendOwned(this, t.rank, kTagRequest, m, requestBytes(h, !noop)));
    ++p.sent;
    if (req) *req = completedRequest();
    return Status::ok();
  }
  // Here: read, combine, write back under the target's mutex.
  std::vector<char> in(noop ? 0 : bytes), cur(bytes);
  if (!noop) type->pack(origin, count, 0, in.data(), bytes);
  if (p.access == Access::kDirect) mapPieces(p, &pieces);
  lockAcc(p.ctl);
  Status st = Status::ok();
  if (p.access == Access::kDirect) {
    gatherPieces(pieces, cur.data());
  } else {
    iovec l{cur.data(), bytes};
    if (!cma::readv(p.pid, &l, 1, pieces.data(), pieces.size()))
      st = errorf(MPI_ERR_RMA_RANGE, "reading rank %d's window failed (%s)", t.rank,
                  std::strerror(errno));
  }
  if (st.isOk() && result) rtype->unpack(result, rcount, 0, cur.data(), bytes);
  if (st.isOk() && !noop) {
    st = combine(op, elem, in.data(), cur.data(), bytes);
    if (st.isOk()) {
      if (p.access == Access::kDirect) {
        scatterPieces(cur.data(), pieces);
      } else {
        iovec l{cur.data(), bytes};
        if (!cma::writev(p.pid, &l, 1, pieces.data(), pieces.size()))
          st = errorf(MPI_ERR_RMA_RANGE, "writing to rank %d's window failed (%s)", t.rank,
                      std::strerror(errno));
      }
    }
  }
  unlockAcc(p.ctl);
  if (st.isOk() && req) *req = completedRequest();
  return st;
}

Status Window::compareAndSwap(const void* origin, const void* compare, void* result,
                              Datatype* type, int target, uint64_t disp) {
  // (A result from a target reached by message arrives by a p2p receive,
  // which stages it.)
  const bool devO = OriginTwins::needed(origin, 1, type);
  const bool devC = OriginTwins::needed(compare, 1, type);
  const bool devR =
      OriginTwins::needed(result, 1, type) && peers_[target].access != Access::kMessage;
  if (devO || devC || devR) [[unlikely]] {
    OriginTwins tw;
    const void* o = devO ? tw.in(origin, 1, type) : origin;
    const void* c = o && devC ? tw.in(compare, 1, type) : compare;
    void* r = o && c && devR ? tw.out(result, 1, type) : result;
    if (!o || !c || (devR && !r)) return tw.st;
    return tw.done(compareAndSwap(o, c, r, type, target, disp));
  }
  const Target t{target, disp, 1, type};
  Peer& p = peers_[target];
  size_t n = 0;
  if (char* at = directContiguous(t, 1, type, &n)) {
    // One element of at most 16 bytes: copySmall and a word compare keep
    // libc's memcpy/memcmp calls out of the lock.
    // (The API admits predefined integer types only: n <= 16.)
    const size_t m = n < 16 ? n : 16;
    uint64_t cur[2] = {0, 0}, cmp[2] = {0, 0};
    copySmall(reinterpret_cast<char*>(cmp), static_cast<const char*>(compare), m);
    lockAcc(p.ctl);
    copySmall(reinterpret_cast<char*>(cur), at, m);
    if (cur[0] == cmp[0] && cur[1] == cmp[1]) copySmall(at, static_cast<const char*>(origin), m);
    unlockAcc(p.ctl);
    copySmall(static_cast<char*>(result), reinterpret_cast<const char*>(cur), m);
    return Status::ok();
  }
  std::vector<iovec> pieces;
  size_t bytes = 0;
  LOOM_TRY(checkOp(t, 1, type, &pieces, &bytes));
  if (p.access == Access::kMessage) {
    AmHeader h{AmOp::kCas, 0, 0, nextReplyTag(), 0, type->abiValue(),
               static_cast<uint32_t>(pieces.size()), 0, bytes};
    char* data;
    char* m = buildRequest(h, pieces, &data);
    std::memcpy(data, origin, bytes);
    std::memcpy(data + bytes, compare, bytes);
    return requestWithReply(target, h, m, requestBytes(h, true), result, 1, type, bytes, nullptr);
  }
  char cur[64];
  if (p.access == Access::kDirect) mapPieces(p, &pieces);
  lockAcc(p.ctl);
  Status st = Status::ok();
  iovec l{cur, bytes};
  if (p.access == Access::kDirect)
    gatherPieces(pieces, cur);
  else if (!cma::readv(p.pid, &l, 1, pieces.data(), pieces.size()))
    st = errorf(MPI_ERR_RMA_RANGE, "reading rank %d's window failed", target);
  if (st.isOk()) {
    std::memcpy(result, cur, bytes);
    if (std::memcmp(cur, compare, bytes) == 0) {
      if (p.access == Access::kDirect) {
        scatterPieces(static_cast<const char*>(origin), pieces);
      } else {
        iovec o{const_cast<void*>(origin), bytes};
        if (!cma::writev(p.pid, &o, 1, pieces.data(), pieces.size()))
          st = errorf(MPI_ERR_RMA_RANGE, "writing to rank %d's window failed", target);
      }
    }
  }
  unlockAcc(p.ctl);
  return st;
}

}  // namespace loom::rma
