// loomrun's command line: every option, the forms mpirun users type, and the
// inputs that must be refused (loomrun exits 2 on kError).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "options.h"

namespace loom::launcher {
namespace {

struct Parsed {
  ParseResult result;
  Options opts;
  std::string error;
};

Parsed parse(std::vector<std::string> args) {
  args.insert(args.begin(), "loomrun");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  Parsed p;
  p.result = parseOptions(static_cast<int>(argv.size()), argv.data(), &p.opts, &p.error);
  return p;
}

void expectError(std::vector<std::string> args, const std::string& fragment) {
  Parsed p = parse(args);
  EXPECT_EQ(p.result, ParseResult::kError) << "args[0]=" << (args.empty() ? "" : args[0]);
  EXPECT_NE(p.error.find(fragment), std::string::npos) << "error: " << p.error;
}

TEST(LauncherOptions, Defaults) {
  Parsed p = parse({"./app"});
  ASSERT_EQ(p.result, ParseResult::kRun);
  EXPECT_EQ(p.opts.ranks, 1);
  EXPECT_FALSE(p.opts.ranksGiven);
  EXPECT_FALSE(p.opts.tagOutput);
  EXPECT_EQ(p.opts.timeoutSec, 0);
  EXPECT_EQ(p.opts.bindTo, BindTo::kAuto);
  EXPECT_FALSE(p.opts.reportBindings);
  EXPECT_TRUE(p.opts.exports.empty());
  EXPECT_EQ(p.opts.program, std::vector<std::string>{"./app"});
}

TEST(LauncherOptions, RankCountForms) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"-n", "4", "a"}, {"-np", "4", "a"}, {"--np", "4", "a"}, {"--n", "4", "a"},
           {"-n=4", "a"}, {"--np=4", "a"}, {"-n", "2", "-n", "4", "a"}}) {
    Parsed p = parse(args);
    ASSERT_EQ(p.result, ParseResult::kRun) << args[0] << ": " << p.error;
    EXPECT_EQ(p.opts.ranks, 4) << args[0];
    EXPECT_TRUE(p.opts.ranksGiven);
  }
  EXPECT_EQ(parse({"-n", "100000", "a"}).opts.ranks, 100000);
}

TEST(LauncherOptions, BadRankCounts) {
  expectError({"-n", "0", "a"}, "rank count");
  expectError({"-n", "-1", "a"}, "rank count");
  expectError({"-n", "+3", "a"}, "rank count");
  expectError({"-n", "abc", "a"}, "'abc'");
  expectError({"-n", "3x", "a"}, "rank count");
  expectError({"-n", "", "a"}, "rank count");
  expectError({"-n", "100001", "a"}, "rank count");
  expectError({"-n", "99999999999999999999", "a"}, "rank count");
  expectError({"-n"}, "needs a value");
}

TEST(LauncherOptions, Nodes) {
  Parsed p = parse({"-n", "5", "--nodes", "2", "a"});
  ASSERT_EQ(p.result, ParseResult::kRun) << p.error;
  EXPECT_EQ(p.opts.nodes, 2);
  EXPECT_EQ(parse({"a"}).opts.nodes, 1);
  EXPECT_EQ(parse({"-n", "3", "--nodes=3", "a"}).opts.nodes, 3);
  expectError({"-n", "2", "--nodes", "3", "a"}, "more than the 2 ranks");
  expectError({"--nodes", "0", "a"}, "node count");
  expectError({"--nodes", "x", "a"}, "node count");
  expectError({"--nodes"}, "needs a value");
}

TEST(LauncherOptions, PlaceBlockwise) {
  using V = std::vector<std::vector<int>>;
  EXPECT_EQ(placeBlockwise(5, 2), (V{{0, 1, 2}, {3, 4}}));
  EXPECT_EQ(placeBlockwise(4, 2), (V{{0, 1}, {2, 3}}));
  EXPECT_EQ(placeBlockwise(8, 3), (V{{0, 1, 2}, {3, 4, 5}, {6, 7}}));
  EXPECT_EQ(placeBlockwise(3, 3), (V{{0}, {1}, {2}}));
  EXPECT_EQ(placeBlockwise(2, 1), (V{{0, 1}}));
}

TEST(LauncherOptions, Exports) {
  Parsed p = parse({"-x", "A=1", "-x", "B", "--x=C=x=y", "-x", "D=", "prog"});
  ASSERT_EQ(p.result, ParseResult::kRun) << p.error;
  ASSERT_EQ(p.opts.exports.size(), 4u);
  EXPECT_EQ(p.opts.exports[0].name, "A");
  EXPECT_EQ(p.opts.exports[0].value, "1");
  EXPECT_EQ(p.opts.exports[1].name, "B");
  EXPECT_FALSE(p.opts.exports[1].value.has_value());
  EXPECT_EQ(p.opts.exports[2].name, "C");
  EXPECT_EQ(p.opts.exports[2].value, "x=y");
  EXPECT_EQ(p.opts.exports[3].value, "");
  expectError({"-x", "1A=2", "prog"}, "VAR");
  expectError({"-x", "=2", "prog"}, "VAR");
  expectError({"-x", "A-B", "prog"}, "VAR");
  expectError({"-x"}, "needs a value");
}

