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
//
// One-sided writes are the other direction, for MPI_Put between nodes (the
// rma layer, through p2p.h's rma* functions): a rank exposes its window
// memory writable, and a peer writes into it without the owner's CPU
// applying anything (libfabric RMA; the provider's progress at the owner
// still has to run). Shared memory has no write: on a node the rma layer
// stores directly or uses CMA itself.
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
// A one-sided operation that Transport::read or write started has ended:
// `bytes` moved (err == MPI_SUCCESS), or it failed with an MPI error class.
// Each operation names its own function (the engine's rendezvous reads and
// the rma layer's reads and writes end in different places), called from a
// later poll().
using OneSidedDoneFn = void (*)(void* ctx, size_t bytes, int err);

struct Handlers {
  DeliverFn deliver;
};

// What Transport::read or write did.
enum class OneSidedResult { kDone, kStarted, kUnavailable };

// What a peer may do to exposed memory (Transport::expose).
enum : unsigned { kExposeRead = 1, kExposeWrite = 2 };

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
  // Owner side: makes `bytes` at `addr` readable (and, with kExposeWrite,
  // writable) by `peer` (-1: by every rank this transport reaches; a
  // libfabric registration serves the whole endpoint); fills *key and a
  // *handle for unexpose(). False when not possible now (the engine then
  // streams the message through records instead; the rma layer sends
  // messages).
  bool (*expose)(int peer, const void* addr, size_t bytes, unsigned access, RemoteKey* key,
                 void** handle);
  void (*unexpose)(void* handle);
  // Reads `bytes` at `offset` into the region `key` of `peer` into `local`.
  // kDone: read now (done is not called); kStarted: done(ctx, ...) comes
  // from a later poll(); kUnavailable: nothing happened, move the data
  // another way.
  OneSidedResult (*read)(int peer, const RemoteKey& key, uint64_t offset, void* local, size_t bytes,
                         OneSidedDoneFn done, void* ctx);
  // Writes `bytes` from `local` to `offset` in the region `key` of `peer`
  // (exposed with kExposeWrite). Completion means the data is in the peer's
  // memory, not merely sent (what MPI_Win_flush promises), and `local` may
  // be reused only then. Results as for read. nullptr: no one-sided writes.
  OneSidedResult (*write)(int peer, const RemoteKey& key, uint64_t offset, const void* local,
                          size_t bytes, OneSidedDoneFn done, void* ctx);
  // Delivers incoming records and finished reads and writes; returns how
  // many.
  int (*poll)(const Handlers& handlers);
};

}  // namespace loom::p2p
