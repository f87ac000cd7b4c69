// How the engine reads and writes user buffers through a datatype: a
// contiguous type is a plain memcpy (the hot path), anything else goes
// through the datatype's streaming packer.
#pragma once

#include <cstring>

#include "core/copy_small.h"
#include "core/datatype.h"

namespace loom::p2p {

inline size_t typeSize(const Datatype* t) { return static_cast<size_t>(t->size()); }

// The first byte of `count` contiguous elements, or nullptr when the type
// is not contiguous (then data must be packed).
inline void* contiguousBase(const Datatype* t, const void* buf) {
  if (!t->isContiguous()) return nullptr;
  return const_cast<char*>(static_cast<const char*>(buf)) + t->trueLb();
}

// Small copies inline (core/copy_small.h), larger ones through memcpy.
inline void copyBytes(void* dst, const void* src, size_t n) {
  copySmall(static_cast<char*>(dst), static_cast<const char*>(src), n);
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
