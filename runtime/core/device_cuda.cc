// The CUDA backend: the CUDA runtime, linked statically (cudart_static), so
// a binary starts and runs its host paths where no CUDA is installed. The
// driver API is reached only through cudaGetDriverEntryPointByVersion
// (cuPointerGetAttributes, cuMemGetAddressRange): never -lcuda, whose
// absence would stop the binary from starting. <cuda.h> is included for
// its types only.
//
// Pointer queries use cuPointerGetAttributes: one driver call gives the
// memory type, whether the memory is managed and the allocation's range,
// and a host pointer is not an error (cudaPointerGetAttributes, the
// fallback, leaves a sticky error to clear and gives no range).
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "core/device_backend.h"

namespace loom::device {
namespace {

using PointerGetAttributesFn = CUresult (*)(unsigned int, CUpointer_attribute*, void**,
                                            CUdeviceptr);
using MemGetAddressRangeFn = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
using PointerSetAttributeFn = CUresult (*)(const void*, CUpointer_attribute, CUdeviceptr);

Status cudaFail(const char* what, cudaError_t e) {
  cudaGetLastError();  // clear a sticky error so later calls see their own
  return errorf(MPI_ERR_OTHER, "%s failed: %s (%s)", what, cudaGetErrorString(e),
                cudaGetErrorName(e));
}

template <class Fn>
Fn driverEntry(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Fn>(fn);
}

class Cuda final : public BackendImpl {
 public:
  Cuda() {
    getAttrs_ = driverEntry<PointerGetAttributesFn>("cuPointerGetAttributes");
    getRange_ = driverEntry<MemGetAddressRangeFn>("cuMemGetAddressRange");
    setAttr_ = driverEntry<PointerSetAttributeFn>("cuPointerSetAttribute");
  }

  Backend kind() const override { return Backend::kCuda; }

  int count() override {
    std::string why;
    return cudaDeviceCount(&why);
  }

  std::string describe(int dev) override {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
      cudaGetLastError();
      return std::to_string(dev) + ": (properties unavailable)";
    }
    char buf[384];
    std::snprintf(buf, sizeof buf, "%d: %s, sm_%d%d, %.1f GiB, %d SMs, bus %04x:%02x:%02x.0", dev,
                  p.name, p.major, p.minor,
                  static_cast<double>(p.totalGlobalMem) / (1024.0 * 1024 * 1024),
                  p.multiProcessorCount, p.pciDomainID, p.pciBusID, p.pciDeviceID);
    return buf;
  }

  MemKind query(const void* ptr, Range* range) override {
    if (getAttrs_) {
      unsigned int memType = 0, managed = 0;
      CUdeviceptr start = 0;
      size_t size = 0;
      unsigned long long id = 0;
      CUpointer_attribute attrs[] = {
          CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
          CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
          CU_POINTER_ATTRIBUTE_BUFFER_ID};
      void* data[] = {&memType, &managed, &start, &size, &id};
      if (getAttrs_(5, attrs, data, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS)
        return MemKind::kHost;
      if (memType != CU_MEMORYTYPE_DEVICE || managed) return MemKind::kHost;
      syncMemops(ptr);
      if (start && size)
        *range = Range{static_cast<uintptr_t>(start), static_cast<uintptr_t>(start + size), id};
      return MemKind::kDevice;
    }
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
      cudaGetLastError();
      return MemKind::kHost;
    }
    if (a.type != cudaMemoryTypeDevice) return MemKind::kHost;
    syncMemops(ptr);
    return MemKind::kDevice;
  }

