// The datatype engine's copy programs (blocks of a few bytes, every step
// kind, chunk boundaries anywhere) and its count of basic elements
// (MPI_Get_elements), against the model of datatype_model.h.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <random>
#include <vector>

#include "datatype_model.h"

using namespace loom::dtmodel;

// --- Small blocks: every shape of the copy program ----------------------------

namespace {

// Packs and unpacks in chunks of 1..maxChunk bytes, so that every chunk
// boundary lands inside blocks, between blocks and between elements of
// every step kind, and compares with the model.
void checkFineChunks(const T& x, int64_t count, size_t maxChunk, std::mt19937& rng) {
  Model mm = x.m;
  if (!mm.haveBounds) mm.lb = mm.ub = 0;
  Buffer src(mm, count, 3);
  std::vector<char> want = modelPack(mm, src.base(), count);
  std::vector<char> got(want.size());
  packInChunks(x.t, src.base(), count, maxChunk, rng, &got);
  EXPECT_EQ(got, want);
  Buffer a(mm, count, 4), b(mm, count, 4);
  modelUnpack(mm, a.base(), count, want.data());
  unpackInChunks(x.t, b.base(), count, want, maxChunk, rng);
  EXPECT_EQ(a.mem, b.mem);
}

}  // namespace

TEST(DatatypePack, SmallBlockPrograms) {
  std::mt19937 rng(99);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<T> ts, inner;  // inner: children whose caller reference we drop at the end
  // One list step of 4 blocks of 3 bytes (p2p_exchange's vector type).
  inner.push_back(vector(4, 3, 7, tChar()));
  ts.push_back(resized(inner.back(), 0, 24));
  // One strided step of 1000 blocks of 3 bytes, and with a negative stride.
  ts.push_back(hvector(1000, 3, 5, tChar()));
  ts.push_back(hvector(300, 3, -5, tChar()));
  // Irregular 3-byte blocks: one list of 8; 70 blocks: lists of 64 + 6.
  ts.push_back(indexed({3, 3, 3, 3, 3, 3, 3, 3}, {0, 4, 9, 13, 20, 24, 31, 36}, tChar()));
  {
    std::vector<int64_t> bl(70, 3), d;
    for (int i = 0; i < 70; ++i) d.push_back(i * 4 + (i % 3) - (i % 7) * 100);
    ts.push_back(hindexed(bl, d, tChar()));
  }
  // Mixed lengths 1..40 (inline copies up to 32, memcpy beyond), 150 blocks.
  {
    std::vector<int64_t> bl, d;
    int64_t at = -300;
    for (int i = 0; i < 150; ++i) {
      bl.push_back(pick(1, 40));
      d.push_back(at);
      at += bl.back() + pick(1, 9);
    }
    ts.push_back(hindexed(bl, d, tChar()));
  }
  // Every specialised length and its neighbours, as short and long runs.
  for (int len : {1, 2, 5, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 64}) {
    ts.push_back(hvector(3, len, len + 2, tChar()));
    ts.push_back(hvector(9, len, -(len + 1), tChar()));
  }
  // struct {int; double; char[3]}: one list of three lengths.
  T s3 = structOf({1, 1, 3}, {0, 8, 16}, {tInt(), tDouble(), tChar()});
  ts.push_back(s3);
  ts.push_back(vector(5, 2, -3, s3));
  // A long run between short blocks: list, strided, list.
  inner.push_back(hvector(100, 3, 8, tChar()));
  ts.push_back(structOf({1, 1, 2}, {-40, 0, 900}, {tShortInt(), inner.back(), tDoubleInt()}));
  // One block per element (a strided loop over elements).
  inner.push_back(contiguous(3, tChar()));
  ts.push_back(resized(inner.back(), -2, 5));
  ts.push_back(resized(tDouble(), 0, 12));
  // Pairs with holes: lists of mixed lengths.
  ts.push_back(contiguous(40, tShortInt()));
  ts.push_back(subarray({6, 7}, {4, 3}, {1, 2}, MPI_ORDER_C, tShortInt()));
  for (size_t i = 0; i < ts.size(); ++i) {
    SCOPED_TRACE("type " + std::to_string(i));
    checkType(ts[i], 7, rng);
    checkFineChunks(ts[i], 7, 9, rng);
    checkFineChunks(ts[i], 3, 70, rng);
    if (HasFailure()) break;
  }
  for (auto& x : ts) x.t->release();
  for (auto& x : inner) x.t->release();
}

