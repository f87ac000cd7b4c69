// Streams the program owns, for the stream-ordered API (MPIX_Stream_create
// with a cudaStream_t; runtime/api/stream_*.cc). Loom queues three things on
// such a stream, all without blocking the host:
//   * copies (device.h's copyAsync with the program's Stream): a device
//     buffer's bytes into a host twin before an operation, back after it;
//   * marks (device.h's fenceRecord/fenceDone): Loom's progress polls them
//     to learn that the stream reached an operation (all earlier work done);
//   * gate waits (below): the stream stops there until Loom's progress opens
//     the gate, i.e. until the MPI operation has completed.
// So the stream runs its kernels, reaches a mark, Loom runs the MPI
// operation on host memory, opens the gate and the stream goes on.
//
// Backends: CUDA (device_stream_cuda.cc): the program's cudaStream_t; a
// gate is a counter in mapped pinned memory the stream waits on with
// cuStreamWaitValue32 (stream memory operations), or, where the driver
// refuses those, a host function that waits for it (cudaLaunchHostFunc; it
// holds CUDA's callback thread while it waits). The mock
// (device_mock_stream.cc): a stream is a thread running queued work in
// order, made by the test hook loom_mock_stream_create; its gate waits block
// that thread. Without a backend there are no device streams.
#pragma once

#include <cstdint>

#include "core/device.h"
#include "core/status.h"

namespace loom::device {

// The program's stream `handle` (the bytes of a cudaStream_t, or of a mock
// stream) as a Stream of the active backend. MPI_ERR_ARG when the backend
// does not know it (CUDA: cudaStreamQuery refuses it; the legacy and
// per-thread default streams are accepted); MPI_ERR_UNSUPPORTED_OPERATION
// without a backend.
Status userStream(uint64_t handle, Stream* out);

// A 32-bit counter in host memory a stream can wait on. `host` is where
// Loom writes it; `dev` is its address as the device sees it (CUDA: mapped
// pinned memory). Counting, not a flag: gate k of a stream opens when the
// counter reaches k, so one counter serves every gate of a stream.
struct Gate {
  uint32_t* host = nullptr;
  uint64_t dev = 0;
};
Status gateCreate(Gate* g);
// Frees the counter. CUDA: cudaFreeHost, which may wait for the device;
// never call it while any stream may be stopped at a gate that only this
// thread's progress can open.
void gateDestroy(Gate g);
// Opens every gate up to `value` (the stream goes past waits for <= value).
inline void gateOpen(Gate g, uint32_t value) {
  __atomic_store_n(g.host, value, __ATOMIC_RELEASE);
}
inline uint32_t gateValue(Gate g) {
  return __atomic_load_n(g.host, __ATOMIC_ACQUIRE);
}
// Work queued on `s` after this call waits until the counter reaches
// `value` (a cyclic >=, as cuStreamWaitValue32's GEQ: the counter may wrap).
Status streamWaitGate(Stream s, Gate g, uint32_t value);

// How gates wait on this backend, for loom-info and the docs:
// "stream memory operation", "host function", "mock thread", "none".
const char* gateMethod();

}  // namespace loom::device
