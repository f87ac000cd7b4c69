// MPI_T categories: one per group of LOOM_* parameters (by name prefix, as
// params.cc groups its table) and one for the performance variables. No
// category contains another, none holds events, and the set never changes
// after start-up (MPI_T_category_changed always reports the same stamp).
#include <cstring>
#include <string_view>

#include "api/mpit_internal.h"
#include "api/runtime.h"
#include "core/params.h"

namespace loom::api::mpit {
namespace {

struct Category {
  const char* name;
  const char* desc;
};
// Index = category index. kPvars must stay last (pvarCategory()).
enum : int { kRuntime, kShm, kOfi, kColl, kLaunch, kPvars, kCategories };
constexpr Category kCategoryTable[kCategories] = {
    {"loom_runtime", "Loom's logging and runtime: debug output, oversubscription, node names"},
    {"loom_p2p_shm", "Point-to-point messages between ranks of one node (shared memory)"},
    {"loom_p2p_ofi", "Point-to-point messages between nodes (libfabric)"},
    {"loom_coll", "Collectives: shared-memory collectives and the algorithm of each collective"},
    {"loom_launch", "Launch and bootstrap: loomrun and the PMIx exchange"},
    {"loom_p2p_counters",
     "Counters of the point-to-point engine: messages and bytes sent per transport, messages "
     "received, the unexpected-message queue"},
};

// Parameter groups by name prefix, first match wins; the rest is runtime.
struct Rule {
  const char* prefix;
  int category;
};
constexpr Rule kRules[] = {
    {"LOOM_SHM_", kShm},     {"LOOM_OFI_", kOfi},         {"LOOM_COLL_", kColl},
    {"LOOM_KILL_", kLaunch}, {"LOOM_PMIX_", kLaunch},
};

bool validCategory(int c) { return c >= 0 && c < kCategories; }

// The number of cvars in category `c`, or their indices in order.
int cvarsOf(int c, int len, int* out) {
  int n = 0;
  for (int i = 0; i < cvarCount(); ++i) {
    if (categoryOfCvar(i) != c) continue;
    if (out && n < len) out[n] = i;
    ++n;
  }
  return n;
}

int pvarsOf(int c) { return c == kPvars ? pvarCount() : 0; }

}  // namespace

int categoryCount() { return kCategories; }
int pvarCategory() { return kPvars; }

int categoryOfCvar(int cvarIndex) {
  std::string_view name = params::all()[cvarIndex].name;
  for (const auto& r : kRules)
    if (name.starts_with(r.prefix)) return r.category;
  return kRuntime;
}

}  // namespace loom::api::mpit

namespace mpit = loom::api::mpit;

extern "C" int PMPI_T_category_get_num(int* num_cat) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!num_cat) return MPI_T_ERR_INVALID;
  *num_cat = mpit::categoryCount();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_category_get_num)

extern "C" int PMPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc,
                                        int* desc_len, int* num_cvars, int* num_pvars,
                                        int* num_categories) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!mpit::validCategory(cat_index)) return MPI_T_ERR_INVALID_INDEX;
  const mpit::Category& c = mpit::kCategoryTable[cat_index];
  mpit::copyString(c.name, name, name_len);
  mpit::copyString(c.desc, desc, desc_len);
  if (num_cvars) *num_cvars = mpit::cvarsOf(cat_index, 0, nullptr);
  if (num_pvars) *num_pvars = mpit::pvarsOf(cat_index);
  if (num_categories) *num_categories = 0;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_category_get_info)

extern "C" int PMPI_T_category_get_index(const char* name, int* cat_index) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!name || !cat_index) return MPI_T_ERR_INVALID;
  for (int i = 0; i < mpit::categoryCount(); ++i) {
    if (std::strcmp(mpit::kCategoryTable[i].name, name) == 0) {
      *cat_index = i;
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}
LOOM_WEAK_ALIAS(MPI_T_category_get_index)

extern "C" int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!mpit::validCategory(cat_index)) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && !indices)) return MPI_T_ERR_INVALID;
  mpit::cvarsOf(cat_index, len, indices);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_category_get_cvars)

// The performance variables are numbered 0..n-1 and all in one category.
extern "C" int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!mpit::validCategory(cat_index)) return MPI_T_ERR_INVALID_INDEX;
  return mpit::fillIndices(mpit::pvarsOf(cat_index), len, indices, [](int i) { return i; });
}
LOOM_WEAK_ALIAS(MPI_T_category_get_pvars)

extern "C" int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!mpit::validCategory(cat_index)) return MPI_T_ERR_INVALID_INDEX;
  return mpit::fillIndices(0, len, indices, [](int i) { return i; });
}
LOOM_WEAK_ALIAS(MPI_T_category_get_categories)

extern "C" int PMPI_T_category_get_num_events(int cat_index, int* num_events) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!mpit::validCategory(cat_index)) return MPI_T_ERR_INVALID_INDEX;
  if (!num_events) return MPI_T_ERR_INVALID;
  *num_events = 0;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_category_get_num_events)

extern "C" int PMPI_T_category_get_events(int cat_index, int len, int indices[]) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!mpit::validCategory(cat_index)) return MPI_T_ERR_INVALID_INDEX;
  return mpit::fillIndices(0, len, indices, [](int i) { return i; });
}
LOOM_WEAK_ALIAS(MPI_T_category_get_events)

// Categories, their variables and their members are fixed when the library
// is loaded: the stamp never changes.
extern "C" int PMPI_T_category_changed(int* update_number) {
  LOOM_MPIT_REQUIRE_INIT();
  if (!update_number) return MPI_T_ERR_INVALID;
  *update_number = 1;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_T_category_changed)
