// BasicKind on its own: what the reduction kernels need to know of a type,
// with no inline code, so that the kernels' per-instruction-set builds and
// CUDA files can include it (coll/reduce_dispatch.h).
#pragma once

#include <cstdint>

namespace loom {

// What the elements of a type are, for the reduction engine. A predefined
// type has exactly one kind; a derived type has the kind shared by all its
// leaves, or kNone when they differ (or when no arithmetic applies, e.g.
// the Fortran REAL*2 / REAL*16 types).
enum class BasicKind : uint8_t {
  kNone,
  kByte,  // MPI_BYTE, MPI_PACKED: bytes, no arithmetic
  kChar,  // MPI_CHAR, MPI_CHARACTER: text, no arithmetic
  kWchar,
  kInt8, kInt16, kInt32, kInt64,
  kUint8, kUint16, kUint32, kUint64,
  kFloat, kDouble, kLongDouble,
  kFloatComplex, kDoubleComplex, kLongDoubleComplex,
  kBool,     // C _Bool, C++ bool (one byte)
  kLogical,  // Fortran LOGICAL of any size: zero is false
  // value/index pairs for MPI_MINLOC / MPI_MAXLOC
  kFloatInt, kDoubleInt, kLongInt, k2Int, kShortInt, kLongDoubleInt,
  k2Float, k2Double,  // MPI_2REAL, MPI_2DOUBLE_PRECISION
  kFloat16,   // MPIX_C_FLOAT16: IEEE binary16, stored as 16 bits
  kBfloat16,  // MPIX_BFLOAT16: the upper 16 bits of a binary32
};

}  // namespace loom
