#include "coll/schedule.h"

#include <algorithm>
#include <cassert>

#include "core/log.h"
#include "coll/op.h"
#include "coll/call_probe.h"
#include "coll/device_pipe.h"
#include "coll/move_util.h"
#include "coll/selector.h"
#include "core/progress.h"
#include "p2p/p2p.h"

namespace loom::coll {
namespace {
// Schedules in flight, polled by one progress hook.
std::vector<Schedule*>& active() {
  static std::vector<Schedule*> list;
  return list;
}
bool gHooked = false;
}  // namespace

void Schedule::send(const void* buf, int64_t count, Datatype* type, int peer) {
  rounds_.back().steps.push_back(
      Step{Step::Kind::kSend, const_cast<void*>(buf), count, type, peer, nullptr});
}

void Schedule::recv(void* buf, int64_t count, Datatype* type, int peer) {
  rounds_.back().steps.push_back(Step{Step::Kind::kRecv, buf, count, type, peer, nullptr});
}

namespace {
// The transport hands a fold the data bytes themselves (a contiguous type's
// buffer + trueLb + offset), so this is a packed reduction: reduceLocal
// would add trueLb again and fold the wrong bytes of a type whose data does
// not start at its origin.
void foldWithOp(const void* in, void* inout, size_t bytes, void* ctx, Datatype* type) {
  reducePacked(in, inout, bytes, type, static_cast<Op*>(ctx));
}
}  // namespace

void Schedule::recvReduce(void* buf, int64_t count, Datatype* type, Op* op, int peer) {
  if (count > 0 && p2p::canFold(type)) {
    Step s{Step::Kind::kRecv, buf, count, type, peer, nullptr};
    s.op = op;
    rounds_.back().steps.push_back(std::move(s));
    return;
  }
  char* tmp = scratchLike(*this, count, type);
  recv(tmp, count, type, peer);
  endRound();
  local([=] { (void)reduceLocal(tmp, buf, count, type, op); });
}

namespace {
// ctx: the Step; the piece of its base at the same offset as `inout` goes
// there first.
void foldFromBase(const void* in, void* inout, size_t bytes, void* ctx, Datatype* type) {
  const auto* st = static_cast<const Schedule::Step*>(ctx);
  const char* base = static_cast<const char*>(st->base) +
                     (static_cast<char*>(inout) - static_cast<char*>(st->buf));
  if (st->baseFirst)
    reducePackedFrom(base, in, inout, bytes, type, st->op);  // inout never overlaps `in` here
  else
    reducePackedFrom(in, base, inout, bytes, type, st->op);
}
}  // namespace

void Schedule::recvReduceFrom(void* buf, const void* base, int64_t count, Datatype* type, Op* op,
                              int peer, bool baseFirst) {
  assert(!(baseFirst && base == buf));  // base op received would need the base kept aside
  if (base == buf) return recvReduce(buf, count, type, op, peer);
  if (count > 0 && p2p::canFold(type)) {
    Step s{Step::Kind::kRecv, buf, count, type, peer, nullptr};
    s.op = op;
    s.base = base;
    s.baseFirst = baseFirst;
    rounds_.back().steps.push_back(std::move(s));
    return;
  }
  if (!baseFirst) {
    local([=] { copyLike(base, buf, count, type); });
    recvReduce(buf, count, type, op, peer);
    return;
  }
  // base op received without folding on arrival: received into buf, the
  // base folded in in a round of its own (so this ends the round).
  recv(buf, count, type, peer);
  endRound();
  local([=] { (void)reduceLocal(base, buf, count, type, op); });
}

void Schedule::local(LocalFn fn) {
  rounds_.back().steps.push_back(Step{Step::Kind::kLocal, nullptr, 0, nullptr, 0, std::move(fn)});
}

void Schedule::localAfterPosting(LocalFn fn) {
  Step s{Step::Kind::kLocal, nullptr, 0, nullptr, 0, std::move(fn)};
  s.afterPosting = true;
  rounds_.back().steps.push_back(std::move(s));
}

void Schedule::device(DeviceFn fn) {
  deviceFns_.push_back(std::move(fn));
  rounds_.back().steps.push_back(Step{Step::Kind::kDevice, nullptr,
                                      static_cast<int64_t>(deviceFns_.size() - 1), nullptr, 0,
                                      nullptr});
}

void Schedule::endRound() {
  if (!rounds_.back().steps.empty()) rounds_.emplace_back();
}

void* Schedule::scratch(size_t bytes) {
  if (!inlineUsed_ && bytes <= kInlineScratch) {
    inlineUsed_ = true;
    return inlineScratch_;
  }
  scratch_.emplace_back(new std::byte[bytes ? bytes : 1]);
  return scratch_.back().get();
}

namespace {
// Finished schedules kept for the next calls (blocking collectives run one
// at a time; a few cover nonblocking ones in flight). A call otherwise
// allocated the schedule, its rounds and steps, its request list and the
// call check, and freed them again: 16 ranks on 2 cores, a scatter of
// 32 KiB blocks spent ~1 us of each rank's call there (allocator lines are
// cold after each hand-over of the core).
constexpr size_t kFreeSchedules = 8;
std::vector<Schedule*>& freeList() {
  static std::vector<Schedule*> list;
  return list;
}
}  // namespace

std::unique_ptr<Schedule> Schedule::make(Comm* comm, int tag) {
  auto& list = freeList();
  if (list.empty()) return std::make_unique<Schedule>(comm, tag);
  Schedule* s = list.back();
  list.pop_back();
  s->reset(comm, tag);
  return std::unique_ptr<Schedule>(s);
}

// The containers were emptied by recycle(); the rest of the state is set
// here, as the constructor would.
void Schedule::reset(Comm* comm, int tag) {
  comm_ = comm;
  tag_ = tag;
  current_ = 0;
  started_ = false;
  check_ = nullptr;
  checkCtx_ = nullptr;
  sig_ = 0;
  probes_ = probed_ = false;
  waitingSince_ = lastCheck_ = {};
  onFail_ = nullptr;
  idle_ = 0;
  inlineUsed_ = false;
  request_ = nullptr;
  status_ = Status::ok();
}

void Schedule::recycle(Schedule* s) {
  // An abandoned round's message may still land in scratch, the inline
  // buffer included: the schedule is left allocated (an error path).
  if (s->keepScratch_) return;
  auto& list = freeList();
  if (list.size() >= kFreeSchedules || s->hasStream_ || s->fencePending_ ||
      !s->deviceScratch_.empty()) {
    delete s;
    return;
  }
  // What the steps hold (local steps' captures) goes now, not at reuse.
  // Round 0 keeps its steps' capacity; a later round's goes with it.
  s->rounds_.resize(1);
  s->rounds_[0].steps.clear();
  s->pending_.clear();
  s->scratch_.clear();
  s->deviceFns_.clear();
  list.push_back(s);
}

void* Schedule::deviceScratch(size_t bytes) {
  void* p = dpool::scratchAlloc(bytes);
  if (p) deviceScratch_.push_back(DeviceBuf{p, bytes});
  return p;
}

Schedule::~Schedule() {
  // Only a failed schedule can leave device work in flight: wait for it
  // before its scratch goes back to the pool (another call would get
  // memory a kernel still writes).
  if (hasStream_ && (fencePending_ || !status_.isOk())) (void)waitDevice();
  if (fencePending_) device::fenceDestroy(fence_);
  for (const DeviceBuf& b : deviceScratch_)
    if (!keepScratch_) dpool::scratchFree(b.p, b.bytes);
  if (hasStream_) dpool::streamRelease(stream_);
}

Status Schedule::runDevice(const Step& s) {
  if (!hasStream_) {
    LOOM_TRY(dpool::streamAcquire(&stream_));
    hasStream_ = true;
  }
  return deviceFns_[static_cast<size_t>(s.count)](stream_);
}

Status Schedule::waitDevice() {
  if (!hasStream_) return Status::ok();
  device::Fence f;
  LOOM_TRY(device::fenceRecord(stream_, &f));
  Status st = device::fenceWait(f);
  device::fenceDestroy(f);
  return st;
}

bool Schedule::deviceDone() {
  if (!device::fenceDone(fence_)) return false;
  Status st = device::fenceWait(fence_);  // at once: reports a failure of the work
  device::fenceDestroy(fence_);
  fencePending_ = false;
  if (!st.isOk() && status_.isOk()) status_ = st;
  return true;
}

bool Schedule::startRound() {
  Round& round = rounds_[current_];
  bool queued = false;
  bool late = false;
  for (Step& s : round.steps) {
    if (s.kind == Step::Kind::kLocal) {
      if (s.afterPosting)
        late = true;
      else
        s.fn();
    } else if (s.kind == Step::Kind::kDevice) [[unlikely]] {
      Status st = runDevice(s);
      if (!st.isOk()) {
        status_ = st;
        return false;
      }
      queued = true;
    }
  }
  if (queued) {
    Status st = device::fenceRecord(stream_, &fence_);
    if (!st.isOk()) {
      status_ = st;
      return false;
    }
    fencePending_ = true;
  }
  for (Step& s : round.steps) {
    if (s.kind == Step::Kind::kLocal || s.kind == Step::Kind::kDevice) continue;
    Request* r = nullptr;
    Status st =
        s.kind == Step::Kind::kSend
            ? p2p::isend(s.buf, s.count, s.type, s.peer, tag_, comm_, SendMode::kStandard,
                         Channel::kColl, &r, sig_)
        : s.base ? p2p::irecvFold(s.buf, s.count, s.type, s.peer, tag_, comm_, foldFromBase, &s,
                                  &r, sig_)
        : s.op   ? p2p::irecvFold(s.buf, s.count, s.type, s.peer, tag_, comm_, foldWithOp, s.op,
                                  &r, sig_)
               : p2p::irecv(s.buf, s.count, s.type, s.peer, tag_, comm_, Channel::kColl, &r, sig_);
    if (!st.isOk()) {
      status_ = st;
      return false;
    }
    pending_.push_back(r);
  }
  if (late)
    for (Step& s : round.steps)
      if (s.kind == Step::Kind::kLocal && s.afterPosting) s.fn();
  return true;
}

bool Schedule::advance() {
  while (current_ < rounds_.size()) {
    if (!started_) {
      started_ = true;
      if (!startRound()) return true;
    }
    // The round is done when all its sends and receives are.
    for (Request* r : pending_) {
      if (r->complete) continue;
      if ((++idle_ & 63) == 0 && (sig_ || check_)) {
        Status st = waitChecks();
        if (!st.isOk()) {
          status_ = st;
          abandon();
          return true;
        }
      }
      return false;
    }
    // And its device work (a fence polled like the messages).
    if (fencePending_ && !deviceDone()) [[unlikely]]
      return false;
    for (Request* r : pending_) {
      if (status_.isOk()) status_ = checkMessage(*r);
      Request::release(r);
    }
    pending_.clear();
    if (!status_.isOk()) return true;
    ++current_;
    started_ = false;
  }
  return true;
}

// While the schedule waits: every 64 idle polls it reads the clock (polls
// may sleep 20 ms each in an oversubscribed rank's idle wait, so counting
// them alone would not do), and every 200 us it looks for a peer's message
// of this call with another signature and runs the check of setCheck; a
// call that has waited a second without either sends its probes
// (call_probe.h).
Status Schedule::waitChecks() {
  const auto now = std::chrono::steady_clock::now();
  if (idle_ == 64) {
    waitingSince_ = lastCheck_ = now;
    return Status::ok();
  }
  if (now - lastCheck_ < std::chrono::microseconds(200)) return Status::ok();
  lastCheck_ = now;
  int src = 0;
  uint16_t theirs = 0;
  if (sig_ && p2p::conflictingMessage(comm_, tag_, sig_, &src, &theirs))
    return mismatchStatus(sig_, theirs, "rank " + std::to_string(src));
  if (check_) LOOM_TRY(check_(checkCtx_, *this));
  if (probes_ && !probed_ && now - waitingSince_ > std::chrono::seconds(1)) {
    log::debug("coll", "call %d (signature 0x%04x) has waited a second: probing its %d peers",
               tag_, sig_, comm_->size() - 1);
    probeCall(comm_, tag_, sig_);
    probed_ = true;
  }
  return Status::ok();
}

// A finished send or receive of the schedule: its error, or a receive that
// did not get exactly the bytes it was posted for (every message of a
// collective has a size both sides compute from their arguments, so a short
// one means ranks passed different counts or datatypes).
Status Schedule::checkMessage(const Request& r) const {
  if (r.peerSig) {
    const int src = r.statusSource;
    return mismatchStatus(sig_, r.peerSig,
                          src >= 0 ? "rank " + std::to_string(src) : std::string("a rank"));
  }
  if (r.statusError == MPI_ERR_TRUNCATE)
    return errorf(MPI_ERR_TRUNCATE, "a collective message from rank %d was truncated: the ranks "
                  "passed different counts or datatypes", r.statusSource);
  if (r.statusError != MPI_SUCCESS)
    return errorf(r.statusError, "a collective message failed");
  if (r.kind == ReqKind::kRecv && !r.cancelled &&
      static_cast<size_t>(r.bytes) != static_cast<size_t>(r.count) * static_cast<size_t>(r.type->size()))
    return errorf(MPI_ERR_TRUNCATE, "rank %d sent %lld bytes of a collective message where "
                  "%lld were expected: the ranks passed different counts or datatypes",
                  r.statusSource, static_cast<long long>(r.bytes),
                  static_cast<long long>(r.count * r.type->size()));
  return Status::ok();
}

void Schedule::abandon() {
  bool inFlight = false;
  for (Request* r : pending_) {
    if (!r->complete && r->kind == ReqKind::kRecv) p2p::cancelRecv(r);
    if (r->complete) {
      Request::release(r);
    } else {
      inFlight = true;  // the p2p layer completes it; nobody releases it
    }
  }
  // A message still in flight may land in scratch: keep it (an error path).
  if (inFlight) {
    for (auto& b : scratch_) (void)b.release();
    keepScratch_ = true;
  }
  pending_.clear();
  current_ = rounds_.size();
}

// A failed call tells every other rank of the communicator, so that none
// waits for ever on a message this rank will not send: an empty message of
// the call's tag whose signature says "gave up, with this error class". A
// receive of the call meets it, by source or as a message of the same tag
// from another source, and fails too (MPI_ERR_... of the class).
void Schedule::poisonPeers() {
  if (status_.isOk() || comm_->size() < 2) return;
  const uint16_t sig = poisonSignature(status_.code());
  for (int peer = 0; peer < comm_->size(); ++peer) {
    if (peer == comm_->rank()) continue;
    Request* r = nullptr;
    if (!p2p::isend(nullptr, 0, move::byteType(), peer, tag_, comm_, SendMode::kStandard,
                    Channel::kColl, &r, sig)
             .isOk() ||
        !r)
      continue;
    if (r->complete)
      Request::release(r);
    else
      r->userFreed = true;  // recycled when the engine completes it
  }
}

// Completes the schedule's request with status_: on an error, its peers
// learn of it (poisonPeers), and so does the shared-memory context
// (onFail_); a probed call leaves the call log.
void Schedule::complete() {
  poisonPeers();
  if (!status_.isOk() && onFail_) onFail_(checkCtx_, status_);
  if (probes_) callEnded(comm_, tag_, sig_);
  request_->statusError = status_.code();
  request_->error = status_;
  request_->finish();
}

int Schedule::pollAll(void*) {
  auto& list = active();
  int events = 0;
  for (size_t i = 0; i < list.size();) {
    Schedule* s = list[i];
    if (s->advance()) {
      list[i] = list.back();
      list.pop_back();
      s->complete();
      recycle(s);
      ++events;
    } else {
      ++i;
    }
  }
  return events;
}

Status Schedule::start(std::unique_ptr<Schedule> s, Request** out) {
  if (!gHooked) {
    progress::add(pollAll, nullptr);
    gHooked = true;
  }
  if (s->rounds_.back().steps.empty() && s->rounds_.size() > 1) s->rounds_.pop_back();
  if (s->probes_) callStarted(s->comm_, s->tag_, s->sig_);
  Request* r = Request::alloc(ReqKind::kColl);
  r->active = true;
  r->comm = s->comm_;
  s->request_ = r;
  *out = r;
  Schedule* raw = s.release();
  // Run as far as possible now: many rounds complete at once (local steps,
  // messages already waiting), and a one-rank schedule completes here.
  if (raw->advance()) {
    Status st = raw->status_;
    raw->complete();
    recycle(raw);
    return st;
  }
  active().push_back(raw);
  return Status::ok();
}

}  // namespace loom::coll
