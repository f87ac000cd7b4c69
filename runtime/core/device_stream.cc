// device_stream.h: dispatch to the active backend's streams.
#include "core/device_stream.h"

#include <mpi.h>

#include <cstring>
#include <new>

#include "core/device_stream_impl.h"

namespace loom::device {

Status userStream(uint64_t handle, Stream* out) {
  *out = Stream{};
  switch (backend()) {
    case Backend::kMock: {
      void* h = reinterpret_cast<void*>(static_cast<uintptr_t>(handle));
      if (!mockstream::isStream(h))
        return errorf(MPI_ERR_ARG,
                      "0x%llx is not a stream of the mock device "
                      "(loom_mock_stream_create makes them)",
                      static_cast<unsigned long long>(handle));
      out->h = h;
      return Status::ok();
    }
    case Backend::kCuda:
#if LOOM_HAVE_CUDA
      return cudastream::userStream(handle, out);
#else
      [[fallthrough]];
#endif
    default:
      return errorf(MPI_ERR_UNSUPPORTED_OPERATION,
                    "this process has no CUDA device (MPIX_Query_cuda_support() is 0): a "
                    "cudaStream_t cannot be used here; MPIX_Stream_create with MPI_INFO_NULL "
                    "makes a host stream");
  }
}

Status gateCreate(Gate* g) {
  *g = Gate{};
#if LOOM_HAVE_CUDA
  if (backend() == Backend::kCuda) return cudastream::gateCreate(g);
#endif
  // The mock's streams (and tests without a backend) wait on plain memory.
  auto* c = new (std::nothrow) uint32_t(0);
  if (!c) return errorf(MPI_ERR_NO_MEM, "no memory for a stream gate");
  g->host = c;
  g->dev = reinterpret_cast<uintptr_t>(c);
  return Status::ok();
}

void gateDestroy(Gate g) {
  if (!g.host) return;
#if LOOM_HAVE_CUDA
  if (backend() == Backend::kCuda) {
    cudastream::gateDestroy(g);
    return;
  }
#endif
  delete g.host;
}

Status streamWaitGate(Stream s, Gate g, uint32_t value) {
  switch (backend()) {
    case Backend::kMock:
      if (!mockstream::isStream(s.h))
        return errorf(MPI_ERR_INTERN, "a gate wait on something that is not a mock stream");
      mockstream::waitGate(s.h, g.host, value);
      return Status::ok();
    case Backend::kCuda:
#if LOOM_HAVE_CUDA
      return cudastream::waitGate(s, g, value);
#else
      [[fallthrough]];
#endif
    default:
      return errorf(MPI_ERR_INTERN, "no device backend: no stream to wait on");
  }
}

const char* gateMethod() {
  switch (backend()) {
    case Backend::kMock:
      return "mock thread";
    case Backend::kCuda:
#if LOOM_HAVE_CUDA
      return cudastream::gateMethod();
#else
      [[fallthrough]];
#endif
    default:
      return "none";
  }
}

}  // namespace loom::device
