// CUDA build of memkind: asks the CUDA runtime (linked statically, so the
// binary starts where no CUDA is installed) about devices and pointers.
#include <cuda_runtime_api.h>

#include "core/memkind.h"

namespace loom::memkind {
namespace {
struct Probe {
  int devices = 0;
  std::string why;
};
const Probe& probe() {
  static const Probe p = [] {
    Probe r;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      r.why = cudaGetErrorString(e);
      n = 0;
    }
    r.devices = n;
    return r;
  }();
  return p;
}
}  // namespace

bool cudaBuilt() { return true; }
int cudaDevices() { return probe().devices; }

Kind kindOf(const void* ptr) {
  if (cudaDevices() == 0 || !ptr) return Kind::kHost;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error of an unknown pointer
    return Kind::kHost;
  }
  return attr.type == cudaMemoryTypeDevice ? Kind::kDevice : Kind::kHost;
}

std::string describe() {
  const Probe& p = probe();
  std::string s = "built, " + std::to_string(p.devices) + " device" + (p.devices == 1 ? "" : "s");
  if (!p.why.empty()) s += " (" + p.why + ")";
  return s;
}
}  // namespace loom::memkind