TEST(LauncherOptions, ResolveExports) {
  std::map<std::string, std::string> env = {{"B", "from-env"}};
  auto getenvFn = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  std::vector<ExportVar> ex = {{"A", "1"}, {"B", std::nullopt}, {"MISSING", std::nullopt},
                               {"E", ""}};
  std::vector<std::string> missing;
  auto out = resolveExports(ex, getenvFn, &missing);
  EXPECT_EQ(out, (std::vector<std::string>{"A=1", "B=from-env", "E="}));
  EXPECT_EQ(missing, std::vector<std::string>{"MISSING"});
}

TEST(LauncherOptions, Flags) {
  Parsed p = parse({"--tag-output", "--report-bindings", "--oversubscribe", "prog"});
  ASSERT_EQ(p.result, ParseResult::kRun) << p.error;
  EXPECT_TRUE(p.opts.tagOutput);
  EXPECT_TRUE(p.opts.reportBindings);
  EXPECT_TRUE(p.opts.oversubscribe);
  // Open MPI's single-dash spelling of long options.
  p = parse({"-tag-output", "-report-bindings", "-oversubscribe", "prog"});
  ASSERT_EQ(p.result, ParseResult::kRun) << p.error;
  EXPECT_TRUE(p.opts.tagOutput);
  EXPECT_TRUE(p.opts.reportBindings);
  expectError({"--tag-output=1", "prog"}, "takes no value");
}

TEST(LauncherOptions, Timeout) {
  EXPECT_EQ(parse({"--timeout", "5", "p"}).opts.timeoutSec, 5);
  EXPECT_EQ(parse({"--timeout=0.5", "p"}).opts.timeoutSec, 0.5);
  EXPECT_EQ(parse({"-timeout", "0", "p"}).opts.timeoutSec, 0);  // 0: none
  expectError({"--timeout", "-1", "p"}, "seconds");
  expectError({"--timeout", "soon", "p"}, "seconds");
  expectError({"--timeout", "5s", "p"}, "seconds");
  expectError({"--timeout", "inf", "p"}, "seconds");
  expectError({"--timeout", "nan", "p"}, "seconds");
  expectError({"--timeout"}, "needs a value");
}

TEST(LauncherOptions, BindTo) {
  EXPECT_EQ(parse({"--bind-to", "core", "p"}).opts.bindTo, BindTo::kCore);
  EXPECT_EQ(parse({"--bind-to=none", "p"}).opts.bindTo, BindTo::kNone);
  EXPECT_EQ(parse({"-bind-to", "none", "p"}).opts.bindTo, BindTo::kNone);
  expectError({"--bind-to", "socket", "p"}, "'core' or 'none'");
  expectError({"--bind-to", "", "p"}, "'core' or 'none'");
}

TEST(LauncherOptions, HelpAndVersion) {
  EXPECT_EQ(parse({"--help"}).result, ParseResult::kHelp);
  EXPECT_EQ(parse({"-h"}).result, ParseResult::kHelp);
  EXPECT_EQ(parse({"-n", "2", "--help", "prog"}).result, ParseResult::kHelp);
  EXPECT_EQ(parse({"--version"}).result, ParseResult::kVersion);
  EXPECT_EQ(parse({"-V"}).result, ParseResult::kVersion);
  // After the program, --help belongs to the program.
  Parsed p = parse({"prog", "--help"});
  ASSERT_EQ(p.result, ParseResult::kRun);
  EXPECT_EQ(p.opts.program, (std::vector<std::string>{"prog", "--help"}));
  EXPECT_NE(usageText().find("--bind-to"), std::string::npos);
}

TEST(LauncherOptions, ParsingStopsAtTheProgram) {
  Parsed p = parse({"-n", "2", "./app", "-n", "5", "--bogus", "-x", "Y"});
  ASSERT_EQ(p.result, ParseResult::kRun) << p.error;
  EXPECT_EQ(p.opts.ranks, 2);
  EXPECT_TRUE(p.opts.exports.empty());
  EXPECT_EQ(p.opts.program,
            (std::vector<std::string>{"./app", "-n", "5", "--bogus", "-x", "Y"}));
  // "--" ends the options even before a name starting with '-'.
  p = parse({"-n", "3", "--", "-weird-name", "arg"});
  ASSERT_EQ(p.result, ParseResult::kRun) << p.error;
  EXPECT_EQ(p.opts.program, (std::vector<std::string>{"-weird-name", "arg"}));
  // A lone "-" is a program name, not an option.
  EXPECT_EQ(parse({"-"}).opts.program, std::vector<std::string>{"-"});
}

