// MPI_Init and friends: bring the runtime up and down.
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>

#include "api/bsend.h"
#include "api/comm_internal.h"
#include "api/runtime.h"
#include "coll/coll.h"
#include "core/device_stage.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "core/progress_async.h"
#include "p2p/p2p.h"
#include "rma/am.h"

using loom::errorf;
using loom::Status;
using loom::api::Phase;
using loom::api::rt;

namespace {

// Runs at exit(): a rank that leaves without MPI_Finalize is a failure the
// launcher also sees; say so from here too, where the rank is known.
void exitWithoutFinalize() {
  if (rt().phase == Phase::kRunning)
    loom::log::error("exiting without calling MPI_Finalize; the job will be terminated");
}

bool decideOversubscribed(const loom::ProcInfo& p, const loom::Topology& t) {
  std::string v = loom::params::getString("LOOM_OVERSUBSCRIBE");
  bool b = false;
  if (v != "auto" && loom::params::parseBool(v, &b)) return b;
  return p.localSize > t.usableCores;
}

// Publishes where this rank sits, lets the transports publish their
// addresses, meets every rank in the one fence of MPI_Init, then reads
// everyone's locality.
Status exchangeAndConnect(loom::api::Runtime& r) {
  loom::Locality mine{r.proc.nodeId, r.topo.package, r.topo.numaNode, r.topo.core};
  LOOM_TRY(r.boot.put("loom.loc", std::as_bytes(std::span(&mine, 1))));
  loom::p2p::JobInfo job;
  job.proc = &r.proc;
  job.boot = &r.boot;
  job.nodeOfRank = r.proc.nodeOfRank;
  LOOM_TRY(loom::p2p::setup(job));
  LOOM_TRY(r.boot.fence());
  LOOM_TRY(loom::p2p::connect());
  loom::jobNamespace() = r.proc.nspace;
  r.locality.assign(r.proc.size, {});
  for (int i = 0; i < r.proc.size; ++i) {
    if (i == r.proc.rank) {
      r.locality[i] = mine;
      continue;
    }
    std::vector<std::byte> blob;
    LOOM_TRY(r.boot.get(i, "loom.loc", &blob));
    if (blob.size() != sizeof(loom::Locality))
      return loom::errorf(MPI_ERR_INTERN, "rank %d published a locality of %zu bytes", i,
                          blob.size());
    std::memcpy(&r.locality[i], blob.data(), sizeof(loom::Locality));
  }
  return Status::ok();
}

Status bringUp(int required) {
  auto& r = rt();
  LOOM_TRY(r.boot.init(&r.proc));
  loom::log::setRank(r.proc.rank);
  LOOM_TRY(loom::loadTopology(&r.topo));
  r.oversubscribed = decideOversubscribed(r.proc, r.topo);
  loom::progress::setOversubscribed(r.oversubscribed);
  // The device backend (CUDA if built and present, the mock if asked) before
  // any buffer is looked at.
  loom::device::init();
  LOOM_TRY(exchangeAndConnect(r));

  std::vector<int> all(r.proc.size);
  for (int i = 0; i < r.proc.size; ++i) all[i] = i;
  r.world = std::make_unique<loom::Comm>(0, std::move(all), r.proc.rank, "MPI_COMM_WORLD");
  r.self = std::make_unique<loom::Comm>(1, std::vector<int>{r.proc.rank}, 0, "MPI_COMM_SELF");
  // Reserved on every process before any communicator is created, so no
  // agreement ever hands it out (comm_internal.h).
  loom::contextIds().take(loom::api::kCtxGroupCreate);

  // No internal locking yet: calls from several threads must be serialized
  // by the application. Be honest about it.
  r.threadLevel = required < MPI_THREAD_SERIALIZED ? required : MPI_THREAD_SERIALIZED;
  r.mainThread = pthread_self();
  r.phase = Phase::kRunning;
  std::atexit(exitWithoutFinalize);
  loom::log::debug("init", "rank %d of %d on %s (%s), %s, bound to %s, oversubscribed=%d",
                   r.proc.rank, r.proc.size, r.proc.hostname.c_str(),
                   r.proc.singleton ? "singleton" : r.proc.nspace.c_str(),
                   loom::describe(r.topo).c_str(), r.topo.binding.c_str(), r.oversubscribed);
  return Status::ok();
}

int initCommon(int required, const char* function) {
  auto& r = rt();
  if (r.worldActive || r.worldFinalized) {
    loom::log::error("%s called %s; returning MPI_ERR_OTHER", function,
                     r.worldActive ? "a second time" : "after MPI_Finalize");
    return MPI_ERR_OTHER;
  }
  Status st = loom::api::acquireRuntime(required);
  if (!st.isOk()) {
    if (r.phase == Phase::kAfter) {  // sessions came and went: no second start
      loom::log::error("%s: %s; returning MPI_ERR_OTHER", function, st.message().c_str());
      return MPI_ERR_OTHER;
    }
    // MPI_COMM_WORLD does not exist yet; its default handler is fatal.
    loom::api::abortJob(st.code(), std::string(function) + ": " + st.message());
  }
  r.worldActive = true;
  return MPI_SUCCESS;
}

bool validThreadLevel(int level) {
  return level == MPI_THREAD_SINGLE || level == MPI_THREAD_FUNNELED ||
         level == MPI_THREAD_SERIALIZED || level == MPI_THREAD_MULTIPLE;
}

}  // namespace

