// float16 reductions, eight elements at a time, for the builds of the host
// loop that have AVX2 and F16C (reduce_x86_v3.cc, _v4.cc; included by
// reduce_kernels.h there only). The scalar functor (Half) converts with
// branches that gcc does not vectorise: float16 sums ran at 2.8 GB/s of
// operand traffic, now 77-79 (reduce_local --mem host, 64 KiB-4 MiB).
// bfloat16's conversions are shifts, which gcc vectorises itself (~33).
//
// Bits: the same as the scalar path's for every non-NaN result. VCVTPH2PS
// is exact; VCVTPS2PH with round-to-nearest-even is the scalar floatToHalf
// (overflow to infinity, subnormals rounded the same way). A NaN stays a
// NaN (its payload may differ, as between the host and the GPU; MPI
// defines none; ReduceBuilds compares so).
// The float operation is the scalar functor's: add, mul, and for MIN and
//   MAX `x < y ? x : y` / `x > y ? x : y`, which is exactly what MINPS and
//   MAXPS compute (the second operand when the compare is false).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

namespace loom::coll::LOOM_KERNELS_NS {

template <template <class> class F>
inline __m256 halfVecOp(__m256 x, __m256 y) {
  if constexpr (std::is_same_v<F<float>, Sum<float>>) {
    return _mm256_add_ps(x, y);
  } else if constexpr (std::is_same_v<F<float>, Prod<float>>) {
    return _mm256_mul_ps(x, y);
  } else if constexpr (std::is_same_v<F<float>, Min<float>>) {
    return _mm256_min_ps(x, y);
  } else {
    static_assert(std::is_same_v<F<float>, Max<float>>, "Half takes sum, prod, min, max");
    return _mm256_max_ps(x, y);
  }
}

inline __m256 loadHalf8(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline void storeHalf8(uint16_t* p, __m256 f) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                   _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

template <template <class> class F>
inline void applyKernel(const uint16_t* LOOM_RESTRICT in, uint16_t* LOOM_RESTRICT inout, int64_t n,
                        Half<F, false> f) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    storeHalf8(inout + i, halfVecOp<F>(loadHalf8(in + i), loadHalf8(inout + i)));
  for (; i < n; ++i) inout[i] = f(in[i], inout[i]);
}

template <template <class> class F>
inline void applyKernel3(const uint16_t* LOOM_RESTRICT in, const uint16_t* LOOM_RESTRICT base,
                         uint16_t* LOOM_RESTRICT out, int64_t n, Half<F, false> f) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    storeHalf8(out + i, halfVecOp<F>(loadHalf8(in + i), loadHalf8(base + i)));
  for (; i < n; ++i) out[i] = f(in[i], base[i]);
}

}  // namespace loom::coll::LOOM_KERNELS_NS
