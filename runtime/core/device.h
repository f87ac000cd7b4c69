// The device layer: where a buffer lives (host or GPU) and the few things
// Loom does with GPU memory (copies, scratch, pinned host memory, IPC,
// reductions in coll/reduce_device.h). No CUDA header here: the CUDA
// backend is device_cuda.cc, the only file that includes one.
//
// Backends, picked once by init():
//   none  every pointer is host memory (a build without CUDA, a machine
//         without a driver or a GPU, or LOOM_DEVICE_CUDA=0);
//   cuda  the CUDA runtime, linked statically (a binary starts where no
//         CUDA is installed); driver calls through cudaGetDriverEntryPoint,
//         never -lcuda;
//   mock  LOOM_DEVICE_MOCK=1, in every build: "device memory" is a memfd
//         mapped twice, PROT_NONE at the address the program gets (so a
//         host dereference by Loom faults exactly as a real device pointer
//         would) and read-write elsewhere, used only by the mock's copies
//         and reductions. Programs get it through the test hooks
//         loom_mock_device_malloc/free/memcpy (tests/gpu/loom_mock.h).
//
// Memory kind: kindOf(p) is what every MPI call asks about its buffers.
// Without a backend it is a load and a branch. With one, answers are
// remembered so a small host message costs no driver call:
//   * device allocations by address range ([base, base + size) as the
//     driver reports it), up to kDeviceRanges of them;
//   * host answers by 4 KiB page in a direct-mapped table of kHostPages.
// The limits, which LOOM_DEVICE_MEMKIND_CACHE=0 removes (every query then
// asks the backend):
//   * a host page stays "host" until its slot is taken by another page. A
//     program that frees host memory (munmap) and later gets the same
//     addresses from cudaMalloc would be told "host" for that device
//     memory. Loom's own device allocations (deviceAlloc, the mock's
//     allocations, ipcOpen) clear the pages they cover, and so does the
//     first sight of any device range; allocations by the program that
//     Loom never saw cannot be.
//   * a device range stays "device" until Loom frees it or it is evicted
//     (oldest first). A range the program freed and the host reused would
//     be staged through cudaMemcpy, which copies host memory too (only a
//     wasted copy).
//   * a host answer is about one address, but it is remembered for the
//     whole page: cudaMalloc packs small allocations into shared pages, so
//     an address that is no allocation (just past a buffer, in a gap) is
//     called host by the driver while its page holds device memory. So an
//     operation that touches no byte (an empty message, whose pointer may
//     lie past its buffer's end) does not ask, and a page is not
//     remembered as host where a known device range meets it. A program
//     that asks (an empty message of its own) about an address next to
//     device memory Loom has not seen yet can still mislabel that page.
//   Managed (cudaMallocManaged) and registered host memory count as host:
//   the host can touch them, so they need no staging.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace loom::device {

enum class MemKind : uint8_t { kHost, kDevice };
enum class Backend : uint8_t { kNone, kCuda, kMock };

namespace detail {
extern bool gActive;  // a backend other than kNone is in use
MemKind kindOfSlow(const void* p);
}  // namespace detail

// Picks the backend (LOOM_DEVICE_MOCK, LOOM_DEVICE_CUDA, what the machine
// has). Idempotent; MPI_Init, loom-info and the test hooks call it. With
// CUDA built and a driver present this costs the driver's initialisation
// (cudaGetDeviceCount), once.
void init();

inline bool active() {
  return detail::gActive;
}
Backend backend();
const char* backendName();  // "none", "cuda", "mock"

// Where `p` lives. nullptr is host memory.
inline MemKind kindOf(const void* p) {
  if (!detail::gActive) [[likely]]
    return MemKind::kHost;
  return detail::kindOfSlow(p);
}
inline bool isDevice(const void* p) {
  return kindOf(p) == MemKind::kDevice;
}

// --- Build and machine, for loom-info and MPIX_Query_cuda_support.
bool cudaBuilt();
// CUDA devices this process can use (0 without a driver or a GPU; probed
// once, any CUDA error counts as none). The mock reports none.
int cudaDevices();
// Devices of the active backend (the mock has one).
int count();
// One line per device: "0: NVIDIA H100 80GB HBM3, sm_90, 79.1 GiB, bus 0000:19:00.0".
std::string describe(int dev);
// "CUDA: built, 0 devices (insufficient driver)" style summary.
std::string summary();

