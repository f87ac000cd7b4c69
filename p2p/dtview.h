// How the engine reads and writes user buffers through a datatype: a
// contiguous type is a plain memcpy (the hot path), anything else goes
// through the datatype's streaming packer.
#pragma once

#include <cstring>

#include "core/datatype.h"

namespace loom::p2p {

inline size_t typeSize(const Datatype* t) { return static_cast<size_t>(t->size()); }

// The first byte of `count` contiguous elements, or nullptr when the type
// is not contiguous (then data must be packed).
inline void* contiguousBase(const Datatype* t, const void* buf) {
  if (!t->isContiguous()) return nullptr;
  return const_cast<char*>(static_cast<const char*>(buf)) + t->trueLb();
}

// Small copies inline (a libc call costs as much as the copy itself).
inline void copyBytes(void* dst, const void* src, size_t n) {
  if (n <= 16) {
    auto* d = static_cast<unsigned char*>(dst);
    auto* s = static_cast<const unsigned char*>(src);
    if (n >= 8) {
      uint64_t a, b;
      std::memcpy(&a, s, 8);
      std::memcpy(&b, s + n - 8, 8);
      std::memcpy(d, &a, 8);
      std::memcpy(d + n - 8, &b, 8);
    } else {
      for (size_t i = 0; i < n; ++i) d[i] = s[i];
    }
    return;
  }
  std::memcpy(dst, src, n);
}

inline void packTo(const Datatype* t, const void* buf, int64_t count, size_t offset, void* out,
                   size_t bytes) {
  if (bytes == 0) return;
  if (t->isContiguous()) {
    copyBytes(out, static_cast<const char*>(buf) + t->trueLb() + offset, bytes);
    return;
  }
  t->pack(buf, count, offset, out, bytes);
}

inline void unpackFrom(const Datatype* t, const void* in, size_t bytes, void* buf, int64_t count,
                       size_t offset) {
  if (bytes == 0) return;
  if (t->isContiguous()) {
    copyBytes(static_cast<char*>(buf) + t->trueLb() + offset, in, bytes);
    return;
  }
  t->unpack(buf, count, offset, in, bytes);
}

}  // namespace loom::p2p
