// Datatype packing: moving the packed stream of `count` elements between a
// user buffer and contiguous memory, from any offset of the stream.
//
// One walker enumerates the memory pieces behind a range of the stream;
// pack, unpack and segments differ only in what they do with a piece. The
// walker enters the stream with one division (element index) and one binary
// search (run within the element), then advances block by block, so packing
// a message in chunks costs the same as packing it at once.
#include <algorithm>
#include <cstring>

#include "core/datatype.h"

namespace loom {

namespace {

// memcpy with the common small sizes unrolled: types like a vector of
// doubles produce millions of 8-byte blocks, where a call to the generic
// memcpy costs more than the copy.
inline void copyBytes(char* dst, const char* src, size_t n) {
  switch (n) {
    case 1: std::memcpy(dst, src, 1); return;
    case 2: std::memcpy(dst, src, 2); return;
    case 4: std::memcpy(dst, src, 4); return;
    case 8: std::memcpy(dst, src, 8); return;
    case 12: std::memcpy(dst, src, 12); return;
    case 16: std::memcpy(dst, src, 16); return;
    default: std::memcpy(dst, src, n);
  }
}

}  // namespace

// Calls fn(address, length) for each memory piece holding stream bytes
// [streamOffset, streamOffset + maxBytes), in stream order. fn returns false
// to stop before consuming a piece. Returns the stream bytes consumed.
// Addresses are computed as integers: buf may be MPI_BOTTOM with absolute
// displacements, and offsets may be negative.
template <class Fn>
size_t Datatype::walk(uintptr_t base, int64_t count, size_t streamOffset, size_t maxBytes,
                      Fn&& fn) const {
  size_t total = packedSize(count);
  if (count <= 0 || streamOffset >= total || maxBytes == 0) return 0;
  size_t end = streamOffset + std::min(maxBytes, total - streamOffset);
  if (contiguous_) {
    uintptr_t p = base + static_cast<uintptr_t>(trueLb_) + streamOffset;
    return fn(p, end - streamOffset) ? end - streamOffset : 0;
  }
  const auto elemSize = static_cast<size_t>(size_);
  const auto ext = static_cast<uintptr_t>(extent());
  uintptr_t elem = base + ext * static_cast<uintptr_t>(streamOffset / elemSize);
  size_t within = streamOffset % elemSize;
  size_t r = std::upper_bound(runStart_.begin(), runStart_.end(), within) - runStart_.begin() - 1;
  size_t inRun = within - runStart_[r];
  auto k = static_cast<int64_t>(inRun / runs_[r].length);
  size_t intra = inRun % runs_[r].length;
  size_t pos = streamOffset;
  const size_t nruns = runs_.size();
  while (pos < end) {
    const DatatypeRun& run = runs_[r];
    const auto len = static_cast<size_t>(run.length);
    uintptr_t p = elem + static_cast<uintptr_t>(run.offset + k * run.stride) + intra;
    for (; k < run.count && pos < end; ++k, p += static_cast<uintptr_t>(run.stride)) {
      size_t n = std::min(len - intra, end - pos);
      if (!fn(p, n)) return pos - streamOffset;
      pos += n;
      p -= intra;
      intra = 0;
    }
    k = 0;
    if (++r == nruns) {
      r = 0;
      elem += ext;
    }
  }
  return pos - streamOffset;
}

size_t Datatype::pack(const void* buf, int64_t count, size_t streamOffset, void* out,
                      size_t outBytes) const {
  char* dst = static_cast<char*>(out);
  return walk(reinterpret_cast<uintptr_t>(buf), count, streamOffset, outBytes,
              [&](uintptr_t p, size_t n) {
                copyBytes(dst, reinterpret_cast<const char*>(p), n);
                dst += n;
                return true;
              });
}

size_t Datatype::unpack(void* buf, int64_t count, size_t streamOffset, const void* in,
                        size_t inBytes) const {
  const char* src = static_cast<const char*>(in);
  return walk(reinterpret_cast<uintptr_t>(buf), count, streamOffset, inBytes,
              [&](uintptr_t p, size_t n) {
                copyBytes(reinterpret_cast<char*>(p), src, n);
                src += n;
                return true;
              });
}

size_t Datatype::segments(const void* buf, int64_t count, size_t streamOffset, size_t maxBytes,
                          std::vector<iovec>* iov, size_t maxSegments) const {
  const size_t first = iov->size();
  return walk(reinterpret_cast<uintptr_t>(buf), count, streamOffset, maxBytes,
              [&](uintptr_t p, size_t n) {
                if (iov->size() > first) {
                  iovec& last = iov->back();
                  if (reinterpret_cast<uintptr_t>(last.iov_base) + last.iov_len == p) {
                    last.iov_len += n;
                    return true;
                  }
                }
                if (iov->size() >= maxSegments) return false;
                iov->push_back({reinterpret_cast<void*>(p), n});
                return true;
              });
}

}  // namespace loom
