#include "cleanup.h"

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace loom::launcher {

bool makeJobTmpDir(std::string* path, std::string* error) {
  const char* root = std::getenv("TMPDIR");
  if (!root || !*root) root = "/tmp";
  std::string templ = std::string(root) + "/loomrun." + std::to_string(::getpid()) + ".XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {  // mkdtemp creates it with mode 0700
    *error = "cannot create a temporary directory under " + std::string(root) + ": " +
             std::strerror(errno);
    return false;
  }
  *path = buf.data();
  return true;
}

namespace {

int removeEntry(const char* p, const struct stat*, int type, struct FTW*) {
  if (type == FTW_DP)
    ::rmdir(p);
  else
    ::unlink(p);
  return 0;  // keep going whatever failed
}

}  // namespace

void removeTree(const std::string& path) {
  if (path.empty()) return;
  ::nftw(path.c_str(), removeEntry, 16, FTW_DEPTH | FTW_PHYS);
}

int unlinkJobSegments(const std::string& nspace) {
  const std::string prefix = "loom-" + nspace + "-";
  DIR* dir = ::opendir("/dev/shm");
  if (!dir) return 0;
  int removed = 0;
  while (struct dirent* e = ::readdir(dir)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) != 0) continue;
    if (::unlinkat(::dirfd(dir), e->d_name, 0) == 0) ++removed;
  }
  ::closedir(dir);
  return removed;
}

}  // namespace loom::launcher
