// The passive-target lock word of a Control block (rma/window.h), shared
// by the origin side (sync.cc) and the target side acting for an origin of
// another node (am_target.cc). `kind`: kShared or kExclusive.
#pragma once

#include <atomic>
#include <cstdint>

#include "rma/window.h"

namespace loom::rma {

enum : int { kLockShared = 1, kLockExclusive = 2 };

inline bool tryLockWord(Control* c, int kind) {
  uint32_t v = c->lock.load(std::memory_order_relaxed);
  if (kind == kLockExclusive)
    return v == 0 && c->lock.compare_exchange_strong(v, Control::kExclusive,
                                                     std::memory_order_acquire);
  while (!(v & Control::kExclusive))
    if (c->lock.compare_exchange_weak(v, v + 1, std::memory_order_acquire)) return true;
  return false;
}

inline void unlockWord(Control* c, int kind) {
  if (kind == kLockExclusive)
    c->lock.store(0, std::memory_order_release);
  else
    c->lock.fetch_sub(1, std::memory_order_release);
}

}  // namespace loom::rma
