// The point-to-point engine's state, shared by its two source files:
// engine.cc (matching and the protocols, the hot paths) and engine_setup.cc
// (setup, connection, finalization and the one-line description). Nothing
// outside p2p/ includes this; the rest of Loom uses p2p.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "p2p/match.h"
#include "p2p/protocol.h"
#include "p2p/stream_choice.h"
#include "p2p/transport.h"

namespace loom::p2p::engine {

// LOOM_SHM_NT: how a pipeline message from LOOM_SHM_NT_MIN up is copied.
enum class NtMode : uint8_t { kNever, kAlways, kAuto };

// One entry of a peer's outgoing queue: a send still moving, or a control
// record that did not fit.
struct OutItem {
  Request* req;      // nullptr for a control record
  MsgHeader ctl;
};

struct Engine {
  MatchTable match;
  int me = 0;                  // job rank
  ProtocolLimits* shmLim = nullptr;  // shm's limits (shm::limits())
  size_t chunk = 65536;
  size_t sendEagerMax = 0;     // LOOM_SHM_SEND_EAGER_MAX (sendEagerNow)
  size_t ntMin = 0;            // LOOM_SHM_NT_MIN (0: never)
  NtMode ntMode = NtMode::kAuto;          // LOOM_SHM_NT
  std::vector<StreamChoice> choice;       // by job rank (auto mode)
  const Transport* shm = nullptr;
  const Transport* ofi = nullptr;
  std::vector<std::deque<OutItem>> outq;  // by job rank
  std::vector<int> busy;                  // job ranks whose outq is not empty
  std::vector<const Transport*> route;    // by job rank (nullptr: ourselves)
  size_t foldPiece = 0;    // smallest piece a pipelined message arrives in
  bool ready = false;
};

// Hidden: the hot paths reach it directly, not through the GOT.
extern Engine E [[gnu::visibility("hidden")]];

// The engine's progress poller (registered by connect()).
[[gnu::visibility("hidden")]] int poll(void*);
// Completion of a device IPC copy into a receive (dev::setCompletion).
[[gnu::visibility("hidden")]] void onIpcDone(Request* r);

}  // namespace loom::p2p::engine
