// Shared-memory collectives: the ranks of a communicator that share one node
// meet in a segment of their own and read each other's data there, instead
// of sending messages.
//
// The segment. One per communicator, made on the first shared-memory
// collective: comm rank 0 creates it (core/segment.h: a memfd, never named
// in /dev/shm) and sends its number, its pid and the memfd's descriptor
// number to the others on the collective channel (a 16-byte message each,
// never a blocking wait, so MPI_I* stay nonblocking); they take the
// descriptor and map it, and rank 0 closes its descriptor once they all
// have. Where segments must be named it is /dev/shm/loom-<nspace>-coll-
// <rank>-<n> (mode 0600) and the last rank to map it unlinks the name. It
// holds, per rank, one flag (its own 128-byte line, with the rank's pid)
// and depth (up to 64 within a 2 MiB segment, at least 4; 128 when ranks
// outnumber cores; LOOM_COLL_SHM_DEPTH; rank 0's choice) staging slots of
// LOOM_COLL_SHM_SLOT bytes.
//
// Steps. Every collective on the communicator is a fixed number of steps,
// numbered globally (each call reserves its steps, in call order, which is
// the same on every rank). At step k a rank may write its slot k % depth,
// then publishes k in its flag. A published k also says "I have finished
// reading everything of steps before k". So:
//   - data of rank r for step k is readable once flag[r] >= k;
//   - rank r may overwrite its slot k % depth (last used at step
//     k - depth) once every flag >= k - depth + 1 (slotFree).
// Every rank publishes every step, even those where it writes nothing, so
// one rule serves all algorithms. With depth slots a writer runs up to
// depth - 1 steps ahead of its slowest reader: a root of bcast or a rank of
// reduce need not wait for the others to finish the previous call, and
// messages larger than a slot pipeline through the slots.
//
// Driving. Each call is a ShmOp: a resumable function that advances as far
// as the flags allow and returns. Ops run in call order per communicator,
// from one progress hook; a blocking collective starts its op and waits on
// its request like any other. A call whose peers are all there completes
// inside start(), without the hook.
//
// Calls that fail. Ranks that passed different arguments may pick different
// algorithms for the same call (the rules key on this rank's bytes): one
// rank runs a shared-memory op, another a schedule, or both the same op
// with a different number of steps. Each rank then describes the call
// (signatures, keyed by the call's number on the communicator, which every
// rank counts alike whatever runs the call; shm_checks.cc) and a blocked
// rank compares its peers' descriptions, so it fails instead of waiting
// forever. After such a
// failure the ranks no longer agree on the steps the next calls use, so a
// failed call poisons the communicator: its rank writes the failure into
// the segment's header (at once, or as soon as the segment is mapped), and
// every later collective on the communicator fails at once on every rank,
// as does any call still blocked (it checks the header while it waits).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "coll/selector.h"
#include "core/comm.h"
#include "core/request.h"
#include "core/segment.h"
#include "core/status.h"

namespace loom::coll {

class ShmColl;

// The start of a communicator's segment (its first 64 bytes).
struct ShmSegmentHeader {
  std::atomic<int32_t> attached;  // ranks that mapped the segment; the last unlinks a name
  uint32_t ranks;                 // the communicator's size (for the parked segments)
  uint64_t number;                // the setup message's: a peer checks it mapped the right one
  // A collective on the communicator failed (ShmColl::fail): the first
  // failing rank claims these, writes where and which call (its number),
  // then the error class (release: a reader that sees it sees the rest).
  std::atomic<int32_t> failureClaimed;
  std::atomic<int32_t> failedCode;
  int32_t failedRank;
  uint32_t reserved;
  uint64_t failedCall;
};
static_assert(sizeof(ShmSegmentHeader) <= 64);

// What a rank says of one call (shm_checks.cc): published in its signature
// and ring, compared with its peers'.
struct ShmDesc {
  uint64_t call = 0;  // the call's number (CollArgs::call; 0: none)
  uint64_t bytes = 0;
  Collective coll = Collective::kBarrier;
  int root = 0;
  uint32_t steps = 0;  // a shared-memory op's steps (0: a message-based call)
  uint8_t op = 0;      // a reduction's op kind + 1 (0: none, or not described)
  bool operator==(const ShmDesc&) const = default;
};

// One collective call on the segment.
struct ShmOp {
  // Advances as far as possible; true when the call is done (on error too:
  // then `status` says what failed).
  using RunFn = bool (*)(ShmColl&, ShmOp&);

