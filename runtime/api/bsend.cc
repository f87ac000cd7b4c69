// MPI_Buffer_attach / MPI_Buffer_detach / MPI_Buffer_flush and the space
// allocator behind MPI_Bsend.
//
// The attached buffer is carved first-fit into regions, one per message in
// flight; a region is [offset, offset + packed bytes + MPI_BSEND_OVERHEAD)
// and holds the packed data at its start. Regions are kept sorted by offset
// (a handful at a time in practice, so a vector beats a tree). A region is
// returned when the engine completes the internal send that reads it.
//
// MPI_BUFFER_AUTOMATIC (MPI 4.1): no user buffer; every message gets its own
// heap copy, freed when sent. Never fails for lack of space.
// MPI_Buffer_attach / MPI_Buffer_detach / MPI_Buffer_flush and the space
// allocator behind MPI_Bsend (SendBuffer, bsend.h); the communicator and
// session buffers and the nonblocking flushes are in buffer_api.cc.
//
// An attached buffer is carved first-fit into regions, one per message in
// flight; a region is [offset, offset + packed bytes + MPI_BSEND_OVERHEAD)
// and holds the packed data at its start. Regions are kept sorted by offset
// (a handful at a time in practice, so a vector beats a tree). A region is
// returned when the engine completes the internal send that reads it; the
// send's request names its buffer (Request::owner).
//
// MPI_BUFFER_AUTOMATIC (MPI 4.1): no user buffer; every message gets its own
// heap copy, freed when sent. Never fails for lack of space.
#include "api/bsend.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <vector>

#include "api/comm_internal.h"
#include "api/large_count.h"
#include "api/runtime.h"
#include "core/device_stage.h"
#include "core/progress.h"
#include "p2p/p2p.h"

namespace loom::api {
namespace {

Datatype* byteType() {
  return predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_BYTE));
}

}  // namespace

std::vector<SendBuffer*>& SendBuffer::all() {
  static std::vector<SendBuffer*> v;
  return v;
}

SendBuffer& SendBuffer::process() {
  static SendBuffer* b = new SendBuffer;  // never destroyed: outlives MPI_Finalize
  return *b;
}

SendBuffer::SendBuffer() { all().push_back(this); }

SendBuffer::~SendBuffer() {
  flush();
  auto& v = all();
  v.erase(std::remove(v.begin(), v.end(), this), v.end());
}

Status SendBuffer::attach(void* buffer, int64_t size) {
  if (attached_) return errorf(MPI_ERR_BUFFER, "a buffer is already attached; detach it first");
  if (buffer == MPI_BUFFER_AUTOMATIC) {
    automatic_ = true;
    base_ = nullptr;
    size_ = 0;
    attached_ = true;
    return Status::ok();
  }
  if (size < 0) return errorf(MPI_ERR_ARG, "size=%lld < 0", static_cast<long long>(size));
  if (!buffer && size > 0) return errorf(MPI_ERR_BUFFER, "buffer is NULL");
  base_ = static_cast<char*>(buffer);
  size_ = static_cast<size_t>(size);
  automatic_ = false;
  attached_ = true;
  return Status::ok();
}

Status SendBuffer::detach(void** base, int64_t* size) {
  if (!attached_) return errorf(MPI_ERR_BUFFER, "no buffer is attached");
  // The standard: detach blocks until every message in the buffer is sent.
  flush();
  *base = automatic_ ? MPI_BUFFER_AUTOMATIC : base_;
  *size = static_cast<int64_t>(size_);
  base_ = nullptr;
  size_ = 0;
  attached_ = automatic_ = false;
  return Status::ok();
}

void SendBuffer::flush() {
  progress::waitUntil([this] { return regions_.empty(); });
}

Request* SendBuffer::iflush() {
  Request* r = Request::alloc(ReqKind::kDone);
  r->statusSource = MPI_ANY_SOURCE;
  r->statusTag = MPI_ANY_TAG;
  r->statusError = MPI_SUCCESS;
  if (regions_.empty())
    r->complete = true;
  else
    flushWaiters_.push_back(r);
  return r;
}

// First gap of `need` bytes; false when there is none.
bool SendBuffer::findGap(size_t need, size_t* offset, size_t* index) const {
  size_t at = 0;
  for (size_t i = 0; i <= regions_.size(); ++i) {
    size_t end = i < regions_.size() ? regions_[i].offset : size_;
    if (end >= at && end - at >= need) {
      *offset = at;
      *index = i;
      return true;
    }
    if (i < regions_.size()) at = regions_[i].offset + regions_[i].length;
  }
  return false;
}

size_t SendBuffer::bytesInUse() const {
  size_t n = 0;
  for (const Region& r : regions_) n += r.length;
  return n;
}

void SendBuffer::dropRegion(Request* req) {
  for (size_t i = 0; i < regions_.size(); ++i) {
    if (regions_[i].req != req) continue;
    std::free(regions_[i].heap);
    regions_.erase(regions_.begin() + static_cast<std::ptrdiff_t>(i));
    break;
  }
  if (!regions_.empty() || flushWaiters_.empty()) return;
  // Empty now: every pending MPI_*_iflush completes.
  std::vector<Request*> done;
  done.swap(flushWaiters_);
  for (Request* w : done) w->finish();
}

// Runs inside progress when the engine has sent a buffered message.
void SendBuffer::onSent(Request* req) {
  static_cast<SendBuffer*>(req->owner)->dropRegion(req);
}

