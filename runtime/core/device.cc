// The device layer's dispatch (device.h): picks a backend once, keeps the
// memory-kind cache in front of its queries and forwards everything else.
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/device_backend.h"
#include "core/log.h"
#include "core/params.h"

namespace loom::device {

namespace detail {
bool gActive = false;
}  // namespace detail

namespace {

BackendImpl* gImpl = nullptr;
Backend gKind = Backend::kNone;
bool gCacheOn = true;
std::once_flag gInitOnce;

// ---- the memory-kind cache (see device.h for its rules and limits) --------

constexpr uintptr_t kPageShift = 12;

// Host pages: slot = hash(page); a slot holds the page number (0: empty;
// page 0 holds no buffer). Relaxed atomics: a query from the asynchronous
// progress thread never reads a torn entry (a stale one only means a miss).
std::atomic<uintptr_t> gHostPage[kHostPages];

// Device ranges: sorted by base, at most kDeviceRanges, the oldest evicted.
struct DevRange {
  Range r;
  uint64_t age;
};
std::vector<DevRange> gRanges;
uint64_t gAge = 0;
std::mutex gRangeMu;  // ranges change rarely; the host-page path never takes it
std::atomic<uint64_t> gQueries{0};

inline size_t slotOf(uintptr_t page) {
  return static_cast<size_t>((page ^ (page >> 10) ^ (page >> 20)) & (kHostPages - 1));
}

bool findRange(uintptr_t a, uint64_t* id) {
  std::lock_guard<std::mutex> lock(gRangeMu);
  auto it = std::upper_bound(gRanges.begin(), gRanges.end(), a,
                             [](uintptr_t x, const DevRange& d) { return x < d.r.base; });
  if (it == gRanges.begin()) return false;
  --it;
  if (a >= it->r.end) return false;
  it->age = ++gAge;
  *id = it->r.id;
  return true;
}

void forgetRangeAt(uintptr_t a) {
  std::lock_guard<std::mutex> lock(gRangeMu);
  std::erase_if(gRanges, [&](const DevRange& d) { return d.r.base <= a && a < d.r.end; });
}

// Whether a remembered device range covers any byte of `page`.
bool pageHoldsDevice(uintptr_t page) {
  const uintptr_t lo = page << kPageShift, hi = lo + (uintptr_t{1} << kPageShift);
  std::lock_guard<std::mutex> lock(gRangeMu);
  auto it = std::lower_bound(gRanges.begin(), gRanges.end(), hi,
                             [](const DevRange& d, uintptr_t x) { return d.r.base < x; });
  // Sorted and disjoint: only the last range starting below hi can reach lo.
  return it != gRanges.begin() && std::prev(it)->r.end > lo;
}

void forgetHostPages(Range r) {
  const uintptr_t lo = r.base >> kPageShift, hi = (r.end + (1u << kPageShift) - 1) >> kPageShift;
  for (auto& slot : gHostPage) {
    const uintptr_t page = slot.load(std::memory_order_relaxed);
    if (page >= lo && page < hi) slot.store(0, std::memory_order_relaxed);
  }
}

void addRange(Range r) {
  if (r.end <= r.base) return;
  forgetHostPages(r);
  std::lock_guard<std::mutex> lock(gRangeMu);
  // Drop whatever the new range overlaps (an older allocation there is gone).
  std::erase_if(gRanges, [&](const DevRange& d) { return d.r.base < r.end && r.base < d.r.end; });
  if (gRanges.size() >= kDeviceRanges) {
    auto oldest =
        std::min_element(gRanges.begin(), gRanges.end(),
                         [](const DevRange& a, const DevRange& b) { return a.age < b.age; });
    gRanges.erase(oldest);
  }
  auto at = std::upper_bound(gRanges.begin(), gRanges.end(), r.base,
                             [](uintptr_t x, const DevRange& d) { return x < d.r.base; });
  gRanges.insert(at, DevRange{r, ++gAge});
}

void activate(BackendImpl* impl) {
  gImpl = impl;
  gKind = impl ? impl->kind() : Backend::kNone;
  detail::gActive = impl != nullptr;
  clearKindCache();
}

}  // namespace

void noteDeviceRange(Range r) {
  if (gCacheOn)
    addRange(r);
  else
    forgetHostPages(r);
}

void forgetDeviceRange(uintptr_t base) {
  std::lock_guard<std::mutex> lock(gRangeMu);
  std::erase_if(gRanges, [&](const DevRange& d) { return d.r.base == base; });
}

MemKind detail::kindOfSlow(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  if (a < (uintptr_t{1} << kPageShift)) return MemKind::kHost;  // nullptr, small constants
  const uintptr_t page = a >> kPageShift;
  std::atomic<uintptr_t>& slot = gHostPage[slotOf(page)];
  if (gCacheOn) {
    if (slot.load(std::memory_order_relaxed) == page) return MemKind::kHost;
    // A remembered range may be a freed allocation's, and the address now
    // another's: the allocation's identity tells (one cheap driver call,
    // on device buffers only). A new allocation is queried whole, as the
    // backend prepares what it sees for the first time (CUDA: SYNC_MEMOPS).
    uint64_t id = 0;
    if (findRange(a, &id) && (id == 0 || gImpl->allocationId(p) == id)) return MemKind::kDevice;
  }
  gQueries.fetch_add(1, std::memory_order_relaxed);
  Range r;
  const MemKind k = gImpl ? gImpl->query(p, &r) : MemKind::kHost;
  if (!gCacheOn) return k;
  if (k == MemKind::kHost) {
    forgetRangeAt(a);  // a freed allocation's range, if it was remembered
    // "Host" for one address is not "host" for its page: cudaMalloc packs
    // small allocations (256-byte granules), so an address just past one
    // allocation, or in a gap between two, is no allocation (the driver
    // says host) while its page holds device memory. Such a page is not
    // remembered as host where a device range Loom knows of meets it (the
    // host-page answer is checked first and would hide that range).
    if (!pageHoldsDevice(page)) slot.store(page, std::memory_order_relaxed);
  } else {
    addRange(r);
  }
  return k;
}

void init() {
  std::call_once(gInitOnce, [] {
    gCacheOn = params::getBool("LOOM_DEVICE_MEMKIND_CACHE");
    if (params::getBool("LOOM_DEVICE_MOCK")) {
      activate(mockBackend());
    } else if (params::getBool("LOOM_DEVICE_CUDA")) {
      std::string why;
      activate(cudaDeviceCount(&why) > 0 ? cudaBackend() : nullptr);
    }
    log::debug("init", "device backend: %s", backendName());
  });
}

Backend backend() {
  return gKind;
}

const char* backendName() {
  switch (gKind) {
    case Backend::kCuda:
      return "cuda";
    case Backend::kMock:
      return "mock";
    default:
      return "none";
  }
}

#if LOOM_HAVE_CUDA
bool cudaBuilt() {
  return true;
}
#else
bool cudaBuilt() {
  return false;
}
#endif

int cudaDevices() {
  std::string why;
  return cudaDeviceCount(&why);
}

int count() {
  return gImpl ? gImpl->count() : 0;
}

std::string describe(int dev) {
  return gImpl ? gImpl->describe(dev) : std::string();
}

std::string summary() {
  std::string why;
  const int n = cudaDeviceCount(&why);
  std::string s;
  if (!cudaBuilt()) {
    s = "not built";
  } else {
#ifdef LOOM_CUDA_ARCHS
    s = "built for " LOOM_CUDA_ARCHS ", ";
#else
    s = "built, ";
#endif
    s += std::to_string(n) + " device" + (n == 1 ? "" : "s");
    if (!why.empty()) s += " (" + why + ")";
  }
  s += std::string("; backend in use: ") + backendName();
  return s;
}

Status copy(void* dst, const void* src, size_t n) {
  if (n == 0 || dst == src) return Status::ok();
  if (!gImpl) {
    std::memmove(dst, src, n);
    return Status::ok();
  }
  return gImpl->copy(dst, src, n);
}

Status copy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t rows) {
  if (width == 0 || rows == 0) return Status::ok();
  if (!gImpl) {
    for (size_t k = 0; k < rows; ++k)
      std::memmove(static_cast<char*>(dst) + k * dpitch, static_cast<const char*>(src) + k * spitch,
                   width);
    return Status::ok();
  }
  return gImpl->copy2D(dst, dpitch, src, spitch, width, rows);
}

