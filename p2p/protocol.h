// Protocol choice: how a message of a given size moves to a peer.
//
//   inline         payload in the header's cache line (shm), or
//                  injected with the header (ofi)               (tiny)
//   eager          copied into the ring or a send buffer,
//                  copied out on arrival                        (small, medium)
//   rndv-get       receiver reads the sender's buffer: CMA on a
//                  node, an RMA read between nodes              (large, single copy)
//   rndv-pipeline  sender streams chunks through records after
//                  the receiver matched                         (large, two copies, cache-resident)
//   rndv-ipc       a device buffer on this node: the receiver maps it
//                  (CUDA IPC) and copies straight from it       (device, one device copy)
//
// Device buffers (docs/gpu.md) add where the bytes are staged through host
// memory: not at all (rndv-ipc), in chunks whose device copies overlap the
// transport (a pipeline of pinned slots, core/device_pipe.h), or whole, as
// before (small and non-contiguous messages).
//
// Pure functions map (bytes, layout, memory kind, limits) to a protocol, and
// (the message's protocol, the receive buffer) to how the receiver takes it,
// so the choice is testable at every threshold; each transport has its own
// limits, every one a LOOM_SHM_*, LOOM_OFI_* or LOOM_DEVICE_* parameter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/device.h"
#include "p2p/wire.h"

namespace loom::p2p {

enum class RndvMode { kAuto, kGet, kPipeline };

struct ProtocolLimits {
  size_t inlineMax = 24;       // LOOM_SHM_INLINE_MAX
  size_t eagerMax = 16384;     // LOOM_SHM_EAGER_MAX, LOOM_OFI_EAGER_MAX
  size_t getMin = 64 << 20;    // LOOM_SHM_CMA_MIN (with kAuto): smallest rndv-get
  size_t getMax = SIZE_MAX;    // LOOM_SHM_CMA_MAX (with kAuto): largest rndv-get
  // Whether [getMin, getMax] also takes eager-sized messages (a measured
  // window, core/tune.h: CMA's one copy can beat the eager path's two).
  bool getBelowEager = false;
  size_t maxPayload = 65536;   // largest record the transport carries
  RndvMode rndv = RndvMode::kAuto;  // LOOM_SHM_RNDV
  bool get = true;             // one-sided reads work (shm: CMA)
  // How the receiver of a rndv-get reads: in pieces of readChunk bytes (0:
  // all at once), up to readDepth of them in flight.
  size_t readChunk = 0;        // LOOM_OFI_RNDV_CHUNK
  int readDepth = 1;           // LOOM_OFI_RNDV_DEPTH
  // Device buffers (setDeviceLimits).
  bool ipc = false;            // peers share this node's devices: rndv-ipc (LOOM_DEVICE_IPC)
  size_t ipcMin = 4096;        // LOOM_DEVICE_IPC_MIN: smallest rndv-ipc message
  size_t devPipelineMin = 64 << 10;  // LOOM_DEVICE_PIPELINE_MIN: smallest message staged in chunks
  size_t devChunk = 64 << 10;       // LOOM_DEVICE_PIPELINE_CHUNK
};

// How a device buffer's bytes pass through host memory.
enum class Staging : uint8_t {
  kNone,     // host buffer, or rndv-ipc (the receiver copies from the device)
  kWhole,    // one copy to a host twin before the protocol starts
  kChunked,  // rndv-pipeline fed from pinned slots, device copies overlapping the transport
};

struct Protocol {
  Kind kind;
  Staging staging;
};

// The record kind that starts a message of `bytes` (contiguous or not)
// through a transport with limits `lim`.
Kind selectProtocol(size_t bytes, bool contiguous, const ProtocolLimits& lim);

// The same for a send buffer of memory kind `mem`. Host memory gets the
// host protocol. A contiguous device buffer of ipcMin bytes or more takes
// rndv-ipc where the transport reaches a peer of this node's devices
// (lim.ipc); past the eager size and from devPipelineMin up, the chunked
// rndv-pipeline. Anything else (small, non-contiguous) is staged whole and
// sent by the host rules.
Protocol selectProtocol(size_t bytes, bool contiguous, device::MemKind mem,
                        const ProtocolLimits& lim);

// How a receive takes a rendezvous request (kRtsGet, kRtsPipeline,
// kRtsIpc) once matched.
enum class Take : uint8_t {
  kGet,       // read the sender's exposed buffer (CMA, RMA reads)
  kIpc,       // map the sender's device buffer and copy from it
  kPipeline,  // answer kCts: the sender streams records
};
// `direct`: the receive's buffer is one contiguous range the engine may
// write whole (contiguous type, no folding); `mem`: where it lives (a
// device buffer lands natively, see deviceChunk). Only a direct receive
// reads or maps; a device buffer never takes a transport's read (CMA and
// RMA reads write host memory), so it asks for the pipeline.
// Inline: every rendezvous a receive matches asks (host ones included).
inline Take selectTake(Kind kind, bool direct, device::MemKind mem) {
  if (!direct) return Take::kPipeline;
  if (kind == Kind::kRtsIpc) return Take::kIpc;  // device copy or device-to-host
  if (kind == Kind::kRtsGet && mem == device::MemKind::kHost) return Take::kGet;
  return Take::kPipeline;
}

// A device buffer that a rendezvous streams through records (either side)
// passes through pinned slots of this many bytes, the device copy of one
// slot overlapping the transport's work on another: `bytes` itself (one
// slot, one copy, as whole staging) below devPipelineMin.
size_t deviceChunk(size_t bytes, const ProtocolLimits& lim);

// Fills the device fields of `lim` from the LOOM_DEVICE_* parameters;
// `sameNode`: the transport's peers are on this node (IPC possible).
void setDeviceLimits(ProtocolLimits* lim, bool sameNode);

const char* kindName(Kind k);

// One line on a transport's limits (LOOM_DEBUG=p2p), with `chunk` the
// pipeline's record size; and on the device paths' limits.
std::string describeLimits(const char* name, const ProtocolLimits& L, size_t chunk);
std::string describeDeviceLimits(const ProtocolLimits& L);

// The rendezvous mode parameter `param` asks for (auto, get, pipeline); a
// bad value is warned about and taken as auto.
RndvMode parseRndv(const char* param);

}  // namespace loom::p2p
