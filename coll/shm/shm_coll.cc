#include "coll/shm/shm_coll.h"

#include <unistd.h>

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "coll/comm_info.h"
#include "coll/op.h"
#include "coll/schedule.h"
#include "core/locality.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/params.h"
#include "core/progress.h"

namespace loom::coll {
namespace {

// Contexts with queued ops, driven by one progress hook.
std::vector<ShmColl*>& active() {
  static std::vector<ShmColl*> list;
  return list;
}
bool gHooked = false;

using Header = ShmSegmentHeader;

// Segments whose communicator rank 0 destroyed its context before every
// peer had mapped them (a bcast root may finish and free the communicator
// before the others even start): the memfd must stay reachable for them,
// so rank 0 keeps descriptor and mapping here until the count is full.
std::vector<segment::Segment>& parked() {
  static std::vector<segment::Segment> list;
  return list;
}
bool allAttached(const segment::Segment& s, int size) {
  return static_cast<const Header*>(s.base)->attached.load(std::memory_order_acquire) >= size;
}
void sweepParked() {
  auto& list = parked();
  for (size_t i = 0; i < list.size();) {
    if (allAttached(list[i], static_cast<int>(static_cast<Header*>(list[i].base)->ranks))) {
      segment::unmap(&list[i]);
      list[i] = list.back();
      list.pop_back();
    } else {
      ++i;
    }
  }
}

constexpr size_t kPage = 4096;
size_t roundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

size_t slotParam() {
  static const size_t v = [] {
    int64_t s = params::getInt("LOOM_COLL_SHM_SLOT");
    if (s < 4096) s = 4096;
    return roundUp(static_cast<size_t>(s), 64);
  }();
  return v;
}

}  // namespace

// Slots per rank: a power of two from 2 to 256 (LOOM_COLL_SHM_DEPTH), or,
// with auto, as many as a segment budget allows (depthFor).
//
// Oversubscribed (auto: 128). A rank that waits for the slowest one loses
// its core for a time slice, so the more steps (calls) a writer may run
// ahead, the fewer such waits (a reduce's leaves, a bcast's root). 8 B at
// 8 ranks on 2 cores, 4000 calls, three runs: reduce 0.70 us with 128
// slots, 0.97-1.0 with 32, 4.1-5.7 with 4 (Open MPI 1.0-2.3); bcast 0.50,
// 0.77-0.96, 1.6-2.2 (Open MPI 0.66-0.79).
//
// A core each (auto: up to 64, see depthFor). A writer that is depth - 1
// steps ahead reads its readers' flags before it reuses a slot, and each
// such read takes a cache line that the reader writes at every step: the
// line crosses cores twice (the reader then writes it again). The cached
// minimum (allMin_) spares the reads while the readers are known to be far
// enough, so a deeper ring makes them rarer. On the Intel Xeon of
// docs/benchmarks.md ("Issue 33, third session"), 2 ranks, back-to-back
// calls of 2-8 KiB: bcast, gather and reduce 0.52-0.67x the time with 64
// slots against 4, scatter and allgather 0.76-0.91x, 512 B and 32 KiB up
// unchanged.
//
// Rank 0 decides and sends it with the segment's number (ranks could see
// oversubscription differently). 0 here: auto on a core each.
static uint64_t depthParam() {
  static const uint64_t v = [] {
    const std::string s = params::getString("LOOM_COLL_SHM_DEPTH");
    if (s == "auto") return progress::oversubscribed() ? uint64_t{128} : uint64_t{0};
    const int64_t d = params::getInt("LOOM_COLL_SHM_DEPTH");
    uint64_t p = 2;
    while (p < static_cast<uint64_t>(d) && p < 256) p <<= 1;
    return p;
  }();
  return v;
}

// The segment's slots per rank for `ranks` ranks: the parameter, or (auto
// on a core each) the most, up to 64, whose slots fit in kDepthBudget
// bytes for the whole segment, and 4 at least: with 16 KiB slots 64 at 2
// ranks, 32 at 3-4, 16 at 5-8, 8 at 9-16, 4 from 17 ranks (as many bytes
// as 4 slots always took from 32 ranks). The price is the segment's setup,
// once per communicator, on its first collective: every page is populated
// (touchSlots). At 2 ranks on the Intel Xeon, MPI_Comm_dup, one allreduce
// and MPI_Comm_free took 73-92 us with 4 slots (128 KiB), 808-817 us with
// 64 (2 MiB); LOOM_COLL_SHM_DEPTH=4 gives the old segments back.
uint64_t shmAutoDepth(int ranks, size_t slot) {
  constexpr size_t kDepthBudget = size_t{2} << 20;
  uint64_t d = 64;
  while (d > 4 && static_cast<size_t>(ranks) * d * slot > kDepthBudget) d >>= 1;
  return d;
}
static uint64_t depthFor(int ranks) {
  if (const uint64_t d = depthParam()) return d;
  return shmAutoDepth(ranks, slotParam());
}

size_t ShmColl::configuredSlot() { return slotParam(); }

namespace {
// Whether the communicator may have a segment at all: LOOM_COLL_SHM, its
// size, a job namespace to name the segment after.
bool segmentAllowed(Comm* c) {
  static const bool on = params::getString("LOOM_COLL_SHM") != "0";
  static const int64_t maxRanks = params::getInt("LOOM_COLL_SHM_MAX_RANKS");
  return on && c->size() >= 2 && c->size() <= maxRanks && !jobNamespace().empty();
}
}  // namespace

ShmColl* ShmColl::contextOf(Comm* c) {
  CommInfo& info = commInfo(c);
  if (!info.shm) info.shm.reset(new ShmColl(c));
  return info.shm.get();
}

bool ShmColl::eligible(Comm* c) {
  CommInfo& info = commInfo(c);
  if (info.shmAlgorithms < 0) info.shmAlgorithms = info.nodes == 1 && segmentAllowed(c);
  return info.shmAlgorithms > 0;
}

ShmColl* ShmColl::of(Comm* c) {
  return eligible(c) ? contextOf(c) : nullptr;
}

ShmColl* ShmColl::forChecks(Comm* c) {
  CommInfo& info = commInfo(c);
  if (info.shm) return info.shm.get();
  if (!info.oneRealNode || !segmentAllowed(c)) return nullptr;
  return contextOf(c);
}

// The setup message's tag: above every call's (Comm::nextCollectiveTag),
// below the API layer's internal helpers. Not a call's tag: whether a call
// creates the context depends on the algorithm this rank picked, and ranks
// whose arguments differ pick differently. Drawing a call tag here made
// their tags differ from then on, and the setup message could match the
// other ranks' data of the call (a 16 MiB bcast met the 8-byte receive).
constexpr int kSetupTag = static_cast<int>(Comm::kCollTagSpan);

ShmColl::ShmColl(Comm* c) : comm_(c), size_(c->size()), rank_(c->rank()), slot_(slotParam()),
      depth_(0) {
  // Rank 0 makes the segment and tells the others its number; they map it
  // when the number arrives (ready()). Nothing here waits for a peer.
  sweepParked();
  auto s = std::make_unique<Schedule>(c, kSetupTag);
  Datatype* u64 = predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_UINT64_T));
  if (rank_ == 0) {
    static uint64_t created = 0;
    number_ = ++created;
    depth_ = depthFor(size_);
    setupStatus_ = create();
    if (!setupStatus_.isOk()) number_ = 0;  // tells the others it failed
    setupMsg_.number = number_;
    setupMsg_.depth = depth_;
    for (int r = 1; r < size_; ++r) s->send(&setupMsg_, 3, u64, r);
  } else {
    s->recv(&setupMsg_, 3, u64, 0);
  }
  Status st = Schedule::start(std::move(s), &setup_);
  if (!st.isOk() && setupStatus_.isOk()) setupStatus_ = st;
}

