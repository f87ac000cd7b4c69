// Schedule: a collective algorithm written down as rounds of steps, and the
// one engine that runs every schedule.
//
// An algorithm adds steps (send, recv, local reduce, local copy) and closes
// rounds; a round starts when the previous one has completed. At the start
// of a round its local steps run first (so "receive in round k, reduce in
// round k+1" works), then its sends and receives are posted. Blocking
// collectives wait on the schedule's request; MPI_I* return it. Schedules
// progress inside progress::poll(), so several can be in flight on one or
// several communicators while the application computes between MPI_Test
// calls.
//
// Messages travel on the communicator's collective channel with the tag the
// communicator hands to each collective call (Comm::nextCollectiveTag), so
// they never match user messages or another collective's.
//
// Device steps (algorithms on device buffers, coll/device_pipe.h): a round
// may also queue work on a GPU (a reduction, a copy) on the schedule's one
// stream. It is queued at round start, after the local steps and before the
// messages are posted, and the round completes only when it has finished as
// well: one fence recorded after the round's device work, polled by the
// progress hook like the messages (never a blocking wait). So the contract
// an algorithm relies on is the same as for local steps, with asynchrony
// inside the round: device work of round k overlaps round k's messages
// (it must not touch what they read or write) and is finished before round
// k+1 starts. A schedule that completes has no device work left in flight.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/comm.h"
#include "core/datatype.h"
#include "core/device.h"
#include "core/request.h"
#include "core/status.h"

namespace loom::coll {

class Op;

class Schedule {
 public:
  // A local step: reduce or copy, given as a function run at round start.
  using LocalFn = std::function<void()>;

  // Device work of a round: queues its work on `stream` and returns; an
  // error (a CUDA failure, an unsupported pair) ends the schedule with it.
  using DeviceFn = std::function<Status(device::Stream)>;

  Schedule(Comm* comm, int tag) : comm_(comm), tag_(tag) { rounds_.emplace_back(); }
  // A schedule for a call: a finished one reused when there is one (its
  // vectors keep their capacity, so a call of the same shape allocates
  // nothing), else a new one.
  static std::unique_ptr<Schedule> make(Comm* comm, int tag);
  // Frees device scratch and the stream (after waiting for work still in
  // flight there, which only a failed schedule leaves).
  ~Schedule();
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  Comm* comm() const { return comm_; }

  void send(const void* buf, int64_t count, Datatype* type, int peer);
  void recv(void* buf, int64_t count, Datatype* type, int peer);
  // Receives `count` elements and reduces them into `buf` (buf = received op
  // buf, as reduceLocal); the result is there when the round is done. Where
  // the transport can (p2p::canFold) the message is reduced piece by piece as
  // it arrives, while it is in the cache; otherwise it is received into
  // scratch and reduced in a round of its own. So: add it last in its round,
  // and do not send from `buf` in the same round.
  void recvReduce(void* buf, int64_t count, Datatype* type, Op* op, int peer);
  // The same with `buf` = received op `base` (base: a buffer of the same
  // layout that the schedule does not write): each piece that arrives is
  // combined with the piece of `base` at its offset straight into `buf`
  // (reducePackedFrom), instead of copying all of `base` into `buf` first.
  // With `baseFirst`, buf = base op received instead (the operand order
  // of a device form that computes mine op received, for the same bits);
  // then `base` must not be `buf`.
  void recvReduceFrom(void* buf, const void* base, int64_t count, Datatype* type, Op* op,
                      int peer, bool baseFirst = false);
  void local(LocalFn fn);
  // A local step that runs once the round's sends and receives are posted,
  // so that it overlaps them: a root's copy of its own block while its
  // peers read theirs. It must not touch what those messages read or write.
  void localAfterPosting(LocalFn fn);
  // A device step (see the top of this file): `fn` runs at round start,
  // after the round's local steps, queueing work on the schedule's stream;
  // the round is complete when its messages are and that work has finished.
  void device(DeviceFn fn);
  // Ends the current round.
  void endRound();

  // A check run now and then while the schedule waits for messages (every
  // 200 us of waiting, after a look for a peer's message of this call with
  // another signature): a failure ends the schedule with that error instead
  // of waiting on. The selector installs one that compares
  // the ranks' descriptions of the call (ShmColl::checkCall), so a peer that
  // passed another root makes this rank fail rather than hang.
  using CheckFn = Status (*)(void* ctx, const Schedule& s);
  // Told when the schedule ends with an error (same ctx as the check): the
  // selector poisons the communicator's shared-memory context with it.
  using FailFn = void (*)(void* ctx, const Status& st);
  void setCheck(CheckFn fn, void* ctx, FailFn onFail = nullptr) {
    check_ = fn;
    checkCtx_ = ctx;
    onFail_ = onFail;
  }

