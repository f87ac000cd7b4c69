// Progress: the one loop that moves every operation forward.
//
// Transports and collective schedules register a poll function; MPI calls
// poll them. Loom has no progress thread: a rank progresses while it is
// inside an MPI call. Waiting spins briefly, then yields the processor when
// the node runs more ranks than cores (spinning there would steal the very
// core the peer needs to make progress).
//
// The loop is inline and the pollers sit in a fixed array: an idle pass over
// three pollers is three indirect calls, which matters because a blocked
// MPI_Recv's reaction time to an arriving message is about half a pass.
#pragma once

#include <sched.h>

#include <cstddef>

namespace loom::progress {

using PollFn = int (*)(void* ctx);  // returns how many events it handled

void add(PollFn fn, void* ctx);
void remove(PollFn fn, void* ctx);

// How an oversubscribed rank waits when a pass found nothing: by default it
// yields the processor; a transport that can sleep until it has work (the
// libfabric completion queue's fd) installs a function that blocks briefly
// instead (nullptr: back to yielding).
using IdleFn = void (*)();
void setIdleWait(IdleFn fn);

namespace detail {
struct Poller {
  PollFn fn;
  void* ctx;
};
constexpr size_t kMaxPollers = 32;
extern Poller gPollers[kMaxPollers];
extern size_t gCount;
extern bool gOversubscribed;
extern IdleFn gIdleWait;
}  // namespace detail

// One pass over every poller; returns the events handled.
inline int poll() {
  int events = 0;
  // Index loop, count re-read: a poller may add another (a schedule starting
  // a step).
  for (size_t i = 0; i < detail::gCount; ++i)
    events += detail::gPollers[i].fn(detail::gPollers[i].ctx);
  return events;
}

// The single pass of a test (MPI_Test*, MPI_Iprobe, MPI_Request_get_status*):
// when the node runs more ranks than cores and the pass found nothing, the
// rank gives up the processor before returning. A program that polls in a
// loop (HPL's panel broadcast tests and probes between pieces of work) would
// otherwise keep the core from the rank whose message it is waiting for.
// Not oversubscribed, it is exactly poll().
inline int testPoll() {
  int events = poll();
  if (events == 0 && detail::gOversubscribed) sched_yield();
  return events;
}

inline void setOversubscribed(bool yes) { detail::gOversubscribed = yes; }
inline bool oversubscribed() { return detail::gOversubscribed; }

// Idle passes a wait makes before it starts pausing between passes (a pass is
// ~5-15 ns, so a few microseconds).
constexpr unsigned kSpinsBeforePause = 256;
// Oversubscribed: idle passes, each followed by a pause, before a wait gives
// up the processor (waitUntil).
constexpr unsigned kPausesBeforeYield = 4;

// Calls the pollers until done() is true. done() is checked as soon as a
// poller reports events, so a wait that the first poller (point-to-point)
// completes does not also pay for the others in that pass; a wait that does
// not complete at once runs full passes, so every poller keeps progressing.
template <class Done>
void waitUntil(Done done) {
  if (done()) return;
  const bool yield = detail::gOversubscribed;
  for (unsigned spins = 0;; ++spins) {
    int events = 0;
    for (size_t i = 0; i < detail::gCount; ++i) {
      int e = detail::gPollers[i].fn(detail::gPollers[i].ctx);
      if (e) {
        events += e;
        if (done()) return;
      }
    }
    if (events == 0) {
      if (yield) {
        // Only a few pauses first: with more ranks than cores the awaited
        // rank is as likely waiting for a core as running, and each pause
        // costs a whole pass besides (one ring per peer at 16 ranks). 4 and
        // 16 ranks on 2 cores, six interleaved runs against 17 pauses: 4 ranks,
        // 8 B allreduce 2.60-2.89 us against 3.14-4.08, barrier 2.34-2.46
        // against 2.84-2.95; 16 ranks, scatter of 32 KiB blocks 78-87 us
        // against 85-176; yielding at once gained half of that.
        if (spins < kPausesBeforeYield)
          __builtin_ia32_pause();
        else if (detail::gIdleWait)
          detail::gIdleWait();
        else
          sched_yield();
      } else if (spins > kSpinsBeforePause) {
        // PAUSE costs ~35 ns on the EPYC VMs measured, longer than a whole
        // idle pass: pausing at once would add ~half of that to every
        // message's reaction time. Spin bare for a few microseconds first.
        __builtin_ia32_pause();
      }
    } else if (done()) {
      return;
    }
  }
}

}  // namespace loom::progress
