#include "core/progress.h"

#include <algorithm>
#include <vector>

namespace loom::progress {
namespace {
struct Poller {
  PollFn fn;
  void* ctx;
};
std::vector<Poller> gPollers;
bool gOversubscribed = false;
}  // namespace

void add(PollFn fn, void* ctx) { gPollers.push_back({fn, ctx}); }

void remove(PollFn fn, void* ctx) {
  gPollers.erase(std::remove_if(gPollers.begin(), gPollers.end(),
                                [&](const Poller& p) { return p.fn == fn && p.ctx == ctx; }),
                 gPollers.end());
}

int poll() {
  int events = 0;
  // Index loop: a poller may add another (a schedule starting a step).
  for (size_t i = 0; i < gPollers.size(); ++i) events += gPollers[i].fn(gPollers[i].ctx);
  return events;
}

void setOversubscribed(bool yes) { gOversubscribed = yes; }
bool oversubscribed() { return gOversubscribed; }

}  // namespace loom::progress