// --- Copies. Any direction (host or device on either side); the backend
// finds out which. Errors are MPI_ERR_OTHER with the backend's reason.
Status copy(void* dst, const void* src, size_t n);
// `rows` rows of `width` bytes; row k at dst + k * dpitch and src + k *
// spitch (pitches >= width). A strided run of a datatype in one call.
Status copy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t rows);

// Asynchronous copies on a stream, and a fence to wait for them (the
// chunked staging of core/device_pipe.h, IPC copies). A null stream is the
// backend's default stream. The mock copies at once and its fences are
// always passed.
struct Stream {
  void* h = nullptr;
};
struct Fence {
  void* h = nullptr;
  int dev = -1;  // the CUDA backend's device of h (its event pool)
};
Status streamCreate(Stream* s);
void streamDestroy(Stream s);
Status copyAsync(void* dst, const void* src, size_t n, Stream s);
// Records a fence after everything queued on `s` so far.
Status fenceRecord(Stream s, Fence* f);
// True once every operation before the fence has finished.
bool fenceDone(Fence f);
Status fenceWait(Fence f);
void fenceDestroy(Fence f);

// --- Memory.
// Device scratch (nullptr when no backend or out of memory).
void* deviceAlloc(size_t n);
void deviceFree(void* p);
// Host memory the device copies from and to fastest (pinned, page-locked,
// where the backend has it; plain malloc otherwise). Never nullptr for
// n > 0 unless memory is exhausted.
void* hostAlloc(size_t n);
void hostFree(void* p);

// While frees are held, deviceFree and hostFree keep what they are given
// and free it when the hold ends. cudaFree and cudaFreeHost wait for the
// whole device, so a free issued from progress while a stream stands at a
// gate that only progress opens (the stream-ordered API, stream_enqueue.cc)
// would wait forever. The stream engine holds frees while any gate is shut.
void holdFrees(bool hold);

// The host-usable alias of device memory, where the backend has one: the
// mock's read-write view of its allocations; nullptr for CUDA and for host
// memory. Only the mock's reductions use it.
void* hostAlias(const void* p);

// The mock's asynchronous mode (LOOM_DEVICE_MOCK_ASYNC, tests only): Loom's
// own streams are queues run by a thread of their own, as a GPU runs them.
// Queues `fn` (the mock's "kernel") on `s` and returns true when `s` is
// such a stream; false otherwise (the caller runs the work at once).
bool mockEnqueue(Stream s, void (*fn)(void*), void* arg);

// The mock's test hooks (loom_mock_device_malloc/free): memory as a
// program's cudaMalloc gives it. Under LOOM_DEVICE_MOCK_PACKED Loom is not
// told of it (its memory-kind cache learns of it by asking, as it must of
// a program's CUDA allocations); otherwise deviceAlloc/deviceFree.
void* mockProgramAlloc(size_t n);
void mockProgramFree(void* p);

// --- IPC: a handle another process of the node opens to map the same
// device memory (the on-node rendezvous, p2p/device_path.h). The handle's
// bytes name the allocation: a new allocation gets new bytes even at the
// address of a freed one (CUDA's rule; the mock numbers its allocations),
// which is how a cache of opened handles notices a replaced allocation.
struct IpcHandle {
  unsigned char bytes[64];  // the backend's handle (cudaIpcMemHandle_t is 64 bytes)
  uint64_t offset;          // of the pointer in its allocation
  uint64_t size;            // of the allocation
  int32_t pid;              // the exporting process (the mock's memfd owner)
  int32_t fd;
};
Status ipcGet(const void* p, IpcHandle* out);
Status ipcOpen(const IpcHandle& h, void** out);
Status ipcClose(void* p);

// --- For the memory-kind cache (device.cc) and its unit test.
constexpr size_t kHostPages = 1024;
constexpr size_t kDeviceRanges = 256;
// Forgets every remembered answer (tests; LOOM_DEVICE_MEMKIND_CACHE=0
// keeps it empty).
void clearKindCache();
// Queries answered by the backend (cache misses), for tests.
uint64_t kindQueries();

// Tests only: switch backends in one process (kNone or kMock), turn the
// cache on or off; each returns the previous setting.
Backend setBackendForTest(Backend b);
bool setKindCacheForTest(bool on);

}  // namespace loom::device
