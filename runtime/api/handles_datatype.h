// MPI_Datatype handles <-> loom::Datatype objects.
//
// A predefined handle is a small ABI constant (0x200..0x2ff) that indexes
// the table of predefined types; any other handle is the address of a heap
// Datatype, checked through its magic field so a stale or garbage handle
// reads as invalid instead of crashing later.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "core/datatype.h"

namespace loom::api {

// nullptr for MPI_DATATYPE_NULL, unknown constants, garbage, and types the
// user has freed (even if a pending operation keeps the object alive).
inline Datatype* toDatatype(MPI_Datatype handle) {
  auto v = reinterpret_cast<uintptr_t>(handle);
  if (v < 4096) return predefinedDatatype(v);
  if (v % alignof(Datatype) != 0) return nullptr;
  auto* t = reinterpret_cast<Datatype*>(handle);
  return t->valid() && !t->userFreed() ? t : nullptr;
}

inline MPI_Datatype toHandle(Datatype* t) {
  if (!t) return MPI_DATATYPE_NULL;
  if (t->isPredefined()) return reinterpret_cast<MPI_Datatype>(uintptr_t{t->abiValue()});
  return reinterpret_cast<MPI_Datatype>(t);
}

}  // namespace loom::api

namespace loom::api {

// Datatype attributes (type_attr_api.cc): the copy callbacks MPI_Type_dup
// runs, and the delete callbacks MPI_Type_free runs (newest first, stopping
// at the first that fails). The Status carries a failing callback's code.
Status copyTypeAttributes(Datatype* from, MPI_Datatype fromHandle, Datatype* to);
Status deleteTypeAttributes(Datatype* t, MPI_Datatype handle);

}  // namespace loom::api
