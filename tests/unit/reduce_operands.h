// Operands for the reduction tests: every (op, basic kind) pair, random
// bytes with edge values planted (NaN, infinities, signed zeros,
// subnormals, extremes, ties), and a comparison that is bitwise except
// that any NaN equals any NaN. Shared by reduce_builds_test.cc (the host
// loop's instruction-set builds) and reduce_device_test.cc (the device
// reductions' bodies).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "coll/op_kind.h"
#include "core/basic_kind.h"

namespace loom::testing_reduce {

using loom::BasicKind;
using loom::coll::OpKind;

struct KindCase {
  BasicKind kind;
  int64_t bytes;  // one packed element
  const char* name;
};

const KindCase kKinds[] = {
    {BasicKind::kInt8, 1, "int8"},
    {BasicKind::kInt16, 2, "int16"},
    {BasicKind::kInt32, 4, "int32"},
    {BasicKind::kInt64, 8, "int64"},
    {BasicKind::kUint8, 1, "uint8"},
    {BasicKind::kUint16, 2, "uint16"},
    {BasicKind::kUint32, 4, "uint32"},
    {BasicKind::kUint64, 8, "uint64"},
    {BasicKind::kChar, 1, "char"},
    {BasicKind::kBool, 1, "bool"},
    {BasicKind::kByte, 1, "byte"},
    {BasicKind::kLogical, 1, "logical1"},
    {BasicKind::kLogical, 2, "logical2"},
    {BasicKind::kLogical, 4, "logical4"},
    {BasicKind::kLogical, 8, "logical8"},
    {BasicKind::kFloat, 4, "float"},
    {BasicKind::kDouble, 8, "double"},
    {BasicKind::kLongDouble, sizeof(long double), "long double"},
    {BasicKind::kFloat16, 2, "float16"},
    {BasicKind::kBfloat16, 2, "bfloat16"},
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

const OpKind kOps[] = {OpKind::kSum,  OpKind::kMin,  OpKind::kMax,    OpKind::kProd,
                       OpKind::kBand, OpKind::kBor,  OpKind::kBxor,   OpKind::kLand,
                       OpKind::kLor,  OpKind::kLxor, OpKind::kMinloc, OpKind::kMaxloc};

// Bytes for `n` elements of `k`: random, with edge values planted in the
// value fields of every float-like kind (long double values keep their
// 6 padding bytes zero, as a program's would be).
template <class F>
void plant(std::vector<unsigned char>& v, size_t stride, size_t off, std::mt19937_64& rng) {
  const F edge[] = {std::numeric_limits<F>::quiet_NaN(),
                    std::numeric_limits<F>::infinity(),
                    -std::numeric_limits<F>::infinity(),
                    F(0),
                    -F(0),
                    std::numeric_limits<F>::denorm_min(),
                    std::numeric_limits<F>::max(),
                    std::numeric_limits<F>::lowest(),
                    F(1),
                    F(-1.5)};
  for (size_t at = off; at + sizeof(F) <= v.size(); at += stride) {
    F x = (rng() % 3 == 0)
              ? edge[rng() % 10]
              : static_cast<F>(
                    static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000) / 64.0);
    std::memcpy(v.data() + at, &x, sizeof(F));
  }
}

inline std::vector<unsigned char> operand(const KindCase& k, size_t n, std::mt19937_64& rng) {
  std::vector<unsigned char> v(n * k.bytes + 64);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  switch (k.kind) {
    case BasicKind::kFloat:
    case BasicKind::kFloatComplex:
    case BasicKind::k2Float:
      plant<float>(v, sizeof(float), 0, rng);
      break;
    case BasicKind::kFloatInt:
      plant<float>(v, k.bytes, 0, rng);
      break;
    case BasicKind::kDouble:
    case BasicKind::kDoubleComplex:
    case BasicKind::k2Double:
      plant<double>(v, sizeof(double), 0, rng);
      break;
    case BasicKind::kDoubleInt:
      plant<double>(v, k.bytes, 0, rng);
      break;
    case BasicKind::kLongDouble:
    case BasicKind::kLongDoubleComplex:
    case BasicKind::kLongDoubleInt:
      std::fill(v.begin(), v.end(), 0);
      plant<long double>(v, k.kind == BasicKind::kLongDoubleInt ? k.bytes : sizeof(long double), 0,
                         rng);
      break;
    case BasicKind::kInt32:
    case BasicKind::kInt64:
    case BasicKind::kUint32:
    case BasicKind::kUint64:
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

// A start offset that leaves an operand misaligned for 16-byte (vector)
// accesses but aligned for its scalars, as a real buffer of that type is
// (a byte offset would make the scalar loads themselves undefined, which
// UBSan reports). The pair types are read byte-wise: any offset goes.
inline size_t misalignment(const KindCase& k) {
  switch (k.kind) {
    case BasicKind::kFloatInt:
    case BasicKind::kDoubleInt:
    case BasicKind::kLongInt:
    case BasicKind::k2Int:
    case BasicKind::kShortInt:
    case BasicKind::kLongDoubleInt:
    case BasicKind::k2Float:
    case BasicKind::k2Double:
      return 1;
    case BasicKind::kFloatComplex:
      return sizeof(float);
    case BasicKind::kDoubleComplex:
      return sizeof(double);
    case BasicKind::kLongDouble:
    case BasicKind::kLongDoubleComplex:
      return alignof(long double);
    default:
      return static_cast<size_t>(k.bytes);
  }
}

inline bool sameResult(const KindCase& k, const std::vector<unsigned char>& a,
                       const std::vector<unsigned char>& b, size_t n, size_t shift) {
  if (std::memcmp(a.data(), b.data(), a.size()) == 0) return true;
  const unsigned char *x = a.data() + shift, *y = b.data() + shift;
  const size_t bytes = n * k.bytes;
  switch (k.kind) {
    case BasicKind::kFloat:
    case BasicKind::kFloatComplex:
    case BasicKind::k2Float:
      return sameFloats<float>(x, y, bytes, sizeof(float));
    case BasicKind::kFloatInt:
      return sameFloats<float>(x, y, bytes, k.bytes);
    case BasicKind::kDouble:
    case BasicKind::kDoubleComplex:
    case BasicKind::k2Double:
      return sameFloats<double>(x, y, bytes, sizeof(double));
    case BasicKind::kDoubleInt:
      return sameFloats<double>(x, y, bytes, k.bytes);
    case BasicKind::kLongDouble:
    case BasicKind::kLongDoubleComplex:
      return sameFloats<long double>(x, y, bytes, sizeof(long double), 10);
    case BasicKind::kLongDoubleInt:
      return sameFloats<long double>(x, y, bytes, k.bytes, 10);
    case BasicKind::kFloat16:
    case BasicKind::kBfloat16:
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

}  // namespace loom::testing_reduce