  RunFn run = nullptr;
  CollArgs args;
  uint64_t base = 0;    // the call's first step
  uint32_t steps = 0;   // how many it reserved
  uint32_t step = 0;    // the current one, 0..steps
  uint8_t phase = 0;    // within the current step (algorithm-defined)
  size_t bytes = 0;     // packed bytes per rank (algorithm-defined)
  size_t described = 0; // the bytes its signature states (usually `bytes`)
  ShmDesc desc;         // made once by ShmColl::start, from the fields above
  size_t piece = 0;     // bytes moved per step
  std::vector<std::byte> scratch;  // a packed accumulator when the type is not contiguous
  Request* request = nullptr;
  Status status;
  bool signed_ = false;  // its signature is published (ShmColl::sign)
};

class ShmColl {
 public:
  ~ShmColl();

  // The communicator's context: created on first use (starting its setup),
  // or null when the communicator cannot have one (LOOM_COLL_SHM=0, one
  // rank, ranks on several nodes, more than LOOM_COLL_SHM_MAX_RANKS).
  static ShmColl* of(Comm* c);
  // Whether of(c) would give a context (cheap; for supports()).
  static bool eligible(Comm* c);
  // The context for the message-based calls' signatures (signCall,
  // checkCall): also on a real node that LOOM_COLL_VIRTUAL_NODE_SIZE splits
  // into several, where the shared-memory algorithms do not run.
  static ShmColl* forChecks(Comm* c);

  // LOOM_COLL_SHM_SLOT as every context uses it.
  static size_t configuredSlot();

  int size() const { return size_; }
  int rank() const { return rank_; }
  size_t slotBytes() const { return slot_; }

  // The call's op, from a pool; the caller fills args, run and steps.
  ShmOp* newOp();
  // Reserves the op's steps and runs it: `*out` completes when it is done.
  // The first error of the context's setup fails the op.
  Status start(ShmOp* op, Request** out);

  // Message-based calls (schedules) on this communicator describe
  // themselves too, in the second line of the rank's flag pair, by the
  // call's number (CollArgs::call), which every rank computes alike. A rank
  // blocked in such a call compares (checkCall) and learns that a peer passed
  // another collective, root or size (to its schedule or its shared-memory
  // op) instead of waiting forever. A call signed before the segment is
  // mapped is written when it is.
  void signCall(uint64_t call, Collective coll, int root, uint64_t bytes);
  Status checkCall(uint64_t call, Collective coll, int root, uint64_t bytes);

  // Call number `call` (CollArgs::call) of this rank on the communicator
  // failed: poisons the communicator (see "Calls that fail" above); the
  // first failure counts.
  void fail(const Status& st, uint64_t call);
  // Ok, or the failure call `call` must return at once because an earlier
  // call failed on some rank. (A peer that failed this same call is no
  // reason: the call runs and finds out what differed.)
  Status failure(uint64_t call) {
    if (mapped() && !poisoned()) [[likely]]
      return Status::ok();  // on every call: one header load
    return failureSlow(call);
  }
  // Waits until every failure of this rank is written where its peers can
  // see it (MPI_Finalize, before its barrier: a peer may still be blocked
  // in the call that failed here, waiting to learn of it).
  static void settleAll();

