// Reduction kernels: one functor per (operation, element type), and the
// loop that applies a functor to two arrays (inout[i] = in[i] op inout[i]).
//
// Plain C++ on purpose: no library calls, no host-only constructs, so a CUDA
// translation unit can include this header and run the same functors on the
// device (LOOM_HD expands to __host__ __device__ there). The host version is
// the reference every GPU test compares against.
//
// Vectorisation: applyKernel is a counted loop over restrict pointers in
// fixed blocks; gcc 12 -O2 vectorises it for SUM/PROD/MIN/MAX/bitwise on the
// integer and float types (checked with -fopt-info-vec-optimized). Signed integers add through
// their unsigned twin so overflow wraps instead of being undefined.
//
// 16-bit floats (MPIX_C_FLOAT16: IEEE binary16; MPIX_BFLOAT16: the upper
// half of a binary32) are stored as uint16_t, widened to float, combined in
// float and rounded back to nearest-even. Since float carries at least
// 2p+2 bits for both formats (24 >= 2*11+2, 24 >= 2*8+2), that double
// rounding gives the correctly rounded 16-bit result of +, *.
//
// The value/index pair types (MINLOC/MAXLOC) are read in their packed
// layout: the value immediately followed by the int index, unaligned, hence
// the byte copies.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define LOOM_HD __host__ __device__
#else
#define LOOM_HD
#endif

#if defined(__GNUC__) || defined(__clang__)
#define LOOM_RESTRICT __restrict__
#else
#define LOOM_RESTRICT
#endif

// A translation unit compiled for another instruction set (reduce_x86_*.cc)
// defines LOOM_KERNELS_NS first, so its instantiations are symbols of their
// own: inline templates of one name would be merged by the linker, and the
// baseline build could end up running AVX-512 code (or the reverse).
#ifndef LOOM_KERNELS_NS
#define LOOM_KERNELS_NS kernels
#endif

namespace loom::coll::LOOM_KERNELS_NS {

// ---- 16-bit floats -------------------------------------------------------

LOOM_HD inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
LOOM_HD inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

LOOM_HD inline float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  if (exp == 31) return bitsFloat(sign | 0x7f800000u | (mant << 13));  // inf, NaN
  return bitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

LOOM_HD inline uint16_t floatToHalf(float f) {
  const uint32_t u = floatBits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u)  // inf stays inf; NaN stays a quiet NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0u));
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (a < 0x38800000u) {
    // Below 2^-14: a half subnormal. Adding 0.5 puts the value's bits at
    // the half's 2^-24 resolution; the FPU rounds to nearest-even for us.
    float v = bitsFloat(a) + 0.5f;
    return static_cast<uint16_t>(sign | (floatBits(v) - 0x3f000000u));
  }
  const uint32_t odd = (a >> 13) & 1u;
  a += 0xc8000fffu + odd;  // rebias (127 -> 15) and round to nearest-even
  return static_cast<uint16_t>(sign | (a >> 13));
}

LOOM_HD inline float bf16ToFloat(uint16_t h) { return bitsFloat(static_cast<uint32_t>(h) << 16); }

