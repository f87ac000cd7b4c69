// What the ranks of a communicator say of their collective calls, and what
// a failed call does to the communicator (shm_coll.h, "Calls that fail").
//
// Each rank publishes, next to its flag, its latest shared-memory op (at
// +16: id = the op's first step) and its latest message-based call (at +64:
// id = its number). Both carry the call's number on the communicator
// (`call`, CollArgs::call), the same on every rank whichever algorithm runs
// it: ranks that picked different algorithms for one call compare through
// it. A rank
// also remembers its own last kHistory calls, so that a blocked rank can
// judge a peer that is still in an earlier call (blocked there, perhaps on
// this rank, because the two disagreed about it).
#include <cstring>

#include "coll/op.h"
#include "coll/shm/shm_coll.h"
#include "core/progress.h"

namespace loom::coll {
namespace {

// Which arguments must agree on every rank when two descriptions are
// compared: the root of rooted collectives; the bytes of every collective
// whose bytes (CollArgs::bytes) are the same on every rank of a correct
// program (not so for the v/w variants, where they are this rank's largest
// block, or the root's).
bool rooted(Collective c) {
  return c == Collective::kBcast || c == Collective::kReduce || c == Collective::kGather ||
         c == Collective::kGatherv || c == Collective::kScatter || c == Collective::kScatterv;
}
bool sized(Collective c) {
  return c != Collective::kGatherv && c != Collective::kScatterv && c != Collective::kAlltoallv &&
         c != Collective::kAlltoallw;
}

}  // namespace

// One published description (32 bytes). `id` is written last, after a
// zero: a reader that sees the same non-zero id before and after reading
// the rest read one description.
struct ShmColl::Signature {
  std::atomic<uint64_t> id;
  uint64_t bytes;
  uint8_t coll;
  uint8_t op;
  uint16_t steps;  // saturates at 0xffff (then never "the same steps")
  int32_t root;
  uint64_t call;

  void write(uint64_t newId, const Desc& d) {
    id.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    bytes = d.bytes;
    coll = static_cast<uint8_t>(d.coll);
    op = d.op;
    steps = static_cast<uint16_t>(d.steps < 0xffff ? d.steps : 0xffff);
    root = d.root;
    call = d.call;
    id.store(newId, std::memory_order_release);
  }

