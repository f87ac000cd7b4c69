#include <gtest/gtest.h>

#include "coll/algorithms.h"
#include "coll_sim.h"

using loom::coll::CollArgs;
using loom::coll::Schedule;

// The dissemination barrier completes for every rank count, and no rank
// can finish before every rank has started (its last round depends,
// transitively, on every other rank's first).
TEST(CollBarrier, DisseminationCompletesForAnyRankCount) {
  for (int p = 1; p <= 64; ++p) {
    loom::sim::SimComms comms(p);
    std::vector<std::unique_ptr<Schedule>> s;
    for (int r = 0; r < p; ++r) {
      s.push_back(std::make_unique<Schedule>(comms[r], 0));
      CollArgs a;
      a.comm = comms[r];
      ASSERT_TRUE(loom::coll::barrierDissemination(*s.back(), a).isOk());
    }
    EXPECT_EQ(loom::sim::simulate(s), "") << p << " ranks";
  }
}

TEST(CollBarrier, SimulatorDetectsDeadlock) {
  loom::sim::SimComms comms(2);
  std::vector<std::unique_ptr<Schedule>> s;
  auto* byte = loom::predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_BYTE));
  for (int r = 0; r < 2; ++r) {
    s.push_back(std::make_unique<Schedule>(comms[r], 0));
    s.back()->recv(nullptr, 0, byte, 1 - r);  // both receive first: deadlock
    s.back()->endRound();
    s.back()->send(nullptr, 0, byte, 1 - r);
  }
  EXPECT_NE(loom::sim::simulate(s).find("deadlock"), std::string::npos);
}
