#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/bootstrap.h"

// Without a PMIx server in the environment a process is a singleton and the
// key-value exchange still works (with itself).
TEST(Bootstrap, SingletonWithoutLauncher) {
  unsetenv("PMIX_NAMESPACE");
  unsetenv("PMIX_RANK");
  loom::ProcInfo info;
  loom::Bootstrap boot;
  ASSERT_TRUE(boot.init(&info).isOk());
  EXPECT_TRUE(info.singleton);
  EXPECT_FALSE(boot.active());
  EXPECT_EQ(info.rank, 0);
  EXPECT_EQ(info.size, 1);
  EXPECT_EQ(info.localSize, 1);
  EXPECT_EQ(info.localPeers, std::vector<int>{0});
  EXPECT_FALSE(info.hostname.empty());

  const std::byte blob[] = {std::byte{1}, std::byte{2}, std::byte{3}};
  ASSERT_TRUE(boot.put("addr", blob).isOk());
  ASSERT_TRUE(boot.fence().isOk());
  std::vector<std::byte> got;
  ASSERT_TRUE(boot.get(0, "addr", &got).isOk());
  EXPECT_EQ(got, std::vector<std::byte>(blob, blob + 3));
  EXPECT_FALSE(boot.get(0, "missing", &got).isOk());
  EXPECT_FALSE(boot.get(1, "addr", &got).isOk());
  ASSERT_TRUE(boot.finalize().isOk());
}

TEST(Bootstrap, NodeNameOverride) {
  unsetenv("PMIX_NAMESPACE");
  setenv("LOOM_NODE_NAME", "fakehost7", 1);
  loom::ProcInfo info;
  loom::Bootstrap boot;
  ASSERT_TRUE(boot.init(&info).isOk());
  EXPECT_EQ(info.hostname, "fakehost7");
  unsetenv("LOOM_NODE_NAME");
}