Status SendBuffer::send(const void* buf, int64_t count, Datatype* type, int dest, int tag,
                        Comm* comm) {
  const size_t bytes = type->packedSize(count);
  const size_t need = bytes + MPI_BSEND_OVERHEAD;
  Region reg{0, need, nullptr, nullptr};
  size_t index = regions_.size();
  char* data;
  if (automatic_) {
    reg.heap = std::malloc(bytes ? bytes : 1);
    if (!reg.heap)
      return errorf(MPI_ERR_NO_MEM, "cannot allocate %zu bytes for a buffered send", bytes);
    data = static_cast<char*>(reg.heap);
  } else {
    if (!findGap(need, &reg.offset, &index)) {
      // Sends that finished since the last progress pass free their space.
      // A large one is done when the receiver's "read it" record arrives,
      // which between nodes may still be on the wire: keep progressing for
      // a millisecond and 64 passes before calling the buffer full (never
      // waiting for a receiver to act, so MPI_Bsend stays local).
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
      for (int pass = 0; !findGap(need, &reg.offset, &index) &&
                         (pass < 64 || std::chrono::steady_clock::now() < deadline);
           ++pass)
        progress::poll();
      if (!findGap(need, &reg.offset, &index))
        return errorf(MPI_ERR_BUFFER,
                      "the attached buffer (%zu bytes, %zu in use) has no room for a message of "
                      "%zu bytes + MPI_BSEND_OVERHEAD (%d)",
                      size_, bytesInUse(), bytes, MPI_BSEND_OVERHEAD);
    }
    data = base_ + reg.offset;
  }
  LOOM_TRY(device::packAny(type, buf, count, data, bytes));  // buf may be on a GPU
  regions_.insert(regions_.begin() + static_cast<std::ptrdiff_t>(index), reg);

  Request* r = nullptr;
  Status st = p2p::isend(data, static_cast<int64_t>(bytes), byteType(), dest, tag, comm,
                         SendMode::kStandard, Channel::kPt2pt, &r);
  if (!st.isOk() || r->complete) {
    // Failed, or already on its way (eager): the region is free again.
    regions_[index].req = r;
    dropRegion(r);
    if (r) Request::release(r);
    return st;
  }
  regions_[index].req = r;
  r->owner = this;
  r->onComplete = onSent;
  r->userFreed = true;  // nobody waits for it: recycled when it finishes
  return Status::ok();
}

Status bufferedSend(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm) {
  SendBuffer* b = commBuffer(comm);
  if (!b || !b->attached()) b = nullptr;
  if (!b) {
    SendBuffer& p = SendBuffer::process();
    if (p.attached()) b = &p;
  }
  if (!b)
    return errorf(MPI_ERR_BUFFER, "no buffer is attached (MPI_Buffer_attach, "
                  "MPI_Comm_attach_buffer, MPI_Session_attach_buffer) for a buffered send");
  return b->send(buf, count, type, dest, tag, comm);
}

void flushBufferedSends() {
  for (SendBuffer* b : std::vector<SendBuffer*>(SendBuffer::all())) b->flush();
}

}  // namespace loom::api

using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::SendBuffer;

namespace {

int attach(void* buffer, int64_t size, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  loom::Status st = SendBuffer::process().attach(buffer, size);
  if (!st.isOk()) return raise(nullptr, st, fn);
  return MPI_SUCCESS;
}

// Detaches into *size (`maxSize`: the largest value the caller's size
// argument holds; a larger buffer stays attached, MPI_ERR_VALUE_TOO_LARGE).
int detach(void* buffer_addr, int64_t* size, int64_t maxSize, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!buffer_addr || !size)
    return raise(nullptr, errorf(MPI_ERR_ARG, "buffer_addr or size is NULL"), fn);
  SendBuffer& b = SendBuffer::process();
  if (!b.attached()) {
    // Nothing attached: NULL and 0, as before MPI 5.0 made it an error
    // for the communicator and session forms.
    *static_cast<void**>(buffer_addr) = nullptr;
    *size = 0;
    return MPI_SUCCESS;
  }
  if (b.size() > static_cast<size_t>(maxSize))
    return raise(nullptr,
                 errorf(MPI_ERR_VALUE_TOO_LARGE,
                        "the attached buffer's size (%zu bytes) does not fit an int: detach it "
                        "with MPI_Buffer_detach_c",
                        b.size()),
                 fn);
  void* base = nullptr;
  int64_t n = 0;
  (void)b.detach(&base, &n);  // attached: cannot fail
  *static_cast<void**>(buffer_addr) = base;
  *size = n;
  return MPI_SUCCESS;
}

}  // namespace

// Each with its MPI_Count form (api/large_count.h).
extern "C" int PMPI_Buffer_attach(void* buffer, int size) {
  return attach(buffer, size, "MPI_Buffer_attach");
}
LOOM_WEAK_ALIAS(MPI_Buffer_attach)
LOOM_LARGE_COUNT(Buffer_attach, (void* buffer, MPI_Count size),
                 attach(buffer, size, "MPI_Buffer_attach_c"))

extern "C" int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  int64_t n = 0;
  int rc = detach(buffer_addr, size ? &n : nullptr, INT_MAX, "MPI_Buffer_detach");
  if (rc == MPI_SUCCESS) *size = static_cast<int>(n);
  return rc;
}
LOOM_WEAK_ALIAS(MPI_Buffer_detach)
LOOM_LARGE_COUNT(Buffer_detach, (void* buffer_addr, MPI_Count* size),
                 detach(buffer_addr, size, INT64_MAX, "MPI_Buffer_detach_c"))

extern "C" int PMPI_Buffer_flush(void) {
  if (!requireRunning("MPI_Buffer_flush")) return MPI_ERR_OTHER;
  SendBuffer::process().flush();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Buffer_flush)
