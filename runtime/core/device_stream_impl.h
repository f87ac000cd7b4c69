// The backends' halves of device_stream.h (private to runtime/core):
// device_stream.cc dispatches to the mock (device_mock_stream.cc) or to
// CUDA (device_stream_cuda.cc, CUDA builds only).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/device_stream.h"

namespace loom::device {

namespace mockstream {
// The mock's streams: a thread each, running queued work in order. They
// are made only by the test hooks (loom_mock_stream_*, runtime/api).
void* create();
// Waits for the queued work, then ends the thread.
void destroy(void* s);
bool isStream(const void* h);
// Runs fn(arg) on the stream's thread once the work queued before it ran.
void launch(void* s, void (*fn)(void*), void* arg);
// Blocks until everything queued so far has run; the first error a queued
// copy met (then forgotten), or ok.
Status synchronize(void* s);
// Queued forms of the device.h operations on a mock stream.
Status copyAsync(void* s, void* dst, const void* src, size_t n);
void* markRecord(void* s);  // a fence handle
bool markDone(void* m);
void markWait(void* m);
void markDestroy(void* m);
void waitGate(void* s, const uint32_t* counter, uint32_t value);
}  // namespace mockstream

#if LOOM_HAVE_CUDA
namespace cudastream {
Status userStream(uint64_t handle, Stream* out);
Status gateCreate(Gate* g);
void gateDestroy(Gate g);
Status waitGate(Stream s, Gate g, uint32_t value);
const char* gateMethod();
}  // namespace cudastream
#endif

}  // namespace loom::device
