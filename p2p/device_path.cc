// Native point-to-point paths for device buffers (device_path.h): the IPC
// rendezvous with its cache of mapped peer allocations, and the chunked
// staging of either end of a pipelined rendezvous.
#include "p2p/device_path.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <list>
#include <vector>

#include "core/datatype.h"
#include "core/device_stage.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "p2p/counters.h"
#include "p2p/dtview.h"

namespace loom::p2p::dev {

size_t gPending = 0;

namespace {
// While copies run, a progress poller of its own completes them, so the
// engine's poll (every host message's path) has no device check.
void (*gDone)(Request*) = nullptr;
int pollHook(void*) { return gDone ? poll(gDone) : 0; }
// The poller is installed exactly while gPending != 0.
void setPending(size_t n) {
  const bool was = gPending != 0;
  gPending = n;
  if (was == (n != 0)) return;
  if (n)
    progress::add(pollHook, nullptr);
  else
    progress::remove(pollHook, nullptr);
}
}  // namespace

void setCompletion(void (*done)(Request*)) { gDone = done; }

namespace {

// ---- streams ---------------------------------------------------------------
//
// Three, made on first use: IPC copies, device-to-host chunks (sends) and
// host-to-device chunks (receives), so the two directions of the link and
// the peer copies can run at once. Copies of different messages in one
// direction share a stream (they share the link anyway). A stream that
// cannot be made leaves the backend's default stream, which is correct,
// only serialised with everything else.
enum StreamUse { kIpcStream, kDownStream, kUpStream, kStreams };
device::Stream gStreams[kStreams];
bool gMade[kStreams];

device::Stream stream(StreamUse u) {
  if (!gMade[u]) {
    gMade[u] = true;
    if (Status st = device::streamCreate(&gStreams[u]); !st.isOk()) {
      log::debug("p2p", "device stream: %s; using the default stream", st.message().c_str());
      gStreams[u] = device::Stream{};
    }
  }
  return gStreams[u];
}

// ---- the cache of mapped peer allocations ------------------------------------
//
// Opening an IPC handle maps the peer's whole allocation (a driver call of
// tens of microseconds, and with CUDA a peer mapping set up on first use),
// so a receiver keeps what it opened, keyed by (peer, the allocation's range
// in the peer's address space). The rules:
//   * hit: the same peer sends from the same range with the same handle
//     bytes. CUDA gives a new allocation a new handle even at the same
//     address (the mock numbers its allocations likewise), so equal bytes
//     mean the same, still live, allocation.
//   * replaced: the peer's range overlaps a mapping but the handle differs:
//     the old allocation was freed (a buffer cannot be freed while a send
//     from it is pending, and its send completes only after our kFin, so no
//     copy from it runs); the old mapping is closed and the new one opened.
//     Without this, a freed-and-reallocated buffer would be read through
//     the stale mapping.
//   * at most LOOM_DEVICE_IPC_CACHE mappings: the least recently used one
//     with no copy running is closed to make room.
//   * all are closed at MPI_Finalize.
// What it cannot see: a peer that freed an allocation and never sends from
// that range again. Its mapping stays until evicted or the job ends, and
// with CUDA keeps the peer's memory allocated until then (the price of not
// hooking cudaFree, which Loom does not do).
struct Mapping {
  int peer;
  uint64_t base;  // the allocation's start in the peer's address space
  uint64_t size;
  unsigned char handle[sizeof device::IpcHandle::bytes];
  int32_t pid;
  char* local;   // the allocation's start as mapped here
  void* opened;  // what ipcOpen returned (ipcClose takes it)
  uint64_t used;
  int inFlight;   // copies from it still running
  bool replaced;  // close once inFlight drops to 0
};
std::list<Mapping> gMaps;  // stable addresses: running copies point at theirs
uint64_t gClock = 0;
size_t gCap = 0;

void closeMapping(std::list<Mapping>::iterator it) {
  if (Status st = device::ipcClose(it->opened); !st.isOk())
    log::debug("p2p", "closing a peer device mapping: %s", st.message().c_str());
  gMaps.erase(it);
}

Mapping* acquire(int peer, const IpcRts& b, Status* st) {
  const device::IpcHandle& h = b.handle;
  const uint64_t base = b.addr - h.offset;
  for (auto it = gMaps.begin(); it != gMaps.end();) {
    auto cur = it++;
    if (cur->peer != peer || cur->replaced || cur->base >= base + h.size ||
        base >= cur->base + cur->size)
      continue;
    if (cur->base == base && cur->size == h.size && cur->pid == h.pid &&
        std::memcmp(cur->handle, h.bytes, sizeof h.bytes) == 0) {
      cur->used = ++gClock;
      return &*cur;
    }
    if (cur->inFlight > 0)
      cur->replaced = true;  // cannot happen for a correct program; close when idle
    else
      closeMapping(cur);
  }
  if (!gCap) {
    gCap = static_cast<size_t>(std::max<int64_t>(1, params::getInt("LOOM_DEVICE_IPC_CACHE")));
  }
  while (gMaps.size() >= gCap) {
    auto lru = gMaps.end();
    for (auto it = gMaps.begin(); it != gMaps.end(); ++it)
      if (it->inFlight == 0 && (lru == gMaps.end() || it->used < lru->used)) lru = it;
    if (lru == gMaps.end()) break;  // every mapping busy: go over the cap for now
    closeMapping(lru);
  }
  void* opened = nullptr;
  *st = device::ipcOpen(h, &opened);
  if (!st->isOk()) return nullptr;
  ++gCounters.deviceIpcMapped;
  Mapping m{};
  m.peer = peer;
  m.base = base;
  m.size = h.size;
  std::memcpy(m.handle, h.bytes, sizeof h.bytes);
  m.pid = h.pid;
  m.opened = opened;
  m.local = static_cast<char*>(opened) - h.offset;
  m.used = ++gClock;
  gMaps.push_back(m);
  return &gMaps.back();
}

// ---- IPC copies in flight ------------------------------------------------------

struct Copy {
  Request* r;
  device::Fence fence;  // empty: nothing to wait for (no bytes, or failed)
  Mapping* map;         // nullptr without a copy
};
std::vector<Copy> gCopies;

// A device copy of this request failed (a truncated receive has not: it
// still lands the bytes that fit).
bool failed(const Request* r) {
  return r->statusError != MPI_SUCCESS && r->statusError != MPI_ERR_TRUNCATE;
}

// The first copy failure is the request's error (it outranks truncation).
void failRequest(Request* r, Status st) {
  if (failed(r)) return;
  r->statusError = st.code();
  r->error = std::move(st);
}

device::ChunkPipe* pipeOf(Request* r) {
  return r->staged ? r->staged->pipe.get() : nullptr;
}

// A Stage holding only a pipeline: Request::finish waits for it and frees it.
Status newPipe(Request* r, size_t bytes, const ProtocolLimits& lim, bool download) {
  auto* s = new device::Stage();
  s->setWhat(download ? "a send from device memory" : "a receive into device memory");
  s->pipe = std::make_unique<device::ChunkPipe>();
  r->staged = s;
  char* dev = static_cast<char*>(contiguousBase(r->type, r->buf));
  return s->pipe->init(dev, bytes, deviceChunk(bytes, lim), download,
                       stream(download ? kDownStream : kUpStream));
}

// A copy that is complete when this returns. cudaMemcpy from pageable host
// memory (a ring record) may return before its DMA reached the device, so a
// kernel the program starts on a non-blocking stream right after the
// receive could read old bytes; an event waited for closes that gap (one
// event per eager message into device memory, a few microseconds).
Status copyNow(void* dst, const void* src, size_t n) {
  const device::Stream s = stream(kUpStream);
  device::Fence f;
  LOOM_TRY(device::copyAsync(dst, src, n, s));
  LOOM_TRY(device::fenceRecord(s, &f));
  Status st = device::fenceWait(f);
  device::fenceDestroy(f);
  return st;
}

// What a failed sender streams instead of its data.
std::vector<char> gZeros;

// The host copy of r's bytes from r->transferred on, at most *n of them
// (lowered to what one slot holds); nullptr while the device copy runs.
// After a failed copy it returns zeros (the caller marks them kFlagFailed).
const char* sendPeek(Request* r, const ProtocolLimits& lim, size_t* n) {
  device::ChunkPipe* pipe = pipeOf(r);
  if (!pipe && !failed(r)) {
    ++gCounters.deviceChunkedSent;
    Status st = newPipe(r, r->total, lim, true);
    pipe = pipeOf(r);
    if (!st.isOk()) failRequest(r, std::move(st));
  }
  if (!failed(r)) {
    Status st;
    size_t avail = 0;
    if (const char* p = pipe->peek(r->transferred, &avail, &st)) {
      *n = std::min(*n, avail);
      return p;
    }
    if (st.isOk()) return nullptr;  // the copy runs
    failRequest(r, errorf(MPI_ERR_OTHER,
                          "a send from device memory: copying to the host "
                          "failed: %s",
                          st.message().c_str()));
  }
  if (gZeros.size() < *n) gZeros.assign(*n, 0);
  return gZeros.data();
}

// Everything before r->transferred was handed to the transport: free slots
// take the next chunks.
void sendConsumed(Request* r) {
  if (failed(r)) return;
  if (device::ChunkPipe* pipe = pipeOf(r)) {
    if (Status st = pipe->consumed(r->transferred); !st.isOk())
      failRequest(r, errorf(MPI_ERR_OTHER,
                            "a send from device memory: copying to the host "
                            "failed: %s",
                            st.message().c_str()));
  }
}

}  // namespace

Status prepareSend(Request* r, const ProtocolLimits& lim) {
  // An empty message touches no byte: its pointer need not be memory at all
  // (a collective's empty block lies just past the end of its buffer), and
  // must not be asked about: see device.h, the kind cache's limits.
  const device::MemKind mem = r->total ? device::kindOf(r->buf) : device::MemKind::kHost;
  const Protocol p = selectProtocol(r->total, r->type->isContiguous(), mem, lim);
  r->protocol = static_cast<uint8_t>(p.kind);
  if (p.staging == Staging::kWhole) {
    ++gCounters.deviceStagedWhole;
    return device::stageRequest(r, true);
  }
  if (p.staging == Staging::kChunked || p.kind == Kind::kRtsIpc) r->hint |= kHintDevice;
  return Status::ok();
}

Status prepareRecv(Request* r) {
  // Nothing lands in an empty receive (a longer message is truncated to
  // nothing): host, without asking about a pointer that may be none.
  if (r->count <= 0 || r->type->size() == 0 || !device::isDevice(r->buf)) return Status::ok();
  if (r->type->isContiguous() && !r->fold) {
    r->hint |= kHintDevice;
    return Status::ok();
  }
  // Non-contiguous (holes to keep) or folding (reduces on the host): a twin.
  ++gCounters.deviceStagedWhole;
  return device::stageRequest(r, r->fold != nullptr);
}

Kind fillIpcRts(const Request* r, void* body, size_t* bytes) {
  IpcRts b{};
  b.addr = reinterpret_cast<uintptr_t>(contiguousBase(r->type, r->buf));
  if (Status st = device::ipcGet(reinterpret_cast<void*>(b.addr), &b.handle); !st.isOk()) {
    log::debug("p2p", "no IPC handle for a send to rank %d (%s): pipeline instead", r->remoteRank,
               st.message().c_str());
    *static_cast<RtsBody*>(body) = RtsBody{};
    *bytes = sizeof(RtsBody);
    return Kind::kRtsPipeline;
  }
  std::memcpy(body, &b, sizeof b);
  *bytes = sizeof b;
  return Kind::kRtsIpc;
}

bool streamSend(Request* r, const Transport& t, size_t maxChunk) {
  const int job = r->remoteRank;
  while (r->transferred < r->total) {
    size_t n = std::min(maxChunk, r->total - r->transferred);
    const char* from = sendPeek(r, *t.limits, &n);
    if (!from) return false;  // the device copy runs
    void* p = t.reserve(job, n);
    if (!p) return false;  // the ring is full; the slot stays as it is
    copyBytes(p, from, n);
    MsgHeader h{};
    h.kind = Kind::kData;
    h.flags = failed(r) ? kFlagFailed : 0;  // zeros: a device copy failed
    h.sreq = r->remoteId;
    h.size = r->transferred;
    t.commit(job, h, n);
    r->transferred += n;
    sendConsumed(r);
  }
  return true;
}

void prepareLanding(Request* r, size_t m, const ProtocolLimits& lim) {
  ++gCounters.deviceChunkedReceived;
  if (Status st = newPipe(r, m, lim, false); !st.isOk()) failRequest(r, std::move(st));
}

void land(Request* r, const void* in, size_t bytes, size_t offset) {
  if (bytes == 0 || failed(r)) return;  // a failed receive drops the rest
  Status st;
  if (device::ChunkPipe* pipe = pipeOf(r))
    st = pipe->put(offset, in, bytes);
  else  // eager: one record, one copy, no twin
    st = copyNow(static_cast<char*>(contiguousBase(r->type, r->buf)) + offset, in, bytes);
  if (!st.isOk())
    failRequest(r, errorf(MPI_ERR_OTHER,
                          "a receive into device memory: copying to the device "
                          "failed: %s",
                          st.message().c_str()));
}

void senderFailed(Request* r) {
  failRequest(r, errorf(MPI_ERR_OTHER,
                        "rank %d could not copy the message out of its device "
                        "memory",
                        r->remoteRank));
}

bool ipcTake(Request* r, int srcJob, const void* body, size_t m) {
  IpcRts b;
  std::memcpy(&b, body, sizeof b);
  Copy c{r, device::Fence{}, nullptr};
  if (m > 0) {
    Status st;
    Mapping* map = acquire(srcJob, b, &st);
    if (!map) {
      ++gCounters.deviceIpcDeclined;
      log::debug("p2p", "cannot map rank %d's device buffer (%s): pipeline instead", srcJob,
                 st.message().c_str());
      return false;
    }
    const device::Stream s = stream(kIpcStream);
    char* dst = static_cast<char*>(contiguousBase(r->type, r->buf));
    st = device::copyAsync(dst, map->local + b.handle.offset, m, s);
    if (st.isOk()) st = device::fenceRecord(s, &c.fence);
    if (!st.isOk())
      failRequest(r, errorf(MPI_ERR_OTHER,
                            "a receive by CUDA IPC from rank %d: the copy "
                            "failed: %s",
                            srcJob, st.message().c_str()));
    c.map = map;
    ++map->inFlight;
  }
  ++gCounters.deviceIpcReceived;
  r->bytes = static_cast<int64_t>(m);
  gCopies.push_back(c);
  setPending(gCopies.size());
  return true;
}

int poll(void (*done)(Request*)) {
  // Finished copies are taken out first: done() may start operations that
  // add copies.
  std::vector<Request*> finished;
  for (size_t i = 0; i < gCopies.size();) {
    Copy& c = gCopies[i];
    if (c.fence.h && !device::fenceDone(c.fence)) {
      ++i;
      continue;
    }
    if (c.fence.h) {
      if (Status st = device::fenceWait(c.fence); !st.isOk())
        failRequest(c.r, errorf(MPI_ERR_OTHER, "a receive by CUDA IPC: the copy failed: %s",
                                st.message().c_str()));
      device::fenceDestroy(c.fence);
    }
    if (c.map && --c.map->inFlight == 0 && c.map->replaced) {
      for (auto it = gMaps.begin(); it != gMaps.end(); ++it)
        if (&*it == c.map) {
          closeMapping(it);
          break;
        }
    }
    finished.push_back(c.r);
    c = gCopies.back();
    gCopies.pop_back();
  }
  setPending(gCopies.size());
  for (Request* r : finished) done(r);
  return static_cast<int>(finished.size());
}

void finalize() {
  for (Copy& c : gCopies)
    if (c.fence.h) {
      (void)device::fenceWait(c.fence);
      device::fenceDestroy(c.fence);
    }
  gCopies.clear();
  setPending(0);
  while (!gMaps.empty()) closeMapping(gMaps.begin());
  for (int u = 0; u < kStreams; ++u) {
    if (gMade[u]) device::streamDestroy(gStreams[u]);
    gMade[u] = false;
    gStreams[u] = device::Stream{};
  }
}

}  // namespace loom::p2p::dev
