#include "p2p/ofi/ofi_transport.h"

#include <fcntl.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <span>
#include <unordered_map>

#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "p2p/ofi/ofi_lib.h"
#include "p2p/ofi/ofi_liveness.h"

namespace loom::p2p::ofi {
namespace {

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
  enum Type : uint8_t { kRecv, kSend, kRead } type = kSend;
  bool inject = false;  // a send small enough for fi_inject (no completion)
  int peer = -1;        // job rank (sends, reads)
  char* buf = nullptr;  // record buffer, or the read's destination
  size_t len = 0;       // bytes to send, buffer size (receive), bytes to read
  uint64_t remoteAddr = 0;
  uint64_t remoteKey = 0;
  void* engineCtx = nullptr;               // read: handed back in readDone
  struct Registration* localReg = nullptr;  // read, where FI_MR_LOCAL asks for it
};

// A memory registration, shared by operations on the same range while any
// of them is in flight (a bcast root exposing one buffer to several
// receivers registers it once). It lives exactly as long as those
// operations: MPI forbids freeing a buffer under a pending operation, so no
// registration can outlive its memory. Providers that pin memory (verbs,
// efa) keep their own cache of registrations behind this, invalidated by
// libfabric's memory monitor.
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
  std::vector<std::unique_ptr<Op>> reads;
  std::vector<Op*> freeReads;
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
State S;

std::string peerName(int rank) {
  std::string s = "rank " + std::to_string(rank);
  if (rank >= 0 && rank < static_cast<int>(S.cfg.nodeOfRank.size())) {
    int node = S.cfg.nodeOfRank[rank];
    if (node >= 0 && node < static_cast<int>(S.cfg.nodeNames.size()))
      s += " on node " + S.cfg.nodeNames[node];
  }
  return s;
}

// A peer is gone or the network failed under an operation: nothing can
// complete the communication correctly, so the job ends, saying with whom.
[[noreturn]] void fatal(const std::string& what) {
  S.cfg.boot->abort(MPI_ERR_OTHER, "libfabric (" + S.provider + "): " + what);
}

std::string cqError(const fi_cq_err_entry& e) {
  char buf[256] = {};
  const char* s = fi_cq_strerror(S.cq, e.prov_errno, e.err_data, buf, sizeof buf);
  return errorText(*S.lib, e.err) + (s && *s ? std::string(", ") + s : std::string());
}

// ---- memory registrations ----

Registration* acquire(const void* addr, size_t len, uint64_t access) {
  for (Registration* r : S.regs)
    if (r->addr == addr && r->len == len && r->access == access) {
      ++r->refs;
      return r;
    }
  fid_mr* mr = nullptr;
  const uint64_t key = (S.mrMode & FI_MR_PROV_KEY) ? 0 : S.nextKey++;
  int rc = fi_mr_reg(S.domain, addr, len, access, 0, key, 0, &mr, nullptr);
  if (rc == 0 && (S.mrMode & FI_MR_ENDPOINT)) {
    rc = fi_mr_bind(mr, &S.ep->fid, 0);
    if (rc == 0) rc = fi_mr_enable(mr);
  }
  if (rc != 0) {
    if (mr) fi_close(&mr->fid);
    log::debug("p2p", "ofi: registering %zu bytes failed: %s", len, errorText(*S.lib, rc).c_str());
    return nullptr;
  }
  auto* r = new Registration{addr, len, access, mr, 1};
  S.regs.push_back(r);
  return r;
}

void release(Registration* r) {
  if (--r->refs > 0) return;
  fi_close(&r->mr->fid);
  S.regs.erase(std::find(S.regs.begin(), S.regs.end(), r));
  delete r;
}

// ---- posting ----

fi_addr_t addrOf(int rank) { return S.addrOf[rank]; }

int rankOf(fi_addr_t a) {
  if (a == FI_ADDR_NOTAVAIL || a == FI_ADDR_UNSPEC) return -1;
  if (S.addrIsRank) return a < S.addrOf.size() ? static_cast<int>(a) : -1;
  auto it = S.rankOfAddr.find(a);
  return it == S.rankOfAddr.end() ? -1 : it->second;
}

ssize_t post(Op* op) {
  switch (op->type) {
    case Op::kRecv:
      return fi_recv(S.ep, op->buf, op->len, S.slabDesc, FI_ADDR_UNSPEC, &op->ctx);
    case Op::kSend:
      if (op->inject) return fi_inject(S.ep, op->buf, op->len, addrOf(op->peer));
      return fi_send(S.ep, op->buf, op->len, S.slabDesc, addrOf(op->peer), &op->ctx);
    case Op::kRead:
      return fi_read(S.ep, op->buf, op->len, op->localReg ? fi_mr_desc(op->localReg->mr) : nullptr,
                     addrOf(op->peer), op->remoteAddr, op->remoteKey, &op->ctx);
  }
  return -FI_EINVAL;
}

// An operation was accepted by libfabric.
void posted(Op* op) {
  if (op->type != Op::kSend) return;
  if (op->inject)
    S.freeTx.push_back(op);  // fi_inject copied it: the buffer is free again
  else
    ++S.sendsInFlight;
}

void failPost(Op* op, ssize_t rc) {
  const char* what = op->type == Op::kRecv ? "posting a receive buffer"
                     : op->type == Op::kSend ? "sending to "
                                             : "reading from ";
  fatal(std::string(what) + (op->type == Op::kRecv ? "" : peerName(op->peer)) + " failed: " +
        errorText(*S.lib, static_cast<int>(rc)));
}

// Posts now, or behind the operations already waiting (libfabric answers
// -FI_EAGAIN while its queues are full or a connection is being set up).
void submit(Op* op) {
  if (S.backlog.empty()) {
    ssize_t rc = post(op);
    if (rc == 0) {
      posted(op);
      return;
    }
    if (rc != -FI_EAGAIN) failPost(op, rc);
  }
  S.backlog.push_back(op);
}

int drainBacklog() {
  int n = 0;
  while (!S.backlog.empty()) {
    Op* op = S.backlog.front();
    ssize_t rc = post(op);
    if (rc == -FI_EAGAIN) break;
    if (rc != 0) failPost(op, rc);
    S.backlog.pop_front();
    posted(op);
    ++n;
  }
  return n;
}

Op* newRead() {
  if (S.freeReads.empty()) {
    S.reads.push_back(std::make_unique<Op>());
    S.freeReads.push_back(S.reads.back().get());
  }
  Op* op = S.freeReads.back();
  S.freeReads.pop_back();
  *op = Op{};
  op->type = Op::kRead;
  return op;
}

// ---- completions ----

void markTalked(int peer) {
  if (!S.talked[peer]) {
    S.talked[peer] = 1;
    S.talkedList.push_back(peer);
  }
}

void onReceived(Op* op, size_t len, fi_addr_t from, const Handlers& h) {
  const int src = rankOf(from);
  Prefix pre{};
  if (len >= kPrefix) std::memcpy(&pre, op->buf, kPrefix);
  if (src < 0 || len < kPrefix || pre.secret != S.secretOf[src] ||
      (len < kWireHeader && len != kPrefix)) {
    // Not a rank of this job (or not speaking as one): never matched.
    if (S.dropped++ == 0)
      log::warn("ofi: dropped a %zu-byte message from a process outside the job "
                "(further ones are counted, not logged)", len);
  } else {
    markTalked(src);
    S.credits[src] += pre.credits;
    if (len > kPrefix) {
      if (++S.owed[src] == S.window / 2) S.owedList.push_back(src);
      MsgHeader hdr;
      std::memcpy(&hdr, op->buf + kPrefix, sizeof hdr);
      h.deliver(src, hdr, op->buf + kWireHeader, len - kWireHeader);
    }
  }
  submit(op);  // the buffer takes the next record
}

// A record of the prefix alone: returns what this rank owes `peer` (maybe
// nothing: then it is a ping). Needs no credit.
void sendCreditRecord(int peer) {
  Op* op = S.freeTx.back();
  S.freeTx.pop_back();
  op->peer = peer;
  Prefix pre{S.secret, S.owed[peer], 0};
  S.owed[peer] = 0;
  std::memcpy(op->buf, &pre, kPrefix);
  op->len = kPrefix;
  op->inject = op->len <= S.injectMax;
  submit(op);
}

// Returns credits to peers owed half a window that no record of ours has
// carried back: a credit record each (it needs no credit itself, and at
// most one goes per half window received, so they cannot flood).
int returnCredits() {
  int n = 0;
  while (!S.owedList.empty() && !S.freeTx.empty() && S.backlog.empty()) {
    const int peer = S.owedList.back();
    S.owedList.pop_back();
    if (S.owed[peer] < S.window / 2) continue;  // a record carried them meanwhile
    sendCreditRecord(peer);
    ++n;
  }
  return n;
}

// Watches the peers while this rank waits (ofi_liveness.h). Called every
// few thousand idle polls and from idle waits, so the clock is read rarely.
void checkLiveness() {
  const auto now = std::chrono::steady_clock::now();
  if (S.backlog.empty()) {
    S.stuckOp = nullptr;
  } else if (S.backlog.front() != S.stuckOp) {
    S.stuckOp = S.backlog.front();
    S.stuckSince = now;
  }
  int dead = -1;
  std::string why = S.live.check(S.lastEvent, S.talkedList, S.stuckOp ? S.stuckOp->peer : -1,
                                 S.stuckSince, &dead);
  if (!why.empty()) fatal(peerName(dead) + " " + why);
  if (S.live.probes() || S.stuckOp || now - S.lastEvent < std::chrono::seconds(1) ||
      now - S.lastPing < std::chrono::seconds(1))
    return;
  S.lastPing = now;
  for (int peer : S.talkedList) {
    if (S.freeTx.empty() || !S.backlog.empty()) break;
    sendCreditRecord(peer);
  }
}

void onCompleted(Op* op, size_t len, fi_addr_t from, const Handlers& h) {
  switch (op->type) {
    case Op::kRecv:
      onReceived(op, len, from, h);
      return;
    case Op::kSend:
      --S.sendsInFlight;
      S.freeTx.push_back(op);
      return;
    case Op::kRead: {
      void* ctx = op->engineCtx;
      size_t bytes = op->len;
      if (op->localReg) release(op->localReg);
      S.freeReads.push_back(op);
      h.readDone(ctx, bytes, MPI_SUCCESS);
      return;
    }
  }
}

void onFailed(const fi_cq_err_entry& e) {
  auto* op = static_cast<Op*>(e.op_context);
  if (op && op->type == Op::kRecv) {
    // A message too large for our buffers (FI_ETRUNC) comes from no rank
    // of this job: every record fits. Drop it, keep the buffer.
    if (S.dropped++ == 0)
      log::warn("ofi: dropped a message that fits no receive buffer: %s", cqError(e).c_str());
    if (S.open) submit(op);
    return;
  }
  if (!op) fatal("error completion without an operation: " + cqError(e));
  fatal(std::string(op->type == Op::kSend ? "sending to " : "reading from ") + peerName(op->peer) +
        " failed: " + cqError(e) + " (did that rank die or its node lose the network?)");
}

int pollCq(const Handlers& h) {
  int events = 0;
  fi_cq_data_entry entries[16];
  fi_addr_t from[16];
  if (S.stashed) [[unlikely]] {
    const int n = S.stashed;
    S.stashed = 0;
    std::memcpy(entries, S.stash, n * sizeof entries[0]);
    std::memcpy(from, S.stashFrom, n * sizeof from[0]);
    for (int i = 0; i < n; ++i)
      onCompleted(static_cast<Op*>(entries[i].op_context), entries[i].len, from[i], h);
    events += n;
  }
  for (int batch = 0; batch < 4; ++batch) {
    ssize_t n = fi_cq_readfrom(S.cq, entries, 16, from);
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry e{};
      if (fi_cq_readerr(S.cq, &e, 0) > 0) onFailed(e);
      ++events;
      continue;
    }
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i)
      onCompleted(static_cast<Op*>(entries[i].op_context), entries[i].len, from[i], h);
    events += static_cast<int>(n);
    if (n < 16) break;
  }
  if (!S.backlog.empty()) events += drainBacklog();
  if (!S.owedList.empty()) events += returnCredits();
  // The clock is read when a rank turns idle (16 empty polls: it is
  // waiting anyway) and every 4096 empty polls after that.
  if (events) {
    S.idlePolls = 0;
  } else if (++S.idlePolls == 16) {
    S.lastEvent = std::chrono::steady_clock::now();
  } else if (S.idlePolls % 4096 == 0) {
    checkLiveness();
  }
  return events;
}

