// The datatype tests' model: every constructor builds both a loom::Datatype
// and an explicit type map (one entry per leaf block, in order), so tests can
// compare geometry and packed bytes of the two. Shared by datatype_test.cc
// and datatype_program_test.cc.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "api/handles_datatype.h"
#include "core/datatype.h"

namespace loom::dtmodel {

using loom::Datatype;

// --- The model ------------------------------------------------------------

struct Entry {
  int64_t off, len;
};

struct Model {
  std::vector<Entry> map;  // leaf blocks in type-map order
  int64_t lb = 0, ub = 0;
  bool haveBounds = false;
  int64_t align = 1;
  bool explicitBounds = false;

  int64_t extent() const { return ub - lb; }
  int64_t size() const {
    int64_t s = 0;
    for (auto& e : map) s += e.len;
    return s;
  }
  int64_t trueLb() const {
    if (map.empty()) return 0;
    int64_t v = map[0].off;
    for (auto& e : map) v = std::min(v, e.off);
    return v;
  }
  int64_t trueUb() const {
    if (map.empty()) return 0;
    int64_t v = map[0].off + map[0].len;
    for (auto& e : map) v = std::max(v, e.off + e.len);
    return v;
  }
  // One copy of `c` at displacement d.
  void copy(const Model& c, int64_t d) {
    for (auto& e : c.map) map.push_back({e.off + d, e.len});
    lb = haveBounds ? std::min(lb, d + c.lb) : d + c.lb;
    ub = haveBounds ? std::max(ub, d + c.ub) : d + c.ub;
    haveBounds = true;
  }
  void inherit(const Model& c) {
    align = std::max(align, c.align);
    explicitBounds = explicitBounds || c.explicitBounds;
  }
};

inline Model basic(int64_t /*size*/, int64_t extent, int64_t align, std::vector<Entry> map) {
  Model m;
  m.map = std::move(map);
  m.ub = extent;
  m.haveBounds = true;
  m.align = align;
  return m;
}

inline Model mHvector(int64_t count, int64_t bl, int64_t stride, const Model& old) {
  Model m;
  m.inherit(old);
  for (int64_t i = 0; i < count; ++i)
    for (int64_t j = 0; j < bl; ++j) m.copy(old, i * stride + j * old.extent());
  return m;
}

inline Model mHindexed(const std::vector<int64_t>& bls, const std::vector<int64_t>& disps,
                const Model& old) {
  Model m;
  m.inherit(old);
  for (size_t i = 0; i < bls.size(); ++i)
    for (int64_t j = 0; j < bls[i]; ++j) m.copy(old, disps[i] + j * old.extent());
  return m;
}

inline Model mStruct(const std::vector<int64_t>& bls, const std::vector<int64_t>& disps,
              const std::vector<Model>& olds) {
  Model m;
  for (size_t i = 0; i < bls.size(); ++i) {
    m.inherit(olds[i]);
    for (int64_t j = 0; j < bls[i]; ++j) m.copy(olds[i], disps[i] + j * olds[i].extent());
  }
  int64_t ext = m.extent();
  if (!m.explicitBounds && ext > 0 && ext % m.align) m.ub += m.align - ext % m.align;
  return m;
}

inline Model mResized(const Model& old, int64_t lb, int64_t extent) {
  Model m = old;
  m.lb = lb;
  m.ub = lb + extent;
  m.haveBounds = true;
  m.explicitBounds = true;
  return m;
}

inline Model mSubarray(const std::vector<int64_t>& sizes, const std::vector<int64_t>& subs,
                const std::vector<int64_t>& starts, int order, const Model& old) {
  size_t n = sizes.size();
  std::vector<int64_t> stride(n);  // bytes per step along each dimension
  int64_t s = old.extent();
  for (size_t i = 0; i < n; ++i) {
    size_t d = order == MPI_ORDER_C ? n - 1 - i : i;
    stride[d] = s;
    s *= sizes[d];
  }
  Model m;
  m.inherit(old);
  // Enumerate the subarray's elements, fastest dimension last in C order.
  std::vector<int64_t> idx(n, 0);
  bool empty = std::any_of(subs.begin(), subs.end(), [](int64_t v) { return v == 0; });
  while (!empty) {
    int64_t off = 0;
    for (size_t d = 0; d < n; ++d) off += (starts[d] + idx[d]) * stride[d];
    for (auto& e : old.map) m.map.push_back({e.off + off, e.len});
    size_t i = 0;
    for (; i < n; ++i) {
      size_t d = order == MPI_ORDER_C ? n - 1 - i : i;
      if (++idx[d] < subs[d]) break;
      idx[d] = 0;
    }
    if (i == n) break;
  }
  m.lb = 0;
  m.ub = s;
  m.haveBounds = true;
  m.explicitBounds = true;
  return m;
}

// Packs `count` elements by walking the model's map.
inline std::vector<char> modelPack(const Model& m, const char* buf, int64_t count) {
  std::vector<char> out;
  for (int64_t i = 0; i < count; ++i)
    for (auto& e : m.map) {
      const char* p = buf + i * m.extent() + e.off;
      out.insert(out.end(), p, p + e.len);
    }
  return out;
}

inline void modelUnpack(const Model& m, char* buf, int64_t count, const char* in) {
  for (int64_t i = 0; i < count; ++i)
    for (auto& e : m.map) {
      std::memcpy(buf + i * m.extent() + e.off, in, e.len);
      in += e.len;
    }
}

// --- Pairs of (engine type, model) ---------------------------------------

struct T {
  Datatype* t;
  Model m;
};

inline Datatype* pre(MPI_Datatype h) { return loom::api::toDatatype(h); }

inline T tInt() { return {pre(MPI_INT), basic(4, 4, 4, {{0, 4}})}; }
inline T tDouble() { return {pre(MPI_DOUBLE), basic(8, 8, 8, {{0, 8}})}; }
inline T tChar() { return {pre(MPI_CHAR), basic(1, 1, 1, {{0, 1}})}; }
inline T tShortInt() { return {pre(MPI_SHORT_INT), basic(6, 8, 4, {{0, 2}, {4, 4}})}; }
inline T tDoubleInt() { return {pre(MPI_DOUBLE_INT), basic(12, 16, 8, {{0, 8}, {8, 4}})}; }

// Takes the address: the Status argument must be evaluated (the type built)
// before the result is read.
inline Datatype* ok(loom::Status st, Datatype** t) {
  EXPECT_TRUE(st.isOk()) << st.message();
  return *t;
}

inline T hvector(int64_t c, int64_t bl, int64_t stride, const T& o) {
  Datatype* t = nullptr;
  return {ok(loom::typeHvector(c, bl, stride, o.t, &t), &t), mHvector(c, bl, stride, o.m)};
}
inline T vector(int64_t c, int64_t bl, int64_t stride, const T& o) {
  Datatype* t = nullptr;
  return {ok(loom::typeVector(c, bl, stride, o.t, &t), &t),
          mHvector(c, bl, stride * o.m.extent(), o.m)};
}
inline T contiguous(int64_t c, const T& o) {
  Datatype* t = nullptr;
  return {ok(loom::typeContiguous(c, o.t, &t), &t), mHvector(1, c, 0, o.m)};
}
inline T hindexed(std::vector<int64_t> bls, std::vector<int64_t> disps, const T& o) {
  Datatype* t = nullptr;
  return {ok(loom::typeHindexed(bls, disps, o.t, &t), &t), mHindexed(bls, disps, o.m)};
}
inline T indexed(std::vector<int64_t> bls, std::vector<int64_t> disps, const T& o) {
  Datatype* t = nullptr;
  auto bytes = disps;
  for (auto& d : bytes) d *= o.m.extent();
  return {ok(loom::typeIndexed(bls, disps, o.t, &t), &t), mHindexed(bls, bytes, o.m)};
}
inline T indexedBlock(int64_t bl, std::vector<int64_t> disps, const T& o) {
  Datatype* t = nullptr;
  auto bytes = disps;
  for (auto& d : bytes) d *= o.m.extent();
  std::vector<int64_t> bls(disps.size(), bl);
  return {ok(loom::typeIndexedBlock(bl, disps, o.t, &t), &t), mHindexed(bls, bytes, o.m)};
}
inline T hindexedBlock(int64_t bl, std::vector<int64_t> disps, const T& o) {
  Datatype* t = nullptr;
  std::vector<int64_t> bls(disps.size(), bl);
  return {ok(loom::typeHindexedBlock(bl, disps, o.t, &t), &t), mHindexed(bls, disps, o.m)};
}
inline T structOf(std::vector<int64_t> bls, std::vector<int64_t> disps, std::vector<T> members) {
  std::vector<Datatype*> ts;
  std::vector<Model> ms;
  for (auto& x : members) {
    ts.push_back(x.t);
    ms.push_back(x.m);
  }
  Datatype* t = nullptr;
  return {ok(loom::typeStruct(bls, disps, ts, &t), &t), mStruct(bls, disps, ms)};
}
inline T resized(const T& o, int64_t lb, int64_t ext) {
  Datatype* t = nullptr;
  return {ok(loom::typeResized(o.t, lb, ext, &t), &t), mResized(o.m, lb, ext)};
}
inline T subarray(std::vector<int64_t> sizes, std::vector<int64_t> subs, std::vector<int64_t> starts,
           int order, const T& o) {
  Datatype* t = nullptr;
  return {ok(loom::typeSubarray(sizes, subs, starts, order, o.t, &t), &t),
          mSubarray(sizes, subs, starts, order, o.m)};
}
inline T dup(const T& o) {
  Datatype* t = nullptr;
  return {ok(loom::typeDup(o.t, &t), &t), o.m};
}

// A buffer holding `count` elements of a type, filled with a byte pattern;
// base() is the element origin, which may lie inside the allocation.
struct Buffer {
  std::vector<char> mem;
  int64_t shift = 0;
  Buffer(const Model& m, int64_t count, int seed) {
    int64_t lo = m.trueLb(), hi = m.trueUb();
    if (count > 1) {
      lo = std::min(lo, lo + (count - 1) * m.extent());
      hi = std::max(hi, hi + (count - 1) * m.extent());
    }
    shift = -lo + 8;
    mem.resize(hi - lo + 16);
    for (size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<char>(i * 31 + seed * 7 + 1);
  }
  char* base() { return mem.data() + shift; }
};

// Packs (buf, count) of t into *out (already sized to the packed stream) in
// chunks of random size 1..maxChunk: every call fills its chunk, or what is
// left of the stream.
inline void packInChunks(const Datatype* t, const void* buf, int64_t count, size_t maxChunk,
                         std::mt19937& rng, std::vector<char>* out) {
  size_t pos = 0;
  while (pos < out->size()) {
    size_t n = std::min(std::uniform_int_distribution<size_t>(1, maxChunk)(rng), out->size() - pos);
    size_t w = t->pack(buf, count, pos, out->data() + pos, n);
    ASSERT_EQ(w, n);
    pos += w;
  }
}

// The mirror: unpacks `packed` into (buf, count) in chunks of 1..maxChunk.
inline void unpackInChunks(const Datatype* t, void* buf, int64_t count,
                           const std::vector<char>& packed, size_t maxChunk, std::mt19937& rng) {
  size_t pos = 0;
  while (pos < packed.size()) {
    size_t n = std::min(std::uniform_int_distribution<size_t>(1, maxChunk)(rng), packed.size() - pos);
    size_t r = t->unpack(buf, count, pos, packed.data() + pos, n);
    ASSERT_EQ(r, n);
    pos += r;
  }
}

// Checks everything the engine promises about a type against its model.
inline void checkType(const T& x, int64_t count, std::mt19937& rng) {
  const Datatype* t = x.t;
  const Model& m = x.m;
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->size(), m.size());
  EXPECT_EQ(t->lb(), m.haveBounds ? m.lb : 0);
  EXPECT_EQ(t->extent(), m.haveBounds ? m.extent() : 0);
  EXPECT_EQ(t->trueLb(), m.trueLb());
  EXPECT_EQ(t->trueUb(), m.trueUb());
  Model mm = m;
  if (!mm.haveBounds) mm.lb = mm.ub = 0;

