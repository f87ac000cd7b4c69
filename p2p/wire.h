// What travels between ranks: one fixed header per record, the same for
// every transport, followed by the record's payload.
#pragma once

#include <cstdint>

namespace loom::p2p {

// Record kinds. Those below 8 carry a message to be matched (the protocol
// that message uses); the others are protocol control and are never matched.
enum class Kind : uint8_t {
  kInline = 0,        // payload in the header's cache line
  kEager = 1,         // payload follows the header
  kRtsGet = 2,        // rendezvous request; receiver may read the sender's buffer
  kRtsPipeline = 3,   // rendezvous request; receiver must ask for the data
  kRtsIpc = 4,        // rendezvous request for a device buffer on this node: the
                      // receiver maps it (IpcRts) and copies, or asks for the data
  kAck = 8,           // matched: completes a synchronous eager send
  kCts = 9,           // clear to send: stream the data (pipeline)
  kData = 10,         // one chunk of a pipelined message
  kFin = 11,          // data read by the receiver: the send is complete
};

inline bool isMatched(Kind k) { return static_cast<uint8_t>(k) < 8; }

enum : uint8_t {
  kFlagSync = 1,    // matched message: synchronous send, answer with kAck
  kFlagStream = 2,  // kCts: copy this message with non-temporal stores (both sides)
  kFlagFailed = 4,  // kData: the sender could not read these bytes (a device copy
                    // failed); the receive fails with MPI_ERR_OTHER
};

struct MsgHeader {
  uint32_t ctx;    // communicator context * kChannels + channel
  int32_t src;     // sender's rank in that communicator
  int32_t tag;
  Kind kind;
  uint8_t flags;
  uint16_t sig;    // collective channel: the call's signature (0: none)
  uint64_t size;   // matched: message bytes. kCts: receiver's request; kData: offset
  uint64_t sreq;   // matched: sender's request. kAck/kCts/kFin: request to act on;
                   // kData: receiver's request
};
static_assert(sizeof(MsgHeader) == 32);

// Where a receiver reads an exposed buffer (Transport::expose): an address
// or offset, and a transport-specific key (shm: the sender's pid for CMA;
// ofi: the memory registration's key).
struct RemoteKey {
  uint64_t addr;
  uint64_t key;
};

// Payload of kRtsGet/kRtsPipeline: the sender's exposed buffer (kRtsGet).
struct RtsBody {
  RemoteKey remote;
};
static_assert(sizeof(RtsBody) == 16);

}  // namespace loom::p2p
