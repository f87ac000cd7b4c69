#include "core/cma.h"

#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>

#include "core/params.h"

namespace loom::cma {

bool read(int pid, const void* remote, void* local, size_t bytes) {
  auto* dst = static_cast<char*>(local);
  auto src = reinterpret_cast<uintptr_t>(remote);
  size_t done = 0;
  while (done < bytes) {
    iovec l{dst + done, bytes - done};
    iovec r{reinterpret_cast<void*>(src + done), bytes - done};
    ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

namespace {

// Advances an iovec array past `n` bytes (from piece *i, offset *off).
void advance(const iovec* v, size_t count, size_t* i, size_t* off, size_t n) {
  while (n > 0 && *i < count) {
    size_t left = v[*i].iov_len - *off;
    if (n < left) {
      *off += n;
      return;
    }
    n -= left;
    ++*i;
    *off = 0;
  }
  while (*i < count && v[*i].iov_len == 0) ++*i;
}

// Up to kBatch pieces of `v` from (i, off) into `out`.
constexpr size_t kBatch = 512;  // below IOV_MAX (1024)
size_t window(const iovec* v, size_t count, size_t i, size_t off, iovec* out) {
  size_t n = 0;
  for (; i < count && n < kBatch; ++i, off = 0) {
    if (v[i].iov_len == off) continue;
    out[n].iov_base = static_cast<char*>(v[i].iov_base) + off;
    out[n].iov_len = v[i].iov_len - off;
    ++n;
  }
  return n;
}

bool transfer(bool write, int pid, const iovec* local, size_t nlocal, const iovec* remote,
              size_t nremote) {
  size_t li = 0, lo = 0, ri = 0, ro = 0;
  advance(local, nlocal, &li, &lo, 0);
  advance(remote, nremote, &ri, &ro, 0);
  iovec l[kBatch], r[kBatch];
  while (li < nlocal && ri < nremote) {
    size_t nl = window(local, nlocal, li, lo, l);
    size_t nr = window(remote, nremote, ri, ro, r);
    ssize_t n = write ? process_vm_writev(pid, l, nl, r, nr, 0)
                      : process_vm_readv(pid, l, nl, r, nr, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EFAULT;
      return false;
    }
    advance(local, nlocal, &li, &lo, static_cast<size_t>(n));
    advance(remote, nremote, &ri, &ro, static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

bool readv(int pid, const iovec* local, size_t nlocal, const iovec* remote, size_t nremote) {
  return transfer(false, pid, local, nlocal, remote, nremote);
}

bool writev(int pid, const iovec* local, size_t nlocal, const iovec* remote, size_t nremote) {
  return transfer(true, pid, local, nlocal, remote, nremote);
}

bool usable() {
  static const bool ok = [] {
    bool on = true;
    const std::string v = params::getString("LOOM_SHM_CMA");
    if (v != "auto" && params::parseBool(v, &on) && !on) return false;
    std::ifstream yama("/proc/sys/kernel/yama/ptrace_scope");
    int scope = 0;
    if (yama && (yama >> scope) && scope > 0) return false;
    const uint64_t word = 0x1234abcd;
    uint64_t got = 0;
    return read(getpid(), &word, &got, sizeof got) && got == word;
  }();
  return ok;
}

}  // namespace loom::cma
