// The libfabric transport's data path: posting with a backlog for -FI_EAGAIN,
// completions, credits, liveness, and the Transport table (set-up and
// teardown are in ofi_setup.cc, the shared state in ofi_state.h).
#include "p2p/ofi/ofi_transport.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <sched.h>
#include <sys/epoll.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "core/log.h"
#include "p2p/ofi/ofi_state.h"

namespace loom::p2p::ofi {
namespace detail {

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
    case Op::kWrite: {
      // FI_DELIVERY_COMPLETE: the completion comes once the data is in the
      // target's memory (the default, transmit complete, only says it left
      // this rank), so a flush that waits for it keeps MPI's promise. It
      // costs the provider an acknowledgement from the target.
      iovec iov{op->buf, op->len};
      void* desc = op->localReg ? fi_mr_desc(op->localReg->mr) : nullptr;
      fi_rma_iov rma{op->remoteAddr, op->len, op->remoteKey};
      fi_msg_rma msg{};
      msg.msg_iov = &iov;
      msg.desc = &desc;
      msg.iov_count = 1;
      msg.addr = addrOf(op->peer);
      msg.rma_iov = &rma;
      msg.rma_iov_count = 1;
      msg.context = &op->ctx;
      return fi_writemsg(S.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    }
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
  const char* what = op->type == Op::kRecv    ? "posting a receive buffer"
                     : op->type == Op::kSend  ? "sending to "
                     : op->type == Op::kWrite ? "writing to "
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

Op* newOneSided(Op::Type type) {
  if (S.freeOneSided.empty()) {
    S.oneSided.push_back(std::make_unique<Op>());
    S.freeOneSided.push_back(S.oneSided.back().get());
  }
  Op* op = S.freeOneSided.back();
  S.freeOneSided.pop_back();
  *op = Op{};
  op->type = type;
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
    case Op::kRead:
    case Op::kWrite: {
      const OneSidedDoneFn done = op->done;
      void* ctx = op->doneCtx;
      const size_t bytes = op->len;
      if (op->localReg) release(op->localReg);
      S.freeOneSided.push_back(op);
      done(ctx, bytes, MPI_SUCCESS);
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
  // A read or write outside what the peer registered cannot come from Loom
  // (the rma layer checks every range at the origin), so any failure is
  // the network's or the peer's, like a failed send.
  fatal(std::string(op->type == Op::kSend    ? "sending to "
                    : op->type == Op::kWrite ? "writing to "
                                             : "reading from ") +
        peerName(op->peer) + " failed: " + cqError(e) +
        " (did that rank die or its node lose the network?)");
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

bool expose(int, const void* addr, size_t bytes, unsigned access, RemoteKey* key, void** handle) {
  if ((access & kExposeWrite) && !S.canWrite) return false;
  Registration* r =
      acquire(addr, bytes, FI_REMOTE_READ | ((access & kExposeWrite) ? FI_REMOTE_WRITE : 0));
  if (!r) return false;
  key->key = fi_mr_key(r->mr);
  // Without FI_MR_VIRT_ADDR (tcp, net) a target address is an offset into
  // the registration; with it, a virtual address (notes, section 4).
  key->addr = (S.mrMode & FI_MR_VIRT_ADDR) ? reinterpret_cast<uint64_t>(addr) : 0;
  *handle = r;
  return true;
}

void unexpose(void* handle) { release(static_cast<Registration*>(handle)); }

// Posts a read or write of `bytes` between `local` and `offset` in the
// peer's region `key`.
OneSidedResult startOneSided(Op::Type type, int peer, const RemoteKey& key, uint64_t offset,
                             void* local, size_t bytes, OneSidedDoneFn done, void* ctx) {
  if (bytes > S.maxMsg) return OneSidedResult::kUnavailable;
  Op* op = newOneSided(type);
  if (S.mrMode & FI_MR_LOCAL) {
    op->localReg = acquire(local, bytes, type == Op::kRead ? FI_READ : FI_WRITE);
    if (!op->localReg) {
      S.freeOneSided.push_back(op);
      return OneSidedResult::kUnavailable;
    }
  }
  op->peer = peer;
  op->buf = static_cast<char*>(local);
  op->len = bytes;
  // key.addr is the region's virtual address with FI_MR_VIRT_ADDR, else 0
  // (expose), so this is an address or an offset as the provider wants.
  op->remoteAddr = key.addr + offset;
  op->remoteKey = key.key;
  op->done = done;
  op->doneCtx = ctx;
  markTalked(peer);
  submit(op);
  return OneSidedResult::kStarted;
}

OneSidedResult read(int peer, const RemoteKey& key, uint64_t offset, void* local, size_t bytes,
                    OneSidedDoneFn done, void* ctx) {
  return startOneSided(Op::kRead, peer, key, offset, local, bytes, done, ctx);
}

OneSidedResult write(int peer, const RemoteKey& key, uint64_t offset, const void* local,
                     size_t bytes, OneSidedDoneFn done, void* ctx) {
  if (!S.canWrite) return OneSidedResult::kUnavailable;
  // libfabric only reads `local` for a write (FI_WRITE access).
  return startOneSided(Op::kWrite, peer, key, offset, const_cast<void*>(local), bytes, done, ctx);
}

int poll(const Handlers& h) { return pollCq(h); }

extern const Transport kOfi;
const Transport kOfi = {"ofi",  &S.limits, maxPayload, reserve, commit,
                        expose, unexpose,  read,       write,   poll};

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

}  // namespace detail

using detail::S;

bool idle() { return S.backlog.empty() && S.sendsInFlight == 0; }

const Transport* transport() { return &detail::kOfi; }

}  // namespace loom::p2p::ofi