  // False when there is none, or it was being rewritten.
  bool read(uint64_t* outId, Desc* d) const {
    const uint64_t i = id.load(std::memory_order_acquire);
    if (i == 0) return false;
    d->bytes = bytes;
    d->coll = static_cast<Collective>(coll);
    d->op = op;
    d->steps = steps == 0xffff ? 0 : steps;
    d->root = root;
    d->call = call;
    std::atomic_thread_fence(std::memory_order_acquire);
    if (id.load(std::memory_order_relaxed) != i) return false;
    *outId = i;
    return true;
  }
};

ShmColl::Signature& ShmColl::signature(int r, size_t at) const {
  static_assert(sizeof(Signature) == 32 && kOpSignature + 32 <= kCallSignature &&
                kCallSignature + 32 <= kFlagStride);
  return *reinterpret_cast<Signature*>(flags_ + static_cast<size_t>(r) * kFlagStride + at);
}

ShmColl::Signature& ShmColl::ringEntry(int r, uint64_t base) const {
  static_assert(sizeof(Signature) == kRingEntry);
  return *reinterpret_cast<Signature*>(
      rings_ + (static_cast<size_t>(r) * depth_ + (base & (depth_ - 1))) * kRingEntry);
}

ShmColl::Desc ShmColl::describe(const ShmOp& op) {
  const uint8_t kind = op.args.op ? static_cast<uint8_t>(static_cast<int>(op.args.op->kind()) + 1)
                                  : 0;
  return Desc{op.args.call, op.described, op.args.coll, op.args.root, op.steps, kind};
}

void ShmColl::remember(const Desc& d) { history_[d.call % kHistory] = d; }

const ShmColl::Desc* ShmColl::remembered(uint64_t call) const {
  const Desc& d = history_[call % kHistory];
  return d.call == call ? &d : nullptr;
}

// What differs between rank r's description of a call and this rank's.
// `strict`: every field (two shared-memory ops of the same steps);
// `earlier`: the call is one this rank has left.
Status ShmColl::differ(int r, const Desc& theirs, const Desc& mine, bool strict, bool earlier) {
  const char* when = earlier ? "in an earlier call on this communicator, " : "";
  if (theirs.coll != mine.coll)
    return errorf(MPI_ERR_OTHER, "%srank %d called %s where this rank called %s", when, r,
                  collectiveName(theirs.coll), collectiveName(mine.coll));
  if ((strict || rooted(mine.coll)) && theirs.root != mine.root)
    return errorf(MPI_ERR_ROOT, "%srank %d passed root %d where this rank passed %d", when, r,
                  theirs.root, mine.root);
  if ((strict || sized(mine.coll)) && theirs.bytes != mine.bytes)
    return errorf(MPI_ERR_TRUNCATE, "%srank %d passed %llu bytes where this rank passed %llu "
                  "(counts or datatypes differ)", when, r,
                  static_cast<unsigned long long>(theirs.bytes),
                  static_cast<unsigned long long>(mine.bytes));
  // A reduction's op, where both describe one (shared-memory ops; a
  // message-based call's messages carry theirs).
  if (theirs.op && mine.op && theirs.op != mine.op)
    return errorf(MPI_ERR_OP, "%srank %d passed another op than this rank", when, r);
  return Status::ok();
}

void ShmColl::sign(const ShmOp& op) {
  ringEntry(rank_, op.base).write(op.base, op.desc);
  signature(rank_, kOpSignature).write(op.base, op.desc);
}

// Rank r's description against this rank's of the same op (same base).
Status ShmColl::compareDesc(int r, const Desc& theirs, const Desc& mine, bool* benign) const {
  if (theirs == mine) [[likely]] return Status::ok();  // the same call, alike in every field
  if (theirs.call != mine.call)
    return errorf(MPI_ERR_OTHER, "rank %d is at another collective call on this communicator "
                  "(an earlier call went wrong)", r);
  Status st = differ(r, theirs, mine, true, false);
  if (!st.isOk()) *benign = onlyCounts(theirs, mine);
  return st;
}

// The hot check, on every flag read: rank r's op of the same steps.
Status ShmColl::compare(const ShmOp& op, int r, bool* benign) const {
  const Signature& sig = signature(r, kOpSignature);
  // Most reads find the peer on another op (or still on this one, already
  // compared): leave after one load when the steps differ.
  const uint64_t at = sig.id.load(std::memory_order_acquire);
  if (at > op.base && at < op.base + op.steps) {
    // The peer began a later op inside this op's steps: its version of this
    // call took fewer steps (ranks passed different counts, both sides on the
    // shared segment), and the step this rank reads is not this call's.
    return errorf(MPI_ERR_OTHER, "rank %d has left this collective call after %llu of its "
                  "%u steps here: the ranks passed different counts or datatypes", r,
                  static_cast<unsigned long long>(at - op.base), op.steps);
  }
  // 0: the peer is rewriting its signature (for this op or a later one):
  // its ring entry for this op, written first, may be there.
  if (at < op.base && at != 0) return Status::ok();
  uint64_t id;
  Desc theirs;
  // The peer in this op: its signature, on the flag's cache line.
  if (at == op.base && sig.read(&id, &theirs) && id == op.base)
    return compareDesc(r, theirs, op.desc, benign);
  // The peer has moved on past this op (a broadcast's root runs ahead), or
  // did while its signature was read: its description of this op is in its
  // ring, written before the signature and kept for depth_ steps.
  const Signature& e = ringEntry(r, op.base);
  if (e.id.load(std::memory_order_acquire) != op.base) return Status::ok();
  if (!e.read(&id, &theirs) || id != op.base) return Status::ok();
  return compareDesc(r, theirs, op.desc, benign);
}

// Both of rank r's descriptions against this rank's own of the same call:
// the current one, or an earlier one r is still in.
// A difference only in the counts between two shared-memory ops of as many
// steps is `benign`; in an earlier call (a peer still finishing it) it is
// no concern of this call at all.
Status ShmColl::checkPeer(int r, const Desc& mine, bool* benign) const {
  for (size_t at : {kOpSignature, kCallSignature}) {
    uint64_t id;
    Desc theirs;
    if (!signature(r, at).read(&id, &theirs)) continue;
    Status st;
    if (theirs.call == mine.call) {
      st = differ(r, theirs, mine, false, false);
      if (!st.isOk() && onlyCounts(theirs, mine)) *benign = true;
    } else if (const Desc* old = remembered(theirs.call)) {
      st = differ(r, theirs, *old, false, true);
      if (!st.isOk() && onlyCounts(theirs, *old)) st = Status::ok();
    }
    if (!st.isOk()) return st;
  }
  return Status::ok();
}

Status ShmColl::checkSignatures(const ShmOp& op, bool* benign) {
  const Desc& mine = op.desc;
  *benign = false;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    bool b = false;
    Status st = compare(op, r, &b);
    if (st.isOk()) st = checkPeer(r, mine, &b);
    if (!st.isOk()) {
      *benign = b;
      return st;
    }
  }
  // A failure of a later call (a peer that finished this one and failed its
  // next) is no reason for this one to fail: it completes.
  Status f = sharedFailure();
  if (!f.isOk() && failedCall_ > op.args.call) return Status::ok();
  return f;
}

