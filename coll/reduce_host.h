// The host's reduction loop over packed elements, for one instruction set.
//
// Included by op.cc (the baseline build) and by reduce_x86_v3.cc /
// reduce_x86_v4.cc, which compile it for AVX2 and AVX-512 under their own
// LOOM_KERNELS_NS and LOOM_REDUCE_HOST_FN names; op.cc picks one at start
// (reduce_isa.h). The kernels are the same C++ in each: only the
// vectorisation differs (int/float SUM at 64 KiB: 85 GB/s of operand traffic
// with SSE2, 150-250 GB/s with AVX2 on this machine), never the bits, since
// those files are compiled with -ffp-contract=off.
#pragma once

#include "coll/reduce_dispatch.h"

namespace loom::coll::LOOM_KERNELS_NS {

struct HostLoop {
  const void* in;
  void* io;
  int64_t n;
  template <class T, class F>
  void elementwise(F f) {
    applyKernel(static_cast<const T*>(in), static_cast<T*>(io), n, f);
  }
  template <class T>
  void complex(bool product) {
    if (product) complexProd(static_cast<const T*>(in), static_cast<T*>(io), n);
    else complexSum(static_cast<const T*>(in), static_cast<T*>(io), n);
  }
  template <class V, class I, bool kMax>
  void loc() {
    locKernel<V, I, kMax>(static_cast<const unsigned char*>(in),
                          static_cast<unsigned char*>(io), n);
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
}  // namespace loom::coll
