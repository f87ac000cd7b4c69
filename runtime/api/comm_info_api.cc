// Communicator hints (MPI 5.0 §7.4.4): MPI_Comm_set_info, MPI_Comm_get_info,
// MPI_Comm_dup_with_info, MPI_Comm_idup_with_info.
//
// A communicator keeps the hints Loom recognises, the standard's assertions
// (MPI 5.0 §7.4.4), and drops every other key it is given: MPI 4.0 made
// MPI_Comm_get_info return only the hints the implementation uses, so a
// program can tell which of its hints took effect. MPI_Comm_get_info shows
// every assertion, "false" when it was not set. Loom accepts the assertions
// but does not yet use them to take faster paths. MPI_Comm_dup copies the
// hints; MPI_Comm_dup_with_info and MPI_Comm_idup_with_info take the given
// ones instead.
#include "api/comm_internal.h"
#include "api/info_internal.h"
#include "api/runtime.h"

using loom::Comm;
using loom::errorf;
using loom::Info;
using loom::InfoEntries;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toComm;

namespace {

// The communicator assertions of MPI 5.0 §7.4.4 (boolean, default false).
constexpr const char* kAssertions[] = {
    "mpi_assert_no_any_tag",
    "mpi_assert_no_any_source",
    "mpi_assert_exact_length",
    "mpi_assert_allow_overtaking",
};

int badComm(const char* fn) {
  return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
}


// The hints `info` carries that Loom recognises: MPI_INFO_NULL carries none.
bool infoHints(MPI_Info info, InfoEntries* out) {
  out->clear();
  if (info == MPI_INFO_NULL) return true;
  Info* i = loom::api::toInfo(info);
  if (!i) return false;
  for (const auto& [k, v] : i->entries())
    if (loom::api::isCommHint(k)) loom::infoSet(*out, k, v);
  return true;
}

}  // namespace

namespace loom::api {

bool isCommHint(const std::string& key) {
  for (const char* k : kAssertions)
    if (key == k) return true;
  return false;
}

}  // namespace loom::api

extern "C" int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  static const char* fn = "MPI_Comm_set_info";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return badComm(fn);
  InfoEntries hints;
  if (!infoHints(info, &hints)) return raise(c, errorf(MPI_ERR_INFO, "invalid info object"), fn);
  // Keys not in `info` keep their values (as in Open MPI and MPICH).
  for (auto& [k, v] : hints) loom::infoSet(c->hints(), k, v);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_set_info)

extern "C" int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  static const char* fn = "MPI_Comm_get_info";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return badComm(fn);
  if (!info_used) return raise(c, errorf(MPI_ERR_ARG, "info_used is NULL"), fn);
  InfoEntries e;
  for (const char* key : kAssertions) {
    int i = loom::infoFind(c->hints(), key);
    loom::infoSet(e, key, i >= 0 ? c->hints()[i].second : "false");
  }
  for (auto& [k, v] : c->hints()) loom::infoSet(e, k, v);
  *info_used = loom::api::newInfo(std::move(e));
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_get_info)

extern "C" int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  static const char* fn = "MPI_Comm_dup_with_info";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return badComm(fn);
  InfoEntries hints;
  if (!infoHints(info, &hints)) return raise(c, errorf(MPI_ERR_INFO, "invalid info object"), fn);
  return loom::api::dupComm(comm, &hints, newcomm, fn);
}
LOOM_WEAK_ALIAS(MPI_Comm_dup_with_info)

extern "C" int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                                        MPI_Request* request) {
  static const char* fn = "MPI_Comm_idup_with_info";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return badComm(fn);
  InfoEntries hints;
  if (!infoHints(info, &hints)) return raise(c, errorf(MPI_ERR_INFO, "invalid info object"), fn);
  return loom::api::idupComm(comm, &hints, newcomm, request, fn);
}
LOOM_WEAK_ALIAS(MPI_Comm_idup_with_info)
