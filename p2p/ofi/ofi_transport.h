// The libfabric transport: records and one-sided reads between nodes.
//
// One reliable-datagram (FI_EP_RDM) endpoint per rank, untagged messages
// for records (the engine matches in software, so MPI_ANY_SOURCE spans shm
// and ofi peers with one matching engine) and RMA reads for the single-copy
// rendezvous. libfabric is dlopen()ed here, only when a job has a peer on
// another node: Debian's build costs ~200 ms to load (shared/notes).
//
// A record on the wire: an 8-byte prefix (the sender's secret), the 32-byte
// MsgHeader, the payload. Each rank draws a random secret and publishes it
// with its endpoint name; a record whose source address is not a rank of
// the job, or whose prefix is not that rank's secret, is dropped, so a
// stranger connecting to the endpoint's port can never be matched.
#pragma once

#include <string>
#include <vector>

#include "core/bootstrap.h"
#include "core/status.h"
#include "p2p/transport.h"

namespace loom::p2p::ofi {

struct Config {
  int myJobRank = 0;
  int jobSize = 0;
  int nodeId = 0;
  std::vector<int> nodeOfRank;          // job rank -> node id
  std::vector<std::string> nodeNames;   // node id -> name (for messages)
  bool hasLocalPeers = false;           // shm peers exist (their rings have no fd to sleep on)
  Bootstrap* boot = nullptr;            // address exchange, and abort on a lost peer
};

// Before the bootstrap fence: loads libfabric, opens the endpoint, posts the
// receive buffers and publishes the endpoint's name.
Status setup(const Config& cfg);
// After the fence: reads every peer's name into the address vector.
Status connect();
// Waits (progressing) until every record this rank posted has left, so a
// rank does not block in the finalize barrier with records still queued.
bool idle();
void finalize();

const Transport* transport();

// For loom-info: the providers libfabric offers here that Loom would take,
// in the order LOOM_OFI_PROVIDER=auto tries them, and which it picks (loads
// libfabric; ~300 ms).
std::string describeProviders();

}  // namespace loom::p2p::ofi