Status streamCreate(Stream* s) {
  *s = Stream{};
  return gImpl ? gImpl->streamCreate(s) : Status::ok();
}
void streamDestroy(Stream s) {
  if (gImpl && s.h) gImpl->streamDestroy(s);
}
Status copyAsync(void* dst, const void* src, size_t n, Stream s) {
  if (n == 0 || dst == src) return Status::ok();
  if (!gImpl) {
    std::memmove(dst, src, n);
    return Status::ok();
  }
  return gImpl->copyAsync(dst, src, n, s);
}
Status fenceRecord(Stream s, Fence* f) {
  *f = Fence{};
  return gImpl ? gImpl->fenceRecord(s, f) : Status::ok();
}
bool fenceDone(Fence f) {
  return !gImpl || !f.h || gImpl->fenceDone(f);
}
Status fenceWait(Fence f) {
  return gImpl && f.h ? gImpl->fenceWait(f) : Status::ok();
}
void fenceDestroy(Fence f) {
  if (gImpl && f.h) gImpl->fenceDestroy(f);
}

void* deviceAlloc(size_t n) {
  if (!gImpl) return nullptr;
  void* p = gImpl->deviceAlloc(n);
  if (p) noteDeviceRange(Range{reinterpret_cast<uintptr_t>(p), reinterpret_cast<uintptr_t>(p) + n});
  return p;
}
namespace {
bool gHoldFrees = false;
std::vector<void*> gHeldDevice, gHeldHost;
}  // namespace