  // --- For the algorithms (only while an op runs: the segment is mapped).
  // Rank r's slot for step k.
  std::byte* slot(int r, uint64_t k) const {
    return slots_ + (static_cast<size_t>(r) * depth_ + (k & (depth_ - 1))) * slot_;
  }
  // Rank r has published k. Each flag read also checks the rank's
  // signature of the running call (same cache line, so it costs nothing).
  bool reached(int r, uint64_t k) {
    const uint64_t v = flag(r).load(std::memory_order_acquire);
    if (v < k) return false;
    verify(r);
    return true;
  }
  // Every rank has published k.
  bool allReached(uint64_t k) {
    if (k <= allMin_) return true;
    uint64_t m = UINT64_MAX;
    for (int r = 0; r < size_; ++r) {
      const uint64_t v = flag(r).load(std::memory_order_acquire);
      if (v < k) return false;
      verify(r);
      m = v < m ? v : m;
    }
    allMin_ = m;
    return true;
  }
  // Compares the description of the running op with every peer's that is
  // in the same op now (never waits; a mismatch fails the op).
  void verifyPeers() {
    for (int r = 0; r < size_; ++r) verify(r);
  }
  // Every rank is done with what was in the slots step k writes.
  bool slotFree(uint64_t k) { return k < depth_ || allReached(k - depth_ + 1); }
  void publish(uint64_t k) { flag(rank_).store(k, std::memory_order_release); }
  uint64_t depth() const { return depth_; }  // slots per rank (LOOM_COLL_SHM_DEPTH)
  // Rank r's process id (for single-copy reads of its buffers).
  int pid(int r) const {
    return *reinterpret_cast<const int32_t*>(flags_ + static_cast<size_t>(r) * kFlagStride + 8);
  }

 private:
  ShmColl(Comm* c);
  static ShmColl* contextOf(Comm* c);  // the communicator's, made on first use
  std::atomic<uint64_t>& flag(int r) const {
    return *reinterpret_cast<std::atomic<uint64_t>*>(flags_ + static_cast<size_t>(r) * kFlagStride);
  }
  // Setup: false while the segment is not mapped yet.
  bool ready();
  Status create();
  Status attach();
  void setPid();
  void touchSlots();
  // What a rank says of one call (shm_checks.cc).
  using Desc = ShmDesc;
  struct Signature;
  static constexpr size_t kOpSignature = 16;    // byte offsets in a rank's flag pair
  static constexpr size_t kCallSignature = 64;
  Signature& signature(int r, size_t at) const;
  // Rank r's description of its op that began at step `base`, kept for the
  // last depth_ steps' ops (a writer runs at most depth_ steps ahead of a
  // reader): a reader whose peer has moved on still compares.
  static constexpr size_t kRingEntry = 32;
  Signature& ringEntry(int r, uint64_t base) const;
  static Desc describe(const ShmOp& op);  // what start() stores in op.desc
  void sign(const ShmOp& op);
  // `benign` (out): the mismatch found is only in the counts, between two
  // shared-memory ops of as many steps (see drain()).
  Status checkSignatures(const ShmOp& op, bool* benign);
  Status compare(const ShmOp& op, int r, bool* benign) const;
  Status compareDesc(int r, const Desc& theirs, const Desc& mine, bool* benign) const;
  Status checkPeer(int r, const Desc& mine, bool* benign) const;
  static Status differ(int r, const Desc& theirs, const Desc& mine, bool strict, bool earlier);
  // Only the counts (or a reduction's op) differ, and both are shared-memory
  // ops of the same steps: every rank still runs the same steps.
  static bool onlyCounts(const Desc& theirs, const Desc& mine) {
    return theirs.call == mine.call && theirs.coll == mine.coll && theirs.root == mine.root &&
           theirs.steps != 0 && theirs.steps == mine.steps &&
           (theirs.bytes != mine.bytes || theirs.op != mine.op);
  }
  // This rank's own last calls, to judge a peer still in one of them.
  static constexpr size_t kHistory = 16;
  Desc history_[kHistory];
  void remember(const Desc& d);
  const Desc* remembered(uint64_t call) const;
  // This context's pending writes (a call signature, a failure) once the
  // segment is mapped; true when nothing is left to write.
  bool flushPending();
  Status sharedFailure();  // a failure a rank wrote into the header, if any
  Status failureSlow(uint64_t call);
  // Whether any is known or written (one header load: on every call).
  bool poisoned() const {
    return !failed_.isOk() ||
           (base_ && static_cast<const ShmSegmentHeader*>(base_)->failedCode.load(
                         std::memory_order_acquire) != 0);
  }
  // Compares rank r's signature with the running call's (if r describes
  // the same call), remembering the first mismatch in mismatch_.
  void verify(int r) {
    if (current_ && r != rank_ && mismatch_.isOk())
      mismatch_ = compare(*current_, r, &mismatchBenign_);
  }
  const ShmOp* current_ = nullptr;  // the op being run
  Status mismatch_;
  bool mismatchBenign_ = false;  // mismatch_ is only in the counts or op (onlyCounts)
  // Runs queued ops in order; true when the queue emptied.
  bool drain();
  // Advances one op (the segment mapped, or its setup failed) and checks
  // what it read: true when it is done (status set on failure).
  bool advance(ShmOp* op);
  static int pollAll(void*);
  void finish(ShmOp* op);