LOOM_HD inline uint16_t floatToBf16(float f) {
  const uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// ---- arithmetic functors: T op(T in, T inout) ----------------------------

template <class T>
using Wrap = std::conditional_t<std::is_integral_v<T> && !std::is_same_v<T, bool>,
                                std::make_unsigned_t<T>, T>;

template <class T>
struct Sum {
  LOOM_HD T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<Wrap<T>>(a) + static_cast<Wrap<T>>(b));
    else
      return a + b;
  }
};
template <class T>
struct Prod {
  LOOM_HD T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<Wrap<T>>(a) * static_cast<Wrap<T>>(b));
    else
      return a * b;
  }
};
template <class T>
struct Min {
  LOOM_HD T operator()(T a, T b) const { return a < b ? a : b; }
};
template <class T>
struct Max {
  LOOM_HD T operator()(T a, T b) const { return a > b ? a : b; }
};
template <class T>
struct Land {
  LOOM_HD T operator()(T a, T b) const { return static_cast<T>((a != 0) && (b != 0)); }
};
template <class T>
struct Lor {
  LOOM_HD T operator()(T a, T b) const { return static_cast<T>((a != 0) || (b != 0)); }
};
template <class T>
struct Lxor {
  LOOM_HD T operator()(T a, T b) const { return static_cast<T>((a != 0) != (b != 0)); }
};
template <class T>
struct Band {
  LOOM_HD T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
template <class T>
struct Bor {
  LOOM_HD T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
template <class T>
struct Bxor {
  LOOM_HD T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};

// A 16-bit float functor: widen, apply F<float>, round back.
template <template <class> class F, bool kBf16>
struct Half {
  LOOM_HD uint16_t operator()(uint16_t a, uint16_t b) const {
    const float x = kBf16 ? bf16ToFloat(a) : halfToFloat(a);
    const float y = kBf16 ? bf16ToFloat(b) : halfToFloat(b);
    const float r = F<float>()(x, y);
    return kBf16 ? floatToBf16(r) : floatToHalf(r);
  }
};

// inout[i] = in[i] op inout[i], i < n.
// The body runs in blocks of a fixed 16 elements, then a scalar tail: gcc's
// -O2 cost model ("very cheap") vectorises only loops whose trip count is a
// known multiple of the vector length, which the inner loop is.
template <class T, class F>
LOOM_HD inline void applyKernel(const T* LOOM_RESTRICT in, T* LOOM_RESTRICT inout, int64_t n,
                                F f) {
  constexpr int64_t kBlock = 16;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (int64_t j = 0; j < kBlock; ++j) inout[i + j] = f(in[i + j], inout[i + j]);
  for (; i < n; ++i) inout[i] = f(in[i], inout[i]);
}

// out[i] = in[i] op base[i], i < n: applyKernel with the second operand read
// from `base` instead of the result (three distinct buffers); the same
// calls of `f` on the same operands, so the same bits.
template <class T, class F>
LOOM_HD inline void applyKernel3(const T* LOOM_RESTRICT in, const T* LOOM_RESTRICT base,
                                 T* LOOM_RESTRICT out, int64_t n, F f) {
  constexpr int64_t kBlock = 16;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (int64_t j = 0; j < kBlock; ++j) out[i + j] = f(in[i + j], base[i + j]);
  for (; i < n; ++i) out[i] = f(in[i], base[i]);
}

// ---- complex: arrays of interleaved (re, im) of T -----------------------

template <class T>
LOOM_HD inline void complexSum(const T* LOOM_RESTRICT in, T* LOOM_RESTRICT inout, int64_t n) {
  for (int64_t i = 0; i < 2 * n; ++i) inout[i] = in[i] + inout[i];
}
// Textbook product (a+bi)(c+di) = (ac-bd) + (ad+bc)i, without the C
// library's NaN/inf recovery (Annex G): what Open MPI and MPICH compute too.
// (Host builds: not vectorised. gcc 12 turns the vectorised form into
// vfmaddsub on AVX2 even under -ffp-contract=off, whose single rounding
// gives inf where the two roundings give NaN, e.g. 12.9 * -1.7e308 +
// -1.7e308 * -9.6.)
template <class T>
#if !defined(__CUDACC__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
LOOM_HD inline void complexProd(const T* LOOM_RESTRICT in, T* LOOM_RESTRICT inout, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const T a = in[2 * i], b = in[2 * i + 1], c = inout[2 * i], d = inout[2 * i + 1];
    inout[2 * i] = a * c - b * d;
    inout[2 * i + 1] = a * d + b * c;
  }
}

// ---- MINLOC / MAXLOC on packed (value, index) pairs -----------------------

// I is the index type: int for the C pairs, V itself for MPI_2REAL etc.
// Ties keep the smaller index, as the standard defines.
template <class V, class I, bool kMax>
LOOM_HD inline void locKernel(const unsigned char* LOOM_RESTRICT in,
                              unsigned char* LOOM_RESTRICT inout, int64_t n) {
  constexpr size_t kStride = sizeof(V) + sizeof(I);
  for (int64_t i = 0; i < n; ++i) {
    V va, vb;
    I ia, ib;
    std::memcpy(&va, in + i * kStride, sizeof(V));
    std::memcpy(&ia, in + i * kStride + sizeof(V), sizeof(I));
    std::memcpy(&vb, inout + i * kStride, sizeof(V));
    std::memcpy(&ib, inout + i * kStride + sizeof(V), sizeof(I));
    const bool better = kMax ? va > vb : va < vb;
    if (better || (va == vb && ia < ib)) {
      std::memcpy(inout + i * kStride, &va, sizeof(V));
      std::memcpy(inout + i * kStride + sizeof(V), &ia, sizeof(I));
    }
  }
}

}  // namespace loom::coll::LOOM_KERNELS_NS

// The AVX2 builds of the host loop: 16-bit floats eight at a time.
#if defined(__AVX2__) && defined(__F16C__) && !defined(__CUDACC__)
#include "coll/reduce_half_x86.h"
#endif
