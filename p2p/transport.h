// Transport: moves records (header + payload) to a peer; knows nothing of
// matching, protocols or datatypes.
//
// Sending is reserve/commit so the engine packs payload straight into the
// transport's memory (one copy for non-contiguous data too). A transport
// delivers incoming records to the engine's handler from poll().
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "p2p/wire.h"

namespace loom::p2p {

// Called by a transport for each incoming record; `payload` is valid only
// during the call.
using DeliverFn = void (*)(int srcJobRank, const MsgHeader& hdr, const void* payload,
                           size_t payloadBytes);

struct Transport {
  const char* name;
  // Largest payload one record may carry.
  size_t (*maxPayload)();
  // Room for a record of `payloadBytes` to job rank `peer`: a pointer to
  // write the payload to, or nullptr when the peer's queue is full now.
  void* (*reserve)(int peer, size_t payloadBytes);
  // Publishes the record reserved last for `peer`.
  void (*commit)(int peer, const MsgHeader& hdr, size_t payloadBytes);
  // Single-copy read of `bytes` at `remoteAddr` in process `pid` into
  // `local`; false when not possible (then the engine uses the pipeline).
  bool (*readRemote)(int pid, uint64_t remoteAddr, void* local, size_t bytes);
  // Delivers incoming records; returns how many.
  int (*poll)(DeliverFn deliver);
};

}  // namespace loom::p2p
