// Synchronisation: fence, post-start-complete-wait and passive target
// (rma/window.h).
//
// Operations on kDirect and kCma targets are complete when their call
// returns, so closing an epoch on them is a memory fence. Operations sent
// as messages are complete at the target once it acknowledged them
// (flushMessages waits for the acknowledgements), or answered a later
// request of the same origin (an unlock). Native RMA writes and reads
// (native.cc) are complete at their libfabric completion: every call below
// that closes or flushes an epoch waits for those first (waitNative),
// before any message of its own can tell the target the epoch is over.
//
// Locks on a target of this node spin on its lock word (rma/sync_util.h),
// progressing while they wait so that requests for this rank keep being
// served; locks on a target of another node are a request that the target
// grants when it can.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "core/datatype.h"
#include "core/progress.h"
#include "p2p/p2p.h"
#include "rma/am.h"
#include "rma/ops_util.h"
#include "rma/sync_util.h"
#include "rma/window.h"

namespace loom::rma {

namespace {

Datatype* intType() {
  static Datatype* t = predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_INT32_T));
  return t;
}

void memoryFence() { std::atomic_thread_fence(std::memory_order_seq_cst); }

}  // namespace

Status Window::control(int target, uint8_t op, int kind, Request** req, int32_t* code) {
  AmHeader h{static_cast<AmOp>(op), static_cast<uint8_t>(kind), 0, nextReplyTag(), 0, 0, 0, 0, 0};
  LOOM_TRY(p2p::irecv(code, 1, intType(), target, h.replyTag, comm_, Channel::kPt2pt, req));
  auto* m = static_cast<AmHeader*>(std::malloc(sizeof h));
  *m = h;
  Status st = sendOwned(this, target, kTagRequest, m, sizeof h);
  if (!st.isOk()) {
    (void)p2p::cancelRecv(*req);
    Request::release(*req);
    *req = nullptr;
  }
  return st;
}

Status Window::waitControls(std::vector<Request*>& reqs, std::vector<int32_t>& codes) {
  progress::waitUntil([&] {
    for (Request* r : reqs)
      if (r && !r->complete) return false;
    return true;
  });
  Status st = Status::ok();
  for (size_t i = 0; i < reqs.size(); ++i) {
    if (!reqs[i]) continue;
    if (st.isOk() && reqs[i]->statusError != MPI_SUCCESS)
      st = errorf(reqs[i]->statusError, "a synchronisation message failed");
    if (st.isOk() && codes[i] != MPI_SUCCESS)
      st = errorf(codes[i], "an operation on this window failed at its target (outside the "
                  "memory the target exposed)");
    Request::release(reqs[i]);
  }
  reqs.clear();
  return st;
}

Status Window::flushMessages(int target) {
  if (!usesMessages_) return Status::ok();
  const int n = size();
  auto caughtUp = [&](int t) { return peers_[t].acked >= peers_[t].sent; };
  progress::waitUntil([&] {
    if (target >= 0) return caughtUp(target);
    for (int t = 0; t < n; ++t)
      if (!caughtUp(t)) return false;
    return true;
  });
  for (int t = 0; t < n; ++t) {
    Peer& p = peers_[t];
    if ((target >= 0 && t != target) || p.ackError == MPI_SUCCESS) continue;
    const int code = p.ackError;
    p.ackError = MPI_SUCCESS;
    return errorf(code, "an operation on target rank %d failed there (outside the memory it "
                  "exposed)", t);
  }
  return Status::ok();
}

Status Window::waitGets() {
  if (gets_.empty()) return Status::ok();
  progress::waitUntil([this] {
    for (auto& g : gets_)
      if (!g.first->complete) return false;
    return true;
  });
  Status st = Status::ok();
  for (auto& [r, bytes] : gets_) {
    // A user's request (MPI_Rget...) reports its own error.
    if (r->onComplete) {
      Request::release(r);
      continue;
    }
    if (st.isOk() && r->statusError != MPI_SUCCESS)
      st = errorf(r->statusError, "receiving the data of a get failed");
    if (st.isOk() && static_cast<size_t>(r->bytes) != bytes)
      st = errorf(MPI_ERR_RMA_RANGE, "a get read outside the memory its target exposed");
    Request::release(r);
  }
  gets_.clear();
  return st;
}

