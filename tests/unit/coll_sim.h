// A single-process simulator for collective schedules: builds one schedule
// per virtual rank (1..64 ranks, no processes, no transport) and runs them
// together, delivering each send to the matching receive in FIFO order per
// (source, destination). Every algorithm can thus be checked against a
// reference for many rank counts in milliseconds.
//
// Device buffers (the mock device): sends and receives of device memory go
// through device::packAny/unpackAny, and a round's device steps
// (Schedule::device) run either at its start, or, with deviceLate, only
// once its receives are all delivered: the latest the schedule contract
// allows. Sends are packed when posted (round start), so in the late mode
// a send that reads what its own round's device work writes, or a receive
// that overwrites what that work reads, gives wrong data, which the tests
// see: it checks the pipelines' ordering that the synchronous mock alone
// would hide.
//
//   SimComms comms(p);                          // p communicators, ranks 0..p-1
//   std::vector<std::unique_ptr<Schedule>> s = ...; // one per rank, built on comms[r]
//   ASSERT_TRUE(simulate(s)) ...;              // true when all complete
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "coll/op.h"
#include "coll/schedule.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/device.h"
#include "core/device_stage.h"

namespace loom::sim {

// p communicators of size p sharing a context id, one per virtual rank.
class SimComms {
 public:
  explicit SimComms(int p) {
    std::vector<int> ranks(p);
    for (int i = 0; i < p; ++i) ranks[i] = i;
    for (int i = 0; i < p; ++i)
      comms_.push_back(std::make_unique<Comm>(7, ranks, i, "sim" + std::to_string(p)));
  }
  Comm* operator[](int r) { return comms_[r].get(); }
  int size() const { return static_cast<int>(comms_.size()); }

 private:
  std::vector<std::unique_ptr<Comm>> comms_;
};

struct SimMsg {
  std::vector<std::byte> data;
};
struct SimRecv {
  const coll::Schedule::Step* step;
  bool done;
};

// Runs the schedules to completion. Returns an empty string on success,
// else what went wrong (a deadlock: rounds that can never complete, or a
// message whose size differs from its receive).
struct SimOptions {
  bool deviceLate = false;  // device steps at the end of their round
};

// A round's device steps, run on the schedule's stream and waited for.
inline std::string runDeviceSteps(coll::Schedule& s, const coll::Schedule::Round& round) {
  for (const auto& st : round.steps)
    if (st.kind == coll::Schedule::Step::Kind::kDevice) {
      Status e = s.runDevice(st);
      if (!e.isOk()) return "device step failed: " + e.message();
    }
  Status e = s.waitDevice();
  return e.isOk() ? "" : "device wait failed: " + e.message();
}

inline std::string simulate(std::vector<std::unique_ptr<coll::Schedule>>& scheds,
                            SimOptions opt = {}) {
  using Kind = coll::Schedule::Step::Kind;
  const int p = static_cast<int>(scheds.size());
  using Msg = SimMsg;
  std::map<std::pair<int, int>, std::deque<Msg>> wire;  // (src, dst) -> messages
  std::vector<size_t> round(p, 0);
  std::vector<bool> started(p, false);
  std::vector<std::vector<SimRecv>> recvs(p);
  for (;;) {
    bool progress = false, allDone = true;
    for (int r = 0; r < p; ++r) {
      const auto& rounds = scheds[r]->rounds();
      while (round[r] < rounds.size()) {
        const auto& steps = rounds[round[r]].steps;
        if (!started[r]) {
          started[r] = true;
          progress = true;
          recvs[r].clear();
          for (const auto& s : steps)
            if (s.kind == Kind::kLocal) s.fn();
          if (!opt.deviceLate) {
            std::string e = runDeviceSteps(*scheds[r], rounds[round[r]]);
            if (!e.empty()) return "rank " + std::to_string(r) + ": " + e;
          }
          for (const auto& s : steps) {
            if (s.kind == Kind::kSend) {
              Msg m;
              size_t n = s.type->packedSize(s.count);
              m.data.resize(n);
              if (n && device::isDevice(s.buf))
                (void)device::packAny(s.type, s.buf, s.count, m.data.data(), n);
              else if (n)
                s.type->pack(s.buf, s.count, 0, m.data.data(), n);
              wire[{r, s.peer}].push_back(std::move(m));
            } else if (s.kind == Kind::kRecv) {
              recvs[r].push_back({&s, false});
            }
          }
        }
        bool complete = true;
        for (auto& pr : recvs[r]) {
          if (pr.done) continue;
          auto& q = wire[{pr.step->peer, r}];
          if (q.empty()) {
            complete = false;
            continue;
          }
          Msg m = std::move(q.front());
          q.pop_front();
          size_t cap = pr.step->type->packedSize(pr.step->count);
          if (m.data.size() != cap)
            return "rank " + std::to_string(r) + " round " + std::to_string(round[r]) +
                   ": received " + std::to_string(m.data.size()) + " bytes from " +
                   std::to_string(pr.step->peer) + " into a receive of " + std::to_string(cap);
          if (cap && pr.step->op) {  // recvReduce: fold into the buffer
            // A contiguous type: its data bytes start at base + trueLb.
            std::vector<char> tmp(cap);
            char* base = tmp.data() - pr.step->type->trueLb();
            pr.step->type->unpack(base, pr.step->count, 0, m.data.data(), cap);
            if (pr.step->base)  // recvReduceFrom: buf = received op base
              coll::copyLike(pr.step->base, pr.step->buf, pr.step->count, pr.step->type);
            (void)coll::reduceLocal(base, pr.step->buf, pr.step->count, pr.step->type,
                                    pr.step->op);
          } else if (cap && device::isDevice(pr.step->buf)) {
            (void)device::unpackAny(pr.step->type, pr.step->buf, pr.step->count, m.data.data(),
                                    cap);
          } else if (cap) {
            pr.step->type->unpack(pr.step->buf, pr.step->count, 0, m.data.data(), cap);
          }
          pr.done = true;
          progress = true;
        }
        if (!complete) break;
        if (opt.deviceLate) {
          std::string e = runDeviceSteps(*scheds[r], rounds[round[r]]);
          if (!e.empty()) return "rank " + std::to_string(r) + ": " + e;
        }
        ++round[r];
        started[r] = false;
      }
      if (round[r] < rounds.size()) allDone = false;
    }
    if (allDone) break;
    if (!progress) {
      std::string who;
      for (int r = 0; r < p; ++r)
        if (round[r] < scheds[r]->rounds().size())
          who += " rank " + std::to_string(r) + "@round " + std::to_string(round[r]);
      return "deadlock:" + who;
    }
  }
  for (auto& [key, q] : wire)
    if (!q.empty())
      return "message from " + std::to_string(key.first) + " to " + std::to_string(key.second) +
             " never received";
  return "";
}

}  // namespace loom::sim
