#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/topology.h"

namespace {
// Loads a synthetic machine description instead of the real one.
loom::Topology loadSynthetic(const char* desc) {
  setenv("HWLOC_SYNTHETIC", desc, 1);
  loom::Topology t;
  loom::Status st = loom::loadTopology(&t);
  unsetenv("HWLOC_SYNTHETIC");
  EXPECT_TRUE(st.isOk()) << st.message();
  return t;
}
}  // namespace

TEST(Topology, RealMachineLoads) {
  loom::Topology t;
  ASSERT_TRUE(loom::loadTopology(&t).isOk());
  EXPECT_GE(t.cores, 1);
  EXPECT_GE(t.pus, t.cores);
  EXPECT_GE(t.usableCores, 1);
  EXPECT_LE(t.usableCores, t.cores);
}

TEST(Topology, SyntheticTwoPackagesFourNuma) {
  loom::Topology t = loadSynthetic("pack:2 numa:2 core:4 pu:1");
  EXPECT_EQ(t.packages, 2);
  EXPECT_EQ(t.numaNodes, 4);
  EXPECT_EQ(t.cores, 16);
  EXPECT_EQ(t.pus, 16);
  EXPECT_EQ(t.usableCores, 16);
  EXPECT_EQ(loom::describe(t), "2 packages, 4 NUMA nodes, 16 cores, 16 PUs (16 usable)");
}

TEST(Topology, SyntheticSmt) {
  loom::Topology t = loadSynthetic("pack:1 core:3 pu:2");
  EXPECT_EQ(t.packages, 1);
  EXPECT_EQ(t.numaNodes, 1);
  EXPECT_EQ(t.cores, 3);
  EXPECT_EQ(t.pus, 6);
}

TEST(Topology, HwlocVersionIsReported) {
  EXPECT_EQ(loom::hwlocVersion().rfind("API 2.", 0), 0u);
}