Status Window::fence(int assert, const Collectives& coll) {
  if (started_ || posted_ || locks_ > 0 || lockAll_)
    return errorf(MPI_ERR_RMA_SYNC, "MPI_Win_fence inside a %s epoch",
                  started_ || posted_ ? "post-start-complete-wait" : "passive-target");
  Status st = waitNative(-1);
  Status m = flushMessages(-1);
  if (st.isOk()) st = m;
  Status g = waitGets();
  memoryFence();
  // Every rank has finished its operations before any leaves the barrier
  // (each flushed its messages first), and no rank starts the next epoch's
  // operations before every target has entered the fence.
  Status b = coll.barrier(comm_);
  memoryFence();
  fenceOpen_ = !(assert & MPI_MODE_NOSUCCEED);
  if (!st.isOk()) return st;
  if (!g.isOk()) return g;
  return b;
}

// Window ranks of `group`'s members (MPI_ERR_GROUP for a stranger).
static Status ranksOf(Comm* comm, Group* group, std::vector<int>* out) {
  out->clear();
  for (int i = 0; i < group->size(); ++i) {
    int r = comm->group()->rankOf(group->jobRank(i));
    if (r < 0) return errorf(MPI_ERR_GROUP, "the group has a process that is not in the window");
    out->push_back(r);
  }
  return Status::ok();
}

Status Window::post(Group* group, int assert) {
  if (posted_) return errorf(MPI_ERR_RMA_SYNC, "MPI_Win_post twice without MPI_Win_wait");
  if (fenceOpen_ && !(assert & MPI_MODE_NOCHECK)) fenceOpen_ = false;
  LOOM_TRY(ranksOf(comm_, group, &exposureGroup_));
  memoryFence();
  for (int r : exposureGroup_) {
    Request* c = nullptr;
    LOOM_TRY(p2p::irecv(nullptr, 0, intType(), r, kTagComplete, comm_, Channel::kPt2pt, &c));
    completes_.push_back(c);
    if (!(assert & MPI_MODE_NOCHECK)) LOOM_TRY(sendOwned(this, r, kTagPost, std::malloc(1), 0));
  }
  posted_ = true;
  return Status::ok();
}

Status Window::start(Group* group, int assert) {
  if (started_) return errorf(MPI_ERR_RMA_SYNC, "MPI_Win_start twice without MPI_Win_complete");
  if (locks_ > 0 || lockAll_)
    return errorf(MPI_ERR_RMA_SYNC, "MPI_Win_start inside a passive-target epoch (%s held)",
                  lockAll_ ? "MPI_Win_lock_all" : "a lock");
  LOOM_TRY(ranksOf(comm_, group, &accessGroup_));
  fenceOpen_ = false;  // a fence epoch ends where another synchronisation starts
  if (!(assert & MPI_MODE_NOCHECK)) {
    std::vector<Request*> posts;
    for (int r : accessGroup_) {
      Request* p = nullptr;
      LOOM_TRY(p2p::irecv(nullptr, 0, intType(), r, kTagPost, comm_, Channel::kPt2pt, &p));
      posts.push_back(p);
    }
    progress::waitUntil([&] {
      for (Request* p : posts)
        if (!p->complete) return false;
      return true;
    });
    for (Request* p : posts) Request::release(p);
  }
  memoryFence();
  started_ = true;
  return Status::ok();
}

Status Window::complete() {
  if (!started_) return errorf(MPI_ERR_RMA_SYNC, "MPI_Win_complete without MPI_Win_start");
  Status st = Status::ok();
  for (int r : accessGroup_) {
    Status s = waitNative(r);
    if (st.isOk()) st = s;
    s = flushMessages(r);
    if (st.isOk()) st = s;
  }
  Status g = waitGets();
  memoryFence();
  for (int r : accessGroup_) {
    Status s = sendOwned(this, r, kTagComplete, std::malloc(1), 0);
    if (st.isOk()) st = s;
  }
  started_ = false;
  accessGroup_.clear();
  return st.isOk() ? g : st;
}

