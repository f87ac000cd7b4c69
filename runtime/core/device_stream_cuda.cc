// CUDA's half of device_stream.h: the program's cudaStream_t, and gates.
//
// A gate is a 32-bit counter in pinned host memory mapped into the device's
// address space (cudaHostAllocMapped). The stream waits on it with
// cuStreamWaitValue32 (GEQ): a stream memory operation, executed by the
// GPU's front end, which needs no host thread while it waits and does not
// stop other streams. CUDA 12 supports these on every device it runs; where
// the driver still answers CUDA_ERROR_NOT_SUPPORTED, gates fall back (for
// the rest of the process) to a host function (cudaLaunchHostFunc) that
// waits for the counter: it works everywhere but holds CUDA's callback
// thread while it waits, so host functions of other streams of the process
// wait behind it (docs/gpu.md, "Stream-ordered operations").
//
// The driver is reached through cudaGetDriverEntryPointByVersion, as in
// device_cuda.cc: never -lcuda. Not run on a GPU yet (this file compiles in
// CI; the mock runs the same logic there).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <time.h>

#include <atomic>

#include "core/device_stream_impl.h"
#include "core/log.h"

namespace loom::device::cudastream {
namespace {

using WaitValue32Fn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

WaitValue32Fn waitValue32() {
  static const WaitValue32Fn fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &p, 12000, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return WaitValue32Fn{nullptr};
    return reinterpret_cast<WaitValue32Fn>(p);
  }();
  return fn;
}

// Set once the driver refused a stream memory operation.
std::atomic<bool> gHostFunctionGates{false};

Status fail(const char* what, cudaError_t e) {
  cudaGetLastError();
  return errorf(MPI_ERR_OTHER, "%s failed: %s (%s)", what, cudaGetErrorString(e),
                cudaGetErrorName(e));
}

struct HostWait {
  const uint32_t* counter;
  uint32_t value;
};

// Runs on CUDA's callback thread; makes no CUDA call (host functions must
// not). Naps grow to 50 us: a gate stays shut for as long as an MPI
// operation takes, microseconds to seconds.
void CUDART_CB hostWait(void* arg) {
  auto* w = static_cast<HostWait*>(arg);
  long nap = 1000;
  while (static_cast<int32_t>(__atomic_load_n(w->counter, __ATOMIC_ACQUIRE) - w->value) < 0) {
    timespec ts{0, nap};
    nanosleep(&ts, nullptr);
    if (nap < 50000) nap *= 2;
  }
  delete w;
}

}  // namespace

Status userStream(uint64_t handle, Stream* out) {
  auto s = reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(handle));
  // cudaStreamQuery is what tells a stream from something else: success or
  // "not ready" for a stream (the legacy default stream 0,
  // cudaStreamLegacy and cudaStreamPerThread included), an error otherwise.
  // A pointer that was never a stream may still crash inside the driver;
  // CUDA offers no safer test.
  cudaError_t e = cudaStreamQuery(s);
  if (e != cudaSuccess && e != cudaErrorNotReady) {
    cudaGetLastError();
    return errorf(MPI_ERR_ARG, "0x%llx is not a CUDA stream of this process: %s (%s)",
                  static_cast<unsigned long long>(handle), cudaGetErrorString(e),
                  cudaGetErrorName(e));
  }
  out->h = s;
  return Status::ok();
}

Status gateCreate(Gate* g) {
  void* p = nullptr;
  cudaError_t e = cudaHostAlloc(&p, 64, cudaHostAllocMapped | cudaHostAllocPortable);
  if (e != cudaSuccess) return fail("cudaHostAlloc (a stream gate)", e);
  void* d = nullptr;
  e = cudaHostGetDevicePointer(&d, p, 0);
  if (e != cudaSuccess) {
    cudaFreeHost(p);
    return fail("cudaHostGetDevicePointer (a stream gate)", e);
  }
  g->host = static_cast<uint32_t*>(p);
  *g->host = 0;
  g->dev = reinterpret_cast<uintptr_t>(d);
  return Status::ok();
}

void gateDestroy(Gate g) {
  cudaFreeHost(g.host);
}

Status waitGate(Stream s, Gate g, uint32_t value) {
  auto stream = static_cast<cudaStream_t>(s.h);
  if (!gHostFunctionGates.load(std::memory_order_relaxed)) {
    if (WaitValue32Fn fn = waitValue32()) {
      CUresult r = fn(reinterpret_cast<CUstream>(stream), static_cast<CUdeviceptr>(g.dev), value,
                      CU_STREAM_WAIT_VALUE_GEQ);
      if (r == CUDA_SUCCESS) return Status::ok();
      if (r != CUDA_ERROR_NOT_SUPPORTED)
        return errorf(MPI_ERR_OTHER, "cuStreamWaitValue32 failed (CUresult %d)",
                      static_cast<int>(r));
    }
    gHostFunctionGates.store(true, std::memory_order_relaxed);
    log::warn(
        "the driver has no stream memory operations: stream-ordered MPI operations wait "
        "in host functions (cudaLaunchHostFunc) instead");
  }
  auto* w = new HostWait{g.host, value};
  cudaError_t e = cudaLaunchHostFunc(stream, hostWait, w);
  if (e != cudaSuccess) {
    delete w;
    return fail("cudaLaunchHostFunc (a stream gate)", e);
  }
  return Status::ok();
}

const char* gateMethod() {
  return gHostFunctionGates.load(std::memory_order_relaxed) || !waitValue32()
             ? "host function (cudaLaunchHostFunc)"
             : "stream memory operation (cuStreamWaitValue32)";
}

}  // namespace loom::device::cudastream
