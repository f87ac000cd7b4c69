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
#include "api/bsend.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <vector>

#include "api/large_count.h"
#include "api/runtime.h"
#include "core/progress.h"
#include "p2p/p2p.h"

namespace loom::api {
namespace {

struct Region {
  size_t offset;  // in the attached buffer (0 in automatic mode)
  size_t length;  // bytes reserved, overhead included
  void* heap;     // automatic mode: the message's own copy
  Request* req;   // the internal send reading it; nullptr while being set up
};

struct BufferState {
  char* base = nullptr;
  size_t size = 0;
  bool attached = false;
  bool automatic = false;
  std::vector<Region> regions;  // sorted by offset
} B;

Datatype* byteType() {
  return predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_BYTE));
}

// First gap of `need` bytes; false when there is none.
bool findGap(size_t need, size_t* offset, size_t* index) {
  size_t at = 0;
  for (size_t i = 0; i <= B.regions.size(); ++i) {
    size_t end = i < B.regions.size() ? B.regions[i].offset : B.size;
    if (end >= at && end - at >= need) {
      *offset = at;
      *index = i;
      return true;
    }
    if (i < B.regions.size()) at = B.regions[i].offset + B.regions[i].length;
  }
  return false;
}

size_t bytesInUse() {
  size_t n = 0;
  for (const Region& r : B.regions) n += r.length;
  return n;
}

void dropRegion(Request* req) {
  for (size_t i = 0; i < B.regions.size(); ++i) {
    if (B.regions[i].req != req) continue;
    std::free(B.regions[i].heap);
    B.regions.erase(B.regions.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
}

// Runs inside progress when the engine has sent a buffered message.
void onSent(Request* req) {
  dropRegion(req);
}

}  // namespace

Status bufferedSend(const void* buf, int64_t count, Datatype* type, int dest, int tag, Comm* comm) {
  if (!B.attached)
    return errorf(MPI_ERR_BUFFER, "no buffer is attached (MPI_Buffer_attach) for a buffered send");
  const size_t bytes = type->packedSize(count);
  const size_t need = bytes + MPI_BSEND_OVERHEAD;
  Region reg{0, need, nullptr, nullptr};
  size_t index = B.regions.size();
  char* data;
  if (B.automatic) {
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
                      B.size, bytesInUse(), bytes, MPI_BSEND_OVERHEAD);
    }
    data = B.base + reg.offset;
  }
  if (bytes > 0) (void)type->pack(buf, count, 0, data, bytes);
  B.regions.insert(B.regions.begin() + static_cast<std::ptrdiff_t>(index), reg);

  Request* r = nullptr;
  Status st = p2p::isend(data, static_cast<int64_t>(bytes), byteType(), dest, tag, comm,
                         SendMode::kStandard, Channel::kPt2pt, &r);
  if (!st.isOk() || r->complete) {
    // Failed, or already on its way (eager): the region is free again.
    B.regions[index].req = r;
    dropRegion(r);
    if (r) Request::release(r);
    return st;
  }
  B.regions[index].req = r;
  r->onComplete = onSent;
  r->userFreed = true;  // nobody waits for it: recycled when it finishes
  return Status::ok();
}

void flushBufferedSends() {
  progress::waitUntil([] { return B.regions.empty(); });
}

}  // namespace loom::api

using loom::errorf;
using loom::api::B;
using loom::api::raise;
using loom::api::requireRunning;

namespace {

int attach(void* buffer, int64_t size, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (B.attached)
    return raise(nullptr, errorf(MPI_ERR_BUFFER, "a buffer is already attached; detach it first"),
                 fn);
  if (buffer == MPI_BUFFER_AUTOMATIC) {
    B.automatic = true;
    B.base = nullptr;
    B.size = 0;
    B.attached = true;
    return MPI_SUCCESS;
  }
  if (size < 0)
    return raise(nullptr, errorf(MPI_ERR_ARG, "size=%lld < 0", static_cast<long long>(size)), fn);
  if (!buffer && size > 0) return raise(nullptr, errorf(MPI_ERR_BUFFER, "buffer is NULL"), fn);
  B.base = static_cast<char*>(buffer);
  B.size = static_cast<size_t>(size);
  B.automatic = false;
  B.attached = true;
  return MPI_SUCCESS;
}

// Detaches into *size (`maxSize`: the largest value the caller's size
// argument holds; a larger buffer stays attached, MPI_ERR_VALUE_TOO_LARGE).
int detach(void* buffer_addr, int64_t* size, int64_t maxSize, const char* fn) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!buffer_addr || !size)
    return raise(nullptr, errorf(MPI_ERR_ARG, "buffer_addr or size is NULL"), fn);
  if (B.attached && B.size > static_cast<size_t>(maxSize))
    return raise(nullptr,
                 errorf(MPI_ERR_VALUE_TOO_LARGE,
                        "the attached buffer's size (%zu bytes) does not fit an int: detach it "
                        "with MPI_Buffer_detach_c",
                        B.size),
                 fn);
  // The standard: detach blocks until every message in the buffer is sent.
  loom::api::flushBufferedSends();
  void* base = B.automatic ? MPI_BUFFER_AUTOMATIC : B.base;
  *static_cast<void**>(buffer_addr) = B.attached ? base : nullptr;
  *size = B.attached ? static_cast<int64_t>(B.size) : 0;
  B = {};
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
  loom::api::flushBufferedSends();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Buffer_flush)
