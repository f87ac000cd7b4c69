// The CUDA reductions' entry (reduce_cuda.cu), without CUDA headers: the
// device layer's stream is an opaque handle here.
#pragma once

#include <cstdint>
#include <string>

#include "coll/op_kind.h"
#include "core/basic_kind.h"

namespace loom::coll {

enum class DeviceReduceResult : uint8_t { kDone, kUnsupported, kFailed };

// Queues io[i] = in[i] op io[i] for `n` packed elements of `kind` (both
// pointers device memory) on `stream` (nullptr: the default stream). No
// wait: the caller fences the stream. kUnsupported for long double and
// pairs opValidFor refuses; kFailed with the CUDA error in *why.
DeviceReduceResult reduceCuda(OpKind op, BasicKind kind, int64_t elemBytes, const void* in,
                              void* io, int64_t n, void* stream, std::string* why);

}  // namespace loom::coll
