// MPIX_Query_cuda_support (mpi-ext.h) and the mock device's test hooks
// loom_mock_device_malloc/free/memcpy (declared for tests only, in
// tests/gpu/loom_mock.h; exported by runtime/api/exports.map).
//
// The hooks work before MPI_Init and after MPI_Finalize: they start the
// device layer themselves, and do nothing (return NULL) unless
// LOOM_DEVICE_MOCK=1 selected the mock.
#include <mpi-ext.h>
#include <mpi.h>

#include <cstddef>

#include "api/runtime.h"
#include "core/device.h"
#include "core/log.h"

// 1 when this Loom was built with CUDA and the process sees a CUDA device
// (and LOOM_DEVICE_CUDA is not 0): device buffers may then be passed to any
// MPI call. The mock device does not count (it is not CUDA memory).
extern "C" int PMPIX_Query_cuda_support(void) {
  loom::device::init();
  return loom::device::backend() == loom::device::Backend::kCuda ? 1 : 0;
}
LOOM_WEAK_ALIAS(MPIX_Query_cuda_support)

namespace {
bool mockOn() {
  loom::device::init();
  return loom::device::backend() == loom::device::Backend::kMock;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) void* loom_mock_device_malloc(size_t bytes) {
  return mockOn() ? loom::device::mockProgramAlloc(bytes) : nullptr;
}

extern "C" __attribute__((visibility("default"))) void loom_mock_device_free(void* p) {
  if (mockOn()) loom::device::mockProgramFree(p);
}

extern "C" __attribute__((visibility("default"))) void loom_mock_device_memcpy(void* dst,
                                                                               const void* src,
                                                                               size_t bytes) {
  if (!mockOn()) return;
  loom::Status st = loom::device::copy(dst, src, bytes);
  if (!st.isOk()) loom::log::error("loom_mock_device_memcpy: %s", st.message().c_str());
}