  Buffer src(mm, count, 1);
  std::vector<char> want = modelPack(mm, src.base(), count);
  ASSERT_EQ(t->packedSize(count), want.size());

  // Whole pack.
  std::vector<char> got(want.size() + 1, 0x5a);
  EXPECT_EQ(t->pack(src.base(), count, 0, got.data(), got.size()), want.size());
  got.pop_back();
  EXPECT_EQ(got, want);

  // Chunked pack, random chunk sizes.
  std::vector<char> chunked(want.size());
  packInChunks(t, src.base(), count, 1 + want.size() / 3, rng, &chunked);
  EXPECT_EQ(chunked, want);

  // segments() names exactly the bytes pack() reads, in order.
  std::vector<iovec> iov;
  EXPECT_EQ(t->segments(src.base(), count, 0, want.size(), &iov), want.size());
  std::vector<char> gathered;
  for (auto& v : iov) {
    auto* p = static_cast<char*>(v.iov_base);
    EXPECT_GT(v.iov_len, 0u);
    gathered.insert(gathered.end(), p, p + v.iov_len);
  }
  EXPECT_EQ(gathered, want);
  // ...also when cut into chunks and limited in segment count.
  gathered.clear();
  size_t pos = 0;
  while (pos < want.size()) {
    std::vector<iovec> part;
    size_t n = std::uniform_int_distribution<size_t>(1, 1 + want.size() / 2)(rng);
    size_t covered = t->segments(src.base(), count, pos, n, &part, 3);
    ASSERT_GT(covered, 0u);
    EXPECT_LE(part.size(), 3u);
    size_t sum = 0;
    for (auto& v : part) {
      auto* p = static_cast<char*>(v.iov_base);
      gathered.insert(gathered.end(), p, p + v.iov_len);
      sum += v.iov_len;
    }
    EXPECT_EQ(sum, covered);
    pos += covered;
  }
  EXPECT_EQ(gathered, want);

  // Chunked unpack into a fresh buffer == model unpack.
  Buffer a(mm, count, 2), b(mm, count, 2);
  modelUnpack(mm, a.base(), count, want.data());
  unpackInChunks(t, b.base(), count, want, 1 + want.size() / 2, rng);
  EXPECT_EQ(a.mem, b.mem);

  if (t->isContiguous() && !want.empty()) {
    EXPECT_EQ(0, std::memcmp(src.base() + t->trueLb(), want.data(), want.size()));
  }
}

inline void releaseAll(std::initializer_list<T> ts) {
  for (auto& x : ts) x.t->release();
}

}  // namespace loom::dtmodel