// ---- the transport table ----

size_t maxPayload() { return S.limits.maxPayload; }

void* reserve(int peer, size_t payloadBytes) {
  // Behind a backlog nothing new is taken: records to a peer keep their
  // order, and a flooding sender waits in the engine's queue instead of
  // growing ours.
  if (!S.backlog.empty() || S.freeTx.empty() || S.credits[peer] == 0 ||
      payloadBytes > S.limits.maxPayload)
    return nullptr;
  Op* op = S.freeTx.back();
  S.freeTx.pop_back();
  op->peer = peer;
  S.reserved = op;
  return op->buf + kWireHeader;
}

void commit(int peer, const MsgHeader& hdr, size_t payloadBytes) {
  Op* op = S.reserved;
  S.reserved = nullptr;
  op->peer = peer;
  markTalked(peer);
  --S.credits[peer];
  Prefix pre{S.secret, S.owed[peer], 0};  // credits ride along for free
  S.owed[peer] = 0;
  std::memcpy(op->buf, &pre, kPrefix);
  std::memcpy(op->buf + kPrefix, &hdr, sizeof hdr);
  op->len = kWireHeader + payloadBytes;
  op->inject = op->len <= S.injectMax;
  submit(op);
}

bool expose(int, const void* addr, size_t bytes, RemoteKey* key, void** handle) {
  Registration* r = acquire(addr, bytes, FI_REMOTE_READ);
  if (!r) return false;
  key->key = fi_mr_key(r->mr);
  // Without FI_MR_VIRT_ADDR (tcp, net) a target address is an offset into
  // the registration; with it, a virtual address (notes, section 4).
  key->addr = (S.mrMode & FI_MR_VIRT_ADDR) ? reinterpret_cast<uint64_t>(addr) : 0;
  *handle = r;
  return true;
}

