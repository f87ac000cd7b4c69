// Helpers of the reductions that read their peers' buffers directly
// (single-copy cross-memory reads and writes, core/cma.h) and meet in the
// communicator's shared segment: allreduce's cma and reduce's cma.
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "coll/op.h"
#include "coll/shm/shm_steps.h"
#include "core/cma.h"

namespace loom::coll::shm {

// Reads `len` bytes at `remote` in rank r's memory into `dst` (or writes
// `len` bytes of `src` there), recording the first failure in op.status;
// `avoid` names the setting that avoids cross-memory access for this call.
inline void cmaRead(ShmColl& c, ShmOp& op, int r, uint64_t remote, void* dst, size_t len,
                    const char* avoid) {
  if (!op.status.isOk() || len == 0) return;
  if (!cma::read(c.pid(r), reinterpret_cast<const void*>(remote), dst, len))
    op.status =
        errorf(MPI_ERR_OTHER, "reading rank %d's buffer (process_vm_readv): %s; %s avoids it", r,
               std::strerror(errno), avoid);
}
inline void cmaWrite(ShmColl& c, ShmOp& op, int r, const void* src, uint64_t remote, size_t len,
                     const char* avoid) {
  if (!op.status.isOk() || len == 0) return;
  iovec local{const_cast<void*>(src), len}, far{reinterpret_cast<void*>(remote), len};
  if (!cma::writev(c.pid(r), &local, 1, &far, 1))
    op.status =
        errorf(MPI_ERR_OTHER, "writing rank %d's buffer (process_vm_writev): %s; %s avoids it", r,
               std::strerror(errno), avoid);
}

// Step k of a call: this rank publishes where its input and (with
// `withResult`; else 0) its result start, then, once every rank has, copies
// all ranks' pairs into `addrs` (2 per rank). False while it must wait.
inline bool exchangeAddresses(ShmColl& c, ShmOp& op, uint64_t k, bool withResult, uint64_t* addrs) {
  const CollArgs& a = op.args;
  if (op.phase == 0) {
    if (!c.slotFree(k)) return false;  // everyone is done with this slot
    auto* mine = reinterpret_cast<uint64_t*>(c.slot(c.rank(), k));
    mine[0] = reinterpret_cast<uint64_t>(static_cast<const char*>(a.sendbuf) + a.type->trueLb());
    mine[1] = withResult
                  ? reinterpret_cast<uint64_t>(static_cast<char*>(a.recvbuf) + a.type->trueLb())
                  : 0;
    c.publish(k);
    op.phase = 1;
  }
  if (!c.allReached(k)) return false;
  for (int r = 0; r < c.size(); ++r) std::memcpy(addrs + 2 * r, c.slot(r, k), 16);
  return true;
}

// Starts a reduction of `steps` steps that works in pieces of at most
// 64 KiB (whole reduction units; read and folded at a time, so they stay in
// L2), with scratch for `header` bytes and `pieces` pieces after them.
inline Status startCmaReduction(const CollArgs& a, ShmOp::RunFn run, uint32_t steps, size_t header,
                                size_t pieces, Request** out) {
  ShmColl* c = ShmColl::of(a.comm);
  ShmOp* op = c->newOp();
  op->args = a;
  op->run = run;
  op->bytes = a.type->packedSize(a.count);
  const size_t unit = reduceUnit(a.type, a.op);
  constexpr size_t kPiece = 64 * 1024;
  op->piece = std::max(std::min(kPiece, op->bytes) / unit, size_t{1}) * unit;
  op->steps = steps;
  op->scratch.resize(header + pieces * op->piece);
  return c->start(op, out);
}

}  // namespace loom::coll::shm
