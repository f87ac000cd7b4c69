// One-sided communication (MPI 5.0 chapter 12): the window object and the
// operations on it, below the API layer.
//
// How a rank reaches a target's memory (Peer::access), decided per pair at
// creation:
//   kDirect   the target's memory is mapped here: the target itself, or a
//             rank of this node when the memory came from MPI_Win_allocate
//             or MPI_Win_allocate_shared (one shared segment per node holds
//             every local rank's window). Puts, gets and accumulates are
//             loads and stores by the origin.
//   kCma      a rank of this node whose memory is its own (MPI_Win_create,
//             dynamic windows): cross-memory attach (process_vm_readv /
//             writev) moves the bytes, again without the target.
//   kMessage  a rank of another node, or of this node when CMA is refused:
//             every operation is a message on the window's private
//             communicator that the target's progress applies (am_target.cc).
//             Except, for a rank of another node whose memory is registered
//             with libfabric (Peer::native, allocate and create flavors):
//             contiguous puts and gets from LOOM_RMA_OFI_MIN bytes up are
//             RMA writes and reads of that memory (native.cc), which the
//             target's CPU does not apply (its progress still has to poll).
//
// Synchronisation that involves no message on one node: every rank has a
// Control block in its node's segment with a reader/writer word (the
// passive-target lock, MPI_Win_lock) and a mutex for accumulates. Origins
// of the node take them directly; a message from another node's origin is
// applied by the target, which takes the same words on its behalf. So
// accumulates to one target are atomic with respect to each other whoever
// issues them (same op or not, any type), and a lock is granted without
// the target's participation whenever origin and target share a node.
//
// Epochs are tracked at the origin, which rejects an operation outside one
// with MPI_ERR_RMA_SYNC and one outside the target's window with
// MPI_ERR_RMA_RANGE before anything moves.
#pragma once

#include <mpi.h>
#include <sys/uio.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/attribute.h"
#include "core/comm.h"
#include "core/handle_pool.h"
#include "core/info.h"
#include "core/request.h"
#include "core/segment.h"
#include "core/status.h"
#include "p2p/wire.h"

namespace loom {
class Datatype;
namespace coll {
class Op;
}
}  // namespace loom

namespace loom::rma {

struct AmHeader;  // rma/am.h
enum class Flavor : uint8_t { kCreate, kAllocate, kDynamic, kShared };
enum class Access : uint8_t { kDirect, kCma, kMessage };

// Regions a dynamic window publishes in its Control block for the origins
// of its node (MPI_Win_attach). Past that many, the Control block names
// the owner's own list (its address in the owner's process), which origins
// read by cross-memory attach; the number of regions is unbounded.
constexpr int kMaxRegions = 64;

// Per rank, in its node's segment.
struct alignas(64) Control {
  static constexpr uint32_t kExclusive = 0x80000000u;
  std::atomic<uint32_t> lock{0};     // kExclusive, or the number of shared holders
  std::atomic<uint32_t> accLock{0};  // accumulate mutex (0 free, 1 held)
  std::atomic<uint32_t> nregions{0};
  // Odd while the owner rewrites regions[] (a sequence lock: readers on
  // other ranks retry when it changed under them).
  std::atomic<uint32_t> regionsSeq{0};
  uint64_t listAddr = 0;  // nregions > kMaxRegions: the owner's Region array
  struct Region {
    uint64_t addr;
    uint64_t bytes;
  } regions[kMaxRegions];
};

// Whether the `n` regions at `r` cover [lo, hi), adjacent regions joining
// (rma/ops.cc).
bool regionsCover(const Control::Region* r, size_t n, __int128 lo, __int128 hi);

struct Peer {
  int jobRank = -1;
  int node = 0;
  int pid = 0;
  int dispUnit = 1;
  uint64_t base = 0;  // the window's address in the peer's address space
  uint64_t size = 0;
  char* mapped = nullptr;     // kDirect: where base is mapped here
  Control* ctl = nullptr;     // ranks of this node (and self)
  Access access = Access::kMessage;
  // Operations sent by message that the target answers only by an
  // acknowledgement (put, accumulate), and how many it acknowledged.
  uint64_t sent = 0;
  uint64_t acked = 0;
  int ackError = MPI_SUCCESS;  // first error the acknowledgements reported
  // Native RMA (native.cc): the key of the peer's registered window memory,
  // and the writes and reads started to it and finished.
  bool native = false;
  p2p::RemoteKey rkey{};
  uint64_t nativeStarted = 0;
  uint64_t nativeDone = 0;
  int nativeError = MPI_SUCCESS;
  int lockHeld = 0;           // 0, kLockShared or kLockExclusive (sync_util.h)
  bool noCheck = false;       // locked with MPI_MODE_NOCHECK: no lock word taken
};

// What window creation needs from the API layer (collectives over the
// window's private communicator).
struct Collectives {
  Status (*allgather)(Comm* comm, const void* mine, size_t bytes, void* all);
  Status (*barrier)(Comm* comm);
};

class Window : public HandlePool<Window> {
 public:
  static constexpr uint32_t kMagic = 0x57494e44;  // "WIND"