void unexpose(void* handle) { release(static_cast<Registration*>(handle)); }

ReadResult read(int peer, const RemoteKey& key, uint64_t offset, void* local, size_t bytes,
                void* ctx) {
  Op* op = newRead();
  if (S.mrMode & FI_MR_LOCAL) {
    op->localReg = acquire(local, bytes, FI_READ);
    if (!op->localReg) {
      S.freeReads.push_back(op);
      return ReadResult::kUnavailable;
    }
  }
  op->peer = peer;
  op->buf = static_cast<char*>(local);
  op->len = bytes;
  op->remoteAddr = key.addr + offset;
  op->remoteKey = key.key;
  op->engineCtx = ctx;
  submit(op);
  return ReadResult::kStarted;
}

int poll(const Handlers& h) { return pollCq(h); }

const Transport kOfi = {"ofi", &S.limits, maxPayload, reserve, commit, expose, unexpose, read, poll};

// ---- waiting ----

// An oversubscribed rank's idle wait: sleep until libfabric has something,
// on the completion queue's fd (rxm; fi_trywait says when that is safe) or
// in fi_cq_sread (net, whose fd is always ready: notes, section 5). Ranks
// with shared-memory peers only yield: their rings have no fd to wake on.
// Bounded: a missed wake-up costs at most 20 ms, never a hang.
void idleWait() {
  checkLiveness();
  if (S.cfg.hasLocalPeers || !S.backlog.empty() || S.stashed) {
    sched_yield();
    return;
  }
  if (S.epollFd >= 0) {
    fid* f = &S.cq->fid;
    if (fi_trywait(S.fabric, &f, 1) != FI_SUCCESS) return;
    epoll_event ev;
    (void)epoll_wait(S.epollFd, &ev, 1, 20);
  } else if (S.sread) {
    ssize_t n = fi_cq_sreadfrom(S.cq, S.stash, 16, S.stashFrom, nullptr, 20);
    if (n > 0) S.stashed = static_cast<int>(n);
    // An error entry (-FI_EAVAIL) stays queued for the next poll.
  } else {
    sched_yield();
  }
}