Status Window::wait() {
  if (!posted_) return errorf(MPI_ERR_RMA_SYNC, "MPI_Win_wait without MPI_Win_post");
  progress::waitUntil([this] {
    for (Request* c : completes_)
      if (!c->complete) return false;
    return true;
  });
  for (Request* c : completes_) Request::release(c);
  completes_.clear();
  exposureGroup_.clear();
  posted_ = false;
  memoryFence();
  return Status::ok();
}

Status Window::test(bool* done) {
  if (!posted_) return errorf(MPI_ERR_RMA_SYNC, "MPI_Win_test without MPI_Win_post");
  progress::testPoll();
  for (Request* c : completes_)
    if (!c->complete) {
      *done = false;
      return Status::ok();
    }
  *done = true;
  return wait();
}

Status Window::lock(int type, int target, int assert) {
  Peer& p = peers_[target];
  if (p.lockHeld || lockAll_)
    return errorf(MPI_ERR_RMA_SYNC, "target rank %d is already locked by this rank", target);
  if (started_)
    return errorf(MPI_ERR_RMA_SYNC, "MPI_Win_lock inside an MPI_Win_start access epoch "
                  "(MPI_Win_complete first)");
  const int kind = type == MPI_LOCK_EXCLUSIVE ? kLockExclusive : kLockShared;
  fenceOpen_ = false;
  p.noCheck = (assert & MPI_MODE_NOCHECK) != 0;
  if (!p.noCheck) {
    if (p.access == Access::kMessage) {
      std::vector<Request*> reqs(1);
      std::vector<int32_t> codes(1);
      LOOM_TRY(control(target, static_cast<uint8_t>(AmOp::kLock), kind, &reqs[0], &codes[0]));
      LOOM_TRY(waitControls(reqs, codes));
    } else {
      while (!tryLockWord(p.ctl, kind)) {
        // Serve this rank's own requests while waiting, and let the holder run.
        if (progress::poll() == 0 && progress::oversubscribed()) sched_yield();
      }
    }
  }
  p.lockHeld = kind;
  ++locks_;
  return Status::ok();
}

Status Window::unlock(int target) {
  Peer& p = peers_[target];
  if (!p.lockHeld || lockAll_)
    return errorf(MPI_ERR_RMA_SYNC, "target rank %d is not locked by this rank (MPI_Win_lock)",
                  target);
  Status g = waitGets();
  // RMA writes land before the unlock can release the target's lock word.
  Status st = waitNative(target);
  if (p.access == Access::kMessage) {
    std::vector<Request*> reqs(1);
    std::vector<int32_t> codes(1);
    if (p.noCheck) {
      Status f = flushMessages(target);
      if (st.isOk()) st = f;
    } else {
      // Answered once every earlier request of ours was applied there.
      Status c =
          control(target, static_cast<uint8_t>(AmOp::kUnlock), p.lockHeld, &reqs[0], &codes[0]);
      if (c.isOk()) c = waitControls(reqs, codes);
      if (st.isOk()) st = c;
      Status f = flushMessages(target);  // the acknowledgements came first
      if (st.isOk()) st = f;
    }
  } else {
    memoryFence();
    if (!p.noCheck) unlockWord(p.ctl, p.lockHeld);
  }
  p.lockHeld = 0;
  p.noCheck = false;
  --locks_;
  return st.isOk() ? g : st;
}

