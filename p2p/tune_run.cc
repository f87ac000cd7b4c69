// Calibration of the shared-memory protocol thresholds (core/tune.h,
// docs/tuning.md): which sizes CMA's single copy moves faster than the eager
// copy or the copy pipeline, on this machine.
//
// Local rank 0 of a node (the leader) decides in setup(), before the
// bootstrap fence, whether this job measures: no valid cache in a writable
// place (or LOOM_TUNE=refresh), two ranks with a core each. It publishes the
// decision and its own window in the shared segment's header (tunePublish),
// which every local rank reads after connecting (tuneAgree): local rank 1
// always agrees, and the collective rules see one window per node.
//
// Only a job long enough measures (LOOM_TUNE_MIN_JOB_MS, 200 ms; refresh:
// any): the leader looks at how long the job ran just before the final
// barrier (tuneBeforeBarrier) and withdraws its decision in the header's
// first word when it was shorter; local rank 1 reads that word again after
// the barrier. So a hello job costs nothing, and the job that measures
// spends under 1% of its time on it.
//
// The measurement runs in MPI_Finalize, after the final barrier: the leader
// sends each size by each protocol (its own limits forced for the send),
// local rank 1 receives and answers with an empty message; the leader times
// the round, keeps the fastest of a few repeats, decides, writes the cache
// and tells local rank 1 the result. The jobs after it read the cache. Cost
// on the 2-core Intel Xeon VM: 1.3-2.2 ms (quick, once per host; ~0.9 ms of
// it maps the pair's rings), ~20 ms (refresh, loom-info --tune).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <span>
#include <vector>

#include "core/comm.h"
#include "core/datatype.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "core/request.h"
#include "core/tune.h"
#include "p2p/p2p.h"
#include "p2p/protocol.h"
#include "p2p/shm/shm_transport.h"

namespace loom::p2p {

namespace {

constexpr int kTagTune = 0x7c0020;

struct TuneState {
  tune::Resolved resolved;
  int leader = -1, peer = -1;  // job ranks: local ranks 0 and 1
  bool leaderSaysMeasure = false;  // on local rank 1: what the leader said
  size_t nodeMin = tune::kNoMax, nodeMax = tune::kNoMax;  // the leader's window
  tune::Mode mode = tune::Mode::kAuto;
  double initUs = 0;  // when setup ran (MPI_Init)
  int me = -1;        // this rank's job rank
};
TuneState gT;

Datatype* bytes() {
  static Datatype* t = predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_BYTE));
  return t;
}

Status finish(Request* r) {
  progress::waitUntil([r] { return r->complete; });
  int err = r->statusError;
  Request::release(r);
  if (err != MPI_SUCCESS) return errorf(err, "calibration message failed");
  return Status::ok();
}

Status sendTo(const void* buf, size_t n, int dest, Comm* c) {
  Request* r = nullptr;
  LOOM_TRY(isend(buf, static_cast<int64_t>(n), bytes(), dest, kTagTune, c, SendMode::kStandard,
                 Channel::kColl, &r));
  return finish(r);
}

Status recvFrom(void* buf, size_t n, int src, Comm* c) {
  Request* r = nullptr;
  LOOM_TRY(irecv(buf, static_cast<int64_t>(n), bytes(), src, kTagTune, c, Channel::kColl, &r));
  return finish(r);
}

double nowUs() {
  using namespace std::chrono;
  return duration<double, std::micro>(steady_clock::now().time_since_epoch()).count();
}