ShmColl::~ShmColl() {
  auto& list = active();
  list.erase(std::remove(list.begin(), list.end(), this), list.end());
  if (setup_) progress::waitUntil([this] { return setup_->complete; });
  if (failurePending_) {  // peers may still wait to learn that a call failed here
    ready();
    flushPending();
  }
  if (setup_) Request::release(setup_);
  setup_ = nullptr;
  for (ShmOp* op : pool_) delete op;
  for (ShmOp* op : queue_) delete op;
  releaseWhenShared();
  if (segment_.fd >= 0) {
    parked().push_back(segment_);  // peers still to map it: see parked()
  } else {
    segment::unmap(&segment_);
  }
  sweepParked();
}

void ShmColl::releaseWhenShared() {
  if (segment_.fd >= 0 && base_ && allAttached(segment_, size_)) segment::release(&segment_);
}

Status ShmColl::create() {
  // Layout: header, one flag per rank, depth_ op descriptions per rank,
  // depth_ slots per rank (page aligned).
  const size_t flagsAt = 64;
  const size_t ringsAt = flagsAt + size_ * kFlagStride;
  const size_t slotsAt = roundUp(ringsAt + static_cast<size_t>(size_) * depth_ * kRingEntry, kPage);
  mapped_ = slotsAt + static_cast<size_t>(size_) * depth_ * slot_;
  name_ = "/loom-" + jobNamespace() + "-coll-" + std::to_string(comm_->worldRank(0)) + "-" +
          std::to_string(number_);
  Status st = segment::create(name_, mapped_, &segment_, &setupMsg_.handle);
  if (!st.isOk())
    return errorf(st.code(), "%s, for the shared-memory collectives (LOOM_COLL_SHM=0 turns "
                  "them off)", st.message().c_str());
  void* p = segment_.base;
  auto* h = new (p) Header;
  h->ranks = static_cast<uint32_t>(size_);
  h->number = number_;
  h->attached.store(1, std::memory_order_release);
  base_ = p;
  flags_ = static_cast<std::byte*>(p) + flagsAt;
  rings_ = static_cast<std::byte*>(p) + ringsAt;
  slots_ = static_cast<std::byte*>(p) + slotsAt;
  touchSlots();
  setPid();
  return Status::ok();
}