// ---- set-up ----

// Tests cross a real veth link by putting each simulated node's ranks in a
// network namespace of its own: LOOM_OFI_NETNS names it (%n: the node id).
// Only this thread moves; PMIx's connection, made before, stays where it was.
Status enterNetns(int nodeId) {
  std::string path = params::getString("LOOM_OFI_NETNS");
  if (path.empty()) return Status::ok();
  size_t at = path.find("%n");
  if (at != std::string::npos) path.replace(at, 2, std::to_string(nodeId));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return errorf(MPI_ERR_OTHER, "LOOM_OFI_NETNS: cannot open %s: %s", path.c_str(),
                  std::strerror(errno));
  int rc = setns(fd, CLONE_NEWNET);
  int e = errno;
  ::close(fd);
  if (rc != 0)
    return errorf(MPI_ERR_OTHER, "LOOM_OFI_NETNS: cannot enter %s: %s", path.c_str(),
                  std::strerror(e));
  return Status::ok();
}

size_t sizeParam(const char* name, size_t lo) {
  return std::max<size_t>(lo, static_cast<size_t>(std::max<int64_t>(0, params::getInt(name))));
}

// A size parameter whose default, "auto", depends on the provider.
size_t autoSizeParam(const char* name, size_t automatic, size_t lo) {
  std::string v = params::getString(name);
  return v.empty() || v == "auto" ? automatic : sizeParam(name, lo);
}