TEST(DatatypePack, RandomSmallBlockTypes) {
  // Random indexed/struct types of many tiny blocks, nested once, against
  // the model, packed whole and in small random chunks.
  std::mt19937 rng(4242);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 60; ++iter) {
    SCOPED_TRACE("iteration " + std::to_string(iter));
    int n = pick(1, 150);
    std::vector<int64_t> bl, d;
    for (int i = 0; i < n; ++i) {
      bl.push_back(pick(0, 5));
      d.push_back(pick(-200, 200));
    }
    T base = pick(0, 1) ? hindexed(bl, d, tChar()) : indexed(bl, d, tShortInt());
    T outer = pick(0, 1) ? vector(pick(1, 6), pick(1, 3), pick(-4, 4), base)
                         : structOf({pick(0, 3), 1}, {pick(-50, 50), pick(-9, 9)}, {base, tInt()});
    checkType(outer, pick(1, 4), rng);
    checkFineChunks(outer, pick(1, 4), pick(1, 40), rng);
    releaseAll({base, outer});
    if (HasFailure()) break;
  }
}

TEST(DatatypePack, TinyBlocksAreFast) {
  // 16 MB of 3-byte blocks: ~5.6 M blocks. A per-block library memcpy and
  // callback cost 3-4 ns of CPU each (5-6 ns of wall time, 30 ms per 16 MB);
  // the specialised loops 0.5-0.7 ns. Timing is asserted only in optimised
  // builds without sanitizers, as the best of 5 in thread CPU time (a shared
  // 2-core machine preempts the test), against a bound of 2 ns per block.
  const int64_t kBytes = 16 << 20;
  T vec0 = vector(4, 3, 7, tChar());
  T vec = resized(vec0, 0, 24);
  T idx = indexed({3, 3, 3, 3, 3, 3, 3, 3}, {0, 4, 9, 13, 20, 24, 31, 36}, tChar());
  T st = structOf({3, 3}, {0, 5}, {tChar(), tChar()});
  Datatype* big = nullptr;  // one element: a pipeline packs it in chunks (no model: 5.6 M entries)
  ASSERT_TRUE(loom::typeHvector(kBytes / 3, 3, 5, tChar().t, &big).isOk());
  const std::pair<const char*, Datatype*> cases[] = {
      {"vector", vec.t}, {"indexed", idx.t}, {"struct", st.t}, {"one_element", big}};
  for (auto [name, t] : cases) {
    const int64_t count = t == big ? 1 : kBytes / t->size();
    const size_t bytes = t->packedSize(count);
    const double blocks = static_cast<double>(bytes) / 3;
    std::vector<char> mem(static_cast<size_t>(count * t->extent() + 64), 1), out(bytes);
    auto cpuNs = [] {
      timespec ts;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
      return ts.tv_sec * 1e9 + ts.tv_nsec;
    };
    auto best = [&](auto&& fn) {
      double b = 1e30;
      for (int rep = 0; rep < 5; ++rep) {
        double t0 = cpuNs();
        fn();
        b = std::min(b, cpuNs() - t0);
      }
      return b / blocks;
    };
    double packNs =
        best([&] { EXPECT_EQ(t->pack(mem.data(), count, 0, out.data(), bytes), bytes); });
    double unpackNs = best([&] { t->unpack(mem.data(), count, 0, out.data(), bytes); });
    double chunkNs = best([&] {  // the rendezvous pipeline's way: 64 KB at a time
      for (size_t pos = 0; pos < bytes; pos += 65536)
        t->pack(mem.data(), count, pos, out.data() + pos, std::min<size_t>(65536, bytes - pos));
    });
    RecordProperty(std::string("ns_per_block_") + name,
                   std::to_string(packNs) + " pack, " + std::to_string(unpackNs) + " unpack, " +
                       std::to_string(chunkNs) + " pack in 64 KB chunks");
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__)
    EXPECT_LT(packNs, 2.0) << name;
    EXPECT_LT(unpackNs, 2.0) << name;
    EXPECT_LT(chunkNs, 2.0) << name;
#endif
  }
  releaseAll({vec0, vec, idx, st});
  big->release();
}

// --- Basic elements (MPI_Get_elements) --------------------------------------

TEST(DatatypeElements, PredefinedAndPairs) {
  EXPECT_EQ(pre(MPI_INT)->basicElements(), 1);
  EXPECT_EQ(pre(MPI_INT)->basicElementsIn(40), 10);
  EXPECT_EQ(pre(MPI_INT)->basicElementsIn(7), -1);
  EXPECT_EQ(pre(MPI_INT)->basicElementsIn(0), 0);
  EXPECT_EQ(pre(MPI_C_DOUBLE_COMPLEX)->basicElementsIn(32), 2);  // a complex is one element
  // A pair type is two basic elements (MPICH's get-elements-pairtype: a
  // {double, int, double} received as MPI_DOUBLE_INTs is 3 elements).
  Datatype* di = pre(MPI_DOUBLE_INT);
  EXPECT_EQ(di->basicElements(), 2);
  EXPECT_EQ(di->basicElementsIn(20), 3);
  EXPECT_EQ(di->basicElementsIn(8), 1);
  EXPECT_EQ(di->basicElementsIn(12), 2);
  EXPECT_EQ(di->basicElementsIn(10), -1);
  EXPECT_EQ(pre(MPI_2INT)->basicElementsIn(12), 3);  // one block in the runs, two elements
  EXPECT_EQ(pre(MPI_SHORT_INT)->basicElementsIn(2), 1);
  EXPECT_EQ(pre(MPI_SHORT_INT)->basicElementsIn(4), -1);
}