Status Window::lockAll(int assert) {
  if (lockAll_ || locks_ > 0)
    return errorf(MPI_ERR_RMA_SYNC, "MPI_Win_lock_all while this rank holds %s",
                  lockAll_ ? "a lock_all epoch" : "a lock");
  if (started_)
    return errorf(MPI_ERR_RMA_SYNC, "MPI_Win_lock_all inside an MPI_Win_start access epoch "
                  "(MPI_Win_complete first)");
  const bool noCheck = (assert & MPI_MODE_NOCHECK) != 0;
  fenceOpen_ = false;
  const int n = size();
  if (!noCheck) {
    // Every remote request first, then the words of this node, then the
    // answers: the waits overlap.
    std::vector<Request*> reqs(n, nullptr);
    std::vector<int32_t> codes(n, MPI_SUCCESS);
    Status st = Status::ok();
    for (int t = 0; t < n && st.isOk(); ++t)
      if (peers_[t].access == Access::kMessage)
        st = control(t, static_cast<uint8_t>(AmOp::kLock), kLockShared, &reqs[t], &codes[t]);
    std::vector<bool> held(n, false);
    for (int t = 0; t < n && st.isOk(); ++t) {
      Peer& p = peers_[t];
      if (p.access == Access::kMessage) continue;
      while (!tryLockWord(p.ctl, kLockShared))
        if (progress::poll() == 0 && progress::oversubscribed()) sched_yield();
      held[t] = true;
    }
    // Every answer is waited for (the receives write into `codes`).
    std::vector<Request*> pending;
    std::vector<int32_t> got;
    progress::waitUntil([&] {
      for (Request* r : reqs)
        if (r && !r->complete) return false;
      return true;
    });
    for (int t = 0; t < n; ++t) {
      if (!reqs[t]) continue;
      if (reqs[t]->statusError == MPI_SUCCESS && codes[t] == MPI_SUCCESS)
        held[t] = true;
      else if (st.isOk())
        st = errorf(reqs[t]->statusError != MPI_SUCCESS ? reqs[t]->statusError : codes[t],
                    "locking target rank %d failed", t);
      Request::release(reqs[t]);
    }
    if (!st.isOk()) {
      // Give back what was taken.
      std::vector<Request*> undo;
      std::vector<int32_t> undoCodes(n);
      for (int t = 0; t < n; ++t) {
        if (!held[t]) continue;
        if (peers_[t].access != Access::kMessage) {
          unlockWord(peers_[t].ctl, kLockShared);
          continue;
        }
        Request* r = nullptr;
        if (control(t, static_cast<uint8_t>(AmOp::kUnlock), kLockShared, &r,
                    &undoCodes[undo.size()]).isOk())
          undo.push_back(r);
      }
      (void)waitControls(undo, undoCodes);
      return st;
    }
  }
  for (Peer& p : peers_) p.noCheck = noCheck;
  lockAll_ = true;
  return Status::ok();
}

Status Window::unlockAll() {
  if (!lockAll_) return errorf(MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all without MPI_Win_lock_all");
  Status g = waitGets();
  const int n = size();
  std::vector<Request*> reqs;
  std::vector<int32_t> codes(n);
  // RMA writes land before any unlock can release a target's lock word.
  Status st = waitNative(-1);
  memoryFence();
  for (int t = 0; t < n; ++t) {
    Peer& p = peers_[t];
    if (p.access == Access::kMessage) {
      if (p.noCheck) continue;  // flushed below
      Request* r = nullptr;
      Status s = control(t, static_cast<uint8_t>(AmOp::kUnlock), kLockShared, &r,
                         &codes[reqs.size()]);
      if (!s.isOk() && st.isOk()) st = s;
      reqs.push_back(r);
    } else if (!p.noCheck) {
      unlockWord(p.ctl, kLockShared);
    }
    p.noCheck = false;
  }
  Status w = waitControls(reqs, codes);
  Status f = flushMessages(-1);
  if (w.isOk()) w = f;
  lockAll_ = false;
  if (!st.isOk()) return st;
  return w.isOk() ? g : w;
}

Status Window::flush(int target) {
  if (!lockAll_ && (target >= 0 ? !peers_[target].lockHeld : locks_ == 0))
    return errorf(MPI_ERR_RMA_SYNC, "flush outside a passive-target epoch (MPI_Win_lock or "
                  "MPI_Win_lock_all)");
  // Only loads and stores in mapped memory (a window on one node): nothing
  // to wait for. (OSU's fetch-and-op and compare-and-swap loops flush after
  // every operation.)
  if (!usesMessages_ && nativeInFlight_ == 0 && !nativeFailed_ && gets_.empty()) {
    memoryFence();
    return Status::ok();
  }
  Status st = waitNative(target);
  Status m = flushMessages(target);
  if (st.isOk()) st = m;
  Status g = waitGets();
  memoryFence();
  return st.isOk() ? g : st;
}

void Window::sync() { memoryFence(); }

}  // namespace loom::rma
