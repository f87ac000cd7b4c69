// MPI_T control variables: one per LOOM_* parameter of runtime/core/params
// (params::all(), in its order), named as the parameter ("LOOM_SHM_EAGER_MAX").
//
// Every value is a string (MPI_CHAR; the count is the buffer a read needs,
// terminating NUL included), exactly the text the parameter has in effect:
// the environment's if set, else the default ("16k", "auto"). Loom reads
// each parameter once, when it starts (loomrun's and the ranks' own
// environment), so every variable has scope MPI_T_SCOPE_READONLY and
// MPI_T_cvar_write answers MPI_T_ERR_CVAR_SET_NEVER. None is bound to an
// MPI object.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "api/mpit_internal.h"
#include "api/runtime.h"
#include "core/params.h"

namespace loom::api::mpit {
namespace {

// How deep a user must be to care about a parameter (MPI_T verbosity), by
// name prefix, first match wins. User-level: what changes what a job does
// or reports (debug output, oversubscription, the network, timeouts);
// tuner-level: protocol thresholds, buffers, algorithm choices (BASIC for
// the main switches, DETAIL for sizes and depths); MPI-developer level: the
// knobs for Loom's own tests and its launcher.
struct VerbosityRule {
  const char* prefix;
  int verbosity;
};
constexpr VerbosityRule kVerbosity[] = {
    {"LOOM_DEBUG", MPI_T_VERBOSITY_USER_BASIC},
    {"LOOM_OVERSUBSCRIBE", MPI_T_VERBOSITY_USER_BASIC},
    {"LOOM_OFI_PROVIDER", MPI_T_VERBOSITY_USER_BASIC},
    {"LOOM_PMIX_TIMEOUT", MPI_T_VERBOSITY_USER_BASIC},
    {"LOOM_NODE_NAME", MPI_T_VERBOSITY_USER_DETAIL},
    {"LOOM_KILL_GRACE_MS", MPI_T_VERBOSITY_USER_DETAIL},
    {"LOOM_OFI_PEER_TIMEOUT", MPI_T_VERBOSITY_USER_DETAIL},
    {"LOOM_LAUNCHER", MPI_T_VERBOSITY_MPIDEV_BASIC},
    {"LOOM_NP", MPI_T_VERBOSITY_MPIDEV_BASIC},
    {"LOOM_OFI_NETNS", MPI_T_VERBOSITY_MPIDEV_DETAIL},
    {"LOOM_COLL_VIRTUAL_NODE_SIZE", MPI_T_VERBOSITY_MPIDEV_DETAIL},
    {"LOOM_SHM_EAGER_MAX", MPI_T_VERBOSITY_TUNER_BASIC},
    {"LOOM_SHM_SEND_EAGER_MAX", MPI_T_VERBOSITY_TUNER_DETAIL},
    {"LOOM_SHM_RNDV", MPI_T_VERBOSITY_TUNER_BASIC},
    {"LOOM_SHM_CMA_MIN", MPI_T_VERBOSITY_TUNER_BASIC},
    {"LOOM_OFI_EAGER_MAX", MPI_T_VERBOSITY_TUNER_BASIC},
    {"LOOM_OFI_RNDV", MPI_T_VERBOSITY_TUNER_BASIC},
    {"LOOM_COLL_SHM_", MPI_T_VERBOSITY_TUNER_DETAIL},  // slot, max ranks
    {"LOOM_COLL_", MPI_T_VERBOSITY_TUNER_BASIC},       // LOOM_COLL_SHM, algorithms
};

int verbosityOf(std::string_view name) {
  for (const auto& r : kVerbosity)
    if (name.starts_with(r.prefix)) return r.verbosity;
  return MPI_T_VERBOSITY_TUNER_DETAIL;
}

const params::Param* cvar(int index) {
  auto all = params::all();
  if (index < 0 || index >= static_cast<int>(all.size())) return nullptr;
  return &all[index];
}

// A handle is the variable's index; handles live in this list until freed.
struct CvarHandle {
  int index;
  int count;  // what handle_alloc promised a read would need
};
std::vector<std::unique_ptr<CvarHandle>>& handles() {
  static std::vector<std::unique_ptr<CvarHandle>> h;
  return h;
}
CvarHandle* toHandle(MPI_T_cvar_handle h) {
  for (auto& p : handles())
    if (reinterpret_cast<MPI_T_cvar_handle>(p.get()) == h) return p.get();
  return nullptr;
}

}  // namespace

int cvarCount() { return static_cast<int>(params::all().size()); }

void freeCvarHandles() { handles().clear(); }

}  // namespace loom::api::mpit