// Maps every slot now, before any step is published, rather than taking a
// page fault per slot page during the first `depth` steps of each size. With
// 128 slots per rank, 8 ranks on 2 cores, the first 200 8-byte allreduces
// took 230 faults and 19-26 us per call when only the own slots' first pages
// were touched, against 11-12 us and 0 faults for the next 200. Where the
// kernel cannot populate a range: this rank's own slots' first pages by
// writing them (nobody reads them yet), every peer's by reading them (each
// fault also maps the neighbouring pages already there).
void ShmColl::touchSlots() {
#ifdef MADV_POPULATE_WRITE
  // Every page of every slot, in one call (Linux 5.14+): a staged piece
  // above 4 KiB reaches past the first page, and the same faults came back
  // at each size up to the slot's 16 KiB (16 ranks, 8 KiB allreduce: the
  // first 200 calls 240 us each with 1603 faults per rank, the next 92 us).
  // The content is left as it is.
  if (madvise(slots_, static_cast<size_t>(size_) * depth_ * slot_, MADV_POPULATE_WRITE) == 0)
    return;
#endif
  for (uint64_t k = 0; k < depth_; ++k) {
    volatile std::byte* b = slot(rank_, k);
    *b = std::byte{0};
  }
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    for (uint64_t k = 0; k < depth_; ++k) {
      volatile const std::byte* b = slot(r, k);
      (void)*b;
    }
  }
}

// Next to this rank's flag; written before its first publish, so a peer
// that has seen any step of this rank sees it.
void ShmColl::setPid() {
  *reinterpret_cast<int32_t*>(flags_ + static_cast<size_t>(rank_) * kFlagStride + 8) = getpid();
}