  // The call's signature (callSignature in selector.h), carried by every
  // message of the schedule: a peer whose message of this call carries
  // another one made another call (collective, root or op), and the
  // receive that meets it fails instead of taking wrong data or waiting for
  // a message that never comes. This works across nodes, where no shared
  // memory holds the ranks' descriptions (setCheck).
  void setSignature(uint16_t sig) { sig_ = sig; }
  // Where no shared memory holds the ranks' descriptions: this call's
  // signature is logged for the peers' probes, and the call sends probes of
  // its own once it has waited a second (coll/call_probe.h).
  void enableProbes() { probes_ = true; }

  // A temporary buffer that lives as long as the schedule (the first one of
  // up to kInlineScratch bytes inside the schedule itself).
  void* scratch(size_t bytes);
  // Device memory that lives as long as the schedule (a pool keeps it for
  // the next call: coll/device_pipe.h); nullptr when there is none.
  void* deviceScratch(size_t bytes);

  // Starts the schedule; `*out` completes when the last round has. The
  // schedule owns itself from here on (freed at completion).
  static Status start(std::unique_ptr<Schedule> s, Request** out);

  size_t roundCount() const {
    return rounds_.size() - (rounds_.size() > 1 && rounds_.back().steps.empty() ? 1 : 0);
  }

  // Read access for the single-process simulator of the unit tests.
  struct Step {
    enum class Kind : uint8_t { kSend, kRecv, kLocal, kDevice } kind;
    void* buf;
    int64_t count;  // kDevice: the index of its function (runDevice)
    Datatype* type;
    int peer;
    LocalFn fn;
    Op* op = nullptr;  // kRecv: reduce into buf instead of overwriting it
    const void* base = nullptr;  // with op: buf = received op base (recvReduceFrom)
    bool baseFirst = false;      // with base: buf = base op received
    bool afterPosting = false;   // kLocal: run after the round's messages are posted
  };
  struct Round {
    std::vector<Step> steps;
  };
  const std::vector<Round>& rounds() const { return rounds_; }
  int tag() const { return tag_; }
  // Runs a kDevice step's function on the schedule's stream (the simulator
  // calls it; it then waits for the stream itself: waitDevice).
  Status runDevice(const Step& s);
  Status waitDevice();

 private:
  // Starts round `current_`; returns false on error (recorded in status_).
  bool startRound();
  // Moves forward as far as possible; true when the schedule is done.
  bool advance();
  static int pollAll(void*);

  Comm* comm_;
  int tag_;
  std::vector<Round> rounds_;
  size_t current_ = 0;
  bool started_ = false;
  std::vector<Request*> pending_;  // this round's sends and receives
  CheckFn check_ = nullptr;
  void* checkCtx_ = nullptr;
  uint16_t sig_ = 0;
  bool probes_ = false;   // enableProbes()
  bool probed_ = false;   // this call's probes are sent
  std::chrono::steady_clock::time_point waitingSince_, lastCheck_;  // waitChecks()
  FailFn onFail_ = nullptr;
  // Completes the schedule's request (with status_), telling onFail_.
  void complete();
  uint32_t idle_ = 0;  // polls that found the round incomplete
  Status checkMessage(const Request& r) const;
  Status waitChecks();
  void poisonPeers();
  // Gives up on this round's messages after a failed check: receives are
  // cancelled and released; a send still in flight is left to the p2p layer
  // (it may still be read by a peer), never released while referenced.
  void abandon();
  std::vector<std::unique_ptr<std::byte[]>> scratch_;
  static constexpr size_t kInlineScratch = 64;
  alignas(16) std::byte inlineScratch_[kInlineScratch];
  bool inlineUsed_ = false;
  // A finished schedule goes back to make()'s free list when it holds
  // nothing of a device (else it is deleted).
  static void recycle(Schedule* s);
  void reset(Comm* comm, int tag);
  // Device steps: their functions (Step::count indexes them), the stream
  // (taken from a pool on first use), the fence of the round's work, and
  // device scratch (returned to its pool when the schedule ends).
  std::vector<DeviceFn> deviceFns_;
  device::Stream stream_{};
  bool hasStream_ = false;
  bool fencePending_ = false;
  bool keepScratch_ = false;  // abandon(): a message may still land in scratch
  device::Fence fence_{};
  struct DeviceBuf {
    void* p;
    size_t bytes;
  };
  std::vector<DeviceBuf> deviceScratch_;
  // After the round's messages: false while its device work runs.
  bool deviceDone();
  Request* request_ = nullptr;
  Status status_;
};

}  // namespace loom::coll
