#include "core/params.h"

#include <cassert>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "core/log.h"

namespace loom::params {
namespace {

// The one table. Keep it sorted by topic; every entry is documented in
// man/man7/loom.7 (tests/unit/params_test checks the page names them all).
constexpr Param kParams[] = {
    // Logging
    {"LOOM_DEBUG", "",
     "Comma-separated debug topics to log to stderr: init, boot, topo, err, p2p, coll, tune, launch (loomrun), all"},
    // Runtime
    {"LOOM_OVERSUBSCRIBE", "auto",
     "Whether ranks outnumber cores (waits then yield instead of spinning): auto, 1 or 0. "
     "loomrun sets it; auto compares local ranks with usable cores"},
    {"LOOM_LAUNCHER", "",
     "Set to loomrun by loomrun for its ranks, which then leave the message of a failing "
     "rank to loomrun instead of printing it themselves; not for users"},
    {"LOOM_NP", "",
     "Set by loomrun to the number of ranks it starts (-n): MPI_INFO_ENV's maxprocs before "
     "MPI_Init; not for users"},
    {"LOOM_NODE_NAME", "",
     "Overrides the node name this rank reports (fake hosts in tests); default: PMIx's "
     "hostname, else gethostname()"},
    // Point-to-point over shared memory
    {"LOOM_SHM_RING_BYTES", "1m",
     "Bytes of each sender->receiver ring in the node's shared segment (power of two)"},
    {"LOOM_SHM_INLINE_MAX", "24",
     "Largest payload sent inline in the message header's cache line"},
    {"LOOM_SHM_EAGER_MAX", "16k",
     "Largest message sent eagerly through the ring (copied in, copied out); larger "
     "messages use a rendezvous"},
    {"LOOM_SHM_SEND_EAGER_MAX", "auto",
     "Largest blocking standard-mode send (MPI_Send) written straight into the peer's ring "
     "when the ring has room, above LOOM_SHM_EAGER_MAX. auto: four times LOOM_SHM_EAGER_MAX "
     "(64k) when the node runs more ranks than cores (the sender goes on without waiting for "
     "the receiver to run), else LOOM_SHM_EAGER_MAX"},
    {"LOOM_SHM_RNDV", "auto",
     "Rendezvous protocol for large messages: auto (by size), get (single copy with CMA "
     "process_vm_readv), pipeline (chunks copied through the ring)"},
    {"LOOM_SHM_CMA_MIN", "auto",
     "With LOOM_SHM_RNDV=auto: smallest message moved by CMA single copy (the receiver's "
     "process_vm_readv) instead of the eager copy or the copy pipeline. auto: measured on this "
     "host (LOOM_TUNE), else 64m; 32k when the node runs more ranks than cores (the receiver "
     "copies the whole message when it runs, without waiting for the sender to run). Set "
     "alone, CMA takes every size from it up"},
    {"LOOM_SHM_CMA_MAX", "auto",
     "With LOOM_SHM_RNDV=auto: largest message moved by CMA single copy; larger ones take the "
     "copy pipeline (which spreads the copying over both ranks' cores). auto: measured on this "
     "host (LOOM_TUNE), else none (no limit); none: no limit"},
    {"LOOM_TUNE", "auto",
     "Thresholds measured on the machine (loom-info --tune; LOOM_DEBUG=tune logs it): auto "
     "(read the host's cache; when it is missing, stale or corrupt and its place is writable, "
     "the first job with two ranks on a node and a core each that runs LOOM_TUNE_MIN_JOB_MS "
     "or longer measures them in MPI_Finalize, about 1.5 ms), refresh (measure again and "
     "rewrite the cache, in any job), 0 (built-in defaults; no cache, no measurement)"},
    {"LOOM_TUNE_MIN_JOB_MS", "200",
     "LOOM_TUNE=auto measures in a job that ran (MPI_Init to MPI_Finalize) at least this many "
     "milliseconds, so that the calibration costs under 1% of it; shorter jobs leave it to a "
     "later one (0: the first job measures, however short)"},
    {"LOOM_TUNE_CACHE", "auto",
     "Directory of the per-host cache of measured thresholds (file tune-<host>.conf, text, "
     "keyed by CPU model, CPU count, kernel release and Loom version). auto: "
     "$XDG_CACHE_HOME/loom, else $HOME/.cache/loom; read-only or full: the built-in defaults"},
    {"LOOM_SHM_CMA", "auto",
     "Use CMA (process_vm_readv) at all: auto (probe at start-up, fall back silently when "
     "forbidden), 1, 0"},
    {"LOOM_SHM_PIPELINE_CHUNK", "64k", "Chunk size of the rendezvous copy pipeline"},
    {"LOOM_ASYNC_PROGRESS", "auto",
     "Progress thread while a window has targets on other nodes (their passive-target "
     "operations then complete while this rank computes) or a CUDA stream object exists (it "
     "runs the operations enqueued on it): auto, 0 (never; no CUDA stream objects)"},
    {"LOOM_RMA_CMA", "auto",
     "One-sided operations on windows of user memory (MPI_Win_create, dynamic) to ranks of "
     "the node: auto (cross-memory attach where LOOM_SHM_CMA allows it), 0 (messages the "
     "target's progress applies)"},
    {"LOOM_RMA_OFI", "auto",
     "Contiguous puts and gets to ranks of other nodes as libfabric RMA writes and reads of "
     "the target's registered window memory (allocate and create windows): auto (where the "
     "provider has RMA writes), 0 (every operation a message the target applies)"},
    {"LOOM_RMA_OFI_MIN", "0",
     "Smallest put or get (bytes) that LOOM_RMA_OFI moves by RMA; smaller ones go by message"},
    {"LOOM_SHM_SEGMENT", "auto",
     "How ranks of a node share a shared-memory segment: auto (an unnamed memfd the others "
     "take with pidfd_getfd or /proc/<pid>/fd, never left in /dev/shm), name (named in "
     "/dev/shm, unlinked once every local rank mapped it)"},
    {"LOOM_SHM_NT", "auto",
     "Copy-pipeline messages from LOOM_SHM_NT_MIN up: auto (cached or streamed past the "
     "caches with non-temporal stores, whichever the receiver measured cheaper lately, per "
     "peer and size), 1 (always streamed), 0 (never)"},
    {"LOOM_SHM_NT_MIN", "16k",
     "Smallest copy-pipeline message that may be copied with non-temporal "
     "(cache-bypassing) stores on both sides (LOOM_SHM_NT); 0: never"},
    // Point-to-point between nodes (libfabric)
    {"LOOM_OFI_PROVIDER", "auto",
     "libfabric provider for ranks on other nodes: auto (the first offered of efa, "
     "verbs;ofi_rxm, net, tcp;ofi_rxm) or a provider name such as tcp;ofi_rxm; its interface "
     "is chosen by libfabric's own variables (FI_TCP_IFACE, ...)"},
    {"LOOM_OFI_BUFFER_BYTES", "auto",
     "Bytes of each record buffer (send and receive) of the libfabric transport; the largest "
     "record it carries is this less 40, rounded down to 64. auto: 64 KiB records for net, "
     "16 KiB for the others (rxm's eager size)"},
    {"LOOM_OFI_EAGER_MAX", "auto",
     "Largest message sent eagerly between nodes (auto: the largest record); larger "
     "contiguous messages are read by the receiver with RMA reads"},
    {"LOOM_OFI_RX_BUFFERS", "64", "Receive buffers each rank keeps posted for records from other nodes"},
    {"LOOM_OFI_TX_BUFFERS", "64",
     "Send buffers of the libfabric transport: records in flight at once; a sender with none "
     "free waits (flow control)"},
    {"LOOM_OFI_CREDITS", "128",
     "Records a rank may have sent to one peer on another node that this peer has not yet "
     "taken from libfabric (flow control: returned as the peer consumes them)"},
    {"LOOM_OFI_PEER_TIMEOUT", "10",
     "Seconds a peer on another node may leave a liveness probe (a TCP connect to its "
     "libfabric port, made while this rank waits) unanswered before the job ends naming it "
     "as cut off; a refused probe (the process is gone) ends it at once. With providers "
     "whose peers cannot be probed: ten times this, of libfabric refusing every operation "
     "to the peer. 0: never"},
    {"LOOM_OFI_RNDV", "auto",
     "Rendezvous protocol between nodes: auto and get (the receiver reads contiguous "
     "messages with RMA reads), pipeline (the sender streams records after the receiver "
     "matched)"},
    {"LOOM_OFI_RNDV_CHUNK", "1m", "Bytes per RMA read of a rendezvous between nodes"},
    {"LOOM_OFI_RNDV_DEPTH", "4", "RMA reads of one rendezvous in flight at once"},
    {"LOOM_OFI_NETNS", "",
     "For tests: a network namespace (path, %n: node id) each rank enters before opening its "
     "libfabric endpoint, so simulated nodes cross a real veth link (needs CAP_SYS_ADMIN)"},
    // Collectives: one override per collective (loom-info --coll lists the names)
    // Shared-memory collectives (ranks of one node read each other's data)
    {"LOOM_REDUCE_ISA", "auto",
     "Build of the host reduction loop: auto (the processor's best of avx512, avx2, "
     "baseline), or one of those to use at most that (x86-64 with gcc 12 or newer)"},
    {"LOOM_COLL_SHM", "auto",
     "Shared-memory collectives for communicators whose ranks share a node: auto (on for "
     "2..LOOM_COLL_SHM_MAX_RANKS ranks), 0 (off)"},
    {"LOOM_COLL_SHM_DEPTH", "auto",
     "Staging slots per rank in a communicator's collective segment (a power of two, 2 to "
     "256; comm rank 0's value holds): a rank may run this many steps minus one ahead of the "
     "slowest. auto: 128 when the node runs more ranks than cores, else the most up to 64 "
     "whose slots fit in 2 MiB for the segment (64 at 2 ranks of 16 KiB slots, 4 from 17 "
     "ranks), at least 4"},
    {"LOOM_COLL_SHM_SLOT", "16k",
     "Bytes of each rank's staging slot in a communicator's collective segment "
     "(LOOM_COLL_SHM_DEPTH of them per rank); larger messages go through it in pieces of this size"},
    {"LOOM_COLL_SHM_MAX_RANKS", "64",
     "Largest communicator that gets a shared-memory collective segment"},
    {"LOOM_COLL_VIRTUAL_NODE_SIZE", "0",
     "Collectives only: treat each block of this many consecutive job ranks as one node "
     "(tests the hierarchical algorithms on one machine); 0 uses the real nodes"},
    {"LOOM_COLL_REDUCE_CHUNK", "1m",
     "Ring and Rabenseifner allreduce and ring reduce-scatter send blocks the receiver reduces "
     "in messages of at most this many bytes (device ranks reduce one while the next travels); "
     "must be the same on every rank; 0: one message per block"},
    {"LOOM_COLL_DEVICE_NATIVE", "1",
     "Collectives on device buffers run natively where an algorithm takes them (reductions on "
     "the device); 0 stages every one through host memory"},
    {"LOOM_COLL_DEVICE_SCRATCH_MAX", "0",
     "Most bytes of device memory the collectives on device buffers hold as scratch (in use and "
     "cached); a call whose scratch does not fit, or that the device refuses, runs staged through "
     "host memory instead of failing; 0: no limit but the device's"},
    {"LOOM_STREAM_TWINS", "0",
     "1: operations queued on a GPU stream (MPIX_*_enqueue) run on host copies of their device "
     "buffers; 0: on the device buffers themselves, with the device algorithms"},
    {"LOOM_COLL_BARRIER", "auto", "Algorithm of MPI_Barrier and MPI_Ibarrier: auto (the rules) or a name"},
    {"LOOM_COLL_BCAST", "auto", "Algorithm of MPI_Bcast and MPI_Ibcast: auto (the rules) or a name"},
    {"LOOM_COLL_REDUCE", "auto", "Algorithm of MPI_Reduce and MPI_Ireduce: auto (the rules) or a name"},
    {"LOOM_COLL_ALLREDUCE", "auto", "Algorithm of MPI_Allreduce and MPI_Iallreduce: auto (the rules) or a name"},
    {"LOOM_COLL_GATHER", "auto", "Algorithm of MPI_Gather and MPI_Igather: auto (the rules) or a name"},
    {"LOOM_COLL_GATHERV", "auto", "Algorithm of MPI_Gatherv and MPI_Igatherv: auto (the rules) or a name"},
    {"LOOM_COLL_SCATTER", "auto", "Algorithm of MPI_Scatter and MPI_Iscatter: auto (the rules) or a name"},
    {"LOOM_COLL_SCATTERV", "auto", "Algorithm of MPI_Scatterv and MPI_Iscatterv: auto (the rules) or a name"},
    {"LOOM_COLL_ALLGATHER", "auto", "Algorithm of MPI_Allgather and MPI_Iallgather: auto (the rules) or a name"},
    {"LOOM_COLL_ALLGATHERV", "auto", "Algorithm of MPI_Allgatherv and MPI_Iallgatherv: auto (the rules) or a name"},
    {"LOOM_COLL_REDUCE_SCATTER", "auto", "Algorithm of MPI_Reduce_scatter and MPI_Ireduce_scatter: auto (the rules) or a name"},
    {"LOOM_COLL_REDUCE_SCATTER_BLOCK", "auto", "Algorithm of MPI_Reduce_scatter_block and MPI_Ireduce_scatter_block: auto (the rules) or a name"},
    {"LOOM_COLL_ALLTOALL", "auto", "Algorithm of MPI_Alltoall and MPI_Ialltoall: auto (the rules) or a name"},
    {"LOOM_COLL_ALLTOALLV", "auto", "Algorithm of MPI_Alltoallv and MPI_Ialltoallv: auto (the rules) or a name"},
    {"LOOM_COLL_ALLTOALLW", "auto", "Algorithm of MPI_Alltoallw and MPI_Ialltoallw: auto (the rules) or a name"},
    {"LOOM_COLL_SCAN", "auto", "Algorithm of MPI_Scan and MPI_Iscan: auto (the rules) or a name"},
    {"LOOM_COLL_EXSCAN", "auto", "Algorithm of MPI_Exscan and MPI_Iexscan: auto (the rules) or a name"},
    // Devices (GPU buffers): runtime/core/device.h, docs/gpu.md
    {"LOOM_DEVICE_CUDA", "1",
     "Use CUDA when Loom was built with it and a device is present (probed once at MPI_Init); "
     "0: treat every buffer as host memory and never initialise the driver"},
    {"LOOM_DEVICE_MOCK", "0",
     "For tests: the mock device (memfd memory the program sees PROT_NONE, allocated through "
     "loom_mock_device_malloc) instead of CUDA, in any build"},
    {"LOOM_DEVICE_MOCK_IPC_FAIL", "none",
     "For tests: make the mock device refuse IPC, to exercise the fallbacks: get (no handle "
     "for the sender's buffer), open (the receiver cannot map it), none"},
    {"LOOM_DEVICE_MOCK_SLOW_FENCES", "0",
     "For tests: a fence of the mock device's own streams answers \"not yet\" to this many "
     "polls before it passes (the copies themselves still run at once), so the paths that "
     "wait for a GPU's asynchronous work run as on a GPU"},
    {"LOOM_DEVICE_MOCK_PACKED", "0",
     "For tests: the mock device packs allocations up to 256 KiB into shared 2 MiB regions "
     "at 256-byte alignment, as cudaMalloc does (a page then holds several allocations and "
     "the unallocated gaps between them, each allocation's range being the bytes asked for), "
     "and the program's allocations (loom_mock_device_malloc) are not announced to Loom's "
     "memory-kind cache, as a program's cudaMalloc is not"},
    {"LOOM_DEVICE_MOCK_ASYNC", "0",
     "For tests: 1 or more makes the mock device's own streams (Loom's copies, fences and "
     "reductions on them) queues that a thread of their own runs in order, as a GPU does: "
     "work is done some time after it was queued, and only a fence tells when; each item "
     "first sleeps this many microseconds (1: barely), so ordering mistakes between Loom's "
     "streams and host code show up; 0: the copies run at once"},
    {"LOOM_DEVICE_MEMKIND_CACHE", "1",
     "Remember which pointers are host memory (by page) and which are device allocations (by "
     "range), so small host messages cost no driver call; 0 asks the driver every time"},
    {"LOOM_DEVICE_STAGE_CACHE", "64m",
     "Bytes of pinned host buffers kept for reuse by the staging of device buffers (each size "
     "class rounded to a power of two); 0 frees them after each use"},
    {"LOOM_DEVICE_IPC", "1",
     "Point-to-point between ranks of a node: a contiguous device buffer from "
     "LOOM_DEVICE_IPC_MIN bytes up is mapped by the receiver (CUDA IPC) and copied in one "
     "device copy; 0: staged through host memory instead"},
    {"LOOM_DEVICE_IPC_MIN", "4k", "Smallest device message sent by CUDA IPC on a node"},
    {"LOOM_DEVICE_IPC_CACHE", "64",
     "Peer device allocations a rank keeps mapped (CUDA IPC) for later messages; the least "
     "recently used is unmapped past this (an allocation seen replaced at once)"},
    {"LOOM_DEVICE_PIPELINE_MIN", "64k",
     "Smallest contiguous device message staged through host memory in chunks (the device "
     "copy of one overlapping the transport's work on another) rather than whole"},
    {"LOOM_DEVICE_PIPELINE_CHUNK", "64k",
     "Bytes per chunk of a staged device message (LOOM_DEVICE_PIPELINE_MIN); four pinned "
     "chunks per message in flight"},
    // Launcher
    {"LOOM_KILL_GRACE_MS", "1000",
     "loomrun: milliseconds between SIGTERM and SIGKILL when it tears a job down"},
    {"LOOM_PMIX_TIMEOUT", "30",
     "Seconds any wait on a PMIx operation (fence, get, a server callback) may take before "
     "it is reported as a failure"},
};

std::string_view envValue(std::string_view name) {
  // getenv needs a NUL-terminated name; every name is short.
  char buf[128];
  if (name.size() >= sizeof buf) return {};
  std::memcpy(buf, name.data(), name.size());
  buf[name.size()] = '\0';
  const char* v = std::getenv(buf);
  return v ? std::string_view(v) : std::string_view();
}

const Param& require(std::string_view name) {
  const Param* p = find(name);
  assert(p && "unknown LOOM_* parameter");
  static const Param kMissing{"?", "", ""};
  return p ? *p : kMissing;
}

}  // namespace

std::span<const Param> all() { return kParams; }

const Param* find(std::string_view name) {
  for (const auto& p : kParams)
    if (name == p.name) return &p;
  return nullptr;
}

std::string getString(std::string_view name) {
  const Param& p = require(name);
  std::string_view v = envValue(name);
  return v.empty() ? std::string(p.defaultValue) : std::string(v);
}

bool parseInt(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  size_t i = 0;
  bool neg = false;
  if (text[0] == '-' || text[0] == '+') {
    neg = text[0] == '-';
    i = 1;
  }
  if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  int64_t v = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (text[i] - '0');
  }
  int shift = 0;
  if (i < text.size()) {
    switch (std::tolower(static_cast<unsigned char>(text[i]))) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      default: return false;
    }
    ++i;
    if (i < text.size() && (text[i] == 'b' || text[i] == 'B')) ++i;  // "4kB"
  }
  if (i != text.size()) return false;
  if (shift && v > (INT64_MAX >> shift)) return false;
  v <<= shift;
  *out = neg ? -v : v;
  return true;
}

bool parseBool(std::string_view text, bool* out) {
  std::string t(text);
  for (auto& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "1" || t == "yes" || t == "true" || t == "on") {
    *out = true;
    return true;
  }
  if (t == "0" || t == "no" || t == "false" || t == "off") {
    *out = false;
    return true;
  }
  return false;
}

int64_t getInt(std::string_view name) {
  const Param& p = require(name);
  int64_t v = 0;
  std::string_view env = envValue(name);
  if (!env.empty()) {
    if (parseInt(env, &v)) return v;
    log::warn("%s=%.*s is not an integer; using the default %s", p.name, (int)env.size(),
              env.data(), p.defaultValue);
  }
  return parseInt(p.defaultValue, &v) ? v : 0;
}

bool getBool(std::string_view name) {
  const Param& p = require(name);
  bool v = false;
  std::string_view env = envValue(name);
  if (!env.empty()) {
    if (parseBool(env, &v)) return v;
    log::warn("%s=%.*s is not a boolean; using the default %s", p.name, (int)env.size(),
              env.data(), p.defaultValue);
  }
  return parseBool(p.defaultValue, &v) ? v : false;
}

}  // namespace loom::params