// Record buffers as large as the provider moves a message whole: rxm sends
// up to 16 KiB eagerly and segments anything larger through its bounce
// buffers (a 16 KiB message took 19.7 us against 6.8 for 8 KiB), net moves
// 64 KiB as one message (16 KiB 7.5 us, 64 KiB 17 us). 40 bytes of each
// buffer are the record's prefix and header.
size_t defaultBufferBytes(const std::string& provider) {
  if (provider == "net") return 65536 + 64;
  return 16384;
}

Status check(int rc, const char* what) {
  if (rc == 0) return Status::ok();
  return errorf(MPI_ERR_OTHER, "libfabric (%s): %s failed: %s", S.provider.c_str(), what,
                errorText(*S.lib, rc).c_str());
}

Status openEndpoint() {
  fi_info* info = S.info;
  S.provider = info->fabric_attr->prov_name ? info->fabric_attr->prov_name : "?";
  S.mrMode = info->domain_attr->mr_mode;
  S.injectMax = info->tx_attr->inject_size;
  LOOM_TRY(check(S.lib->fabric(info->fabric_attr, &S.fabric, nullptr), "fi_fabric"));
  LOOM_TRY(check(fi_domain(S.fabric, info, &S.domain, nullptr), "fi_domain"));
  fi_av_attr av{};
  av.type = FI_AV_TABLE;
  av.count = static_cast<size_t>(S.cfg.jobSize);
  LOOM_TRY(check(fi_av_open(S.domain, &av, &S.av, nullptr), "fi_av_open"));
  fi_cq_attr cq{};
  cq.format = FI_CQ_FORMAT_DATA;
  cq.size = S.rx.size() + S.tx.size() + 256;
  // Only rxm's fd really blocks; net's is always ready but its fi_cq_sread
  // blocks (notes, section 5). Where neither works, waits yield.
  const bool wantFd = S.provider.find("ofi_rxm") != std::string::npos;
  cq.wait_obj = wantFd ? FI_WAIT_FD : FI_WAIT_UNSPEC;
  if (fi_cq_open(S.domain, &cq, &S.cq, nullptr) != 0) {
    cq.wait_obj = FI_WAIT_NONE;
    LOOM_TRY(check(fi_cq_open(S.domain, &cq, &S.cq, nullptr), "fi_cq_open"));
  } else if (!wantFd) {
    S.sread = true;
  } else if (fi_control(&S.cq->fid, FI_GETWAIT, &S.cqFd) == 0) {
    S.epollFd = epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    if (S.epollFd < 0 || epoll_ctl(S.epollFd, EPOLL_CTL_ADD, S.cqFd, &ev) != 0) {
      if (S.epollFd >= 0) ::close(S.epollFd);
      S.epollFd = -1;
    }
  }
  LOOM_TRY(check(fi_endpoint(S.domain, info, &S.ep, nullptr), "fi_endpoint"));
  LOOM_TRY(check(fi_ep_bind(S.ep, &S.av->fid, 0), "fi_ep_bind(av)"));
  LOOM_TRY(check(fi_ep_bind(S.ep, &S.cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind(cq)"));
  return check(fi_enable(S.ep), "fi_enable");
}

Status makeBuffers() {
  S.slabBytes = (S.rx.size() + S.tx.size()) * S.bufBytes;
  S.slab = static_cast<char*>(std::aligned_alloc(4096, (S.slabBytes + 4095) / 4096 * 4096));
  if (!S.slab) return errorf(MPI_ERR_NO_MEM, "ofi: %zu bytes of buffers", S.slabBytes);
  if (S.mrMode & FI_MR_LOCAL) {
    Registration* r = acquire(S.slab, S.slabBytes, FI_SEND | FI_RECV);
    if (!r) return errorf(MPI_ERR_OTHER, "ofi: cannot register the record buffers");
    S.slabMr = r->mr;
    S.slabDesc = fi_mr_desc(r->mr);
  }
  char* p = S.slab;
  for (Op& op : S.rx) {
    op.type = Op::kRecv;
    op.buf = p;
    op.len = S.bufBytes;
    p += S.bufBytes;
  }
  for (Op& op : S.tx) {
    op.type = Op::kSend;
    op.buf = p;
    p += S.bufBytes;
    S.freeTx.push_back(&op);
  }
  for (Op& op : S.rx) submit(&op);
  return Status::ok();
}

}  // namespace

Status setup(const Config& cfg) {
  S = State();
  S.cfg = cfg;
  LOOM_TRY(enterNetns(cfg.nodeId));
  const auto t0 = std::chrono::steady_clock::now();
  LOOM_TRY(loadLib(&S.lib));
  LOOM_TRY(chooseProvider(*S.lib, params::getString("LOOM_OFI_PROVIDER"), &S.info));
  const double loadMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  S.provider = S.info->fabric_attr->prov_name ? S.info->fabric_attr->prov_name : "?";
  S.bufBytes = autoSizeParam("LOOM_OFI_BUFFER_BYTES", defaultBufferBytes(S.provider), 1024);
  S.rx.resize(sizeParam("LOOM_OFI_RX_BUFFERS", 8));
  S.tx.resize(sizeParam("LOOM_OFI_TX_BUFFERS", 8));
  LOOM_TRY(openEndpoint());
  S.open = true;
  LOOM_TRY(makeBuffers());

  char name[256];
  size_t len = sizeof name;
  LOOM_TRY(check(fi_getname(&S.ep->fid, name, &len), "fi_getname"));
  if (getrandom(&S.secret, sizeof S.secret, 0) != sizeof S.secret)
    S.secret = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
               (static_cast<uint64_t>(getpid()) << 32);
  // Published blob: secret, provider name and its NUL, endpoint name.
  S.myBlob.resize(kSecretBytes);
  std::memcpy(S.myBlob.data(), &S.secret, kSecretBytes);
  S.myBlob.insert(S.myBlob.end(), S.provider.begin(), S.provider.end());
  S.myBlob.push_back('\0');
  S.myBlob.insert(S.myBlob.end(), name, name + len);
  LOOM_TRY(cfg.boot->put("loom.ofi", std::as_bytes(std::span(S.myBlob))));
  if (log::enabled("p2p")) {
    char text[128] = "?";
    size_t textLen = sizeof text;
    fi_av_straddr(S.av, name, text, &textLen);
    log::debug("p2p", "ofi: endpoint %s", text);
  }

  ProtocolLimits& L = S.limits;
  L.maxPayload = (S.bufBytes - kWireHeader) / 64 * 64;
  L.eagerMax = std::min(autoSizeParam("LOOM_OFI_EAGER_MAX", L.maxPayload, 0), L.maxPayload);
  L.inlineMax = std::min(S.injectMax > kWireHeader ? S.injectMax - kWireHeader : 0, L.eagerMax);
  L.getMin = 0;
  L.get = true;
  L.rndv = parseRndv("LOOM_OFI_RNDV");
  L.readChunk = sizeParam("LOOM_OFI_RNDV_CHUNK", 4096);
  L.readDepth = static_cast<int>(sizeParam("LOOM_OFI_RNDV_DEPTH", 1));
  progress::setIdleWait(idleWait);
  log::debug("p2p", "ofi: provider %s (fabric %s, domain %s), libfabric loaded in %.0f ms, "
             "inject %zu B, mr_mode 0x%llx, records of %zu B, idle wait %s",
             S.provider.c_str(), S.info->fabric_attr->name ? S.info->fabric_attr->name : "?",
             S.info->domain_attr->name ? S.info->domain_attr->name : "?", loadMs, S.injectMax,
             static_cast<unsigned long long>(S.mrMode), S.bufBytes,
             cfg.hasLocalPeers ? "yield (shm peers)"
             : S.epollFd >= 0  ? "epoll on the CQ fd"
             : S.sread         ? "fi_cq_sread"
                               : "yield");
  return Status::ok();
}

Status connect() {
  const int n = S.cfg.jobSize;
  const size_t nameAt = kSecretBytes + S.provider.size() + 1;
  const size_t nameLen = S.myBlob.size() - nameAt;
  std::vector<char> names(static_cast<size_t>(n) * nameLen);
  S.secretOf.assign(n, 0);
  S.window = static_cast<uint32_t>(std::max<size_t>(2, sizeParam("LOOM_OFI_CREDITS", 2)));
  S.credits.assign(n, S.window);
  S.owed.assign(n, 0);
  S.talked.assign(n, 0);
  S.lastEvent = S.lastPing = std::chrono::steady_clock::now();
  for (int r = 0; r < n; ++r) {
    std::vector<std::byte> got;
    if (r == S.cfg.myJobRank) {
      auto b = std::as_bytes(std::span(S.myBlob));
      got.assign(b.begin(), b.end());
    } else {
      LOOM_TRY(S.cfg.boot->get(r, "loom.ofi", &got));
    }
    const char* p = reinterpret_cast<const char*>(got.data());
    if (got.size() != S.myBlob.size() ||
        std::memcmp(p + kSecretBytes, S.provider.c_str(), S.provider.size() + 1) != 0) {
      std::string theirs =
          got.size() > kSecretBytes
              ? std::string(p + kSecretBytes, strnlen(p + kSecretBytes, got.size() - kSecretBytes))
              : "?";
      return errorf(MPI_ERR_OTHER,
                    "%s uses libfabric provider %s, this rank %s: set LOOM_OFI_PROVIDER to "
                    "one provider every node has",
                    peerName(r).c_str(), theirs.c_str(), S.provider.c_str());
    }
    std::memcpy(&S.secretOf[r], p, kSecretBytes);
    std::memcpy(names.data() + static_cast<size_t>(r) * nameLen, p + nameAt, nameLen);
  }
  // IP socket addresses can be probed for liveness; other formats cannot.
  std::vector<std::vector<char>> probeAddrs(n);
  const uint32_t fmt = S.info->addr_format;
  if (fmt == FI_SOCKADDR_IN || fmt == FI_SOCKADDR_IN6 || fmt == FI_SOCKADDR) {
    for (int r = 0; r < n; ++r) {
      const char* a = names.data() + static_cast<size_t>(r) * nameLen;
      sa_family_t family;
      std::memcpy(&family, a, sizeof family);
      if (family == AF_INET || family == AF_INET6) probeAddrs[r].assign(a, a + nameLen);
    }
  }
  S.live.configure(std::move(probeAddrs),
                   static_cast<double>(std::max<int64_t>(0, params::getInt("LOOM_OFI_PEER_TIMEOUT"))));
  S.addrOf.assign(n, FI_ADDR_NOTAVAIL);
  int inserted = fi_av_insert(S.av, names.data(), static_cast<size_t>(n), S.addrOf.data(), 0, nullptr);
  if (inserted != n)
    return errorf(MPI_ERR_OTHER, "libfabric (%s): fi_av_insert took %d of %d addresses",
                  S.provider.c_str(), inserted, n);
  S.addrIsRank = true;
  for (int r = 0; r < n; ++r) {
    if (S.addrOf[r] != static_cast<fi_addr_t>(r)) S.addrIsRank = false;
    S.rankOfAddr[S.addrOf[r]] = r;
  }
  if (S.addrIsRank) S.rankOfAddr.clear();
  return Status::ok();
}

bool idle() { return S.backlog.empty() && S.sendsInFlight == 0; }

void finalize() {
  if (!S.open) return;
  S.open = false;
  progress::setIdleWait(nullptr);
  if (S.ep) fi_close(&S.ep->fid);
  for (Registration* r : S.regs) {
    fi_close(&r->mr->fid);
    delete r;
  }
  S.regs.clear();
  if (S.cq) fi_close(&S.cq->fid);
  if (S.av) fi_close(&S.av->fid);
  if (S.domain) fi_close(&S.domain->fid);
  if (S.fabric) fi_close(&S.fabric->fid);
  if (S.epollFd >= 0) ::close(S.epollFd);
  if (S.info) S.lib->freeinfo(S.info);
  std::free(S.slab);
  if (S.dropped)
    log::debug("p2p", "ofi: %llu messages from outside the job were dropped",
               static_cast<unsigned long long>(S.dropped));
  S = State();
}

const Transport* transport() { return &kOfi; }

}  // namespace loom::p2p::ofi
