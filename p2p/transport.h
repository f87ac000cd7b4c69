// Transport: moves records (header + payload) to a peer, and lets a receiver
// read a sender's exposed buffer; knows nothing of matching, protocols or
// datatypes.
//
// Sending is reserve/commit so the engine packs payload straight into the
// transport's memory (one copy for non-contiguous data too). A transport
// delivers incoming records to the engine from poll(), in the order each
// peer committed them.
//
// One-sided reads carry the single-copy rendezvous: the sender exposes its
// buffer and sends the RemoteKey in its request; the receiver reads. Shared
// memory reads with CMA (the key is the sender's pid), libfabric with an RMA
// read of a memory registration (the key is the registration's key); the
// engine never knows which.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "p2p/protocol.h"
#include "p2p/wire.h"

namespace loom::p2p {

// Called by a transport for each incoming record; `payload` is valid only
// during the call.
using DeliverFn = void (*)(int srcJobRank, const MsgHeader& hdr, const void* payload,
                           size_t payloadBytes);
// A read that Transport::read started has ended: `bytes` landed (err ==
// MPI_SUCCESS), or it failed with an MPI error class.
using ReadDoneFn = void (*)(void* ctx, size_t bytes, int err);

struct Handlers {
  DeliverFn deliver;
  ReadDoneFn readDone;
};

// What Transport::read did.
enum class ReadResult { kDone, kStarted, kUnavailable };

struct Transport {
  const char* name;
  // Protocol limits for messages through this transport (valid after connect).
  const ProtocolLimits* limits;
  // Largest payload one record may carry.
  size_t (*maxPayload)();
  // Room for a record of `payloadBytes` to job rank `peer`: a pointer to
  // write the payload to, or nullptr when the peer's queue is full now.
  void* (*reserve)(int peer, size_t payloadBytes);
  // Publishes the record reserved last for `peer`.
  void (*commit)(int peer, const MsgHeader& hdr, size_t payloadBytes);
  // Sender side of a read: makes `bytes` at `addr` readable by `peer`; fills
  // *key and a *handle for unexpose(). False when not possible now (the
  // engine then streams the message through records instead).
  bool (*expose)(int peer, const void* addr, size_t bytes, RemoteKey* key, void** handle);
  void (*unexpose)(void* handle);
  // Receiver side: reads `bytes` at `offset` into the region `key` of `peer`
  // into `local`. kDone: read now; kStarted: handlers.readDone(ctx, ...)
  // comes from a later poll(); kUnavailable: use the pipeline.
  ReadResult (*read)(int peer, const RemoteKey& key, uint64_t offset, void* local, size_t bytes,
                     void* ctx);
  // Delivers incoming records and finished reads; returns how many.
  int (*poll)(const Handlers& handlers);
};

}  // namespace loom::p2p