  static constexpr size_t kFlagStride = 128;  // a flag per pair of cache lines

  Comm* comm_;
  int size_, rank_;
  size_t slot_;
  uint64_t depth_;  // a power of two, the same on every rank
  uint64_t nextStep_ = 1;
  uint64_t allMin_ = 0;
  uint32_t blockedPolls_ = 0;  // drains that found the running op blocked

  // The mapping.
  std::string name_;          // the segment's name, where segments are named
  segment::Segment segment_;  // on rank 0 also its memfd, until every rank took it
  void* base_ = nullptr;
  size_t mapped_ = 0;
  std::byte* flags_ = nullptr;
  std::byte* rings_ = nullptr;  // depth_ op descriptions per rank (ringEntry)
  std::byte* slots_ = nullptr;
  // Rank 0: closes its memfd once every rank has mapped the segment.
  void releaseWhenShared();

  // Setup: rank 0 sends this to the others (three uint64: number, pid and
  // descriptor, slots per rank); number 0 says the creation failed.
  struct SetupMsg {
    uint64_t number = 0;
    segment::Handle handle;
    uint64_t depth = 0;  // slots per rank: rank 0 decides, the others follow
  };
  static_assert(sizeof(SetupMsg) == 24);
  SetupMsg setupMsg_;
  uint64_t number_ = 0;
  Request* setup_ = nullptr;
  Status setupStatus_;
  bool mapped() const { return base_ != nullptr; }

  std::deque<ShmOp*> queue_;  // started, not done, in call order
  std::vector<ShmOp*> pool_;  // free ops
  bool polled_ = false;       // in the progress hook's list
  void poll();                // puts the context in the progress hook's list

  // Written once the segment is mapped: the latest message-based call's
  // description (call 0: none), and this rank's failure.
  Desc pendingCall_;
  Status failed_;             // the communicator's first known failure
  int failedRank_ = -1;       // where it happened
  uint64_t failedCall_ = 0;   // in which call (CollArgs::call)
  bool failurePending_ = false;  // ours, not yet written into the header
};


// Slots per rank that LOOM_COLL_SHM_DEPTH=auto gives a segment of `ranks`
// ranks and `slot`-byte slots where every rank has a core (shm_coll.cc,
// depthFor): the most, up to 64, that fit in 2 MiB, and 4 at least.
uint64_t shmAutoDepth(int ranks, size_t slot);

// The shared-memory algorithms' supports(): the communicator can have a
// context (ShmColl::eligible) and, for reductions, the op can run on the
// packed stream (predefined, or a user op on a contiguous type).
bool shmSupports(const CollArgs& a);
bool shmReductionSupports(const CollArgs& a);
// For one-to-many collectives (bcast, scatter): also declines when the node
// is oversubscribed (the same answer on every rank: the launcher says so).
bool shmRootedSupports(const CollArgs& a);

}  // namespace loom::coll