  // CU_POINTER_ATTRIBUTE_BUFFER_ID: unique for the process's lifetime, so a
  // buffer freed and allocated again at the same address is seen as new.
  uint64_t allocationId(const void* ptr) override {
    if (!getAttrs_) return 0;
    unsigned long long id = 0;
    CUpointer_attribute attr = CU_POINTER_ATTRIBUTE_BUFFER_ID;
    void* data[] = {&id};
    if (getAttrs_(1, &attr, data, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) return 0;
    return id;
  }

  // A device allocation seen for the first time is marked SYNC_MEMOPS. Loom
  // reads and writes it on streams of its own that do not wait for the
  // legacy default stream, and without the mark a program's "synchronous"
  // cudaMemcpy from pageable host memory returns before its DMA has landed:
  // the MPI call that follows would send the old bytes. With the mark, such
  // copies complete before they return, and setting it waits for any still
  // pending on the allocation. Memory that refuses the attribute (VMM
  // mappings, IPC imports) is left as it is.
  void syncMemops(const void* ptr) {
    if (!setAttr_) return;
    unsigned int one = 1;
    if (setAttr_(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, reinterpret_cast<CUdeviceptr>(ptr)) !=
        CUDA_SUCCESS)
      cudaGetLastError();
  }

  // Synchronous copies run on a non-blocking stream of Loom's own and wait
  // for it. cudaMemcpy would use the legacy default stream, which also waits
  // for all earlier work of every blocking stream of the program: for a
  // stream stopped at a stream-ordered operation's gate too (device_stream.h),
  // which only Loom's progress opens, so an MPI call staging a device buffer
  // meanwhile would wait for itself.
  Status copy(void* dst, const void* src, size_t n) override {
    cudaStream_t s = copyStream();
    cudaError_t e = cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    return e == cudaSuccess ? Status::ok() : cudaFail("cudaMemcpyAsync", e);
  }

  Status copy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                size_t rows) override {
    cudaStream_t s = copyStream();
    cudaError_t e =
        cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, rows, cudaMemcpyDefault, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    return e == cudaSuccess ? Status::ok() : cudaFail("cudaMemcpy2DAsync", e);
  }

  Status streamCreate(Stream* s) override {
    cudaStream_t st = nullptr;
    cudaError_t e = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    if (e != cudaSuccess) return cudaFail("cudaStreamCreateWithFlags", e);
    s->h = st;
    return Status::ok();
  }
  void streamDestroy(Stream s) override { cudaStreamDestroy(static_cast<cudaStream_t>(s.h)); }

  Status copyAsync(void* dst, const void* src, size_t n, Stream s) override {
    cudaError_t e = cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, static_cast<cudaStream_t>(s.h));
    return e == cudaSuccess ? Status::ok() : cudaFail("cudaMemcpyAsync", e);
  }

