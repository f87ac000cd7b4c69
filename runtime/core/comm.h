// Communicators and error handlers, as the layers below the API see them.
//
// A Comm is a group of job ranks plus a context id that keeps its traffic
// apart from every other communicator's. MPI_COMM_WORLD (context 0) and
// MPI_COMM_SELF (context 1) are built at MPI_Init; the others are created by
// runtime/api/comm_mgmt_api.cc, which agrees on their context ids with
// ContextIdMask below.
//
// Lifetime: a Comm is reference counted. The user's handle is one
// reference; an operation in flight may hold another (retain/release), so
// MPI_Comm_free with a pending request only invalidates the handle and the
// Comm (and its context id) goes when the last reference does.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>

#include "core/handle_pool.h"
#include <memory>
#include <string>
#include <vector>

#include "core/group.h"
#include "core/info.h"
#include "core/attribute.h"

namespace loom {

// What an error handler does with an error raised on its communicator.
//
// The three predefined ones are statics that live forever. A user handler
// (kUser, made by MPI_Comm_create_errhandler) is reference counted: the
// user's handle is one reference, each communicator it is attached to holds
// another (Comm::setErrhandler), and MPI_Comm_get_errhandler hands out a
// new one; MPI_Errhandler_free drops the handle's, and the object goes with
// its last reference.
struct Errhandler {
  enum class Kind { kFatal, kAbort, kReturn, kUser };
  static constexpr uint32_t kMagic = 0x45525248;  // "ERRH": catches stale handles

  Kind kind;
  const char* name;  // "MPI_ERRORS_ARE_FATAL"
  // kUser: the function to call: commFn for communicators (runtime/api/
  // runtime.cc, raise()), sessionFn for sessions (session_api.cc); exactly
  // one is set (winFn for windows, runtime/api/win_api.cc).
  MPI_Comm_errhandler_function* commFn = nullptr;
  MPI_Session_errhandler_function* sessionFn = nullptr;  // session handlers
  MPI_Win_errhandler_function* winFn = nullptr;          // window handlers
  // The function is Fortran's (created from Fortran): it takes the Fortran
  // handle and the code, SUBROUTINE(COMM, ERROR_CODE).
  bool fortran = false;
  uint32_t magic = kMagic;
  std::atomic<int> refs{1};

  bool isPredefined() const { return kind != Kind::kUser; }
  bool valid() const { return magic == kMagic; }
  void retain() {
    if (!isPredefined()) refs.fetch_add(1, std::memory_order_relaxed);
  }
  static void release(Errhandler* eh) {
    if (eh && !eh->isPredefined() && eh->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      eh->magic = 0;
      delete eh;
    }
  }
};

extern Errhandler gErrorsAreFatal;
extern Errhandler gErrorsAbort;
extern Errhandler gErrorsReturn;


struct ProcTopology;  // core/proc_topo.h

class Comm : public HandlePool<Comm> {
 public:
  static constexpr uint32_t kMagic = 0x4c4f4f4d;  // "LOOM": catches stale handles

  // `worldRanks[i]` is the job rank of this communicator's rank i; `myRank`
  // is the caller's rank in it.
  Comm(uint32_t contextId, std::vector<int> worldRanks, int myRank, std::string name)
      : Comm(contextId, new Group(std::move(worldRanks)), myRank, std::move(name)) {}
  // Adopts the caller's reference to `group`.
  Comm(uint32_t contextId, Group* group, int myRank, std::string name)
      : contextId_(contextId), group_(group), rank_(myRank), name_(std::move(name)) {}
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  bool valid() const { return magic_ == kMagic; }
  int rank() const { return rank_; }
  int size() const { return group_->size(); }
  // The job rank of the process that rank `r` names as a peer (send,
  // receive, probe): a rank of the remote group on an intercommunicator.
  int worldRank(int r) const { return (remote_ ? remote_ : group_)->jobRank(r); }
  uint32_t contextId() const { return contextId_; }
  Group* group() const { return group_; }  // the local group

  // Intercommunicators (runtime/api/inter_comm_api.cc): rank() and size()
  // are those of the local group, and peers are ranks of `remote`. `local`
  // is a hidden intracommunicator over the local group (a context of its
  // own) for the constructors' agreements. Adopts both references.
  void makeInter(Group* remote, Comm* local) {
    remote_ = remote;
    local_ = local;
  }
  bool isInter() const { return remote_ != nullptr; }
  Group* remoteGroup() const { return remote_; }
  Comm* localComm() const { return local_; }
  // How many ranks a peer rank may name: the remote group's size on an
  // intercommunicator.
  int peerSize() const { return (remote_ ? remote_ : group_)->size(); }