  // Collective over `comm` (the private communicator the API layer made
  // for this window: its own context, MPI_ERRORS_RETURN). `base` is the
  // user's memory for kCreate; for kAllocate/kShared the window allocates
  // `size` bytes and *base returns them. `noncontig`: the
  // alloc_shared_noncontig hint.
  static Status create(Comm* comm, Flavor flavor, void** base, uint64_t size, int dispUnit,
                       bool noncontig, const Collectives& coll, Window** out);
  // Collective: completes what this rank started, waits until no rank can
  // touch this rank's memory any more, and unmaps. Does not delete.
  Status free(const Collectives& coll);
  ~Window();

  bool valid() const { return magic_ == kMagic; }
  Comm* comm() const { return comm_; }
  Flavor flavor() const { return flavor_; }
  int rank() const { return comm_->rank(); }
  int size() const { return comm_->size(); }
  Peer& peer(int r) { return peers_[r]; }
  void* base() const { return reinterpret_cast<void*>(peers_[rank()].base); }
  uint64_t bytes() const { return peers_[rank()].size; }
  int dispUnit() const { return peers_[rank()].dispUnit; }

  // Attribute values MPI_Win_get_attr hands out pointers to.
  MPI_Aint attrSize = 0;
  int attrDispUnit = 1;
  int attrFlavor = 0;
  int attrModel = MPI_WIN_UNIFIED;

  std::string name;
  InfoEntries hints;
  std::vector<Attribute> attrs;
  Errhandler* errhandler() const { return errhandler_; }
  void setErrhandler(Errhandler* eh) {
    eh->retain();
    Errhandler::release(errhandler_);
    errhandler_ = eh;
  }

  // MPI_Win_shared_query: rank r's memory as mapped here (nullptr: not
  // mapped); r = MPI_PROC_NULL: the first rank with a non-empty window.
  void sharedQuery(int r, uint64_t* size, int* dispUnit, void** ptr);

  // Dynamic windows (MPI_Win_attach / detach).
  Status attach(void* addr, uint64_t bytes);
  Status detach(const void* addr);

  // --- Operations (ops.cc). `target` is a rank of the window, not
  // MPI_PROC_NULL (the API layer returns before). Derived datatypes on
  // both sides; the target type is read at the target's addresses.
  struct Target {
    int rank;
    uint64_t disp;
    int64_t count;
    Datatype* type;
  };
  Status put(const void* origin, int64_t count, Datatype* type, const Target& t,
             Request** req = nullptr);
  Status get(void* origin, int64_t count, Datatype* type, const Target& t,
             Request** req = nullptr);
  // result (may be null for plain accumulate) receives the target's data
  // before the operation; MPI_NO_OP only reads.
  Status accumulate(const void* origin, int64_t count, Datatype* type, void* result,
                    int64_t rcount, Datatype* rtype, const Target& t, coll::Op* op,
                    Request** req = nullptr);
  Status compareAndSwap(const void* origin, const void* compare, void* result, Datatype* type,
                        int target, uint64_t disp);

  // --- Synchronisation (sync.cc). `assert` is the MPI_MODE_* bits.
  Status fence(int assert, const Collectives& coll);
  Status post(Group* group, int assert);
  Status start(Group* group, int assert);
  Status complete();
  Status wait();
  Status test(bool* done);
  Status lock(int type, int target, int assert);
  Status unlock(int target);
  Status lockAll(int assert);
  Status unlockAll();
  Status flush(int target);  // -1: every target
  void sync();

  // --- Target side (am_target.cc): messages from origins of other nodes.
  int pollMessages();

 private:
  Window() = default;
  friend struct Am;

