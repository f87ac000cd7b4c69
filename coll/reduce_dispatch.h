// visitReduction: from (op, basic kind) to the kernel of reduce_kernels.h
// that combines packed elements of that kind, handed to a visitor.
//
// One switch for every place that runs a reduction: the host loops
// (reduce_host.h, compiled once per instruction set) and the CUDA launcher
// (coll/reduce_cuda.cu) visit the same (type, functor) pairs, so a kernel
// added here exists on both sides. The visitor gets
//   v.template elementwise<T>(F)          inout[i] = F(in[i], inout[i])
//   v.template complex<T>(bool product)   interleaved (re, im) pairs of T
//   v.template loc<V, I, bool kMax>()     packed (value, index) pairs
// and nothing for a pair that opValidFor refuses.
#pragma once

#include <cstdint>

#include "coll/op_kind.h"
#include "coll/reduce_kernels.h"
#include "core/basic_kind.h"

namespace loom::coll::LOOM_KERNELS_NS {

template <class T, class V>
void visitInt(OpKind op, V& v) {
  using O = OpKind;
  switch (op) {
    case O::kSum: return v.template elementwise<T>(Sum<T>());
    case O::kProd: return v.template elementwise<T>(Prod<T>());
    case O::kMin: return v.template elementwise<T>(Min<T>());
    case O::kMax: return v.template elementwise<T>(Max<T>());
    case O::kLand: return v.template elementwise<T>(Land<T>());
    case O::kLor: return v.template elementwise<T>(Lor<T>());
    case O::kLxor: return v.template elementwise<T>(Lxor<T>());
    case O::kBand: return v.template elementwise<T>(Band<T>());
    case O::kBor: return v.template elementwise<T>(Bor<T>());
    case O::kBxor: return v.template elementwise<T>(Bxor<T>());
    default: return;
  }
}

template <class T, class V>
void visitFloat(OpKind op, V& v) {
  using O = OpKind;
  switch (op) {
    case O::kSum: return v.template elementwise<T>(Sum<T>());
    case O::kProd: return v.template elementwise<T>(Prod<T>());
    case O::kMin: return v.template elementwise<T>(Min<T>());
    case O::kMax: return v.template elementwise<T>(Max<T>());
    default: return;
  }
}

template <bool kBf16, class V>
void visitHalf(OpKind op, V& v) {
  using O = OpKind;
  switch (op) {
    case O::kSum: return v.template elementwise<uint16_t>(Half<Sum, kBf16>());
    case O::kProd: return v.template elementwise<uint16_t>(Half<Prod, kBf16>());
    case O::kMin: return v.template elementwise<uint16_t>(Half<Min, kBf16>());
    case O::kMax: return v.template elementwise<uint16_t>(Half<Max, kBf16>());
    default: return;
  }
}

template <class T, class V>
void visitComplex(OpKind op, V& v) {
  if (op == OpKind::kSum) v.template complex<T>(false);
  else if (op == OpKind::kProd) v.template complex<T>(true);
}

template <class Val, class I, class V>
void visitLoc(OpKind op, V& v) {
  if (op == OpKind::kMaxloc) v.template loc<Val, I, true>();
  else if (op == OpKind::kMinloc) v.template loc<Val, I, false>();
}

// `elemBytes` is elementBytes(kind, type): it tells Fortran LOGICAL's size.
template <class V>
void visitReduction(OpKind op, BasicKind kind, int64_t elemBytes, V& v) {
  using K = BasicKind;
  switch (kind) {
    case K::kInt8: case K::kChar: return visitInt<int8_t>(op, v);
    case K::kInt16: return visitInt<int16_t>(op, v);
    case K::kInt32: return visitInt<int32_t>(op, v);
    case K::kInt64: return visitInt<int64_t>(op, v);
    case K::kUint8: case K::kBool: case K::kByte: return visitInt<uint8_t>(op, v);
    case K::kUint16: return visitInt<uint16_t>(op, v);
    case K::kUint32: return visitInt<uint32_t>(op, v);
    case K::kUint64: return visitInt<uint64_t>(op, v);
    case K::kLogical:
      switch (elemBytes) {
        case 1: return visitInt<uint8_t>(op, v);
        case 2: return visitInt<uint16_t>(op, v);
        case 4: return visitInt<uint32_t>(op, v);
        default: return visitInt<uint64_t>(op, v);
      }
    case K::kFloat: return visitFloat<float>(op, v);
    case K::kDouble: return visitFloat<double>(op, v);
    case K::kLongDouble: return visitFloat<long double>(op, v);
    case K::kFloat16: return visitHalf<false>(op, v);
    case K::kBfloat16: return visitHalf<true>(op, v);
    case K::kFloatComplex: return visitComplex<float>(op, v);
    case K::kDoubleComplex: return visitComplex<double>(op, v);
    case K::kLongDoubleComplex: return visitComplex<long double>(op, v);
    case K::kFloatInt: return visitLoc<float, int>(op, v);
    case K::kDoubleInt: return visitLoc<double, int>(op, v);
    case K::kLongInt: return visitLoc<long, int>(op, v);
    case K::k2Int: return visitLoc<int, int>(op, v);
    case K::kShortInt: return visitLoc<short, int>(op, v);
    case K::kLongDoubleInt: return visitLoc<long double, int>(op, v);
    case K::k2Float: return visitLoc<float, float>(op, v);
    case K::k2Double: return visitLoc<double, double>(op, v);
    default: return;
  }
}

}  // namespace loom::coll::LOOM_KERNELS_NS
