// Shared-memory transport: every pair of ranks on a node talks through a
// single-producer/single-consumer ring in one segment per node.
//
// Segment: a header (pids, CMA probe addresses, attach count) then one ring
// per ordered pair (sender, receiver) of local ranks. A ring is a byte
// circle of 64-byte-aligned records. The consumer polls the next record's
// sequence number (in the record's first cache line, written last by the
// producer), so a small message costs one cache-line transfer; the consumer
// publishes its `head` on a line of its own, read by the producer only when
// the ring looks full.
//
// Lifetime: local rank 0 creates the segment before the bootstrap fence and
// publishes its handle (key loom.shm); the others map it after the fence.
// It is a memfd that the others take from rank 0 (core/segment.h), so it is
// never named in /dev/shm and goes away with the last mapping, whoever dies
// when; rank 0 closes its descriptor once every local rank has mapped it.
// Where a memfd cannot be shared it is named after the job (mode 0600) and
// the last rank to map it unlinks it (loomrun also removes loom-<nspace>-*
// after the job, as a safety net for a rank killed before that).
#pragma once

#include <string>
#include <vector>

#include "core/bootstrap.h"
#include "core/status.h"
#include "p2p/transport.h"

namespace loom::p2p::shm {

struct Config {
  std::string nspace;          // names the segment
  int nodeId = 0;              // with the node id
  Bootstrap* boot = nullptr;   // passes the segment's handle to the node's ranks
  std::vector<int> localPeers; // job ranks on this node, ascending
  int myJobRank = 0;
  size_t ringBytes = 1 << 20;
  int cmaMode = -1;            // -1 probe, 0 off, 1 on (fails if it does not work)
};

Status setup(const Config& cfg);  // before the fence
Status connect();                 // after the fence
void finalize();

// Words local rank 0 leaves in the segment's header after setup() (before
// the fence), which every local rank reads after connect(): decisions the
// node's ranks then share without a message (p2p/tune_run.cc). False: no
// segment (alone on the node).
constexpr int kLeaderWords = 3;
void setLeaderWords(const uint64_t (&w)[kLeaderWords]);
bool leaderWords(uint64_t (&w)[kLeaderWords]);

// Whether this rank shares a segment with anyone (false when alone on its node).
bool active();
// Whether a job rank is reachable through this segment.
bool reaches(int jobRank);
// The transport table (valid after connect()).
const Transport* transport();
// Whether single-copy reads (CMA) work on this node.
bool cmaWorks();
// The protocol limits of messages through shm (the engine fills them).
ProtocolLimits* limits();

// The table's hot entries, callable directly by the engine (no indirection):
// poll() delivers waiting records; send() reserves, copies `bytes` of
// contiguous payload and publishes in one step (false when the ring is full).
int poll(DeliverFn deliver);
bool send(int peerJob, const MsgHeader& hdr, const void* data, size_t bytes);

}  // namespace loom::p2p::shm
