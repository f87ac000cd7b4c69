// Collectives on device buffers as they are (no whole-call staging): what
// their algorithms share.
//
// * When an algorithm may run on device buffers: deviceReducible (the op
//   and type have a device kernel) and allOnDevice (every buffer the call
//   uses on this rank is device memory; a rank with some host buffers is
//   staged whole instead, which is simpler and costs it nothing extra).
// * Device work on a schedule's stream: reduceOn, copyOn (Schedule::device
//   steps run them; the schedule fences the stream per round).
// * DevicePipe: the pipelined exchange of the reduction algorithms. Each
//   block a rank receives and reduces comes as chunks (reduce_chunks.h cuts
//   them alike on host and device ranks); chunk j is received into device
//   scratch in round j and reduced on the device in round j+1, while chunk
//   j+1 is in flight. Round j+1 therefore holds: the reduction of chunk j
//   (a device step, queued at round start), the send of chunk j+1 and the
//   receive of chunk j+1. A send that needs the reduction still running
//   (a block one exchange later, when it is a single chunk; Rabenseifner's
//   next half) waits for it in a round of its own; the pipe finds those by
//   comparing address ranges.
// * Pools: device scratch and streams are kept between calls (cudaMalloc
//   and cudaFree synchronise the device and cost far more than a small
//   collective; a stream costs microseconds to create).
//
// With the p2p layer of this version, messages from and to device memory
// are staged per message by p2p (device_stage.h); with CUDA IPC on a node
// (p2p's native path) they move device to device. Either way a receive's
// bytes are in device memory when it completes, before the reduction that
// reads them is queued, and a send is posted only after the device work
// that produced its bytes has finished (its round's fence).
#pragma once

#include <cstddef>
#include <cstdint>

#include "coll/coll_stage.h"
#include "coll/schedule.h"
#include "coll/selector.h"
#include "core/datatype.h"
#include "core/device.h"

namespace loom::coll {

class Op;

// ---- pools (process-wide; the mock and CUDA alike)
namespace dpool {
Status streamAcquire(device::Stream* out);
void streamRelease(device::Stream s);
// Device memory of at least `bytes` (nullptr: none left). Freed buffers are
// kept for reuse up to 256 MiB in all, largest reuse first.
void* scratchAlloc(size_t bytes);
void scratchFree(void* p, size_t bytes);
}  // namespace dpool

// ---- when a call can run on device buffers

// LOOM_COLL_DEVICE_NATIVE (read once): 0 stages every collective on device
// buffers through host memory, as before device-native algorithms existed.
bool deviceNativeEnabled();
bool setDeviceNativeForTest(bool on);

// A predefined op with a device kernel for `t`: contiguous, one basic kind
// the kernels cover (not long double), a valid pair, a backend that runs
// kernels (CUDA or the mock).
bool deviceReducible(const Datatype* t, const Op* op);
// (allOnDevice, coll_stage.h: every buffer this rank uses is on the device.)
// supports() of ring and Rabenseifner allreduce and ring reduce-scatter:
// a commutative op; with device buffers also deviceReducible, allOnDevice.
bool commutativeDeviceSupports(const CollArgs& a);
// supports() of the device forms of ring allgather(v), pairwise
// alltoall(v) and the bcast trees (binomial, scatter_allgather, linear,
// which only send and receive pieces of the user's buffer): host calls
// always; device calls with contiguous types and every buffer on the
// device (alltoallw declines).
bool moveDeviceSupports(const CollArgs& a);

// ---- device work (run inside Schedule::device steps)

// io = in op io over `count` elements of contiguous `t`, queued on `s`.
Status reduceOn(device::Stream s, const void* in, void* io, int64_t count, Datatype* t, Op* op);
// dst = src, `count` elements of contiguous `t`, queued on `s`.
Status copyOn(device::Stream s, void* dst, const void* src, int64_t count, const Datatype* t);

// ---- the pipelined exchange
class DevicePipe {
 public:
  DevicePipe(Schedule& s, Datatype* t, Op* op) : s_(s), t_(t), op_(op) {}

  // One exchange of a reduction algorithm; the messages are those of
  // sendChunks(send, sendCount, to) and a receive of recvCount elements
  // from `from` cut like recvChunks (to/from -1: none). The received data
  // is reduced either into `dst` through the pipe's scratch (dst = recv op
  // dst, the allreduce form), or, with `recvInto`, received there and
  // combined with this rank's own input (recvInto = mine op recvInto, the
  // reduce-scatter form).
  struct Exchange {
    const void* send = nullptr;
    int64_t sendCount = 0;
    int to = -1;
    int64_t recvCount = 0;
    int from = -1;
    void* dst = nullptr;
    void* recvInto = nullptr;
    const void* mine = nullptr;
  };
  // Adds its rounds (each ended). MPI_ERR_NO_MEM without device scratch.
  Status exchange(const Exchange& x);
  // Queues the last reduction in a round of its own: afterwards every
  // result is in place, and the algorithm may add other steps. Anything
  // the algorithm adds between exchanges must not touch what the pending
  // reduction does: call flush() first.
  void flush();

 private:
  struct Red {
    const void* in = nullptr;
    void* io = nullptr;
    int64_t count = 0;
  };
  void queue(const Red& r);
  // Whether `count` elements at `p`, read (a send) or written (a receive),
  // meet the pending reduction's operands.
  bool overlapsPending(const void* p, int64_t count, bool reads) const;

  Schedule& s_;
  Datatype* t_;
  Op* op_;
  Red pending_;                         // received last round, reduced at the next round's start
  char* slot_[2] = {nullptr, nullptr};  // scratch for the dst form, used in turn
  int64_t slotCap_ = 0;                 // elements each
  int next_ = 0;
};

}  // namespace loom::coll
