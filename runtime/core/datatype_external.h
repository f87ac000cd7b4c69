// The "external32" data representation (MPI 5.0 §15.5.2), used by
// MPI_Pack_external / MPI_Unpack_external: every basic value big-endian,
// with the standard's fixed sizes (C long and unsigned long 4 bytes,
// wchar_t 2, long double 16 as IEEE binary128, complex types as pairs),
// no padding between values.
//
// The converters work on the native packed stream (what Datatype::pack
// produces: the data bytes of the type map, in order), walking the type's
// parts down to its predefined leaves, so a conversion costs O(basic
// values) plus O(parts) of bookkeeping, whatever the type's memory layout.
#pragma once

#include <cstdint>

#include "core/datatype.h"

namespace loom {

// Bytes one element of `t` occupies in external32.
int64_t external32Size(const Datatype* t);

// `count` elements: native packed stream `native` (count * t->size()
// bytes) to external32 at `ext` (count * external32Size(t) bytes), and back.
// Values too large for a narrower external32 type (a C long beyond 32 bits)
// keep their low-order bytes.
void toExternal32(const Datatype* t, int64_t count, const char* native, char* ext);
void fromExternal32(const Datatype* t, int64_t count, const char* ext, char* native);

}  // namespace loom
