#include "pmix_host.h"

#include <pmix.h>
#include <pmix_server.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/log.h"

namespace loom::launcher {
namespace {

// The queue the module callbacks post to. PMIx's module functions carry no
// user pointer of ours, so it is a file-level pointer, set once before
// PMIx_server_init and never changed.
PmixEventQueue* gQueue = nullptr;

// One PMIx operation completing on PMIx's thread. On timeout the waiter is
// deliberately leaked: the callback may still fire later and must not touch
// freed memory (the job is failing anyway).
struct OpWait {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t status = PMIX_SUCCESS;

  static void callback(pmix_status_t status, void* cbdata) {
    auto* w = static_cast<OpWait*>(cbdata);
    std::lock_guard<std::mutex> lock(w->mu);
    w->status = status;
    w->done = true;
    w->cv.notify_all();
  }

  // True when the callback arrived in time (then *status holds its result).
  bool wait(double timeoutSec, pmix_status_t* status) {
    std::unique_lock<std::mutex> lock(mu);
    bool ok = cv.wait_for(lock, std::chrono::duration<double>(timeoutSec), [&] { return done; });
    *status = this->status;
    return ok;
  }
};

// Issues an asynchronous PMIx call (`start` returns its immediate status)
// and waits for its callback. PMIX_OPERATION_SUCCEEDED means "done, no
// callback will come".
template <typename Start>
bool runOp(const char* what, double timeoutSec, Start start, std::string* error) {
  auto* w = new OpWait;
  pmix_status_t rc = start(&OpWait::callback, w);
  if (rc == PMIX_OPERATION_SUCCEEDED) {
    delete w;
    return true;
  }
  if (rc != PMIX_SUCCESS) {
    delete w;
    *error = std::string(what) + " failed: " + PMIx_Error_string(rc);
    return false;
  }
  pmix_status_t st;
  if (!w->wait(timeoutSec, &st)) {
    *error = std::string(what) + " did not complete within " + std::to_string((int)timeoutSec) +
             " s (LOOM_PMIX_TIMEOUT)";
    return false;  // w leaked on purpose, see OpWait
  }
  delete w;
  if (st != PMIX_SUCCESS) {
    *error = std::string(what) + " failed: " + PMIx_Error_string(st);
    return false;
  }
  return true;
}

// --- Server module: runs on PMIx's thread; records and replies at once. ---

pmix_status_t onConnected(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t cbfunc,
                          void* cbdata) {
  gQueue->push({PmixEvent::Kind::kConnected, static_cast<int>(proc->rank), 0, {}});
  if (cbfunc) cbfunc(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

pmix_status_t onConnected2(const pmix_proc_t* proc, void* obj, pmix_info_t[], size_t,
                           pmix_op_cbfunc_t cbfunc, void* cbdata) {
  return onConnected(proc, obj, cbfunc, cbdata);
}

pmix_status_t onFinalized(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t cbfunc,
                          void* cbdata) {
  gQueue->push({PmixEvent::Kind::kFinalized, static_cast<int>(proc->rank), 0, {}});
  if (cbfunc) cbfunc(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

// PMIx_Abort(status, msg, procs, nprocs): Loom always aborts the whole job,
// whatever subset `procs` names (as mpirun does). The event is queued before
// the client is released, so the main loop sees the abort before the rank's
// exit. The client then leaves PMIx_Abort and exits by itself, or is killed
// by the teardown.
pmix_status_t onAbort(const pmix_proc_t* proc, void*, int status, const char msg[],
                      pmix_proc_t[], size_t, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  gQueue->push({PmixEvent::Kind::kAbort, static_cast<int>(proc->rank), status,
                 msg ? std::string(msg) : std::string()});
  if (cbfunc) cbfunc(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

void noopOp(pmix_status_t, void*) {}

pmix_server_module_t gModule;  // zero-initialised; the three hooks set in init()

void loadString(pmix_info_t* info, const char* key, const std::string& value) {
  PMIx_Info_load(info, key, value.c_str(), PMIX_STRING);
}

void loadU32(pmix_info_t* info, const char* key, uint32_t value) {
  PMIx_Info_load(info, key, &value, PMIX_UINT32);
}

}  // namespace

PmixEventQueue::PmixEventQueue() { fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

PmixEventQueue::~PmixEventQueue() {
  if (fd_ >= 0) ::close(fd_);
}

void PmixEventQueue::push(PmixEvent ev) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(ev));
  }
  uint64_t one = 1;
  ssize_t rc = ::write(fd_, &one, sizeof one);
  (void)rc;  // only fails when the counter would overflow: still readable
}

std::vector<PmixEvent> PmixEventQueue::drain() {
  uint64_t count;
  ssize_t rc = ::read(fd_, &count, sizeof count);
  (void)rc;
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PmixEvent> out(std::make_move_iterator(events_.begin()),
                             std::make_move_iterator(events_.end()));
  events_.clear();
  return out;
}

PmixServer::PmixServer(PmixEventQueue* events, double timeoutSec)
    : events_(events), timeoutSec_(timeoutSec) {}

bool PmixServer::init(const std::string& tmpdir, void* hwlocTopology, std::string* error) {
  // The shared-memory datastores deadlock or crash in 4.2.2 when job info is
  // incomplete; the hash store is also faster to start (notes/pmix.md).
  ::setenv("PMIX_MCA_gds", "hash", 1);
  gQueue = events_;
  gModule.client_connected = onConnected;
  gModule.client_connected2 = onConnected2;
  gModule.client_finalized = onFinalized;
  gModule.abort = onAbort;

  pmix_topology_t topo;
  topo.source = const_cast<char*>("hwloc");
  topo.topology = hwlocTopology;
  size_t ninfo = hwlocTopology ? 3 : 2;
  pmix_info_t* info;
  PMIX_INFO_CREATE(info, ninfo);
  loadString(&info[0], PMIX_SERVER_TMPDIR, tmpdir);
  loadString(&info[1], PMIX_SYSTEM_TMPDIR, tmpdir);
  // Passed by pointer: PMIx keeps using the topology, never copies or frees it.
  if (hwlocTopology) {
    PMIX_LOAD_KEY(info[2].key, PMIX_TOPOLOGY2);
    info[2].value.type = PMIX_TOPO;
    info[2].value.data.topo = &topo;
  }
  pmix_status_t rc = PMIx_server_init(&gModule, info, ninfo);
  if (hwlocTopology) info[2].value.type = PMIX_UNDEF;  // not ours to free
  PMIX_INFO_FREE(info, ninfo);
  if (rc != PMIX_SUCCESS) {
    *error = std::string("PMIx_server_init failed: ") + PMIx_Error_string(rc);
    return false;
  }
  initialized_ = true;
  return true;
}

bool PmixServer::registerJob(const std::string& nspace,
                             const std::vector<std::vector<int>>& ranksOfNode,
                             const std::vector<std::string>& nodeNames, std::string* error) {
  nspace_ = nspace;
  int ranks = 0;
  for (const auto& node : ranksOfNode) ranks += static_cast<int>(node.size());
  ranks_ = ranks;
  // The node map and proc map are what the client library derives job size,
  // local size/peers/ranks and node ids from; without them PMIx_Init fails.
  // One node per entry of `ranksOfNode` (simulated nodes share this server).
  char* nodeMap = nullptr;
  char* procMap = nullptr;
  std::string hosts, ppn;
  for (size_t k = 0; k < ranksOfNode.size(); ++k) {
    if (k) {
      hosts += ',';
      ppn += ';';
    }
    hosts += nodeNames[k];
    for (size_t i = 0; i < ranksOfNode[k].size(); ++i) {
      if (i) ppn += ',';
      ppn += std::to_string(ranksOfNode[k][i]);
    }
  }
  pmix_status_t rc = PMIx_generate_regex(hosts.c_str(), &nodeMap);
  if (rc == PMIX_SUCCESS) rc = PMIx_generate_ppn(ppn.c_str(), &procMap);
  if (rc != PMIX_SUCCESS) {
    std::free(nodeMap);
    *error = std::string("cannot build the PMIx node/proc maps: ") + PMIx_Error_string(rc);
    return false;
  }
  const std::string& hostname = nodeNames[0];

  constexpr size_t kInfos = 8;
  pmix_info_t* info;
  PMIX_INFO_CREATE(info, kInfos);
  loadU32(&info[0], PMIX_UNIV_SIZE, ranks);
  loadU32(&info[1], PMIX_JOB_SIZE, ranks);
  loadU32(&info[2], PMIX_MAX_PROCS, ranks);
  loadU32(&info[3], PMIX_NUM_NODES, static_cast<uint32_t>(ranksOfNode.size()));
  PMIx_Info_load(&info[4], PMIX_NODE_MAP, nodeMap, PMIX_REGEX);
  PMIx_Info_load(&info[5], PMIX_PROC_MAP, procMap, PMIX_REGEX);
  loadString(&info[6], PMIX_JOBID, nspace);
  loadString(&info[7], PMIX_HOSTNAME, hostname);
  std::free(nodeMap);
  std::free(procMap);

  pmix_nspace_t ns;
  PMIX_LOAD_NSPACE(ns, nspace.c_str());
  bool ok = runOp(
      "PMIx_server_register_nspace", timeoutSec_,
      [&](pmix_op_cbfunc_t cb, void* w) {
        return PMIx_server_register_nspace(ns, ranks, info, kInfos, cb, w);
      },
      error);
  // On timeout PMIx may still read `info` later: leak it rather than risk a
  // use-after-free on a path that is failing anyway.
  if (ok) PMIX_INFO_FREE(info, kInfos);
  return ok;
}

bool PmixServer::registerClients(std::vector<std::vector<std::string>>* env,
                                 std::string* error) {
  env->assign(ranks_, {});
  for (int r = 0; r < ranks_; ++r) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, nspace_.c_str(), static_cast<pmix_rank_t>(r));
    std::string what = "PMIx_server_register_client(rank " + std::to_string(r) + ")";
    bool ok = runOp(
        what.c_str(), timeoutSec_,
        [&](pmix_op_cbfunc_t cb, void* w) {
          return PMIx_server_register_client(&proc, ::geteuid(), ::getegid(), nullptr, cb, w);
        },
        error);
    if (!ok) return false;
    // setup_fork appends to a NULL-terminated, malloc'd array: start from an
    // empty one so what comes back is exactly PMIx's additions.
    char** added = static_cast<char**>(std::calloc(1, sizeof(char*)));
    pmix_status_t rc = PMIx_server_setup_fork(&proc, &added);
    if (rc != PMIX_SUCCESS) {
      *error = std::string("PMIx_server_setup_fork failed: ") + PMIx_Error_string(rc);
      return false;
    }
    for (char** p = added; p && *p; ++p) {
      (*env)[r].emplace_back(*p);
      std::free(*p);
    }
    std::free(added);
  }
  return true;
}

void PmixServer::deregisterClient(int rank) {
  if (!initialized_) return;
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, nspace_.c_str(), static_cast<pmix_rank_t>(rank));
  PMIx_server_deregister_client(&proc, noopOp, nullptr);
}

void PmixServer::finalize() {
  if (!initialized_) return;
  pmix_nspace_t ns;
  PMIX_LOAD_NSPACE(ns, nspace_.c_str());
  auto* w = new OpWait;
  PMIx_server_deregister_nspace(ns, &OpWait::callback, w);
  pmix_status_t st;
  if (!w->wait(timeoutSec_, &st)) {
    log::warn("PMIx_server_deregister_nspace did not complete; skipping PMIx_server_finalize");
    return;  // w leaked on purpose
  }
  delete w;
  PMIx_server_finalize();
  initialized_ = false;
}

}  // namespace loom::launcher