namespace loom::api {

Status acquireRuntime(int required) {
  auto& r = rt();
  if (r.phase == Phase::kAfter)
    return errorf(MPI_ERR_OTHER, "the runtime was already torn down (MPI_Finalize or the last "
                  "MPI_Session_finalize); Loom cannot start it again in this process");
  if (r.phase == Phase::kBefore) LOOM_TRY(bringUp(required));
  ++r.users;
  return Status::ok();
}

Status releaseRuntime() {
  auto& r = rt();
  if (r.phase != Phase::kRunning || r.users <= 0)
    return errorf(MPI_ERR_OTHER, "the runtime is not running");
  if (--r.users > 0) return Status::ok();
  // Windows not freed may have started the progress thread: from here on
  // only this thread may progress.
  loom::progress::asyncShutdown();
  // A collective that failed here is made known to the peers first: one may
  // still wait in it, and would never reach the barrier below.
  loom::coll::settleFailures();
  // Records still queued (control records of finished rendezvous, sends
  // libfabric has not taken yet) leave before the barrier: blocked there, a
  // rank moves nothing.
  loom::progress::waitUntil([] { return loom::p2p::drained(); });
  loom::p2p::tuneBeforeBarrier();
  // The last finalize is collective: nobody tears down while a peer may
  // still need it.
  Status st = r.boot.barrier();
  if (!st.isOk()) {
    ++r.users;
    return st;
  }
  // The first job on a host measures its protocol thresholds for the jobs
  // after it (core/tune.h): here, where the job's own work is done and the
  // two ranks that measure meet with nothing else running.
  st = loom::p2p::tuneCalibrate(r.world.get());
  if (!st.isOk()) loom::log::warn("calibration: %s", st.message().c_str());
  // Collective state (shared-memory segments, a setup still receiving) is
  // torn down while messages still move; at exit they no longer would.
  r.world->dropCollState();
  r.self->dropCollState();
  r.phase = Phase::kAfter;
  loom::device::stageDrain();
  st = loom::p2p::finalize();
  if (!st.isOk()) loom::log::warn("finalize: %s", st.message().c_str());
  st = r.boot.finalize();
  if (!st.isOk()) loom::log::warn("finalize: %s", st.message().c_str());
  return Status::ok();
}

}  // namespace loom::api

extern "C" int PMPI_Init(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  return initCommon(MPI_THREAD_SINGLE, "MPI_Init");
}
LOOM_WEAK_ALIAS(MPI_Init)

