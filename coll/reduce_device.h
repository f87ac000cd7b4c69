// The device reductions' bodies and their dispatch, in plain C++ shared by
// the CUDA kernels (coll/reduce_cuda.cu) and the host unit tests
// (tests/unit/reduce_device_test.cc), which run the very same bodies and
// check them bit for bit against the host loop (reduce_host.h) for every
// (op, type) pair.
//
// A reduction is a body with items(): item j is one independent piece of
// work. A launcher runs body(j) for every j < items(): a grid-stride CUDA
// kernel (reduce_cuda.cu), or a loop in the tests. The bodies call the
// functors of reduce_kernels.h, so the arithmetic is the host's:
//   elementwise  T of 1, 2, 4 or 8 bytes; when both operands are 16-byte
//                aligned, item j < nVec combines elements [jK, jK + K),
//                K = 16 / sizeof(T), through one 16-byte load of each
//                operand and one store (coalesced 128-bit accesses on the
//                device); the remaining items are single elements. Complex
//                sums are elementwise over the 2n parts.
//   complex product, MINLOC/MAXLOC pairs: one pair per item (pairs of the
//                loc types are packed and unaligned, read byte-wise).
// long double has no device arithmetic: DeviceReduce reports it
// unsupported, and the caller stages to the host.
//
// Bits: the device must not contract a * c - b * d into fused
// multiply-adds (the host does not): reduce_cuda.cu is compiled with
// -fmad=false. Denormals are kept (no -ftz), divisions never occur.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "coll/reduce_dispatch.h"

namespace loom::coll::LOOM_KERNELS_NS {

struct alignas(16) Chunk16 {
  uint32_t w[4];
};

LOOM_HD inline Chunk16 load16(const void* p) {
#if defined(__CUDA_ARCH__)
  return *static_cast<const Chunk16*>(p);  // one 128-bit load
#else
  Chunk16 c;
  std::memcpy(&c, p, sizeof c);
  return c;
#endif
}
LOOM_HD inline void store16(void* p, const Chunk16& c) {
#if defined(__CUDA_ARCH__)
  *static_cast<Chunk16*>(p) = c;
#else
  std::memcpy(p, &c, sizeof c);
#endif
}

template <class T, class F>
struct ElementwiseBody {
  static constexpr int64_t K = 16 / sizeof(T);
  const T* in;
  T* io;
  int64_t n;
  int64_t nVec;  // items done 16 bytes at a time (0 when unaligned)
  F f;
  LOOM_HD int64_t items() const { return nVec + (n - nVec * K); }
  LOOM_HD void operator()(int64_t j) const {
    if (j < nVec) {
      const Chunk16 a = load16(in + j * K);
      Chunk16 b = load16(io + j * K);
      T x[K], y[K];
      std::memcpy(x, &a, sizeof a);
      std::memcpy(y, &b, sizeof b);
      for (int64_t k = 0; k < K; ++k) y[k] = f(x[k], y[k]);
      std::memcpy(&b, y, sizeof b);
      store16(io + j * K, b);
      return;
    }
    const int64_t i = nVec * K + (j - nVec);
    io[i] = f(in[i], io[i]);
  }
};

template <class T>
struct ComplexProdBody {
  const T* in;
  T* io;
  int64_t n;
  LOOM_HD int64_t items() const { return n; }
  LOOM_HD void operator()(int64_t i) const { complexProd(in + 2 * i, io + 2 * i, 1); }
};

template <class V, class I, bool kMax>
struct LocBody {
  static constexpr int64_t kStride = sizeof(V) + sizeof(I);
  const unsigned char* in;
  unsigned char* io;
  int64_t n;
  LOOM_HD int64_t items() const { return n; }
  LOOM_HD void operator()(int64_t i) const {
    locKernel<V, I, kMax>(in + i * kStride, io + i * kStride, 1);
  }
};

// The visitor of visitReduction for device buffers: builds the body of an
// (op, type) pair and hands it to `launch`. `visited` stays false for a
// pair opValidFor refuses; `unsupported` is set for long double.
template <class Launch>
struct DeviceReduce {
  const void* in;
  void* io;
  int64_t n;
  Launch* launch;
  bool visited = false;
  bool unsupported = false;

  template <class T, class F>
  void run(int64_t count, F f) {
    const T* a = static_cast<const T*>(in);
    T* b = static_cast<T*>(io);
    const bool aligned =
        ((reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b)) % 16) == 0;
    constexpr int64_t K = 16 / sizeof(T);
    (*launch)(ElementwiseBody<T, F>{a, b, count, aligned ? count / K : 0, f});
  }

  template <class T, class F>
  void elementwise(F f) {
    visited = true;
    if constexpr (sizeof(T) > 8)
      unsupported = true;  // long double
    else
      run<T>(n, f);
  }
  template <class T>
  void complex(bool product) {
    visited = true;
    if constexpr (sizeof(T) > 8) {
      unsupported = true;
    } else if (product) {
      (*launch)(ComplexProdBody<T>{static_cast<const T*>(in), static_cast<T*>(io), n});
    } else {
      run<T>(2 * n, Sum<T>());  // (re, im) sums: 2n independent additions
    }
  }
  template <class V, class I, bool kMax>
  void loc() {
    visited = true;
    if constexpr (std::is_same_v<V, long double>)
      unsupported = true;
    else
      (*launch)(LocBody<V, I, kMax>{static_cast<const unsigned char*>(in),
                                    static_cast<unsigned char*>(io), n});
  }
};

}  // namespace loom::coll::LOOM_KERNELS_NS
