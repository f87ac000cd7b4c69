#include "core/progress.h"

#include <cstdio>
#include <cstdlib>

namespace loom::progress {
namespace detail {
Poller gPollers[kMaxPollers];
size_t gCount = 0;
bool gOversubscribed = false;
IdleFn gIdleWait = nullptr;
}  // namespace detail

void setIdleWait(IdleFn fn) { detail::gIdleWait = fn; }

using detail::gCount;
using detail::gPollers;

void add(PollFn fn, void* ctx) {
  if (gCount == detail::kMaxPollers) {
    // A fixed table keeps the loop free of reallocation hazards; a handful of
    // pollers exist (p2p, schedules, shared-memory collectives).
    std::fprintf(stderr, "loom: more than %zu progress pollers\n", detail::kMaxPollers);
    std::abort();
  }
  gPollers[gCount++] = {fn, ctx};
}

void remove(PollFn fn, void* ctx) {
  size_t out = 0;
  for (size_t i = 0; i < gCount; ++i)
    if (!(gPollers[i].fn == fn && gPollers[i].ctx == ctx)) gPollers[out++] = gPollers[i];
  gCount = out;
}

}  // namespace loom::progress