Status ShmColl::attach() {
  if (number_ == 0)
    return errorf(MPI_ERR_NO_MEM, "rank 0 could not create the shared-memory collectives' "
                  "segment (its log says why; LOOM_COLL_SHM=0 turns them off)");
  if (depth_ < 2 || (depth_ & (depth_ - 1)))
    return errorf(MPI_ERR_INTERN, "rank 0 of the communicator sent %llu slots per rank for "
                  "the shared-memory collectives' segment", static_cast<unsigned long long>(depth_));
  const size_t flagsAt = 64;
  const size_t ringsAt = flagsAt + size_ * kFlagStride;
  const size_t slotsAt = roundUp(ringsAt + static_cast<size_t>(size_) * depth_ * kRingEntry, kPage);
  mapped_ = slotsAt + static_cast<size_t>(size_) * depth_ * slot_;
  name_ = "/loom-" + jobNamespace() + "-coll-" + std::to_string(comm_->worldRank(0)) + "-" +
          std::to_string(number_);
  LOOM_TRY(segment::attach(name_, mapped_, setupMsg_.handle, &segment_));
  void* p = segment_.base;
  auto* h = static_cast<Header*>(p);
  if (h->number != number_) {
    segment::unmap(&segment_);
    return errorf(MPI_ERR_INTERN, "the shared-memory collectives' segment of rank 0 is not "
                  "segment %llu", static_cast<unsigned long long>(number_));
  }
  base_ = p;
  flags_ = static_cast<std::byte*>(p) + flagsAt;
  rings_ = static_cast<std::byte*>(p) + ringsAt;
  slots_ = static_cast<std::byte*>(p) + slotsAt;
  touchSlots();
  setPid();
  if (h->attached.fetch_add(1, std::memory_order_acq_rel) + 1 == size_)
    segment::unlinkName(&segment_);
  return Status::ok();
}

bool ShmColl::ready() {
  if (setup_ && setup_->complete) {
    if (setup_->statusError != MPI_SUCCESS && setupStatus_.isOk())
      setupStatus_ = errorf(setup_->statusError, "the shared-memory collectives' setup failed");
    Request::release(setup_);
    setup_ = nullptr;
    number_ = setupMsg_.number;
    if (rank_ != 0) depth_ = setupMsg_.depth;
    if (rank_ != 0 && setupStatus_.isOk()) setupStatus_ = attach();
    flushPending();
  }
  if (segment_.fd >= 0) releaseWhenShared();
  if (!setupStatus_.isOk()) return true;  // the ops fail with it
  return mapped();
}

ShmOp* ShmColl::newOp() {
  ShmOp* op;
  if (pool_.empty()) {
    op = new ShmOp;
  } else {
    op = pool_.back();
    pool_.pop_back();
  }
  op->step = 0;
  op->phase = 0;
  op->signed_ = false;
  op->status = Status::ok();
  return op;
}

void ShmColl::finish(ShmOp* op) {
  if (Request* r = op->request) {  // none for a blocking call done inside start()
    op->request = nullptr;
    r->statusError = op->status.code();
    r->error = op->status;  // what failed, for the caller's message
    r->finish();
  }
  pool_.push_back(op);
}

void ShmColl::settleAll() {
  progress::waitUntil([] {
    for (ShmColl* c : active())
      if (c->failurePending_ && c->setupStatus_.isOk()) return false;
    return true;
  });
}

void settleFailures() { ShmColl::settleAll(); }

bool ShmColl::advance(ShmOp* op) {
  if (!setupStatus_.isOk()) {
    op->status = setupStatus_;
    return true;
  }
  if (!op->signed_) {
    sign(*op);
    op->signed_ = true;
  }
  current_ = op;
  const bool done = op->run(*this, *op);
  current_ = nullptr;
  // Every flag the op read was checked; a blocked op checks everyone (the
  // rank it waits for may be one that passed other arguments), every 64th
  // time only: reading the peers' lines while they write them slows them
  // down.
  Status st = std::move(mismatch_);
  bool benign = mismatchBenign_;
  mismatch_ = Status::ok();
  mismatchBenign_ = false;
  if (st.isOk() && !done && ++blockedPolls_ % 64 == 0) st = checkSignatures(*op, &benign);
  // Only the counts differ, and the call takes as many steps on both ranks:
  // every rank still runs the same steps, so the segment stays in step. The
  // call reports the mismatch when it ends, and nothing is poisoned (the
  // communicator stays usable).
  if (!st.isOk() && benign) {
    if (op->status.isOk()) op->status = st;
    st = Status::ok();
  }
  // A peer that gave up on this call published its steps: what they seem to
  // hold is not data (one header load per call). Say what differed if this
  // call's descriptions show it.
  if (st.isOk() && done && poisoned()) {
    bool ignored = false;
    st = checkSignatures(*op, &ignored);
    // Nothing differed that this rank can see (the peer that failed is
    // still in an earlier call whose steps it published as it gave up, and
    // this op read them as its own): the op's data is not data.
    if (st.isOk()) {
      Status f = sharedFailure();
      if (!f.isOk() && failedCall_ <= op->args.call) st = std::move(f);
    }
  }
  if (st.isOk()) return done;
  // Give up on this call, poison the communicator, and then publish the
  // call's steps so no peer waits for them: a peer that sees them sees the
  // failure too.
  op->status = st;
  fail(st, op->args.call);
  publish(op->base + op->steps - 1);
  return true;
}

