// Progress: the one loop that moves every operation forward.
//
// Transports and collective schedules register a poll function; MPI calls
// poll them. Loom has no progress thread: a rank progresses while it is
// inside an MPI call. Waiting spins briefly, then yields the processor when
// the node runs more ranks than cores (spinning there would steal the very
// core the peer needs to make progress).
#pragma once

#include <sched.h>

namespace loom::progress {

using PollFn = int (*)(void* ctx);  // returns how many events it handled

void add(PollFn fn, void* ctx);
void remove(PollFn fn, void* ctx);

// One pass over every poller; returns the events handled.
int poll();

void setOversubscribed(bool yes);
bool oversubscribed();

// Calls poll() until done() is true.
template <class Done>
void waitUntil(Done done) {
  if (done()) return;
  const bool yield = oversubscribed();
  for (unsigned spins = 0;; ++spins) {
    int events = poll();
    if (done()) return;
    if (events == 0) {
      if (yield && spins > 16) {
        sched_yield();
      } else {
        __builtin_ia32_pause();
      }
    }
  }
}

}  // namespace loom::progress
