// A build without CUDA: no CUDA backend, no CUDA devices.
#include "core/device_backend.h"

namespace loom::device {

BackendImpl* cudaBackend() {
  return nullptr;
}

int cudaDeviceCount(std::string* why) {
  *why = "not built";
  return 0;
}

}  // namespace loom::device
