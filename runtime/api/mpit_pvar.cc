// MPI_T performance variables: none yet (the p2p counters come next).
#include "api/mpit_internal.h"
#include "api/runtime.h"

namespace loom::api::mpit {
int pvarCount() { return 0; }
void freePvarSessions() {}
}  // namespace loom::api::mpit

extern "C" int PMPI_T_pvar_get_num(int* num_pvar) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!num_pvar) return MPI_T_ERR_INVALID;
  *num_pvar = loom::api::mpit::pvarCount();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_pvar_get_num)
