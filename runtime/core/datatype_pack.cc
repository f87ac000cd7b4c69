// Datatype packing: moving the packed stream of `count` elements between a
// user buffer and contiguous memory, from any offset of the stream.
//
// pack and unpack run a copy program compiled from the runs when the type is
// built (compileProgram): strided steps for long runs, lists of blocks for
// short ones. They enter the stream with one division (element index) and
// one binary search (step within the element), finish a partly covered
// element, move whole elements with no per-block bounds checks, and end with
// the head of the last element. Blocks of 1..16, 24 and 32 bytes are moved
// by loops specialised for their length, where memcpy has a constant size
// and becomes a few moves: ~1 ns per block, against ~5 ns for a library
// memcpy call plus per-block bookkeeping (30 ms for 16 MB of 3-byte blocks
// before, 4 ms now). Other lengths take a branchy inline copy up to 32 bytes
// and memcpy beyond.
//
// segments (iovecs for single-copy transports) uses a generic walker over
// the runs that calls a function per piece: its cost is the iovec anyway.
#include <algorithm>
#include <cstring>

#include "core/copy_small.h"
#include "core/datatype.h"

namespace loom {

namespace {

// Moves n bytes between user memory at address `mem` and the stream at `s`:
// to the stream when packing, from it when unpacking. With a constant n the
// memcpy compiles to a few moves.
template <bool kPack>
inline void moveFixed(uintptr_t mem, char* s, size_t n) {
  if constexpr (kPack) std::memcpy(s, reinterpret_cast<const char*>(mem), n);
  else std::memcpy(reinterpret_cast<char*>(mem), s, n);
}

template <bool kPack>
inline void moveAny(uintptr_t mem, char* s, size_t n) {
  if constexpr (kPack) copySmall(s, reinterpret_cast<const char*>(mem), n);
  else copySmall(reinterpret_cast<char*>(mem), s, n);
}

// n blocks of L bytes (L == 0: `len` bytes), the k-th at mem + k * stride,
// to or from consecutive stream bytes.
template <bool kPack, size_t L>
inline char* strided(uintptr_t mem, uintptr_t stride, size_t n, size_t len, char* s) {
  if constexpr (L == 0) {
    for (size_t k = 0; k < n; ++k, mem += stride, s += len) moveAny<kPack>(mem, s, len);
  } else {
    for (size_t k = 0; k < n; ++k, mem += stride, s += L) moveFixed<kPack>(mem, s, L);
  }
  return s;
}

// The n blocks b[0..n) of an element at `elem`, all L bytes long (L == 0:
// each its own length).
template <bool kPack, size_t L>
inline char* listed(uintptr_t elem, const Datatype::Block* b, size_t n, char* s) {
  for (size_t i = 0; i < n; ++i) {
    const uintptr_t p = elem + static_cast<uintptr_t>(b[i].offset);
    if constexpr (L == 0) {
      moveAny<kPack>(p, s, static_cast<size_t>(b[i].length));
      s += b[i].length;
    } else {
      moveFixed<kPack>(p, s, L);
      s += L;
    }
  }
  return s;
}

// Calls body.template operator()<L>() with L = len when a specialised loop
// exists for that length, else with L = 0 (the generic loop).
template <class Body>
inline char* byLength(size_t len, Body&& body) {
  switch (len) {
    case 1: return body.template operator()<1>();
    case 2: return body.template operator()<2>();
    case 3: return body.template operator()<3>();
    case 4: return body.template operator()<4>();
    case 5: return body.template operator()<5>();
    case 6: return body.template operator()<6>();
    case 7: return body.template operator()<7>();
    case 8: return body.template operator()<8>();
    case 9: return body.template operator()<9>();
    case 10: return body.template operator()<10>();
    case 11: return body.template operator()<11>();
    case 12: return body.template operator()<12>();
    case 13: return body.template operator()<13>();
    case 14: return body.template operator()<14>();
    case 15: return body.template operator()<15>();
    case 16: return body.template operator()<16>();
    case 24: return body.template operator()<24>();
    case 32: return body.template operator()<32>();
    default: return body.template operator()<0>();
  }
}

// One whole step of the element at `elem`.
template <bool kPack>
char* runStep(uintptr_t elem, const Datatype::Step& st, const Datatype::Block* blocks, char* s) {
  const auto len = static_cast<size_t>(st.length);
  const auto n = static_cast<size_t>(st.count);
  if (st.list) {
    const Datatype::Block* b = blocks + st.offset;
    return byLength(len, [&]<size_t L>() { return listed<kPack, L>(elem, b, n, s); });
  }
  const uintptr_t p = elem + static_cast<uintptr_t>(st.offset);
  const auto stride = static_cast<uintptr_t>(st.stride);
  return byLength(len, [&]<size_t L>() { return strided<kPack, L>(p, stride, n, len, s); });
}

}  // namespace

// Builds steps_ from runs_: a run of more than kListRunMax blocks becomes a
// strided step; the blocks of shorter runs go, in order, into list steps of
// at most kListMax blocks (of one length, or of mixed lengths when they
// differ). Cost O(blocks of short runs), memory 16 bytes per such block.
void Datatype::compileProgram() {
  steps_.clear();
  blocks_.clear();
  stepStart_.assign(1, 0);
  size_t pos = 0;
  bool open = false;  // steps_.back() is a list that may take more blocks
  for (const DatatypeRun& r : runs_) {
    if (r.count > kListRunMax) {
      steps_.push_back({r.offset, r.stride, r.length, r.count, false});
      pos += static_cast<size_t>(r.length * r.count);
      stepStart_.push_back(pos);
      open = false;
      continue;
    }
    for (int64_t k = 0; k < r.count; ++k) {
      if (!open || steps_.back().count == kListMax) {
        steps_.push_back({static_cast<int64_t>(blocks_.size()), 0, r.length, 0, true});
        stepStart_.push_back(pos);
        open = true;
      }
      Step& st = steps_.back();
      if (st.length != r.length) st.length = 0;
      ++st.count;
      blocks_.push_back({r.offset + k * r.stride, r.length});
      pos += static_cast<size_t>(r.length);
      stepStart_.back() = pos;
    }
  }
}

// Moves `n` whole elements starting at `elem`. A one-step program (vectors,
// indexed types of up to kListMax blocks, structs of few blocks) gets the
// length dispatch hoisted out of the element loop.
template <bool kPack>
char* Datatype::wholeElements(uintptr_t elem, size_t n, char* s) const {
  const auto ext = static_cast<uintptr_t>(extent());
  if (steps_.size() == 1) {
    const Step& st = steps_[0];
    const auto len = static_cast<size_t>(st.length);
    const auto count = static_cast<size_t>(st.count);
    if (count == 1) {  // one block per element: one strided loop over the elements
      const int64_t off = st.list ? blocks_[st.offset].offset : st.offset;
      return byLength(len, [&]<size_t L>() {
        return strided<kPack, L>(elem + static_cast<uintptr_t>(off), ext, n, len, s);
      });
    }
    if (st.list) {
      const Block* b = blocks_.data() + st.offset;
      return byLength(len, [&]<size_t L>() {
        for (size_t e = 0; e < n; ++e, elem += ext) s = listed<kPack, L>(elem, b, count, s);
        return s;
      });
    }
    const auto stride = static_cast<uintptr_t>(st.stride);
    elem += static_cast<uintptr_t>(st.offset);
    return byLength(len, [&]<size_t L>() {
      for (size_t e = 0; e < n; ++e, elem += ext)
        s = strided<kPack, L>(elem, stride, count, len, s);
      return s;
    });
  }
  for (size_t e = 0; e < n; ++e, elem += ext)
    for (const Step& st : steps_) s = runStep<kPack>(elem, st, blocks_.data(), s);
  return s;
}

// Moves stream bytes [from, to) of the element at `elem`, 0 <= from < to <=
// size(): a block cut at either end is copied in part, the blocks between
// by the specialised loops (an element may be one run of millions of blocks,
// which a pipeline then packs chunk by chunk through here).
template <bool kPack>
char* Datatype::partialElement(uintptr_t elem, size_t from, size_t to, char* s) const {
  size_t i = std::upper_bound(stepStart_.begin(), stepStart_.end(), from) - stepStart_.begin() - 1;
  size_t pos = from;
  for (; pos < to; ++i) {
    const Step& st = steps_[i];
    const auto count = static_cast<size_t>(st.count);
    size_t inStep = pos - stepStart_[i];
    // Block k of the step holds stream byte pos, `intra` bytes into it.
    size_t k = 0, intra;
    if (st.length) {
      k = inStep / static_cast<size_t>(st.length);
      intra = inStep % static_cast<size_t>(st.length);
    } else {  // a list of mixed lengths: at most kListMax blocks to skip
      const Block* b = blocks_.data() + st.offset;
      while (inStep >= static_cast<size_t>(b[k].length)) inStep -= b[k++].length;
      intra = inStep;
    }
    auto blockAt = [&](size_t j) -> std::pair<uintptr_t, size_t> {
      if (st.list) {
        const Block& b = blocks_[st.offset + j];
        return {elem + static_cast<uintptr_t>(b.offset), static_cast<size_t>(b.length)};
      }
      return {elem + static_cast<uintptr_t>(st.offset + static_cast<int64_t>(j) * st.stride),
              static_cast<size_t>(st.length)};
    };
    if (intra) {  // the rest of a block entered in the middle
      auto [p, len] = blockAt(k);
      const size_t n = std::min(len - intra, to - pos);
      moveAny<kPack>(p + intra, s, n);
      s += n;
      pos += n;
      ++k;
    }
    // Whole blocks.
    if (st.length) {
      const auto len = static_cast<size_t>(st.length);
      const size_t whole = std::min(count - k, (to - pos) / len);
      if (st.list) {
        const Block* b = blocks_.data() + st.offset + k;
        s = byLength(len, [&]<size_t L>() { return listed<kPack, L>(elem, b, whole, s); });
      } else {
        const uintptr_t p = blockAt(k).first;
        const auto stride = static_cast<uintptr_t>(st.stride);
        s = byLength(len, [&]<size_t L>() { return strided<kPack, L>(p, stride, whole, len, s); });
      }
      pos += whole * len;
      k += whole;
    } else {
      for (; k < count; ++k) {
        auto [p, len] = blockAt(k);
        if (len > to - pos) break;
        moveAny<kPack>(p, s, len);
        s += len;
        pos += len;
      }
    }
    if (pos < to && k < count) {  // the range ends inside block k
      moveAny<kPack>(blockAt(k).first, s, to - pos);
      s += to - pos;
      pos = to;
    }
  }
  return s;
}

template <bool kPack>
size_t Datatype::transfer(uintptr_t base, int64_t count, size_t streamOffset, char* s,
                          size_t maxBytes) const {
  const size_t total = packedSize(count);
  if (count <= 0 || streamOffset >= total || maxBytes == 0) return 0;
  const size_t n = std::min(maxBytes, total - streamOffset);
  if (contiguous_) {
    const uintptr_t p = base + static_cast<uintptr_t>(trueLb_) + streamOffset;
    if constexpr (kPack) std::memcpy(s, reinterpret_cast<const char*>(p), n);
    else std::memcpy(reinterpret_cast<char*>(p), s, n);
    return n;
  }
  const auto elemSize = static_cast<size_t>(size_);
  const auto ext = static_cast<uintptr_t>(extent());
  uintptr_t elem = base + ext * static_cast<uintptr_t>(streamOffset / elemSize);
  const size_t within = streamOffset % elemSize;
  size_t left = n;
  if (within) {  // finish the element the range starts in
    const size_t to = std::min(elemSize, within + left);
    s = partialElement<kPack>(elem, within, to, s);
    left -= to - within;
    elem += ext;
  }
  if (const size_t whole = left / elemSize) {
    s = wholeElements<kPack>(elem, whole, s);
    left -= whole * elemSize;
    elem += ext * whole;
  }
  if (left) partialElement<kPack>(elem, 0, left, s);  // the head of the last one
  return n;
}

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
  return transfer<true>(reinterpret_cast<uintptr_t>(buf), count, streamOffset,
                        static_cast<char*>(out), outBytes);
}

size_t Datatype::unpack(void* buf, int64_t count, size_t streamOffset, const void* in,
                        size_t inBytes) const {
  return transfer<false>(reinterpret_cast<uintptr_t>(buf), count, streamOffset,
                         const_cast<char*>(static_cast<const char*>(in)), inBytes);
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
