// What a device backend implements (device.h is the interface the rest of
// Loom uses; device.cc dispatches to one of these and keeps the
// memory-kind cache in front of query()). Private to runtime/core.
#pragma once

#include <cstdint>
#include <string>

#include "core/device.h"

namespace loom::device {

struct Range {
  uintptr_t base = 0;
  uintptr_t end = 0;  // one past the last byte
  // The allocation's identity where the backend has one (0: none). Memory
  // freed and allocated again at the same address has another identity.
  uint64_t id = 0;
};

class BackendImpl {
 public:
  virtual ~BackendImpl() = default;
  virtual Backend kind() const = 0;
  virtual int count() = 0;
  virtual std::string describe(int dev) = 0;
  // Where `p` lives; for device memory also the allocation's range when
  // the backend knows it (else left empty: the answer is not remembered).
  virtual MemKind query(const void* p, Range* range) = 0;
  // The identity (Range::id) of the allocation that holds `p` now, 0 if
  // none or unknown: one cheap question, asked when `p` falls in a
  // remembered range whose id is not 0.
  virtual uint64_t allocationId(const void* p) {
    (void)p;
    return 0;
  }
  virtual Status copy(void* dst, const void* src, size_t n) = 0;
  virtual Status copy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                        size_t rows) = 0;
  virtual Status streamCreate(Stream* s) = 0;
  virtual void streamDestroy(Stream s) = 0;
  virtual Status copyAsync(void* dst, const void* src, size_t n, Stream s) = 0;
  virtual Status fenceRecord(Stream s, Fence* f) = 0;
  virtual bool fenceDone(Fence f) = 0;
  virtual Status fenceWait(Fence f) = 0;
  virtual void fenceDestroy(Fence f) = 0;
  virtual void* deviceAlloc(size_t n) = 0;
  virtual void deviceFree(void* p) = 0;
  virtual void* hostAlloc(size_t n) = 0;
  virtual void hostFree(void* p) = 0;
  virtual void* hostAlias(const void* p) = 0;
  virtual Status ipcGet(const void* p, IpcHandle* out) = 0;
  // Opens a handle; *range is what was mapped (for the kind cache).
  virtual Status ipcOpen(const IpcHandle& h, void** out, Range* range) = 0;
  virtual Status ipcClose(void* p) = 0;
};

// device_mock.cc: the mock (always built).
BackendImpl* mockBackend();
// device_mock.cc: queues fn(arg) on one of the mock's own streams when
// LOOM_DEVICE_MOCK_ASYNC made it a queue (device.h, mockEnqueue).
bool mockEnqueueOn(Stream s, void (*fn)(void*), void* arg);
// device_cuda.cc (CUDA builds) or device_nocuda.cc: the CUDA backend, or
// nullptr where it is not built; and the number of CUDA devices with the
// reason when there are none ("insufficient driver", "not built").
BackendImpl* cudaBackend();
int cudaDeviceCount(std::string* why);

// device.cc, for backends: a device range Loom made or mapped (remembered
// as device, host pages it covers forgotten), or unmapped.
void noteDeviceRange(Range r);
void forgetDeviceRange(uintptr_t base);

}  // namespace loom::device
