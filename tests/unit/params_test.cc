#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

#include "core/params.h"

using namespace loom::params;

TEST(Params, ParseIntPlainAndSuffixed) {
  int64_t v = 0;
  EXPECT_TRUE(parseInt("0", &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(parseInt("-17", &v));
  EXPECT_EQ(v, -17);
  EXPECT_TRUE(parseInt("4k", &v));
  EXPECT_EQ(v, 4096);
  EXPECT_TRUE(parseInt("2M", &v));
  EXPECT_EQ(v, 2 << 20);
  EXPECT_TRUE(parseInt("1g", &v));
  EXPECT_EQ(v, 1 << 30);
  EXPECT_TRUE(parseInt("64kB", &v));
  EXPECT_EQ(v, 64 << 10);
}

TEST(Params, ParseIntRejectsGarbage) {
  int64_t v = 42;
  for (const char* bad : {"", "-", "k", "12x", "1.5", "4kk", " 3", "99999999999999999999"})
    EXPECT_FALSE(parseInt(bad, &v)) << bad;
  EXPECT_EQ(v, 42);
}

TEST(Params, ParseBool) {
  bool b = false;
  for (const char* t : {"1", "yes", "TRUE", "on"}) {
    EXPECT_TRUE(parseBool(t, &b)) << t;
    EXPECT_TRUE(b);
  }
  for (const char* f : {"0", "no", "False", "OFF"}) {
    EXPECT_TRUE(parseBool(f, &b)) << f;
    EXPECT_FALSE(b);
  }
  EXPECT_FALSE(parseBool("maybe", &b));
}

TEST(Params, EnvironmentOverridesDefault) {
  unsetenv("LOOM_KILL_GRACE_MS");
  EXPECT_EQ(getInt("LOOM_KILL_GRACE_MS"), 1000);
  setenv("LOOM_KILL_GRACE_MS", "250", 1);
  EXPECT_EQ(getInt("LOOM_KILL_GRACE_MS"), 250);
  setenv("LOOM_KILL_GRACE_MS", "soon", 1);  // malformed: warning + default
  EXPECT_EQ(getInt("LOOM_KILL_GRACE_MS"), 1000);
  unsetenv("LOOM_KILL_GRACE_MS");
}

TEST(Params, TableIsWellFormed) {
  ASSERT_FALSE(all().empty());
  for (const auto& p : all()) {
    EXPECT_EQ(std::string(p.name).rfind("LOOM_", 0), 0u) << p.name;
    EXPECT_NE(std::string(p.doc), "") << p.name;
    EXPECT_EQ(find(p.name), &p);
  }
  EXPECT_EQ(find("LOOM_NO_SUCH_THING"), nullptr);
}

// Every parameter is documented in loom(7).
TEST(Params, EveryParamHasItsManEntry) {
  std::ifstream in(LOOM_SOURCE_DIR "/man/man7/loom.7");
  ASSERT_TRUE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string page = ss.str();
  for (const auto& p : all())
    EXPECT_NE(page.find(std::string(".B ") + p.name), std::string::npos)
        << p.name << " is missing from man/man7/loom.7";
}