  // Whether an operation on `target` is inside an access epoch.
  bool inEpoch(int target) const;
  bool passive(int target) const { return lockAll_ || peers_[target].lockHeld; }
  static Status requestOutsidePassive();
  // Posts the receive of a reply into (buf, count, type), then sends the
  // request `msg` (malloc'ed, taken); the window keeps the receive until a
  // flush, and *user (when asked) is a request that completes with it.
  Status requestWithReply(int target, const AmHeader& h, char* msg, size_t msgBytes,
                          void* buf, int64_t count, Datatype* type, size_t bytes, Request** user);
  // Copies the attached regions into this rank's Control block.
  void beginRegionsUpdate();  // the regions' sequence odd (being written)
  void publishRegions();
  // The pieces (target addresses) of `count` `type` at disp of target,
  // range-checked against the target's window.
  Status targetPieces(const Target& t, std::vector<iovec>* out, size_t* bytes);
  // The bytes [lo, hi) the target data covers, relative to the target's
  // window base (an absolute address in a dynamic window); false when
  // that does not fit a 64-bit address.
  bool targetSpan(const Target& t, __int128* lo, __int128* hi) const;
  // Whether [lo, hi) lies in one region attached to the dynamic window
  // whose Control block is `c`.
  // Whether [lo, hi) lies in one region attached at a rank of this node
  // (`pid`: its process; the regions of this process are regions_).
  bool attachedSpan(const Peer& p, __int128 lo, __int128 hi) const;
  // This rank's regions as Control records (regions_ holds (addr, bytes)
  // pairs of uint64_t, laid out alike: window.cc checks it).
  const Control::Region* ownRegions() const {
    return reinterpret_cast<const Control::Region*>(regions_.data());
  }
  // Epoch, range and size checks of one operation; fills the target pieces.
  Status checkOp(const Target& t, int64_t count, const Datatype* type,
                 std::vector<iovec>* pieces, size_t* bytes);
  int nextReplyTag();
  char* directContiguous(const Target& t, int64_t count, const Datatype* type, size_t* bytes);
  // Target side: applies one request of window rank `origin`.
  void apply(int origin, char* buf);
  bool ownsRange(uint64_t addr, uint64_t bytes) const;
  // Origin side: sends `op` (kLock/kUnlock/kFlush) to `target`; the reply
  // (an error code) arrives in *code when *req completes.
  Status control(int target, uint8_t op, int kind, Request** req, int32_t* code);
  Status waitControls(std::vector<Request*>& reqs, std::vector<int32_t>& codes);
  // Remote completion of everything sent to `target` by message.
  Status flushMessages(int target);
  Status waitGets();
  // Native RMA (native.cc). The put (write) or get of `bytes` contiguous
  // bytes between `local` and `addr` in target's address space (inside its
  // window: checked before), as an RMA write or read; false when that path
  // does not take it (then it goes by message). *req, when asked,
  // completes with the operation.
  bool startNative(bool write, int target, uint64_t addr, void* local, size_t bytes, Request** req);
  // Whether a contiguous operation of `bytes` to `target` goes native.
  bool goesNative(int target, size_t bytes) const;
  // Waits until every native operation to `target` (-1: to every target)
  // finished, i.e. its data is in the target's memory (writes) or ours.
  Status waitNative(int target);
  // At creation: registers this rank's memory for the ranks of other nodes
  // (when LOOM_RMA_OFI allows); fills *key, false when not registered.
  bool exposeNative(void* addr, uint64_t bytes, p2p::RemoteKey* key);
  void unexposeNative();
  // LOOM_RMA_OFI: whether this rank uses native RMA at all.
  static bool nativeEnabled();
  struct NativeOp;
  static void nativeDone(void* ctx, size_t bytes, int err);

  uint32_t magic_ = kMagic;
  Comm* comm_ = nullptr;
  Flavor flavor_ = Flavor::kCreate;
  Errhandler* errhandler_ = &gErrorsAreFatal;
  std::vector<Peer> peers_;
  segment::Segment seg_;
  std::vector<int> local_;  // window ranks on this node, ascending
  bool usesMessages_ = false;
  bool registered_ = false;
  int replyTag_ = 0;
  // Message gets not yet complete (no user request), with their sizes.
  std::vector<std::pair<Request*, size_t>> gets_;
  // Native RMA: this rank's registration, the operations in flight (every
  // target), and records of operations for reuse.
  void* exposed_ = nullptr;
  uint64_t nativeInFlight_ = 0;
  bool nativeFailed_ = false;  // some peer's nativeError is set
  // The origin of the operation being started is a host twin of device
  // memory (ops.cc), freed when the call returns: such an operation must
  // not go native, as an RMA write reads its origin until it completes.
  bool originStaged_ = false;
  std::vector<NativeOp*> nativeFree_;

  // Epochs.
  bool fenceOpen_ = false;
  bool started_ = false;
  std::vector<int> accessGroup_;   // ranks of the window (start)
  bool posted_ = false;
  std::vector<int> exposureGroup_; // post
  std::vector<Request*> completes_;  // receives of the origins' completes
  bool lockAll_ = false;
  int locks_ = 0;                  // targets locked with MPI_Win_lock

  // Target side.
  struct Incoming;
  std::deque<Incoming*> incoming_;
  struct Outgoing;
  std::vector<Outgoing*> outgoing_;
  struct Waiter;
  std::vector<Waiter*> lockWaiters_;
  std::vector<std::pair<uint64_t, uint64_t>> regions_;  // dynamic: attached here
  std::vector<int> originErrors_;  // per origin: first error applying its requests
  std::vector<uint64_t> unacked_;  // per origin: applied, not yet acknowledged
  struct Ack {
    uint64_t count;
    int32_t error;
    int32_t pad;
  } ackIn_{};
  Request* ackRecv_ = nullptr;     // the posted receive of acknowledgements
  void sendAcks(int origin);       // origin -1: every origin with some due
  Status postAckRecv();
};

// Handle translation (API layer): nullptr for MPI_WIN_NULL or a stale handle.
inline Window* toWindow(MPI_Win h) {
  auto* w = reinterpret_cast<Window*>(h);
  // Predefined handles are small constants (MPI_WIN_NULL among them).
  if (reinterpret_cast<uintptr_t>(h) < 0x10000) return nullptr;
  return w->valid() ? w : nullptr;
}
inline MPI_Win toHandle(Window* w) { return w ? reinterpret_cast<MPI_Win>(w) : MPI_WIN_NULL; }

}  // namespace loom::rma
