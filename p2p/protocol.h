// Protocol choice: how a message of a given size moves to a peer.
//
//   inline         payload in the header's cache line           (tiny)
//   eager          copied into the ring, copied out on arrival  (small, medium)
//   rndv-get       receiver reads the sender's buffer with CMA  (large, single copy)
//   rndv-pipeline  sender streams chunks through the ring after
//                  the receiver matched                         (large, two copies, cache-resident)
//
// One pure function maps (bytes, layout, limits) to a protocol, so the choice
// is testable at every threshold and every limit is a LOOM_SHM_* parameter.
#pragma once

#include <cstddef>

#include "p2p/wire.h"

namespace loom::p2p {

enum class RndvMode { kAuto, kGet, kPipeline };

struct ProtocolLimits {
  size_t inlineMax = 24;       // LOOM_SHM_INLINE_MAX
  size_t eagerMax = 16384;     // LOOM_SHM_EAGER_MAX
  size_t cmaMin = 64 << 20;    // LOOM_SHM_CMA_MIN (with kAuto)
  size_t maxPayload = 65536;   // largest record the transport carries
  RndvMode rndv = RndvMode::kAuto;  // LOOM_SHM_RNDV
  bool cma = true;             // CMA works between these processes
};

// The record kind that starts a message of `bytes` (contiguous or not).
Kind selectProtocol(size_t bytes, bool contiguous, const ProtocolLimits& lim);

const char* kindName(Kind k);

}  // namespace loom::p2p
