// Counters of the point-to-point engine, read by the MPI tools interface
// (runtime/api/mpit_pvar.cc) as performance variables.
//
// One plain process-wide struct, no atomics: the engine is driven by one
// thread at a time (Loom provides MPI_THREAD_SERIALIZED at most), so each
// event costs one ordinary increment. Counters only grow; the tools
// interface keeps per-handle offsets for "since start/reset".
//
// What is counted: a message (any send request, collective traffic
// included, not the control records of the protocols) when the engine hands
// it to a transport: its eager record or its rendezvous request committed,
// or handed over directly to a receive of this very process (self). Bytes
// are the message's size, whatever the protocol. Received: every message
// arriving from a transport or from this process. Collectives moving data
// through their own shared-memory segment (LOOM_COLL_SHM) bypass the engine
// and are not counted.
#pragma once

#include <cstdint>

namespace loom::p2p {

enum Via : int { kViaSelf = 0, kViaShm = 1, kViaOfi = 2, kVias = 3 };

struct Counters {
  uint64_t sentMessages[kVias] = {};
  uint64_t sentBytes[kVias] = {};
  uint64_t receivedMessages = 0;
  uint64_t receivedBytes = 0;
  // Messages waiting in the unexpected queues of every context, and the
  // largest that number has been since the tools interface last asked for
  // a new peak (resetUnexpectedPeak).
  uint64_t unexpectedLength = 0;
  uint64_t unexpectedPeak = 0;
  // Device buffers (p2p/device_path.h): which path each message took.
  uint64_t deviceIpcReceived = 0;     // received by one copy from a mapped peer buffer
  uint64_t deviceIpcMapped = 0;       // peer allocations mapped (IPC cache misses)
  uint64_t deviceIpcDeclined = 0;     // IPC requests answered with the pipeline instead
  uint64_t deviceChunkedSent = 0;     // sent from a device buffer through chunk slots
  uint64_t deviceChunkedReceived = 0; // received into a device buffer through chunk slots
  uint64_t deviceStagedWhole = 0;     // sends and receives staged whole (host twin)
};

inline Counters gCounters;

inline void countSent(Via via, uint64_t bytes) {
  ++gCounters.sentMessages[via];
  gCounters.sentBytes[via] += bytes;
}

inline void countReceived(uint64_t bytes) {
  ++gCounters.receivedMessages;
  gCounters.receivedBytes += bytes;
}

inline void countUnexpectedQueued() {
  if (++gCounters.unexpectedLength > gCounters.unexpectedPeak)
    gCounters.unexpectedPeak = gCounters.unexpectedLength;
}
inline void countUnexpectedTaken() { --gCounters.unexpectedLength; }

}  // namespace loom::p2p
