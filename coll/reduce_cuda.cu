// The device reductions: one grid-stride kernel per (type, functor) pair,
// instantiated through visitReduction (reduce_dispatch.h) exactly as the
// host loop is, with the bodies of reduce_device.h. See that header for
// the work split and the bits; this file only launches.
//
// Built with -fmad=false (coll/CMakeLists.txt), for CMAKE_CUDA_ARCHITECTURES
// (sm_75..sm_90 and PTX for newer GPUs; cmake/LoomDeps.cmake).
#include <cuda_runtime.h>

#include <algorithm>

// Symbols of their own: the host-side inline helpers of reduce_kernels.h
// compiled here must not be merged with op.cc's (see reduce_kernels.h).
#define LOOM_KERNELS_NS kernels_cuda
#include "coll/reduce_cuda.h"
#include "coll/reduce_device.h"

namespace loom::coll {
namespace {

template <class Body>
__global__ void reduceKernel(Body body, int64_t items) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < items;
       j += stride)
    body(j);
}

struct CudaLaunch {
  cudaStream_t stream;
  int maxBlocks;
  cudaError_t err = cudaSuccess;
  template <class Body>
  void operator()(const Body& body) {
    const int64_t items = body.items();
    if (items <= 0) return;
    constexpr int kThreads = 256;
    const int64_t blocks = std::min<int64_t>((items + kThreads - 1) / kThreads, maxBlocks);
    reduceKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(body, items);
    err = cudaGetLastError();
  }
};

// Enough blocks to fill the device a few times over; the grid-stride loop
// covers the rest. Asked once (the current device at the first call).
int maxBlocks() {
  static const int m = [] {
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
      cudaGetLastError();
      sms = 80;
    }
    return std::max(1, sms) * 8;
  }();
  return m;
}

}  // namespace

DeviceReduceResult reduceCuda(OpKind op, BasicKind kind, int64_t elemBytes, const void* in,
                              void* io, int64_t n, void* stream, std::string* why) {
  if (n <= 0) return DeviceReduceResult::kDone;
  CudaLaunch launch{static_cast<cudaStream_t>(stream), maxBlocks()};
  kernels_cuda::DeviceReduce<CudaLaunch> v{in, io, n, &launch};
  kernels_cuda::visitReduction(op, kind, elemBytes, v);
  if (!v.visited || v.unsupported) return DeviceReduceResult::kUnsupported;
  if (launch.err != cudaSuccess) {
    *why = std::string("a reduction kernel failed to launch: ") + cudaGetErrorString(launch.err);
    return DeviceReduceResult::kFailed;
  }
  return DeviceReduceResult::kDone;
}

}  // namespace loom::coll