bool ShmColl::drain() {
  while (!queue_.empty()) {
    if (!ready()) return false;
    ShmOp* op = queue_.front();
    if (!advance(op)) return false;
    queue_.pop_front();
    finish(op);
  }
  return true;
}

void ShmColl::poll() {
  if (polled_) return;
  if (!gHooked) {
    progress::add(pollAll, nullptr);
    gHooked = true;
  }
  active().push_back(this);
  polled_ = true;
}

int ShmColl::pollAll(void*) {
  auto& list = active();
  int events = 0;
  for (size_t i = 0; i < list.size();) {
    ShmColl* c = list[i];
    const size_t before = c->queue_.size();
    bool idle = c->drain();
    events += static_cast<int>(before - c->queue_.size());
    // A failure of this rank waits for the segment to be mapped.
    if (c->failurePending_) idle = c->ready() && c->flushPending() && idle;
    if (idle) {
      c->polled_ = false;
      list[i] = list.back();
      list.pop_back();
    } else {
      ++i;
    }
  }
  return events;
}

Status ShmColl::start(ShmOp* op, Request** out) {
  op->base = nextStep_;
  nextStep_ += op->steps;
  op->desc = describe(*op);
  remember(op->desc);
  op->request = nullptr;
  // A call whose peers are there is done at once (op is then pooled, intact);
  // a blocking one needs no request then. A call with none before it runs
  // at once, outside the queue; a blocking one first watches its peers'
  // flags for a moment (a few hundred passes, about a microsecond) before it
  // waits through the progress engine: a small bcast's readers usually find
  // the root's piece within that time, and skip the request and the other
  // pollers' passes.
  bool done = false;
  if (queue_.empty() && ready()) {
    const bool watch = op->args.blocking && !progress::oversubscribed();
    const unsigned passes = watch ? progress::kSpinsBeforePause : 1;
    for (unsigned i = 0; i < passes && !done; ++i) done = advance(op);
  }
  if (done && op->args.blocking) {
    finish(op);  // pooled (intact: its status is still there)
    *out = nullptr;
    return op->status;
  }
  Request* r = Request::alloc(ReqKind::kColl);
  r->active = true;
  r->comm = comm_;
  *out = r;
  op->request = r;
  if (done) {
    finish(op);  // completes r with the op's status
    return op->status;
  }
  queue_.push_back(op);
  poll();
  return Status::ok();
}

bool shmSupports(const CollArgs& a) { return ShmColl::eligible(a.comm); }

bool shmRootedSupports(const CollArgs& a) {
  // Oversubscribed, a root that must wait for every reader before it reuses
  // a slot waits for ranks that are not even running; messages let it go
  // on. With 16 slots or more (the default there: 128) it runs that many
  // calls ahead before it waits.
  return (!progress::oversubscribed() || depthFor(a.comm->size()) >= 16) &&
         ShmColl::eligible(a.comm);
}

bool shmReductionSupports(const CollArgs& a) {
  if (!a.op || !a.type || !opValidFor(a.op, a.type)) return false;
  if (a.op->kind() == Op::Kind::kUser && !a.type->isContiguous()) return false;
  const size_t unit = reduceUnit(a.type, a.op);
  return unit > 0 && unit <= slotParam() && ShmColl::eligible(a.comm);
}

}  // namespace loom::coll