  const std::string& name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }
  // How the communicator was made ("dup of MPI_COMM_WORLD"), for messages
  // that must tell an unnamed communicator from others (empty: unknown).
  const std::string& origin() const { return origin_; }
  void setOrigin(std::string o) { origin_ = std::move(o); }

  Errhandler* errhandler() const { return errhandler_; }
  // Takes a reference on `eh` and drops the one on the handler it replaces.
  void setErrhandler(Errhandler* eh) {
    eh->retain();
    Errhandler::release(errhandler_);
    errhandler_ = eh;
  }

  // The tag of this communicator's next collective (on the collective
  // channel). Every member calls collectives in the same order, so the n-th
  // collective gets the same tag everywhere; the tags of several collectives
  // in flight differ, so their messages never meet.
  int nextCollectiveTag() {
    int t = static_cast<int>(collSeq_++ % kCollTagSpan);
    return t;
  }
  // How many tags were drawn: the number of the latest call (1, 2, ...),
  // which, unlike its tag, never repeats.
  uint64_t collectiveCalls() const { return collSeq_; }
  static constexpr uint32_t kCollTagSpan = 0x400000;  // below the internal helpers' tags

  // Attributes in the order they were first set (deleted in reverse).
  std::vector<Attribute>& attributes() { return attrs_; }

  // Info hints (MPI_Comm_set_info / MPI_Comm_get_info): what the user set,
  // in the order set. MPI_Comm_dup copies them; runtime/api/comm_info_api.cc
  // says which keys Loom understands.
  InfoEntries& hints() { return hints_; }

  // The context id returns to the process's pool when this Comm is
  // destroyed (not for MPI_COMM_WORLD/SELF, whose ids are reserved).
  void setOwnsContextId(bool yes) { ownsContextId_ = yes; }

  // What the collectives cache per communicator (coll/comm_info.h): opaque
  // here, built on first use, destroyed with the Comm by the deleter the
  // collectives install.
  void* collState() const { return collState_; }
  void setCollState(void* s) { collState_ = s; }
  // Drops the collectives' state now (MPI_Finalize, for the predefined
  // communicators that live until exit): its teardown may wait for messages,
  // which only works while the progress engine does.
  void dropCollState() {
    if (collState_ && collStateDeleter) collStateDeleter(collState_);
    collState_ = nullptr;
  }
  static inline void (*collStateDeleter)(void*) = nullptr;

  // The process topology (MPI_Cart_create, ...), shared with duplicates;
  // null for a communicator without one.
  const std::shared_ptr<const ProcTopology>& topo() const { return topo_; }
  void setTopo(std::shared_ptr<const ProcTopology> t) { topo_ = std::move(t); }

  // Reference counting for communicators created with `new`.
  void retain() { ++refs_; }
  static void release(Comm* c);
  // MPI_Comm_free: the handle becomes invalid now, the object goes with its
  // last reference.
  static void free(Comm* c);

 private:
  uint32_t magic_ = kMagic;
  uint32_t contextId_;
  Group* group_;
  Group* remote_ = nullptr;  // intercommunicators only
  Comm* local_ = nullptr;    // intercommunicators only
  int rank_;
  int refs_ = 1;
  uint64_t collSeq_ = 0;
  bool ownsContextId_ = false;
  std::string name_;
  std::string origin_;
  Errhandler* errhandler_ = &gErrorsAreFatal;
  std::vector<Attribute> attrs_;
  InfoEntries hints_;
  void* collState_ = nullptr;
  std::shared_ptr<const ProcTopology> topo_;
};

// The context ids this process has free, one bit each (1 = free).
//
// Agreement (MPICH's scheme, without a global counter): to create a
// communicator, the processes of the parent AND their masks together and
// take the lowest id free everywhere; the members then mark it used. It
// needs no central authority and no extra round trip beyond the allreduce.
// The mask is a pure value type so the unit tests can drive it.
class ContextIdMask {
 public:
  static constexpr int kIds = 4096;  // live communicators per process
  static constexpr int kWords = kIds / 64;
  static constexpr uint32_t kWorld = 0, kSelf = 1;  // reserved, never handed out

  ContextIdMask();  // everything free except kWorld and kSelf

  uint64_t* words() { return words_; }
  const uint64_t* words() const { return words_; }
  bool isFree(uint32_t id) const { return (words_[id / 64] >> (id % 64)) & 1; }
  void take(uint32_t id) { words_[id / 64] &= ~(uint64_t{1} << (id % 64)); }
  void give(uint32_t id) { words_[id / 64] |= uint64_t{1} << (id % 64); }

  // The lowest id whose bit is set in `words` (kWords words, e.g. the AND
  // of every process's mask), or -1 when none is.
  static int lowestFree(const uint64_t* words);

 private:
  uint64_t words_[kWords];
};

// This process's pool.
ContextIdMask& contextIds();

}  // namespace loom
