// Kernels for gpu_stream.c on a real GPU (CUDA builds only): stream work
// that writes an enqueued operation's input, after a delay, so a result
// that is right shows the operation waited for it.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace {

__global__ void fillAfter(int* p, size_t n, int base, unsigned long long delayNs) {
  // One thread waits (the kernel "computes" for delayNs), then all fill.
  if (delayNs && blockIdx.x == 0 && threadIdx.x == 0) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < delayNs);
  }
  __syncthreads();
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = base + static_cast<int>(i);
}

}  // namespace

// p[i] = base + i on `stream`, after `delay_us` microseconds of waiting.
// Single block when delayed, so the wait precedes every write.
extern "C" int loom_test_fill_int(void* stream, int* p, size_t n, int base, unsigned delay_us) {
  const unsigned blocks =
      delay_us ? 1 : static_cast<unsigned>((n + 255) / 256 > 1024 ? 1024 : (n + 255) / 256 + 1);
  fillAfter<<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(p, n, base, delay_us * 1000ull);
  return cudaGetLastError() == cudaSuccess ? 0 : -1;
}
