// OpKind (Op::Kind) on its own, for the reduction kernels' separately
// compiled builds (see runtime/core/basic_kind.h).
#pragma once

#include <cstdint>

namespace loom::coll {

enum class OpKind : uint8_t {
  kUser, kSum, kMin, kMax, kProd, kBand, kBor, kBxor, kLand, kLor, kLxor,
  kMinloc, kMaxloc, kReplace, kNoOp
};

}  // namespace loom::coll
