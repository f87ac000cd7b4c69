// Single-copy reads from another process of this node (Linux cross-memory
// attach, process_vm_readv), for the collectives that read their peers'
// buffers directly. (The shm transport probes its own use of it.)
#pragma once

#include <sys/uio.h>

#include <cstddef>

namespace loom::cma {

// Whether reading sibling processes is allowed here, decided once and alike
// on every rank of a node: LOOM_SHM_CMA=0 forbids it; otherwise Yama's
// ptrace_scope must be 0 (1 and up forbid reading a sibling) and the call
// itself must work (a seccomp filter may refuse it: tried on our own memory).
bool usable();

// Reads `bytes` at `remote` in process `pid` into `local`; false on failure
// (errno says why).
bool read(int pid, const void* remote, void* local, size_t bytes);

// Scatter/gather forms for one-sided communication (rma/): moves the bytes
// of the local pieces `local` to or from the remote pieces `remote` (same
// total length) of process `pid`, in as many system calls as IOV_MAX and
// partial transfers need. False on failure (errno: EFAULT for an address the
// target has not mapped, EPERM where attaching is refused).
bool readv(int pid, const iovec* local, size_t nlocal, const iovec* remote, size_t nremote);
bool writev(int pid, const iovec* local, size_t nlocal, const iovec* remote, size_t nremote);

}  // namespace loom::cma
