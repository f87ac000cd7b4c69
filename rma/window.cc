// Window creation and destruction, shared-memory query, dynamic
// attachment (rma/window.h).
//
// Creation is three small allgathers over the window's private
// communicator: (1) every rank's size, displacement unit, pid, node and,
// for MPI_Win_create, base; (2) the node leader's segment handle (the
// lowest window rank of each node creates one segment: the Control blocks
// of the node's ranks, then, for the allocating flavors, their memory);
// (3) whether the mapping worked, each rank's base address in its own
// address space and, for windows spanning nodes, the key of its memory
// registered for libfabric RMA (native.cc). After (3) every rank of the
// node has mapped the segment, so the leader drops its descriptor (a
// memfd) or unlinks its name.
#include "rma/window.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "core/cma.h"
#include "core/device.h"
#include "core/locality.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "core/progress_async.h"
#include "core/request.h"
#include "p2p/p2p.h"
#include "rma/am.h"

namespace loom::rma {

namespace {

constexpr uint64_t kPage = 4096;
uint64_t roundUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

struct Info1 {
  uint64_t base;
  uint64_t size;
  int32_t dispUnit;
  int32_t pid;
  int32_t node;
  int32_t pad;  // bit 0: this rank allows CMA; bit 1: its memory is on a GPU
};
struct Info2 {
  segment::Handle handle;
  int32_t ok;
  int32_t pad;
};
struct Info3 {
  uint64_t base;
  int32_t ok;
  int32_t native;  // rkey is valid: this rank's memory takes RMA from other nodes
  p2p::RemoteKey rkey;
};

// Whether windows on user memory may use cross-memory attach for ranks of
// this node (LOOM_RMA_CMA=0 sends their operations through the target's
// progress instead, as where the system refuses CMA).
bool cmaForWindows() {
  static const bool on = [] {
    bool yes = true;
    const std::string v = params::getString("LOOM_RMA_CMA");
    if (v != "auto" && params::parseBool(v, &yes) && !yes) return false;
    return cma::usable();
  }();
  return on;
}

}  // namespace

Status Window::create(Comm* comm, Flavor flavor, void** base, uint64_t size, int dispUnit,
                      bool noncontig, const Collectives& coll, Window** out) {
  auto* w = new Window;
  w->comm_ = comm;
  w->flavor_ = flavor;
  const int n = comm->size(), me = comm->rank();
  const auto& where = jobLocality();
  auto nodeOf = [&](int r) {
    int j = comm->worldRank(r);
    return j < static_cast<int>(where.size()) ? where[j].nodeId : 0;
  };

  // `pad` carries whether this rank allows CMA: a pair uses it only when
  // both do, so both sides agree on which of them talk by message.
  // Window memory on a GPU is refused (docs/gpu.md): every access to a
  // window is a host access (mapped, CMA, or the target's own loads). Each
  // rank says whether its memory is device memory, so all of them fail
  // together, naming the rank, instead of one failing and the rest waiting.
  const bool onDevice = flavor == Flavor::kCreate && size > 0 && device::isDevice(*base);
  Info1 mine{flavor == Flavor::kCreate ? reinterpret_cast<uint64_t>(*base) : 0,
             size,
             dispUnit,
             static_cast<int32_t>(getpid()),
             nodeOf(me),
             (cmaForWindows() ? 1 : 0) | (onDevice ? 2 : 0)};
  std::vector<Info1> all(n);
  Status st = coll.allgather(comm, &mine, sizeof mine, all.data());
  if (!st.isOk()) {
    delete w;
    return st;
  }
  for (int r = 0; r < n; ++r)
    if (all[r].pad & 2) {
      delete w;
      return errorf(MPI_ERR_UNSUPPORTED_OPERATION,
                    "rank %d passed window memory on a GPU; "
                    "Loom's windows need host memory (device buffers are fine as origin "
                    "buffers of MPI_Put, MPI_Get and the accumulates)",
                    r);
    }
  w->peers_.resize(n);
  for (int r = 0; r < n; ++r) {
    Peer& p = w->peers_[r];
    p.jobRank = comm->worldRank(r);
    p.node = all[r].node;
    p.pid = all[r].pid;
    p.dispUnit = all[r].dispUnit;
    p.base = all[r].base;
    p.size = all[r].size;
    if (p.node == mine.node) w->local_.push_back(r);
  }
  if (flavor == Flavor::kShared && static_cast<int>(w->local_.size()) != n) {
    delete w;
    return errorf(MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared needs every rank on one node "
                  "(this communicator spans %d nodes)", n == 0 ? 0 : 2);
  }

  // The node's segment: Control blocks, then each local rank's memory.
  const bool allocating = flavor == Flavor::kAllocate || flavor == Flavor::kShared;
  const size_t nlocal = w->local_.size();
  const uint64_t ctlBytes = roundUp(nlocal * sizeof(Control), kPage);
  std::vector<uint64_t> offset(nlocal, ctlBytes);
  uint64_t end = ctlBytes;
  for (size_t i = 0; i < nlocal; ++i) {
    const uint64_t s = allocating ? all[w->local_[i]].size : 0;
    // allocate_shared: contiguous, as the standard's default promises;
    // otherwise each rank's memory starts on a cache line (a page with
    // alloc_shared_noncontig).
    if (flavor != Flavor::kShared || noncontig)
      end = roundUp(end, flavor == Flavor::kShared ? kPage : 64);
    offset[i] = end;
    end += s;
  }
  const uint64_t total = std::max(end, ctlBytes);
  const int leader = w->local_.front();
  const std::string segName = "/loom-" + jobNamespace() + "-win-" +
                              std::to_string(comm->worldRank(leader)) + "-" +
                              std::to_string(comm->contextId());
  Info2 h{};
  h.ok = 1;
  if (me == leader) {
    Status cs = segment::create(segName, total, &w->seg_, &h.handle);
    if (!cs.isOk()) {
      log::error("window segment: %s", cs.message().c_str());
      h.ok = 0;
    }
  }
  std::vector<Info2> hs(n);
  st = coll.allgather(comm, &h, sizeof h, hs.data());
  if (!st.isOk()) {
    segment::unmap(&w->seg_);
    delete w;
    return st;
  }
  Info3 m3{0, hs[leader].ok, 0, {}};
  if (me != leader && m3.ok) {
    Status as = segment::attach(segName, total, hs[leader].handle, &w->seg_);
    if (!as.isOk()) {
      log::error("window segment: %s", as.message().c_str());
      m3.ok = 0;
    }
  }
  size_t myIdx = std::find(w->local_.begin(), w->local_.end(), me) - w->local_.begin();
  if (m3.ok && allocating)
    m3.base = reinterpret_cast<uint64_t>(static_cast<char*>(w->seg_.base) + offset[myIdx]);
  // Memory that ranks of other nodes may write and read with libfabric RMA:
  // allocate and create windows (dynamic ones attach memory later, and
  // stay with messages; shared ones are on one node).
  const bool spansNodes =
      std::any_of(all.begin(), all.end(), [&](const Info1& i) { return i.node != mine.node; });
  if (m3.ok && spansNodes && (flavor == Flavor::kAllocate || flavor == Flavor::kCreate)) {
    void* mem = allocating ? reinterpret_cast<void*>(m3.base) : *base;
    m3.native = w->exposeNative(mem, size, &m3.rkey) ? 1 : 0;
  }
  std::vector<Info3> bs(n);
  st = coll.allgather(comm, &m3, sizeof m3, bs.data());
  if (st.isOk()) {
    for (int r = 0; r < n; ++r)
      if (!bs[r].ok)
        st = errorf(MPI_ERR_NO_MEM, "rank %d could not map its node's window segment (%llu "
                    "bytes): see its log", r, static_cast<unsigned long long>(total));
  }
  if (me == leader) {
    segment::release(&w->seg_);
    segment::unlinkName(&w->seg_);
  }
  if (!st.isOk()) {
    w->unexposeNative();
    segment::unmap(&w->seg_);
    delete w;
    return st;
  }

  auto* seg = static_cast<char*>(w->seg_.base);
  if (allocating)
    for (int r = 0; r < n; ++r) w->peers_[r].base = bs[r].base;
  for (size_t i = 0; i < nlocal; ++i) {
    Peer& p = w->peers_[w->local_[i]];
    p.ctl = reinterpret_cast<Control*>(seg + i * sizeof(Control));
    if (allocating) p.mapped = seg + offset[i];
  }
  for (int r = 0; r < n; ++r) {
    const bool cmaOk = (all[r].pad & 1) && (all[me].pad & 1);
    Peer& p = w->peers_[r];
    if (r == me) {
      p.access = Access::kDirect;
      p.mapped = reinterpret_cast<char*>(p.base);
    } else if (p.ctl && allocating) {
      p.access = Access::kDirect;
    } else if (p.ctl && cmaOk) {
      p.access = Access::kCma;
    } else {
      p.access = Access::kMessage;
      w->usesMessages_ = true;
      // Native RMA where the target registered its memory and the
      // transport to it can (a rank of this node without CMA cannot).
      if (bs[r].native && nativeEnabled() && p2p::rmaReaches(p.jobRank)) {
        p.native = true;
        p.rkey = bs[r].rkey;
      }
    }
  }
  if (allocating) *base = w->peers_[me].mapped;
  w->attrSize = static_cast<MPI_Aint>(size);
  w->attrDispUnit = dispUnit;
  w->attrFlavor = flavor == Flavor::kCreate     ? MPI_WIN_FLAVOR_CREATE
                  : flavor == Flavor::kAllocate ? MPI_WIN_FLAVOR_ALLOCATE
                  : flavor == Flavor::kDynamic  ? MPI_WIN_FLAVOR_DYNAMIC
                                                : MPI_WIN_FLAVOR_SHARED;
  if (w->usesMessages_) {
    // Targets reached by message need this rank's progress to be served,
    // also while it computes: the progress thread runs while such a window
    // exists (core/progress_async.h).
    Am::add(w);
    w->registered_ = true;
    progress::asyncRetain();
  }
  log::debug("rma", "window on context %u: %d ranks, %zu on this node, %s, RMA to %d targets",
             comm->contextId(), n, nlocal,
             w->usesMessages_ ? "messages to some targets" : "no messages",
             static_cast<int>(std::count_if(w->peers_.begin(), w->peers_.end(),
                                            [](const Peer& p) { return p.native; })));
  *out = w;
  return Status::ok();
}

Status Window::free(const Collectives& coll) {
  if (started_ || posted_ || locks_ > 0 || lockAll_)
    return errorf(MPI_ERR_RMA_SYNC, "an epoch is still open on this window (%s)",
                  started_ ? "MPI_Win_start without MPI_Win_complete"
                  : posted_ ? "MPI_Win_post without MPI_Win_wait"
                  : lockAll_ ? "MPI_Win_lock_all without MPI_Win_unlock_all"
                             : "MPI_Win_lock without MPI_Win_unlock");
  Status st = waitNative(-1);
  Status ms = flushMessages(-1);
  if (st.isOk()) st = ms;
  Status ws = waitGets();
  // After the barrier nobody reads or writes this rank's memory; messages
  // for it were all answered and RMA to it finished (each origin waited
  // for both before its barrier).
  Status bs = coll.barrier(comm_);
  if (log::enabled("rma")) {
    uint64_t rmaOps = 0, msgOps = 0;
    for (const Peer& p : peers_) {
      rmaOps += p.nativeStarted;
      msgOps += p.sent;
    }
    log::debug("rma",
               "window on context %u freed: %llu RMA writes and reads, %llu puts and "
               "accumulates by message",
               comm_->contextId(), static_cast<unsigned long long>(rmaOps),
               static_cast<unsigned long long>(msgOps));
  }
  unexposeNative();
  if (registered_) {
    Am::remove(this);
    registered_ = false;
    progress::asyncRelease();
  }
  Am::drain(this);
  segment::unmap(&seg_);
  if (!st.isOk()) return st;
  if (!ws.isOk()) return ws;
  return bs;
}

Window::~Window() {
  magic_ = 0;
  unexposeNative();
  if (registered_) {
    Am::remove(this);
    progress::asyncRelease();
  }
  Errhandler::release(errhandler_);
  segment::unmap(&seg_);
}

void Window::sharedQuery(int r, uint64_t* size, int* dispUnit, void** ptr) {
  if (r == MPI_PROC_NULL) {
    // The first rank of the group with memory (MPI 4.1); when this rank
    // cannot reach it directly (another node), the answer is size 0 and a
    // null pointer, as for that rank itself.
    for (int k = 0; k < static_cast<int>(peers_.size()); ++k)
      if (peers_[k].size > 0) {
        r = k;
        break;
      }
    if (r == MPI_PROC_NULL) {
      *size = 0;
      *dispUnit = peers_[rank()].dispUnit;
      *ptr = nullptr;
      return;
    }
  }
  const Peer& p = peers_[r];
  bool shared = p.mapped && (flavor_ == Flavor::kShared || flavor_ == Flavor::kAllocate);
  *size = shared ? p.size : 0;
  *dispUnit = p.dispUnit;
  *ptr = shared ? p.mapped : nullptr;
}

Status Window::attach(void* addr, uint64_t bytes) {
  if (bytes == 0) return Status::ok();
  if (device::isDevice(addr))
    return errorf(MPI_ERR_UNSUPPORTED_OPERATION,
                  "memory at %p is on a GPU; Loom's windows need "
                  "host memory",
                  addr);
  const auto a = reinterpret_cast<uint64_t>(addr);
  for (auto& [ra, rb] : regions_)
    if (a < ra + rb && ra < a + bytes)
      return errorf(MPI_ERR_RMA_ATTACH, "memory at %p overlaps a region already attached", addr);
  // The sequence is odd before regions_ changes: a node peer reading the
  // list (past kMaxRegions, from this process) while it is reallocated
  // retries instead of taking the freed copy.
  beginRegionsUpdate();
  regions_.emplace_back(a, bytes);
  publishRegions();
  return Status::ok();
}

void Window::beginRegionsUpdate() {
  Control* c = peers_[rank()].ctl;
  if (!c || (c->regionsSeq.load(std::memory_order_relaxed) & 1)) return;
  c->regionsSeq.fetch_add(1, std::memory_order_acq_rel);  // odd: being written
}

void Window::publishRegions() {
  Control* c = peers_[rank()].ctl;
  if (!c) return;
  beginRegionsUpdate();
  for (size_t i = 0; i < regions_.size() && i < static_cast<size_t>(kMaxRegions); ++i)
    c->regions[i] = {regions_[i].first, regions_[i].second};
  // regions_ is a vector of (addr, bytes) pairs of uint64_t: laid out as
  // Control::Region records.
  static_assert(sizeof(regions_[0]) == sizeof(Control::Region));
  c->listAddr = reinterpret_cast<uint64_t>(regions_.data());
  c->nregions.store(static_cast<uint32_t>(regions_.size()), std::memory_order_relaxed);
  c->regionsSeq.fetch_add(1, std::memory_order_release);
}

Status Window::detach(const void* addr) {
  const auto a = reinterpret_cast<uint64_t>(addr);
  auto it = std::find_if(regions_.begin(), regions_.end(),
                         [a](const auto& r) { return r.first == a; });
  if (it == regions_.end())
    return errorf(MPI_ERR_RMA_ATTACH, "no region attached at %p", addr);
  beginRegionsUpdate();
  regions_.erase(it);
  publishRegions();
  return Status::ok();
}

}  // namespace loom::rma
