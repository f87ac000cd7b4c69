// Single-copy reads from another process of this node (Linux cross-memory
// attach, process_vm_readv), for the collectives that read their peers'
// buffers directly. (The shm transport probes its own use of it.)
#pragma once

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

}  // namespace loom::cma
