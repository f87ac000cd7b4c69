// The host's reduction loops over packed elements, for one instruction set:
// io = in op io (LOOM_REDUCE_HOST_FN) and out = in op base
// (LOOM_REDUCE_HOST_FROM_FN).
//
// Included by op.cc (the baseline build) and by reduce_x86_v3.cc /
// reduce_x86_v4.cc, which compile it for AVX2 and AVX-512 under their own
// LOOM_KERNELS_NS and LOOM_REDUCE_HOST_FN names; op.cc picks one at start
// (reduce_isa.h). The kernels are the same C++ in each: only the
// vectorisation differs (int/float SUM at 64 KiB: 85 GB/s of operand traffic
// with SSE2, 150-250 GB/s with AVX2 on this machine), never the bits, since
// those files are compiled with -ffp-contract=off.
#pragma once

#include <cstring>

#include "coll/reduce_dispatch.h"

namespace loom::coll::LOOM_KERNELS_NS {

// io = in op io; or, with `out` set, out = in op io (io then only read).
struct HostLoop {
  const void* in;
  void* io;
  int64_t n;
  void* out = nullptr;
  bool visited = false;
  template <class T, class F>
  void elementwise(F f) {
    visited = true;
    if constexpr (sizeof(T) <= 8) {
      if (out) {
        applyKernel3(static_cast<const T*>(in), static_cast<const T*>(io), static_cast<T*>(out),
                     n, f);
        return;
      }
    }
    // (long double's padding bytes come from io as well)
    applyKernel(static_cast<const T*>(in), static_cast<T*>(target(sizeof(T))), n, f);
  }
  // The rarer kinds take `io` into `out` first and reduce there.
  void* target(size_t elemBytes) {
    visited = true;
    if (!out) return io;
    std::memcpy(out, io, static_cast<size_t>(n) * elemBytes);
    return out;
  }
  template <class T>
  void complex(bool product) {
    T* res = static_cast<T*>(target(2 * sizeof(T)));
    if (product) complexProd(static_cast<const T*>(in), res, n);
    else complexSum(static_cast<const T*>(in), res, n);
  }
  template <class V, class I, bool kMax>
  void loc() {
    auto* res = static_cast<unsigned char*>(target(sizeof(V) + sizeof(I)));
    locKernel<V, I, kMax>(static_cast<const unsigned char*>(in), res, n);
  }
};

}  // namespace loom::coll::LOOM_KERNELS_NS

namespace loom::coll {
// `n` packed elements of `kind`: io[i] = in[i] op io[i].
void LOOM_REDUCE_HOST_FN(OpKind op, BasicKind kind, int64_t elemBytes, const void* in, void* io,
                         int64_t n) {
  LOOM_KERNELS_NS::HostLoop loop{in, io, n};
  LOOM_KERNELS_NS::visitReduction(op, kind, elemBytes, loop);
}
// `n` packed elements: out[i] = in[i] op base[i] (three distinct buffers).
void LOOM_REDUCE_HOST_FROM_FN(OpKind op, BasicKind kind, int64_t elemBytes, const void* in,
                              const void* base, void* out, int64_t n) {
  LOOM_KERNELS_NS::HostLoop loop{in, const_cast<void*>(base), n, out};
  LOOM_KERNELS_NS::visitReduction(op, kind, elemBytes, loop);
  // A pair without a kernel leaves io alone in the two-operand form: here
  // out gets base, so the two forms always agree.
  if (!loop.visited && n > 0) std::memcpy(out, base, static_cast<size_t>(n * elemBytes));
}
}  // namespace loom::coll