std::string utcNow() {
  char buf[32];
  std::time_t t = std::time(nullptr);
  struct tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

void apply(ProtocolLimits* L, const tune::Resolved& r) {
  L->getMin = r.values.cmaMin;
  L->getMax = r.values.cmaMax;
  // Only a measured window reaches below the eager limit.
  L->getBelowEager = r.cmaMin == tune::Source::kMeasured || r.cmaMin == tune::Source::kCached;
}

struct Wire {
  uint64_t cmaMin, cmaMax;
  double rttUs;
  uint32_t ok;
};

// The leader's side: times every size by both protocols.
Status measure(Comm* world, bool full, std::vector<tune::Sample>* out, double* rttUs) {
  ProtocolLimits& L = *shm::limits();
  const ProtocolLimits saved = L;
  std::vector<size_t> sizes =
      full ? std::vector<size_t>{16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10,
                                 1 << 20, 2 << 20, 4 << 20}
           : std::vector<size_t>{16 << 10, 64 << 10, 256 << 10};
  // After one warm-up round (pages, rings, the pipeline's NT choice): the
  // full run repeats every size; the quick one repeats only the sizes whose
  // first result lies near the margin.
  const int reps = full ? 7 : 3;
  std::vector<char> buf(sizes.back(), 1);
  char ack = 0;
  // Round trip of an 8-byte message.
  std::vector<double> rtt;
  for (int i = 0; i < (full ? 200 : 16); ++i) {
    double t0 = nowUs();
    LOOM_TRY(sendTo(buf.data(), 8, gT.peer, world));
    LOOM_TRY(recvFrom(&ack, 0, gT.peer, world));
    if (i >= 4) rtt.push_back(nowUs() - t0);
  }
  std::sort(rtt.begin(), rtt.end());
  *rttUs = rtt[rtt.size() / 2];
  out->assign(sizes.size(), {});
  for (size_t i = 0; i < sizes.size(); ++i) {
    (*out)[i].bytes = sizes[i];
    (*out)[i].getUs = (*out)[i].otherUs = 1e300;
  }
  Status st = Status::ok();
  for (int rep = 0; rep <= reps && st.isOk(); ++rep) {
    for (size_t i = 0; i < sizes.size() && st.isOk(); ++i) {
      const double ratio = (*out)[i].getUs / (*out)[i].otherUs;
      if (!full && rep >= 2 && (ratio < 0.7 || ratio > 1.2)) continue;
      for (int viaGet = 0; viaGet < 2 && st.isOk(); ++viaGet) {
        L.rndv = RndvMode::kAuto;
        L.getMin = viaGet ? 0 : SIZE_MAX;
        L.getMax = SIZE_MAX;
        L.getBelowEager = viaGet;
        double t0 = nowUs();
        st = sendTo(buf.data(), sizes[i], gT.peer, world);
        if (st.isOk()) st = recvFrom(&ack, 0, gT.peer, world);
        double dt = nowUs() - t0 - *rttUs / 2;
        if (rep == 0) continue;  // warm-up: pages, rings, the NT choice
        double& slot = viaGet ? (*out)[i].getUs : (*out)[i].otherUs;
        slot = std::min(slot, std::max(dt, 0.01));
      }
    }
  }
  L = saved;
  return st;
}

}  // namespace

void tuneSetup(const JobInfo& job, bool oversubscribed, ProtocolLimits* L) {
  gT = TuneState{};
  gT.initUs = nowUs();
  gT.me = job.proc->rank;
  gT.mode = tune::mode();
  gT.resolved = tune::resolve(oversubscribed);
  apply(L, gT.resolved);
  const auto& lp = job.proc->localPeers;
  if (lp.size() < 2) return;
  gT.leader = lp[0];
  gT.peer = lp[1];
  // Whether the place can take the file is asked only of a job that would
  // measure (a valid cache costs no directory creation or access check).
  std::string why;
  if (job.proc->rank == gT.leader && tune::shouldCalibrate(gT.resolved, gT.mode, true)) {
    gT.leaderSaysMeasure = tune::writable(gT.resolved.path, &why);
    if (!gT.leaderSaysMeasure)
      log::debug("tune", "not measuring: %s; built-in defaults", why.c_str());
  }
}

void tuneBeforeBarrier() {
  if (gT.me != gT.leader || !gT.leaderSaysMeasure || gT.mode != tune::Mode::kAuto) return;
  if (!shm::active()) return;
  int64_t minMs = 200;
  (void)params::parseInt(params::getString("LOOM_TUNE_MIN_JOB_MS"), &minMs);
  const double ranMs = (nowUs() - gT.initUs) / 1e3;
  if (ranMs >= static_cast<double>(minMs)) return;
  // Local rank 1 sees the same word after the barrier (tuneCalibrate).
  uint64_t w[shm::kLeaderWords];
  if (!shm::leaderWords(w)) return;
  gT.leaderSaysMeasure = false;
  if (w[0] == 1) {
    w[0] = 0;
    shm::setLeaderWords(w);
    log::debug("tune", "not measuring: the job ran %.0f ms, under LOOM_TUNE_MIN_JOB_MS=%lld; a "
               "longer job will", ranMs, static_cast<long long>(minMs));
  }
}

void tunePublish() {
  const uint64_t w[shm::kLeaderWords] = {gT.leaderSaysMeasure ? 1u : 0u,
                                         gT.resolved.values.cmaMin, gT.resolved.values.cmaMax};
  shm::setLeaderWords(w);
}

