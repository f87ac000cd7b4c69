// The MPI tools interface (MPI_T): state and helpers shared by its files.
//
//   mpit_api.cc       MPI_T_init_thread/finalize, enumerations, events and
//                     event sources (Loom has none)
//   mpit_cvar.cc      control variables: one per LOOM_* parameter
//   mpit_pvar.cc      performance variables: the p2p engine's counters
//   mpit_category.cc  categories: the parameter groups and the counters
//
// MPI_T is usable at any time, before MPI_Init and after MPI_Finalize, as
// long as MPI_T_init_thread was called more often than MPI_T_finalize.
// Its functions return MPI_T_ERR_* codes and never call error handlers.
#pragma once

#include <mpi.h>

#include <string_view>

namespace loom::api::mpit {

// MPI_T_init_thread calls not yet balanced by MPI_T_finalize.
extern int gInitCount;
inline bool initialized() { return gInitCount > 0; }

// The standard's convention for returned strings (MPI 5.0 §15.3.3): with
// len NULL nothing is returned; with buf NULL or *len == 0 only the length
// of `s` plus one is; otherwise at most *len - 1 characters and a NUL are
// copied and *len becomes the number copied plus one.
void copyString(std::string_view s, char* buf, int* len);

// Fills up to `len` entries of `out` with `n` indices taken from `at(i)`.
// MPI_T_ERR_INVALID for a negative len or a NULL out with len > 0.
template <class At>
int fillIndices(int n, int len, int out[], At at) {
  if (len < 0 || (len > 0 && !out)) return MPI_T_ERR_INVALID;
  for (int i = 0; i < n && i < len; ++i) out[i] = at(i);
  return MPI_SUCCESS;
}

// Control variables are the LOOM_* parameters in params::all()'s order.
int cvarCount();

// Categories. Each LOOM_* parameter belongs to exactly one, by its prefix;
// the last holds every performance variable.
int categoryCount();
int categoryOfCvar(int cvarIndex);
int pvarCategory();

// Performance variables (mpit_pvar.cc), all in pvarCategory().
int pvarCount();
// MPI_T finalized for good (the count fell to zero): every session,
// performance and control variable handle is freed.
void freeCvarHandles();
void freePvarSessions();

}  // namespace loom::api::mpit

// The first check of every MPI_T function.
#define LOOM_MPIT_REQUIRE_INIT()                                          \
  do {                                                                    \
    if (!loom::api::mpit::initialized()) return MPI_T_ERR_NOT_INITIALIZED; \
  } while (0)
