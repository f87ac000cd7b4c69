// Every build of the reduction loop gives the baseline's bits: for every
// (op, basic kind) pair, lengths around the kernels' 16-element blocks,
// unaligned starts, and operands full of edge values (NaN, infinities,
// signed zeros, subnormals, extreme integers, random 16-bit floats).
//
// The builds: the AVX2 and AVX-512 compilations of the host loop
// (coll/reduce_x86_v3.cc, _v4.cc), each skipped where the processor lacks
// it. The baseline itself is checked against scalar references in
// coll_reduce_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "coll/op_kind.h"
#include "core/basic_kind.h"
#include "reduce_operands.h"

namespace loom::coll {
void applyPackedBaseline(OpKind, BasicKind, int64_t, const void*, void*, int64_t);
void applyPackedFromBaseline(OpKind, BasicKind, int64_t, const void*, const void*, void*, int64_t);
#if LOOM_X86_KERNELS
void applyPacked_x86_v3(OpKind, BasicKind, int64_t, const void*, void*, int64_t);
void applyPacked_x86_v4(OpKind, BasicKind, int64_t, const void*, void*, int64_t);
void applyPackedFrom_x86_v3(OpKind, BasicKind, int64_t, const void*, const void*, void*, int64_t);
void applyPackedFrom_x86_v4(OpKind, BasicKind, int64_t, const void*, const void*, void*, int64_t);
#endif
}  // namespace loom::coll

namespace {

using namespace loom::testing_reduce;
using ApplyFn = void (*)(OpKind, BasicKind, int64_t, const void*, void*, int64_t);

void checkBuild(ApplyFn candidate, const char* build) {
  std::mt19937_64 rng(20261127);
  const size_t lengths[] = {0, 1, 7, 15, 16, 17, 31, 33, 64, 255, 1000};
  for (const KindCase& k : kKinds)
    for (OpKind op : kOps)
      for (size_t n : lengths)
        for (size_t shift : {size_t{0}, misalignment(k)}) {  // unaligned starts
          std::vector<unsigned char> in = operand(k, n, rng), io = operand(k, n, rng);
          // Ties on some pairs: copy a few of in's elements into io.
          for (size_t i = 0; i < n; i += 5) std::memcpy(io.data() + i * k.bytes, in.data() + i * k.bytes, k.bytes);
          std::vector<unsigned char> want = io, got = io;
          loom::coll::applyPackedBaseline(op, k.kind, k.bytes, in.data() + shift,
                                          want.data() + shift, static_cast<int64_t>(n));
          candidate(op, k.kind, k.bytes, in.data() + shift, got.data() + shift,
                    static_cast<int64_t>(n));
          ASSERT_TRUE(sameResult(k, want, got, n, shift))
              << build << ": op " << static_cast<int>(op) << " on " << k.name << ", n " << n
              << ", shift " << shift;
        }
}

TEST(ReduceBuilds, Avx2GivesBaselineBits) {
#if LOOM_X86_KERNELS
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("x86-64-v3")) GTEST_SKIP() << "no x86-64-v3 on this processor";
  checkBuild(loom::coll::applyPacked_x86_v3, "avx2");
#else
  GTEST_SKIP() << "no per-instruction-set builds here";
#endif
}

TEST(ReduceBuilds, Avx512GivesBaselineBits) {
#if LOOM_X86_KERNELS
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("x86-64-v4")) GTEST_SKIP() << "no x86-64-v4 on this processor";
  checkBuild(loom::coll::applyPacked_x86_v4, "avx512");
#else
  GTEST_SKIP() << "no per-instruction-set builds here";
#endif
}

// The three-operand loops (out = in op base, the folds that read sendbuf)
// give the baseline's two-operand bits, and leave base alone.
using ApplyFromFn = void (*)(OpKind, BasicKind, int64_t, const void*, const void*, void*, int64_t);

void checkFrom(ApplyFromFn candidate, const char* build) {
  std::mt19937_64 rng(20261128);
  const size_t lengths[] = {0, 1, 7, 16, 17, 33, 255, 1000};
  for (const KindCase& k : kKinds)
    for (OpKind op : kOps)
      for (size_t n : lengths)
        for (size_t shift : {size_t{0}, misalignment(k)}) {
          std::vector<unsigned char> in = operand(k, n, rng), base = operand(k, n, rng);
          for (size_t i = 0; i < n; i += 5) std::memcpy(base.data() + i * k.bytes, in.data() + i * k.bytes, k.bytes);
          std::vector<unsigned char> want = base, got = base, keep = base;
          std::memset(got.data() + shift, 0xA5, n * k.bytes);  // every result byte written
          loom::coll::applyPackedBaseline(op, k.kind, k.bytes, in.data() + shift,
                                          want.data() + shift, static_cast<int64_t>(n));
          candidate(op, k.kind, k.bytes, in.data() + shift, base.data() + shift, got.data() + shift,
                    static_cast<int64_t>(n));
          ASSERT_TRUE(sameResult(k, want, got, n, shift))
              << build << " (from): op " << static_cast<int>(op) << " on " << k.name << ", n " << n
              << ", shift " << shift;
          ASSERT_EQ(base, keep) << build << ": base written";
        }
}

TEST(ReduceBuilds, FromGivesBaselineBits) {
  checkFrom(loom::coll::applyPackedFromBaseline, "baseline");
#if LOOM_X86_KERNELS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v3")) checkFrom(loom::coll::applyPackedFrom_x86_v3, "avx2");
  if (__builtin_cpu_supports("x86-64-v4")) checkFrom(loom::coll::applyPackedFrom_x86_v4, "avx512");
#endif
}

// The check itself can fail: a loop that differs in one element is caught.
TEST(ReduceBuilds, CheckSeesADifference) {
  std::vector<float> in(20, 1.0f), a(20, 2.0f), b(20, 2.0f);
  loom::coll::applyPackedBaseline(OpKind::kSum, BasicKind::kFloat, 4, in.data(), a.data(), 20);
  loom::coll::applyPackedBaseline(OpKind::kSum, BasicKind::kFloat, 4, in.data(), b.data(), 19);
  EXPECT_NE(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
}

}  // namespace