  // Events come from a small pool: creating one per fence cost ~1-2 us
  // of every device reduction and staged copy. A pooled event belongs to
  // the device current when it was made, and is handed out only while
  // that device is current again.
  Status fenceRecord(Stream s, Fence* f) override {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) {
      cudaGetLastError();
      dev = -1;
    }
    cudaEvent_t ev = takeEvent(dev);
    if (!ev) {
      cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
      if (e != cudaSuccess) return cudaFail("cudaEventCreateWithFlags", e);
    }
    cudaError_t e = cudaEventRecord(ev, static_cast<cudaStream_t>(s.h));
    if (e != cudaSuccess) {
      cudaEventDestroy(ev);
      return cudaFail("cudaEventRecord", e);
    }
    f->h = ev;
    f->dev = dev;
    return Status::ok();
  }
  // An error other than "not ready" counts as done: fenceWait reports it.
  bool fenceDone(Fence f) override {
    cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(f.h));
    if (e == cudaErrorNotReady) return false;
    return true;
  }
  Status fenceWait(Fence f) override {
    cudaError_t e = cudaEventSynchronize(static_cast<cudaEvent_t>(f.h));
    return e == cudaSuccess ? Status::ok() : cudaFail("cudaEventSynchronize", e);
  }
  // Back to the pool: recording a pooled event again replaces what it
  // captured, so one destroyed before its work ended is safe to reuse.
  void fenceDestroy(Fence f) override {
    auto ev = static_cast<cudaEvent_t>(f.h);
    if (!ev) return;
    {
      std::lock_guard<std::mutex> lock(evMu_);
      if (f.dev >= 0 && events_.size() < kEventPool) {
        events_.push_back({f.dev, ev});
        return;
      }
    }
    cudaEventDestroy(ev);
  }

  void* deviceAlloc(size_t n) override {
    void* p = nullptr;
    if (cudaMalloc(&p, n ? n : 1) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  void deviceFree(void* p) override { cudaFree(p); }

  // Page-locked: cudaMemcpy from and to it runs at the link's rate without
  // the driver's own staging copy. Costly to allocate (a system call and
  // page pinning), hence the staging pool (device_stage.cc) keeps them.
  void* hostAlloc(size_t n) override {
    void* p = nullptr;
    if (cudaMallocHost(&p, n ? n : 1) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  void hostFree(void* p) override { cudaFreeHost(p); }

  void* hostAlias(const void*) override { return nullptr; }

  // The stream of copy() and copy2D(), made on first use (on the device
  // current then); the legacy default stream (0) if that fails.
  cudaStream_t copyStream() {
    std::call_once(copyStreamOnce_, [this] {
      if (cudaStreamCreateWithFlags(&copyStream_, cudaStreamNonBlocking) != cudaSuccess) {
        cudaGetLastError();
        copyStream_ = nullptr;
      }
    });
    return copyStream_;
  }

  Status ipcGet(const void* p, IpcHandle* out) override {
    std::memset(out, 0, sizeof *out);
    CUdeviceptr base = reinterpret_cast<CUdeviceptr>(p);
    size_t size = 0;
    if (getRange_ && getRange_(&base, &size, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS)
      return errorf(MPI_ERR_OTHER, "%p is not device memory (cuMemGetAddressRange)", p);
    cudaIpcMemHandle_t h;
    cudaError_t e = cudaIpcGetMemHandle(&h, reinterpret_cast<void*>(base));
    if (e != cudaSuccess) return cudaFail("cudaIpcGetMemHandle", e);
    static_assert(sizeof h <= sizeof out->bytes);
    std::memcpy(out->bytes, &h, sizeof h);
    out->offset = reinterpret_cast<uintptr_t>(p) - base;
    out->size = size;
    return Status::ok();
  }

  Status ipcOpen(const IpcHandle& h, void** out, Range* range) override {
    cudaIpcMemHandle_t ch;
    std::memcpy(&ch, h.bytes, sizeof ch);
    void* base = nullptr;
    cudaError_t e = cudaIpcOpenMemHandle(&base, ch, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) return cudaFail("cudaIpcOpenMemHandle", e);
    *out = static_cast<char*>(base) + h.offset;
    *range = Range{reinterpret_cast<uintptr_t>(base), reinterpret_cast<uintptr_t>(base) + h.size};
    std::lock_guard<std::mutex> lock(mu_);
    opened_[reinterpret_cast<uintptr_t>(*out)] = base;
    return Status::ok();
  }

  Status ipcClose(void* p) override {
    void* base = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = opened_.find(reinterpret_cast<uintptr_t>(p));
      if (it == opened_.end()) return errorf(MPI_ERR_OTHER, "%p was not opened by ipcOpen", p);
      base = it->second;
      opened_.erase(it);
    }
    forgetDeviceRange(reinterpret_cast<uintptr_t>(base));
    cudaError_t e = cudaIpcCloseMemHandle(base);
    return e == cudaSuccess ? Status::ok() : cudaFail("cudaIpcCloseMemHandle", e);
  }

 private:
  std::once_flag copyStreamOnce_;
  cudaStream_t copyStream_ = nullptr;
  PointerGetAttributesFn getAttrs_ = nullptr;
  MemGetAddressRangeFn getRange_ = nullptr;
  PointerSetAttributeFn setAttr_ = nullptr;
  std::mutex mu_;
  std::map<uintptr_t, void*> opened_;  // pointer ipcOpen returned -> mapped base

  static constexpr size_t kEventPool = 64;
  struct PooledEvent {
    int dev;
    cudaEvent_t ev;
  };
  cudaEvent_t takeEvent(int dev) {
    if (dev < 0) return nullptr;
    std::lock_guard<std::mutex> lock(evMu_);
    for (size_t i = events_.size(); i-- > 0;) {
      if (events_[i].dev != dev) continue;
      cudaEvent_t ev = events_[i].ev;
      events_[i] = events_.back();
      events_.pop_back();
      return ev;
    }
    return nullptr;
  }
  std::mutex evMu_;
  std::vector<PooledEvent> events_;
};

}  // namespace

int cudaDeviceCount(std::string* why) {
  // Once per process: with a driver this initialises it (tens of ms).
  static const std::pair<int, std::string> probe = [] {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      std::string w = cudaGetErrorString(e);
      cudaGetLastError();
      return std::pair<int, std::string>(0, w);
    }
    return std::pair<int, std::string>(n, n ? "" : "no device");
  }();
  *why = probe.second;
  return probe.first;
}

BackendImpl* cudaBackend() {
  static Cuda* c = new Cuda();  // never destroyed: the runtime may be gone at exit
  return c;
}

}  // namespace loom::device
