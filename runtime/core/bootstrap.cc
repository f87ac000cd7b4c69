#include "core/bootstrap.h"

#include <pmix.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/log.h"
#include "core/params.h"

namespace loom {
namespace {

pmix_proc_t gSelf;  // this process's PMIx name (valid while active)

// Reads an unsigned integer of any width PMIx may hand back.
bool valueToInt(const pmix_value_t* v, int64_t* out) {
  switch (v->type) {
    case PMIX_UINT32: *out = v->data.uint32; return true;
    case PMIX_UINT16: *out = v->data.uint16; return true;
    case PMIX_UINT8: *out = v->data.uint8; return true;
    case PMIX_UINT64: *out = static_cast<int64_t>(v->data.uint64); return true;
    case PMIX_INT: *out = v->data.integer; return true;
    case PMIX_INT32: *out = v->data.int32; return true;
    case PMIX_UINT: *out = v->data.uint; return true;
    case PMIX_PROC_RANK: *out = v->data.rank; return true;
    default: return false;
  }
}

// Timeout info for operations that must never wait forever.
struct TimeoutInfo {
  pmix_info_t info[2];
  size_t n = 0;
  explicit TimeoutInfo(bool collect) {
    int secs = static_cast<int>(params::getInt("LOOM_PMIX_TIMEOUT"));
    PMIx_Info_load(&info[n++], PMIX_TIMEOUT, &secs, PMIX_INT);
    if (collect) {
      bool yes = true;
      PMIx_Info_load(&info[n++], PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    }
  }
  ~TimeoutInfo() {
    for (size_t i = 0; i < n; ++i) PMIX_INFO_DESTRUCT(&info[i]);
  }
};

// Gets an integer attribute of `proc`; `optional` keys keep `out` unchanged.
Status getInt(const pmix_proc_t& proc, const char* key, int64_t* out, bool optional) {
  pmix_value_t* val = nullptr;
  pmix_status_t rc = PMIx_Get(&proc, key, nullptr, 0, &val);
  if (rc != PMIX_SUCCESS || !val) {
    if (optional) return Status::ok();
    return errorf(MPI_ERR_INTERN, "PMIx_Get(%s) failed: %s", key, PMIx_Error_string(rc));
  }
  bool ok = valueToInt(val, out);
  PMIX_VALUE_RELEASE(val);
  if (!ok && !optional) return errorf(MPI_ERR_INTERN, "PMIx_Get(%s): unexpected type", key);
  return Status::ok();
}

// Which node every rank of the job is on, from PMIx's node list: node k is
// the k-th name PMIx_Resolve_nodes gives and holds the ranks
// PMIx_Resolve_peers names for it. PMIx hands a client the node ids of its
// own node's ranks only (PMIX_NODEID of a rank elsewhere is "not found"),
// but every client has the job's node and proc maps, so this works under
// loomrun (simulated nodes included) and srun alike, and every rank numbers
// the nodes the same way.
Status resolveNodes(const pmix_proc_t& self, int size, std::vector<int>* nodeOfRank,
                    std::vector<std::string>* names) {
  char* list = nullptr;
  pmix_status_t rc = PMIx_Resolve_nodes(self.nspace, &list);
  if (rc != PMIX_SUCCESS || !list)
    return errorf(MPI_ERR_INTERN, "PMIx_Resolve_nodes failed: %s", PMIx_Error_string(rc));
  std::string nodes(list);
  std::free(list);
  nodeOfRank->assign(size, -1);
  names->clear();
  size_t i = 0;
  while (i <= nodes.size()) {
    size_t j = nodes.find(',', i);
    if (j == std::string::npos) j = nodes.size();
    std::string name = nodes.substr(i, j - i);
    i = j + 1;
    if (name.empty()) continue;
    pmix_proc_t* procs = nullptr;
    size_t n = 0;
    rc = PMIx_Resolve_peers(name.c_str(), self.nspace, &procs, &n);
    if (rc != PMIX_SUCCESS)
      return errorf(MPI_ERR_INTERN, "PMIx_Resolve_peers(%s) failed: %s", name.c_str(),
                    PMIx_Error_string(rc));
    const int id = static_cast<int>(names->size());
    names->push_back(name);
    for (size_t k = 0; k < n; ++k)
      if (procs[k].rank < static_cast<pmix_rank_t>(size)) (*nodeOfRank)[procs[k].rank] = id;
    if (procs) PMIX_PROC_FREE(procs, n);
  }
  for (int r = 0; r < size; ++r)
    if ((*nodeOfRank)[r] < 0)
      return errorf(MPI_ERR_INTERN, "PMIx names no node for rank %d", r);
  return Status::ok();
}

// The launcher's PMIx server went away (loomrun killed with SIGKILL, the
// node's daemon gone): nobody will ever complete a fence or tear this job
// down, and a rank waiting in MPI would spin forever (a rank that is a
// grandchild of loomrun, e.g. under `sh -c`, gets no parent-death signal).
// Runs on PMIx's thread: leave at once, leaving nothing behind (segments
// are memfds, core/segment.h).
char gLostMessage[160];
void onServerLost(size_t, pmix_status_t, const pmix_proc_t*, pmix_info_t[], size_t, pmix_info_t*,
                  size_t, pmix_event_notification_cbfunc_fn_t, void*) {
  ::signal(SIGPIPE, SIG_IGN);  // stderr may be a pipe to the dead launcher
  ssize_t rc = ::write(STDERR_FILENO, gLostMessage, std::strlen(gLostMessage));
  (void)rc;
  std::_Exit(1);
}

void exitWhenServerLost(int rank) {
  std::snprintf(gLostMessage, sizeof gLostMessage,
                "loom: rank %d: lost the connection to the launcher's PMIx server; exiting\n",
                rank);
  pmix_status_t codes[] = {PMIX_ERR_LOST_CONNECTION, PMIX_ERR_UNREACH};
  pmix_status_t rc = PMIx_Register_event_handler(codes, 2, nullptr, 0, onServerLost, nullptr,
                                                 nullptr);
  if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
    log::debug("boot", "cannot watch the PMIx server connection: %s", PMIx_Error_string(rc));
}

std::string localHostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

}  // namespace

Status Bootstrap::init(ProcInfo* info) {
  info_ = info;
  const char* ns = std::getenv("PMIX_NAMESPACE");
  const char* rk = std::getenv("PMIX_RANK");
  std::string nodeName = params::getString("LOOM_NODE_NAME");
  if (!ns || !rk) {
    // No PMIx server started us: a singleton.
    info->singleton = true;
    info->nspace = "singleton." + std::to_string(getpid());
    info->hostname = nodeName.empty() ? localHostname() : nodeName;
    info->localPeers = {0};
    info->nodeOfRank = {0};
    info->nodeNames = {info->hostname};
    log::debug("boot", "no PMIx server in the environment: singleton");
    return Status::ok();
  }

  // The hash datastore avoids the ds21 deadlocks seen with PMIx 4.2.2
  // (shared/notes/pmix.md); keep a user's explicit choice.
  setenv("PMIX_MCA_gds", "hash", 0);
  pmix_status_t rc = PMIx_Init(&gSelf, nullptr, 0);
  if (rc != PMIX_SUCCESS)
    return errorf(MPI_ERR_INTERN, "PMIx_Init failed: %s (is the launcher's PMIx server alive?)",
                  PMIx_Error_string(rc));
  active_ = true;
  info->singleton = false;
  info->nspace = gSelf.nspace;
  info->rank = static_cast<int>(gSelf.rank);
  exitWhenServerLost(info->rank);

  pmix_proc_t job;
  PMIX_PROC_LOAD(&job, gSelf.nspace, PMIX_RANK_WILDCARD);
  int64_t v = 0;
  LOOM_TRY(getInt(job, PMIX_JOB_SIZE, &v, false));
  info->size = static_cast<int>(v);
  v = info->size;
  LOOM_TRY(getInt(job, PMIX_UNIV_SIZE, &v, true));
  info->universeSize = static_cast<int>(v);
  v = 0;
  LOOM_TRY(getInt(gSelf, PMIX_APPNUM, &v, true));
  info->appNum = static_cast<int>(v);
  LOOM_TRY(resolveNodes(gSelf, info->size, &info->nodeOfRank, &info->nodeNames));
  const auto& nodeNames = info->nodeNames;
  info->numNodes = static_cast<int>(nodeNames.size());
  info->nodeId = info->nodeOfRank[info->rank];
  info->localPeers.clear();
  for (int r = 0; r < info->size; ++r)
    if (info->nodeOfRank[r] == info->nodeId) info->localPeers.push_back(r);
  info->localSize = static_cast<int>(info->localPeers.size());
  info->localRank = static_cast<int>(
      std::find(info->localPeers.begin(), info->localPeers.end(), info->rank) -
      info->localPeers.begin());
  if (!nodeName.empty()) {
    info->hostname = nodeName;
  } else {
    info->hostname = nodeNames[info->nodeId];
  }
  log::debug("boot", "PMIx client %s:%d of %d, local %d of %d, node %d of %d (%s)",
             info->nspace.c_str(), info->rank, info->size, info->localRank, info->localSize,
             info->nodeId, info->numNodes, info->hostname.c_str());
  return Status::ok();
}

Status Bootstrap::put(std::string_view key, std::span<const std::byte> blob) {
  if (!active_) {
    local_.emplace_back(std::string(key), std::vector<std::byte>(blob.begin(), blob.end()));
    return Status::ok();
  }
  std::string k(key);
  pmix_value_t val;
  PMIX_VALUE_CONSTRUCT(&val);
  pmix_byte_object_t bo;
  bo.bytes = reinterpret_cast<char*>(const_cast<std::byte*>(blob.data()));
  bo.size = blob.size();
  pmix_status_t rc = PMIx_Value_load(&val, &bo, PMIX_BYTE_OBJECT);  // copies
  if (rc == PMIX_SUCCESS) rc = PMIx_Put(PMIX_GLOBAL, k.c_str(), &val);
  PMIX_VALUE_DESTRUCT(&val);
  if (rc != PMIX_SUCCESS)
    return errorf(MPI_ERR_INTERN, "PMIx_Put(%s) failed: %s", k.c_str(), PMIx_Error_string(rc));
  return Status::ok();
}

Status Bootstrap::fence() {
  if (!active_) return Status::ok();
  pmix_status_t rc = PMIx_Commit();
  if (rc != PMIX_SUCCESS)
    return errorf(MPI_ERR_INTERN, "PMIx_Commit failed: %s", PMIx_Error_string(rc));
  TimeoutInfo ti(true);
  rc = PMIx_Fence(nullptr, 0, ti.info, ti.n);
  if (rc != PMIX_SUCCESS)
    return errorf(MPI_ERR_INTERN, "PMIx_Fence failed: %s (did another rank die?)",
                  PMIx_Error_string(rc));
  return Status::ok();
}

Status Bootstrap::barrier() {
  if (!active_) return Status::ok();
  TimeoutInfo ti(false);
  pmix_status_t rc = PMIx_Fence(nullptr, 0, ti.info, ti.n);
  if (rc != PMIX_SUCCESS)
    return errorf(MPI_ERR_INTERN, "PMIx_Fence failed: %s (did another rank die?)",
                  PMIx_Error_string(rc));
  return Status::ok();
}

Status Bootstrap::get(int rank, std::string_view key, std::vector<std::byte>* blob) {
  std::string k(key);
  if (!active_) {
    for (const auto& [name, data] : local_)
      if (name == k && rank == 0) {
        *blob = data;
        return Status::ok();
      }
    return errorf(MPI_ERR_INTERN, "no value '%s' published by rank %d", k.c_str(), rank);
  }
  pmix_proc_t peer;
  PMIX_PROC_LOAD(&peer, gSelf.nspace, static_cast<pmix_rank_t>(rank));
  TimeoutInfo ti(false);
  pmix_value_t* val = nullptr;
  pmix_status_t rc = PMIx_Get(&peer, k.c_str(), ti.info, ti.n, &val);
  if (rc != PMIX_SUCCESS || !val)
    return errorf(MPI_ERR_INTERN, "PMIx_Get(rank %d, %s) failed: %s", rank, k.c_str(),
                  PMIx_Error_string(rc));
  Status st;
  if (val->type == PMIX_BYTE_OBJECT) {
    const auto* p = reinterpret_cast<const std::byte*>(val->data.bo.bytes);
    blob->assign(p, p + val->data.bo.size);
  } else {
    st = errorf(MPI_ERR_INTERN, "PMIx_Get(rank %d, %s): not a byte object", rank, k.c_str());
  }
  PMIX_VALUE_RELEASE(val);
  return st;
}

void Bootstrap::abort(int code, const std::string& message, bool printed) {
  const bool launcherPrints = active_ && params::getString("LOOM_LAUNCHER") == "loomrun";
  if (!printed && !launcherPrints) {
    if (info_ && !info_->singleton)
      log::error("%s (on node %s; ending the job with code %d)", message.c_str(),
                 info_->hostname.c_str(), code);
    else
      log::error("%s", message.c_str());
  }
  if (active_) {
    // The launcher's abort handler kills every rank (this one included) and
    // exits with `code`; PMIx itself never kills anyone.
    PMIx_Abort(code, message.c_str(), nullptr, 0);
  }
  std::_Exit(code);
}

Status Bootstrap::finalize() {
  if (!active_) return Status::ok();
  active_ = false;
  pmix_status_t rc = PMIx_Finalize(nullptr, 0);
  if (rc != PMIX_SUCCESS)
    return errorf(MPI_ERR_INTERN, "PMIx_Finalize failed: %s", PMIx_Error_string(rc));
  return Status::ok();
}

}  // namespace loom