namespace mpit = loom::api::mpit;

extern "C" int PMPI_T_cvar_get_num(int* num_cvar) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!num_cvar) return MPI_T_ERR_INVALID;
  *num_cvar = mpit::cvarCount();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_cvar_get_num)

// Every output may be NULL (not wanted); name and desc follow the
// standard's string convention (mpit::copyString).
extern "C" int PMPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity,
                                    MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc,
                                    int* desc_len, int* bind, int* scope) {
  LOOM_MPIT_REQUIRE_INIT();
  const loom::params::Param* p = mpit::cvar(cvar_index);
  if (!p) return MPI_T_ERR_INVALID_INDEX;
  mpit::copyString(p->name, name, name_len);
  if (verbosity) *verbosity = mpit::verbosityOf(p->name);
  if (datatype) *datatype = MPI_CHAR;
  if (enumtype) *enumtype = MPI_T_ENUM_NULL;
  mpit::copyString(p->doc, desc, desc_len);
  if (bind) *bind = MPI_T_BIND_NO_OBJECT;
  if (scope) *scope = MPI_T_SCOPE_READONLY;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_cvar_get_info)

extern "C" int PMPI_T_cvar_get_index(const char* name, int* cvar_index) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!name || !cvar_index) return MPI_T_ERR_INVALID;
  auto all = loom::params::all();
  for (size_t i = 0; i < all.size(); ++i) {
    if (std::strcmp(all[i].name, name) == 0) {
      *cvar_index = static_cast<int>(i);
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}
LOOM_WEAK_ALIAS(MPI_T_cvar_get_index)

// obj_handle is ignored: no variable is bound to an object. *count is the
// size of the buffer MPI_T_cvar_read fills (the value's length plus one).
extern "C" int PMPI_T_cvar_handle_alloc(int cvar_index, void* obj_handle,
                                        MPI_T_cvar_handle* handle, int* count) {
  (void)obj_handle;
  LOOM_MPIT_REQUIRE_INIT();
  const loom::params::Param* p = mpit::cvar(cvar_index);
  if (!p) return MPI_T_ERR_INVALID_INDEX;
  if (!handle || !count) return MPI_T_ERR_INVALID;
  const int n = static_cast<int>(loom::params::getString(p->name).size()) + 1;
  auto h = std::make_unique<mpit::CvarHandle>(mpit::CvarHandle{cvar_index, n});
  *count = n;
  *handle = reinterpret_cast<MPI_T_cvar_handle>(h.get());
  mpit::handles().push_back(std::move(h));
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_cvar_handle_alloc)

extern "C" int PMPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!handle) return MPI_T_ERR_INVALID;
  auto& all = mpit::handles();
  auto it = std::find_if(all.begin(), all.end(), [&](const auto& p) {
    return reinterpret_cast<MPI_T_cvar_handle>(p.get()) == *handle;
  });
  if (it == all.end()) return MPI_T_ERR_INVALID_HANDLE;
  all.erase(it);
  *handle = MPI_T_CVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_cvar_handle_free)

// Writes the value in effect, NUL-terminated, into buf (which holds the
// count MPI_T_cvar_handle_alloc returned).
extern "C" int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  LOOM_MPIT_REQUIRE_INIT();
  mpit::CvarHandle* h = mpit::toHandle(handle);
  if (!h) return MPI_T_ERR_INVALID_HANDLE;
  if (!buf) return MPI_T_ERR_INVALID;
  std::string v = loom::params::getString(mpit::cvar(h->index)->name);
  // Never more than the promised count, should the environment have changed.
  const size_t n = std::min(v.size(), static_cast<size_t>(h->count - 1));
  std::memcpy(buf, v.data(), n);
  static_cast<char*>(buf)[n] = '\0';
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_cvar_read)

extern "C" int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void* buf) {
  (void)buf;
  LOOM_MPIT_REQUIRE_INIT();
  if (!mpit::toHandle(handle)) return MPI_T_ERR_INVALID_HANDLE;
  return MPI_T_ERR_CVAR_SET_NEVER;  // read once at start-up (MPI_T_SCOPE_READONLY)
}
LOOM_WEAK_ALIAS(MPI_T_cvar_write)
