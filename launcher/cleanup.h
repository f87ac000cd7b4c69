// Cleanup: the per-job scratch that must not outlive loomrun.
//
// The PMIx rendezvous directory is created here and removed on every exit
// path; the ranks' shared-memory segments (/dev/shm/loom-<nspace>-*) are
// unlinked as a safety net, since ranks that were killed cannot do it.
#pragma once

#include <string>

namespace loom::launcher {

// Creates $TMPDIR/loomrun.<pid>.XXXXXX (or under /tmp), mode 0700.
bool makeJobTmpDir(std::string* path, std::string* error);

// Removes a directory tree (no symlinks followed). Quiet on errors.
void removeTree(const std::string& path);

// Unlinks /dev/shm/loom-<nspace>-* ; returns how many were removed.
int unlinkJobSegments(const std::string& nspace);

}  // namespace loom::launcher
