// Staging of device buffers through host memory (device_stage.h), and the
// pool of pinned host buffers it uses.
#include "core/device_stage.h"

#include <algorithm>
#include <mutex>

#include "core/datatype.h"
#include "core/params.h"
#include "core/request.h"

namespace loom::device {

// ---- the pool ----------------------------------------------------------------
//
// Pinned host memory costs a system call and page locking to allocate
// (cudaMallocHost: ~0.1 ms for small buffers, ~1 ms per 100 MB), so freed
// buffers are kept by power-of-two size class, up to LOOM_DEVICE_STAGE_CACHE
// bytes in all. A request larger than the cap is allocated exactly and
// freed after use.

namespace {

constexpr size_t kMinClass = 12;  // 4 KiB
constexpr size_t kClasses = 48;

struct Pool {
  std::mutex mu;
  std::vector<void*> free[kClasses];
  size_t kept = 0;
  size_t cap = 0;
  bool ready = false;
};
Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: requests may finish during exit
  return *p;
}

size_t classOf(size_t n) {
  size_t c = kMinClass;
  while ((size_t{1} << c) < n) ++c;
  return c;
}

}  // namespace

void* stageAlloc(size_t n) {
  Pool& P = pool();
  std::lock_guard<std::mutex> lock(P.mu);
  if (!P.ready) {
    P.cap = static_cast<size_t>(std::max<int64_t>(0, params::getInt("LOOM_DEVICE_STAGE_CACHE")));
    P.ready = true;
  }
  const size_t c = classOf(n);
  if ((size_t{1} << c) > P.cap || c >= kClasses) return hostAlloc(n ? n : 1);
  if (!P.free[c].empty()) {
    void* p = P.free[c].back();
    P.free[c].pop_back();
    P.kept -= size_t{1} << c;
    return p;
  }
  return hostAlloc(size_t{1} << c);
}

void stageFree(void* p, size_t n) {
  if (!p) return;
  Pool& P = pool();
  std::lock_guard<std::mutex> lock(P.mu);
  const size_t c = classOf(n);
  const size_t bytes = size_t{1} << c;
  if (bytes > P.cap || c >= kClasses || P.kept + bytes > P.cap) {
    hostFree(p);
    return;
  }
  P.free[c].push_back(p);
  P.kept += bytes;
}

void stageDrain() {
  Pool& P = pool();
  std::lock_guard<std::mutex> lock(P.mu);
  for (auto& list : P.free) {
    for (void* p : list) hostFree(p);
    list.clear();
  }
  P.kept = 0;
}

// ---- typed geometry and copies ---------------------------------------------------

void typeSpan(int64_t count, const Datatype* t, int64_t* lo, int64_t* hi) {
  *lo = *hi = 0;
  if (count <= 0 || !t || t->size() == 0) return;
  const int64_t step = (count - 1) * t->extent();
  *lo = t->trueLb() + std::min<int64_t>(0, step);
  *hi = t->trueUb() + std::max<int64_t>(0, step);
}

namespace {

// `rows` rows of `width` bytes, `pitch` apart (may be negative), between
// two buffers of the same layout.
Status copyRows(char* dst, const char* src, int64_t width, int64_t rows, int64_t pitch) {
  if (rows <= 0 || width <= 0) return Status::ok();
  if (rows == 1 || pitch == width) {
    if (pitch == width && rows > 1) return copy(dst, src, static_cast<size_t>(width * rows));
    return copy(dst, src, static_cast<size_t>(width));
  }
  if (pitch > width)
    return copy2D(dst, static_cast<size_t>(pitch), src, static_cast<size_t>(pitch),
                  static_cast<size_t>(width), static_cast<size_t>(rows));
  for (int64_t k = 0; k < rows; ++k) LOOM_TRY(copy(dst + k * pitch, src + k * pitch, width));
  return Status::ok();
}

}  // namespace

Status copyTyped(void* dst, const void* src, int64_t count, const Datatype* t, size_t maxBytes) {
  if (count <= 0 || t->size() == 0 || maxBytes == 0) return Status::ok();
  auto* d = static_cast<char*>(dst);
  auto* s = static_cast<const char*>(src);
  const size_t all = t->packedSize(count);
  if (t->isContiguous()) return copy(d + t->trueLb(), s + t->trueLb(), std::min(all, maxBytes));
  if (maxBytes >= all) {
    // Every element whole: each run of the type map as one 2D copy.
    for (int64_t i = 0; i < count; ++i)
      for (const DatatypeRun& r : t->runs()) {
        const int64_t off = i * t->extent() + r.offset;
        LOOM_TRY(copyRows(d + off, s + off, r.length, r.count, r.stride));
      }
    return Status::ok();
  }
  // Part of the stream (a short receive): its pieces as the type maps them.
  std::vector<iovec> iov;
  (void)t->segments(src, count, 0, maxBytes, &iov);
  for (const iovec& v : iov) {
    const char* from = static_cast<const char*>(v.iov_base);
    LOOM_TRY(copy(d + (from - s), from, v.iov_len));
  }
  return Status::ok();
}

// ---- Stage -------------------------------------------------------------------------

Stage::~Stage() {
  for (const Span& s : spans_) stageFree(s.host, s.cap);
}

void* Stage::add(const void* p, int64_t lo, int64_t hi, bool load, Status* st) {
  const size_t bytes = static_cast<size_t>(hi - lo);
  char* host = static_cast<char*>(stageAlloc(bytes));
  if (!host) {
    *st = errorf(MPI_ERR_NO_MEM,
                 "%s: cannot allocate %zu bytes of host memory to stage a device buffer", what_,
                 bytes);
    return nullptr;
  }
  char* dev = const_cast<char*>(static_cast<const char*>(p)) + lo;
  spans_.push_back(Span{dev, host, bytes, bytes, lo});
  if (load && bytes > 0) {
    Status c = copy(host, dev, bytes);
    if (!c.isOk()) {
      *st = errorf(MPI_ERR_OTHER, "%s: copying a device buffer to the host failed: %s", what_,
                   c.message().c_str());
      return nullptr;
    }
  }
  return host - lo;
}

