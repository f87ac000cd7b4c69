// Asynchronous progress: a thread that moves operations forward while the
// application computes outside MPI, for what cannot wait for the next MPI
// call (a passive-target lock or get from another node, which the target
// applies: rma/am.h).
//
// Loom progresses inside MPI calls, and its internals are not thread-safe.
// So while the thread runs, every MPI call holds the API lock
// (runtime/api's generated entry points take it when asyncOn() is true),
// and the thread polls only when it can take that lock: it never runs
// beside an MPI call. It is started by the first user that needs it
// (asyncRetain) and stopped by the last (asyncRelease); without users
// nothing changes, not even the cost of a call beyond one load.
//
// The thread polls, then sleeps: 20 us after a pass that found work, up to
// 1 ms when idle (a lock granted to a computing target waits at most that).
// LOOM_ASYNC_PROGRESS=0 never starts it.
#pragma once

#include <atomic>
#include <mutex>

namespace loom::progress {

namespace detail {
extern std::atomic<bool> gAsyncOn;
extern bool gAdopted;  // the lock was taken inside a call that entered without it
extern int gUnlockedDepth;  // nesting of calls that entered without the lock
std::recursive_mutex& apiMutex();
void releaseAdopted();
}  // namespace detail

inline bool asyncOn() { return detail::gAsyncOn.load(std::memory_order_relaxed); }

// Held by every MPI entry point (the outermost) while async progress runs.
class ApiGuard {
 public:
  ApiGuard() : locked_(asyncOn()) {
    if (locked_) detail::apiMutex().lock();
  }
  ~ApiGuard() {
    if (locked_) detail::apiMutex().unlock();
  }
  ApiGuard(const ApiGuard&) = delete;
  ApiGuard& operator=(const ApiGuard&) = delete;

 private:
  bool locked_;
};

// Around a call that entered without the lock. The outermost one gives back
// the lock a call inside it took when it started the thread (asyncRetain);
// a nested call (from a user callback) must not. Calls are serialised
// (MPI_THREAD_SERIALIZED at most), so a plain counter does.
inline void enterUnlockedCall() { ++detail::gUnlockedDepth; }
inline void leaveUnlockedCall() {
  if (--detail::gUnlockedDepth == 0 && __builtin_expect(detail::gAdopted, 0))
    detail::releaseAdopted();
}

// Called inside an MPI call (so on the thread that owns the call): one user
// more / fewer of the progress thread.
void asyncRetain();
void asyncRelease();
// Stops the thread whatever its users (MPI_Finalize).
void asyncShutdown();

// While someone waits for work that arrives without a message (a device
// stream reaching an operation enqueued on it: runtime/api/stream_*.cc),
// the thread keeps its short nap (20 us) instead of backing off to 1 ms:
// nothing else would wake it. Costs a poll pass every ~20 us while busy.
// Any thread may call it; +1 / -1, balanced.
void asyncBusy(int delta);

}  // namespace loom::progress
