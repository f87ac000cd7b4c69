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

namespace loom::coll {
void applyPackedBaseline(OpKind, BasicKind, int64_t, const void*, void*, int64_t);
#if LOOM_X86_KERNELS
void applyPacked_x86_v3(OpKind, BasicKind, int64_t, const void*, void*, int64_t);
void applyPacked_x86_v4(OpKind, BasicKind, int64_t, const void*, void*, int64_t);
#endif
}  // namespace loom::coll

namespace {

using loom::BasicKind;
using loom::coll::OpKind;
using ApplyFn = void (*)(OpKind, BasicKind, int64_t, const void*, void*, int64_t);

struct KindCase {
  BasicKind kind;
  int64_t bytes;  // one packed element
  const char* name;
};

const KindCase kKinds[] = {
    {BasicKind::kInt8, 1, "int8"},          {BasicKind::kInt16, 2, "int16"},
    {BasicKind::kInt32, 4, "int32"},        {BasicKind::kInt64, 8, "int64"},
    {BasicKind::kUint8, 1, "uint8"},        {BasicKind::kUint16, 2, "uint16"},
    {BasicKind::kUint32, 4, "uint32"},      {BasicKind::kUint64, 8, "uint64"},
    {BasicKind::kChar, 1, "char"},          {BasicKind::kBool, 1, "bool"},
    {BasicKind::kByte, 1, "byte"},          {BasicKind::kLogical, 1, "logical1"},
    {BasicKind::kLogical, 2, "logical2"},   {BasicKind::kLogical, 4, "logical4"},
    {BasicKind::kLogical, 8, "logical8"},   {BasicKind::kFloat, 4, "float"},
    {BasicKind::kDouble, 8, "double"},      {BasicKind::kLongDouble, sizeof(long double), "long double"},
    {BasicKind::kFloat16, 2, "float16"},    {BasicKind::kBfloat16, 2, "bfloat16"},
    {BasicKind::kFloatComplex, 8, "complex float"},
    {BasicKind::kDoubleComplex, 16, "complex double"},
    {BasicKind::kLongDoubleComplex, 2 * sizeof(long double), "complex long double"},
    {BasicKind::kFloatInt, sizeof(float) + sizeof(int), "float_int"},
    {BasicKind::kDoubleInt, sizeof(double) + sizeof(int), "double_int"},
    {BasicKind::kLongInt, sizeof(long) + sizeof(int), "long_int"},
    {BasicKind::k2Int, 2 * sizeof(int), "2int"},
    {BasicKind::kShortInt, sizeof(short) + sizeof(int), "short_int"},
    {BasicKind::kLongDoubleInt, sizeof(long double) + sizeof(int), "long_double_int"},
    {BasicKind::k2Float, 2 * sizeof(float), "2float"},
    {BasicKind::k2Double, 2 * sizeof(double), "2double"},
};

const OpKind kOps[] = {OpKind::kSum,  OpKind::kMin,  OpKind::kMax,  OpKind::kProd,
                       OpKind::kBand, OpKind::kBor,  OpKind::kBxor, OpKind::kLand,
                       OpKind::kLor,  OpKind::kLxor, OpKind::kMinloc, OpKind::kMaxloc};

// Bytes for `n` elements of `k`: random, with edge values planted in the
// value fields of every float-like kind (long double values keep their
// 6 padding bytes zero, as a program's would be).
template <class F>
void plant(std::vector<unsigned char>& v, size_t stride, size_t off, std::mt19937_64& rng) {
  const F edge[] = {std::numeric_limits<F>::quiet_NaN(),  std::numeric_limits<F>::infinity(),
                    -std::numeric_limits<F>::infinity(),  F(0),
                    -F(0),                                std::numeric_limits<F>::denorm_min(),
                    std::numeric_limits<F>::max(),        std::numeric_limits<F>::lowest(),
                    F(1),                                 F(-1.5)};
  for (size_t at = off; at + sizeof(F) <= v.size(); at += stride) {
    F x = (rng() % 3 == 0) ? edge[rng() % 10]
                           : static_cast<F>(static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000) / 64.0);
    std::memcpy(v.data() + at, &x, sizeof(F));
  }
}

