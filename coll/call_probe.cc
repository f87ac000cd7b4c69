#include "coll/call_probe.h"

#include <algorithm>
#include <array>
#include <deque>
#include <utility>
#include <vector>

#include "coll/comm_info.h"
#include "coll/move_util.h"
#include "core/log.h"
#include "p2p/p2p.h"

namespace loom::coll {

namespace {

// What a probe carries: the call's collective tag and the asker's signature.
struct ProbeMsg {
  uint32_t tag;
  uint16_t sig;
  uint16_t reserved;
};

}  // namespace

struct CallLog {
  Comm* comm = nullptr;
  Request* standing = nullptr;  // the control channel's receive
  ProbeMsg in{};
  bool closing = false;
  std::vector<std::pair<int, uint16_t>> inFlight;   // (tag, signature)
  std::array<std::pair<int, uint16_t>, 64> done{};  // the last calls, a ring
  size_t doneNext = 0;
  struct Early {
    int tag;
    uint16_t sig;
    int src;
  };
  std::deque<Early> early;  // probes of calls this rank has not made yet
};

namespace {

constexpr size_t kEarlyMax = 64;

// Sends without keeping the request: the engine recycles it when done.
void fireAndForget(Request* r) {
  if (!r) return;
  if (r->complete)
    Request::release(r);
  else
    r->userFreed = true;
}

// An empty message of call `tag` carrying this rank's signature: where the
// peer's call has another, its receive (or its look at what arrived) fails.
void answer(Comm* comm, int peer, int tag, uint16_t mine) {
  Request* r = nullptr;
  if (p2p::isend(nullptr, 0, move::byteType(), peer, tag, comm, SendMode::kStandard,
                 Channel::kColl, &r, mine)
          .isOk())
    fireAndForget(r);
}

uint16_t lookup(const CallLog& l, int tag) {
  for (const auto& [t, s] : l.inFlight)
    if (t == tag) return s;
  for (const auto& [t, s] : l.done)
    if (s && t == tag) return s;
  return 0;
}

void onProbe(Request* r);

// (Re)posts the standing receive; handles probes that were already there.
// The receive must not keep its communicator alive (the communicator's
// teardown is what cancels it), so it gives back the reference the engine
// takes for a pending receive.
void post(CallLog& l) {
  Request* r = l.standing;
  Status st = r ? p2p::start(r)
                : p2p::irecv(&l.in, sizeof l.in, move::byteType(), MPI_ANY_SOURCE, MPI_ANY_TAG,
                             l.comm, Channel::kCtl, &r);
  if (!st.isOk()) return;  // no probes answered on this communicator: checks only
  l.standing = r;
  r->owner = &l;
  r->onComplete = onProbe;
  if (r->complete) {
    onProbe(r);
  } else if (r->holdsRefs) {
    r->holdsRefs = false;
    Comm::release(r->comm);
    if (r->type && !r->type->isPredefined()) r->type->release();
  }
}

void onProbe(Request* r) {
  auto& l = *static_cast<CallLog*>(r->owner);
  if (r->cancelled || l.closing) return;
  const int src = r->statusSource;
  if (r->bytes == static_cast<int64_t>(sizeof(ProbeMsg)) && src >= 0) {
    const ProbeMsg m = l.in;
    const uint16_t mine = lookup(l, static_cast<int>(m.tag));
    log::debug("coll", "probe from rank %d of call %u (0x%04x); this rank's: 0x%04x", src, m.tag,
               m.sig, mine);
    if (mine && mine != m.sig) {
      answer(l.comm, src, static_cast<int>(m.tag), mine);
    } else if (!mine) {
      if (l.early.size() == kEarlyMax) l.early.pop_front();
      l.early.push_back({static_cast<int>(m.tag), m.sig, src});
    }
  }
  post(l);
}

CallLog& logOf(Comm* comm) {
  CommInfo& info = commInfo(comm);
  if (!info.calls) {
    info.calls = new CallLog;
    info.calls->comm = comm;
    post(*info.calls);
  }
  return *info.calls;
}

void freeProbe(Request* r) { delete static_cast<ProbeMsg*>(r->owner); }

}  // namespace

void callStarted(Comm* comm, int tag, uint16_t sig) {
  CallLog& l = logOf(comm);
  l.inFlight.emplace_back(tag, sig);
  for (auto it = l.early.begin(); it != l.early.end();) {
    if (it->tag != tag) {
      ++it;
      continue;
    }
    if (it->sig != sig) answer(comm, it->src, tag, sig);
    it = l.early.erase(it);
  }
}

void callEnded(Comm* comm, int tag, uint16_t sig) {
  CallLog& l = logOf(comm);
  auto it = std::find(l.inFlight.begin(), l.inFlight.end(), std::make_pair(tag, sig));
  if (it != l.inFlight.end()) l.inFlight.erase(it);
  l.done[l.doneNext++ % l.done.size()] = {tag, sig};
}

void probeCall(Comm* comm, int tag, uint16_t sig) {
  for (int peer = 0; peer < comm->size(); ++peer) {
    if (peer == comm->rank()) continue;
    auto* m = new ProbeMsg{static_cast<uint32_t>(tag), sig, 0};
    Request* r = nullptr;
    if (!p2p::isend(m, sizeof *m, move::byteType(), peer, 0, comm, SendMode::kStandard,
                    Channel::kCtl, &r)
             .isOk()) {
      delete m;
      continue;
    }
    if (r->complete) {
      delete m;
      Request::release(r);
    } else {
      r->owner = m;
      r->onComplete = freeProbe;
      r->userFreed = true;
    }
  }
}

void freeCallLog(CallLog* l) {
  if (!l) return;
  l->closing = true;
  if (Request* r = l->standing) {
    if (!r->complete) (void)p2p::cancelRecv(r);
    if (r->complete) Request::release(r);
  }
  delete l;
}

}  // namespace loom::coll