TEST(LauncherOptions, BadInput) {
  expectError({}, "no program");
  expectError({"-n", "2"}, "no program");
  expectError({"-n", "2", "--"}, "no program");
  expectError({"--bogus", "prog"}, "unknown option '--bogus'");
  expectError({"-q", "prog"}, "unknown option '-q'");
  EXPECT_EQ(parse({"--", "--"}).result, ParseResult::kRun);
  expectError({"---n", "2", "prog"}, "unknown option");
  expectError({"--=3", "prog"}, "unknown option");
}

class FindExecutable : public ::testing::Test {
 protected:
  void SetUp() override {
    char templ[] = "/tmp/loom-findexe.XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir_ = templ;
    mkdir((dir_ + "/a").c_str(), 0700);
    mkdir((dir_ + "/b").c_str(), 0700);
    mkdir((dir_ + "/b/sub").c_str(), 0700);
    write(dir_ + "/a/tool", 0644);  // found first, not executable
    write(dir_ + "/b/tool", 0755);
    write(dir_ + "/a/only", 0644);
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
  }
  static void write(const std::string& path, mode_t mode) {
    std::ofstream(path) << "#!/bin/sh\n";
    chmod(path.c_str(), mode);
  }
  std::string dir_;
};

TEST_F(FindExecutable, SearchesPathLikeExecvp) {
  std::string path = dir_ + "/a:" + dir_ + "/b";
  std::string resolved;
  EXPECT_EQ(findExecutable("tool", path.c_str(), &resolved), 0);
  EXPECT_EQ(resolved, dir_ + "/b/tool");  // skips the non-executable match
  EXPECT_EQ(findExecutable("only", path.c_str(), &resolved), EACCES);
  EXPECT_EQ(findExecutable("none", path.c_str(), &resolved), ENOENT);
  EXPECT_EQ(findExecutable("sub", path.c_str(), &resolved), EACCES);  // a directory
  EXPECT_EQ(findExecutable("", path.c_str(), &resolved), ENOENT);
}

TEST_F(FindExecutable, PathsWithSlashAreTakenAsIs) {
  std::string resolved;
  EXPECT_EQ(findExecutable(dir_ + "/b/tool", "", &resolved), 0);
  EXPECT_EQ(resolved, dir_ + "/b/tool");
  EXPECT_EQ(findExecutable(dir_ + "/a/tool", "", &resolved), EACCES);
  EXPECT_EQ(findExecutable(dir_ + "/nope", "", &resolved), ENOENT);
  EXPECT_EQ(findExecutable(dir_ + "/b", "", &resolved), EACCES);
}

TEST_F(FindExecutable, EmptyPathEntryMeansCurrentDirectory) {
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(chdir((dir_ + "/b").c_str()), 0);
  std::string resolved;
  EXPECT_EQ(findExecutable("tool", "/nonexistent::", &resolved), 0);
  EXPECT_EQ(resolved, "./tool");
  ASSERT_EQ(chdir(cwd), 0);
}

// Oversubscribed ranks get glibc's restartable sequences switched off,
// added to what GLIBC_TUNABLES already says; a user who set that tunable
// keeps it.
TEST(LauncherOptions, TunablesWithoutRseq) {
  EXPECT_EQ(tunablesWithoutRseq(nullptr), "glibc.pthread.rseq=0");
  EXPECT_EQ(tunablesWithoutRseq(""), "glibc.pthread.rseq=0");
  EXPECT_EQ(tunablesWithoutRseq("glibc.malloc.arena_max=2"),
            "glibc.malloc.arena_max=2:glibc.pthread.rseq=0");
  EXPECT_EQ(tunablesWithoutRseq("glibc.pthread.rseq=1"), std::nullopt);
  EXPECT_EQ(tunablesWithoutRseq("glibc.malloc.check=3:glibc.pthread.rseq=0"), std::nullopt);
}

TEST(LauncherOptions, PrefixOfExe) {
  EXPECT_EQ(prefixOfExe("/opt/loom/bin/loomrun"), "/opt/loom");
  EXPECT_EQ(prefixOfExe("/work/build/bin/loomrun"), "/work/build");
  EXPECT_EQ(prefixOfExe("/bin/loomrun"), "/");
  EXPECT_EQ(prefixOfExe("/usr/local/libexec/loomrun"), std::nullopt);
  EXPECT_EQ(prefixOfExe("loomrun"), std::nullopt);
}

}  // namespace
}  // namespace loom::launcher
