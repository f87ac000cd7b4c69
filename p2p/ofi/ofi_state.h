// The libfabric transport's state and internals, shared by its data path
// (ofi_transport.cc: posting, completions, credits, the transport table)
// and its set-up (ofi_setup.cc). Not for use outside p2p/ofi/.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "p2p/ofi/ofi_lib.h"
#include "p2p/ofi/ofi_liveness.h"
#include "p2p/ofi/ofi_transport.h"

namespace loom::p2p::ofi::detail {


// A record on the wire: a prefix (the sender's secret, and credits it
// returns), then the engine's header and the payload. A prefix alone is a
// credit record, never delivered to the engine.
struct Prefix {
  uint64_t secret;
  uint32_t credits;   // records of ours the sender consumed since its last return
  uint32_t reserved;
};
constexpr size_t kPrefix = sizeof(Prefix);
constexpr size_t kWireHeader = kPrefix + sizeof(MsgHeader);
constexpr size_t kSecretBytes = sizeof(uint64_t);

// One operation handed to libfabric. Its fi_context2 comes first: libfabric
// hands that address back in the completion.
struct Op {
  fi_context2 ctx;
  enum Type : uint8_t { kRecv, kSend, kRead, kWrite } type = kSend;
  bool inject = false;  // a send small enough for fi_inject (no completion)
  int peer = -1;        // job rank (sends, reads, writes)
  char* buf = nullptr;  // record buffer, the read's destination or the write's source
  size_t len = 0;       // bytes to send, buffer size (receive), bytes to read or write
  uint64_t remoteAddr = 0;
  uint64_t remoteKey = 0;
  OneSidedDoneFn done = nullptr;  // read, write: called with doneCtx at the end
  void* doneCtx = nullptr;
  struct Registration* localReg = nullptr;  // read, write, where FI_MR_LOCAL asks for it
};

// A memory registration, shared by operations on the same range while any
// of them is in flight (a bcast root exposing one buffer to several
// receivers registers it once). It lives exactly as long as those
// operations: MPI forbids freeing a buffer under a pending operation, so no
// registration can outlive its memory. A window's memory (exposed for
// reads and writes by the rma layer) stays registered until MPI_Win_free.
// Providers that pin memory (verbs, efa) keep their own cache of
// registrations behind this, invalidated by libfabric's memory monitor.
struct Registration {
  const void* addr;
  size_t len;
  uint64_t access;
  fid_mr* mr;
  int refs;
};

struct State {
  Config cfg;
  const Lib* lib = nullptr;
  fi_info* info = nullptr;
  std::string provider;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_av* av = nullptr;
  fid_cq* cq = nullptr;
  fid_ep* ep = nullptr;
  int cqFd = -1;       // the completion queue's wait fd (tcp;ofi_rxm)
  int epollFd = -1;
  bool sread = false;  // the queue blocks in fi_cq_sread instead (net)
  // Completions fi_cq_sread returned while an idle wait slept; the next
  // poll handles them first.
  fi_cq_data_entry stash[16];
  fi_addr_t stashFrom[16];
  int stashed = 0;
  uint64_t mrMode = 0;
  size_t injectMax = 0;
  size_t bufBytes = 0;
  char* slab = nullptr;         // every record buffer
  size_t slabBytes = 0;
  fid_mr* slabMr = nullptr;     // where FI_MR_LOCAL asks for it
  void* slabDesc = nullptr;
  std::vector<Op> rx, tx;
  std::vector<Op*> freeTx;
  std::vector<std::unique_ptr<Op>> oneSided;  // reads and writes
  std::vector<Op*> freeOneSided;
  bool canWrite = false;        // the provider took FI_WRITE|FI_REMOTE_WRITE
  size_t maxMsg = 0;            // largest single read or write
  std::deque<Op*> backlog;      // posts that met -FI_EAGAIN, in order
  Op* reserved = nullptr;
  int sendsInFlight = 0;        // fi_send posted, completion not yet read
  uint64_t secret = 0;
  std::vector<char> myBlob;
  std::vector<uint64_t> secretOf;          // by job rank
  // Flow control, per peer (by job rank): records we may still send to it,
  // and records of its we consumed and have not returned yet. A receiving
  // provider may buffer whatever arrives (rxm reads every socket dry into
  // bounce buffers: 100 000 small messages took 480 MB), so no sender has
  // more than LOOM_OFI_CREDITS records unconsumed at a peer.
  std::vector<uint32_t> credits;
  std::vector<uint32_t> owed;
  std::vector<int> owedList;               // peers owed at least half a window
  uint32_t window = 0;
  std::vector<fi_addr_t> addrOf;           // by job rank
  bool addrIsRank = true;                  // fi_addr == job rank (AV table)
  std::unordered_map<fi_addr_t, int> rankOfAddr;
  std::vector<Registration*> regs;
  uint64_t nextKey = 1;
  uint64_t dropped = 0;         // records from strangers
  // Liveness (ofi_liveness.h): a dead peer or a node cut off ends the job,
  // naming the peer, instead of leaving this rank waiting for ever. Where
  // the peers cannot be probed, a rank that heard nothing for a second also
  // pings them (a credit record: the provider reports an error, or keeps
  // refusing, once the peer is gone).
  Liveness live;
  std::vector<uint8_t> talked;  // by job rank: records went either way
  std::vector<int> talkedList;
  uint32_t idlePolls = 0;
  std::chrono::steady_clock::time_point lastEvent;  // about when the rank turned idle
  std::chrono::steady_clock::time_point lastPing, stuckSince;
  const Op* stuckOp = nullptr;
  bool open = false;
  ProtocolLimits limits;
};
extern State S;

// Data path (ofi_transport.cc), used by the set-up too.
std::string peerName(int rank);
Registration* acquire(const void* addr, size_t len, uint64_t access);
void submit(Op* op);
void idleWait();
extern const Transport kOfi;

}  // namespace loom::p2p::ofi::detail
