// Selection: which algorithm runs a collective call.
//
// Every algorithm is an entry {collective, name, description, supports,
// build} in one registry (registry.cc). The rules (selector.cc) are one data
// table read top to bottom, first match wins: {collective, up to how many
// bytes, rank-count range, power of two only, algorithm}. An algorithm whose
// supports() declines the call is skipped and the next rule applies.
// LOOM_COLL_<COLLECTIVE>=<algorithm> overrides the rules (an unknown name is
// an error that lists the choices); LOOM_DEBUG=coll logs every decision on
// rank 0 of the communicator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "coll/schedule.h"
#include "core/count_array.h"
#include "core/device.h"

namespace loom::coll {

class Op;  // reduction operation (coll/op.h)

enum class Collective : uint8_t {
  kBarrier, kBcast, kReduce, kAllreduce, kGather, kGatherv, kScatter, kScatterv,
  kAllgather, kAllgatherv, kReduceScatter, kReduceScatterBlock, kAlltoall, kAlltoallv,
  kAlltoallw, kScan, kExscan, kCount
};
const char* collectiveName(Collective c);  // "allreduce"

class Op;
// A collective call's signature as its messages carry it (Schedule::
// setSignature): 16 bits, never 0: the collective, the root's low 5 bits and
// the op's kind (user ops all alike). Equal for every rank of a correct call.
uint16_t callSignature(Collective c, int root, const Op* op);
// The error of a call whose signature `mine` met a peer's `theirs`: which
// of collective (MPI_ERR_OTHER), root (MPI_ERR_ROOT) or op (MPI_ERR_OP)
// differs, and how; `who` names the peer.
Status mismatchStatus(uint16_t mine, uint16_t theirs, const std::string& who);
// The signature of the message a rank sends its peers when it gives up on a
// call with error class `cls` (Schedule::poisonPeers).
uint16_t poisonSignature(int cls);

// One collective call as algorithms see it. Which fields matter depends on
// the collective (as in the MPI signature); buffers are never MPI_IN_PLACE
// here: `inPlace` says the caller passed it (sendbuf then aliases recvbuf's
// own block, as the standard defines per collective).
struct CollArgs {
  Collective coll = Collective::kBarrier;
  Comm* comm = nullptr;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  bool inPlace = false;
  int64_t count = 0;            // send count (or the count of reductions, bcast)
  Datatype* type = nullptr;     // send type (or the type of reductions, bcast)
  int64_t recvCount = 0;
  Datatype* recvType = nullptr;
  // v and w variants: the user's int or MPI_Count/MPI_Aint (_c form) arrays.
  CountArray sendCounts;
  CountArray sendDispls;
  CountArray recvCounts;
  CountArray recvDispls;
  Datatype* const* sendTypes = nullptr;  // alltoallw
  Datatype* const* recvTypes = nullptr;
  Op* op = nullptr;
  int root = 0;
  size_t bytes = 0;  // the size the rules key on (documented per collective in selector.cc)
  // The caller waits for the call (a blocking collective): an algorithm that
  // finishes it at once may return without a request (*out = nullptr).
  bool blocking = false;
  // The call's collective tag (Comm::nextCollectiveTag), drawn by run() for
  // every call: a schedule's messages carry it. `call` is the call's number
  // on the communicator (Comm::collectiveCalls, the same on every rank, never
  // repeated), which describes it in the shared-memory context's checks.
  int tag = 0;
  uint64_t call = 0;
  // An activation of a persistent collective (MPI_*_init + MPI_Start): the
  // caller sets `tag` (drawn once by the init call) and run() draws none.
  // Activations follow no order relative to the communicator's other calls,
  // so only message-based algorithms run them (the shared-memory ones keep
  // step with the communicator's call sequence) and the ranks' call
  // descriptions are not compared by number (the signature still is).
  bool persistent = false;
  // The tag and number are drawn already (a call that falls back from its
  // device schedule to host twins keeps the ones it drew): run() draws none.
  bool tagged = false;
  // Where this rank's buffers are: kDevice when any buffer the call uses
  // here is GPU memory. run() first offers such a call as it is to the
  // algorithms that take device buffers (Algorithm::deviceBuffers); when
  // none does (selectDevice: the device rules) it stages the buffers through
  // host memory (coll_stage.h) and selects again with kHost. Ranks of one
  // call may differ here (some pass host buffers, some device buffers), so
  // an algorithm that takes device buffers must exchange the same messages
  // as the one the host rules pick for the same call.
  device::MemKind mem = device::MemKind::kHost;
};

struct Algorithm {
  Collective coll;
  const char* name;  // "ring"
  const char* desc;  // one line: what it does, when it is good
  // nullptr: runs every case.
  bool (*supports)(const CollArgs&);
  Status (*build)(Schedule&, const CollArgs&);
  // Algorithms that do not run on messages (the shared-memory ones) start
  // the call themselves instead of building a schedule (build is null).
  Status (*start)(const CollArgs&, Request** out) = nullptr;
  // Runs on device buffers as they are (CollArgs::mem == kDevice; its
  // supports() then says which device calls): it builds a device form of
  // its schedule that exchanges the same messages as its host form.
  bool deviceBuffers = false;
};

// Every algorithm, grouped by collective.
std::span<const Algorithm> algorithms();

struct Rule {
  Collective coll;
  size_t maxBytes;     // rule applies when bytes <= maxBytes (SIZE_MAX: any)
  int minRanks;        // and minRanks <= communicator size <= maxRanks
  int maxRanks;
  bool pow2Only;       // and, if set, the size is a power of two
  const char* algorithm;
  // and the communicator's ranks span minNodes..maxNodes nodes
  // (coll/comm_info.h) with at least minPerNode ranks on every node.
  int minNodes = 1;
  int maxNodes = 1 << 30;
  int minPerNode = 1;
  // Which calls the rule is for: host rules (kHost) pick the algorithm of
  // every call; device rules (kDevice) say which device calls run as they
  // are, without staging: the first device rule whose key matches decides,
  // and its algorithm runs on the device buffers if it accepts the call;
  // "staged" (kStaged), a declining algorithm or no matching device rule
  // mean: staged through host memory, selected by the host rules. A device
  // rule names only an algorithm the host rules pick for the same key
  // (ranks of one call may differ in memory kind; they must exchange the
  // same messages).
  device::MemKind mem = device::MemKind::kHost;
  // Only when the node runs more ranks than cores (progress::oversubscribed),
  // where every round of messages costs a context switch.
  bool oversubscribedOnly = false;
  // Only where this node's measured CMA window (p2p::nodeCmaWindow, alike
  // on the node's ranks; docs/tuning.md) says so: kInCma, bytes inside it
  // (point-to-point moves them with one copy); kBelowCma, a window that
  // starts at 1 MiB or below, and bytes under its start; kFromCma, such a
  // window, and bytes from its start up (past its end too: for algorithms
  // whose gain is more than the single copy). Never oversubscribed (no
  // window there).
  enum class Cma : uint8_t { kAny, kInCma, kBelowCma, kFromCma };
  Cma cma = Cma::kAny;
};
inline constexpr const char* kStaged = "staged";
std::span<const Rule> rules();

// The algorithm for this call: the override if set, else the first rule
// that matches and whose algorithm supports the call. An error when the
// override names no algorithm of that collective. For a device call
// (args.mem == kDevice) the algorithm that runs it natively (selectDevice);
// an error when it would be staged.
Status select(const CollArgs& args, const Algorithm** out);
// A device call: the algorithm that takes its device buffers as they are,
// or nullptr when it is staged (LOOM_COLL_DEVICE_NATIVE=0, an override
// that declines it, a "staged" rule, an algorithm that declines it). The
// override, when set and accepting the call, wins as on the host.
const Algorithm* selectDevice(const CollArgs& args);

// Builds the selected algorithm's schedule and starts it.
Status run(const CollArgs& args, Request** out);

// For loom-info --coll: every algorithm and rule, one per line.
std::string describeAll();

}  // namespace loom::coll