void holdFrees(bool hold) {
  if (hold == gHoldFrees) return;
  gHoldFrees = hold;
  if (hold) return;
  std::vector<void*> dev, host;
  dev.swap(gHeldDevice);
  host.swap(gHeldHost);
  for (void* p : dev) deviceFree(p);
  for (void* p : host) hostFree(p);
}

void deviceFree(void* p) {
  if (!gImpl || !p) return;
  if (gHoldFrees) {
    gHeldDevice.push_back(p);
    return;
  }
  forgetDeviceRange(reinterpret_cast<uintptr_t>(p));
  gImpl->deviceFree(p);
}
void* hostAlloc(size_t n) {
  return gImpl ? gImpl->hostAlloc(n) : std::malloc(n);
}
void hostFree(void* p) {
  if (gImpl && gHoldFrees && p) {
    gHeldHost.push_back(p);
    return;
  }
  if (gImpl)
    gImpl->hostFree(p);
  else
    std::free(p);
}
void* hostAlias(const void* p) {
  return gImpl ? gImpl->hostAlias(p) : nullptr;
}

namespace {
bool mockPacked() {
  static const bool on = params::getBool("LOOM_DEVICE_MOCK_PACKED");
  return on;
}
}  // namespace

void* mockProgramAlloc(size_t n) {
  if (gKind != Backend::kMock) return nullptr;
  return mockPacked() ? gImpl->deviceAlloc(n) : deviceAlloc(n);
}
void mockProgramFree(void* p) {
  if (gKind != Backend::kMock || !p) return;
  if (mockPacked())
    gImpl->deviceFree(p);
  else
    deviceFree(p);
}

bool mockEnqueue(Stream s, void (*fn)(void*), void* arg) {
  return gKind == Backend::kMock && mockEnqueueOn(s, fn, arg);
}

Status ipcGet(const void* p, IpcHandle* out) {
  if (!gImpl) return errorf(MPI_ERR_OTHER, "no device backend: no IPC handle for %p", p);
  return gImpl->ipcGet(p, out);
}
Status ipcOpen(const IpcHandle& h, void** out) {
  if (!gImpl) return errorf(MPI_ERR_OTHER, "no device backend: cannot open an IPC handle");
  Range r;
  LOOM_TRY(gImpl->ipcOpen(h, out, &r));
  noteDeviceRange(r);
  return Status::ok();
}
Status ipcClose(void* p) {
  if (!gImpl) return Status::ok();
  return gImpl->ipcClose(p);
}

void clearKindCache() {
  for (auto& slot : gHostPage) slot.store(0, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(gRangeMu);
  gRanges.clear();
}

uint64_t kindQueries() {
  return gQueries.load(std::memory_order_relaxed);
}

Backend setBackendForTest(Backend b) {
  init();
  const Backend prev = gKind;
  activate(b == Backend::kMock ? mockBackend() : b == Backend::kCuda ? cudaBackend() : nullptr);
  return prev;
}

bool setKindCacheForTest(bool on) {
  init();
  const bool prev = gCacheOn;
  gCacheOn = on;
  clearKindCache();
  return prev;
}

}  // namespace loom::device