std::vector<unsigned char> operand(const KindCase& k, size_t n, std::mt19937_64& rng) {
  std::vector<unsigned char> v(n * k.bytes + 64);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  switch (k.kind) {
    case BasicKind::kFloat: case BasicKind::kFloatComplex: case BasicKind::k2Float:
      plant<float>(v, sizeof(float), 0, rng);
      break;
    case BasicKind::kFloatInt:
      plant<float>(v, k.bytes, 0, rng);
      break;
    case BasicKind::kDouble: case BasicKind::kDoubleComplex: case BasicKind::k2Double:
      plant<double>(v, sizeof(double), 0, rng);
      break;
    case BasicKind::kDoubleInt:
      plant<double>(v, k.bytes, 0, rng);
      break;
    case BasicKind::kLongDouble: case BasicKind::kLongDoubleComplex: case BasicKind::kLongDoubleInt:
      std::fill(v.begin(), v.end(), 0);
      plant<long double>(v, k.kind == BasicKind::kLongDoubleInt ? k.bytes : sizeof(long double), 0, rng);
      break;
    case BasicKind::kInt32: case BasicKind::kInt64: case BasicKind::kUint32: case BasicKind::kUint64:
      // Some elements equal across operands (ties), some extreme.
      for (size_t i = 0; i + k.bytes <= v.size(); i += k.bytes)
        if (rng() % 4 == 0) std::memset(v.data() + i, rng() % 2 ? 0xff : 0x00, k.bytes);
      break;
    default:
      break;  // random bits: every 16-bit float pattern, every integer
  }
  return v;
}

// Bitwise equal, except that any NaN equals any NaN: which operand's
// payload an addition passes on depends on the order of the instruction's
// operands, which IEEE 754 leaves open and compilers swap freely.
template <class F>
bool sameFloats(const unsigned char* a, const unsigned char* b, size_t bytes, size_t stride,
                size_t width = sizeof(F)) {
  for (size_t at = 0; at + stride <= bytes; at += stride) {
    if (std::memcmp(a + at, b + at, stride) == 0) continue;
    F x, y;
    std::memcpy(&x, a + at, sizeof(F));
    std::memcpy(&y, b + at, sizeof(F));
    if (!(std::isnan(x) && std::isnan(y))) return false;
    if (std::memcmp(a + at + width, b + at + width, stride - width) != 0) return false;
  }
  return true;
}

bool sameResult(const KindCase& k, const std::vector<unsigned char>& a,
                const std::vector<unsigned char>& b, size_t n, size_t shift) {
  if (std::memcmp(a.data(), b.data(), a.size()) == 0) return true;
  const unsigned char *x = a.data() + shift, *y = b.data() + shift;
  const size_t bytes = n * k.bytes;
  switch (k.kind) {
    case BasicKind::kFloat: case BasicKind::kFloatComplex: case BasicKind::k2Float:
      return sameFloats<float>(x, y, bytes, sizeof(float));
    case BasicKind::kFloatInt:
      return sameFloats<float>(x, y, bytes, k.bytes);
    case BasicKind::kDouble: case BasicKind::kDoubleComplex: case BasicKind::k2Double:
      return sameFloats<double>(x, y, bytes, sizeof(double));
    case BasicKind::kDoubleInt:
      return sameFloats<double>(x, y, bytes, k.bytes);
    case BasicKind::kLongDouble: case BasicKind::kLongDoubleComplex:
      return sameFloats<long double>(x, y, bytes, sizeof(long double), 10);
    case BasicKind::kLongDoubleInt:
      return sameFloats<long double>(x, y, bytes, k.bytes, 10);
    case BasicKind::kFloat16: case BasicKind::kBfloat16:
      for (size_t i = 0; i < n; ++i) {
        uint16_t p, q;
        std::memcpy(&p, x + 2 * i, 2);
        std::memcpy(&q, y + 2 * i, 2);
        const uint16_t exp = k.kind == BasicKind::kFloat16 ? 0x7c00 : 0x7f80;
        const bool nanP = (p & exp) == exp && (p & ~(exp | 0x8000)) != 0;
        const bool nanQ = (q & exp) == exp && (q & ~(exp | 0x8000)) != 0;
        if (p != q && !(nanP && nanQ)) return false;
      }
      return true;
    default:
      return false;
  }
}

void checkBuild(ApplyFn candidate, const char* build) {
  std::mt19937_64 rng(20261127);
  const size_t lengths[] = {0, 1, 7, 15, 16, 17, 31, 33, 64, 255, 1000};
  for (const KindCase& k : kKinds)
    for (OpKind op : kOps)
      for (size_t n : lengths)
        for (size_t shift : {size_t{0}, size_t{1}}) {  // unaligned starts
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

// The check itself can fail: a loop that differs in one element is caught.
TEST(ReduceBuilds, CheckSeesADifference) {
  std::vector<float> in(20, 1.0f), a(20, 2.0f), b(20, 2.0f);
  loom::coll::applyPackedBaseline(OpKind::kSum, BasicKind::kFloat, 4, in.data(), a.data(), 20);
  loom::coll::applyPackedBaseline(OpKind::kSum, BasicKind::kFloat, 4, in.data(), b.data(), 19);
  EXPECT_NE(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
}

}  // namespace