void Stage::writes(int64_t off, int64_t count, const Datatype* t) {
  if (spans_.empty() || count <= 0 || t->size() == 0) return;
  writes_.push_back(Write{spans_.size() - 1, off, count, t, SIZE_MAX});
}

void Stage::limitLastWrite(size_t maxBytes) {
  if (!writes_.empty()) writes_.back().maxBytes = maxBytes;
}

const void* Stage::translate(const void* q) const {
  const char* c = static_cast<const char*>(q);
  for (const Span& s : spans_)
    if (c >= s.dev && c < s.dev + std::max<size_t>(s.bytes, 1)) return s.host + (c - s.dev);
  // The buffer pointer itself may lie outside its span (a type whose true
  // lower bound is positive): the span's recorded offset maps it.
  for (const Span& s : spans_)
    if (c == s.dev - s.lo) return s.host - s.lo;
  return q;
}

Status Stage::finish() {
  Status first;
  for (const Write& w : writes_) {
    const Span& s = spans_[w.span];
    char* userBase = s.dev - s.lo;  // the buffer pointer the span was staged for
    char* hostBase = s.host - s.lo;
    Status st = copyTyped(userBase + w.off, hostBase + w.off, w.count, w.type, w.maxBytes);
    if (!st.isOk() && first.isOk())
      first = errorf(MPI_ERR_OTHER, "%s: copying the result back to device memory failed: %s",
                     what_, st.message().c_str());
  }
  writes_.clear();
  return first;
}

// ---- packing -------------------------------------------------------------------------

Status packAny(const Datatype* t, const void* buf, int64_t count, void* out, size_t bytes) {
  if (bytes == 0) return Status::ok();
  const bool devBuf = active() && isDevice(buf), devOut = active() && isDevice(out);
  if (!devBuf && !devOut) {
    (void)t->pack(buf, count, 0, out, bytes);
    return Status::ok();
  }
  Stage stage;
  stage.setWhat("packing");
  Status st;
  const void* src = buf;
  if (devBuf) {
    int64_t lo = 0, hi = 0;
    typeSpan(count, t, &lo, &hi);
    if (!(src = stage.add(buf, lo, hi, true, &st))) return st;
  }
  void* dst = out;
  if (devOut && !(dst = stage.add(out, 0, static_cast<int64_t>(bytes), false, &st))) return st;
  (void)t->pack(src, count, 0, dst, bytes);
  return devOut ? copy(out, dst, bytes) : Status::ok();
}

Status unpackAny(const Datatype* t, void* buf, int64_t count, const void* in, size_t bytes) {
  if (bytes == 0) return Status::ok();
  const bool devBuf = active() && isDevice(buf), devIn = active() && isDevice(in);
  if (!devBuf && !devIn) {
    (void)t->unpack(buf, count, 0, in, bytes);
    return Status::ok();
  }
  Stage stage;
  stage.setWhat("unpacking");
  Status st;
  const void* src = in;
  if (devIn && !(src = stage.add(in, 0, static_cast<int64_t>(bytes), true, &st))) return st;
  void* dst = buf;
  if (devBuf) {
    int64_t lo = 0, hi = 0;
    typeSpan(count, t, &lo, &hi);
    if (!(dst = stage.add(buf, lo, hi, false, &st))) return st;
    stage.writes(0, count, t);
    stage.limitLastWrite(bytes);
  }
  (void)t->unpack(dst, count, 0, src, bytes);
  return stage.finish();
}

// ---- p2p requests -------------------------------------------------------------------

Status stageRequest(Request* r, bool isSend) {
  int64_t lo = 0, hi = 0;
  typeSpan(r->count, r->type, &lo, &hi);
  // No byte is touched: nothing to stage, and the pointer (maybe just past
  // a buffer) is not asked about (device.h, the kind cache's limits).
  if (hi <= lo || kindOf(r->buf) != MemKind::kDevice) return Status::ok();
  auto* s = new Stage();
  s->setWhat(isSend ? "a send from device memory" : "a receive into device memory");
  Status st;
  // A send reads its span; a receive writes its typed bytes only, so the
  // twin needs no copy of what is there.
  void* host = s->add(r->buf, lo, hi, isSend, &st);
  if (!host) {
    delete s;
    return st;
  }
  if (!isSend) s->writes(0, r->count, r->type);
  s->userBuf = r->buf;
  r->buf = host;
  r->staged = s;
  return Status::ok();
}

void finishStaged(Request* r) {
  Stage* s = r->staged;
  r->staged = nullptr;
  // A receive copies back what it got (a shorter message, or none when
  // cancelled); bytes is set by the engine before it finishes a receive.
  if (r->kind == ReqKind::kRecv)
    s->limitLastWrite(static_cast<size_t>(std::max<int64_t>(0, r->bytes)));
  Status st = s->finish();
  if (s->pipe) {
    // A receive's last chunks are still being copied to the device.
    Status p = s->pipe->finish();
    if (!p.isOk() && st.isOk())
      st = errorf(MPI_ERR_OTHER, "a receive into device memory: copying to the device failed: %s",
                  p.message().c_str());
  }
  if (s->userBuf) r->buf = s->userBuf;  // a p2p request's own buffer back
  delete s;
  if (!st.isOk() && r->statusError == MPI_SUCCESS) {
    r->statusError = st.code();
    r->error = std::move(st);
  }
}

}  // namespace loom::device