void tuneAgree() {
  uint64_t w[shm::kLeaderWords];
  if (shm::leaderWords(w)) {
    gT.leaderSaysMeasure = w[0] == 1;
    gT.nodeMin = w[1];
    gT.nodeMax = w[2];
  } else {
    gT.nodeMin = gT.resolved.values.cmaMin;
    gT.nodeMax = gT.resolved.values.cmaMax;
  }
  if (gT.resolved.oversubscribed) gT.nodeMin = gT.nodeMax = tune::kNoMax;
}

void nodeCmaWindow(size_t* mn, size_t* mx) {
  *mn = gT.nodeMin;
  *mx = gT.nodeMax;
}

Status tuneCalibrate(Comm* world) {
  const int me = world->rank();
  if (gT.leader < 0 || (me != gT.leader && me != gT.peer)) return Status::ok();
  if (me == gT.peer && gT.leaderSaysMeasure && shm::active()) {
    // The leader may have withdrawn before the barrier (tuneBeforeBarrier).
    uint64_t w[shm::kLeaderWords];
    if (shm::leaderWords(w)) gT.leaderSaysMeasure = w[0] == 1;
  }
  if (!gT.leaderSaysMeasure || !shm::active()) return Status::ok();
  if (me == gT.peer) {
    // Receive what the leader sends, answer each with an empty message,
    // until its result arrives (a Wire message, tagged by its size).
    // Room for the largest size of either run, whatever this rank's own
    // LOOM_TUNE says; left untouched, so only the pages a message lands on
    // are ever faulted in.
    const size_t cap = size_t{4} << 20;
    std::unique_ptr<char[]> mem(new char[cap]);
    std::span<char> buf(mem.get(), cap);
    char none = 0;
    for (;;) {
      Request* r = nullptr;
      LOOM_TRY(irecv(buf.data(), static_cast<int64_t>(buf.size()), bytes(), gT.leader, kTagTune,
                     world, Channel::kColl, &r));
      progress::waitUntil([r] { return r->complete; });
      const int64_t n = r->bytes;
      const int err = r->statusError;
      Request::release(r);
      if (err != MPI_SUCCESS) return errorf(err, "calibration message failed");
      if (n == static_cast<int64_t>(sizeof(Wire)) + 1) {
        Wire w;
        std::memcpy(&w, buf.data(), sizeof w);
        if (w.ok) {
          tune::adopt(&gT.resolved, {w.cmaMin, w.cmaMax, w.rttUs});
          apply(shm::limits(), gT.resolved);
        }
        return Status::ok();
      }
      LOOM_TRY(sendTo(&none, 0, gT.leader, world));
    }
  }
  const double t0 = nowUs();
  std::vector<tune::Sample> samples;
  double rtt = 0;
  Status st = measure(world, gT.mode == tune::Mode::kRefresh, &samples, &rtt);
  tune::Values v = tune::decide(samples);
  v.rttUs = rtt;
  const double cost = nowUs() - t0;
  Wire w{v.cmaMin, v.cmaMax, rtt, st.isOk()};
  std::vector<char> msg(sizeof w + 1);
  std::memcpy(msg.data(), &w, sizeof w);
  LOOM_TRY(sendTo(msg.data(), msg.size(), gT.peer, world));
  LOOM_TRY(st);
  if (log::enabled("tune"))
    for (const auto& s : samples)
      log::debug("tune", "%8s: CMA read %.2f us, %s %.2f us%s", tune::sizeText(s.bytes).c_str(),
                 s.getUs, s.bytes <= shm::limits()->eagerMax ? "eager" : "pipeline", s.otherUs,
                 s.getUs < tune::kMargin * s.otherUs ? "  (CMA)" : "");
  tune::adopt(&gT.resolved, v);
  apply(shm::limits(), gT.resolved);
  tune::Record rec;
  rec.key = tune::hostKey();
  rec.values = v;
  rec.samples = samples;
  rec.costUs = cost;
  rec.when = utcNow();
  std::string why;
  const bool cached = tune::store(gT.resolved.path, rec, &why);
  if (cached) gT.resolved.state = tune::Load::kOk;
  log::debug("tune", "measured in %.0f us: CMA from %s to %s, 8-byte round trip %.2f us; %s%s",
             cost, tune::sizeText(v.cmaMin).c_str(), tune::sizeText(v.cmaMax).c_str(), rtt,
             cached ? "cached in " : "not cached: ",
             cached ? gT.resolved.path.c_str() : (why + "; this job uses it, the next measures "
                                                  "again").c_str());
  return Status::ok();
}

}  // namespace loom::p2p
