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
//
// One pure function maps (bytes, layout, limits) to a protocol, so the choice
// is testable at every threshold; each transport has its own limits, every
// one a LOOM_SHM_* or LOOM_OFI_* parameter.
#pragma once

#include <cstddef>

#include "p2p/wire.h"

namespace loom::p2p {

enum class RndvMode { kAuto, kGet, kPipeline };

struct ProtocolLimits {
  size_t inlineMax = 24;       // LOOM_SHM_INLINE_MAX
  size_t eagerMax = 16384;     // LOOM_SHM_EAGER_MAX, LOOM_OFI_EAGER_MAX
  size_t getMin = 64 << 20;    // LOOM_SHM_CMA_MIN (with kAuto): smallest rndv-get
  size_t maxPayload = 65536;   // largest record the transport carries
  RndvMode rndv = RndvMode::kAuto;  // LOOM_SHM_RNDV
  bool get = true;             // one-sided reads work (shm: CMA)
  // How the receiver of a rndv-get reads: in pieces of readChunk bytes (0:
  // all at once), up to readDepth of them in flight.
  size_t readChunk = 0;        // LOOM_OFI_RNDV_CHUNK
  int readDepth = 1;           // LOOM_OFI_RNDV_DEPTH
};

// The record kind that starts a message of `bytes` (contiguous or not)
// through a transport with limits `lim`.
Kind selectProtocol(size_t bytes, bool contiguous, const ProtocolLimits& lim);

const char* kindName(Kind k);

// The rendezvous mode parameter `param` asks for (auto, get, pipeline); a
// bad value is warned about and taken as auto.
RndvMode parseRndv(const char* param);

}  // namespace loom::p2p
