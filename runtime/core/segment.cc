#include "core/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/log.h"
#include "core/params.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434  // the same number on every architecture
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

namespace loom::segment {
namespace {

// Decided once per process. A memfd needs the peers to reach our
// descriptors: not possible when this process is not dumpable (a setuid
// program; /proc/<pid>/fd and pidfd_getfd then need CAP_SYS_PTRACE).
bool useMemfd() {
  static const bool v = [] {
    const std::string mode = params::getString("LOOM_SHM_SEGMENT");
    if (mode == "name") return false;
    if (mode != "auto")
      log::warn("LOOM_SHM_SEGMENT=%s is not auto or name; using auto", mode.c_str());
    int fd = memfd_create("loom-probe", MFD_CLOEXEC);
    if (fd < 0) {
      log::debug("p2p", "memfd_create: %s; shared segments are named in /dev/shm",
                 std::strerror(errno));
      return false;
    }
    close(fd);
    if (prctl(PR_GET_DUMPABLE) != 1) {
      log::debug("p2p", "not dumpable: shared segments are named in /dev/shm");
      return false;
    }
    return true;
  }();
  return v;
}

Status mapFd(int fd, size_t bytes, Segment* seg, const char* what) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    return errorf(MPI_ERR_NO_MEM, "mmap of %zu bytes (%s): %s", bytes, what, std::strerror(errno));
  seg->base = p;
  seg->bytes = bytes;
  return Status::ok();
}

Status createMemfd(size_t bytes, Segment* seg, Handle* handle) {
  // Sealed at its size: no rank can shrink it under the others (SIGBUS).
  int fd = memfd_create("loom-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return errorf(MPI_ERR_NO_MEM, "memfd_create: %s", std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int e = errno;
    close(fd);
    return errorf(MPI_ERR_NO_MEM, "ftruncate(memfd, %zu): %s", bytes, std::strerror(e));
  }
  (void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  Status st = mapFd(fd, bytes, seg, "memfd");
  if (!st.isOk()) {
    close(fd);
    return st;
  }
  seg->fd = fd;  // kept for the peers until release()
  handle->pid = static_cast<int32_t>(getpid());
  handle->fd = fd;
  return Status::ok();
}

Status createNamed(const std::string& name, size_t bytes, Segment* seg, Handle* handle) {
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return errorf(MPI_ERR_NO_MEM, "shm_open(%s): %s", name.c_str(), std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int e = errno;
    close(fd);
    shm_unlink(name.c_str());
    return errorf(MPI_ERR_NO_MEM, "ftruncate(%s, %zu): %s", name.c_str(), bytes, std::strerror(e));
  }
  Status st = mapFd(fd, bytes, seg, name.c_str());
  close(fd);
  if (!st.isOk()) {
    shm_unlink(name.c_str());
    return st;
  }
  seg->name = name;
  handle->pid = static_cast<int32_t>(getpid());
  handle->fd = -1;
  return Status::ok();
}

// A duplicate of descriptor `fd` of process `pid`, or -1 (*why says why).
int takeFd(int pid, int fd, std::string* why) {
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    // The new descriptor is close-on-exec.
    int got = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
    int e = errno;
    close(pidfd);
    if (got >= 0) return got;
    *why = std::string("pidfd_getfd: ") + std::strerror(e);
  } else {
    *why = std::string("pidfd_open: ") + std::strerror(errno);
  }
  // Reopening the memfd through /proc needs only "read" access to the
  // creator, which Yama does not restrict.
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  int got = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (got >= 0) {
    log::debug("p2p", "%s; took the segment through %s", why->c_str(), path.c_str());
    return got;
  }
  *why += "; open(" + path + "): " + std::strerror(errno);
  return -1;
}

}  // namespace

Status create(const std::string& name, size_t bytes, Segment* seg, Handle* handle) {
  *seg = Segment();
  return useMemfd() ? createMemfd(bytes, seg, handle) : createNamed(name, bytes, seg, handle);
}

Status attach(const std::string& name, size_t bytes, const Handle& handle, Segment* seg) {
  *seg = Segment();
  int fd;
  std::string what;
  if (handle.fd >= 0) {
    std::string why;
    fd = takeFd(handle.pid, handle.fd, &why);
    if (fd < 0)
      return errorf(MPI_ERR_INTERN, "cannot take the shared segment of pid %d (%s); "
                    "LOOM_SHM_SEGMENT=name shares segments by name instead",
                    static_cast<int>(handle.pid), why.c_str());
    what = "memfd of pid " + std::to_string(handle.pid);
  } else {
    fd = shm_open(name.c_str(), O_RDWR, 0600);
    if (fd < 0)
      return errorf(MPI_ERR_INTERN, "shm_open(%s): %s", name.c_str(), std::strerror(errno));
    what = name;
  }
  // A descriptor that is not the segment (never expected) must not be
  // mapped past its end: that would be SIGBUS later, not an error now.
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < bytes) {
    close(fd);
    return errorf(MPI_ERR_INTERN, "the shared segment (%s) is not %zu bytes long", what.c_str(),
                  bytes);
  }
  Status s = mapFd(fd, bytes, seg, what.c_str());
  close(fd);
  if (s.isOk() && handle.fd < 0) seg->name = name;
  return s;
}

void release(Segment* seg) {
  if (seg->fd >= 0) close(seg->fd);
  seg->fd = -1;
}

void unlinkName(Segment* seg) {
  if (!seg->name.empty()) shm_unlink(seg->name.c_str());
  seg->name.clear();
}

void unmap(Segment* seg) {
  release(seg);
  if (seg->base) munmap(seg->base, seg->bytes);
  seg->base = nullptr;
  seg->bytes = 0;
}

const char* modeName() { return useMemfd() ? "fd" : "name"; }

}  // namespace loom::segment