extern "C" int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  (void)argc;
  (void)argv;
  if (!validThreadLevel(required) || !provided) {
    if (rt().phase == Phase::kRunning)
      return loom::api::raise(nullptr,
                              loom::errorf(MPI_ERR_ARG, "required=%d is not a thread level or "
                                           "provided is NULL", required),
                              "MPI_Init_thread");
    loom::log::error("MPI_Init_thread: required=%d is not a thread level, or provided is NULL",
                     required);
    return MPI_ERR_ARG;
  }
  int rc = initCommon(required, "MPI_Init_thread");
  if (rc == MPI_SUCCESS) *provided = rt().threadLevel;
  return rc;
}
LOOM_WEAK_ALIAS(MPI_Init_thread)

extern "C" int PMPI_Finalize(void) {
  auto& r = rt();
  if (!r.worldActive) {
    loom::log::error("MPI_Finalize called %s; returning MPI_ERR_OTHER",
                     r.worldFinalized ? "after MPI_Finalize" : "before MPI_Init");
    return MPI_ERR_OTHER;
  }
  // The standard: MPI_COMM_SELF's attributes are deleted first (libraries
  // hang their clean-up on its delete callbacks), then MPI_COMM_WORLD's.
  loom::api::deleteAttributes(r.self.get(), MPI_COMM_SELF);
  loom::api::deleteAttributes(r.world.get(), MPI_COMM_WORLD);
  // Buffered sends still in the attached buffer are delivered first.
  loom::api::flushBufferedSends();
  // Windows not freed whose targets are reached by message: every member
  // finishes its epochs before any stops serving them (the progress thread
  // stops below, and the final fence does not progress). One nonblocking
  // barrier per window, all started before any is waited for, so windows
  // created in different orders cannot deadlock.
  {
    std::vector<MPI_Request> reqs;
    for (loom::Comm* c : loom::rma::Am::communicators()) {
      MPI_Request q;
      if (PMPI_Ibarrier(loom::api::toHandle(c), &q) == MPI_SUCCESS) reqs.push_back(q);
    }
    if (!reqs.empty())
      (void)PMPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  }
  Status st = loom::api::releaseRuntime();
  if (!st.isOk()) return loom::api::raise(nullptr, st, "MPI_Finalize");
  r.worldActive = false;
  r.worldFinalized = true;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Finalize)

extern "C" int PMPI_Initialized(int* flag) {
  if (!flag) return MPI_ERR_ARG;
  // The world model's state: sessions alone do not count (MPI 5.0 §11.2).
  *flag = rt().worldActive || rt().worldFinalized;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Initialized)

extern "C" int PMPI_Finalized(int* flag) {
  if (!flag) return MPI_ERR_ARG;
  *flag = rt().worldFinalized;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Finalized)

extern "C" int PMPI_Abort(MPI_Comm comm, int errorcode) {
  std::string name = "a communicator";
  if (loom::Comm* c = rt().phase == Phase::kRunning ? loom::api::toComm(comm) : nullptr)
    name = loom::api::describeComm(c);
  char msg[320];
  std::snprintf(msg, sizeof msg, "MPI_Abort called on %s with error code %d", name.c_str(),
                errorcode);
  loom::api::abortJob(errorcode, msg);
}
LOOM_WEAK_ALIAS(MPI_Abort)

extern "C" int PMPI_Query_thread(int* provided) {
  if (!loom::api::requireRunning("MPI_Query_thread")) return MPI_ERR_OTHER;
  if (!provided)
    return loom::api::raise(nullptr, loom::errorf(MPI_ERR_ARG, "provided is NULL"),
                            "MPI_Query_thread");
  *provided = rt().threadLevel;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Query_thread)

extern "C" int PMPI_Is_thread_main(int* flag) {
  if (!loom::api::requireRunning("MPI_Is_thread_main")) return MPI_ERR_OTHER;
  if (!flag)
    return loom::api::raise(nullptr, loom::errorf(MPI_ERR_ARG, "flag is NULL"),
                            "MPI_Is_thread_main");
  *flag = pthread_equal(pthread_self(), rt().mainThread) ? 1 : 0;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Is_thread_main)
