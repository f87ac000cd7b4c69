// The point-to-point engine's life cycle: setup (protocol limits from the
// parameters, the transports each peer is reached by), connection,
// finalization, and the one-line description `loom_info` and the debug log
// print. The protocols themselves are in engine.cc; the state both share is
// in engine_state.h.
#include <algorithm>
#include <cstdio>
#include <string>

#include "core/device.h"
#include "core/device_stage.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "p2p/device_path.h"
#include "p2p/engine_state.h"
#include "p2p/p2p.h"
#include "p2p/protocol.h"
#include "p2p/routes.h"
#include "p2p/shm/shm_transport.h"
#if LOOM_HAVE_OFI
#include "p2p/ofi/ofi_transport.h"
#endif

namespace loom::p2p {

using engine::E;
using engine::NtMode;

namespace {

NtMode parseNt(const std::string& v) {
  bool b = false;
  if (v == "auto") return NtMode::kAuto;
  if (params::parseBool(v, &b)) return b ? NtMode::kAlways : NtMode::kNever;
  log::warn("LOOM_SHM_NT=%s is not auto, 1 or 0; using auto", v.c_str());
  return NtMode::kAuto;
}

}  // namespace

Status setup(const JobInfo& job) {
  E.me = job.proc->rank;
  E.outq.assign(job.proc->size, {});
  E.busy.clear();
  E.route.assign(job.proc->size, nullptr);
  E.shm = E.ofi = nullptr;
  ProtocolLimits& L = *shm::limits();
  E.shmLim = &L;
  L.inlineMax = static_cast<size_t>(std::max<int64_t>(0, params::getInt("LOOM_SHM_INLINE_MAX")));
  L.eagerMax = static_cast<size_t>(std::max<int64_t>(0, params::getInt("LOOM_SHM_EAGER_MAX")));
  // Oversubscribed, a pipelined message needs its sender and receiver to
  // take turns (clear to send, then chunks as the ring frees); a read needs
  // only the receiver to run. 8 ranks on 2 cores, alltoall of 64 KiB
  // blocks: 242-247 us with reads against 331-386 (Open MPI 291-309).
  // The window of sizes CMA takes: measured on this host, cached, set in
  // the environment, or these defaults (core/tune.h).
  tuneSetup(job, progress::oversubscribed(), &L);
  L.rndv = parseRndv("LOOM_SHM_RNDV");
  // A blocking send above the eager limit waits for its receiver to take
  // it; oversubscribed, that receiver may be waiting for a core, and the
  // sender's own work (HPL's panel forwarded, then the update) waits with
  // it. Written into the ring, the send is done at once (the ring bounds
  // how far a sender runs ahead). poll_ring at 8 ranks on 2 cores, 32 KiB:
  // docs/benchmarks.md, "Issue 16: waits that yield sooner, blocking sends
  // into the ring".
  // Auto scales the eager limit, so a job that forces rendezvous
  // (LOOM_SHM_EAGER_MAX=0) keeps it for blocking sends too.
  if (params::getString("LOOM_SHM_SEND_EAGER_MAX") == "auto")
    E.sendEagerMax = progress::oversubscribed() ? 4 * L.eagerMax : L.eagerMax;
  else
    E.sendEagerMax =
        static_cast<size_t>(std::max<int64_t>(0, params::getInt("LOOM_SHM_SEND_EAGER_MAX")));
  E.sendEagerMax = std::max(E.sendEagerMax, L.eagerMax);
  setDeviceLimits(&L, true);
  dev::setCompletion(engine::onIpcDone);
  E.chunk = static_cast<size_t>(std::max<int64_t>(64, params::getInt("LOOM_SHM_PIPELINE_CHUNK")));
  E.ntMin = static_cast<size_t>(std::max<int64_t>(0, params::getInt("LOOM_SHM_NT_MIN")));
  E.ntMode = parseNt(params::getString("LOOM_SHM_NT"));
  E.choice.assign(E.ntMode == NtMode::kAuto ? job.proc->size : 0, StreamChoice{});

  int remote = -1;  // some rank on another node
  for (int r = 0; r < job.proc->size && remote < 0; ++r)
    if (job.nodeOfRank[r] != job.proc->nodeId) remote = r;
  if (remote >= 0) {
#if LOOM_HAVE_OFI
    ofi::Config oc;
    oc.myJobRank = E.me;
    oc.jobSize = job.proc->size;
    oc.nodeId = job.proc->nodeId;
    oc.nodeOfRank = job.nodeOfRank;
    oc.nodeNames = job.proc->nodeNames;
    oc.hasLocalPeers = job.proc->localPeers.size() > 1;
    oc.boot = job.boot;
    LOOM_TRY(ofi::setup(oc));
    E.ofi = ofi::transport();
#else
    return errorf(MPI_ERR_UNSUPPORTED_OPERATION,
                  "rank %d is on another node, and this Loom was built without libfabric "
                  "(LOOM_WITH_OFI=OFF, or libfabric-dev was missing), so it cannot reach other "
                  "nodes",
                  remote);
#endif
  }

  shm::Config cfg;
  cfg.nspace = job.proc->nspace;
  cfg.nodeId = job.proc->nodeId;
  cfg.boot = job.boot;
  cfg.localPeers = job.proc->localPeers;
  cfg.myJobRank = E.me;
  cfg.ringBytes = static_cast<size_t>(params::getInt("LOOM_SHM_RING_BYTES"));
  std::string cma = params::getString("LOOM_SHM_CMA");
  bool b = false;
  cfg.cmaMode = (cma == "auto" || !params::parseBool(cma, &b)) ? -1 : (b ? 1 : 0);
  LOOM_TRY(shm::setup(cfg));
  tunePublish();
  return Status::ok();
}

Status connect() {
  LOOM_TRY(shm::connect());
  E.shm = shm::active() ? shm::transport() : nullptr;
  E.shmLim->get = shm::cmaWorks();
  E.shmLim->maxPayload = E.shm ? E.shm->maxPayload() : (size_t{1} << 62);
#if LOOM_HAVE_OFI
  if (E.ofi) LOOM_TRY(ofi::connect());
#endif
  E.foldPiece = E.chunk;
  for (int j = 0; j < static_cast<int>(E.route.size()); ++j) {
    if (j == E.me) continue;
    E.route[j] = E.shm && shm::reaches(j) ? E.shm : E.ofi;
  }
  for (const Transport* t : {E.shm, E.ofi})
    if (t) E.foldPiece = std::min(E.foldPiece, t->maxPayload());
  tuneAgree();
  progress::add(engine::poll, nullptr);
  E.ready = true;
  log::debug("p2p", "%s", describe().c_str());
  return Status::ok();
}

const Transport* detail::routeTo(int job) {
  return E.ready && job >= 0 && job < static_cast<int>(E.route.size()) ? E.route[job] : nullptr;
}
const Transport* detail::network() {
  return E.ready ? E.ofi : nullptr;
}

bool drained() {
  if (!E.busy.empty() || dev::gPending) return false;
#if LOOM_HAVE_OFI
  if (E.ofi && !ofi::idle()) return false;
#endif
  return true;
}

Status finalize() {
  progress::remove(engine::poll, nullptr);
  dev::finalize();
  shm::finalize();
#if LOOM_HAVE_OFI
  if (E.ofi) ofi::finalize();
#endif
  E.shm = E.ofi = nullptr;
  E.ready = false;
  return Status::ok();
}

std::string describe() {
  std::string out = describeLimits("shm", *E.shmLim, E.chunk);
  char buf[128];
  std::snprintf(buf, sizeof buf, "; non-temporal copies %s from %zu B",
                E.ntMode == NtMode::kAuto     ? "by measurement"
                : E.ntMode == NtMode::kAlways ? "always"
                                              : "never",
                E.ntMin);
  out += buf;
  if (E.ofi) out += "; " + describeLimits("ofi", *E.ofi->limits, E.chunk);
  if (device::active()) out += "; " + describeDeviceLimits(*E.shmLim);
  return out;
}

std::string describeNetwork() {
#if LOOM_HAVE_OFI
  return "  libfabric:   built (loaded only by jobs that span nodes); providers "
         "(LOOM_OFI_PROVIDER=auto tries them in this order):\n" +
         ofi::describeProviders();
#else
  return "  libfabric:   not built (LOOM_WITH_OFI=OFF or libfabric-dev missing): jobs cannot "
         "span nodes\n";
#endif
}

}  // namespace loom::p2p