void ShmColl::signCall(uint64_t call, Collective coll, int root, uint64_t bytes) {
  pendingCall_ = Desc{call, bytes, coll, root};
  remember(pendingCall_);
  if (ready()) flushPending();
}

Status ShmColl::checkCall(uint64_t call, Collective coll, int root, uint64_t bytes) {
  if (!ready() || !mapped()) return sharedFailure();
  const Desc mine{call, bytes, coll, root};
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    bool benign = false;  // never, against a message-based call (steps 0)
    Status st = checkPeer(r, mine, &benign);
    if (!st.isOk()) return st;
  }
  return sharedFailure();
}

void ShmColl::fail(const Status& st, uint64_t call) {
  if (st.isOk() || !failed_.isOk()) return;  // only the first failure counts
  failed_ = st;
  failedRank_ = rank_;
  failedCall_ = call;
  failurePending_ = true;
  // Written now if the segment is mapped, else by the progress hook once it
  // is (settleAll waits for that at MPI_Finalize).
  if (!(ready() && flushPending())) poll();
}

Status ShmColl::sharedFailure() {
  if (failed_.isOk() && mapped()) {
    auto* h = static_cast<ShmSegmentHeader*>(base_);
    if (const int code = h->failedCode.load(std::memory_order_acquire)) {
      failed_ = errorf(code, "failed");
      failedRank_ = h->failedRank;
      failedCall_ = h->failedCall;
    }
  }
  if (failed_.isOk()) return Status::ok();
  const char* cls = errorClassName(failed_.code());
  return errorf(MPI_ERR_OTHER, "a collective on this communicator failed on rank %d (%s); "
                "every collective on it fails from then on, on every rank", failedRank_,
                cls ? cls : "MPI_ERR_UNKNOWN");
}

Status ShmColl::failureSlow(uint64_t call) {
  ready();  // maps the segment if its setup message came: a peer's failure is there
  if (!poisoned()) return Status::ok();
  Status st = sharedFailure();
  // A peer that failed this very call: run it, it finds out what differed.
  if (!st.isOk() && failedCall_ == call) return Status::ok();
  return st;
}

bool ShmColl::flushPending() {
  if (!mapped()) return !setupStatus_.isOk();  // nothing can be written, ever
  if (pendingCall_.call) {
    signature(rank_, kCallSignature).write(pendingCall_.call, pendingCall_);
    pendingCall_.call = 0;
  }
  if (failurePending_) {
    auto* h = static_cast<ShmSegmentHeader*>(base_);
    if (h->failureClaimed.exchange(1, std::memory_order_acq_rel) == 0) {
      h->failedRank = failedRank_;
      h->failedCall = failedCall_;
      h->failedCode.store(failed_.code(), std::memory_order_release);
    }
    failurePending_ = false;
  }
  return true;
}

}  // namespace loom::coll
