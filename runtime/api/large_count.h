// The MPI 4.0 large-count ("_c") forms of the entry points.
//
// MPI_Foo_c is MPI_Foo with MPI_Count counts (and MPI_Aint or MPI_Count
// displacements). Loom has one implementation per function, written in
// int64_t, and both entry points are thin calls into it: the int form's
// arguments widen on the way in, so the two forms cannot drift apart.
// Arrays (the v and w collectives, the datatype constructors) are read
// through one template or a CountArray view (core/count_array.h) that takes
// either element type. Where the int form returns a count, it reports
// MPI_UNDEFINED or MPI_ERR_VALUE_TOO_LARGE (as the standard says for that
// function) when the value does not fit an int, never a truncated one.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <type_traits>

#include "api/runtime.h"

// Loom relies on these to read MPI_Count and MPI_Aint arrays as int64_t.
static_assert(std::is_same_v<MPI_Count, int64_t>, "MPI_Count must be int64_t");
static_assert(sizeof(MPI_Aint) == sizeof(int64_t), "MPI_Aint must be 64 bits");

// LOOM_LARGE_COUNT(Foo, (parameters of MPI_Foo_c), call) defines PMPI_Foo_c
// as `return call;` (the implementation PMPI_Foo calls too) and its weak
// alias MPI_Foo_c.
#define LOOM_LARGE_COUNT(NAME, PARAMS, ...)                    \
  extern "C" int PMPI_##NAME##_c PARAMS { return __VA_ARGS__; } \
  LOOM_WEAK_ALIAS(MPI_##NAME##_c)