TEST(DatatypeElements, MixedStructs) {
  // struct {int; double; char[3]}: 5 basic elements, 15 bytes per item.
  T s = structOf({1, 1, 3}, {0, 8, 16}, {tInt(), tDouble(), tChar()});
  const Datatype* t = s.t;
  EXPECT_EQ(t->basicElements(), 5);
  EXPECT_EQ(t->basicElementsIn(15), 5);
  EXPECT_EQ(t->basicElementsIn(30), 10);
  EXPECT_EQ(t->basicElementsIn(4), 1);    // the int
  EXPECT_EQ(t->basicElementsIn(12), 2);   // int, double
  EXPECT_EQ(t->basicElementsIn(13), 3);   // and one char
  EXPECT_EQ(t->basicElementsIn(14), 4);
  EXPECT_EQ(t->basicElementsIn(6), -1);   // inside the double
  EXPECT_EQ(t->basicElementsIn(2), -1);   // inside the int
  EXPECT_EQ(t->basicElementsIn(15 * 3 + 13), 3 * 5 + 3);
  EXPECT_EQ(t->basicElementsIn(15 * 3 + 7), -1);
  EXPECT_EQ(t->basicElementsIn(0), 0);
  // Nested: a vector of 2 blocks of 2 structs, a struct around that and a
  // pair type, resized and duplicated.
  T v = vector(2, 2, 3, s);  // 4 structs = 20 elements, 60 bytes
  EXPECT_EQ(v.t->basicElements(), 20);
  EXPECT_EQ(v.t->basicElementsIn(60 + 15 + 4), 20 + 5 + 1);
  EXPECT_EQ(v.t->basicElementsIn(60 + 15 + 5), -1);
  T o = structOf({2, 1}, {0, 400}, {tDoubleInt(), v});  // 2 pairs (24 B, 4 el.) + v
  EXPECT_EQ(o.t->basicElements(), 24);
  EXPECT_EQ(o.t->basicElementsIn(8), 1);
  EXPECT_EQ(o.t->basicElementsIn(20), 3);
  EXPECT_EQ(o.t->basicElementsIn(24 + 15 + 12), 4 + 5 + 2);
  EXPECT_EQ(o.t->basicElementsIn(24 + 15 + 11), -1);
  EXPECT_EQ(o.t->basicElementsIn(84 + 24 + 4), 24 + 4 + 1);
  T r = resized(o, -8, 1000);
  T d = dup(r);
  EXPECT_EQ(d.t->basicElementsIn(84 * 2 + 24 + 15 + 13), 48 + 4 + 5 + 3);
  // Subarray of the struct, and indexed blocks of it.
  T sub = subarray({4, 5}, {2, 3}, {1, 1}, MPI_ORDER_C, s);  // 6 structs
  EXPECT_EQ(sub.t->basicElements(), 30);
  EXPECT_EQ(sub.t->basicElementsIn(90 + 15 + 13), 30 + 5 + 3);
  EXPECT_EQ(sub.t->basicElementsIn(90 + 16), -1);  // inside the second struct's int
  T ix = indexed({1, 0, 2}, {5, 0, 1}, s);
  EXPECT_EQ(ix.t->basicElements(), 15);
  EXPECT_EQ(ix.t->basicElementsIn(45 + 13), 15 + 3);
  releaseAll({s, v, o, r, d, sub, ix});
}

TEST(DatatypeElements, ZeroSizeParts) {
  T e = contiguous(0, tInt());
  EXPECT_EQ(e.t->basicElements(), 0);
  EXPECT_EQ(e.t->basicElementsIn(0), 0);
  // Zero-size members are skipped: {empty, char[2], empty, double}.
  T s = structOf({1, 2, 3, 1}, {0, 0, 4, 8}, {e, tChar(), e, tDouble()});
  EXPECT_EQ(s.t->basicElements(), 3);
  EXPECT_EQ(s.t->basicElementsIn(1), 1);
  EXPECT_EQ(s.t->basicElementsIn(2), 2);
  EXPECT_EQ(s.t->basicElementsIn(3), -1);
  EXPECT_EQ(s.t->basicElementsIn(10 + 2), 3 + 2);
  T z = subarray({3}, {0}, {1}, MPI_ORDER_C, tInt());
  EXPECT_EQ(z.t->basicElementsIn(0), 0);
  // Homogeneous types keep counting by the basic size.
  T v = vector(3, 2, 4, tInt());
  EXPECT_EQ(v.t->basicElementsIn(24 * 2 + 8), 14);
  EXPECT_EQ(v.t->basicElementsIn(10), -1);
  releaseAll({e, s, z, v});
}
