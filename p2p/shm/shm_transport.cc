#include "p2p/shm/shm_transport.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <span>

#include "core/bootstrap.h"
#include "core/log.h"
#include "core/segment.h"
#include "p2p/dtview.h"

namespace loom::p2p::shm {
namespace {

constexpr uint64_t kMagic = 0x4c4f4f4d53484d31;  // "LOOMSHM1"
constexpr size_t kLine = 64;
constexpr int kMaxLocal = 1024;

// A record in a ring: this prefix, then the payload, padded to 64 bytes.
// The producer writes `seq` last (release): it equals the record's position
// in the ring's byte stream (mod 2^32), so the consumer polls the record's
// own cache line instead of a separate tail, and a small message costs one
// cache-line transfer. Stale bytes from the previous lap carry a sequence
// number one ring-length behind and are never mistaken for a new record. A
// padding record (payloadBytes == kPad) says "continue at the ring's start".
struct RecordPrefix {
  std::atomic<uint32_t> seq;
  uint32_t payloadBytes;
  MsgHeader hdr;
};
static_assert(sizeof(RecordPrefix) == 40);
constexpr uint32_t kPad = 0xffffffffu;

size_t recordBytes(size_t payloadBytes) {
  return (sizeof(RecordPrefix) + payloadBytes + kLine - 1) & ~(kLine - 1);
}

// The consumer's progress, read by the producer only when the ring looks
// full; on its own cache line.
struct alignas(kLine) RingControl {
  alignas(kLine) std::atomic<uint64_t> head;
};

struct SegmentHeader {
  uint64_t magic;
  uint32_t localSize;
  uint32_t reserved;
  uint64_t ringBytes;
  std::atomic<uint32_t> attached;
  uint64_t leaderWords[kLeaderWords];  // local rank 0's words to the others (setLeaderWords)
  int32_t pid[kMaxLocal];
  uint64_t probeAddr[kMaxLocal];  // address of a known word in each process
};

// Producer side of the ring to one peer.
struct TxRing {
  char* data = nullptr;
  RingControl* rc = nullptr;
  uint64_t tail = 0;        // where our next record goes
  uint64_t cachedHead = 0;  // last head we read
  uint64_t reservedAt = 0;  // position of the reserved record
  uint64_t warmTo = 0;      // bytes of it whose pages are mapped (warmRing)
};

// Consumer side of the ring from one peer.
struct RxRing {
  char* data = nullptr;
  RingControl* rc = nullptr;
  uint64_t head = 0;
  int srcJob = 0;
  uint64_t warmTo = 0;
};

// This process's view.
struct State {
  Config cfg;
  std::string name;        // shm_open name (when segments are named, core/segment.h)
  segment::Segment seg;    // the mapping (and, on the creator, its memfd until connect())
  void* base = nullptr;
  size_t bytes = 0;
  int me = 0;              // local index
  int n = 0;               // local size
  SegmentHeader* header = nullptr;
  bool cma = false;
  int32_t pid = 0;         // ours: getpid() is a system call on every call
  uint64_t ring = 0;       // ring bytes (a power of two), copied out of the header
  uint64_t mask = 0;       // ring - 1
  std::vector<int> localOf;  // job rank -> local index or -1
  std::vector<TxRing> tx;    // by destination local index
  std::vector<RxRing> rx;    // one per peer (not ourselves), polled in this order
} gS;

const uint64_t kProbeWord = 0x5052424543484b21;  // read by peers to test CMA
// Bootstrap key of local rank 0's segment handle (core/segment.h).
constexpr const char* kSegmentKey = "loom.shm";

size_t headerBytes();
size_t ringStride() { return sizeof(RingControl) + gS.header->ringBytes; }

RingControl* ringControl(int from, int to) {
  size_t index = static_cast<size_t>(from) * gS.n + to;
  auto* p = static_cast<char*>(gS.base) + headerBytes() + index * ringStride();
  return reinterpret_cast<RingControl*>(p);
}
char* ringData(int from, int to) {
  return reinterpret_cast<char*>(ringControl(from, to)) + sizeof(RingControl);
}

size_t headerBytes() { return (sizeof(SegmentHeader) + kLine - 1) / kLine * kLine; }

// ---- transport table ----

size_t maxPayload() { return gS.ring / 4 - sizeof(RecordPrefix); }

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

// Maps a ring's pages into this process ahead of use, in two steps: what
// the ring's first record needs (16 KiB for a small one), then with its
// second record the rest of the ring. Left to demand faults, the
// first pass through a 1 MB ring faults every 4 KiB on both sides (~9 us
// each in these VMs, and the peer waits): small messages took 0.29 us
// instead of 0.15 us for the first ~16 000 of them. One madvise costs ~2 us
// a page instead, and only for the rings a rank uses. The whole ring at the
// first message cost ~0.5 ms per ring and side: a rank's first exchange
// with 7 peers spent ~7 ms of CPU there, which oversubscribed ranks took
// from the ones still finishing their previous call (8 ranks on 2 cores,
// a 1 KiB-block alltoall through shared memory: 15 us a call alone, 60-80
// when the first message-based call followed it). Mapped bit by bit (16 KiB
// then doubling) the same work fell into the first dozens of exchanges
// instead, where a benchmark's warm-up no longer covers it (16 ranks,
// 16 KiB alltoall blocks: 880-945 us a call against 745-800). A second
// record of a small-message exchange belongs to a later call, which starts
// once the first one, and so every rank's previous call, is over; in a
// benchmark that is the warm-up. MADV_POPULATE_WRITE maps
// pages writable without writing them (the peer may be using the ring);
// where the kernel lacks it, demand faults remain.
constexpr uint64_t kWarmStep = 16 << 10;  // the first step

// `upTo`: a stream position (they start at R, see setup); from 2R on the
// stream has wrapped and the whole ring is needed.
[[gnu::noinline, gnu::cold]] void warmRing(char* data, uint64_t* warmTo, uint64_t upTo) {
  const uint64_t R = gS.ring;
  const uint64_t at = upTo > R ? upTo - R : 0;
  const uint64_t target =
      *warmTo == 0 && at < R ? std::min(R, (at + kWarmStep - 1) & ~(kWarmStep - 1)) : R;
  if (target <= *warmTo) return;
  const uintptr_t page = 4096;
  const uintptr_t lo = reinterpret_cast<uintptr_t>(data + *warmTo) & ~(page - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(data + target) + page - 1) & ~(page - 1);
  (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);
  *warmTo = target;
}

// Room for a record of `need` bytes at the producer's tail (after a padding
// record when it would straddle the ring's end): its prefix, or nullptr.
inline RecordPrefix* reserveIn(TxRing& t, size_t need) {
  const uint64_t R = gS.ring;
  // A record and its padding end before tail + 2 * need.
  if (t.warmTo < R) [[unlikely]]
    warmRing(t.data, &t.warmTo, t.tail + 2 * need);
  uint64_t pos = t.tail;
  size_t off = pos & gS.mask;
  size_t pad = (R - off < need) ? R - off : 0;
  if (pos + pad + need - t.cachedHead > R) [[unlikely]] {
    t.cachedHead = t.rc->head.load(std::memory_order_acquire);
    if (pos + pad + need - t.cachedHead > R) return nullptr;
  }
  if (pad) [[unlikely]] {
    auto* p = reinterpret_cast<RecordPrefix*>(t.data + off);
    p->payloadBytes = kPad;
    p->seq.store(static_cast<uint32_t>(pos), std::memory_order_release);
    pos += pad;
    off = 0;
  }
  t.reservedAt = pos;
  return reinterpret_cast<RecordPrefix*>(t.data + off);
}

// Publishes the record at `pos`: header first, the sequence number last.
inline void publish(TxRing& t, RecordPrefix* p, uint64_t pos, const MsgHeader& hdr,
                    size_t payloadBytes) {
  p->payloadBytes = static_cast<uint32_t>(payloadBytes);
  p->hdr = hdr;
  // Release (a plain store on x86): payload and header are visible before the
  // sequence number.
  p->seq.store(static_cast<uint32_t>(pos), std::memory_order_release);
  t.tail = pos + recordBytes(payloadBytes);
}

void* reserve(int peer, size_t payloadBytes) {
  RecordPrefix* p = reserveIn(gS.tx[gS.localOf[peer]], recordBytes(payloadBytes));
  return p ? p + 1 : nullptr;
}

void commit(int peer, const MsgHeader& hdr, size_t payloadBytes) {
  TxRing& t = gS.tx[gS.localOf[peer]];
  auto* p = reinterpret_cast<RecordPrefix*>(t.data + (t.reservedAt & gS.mask));
  publish(t, p, t.reservedAt, hdr, payloadBytes);
}

// Rendezvous reads are CMA reads of the sender's memory: nothing to
// register, the key is the sender's pid (cached: a root scattering to 15
// ranks would otherwise make 15 getpid() system calls per call).
bool expose(int, const void* addr, size_t, unsigned, RemoteKey* key, void** handle) {
  if (!gS.cma) return false;
  key->addr = reinterpret_cast<uint64_t>(addr);
  key->key = static_cast<uint64_t>(gS.pid);
  *handle = nullptr;
  return true;
}

void unexpose(void*) {}

OneSidedResult read(int, const RemoteKey& key, uint64_t offset, void* local, size_t bytes,
                    OneSidedDoneFn, void*) {
  if (!gS.cma) return OneSidedResult::kUnavailable;
  const int pid = static_cast<int>(key.key);
  const uint64_t remoteAddr = key.addr + offset;
  char* dst = static_cast<char*>(local);
  size_t done = 0;
  while (done < bytes) {
    iovec l{dst + done, bytes - done};
    iovec r{reinterpret_cast<void*>(remoteAddr + done), bytes - done};
    ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      log::error("process_vm_readv from pid %d failed: %s", pid, std::strerror(errno));
      // Nothing was promised yet only if nothing was read: the pipeline then
      // moves the whole message again.
      return OneSidedResult::kUnavailable;
    }
    done += static_cast<size_t>(n);
  }
  return OneSidedResult::kDone;
}

// Delivers every record waiting in one ring (at least one is).
[[gnu::noinline]] int drain(RxRing& rr, DeliverFn deliver) {
  int events = 0;
  const uint64_t R = gS.ring;
  uint64_t head = rr.head;
  auto* p = reinterpret_cast<RecordPrefix*>(rr.data + (head & gS.mask));
  do {
    if (rr.warmTo < R) [[unlikely]]
      warmRing(rr.data, &rr.warmTo, head + kWarmStep);
    if (p->payloadBytes == kPad) {
      head += R - (head & gS.mask);
    } else {
      deliver(rr.srcJob, p->hdr, p + 1, p->payloadBytes);
      ++events;
      head += recordBytes(p->payloadBytes);
    }
    // Free the space at once: a sender streaming a large message can go on
    // while we handle the rest.
    rr.rc->head.store(head, std::memory_order_release);
    p = reinterpret_cast<RecordPrefix*>(rr.data + (head & gS.mask));
  } while (p->seq.load(std::memory_order_acquire) == static_cast<uint32_t>(head));
  rr.head = head;
  return events;
}

int pollTable(const Handlers& h) { return poll(h.deliver); }

ProtocolLimits gLimits;
// No write: the rma layer stores into a node peer's memory itself (mapped,
// or by CMA).
const Transport kShm = {"shm",  &gLimits, maxPayload, reserve, commit,
                        expose, unexpose, read,       nullptr, pollTable};

bool probeCma() {
  if (gS.n < 2) return false;
  int peer = (gS.me + 1) % gS.n;
  uint64_t word = 0;
  iovec l{&word, sizeof word};
  iovec r{reinterpret_cast<void*>(gS.header->probeAddr[peer]), sizeof word};
  ssize_t n = process_vm_readv(gS.header->pid[peer], &l, 1, &r, 1, 0);
  if (n != sizeof word || word != kProbeWord) {
    log::debug("p2p", "CMA unavailable (%s); using the copy pipeline for large messages",
               n < 0 ? std::strerror(errno) : "short read");
    return false;
  }
  return true;
}

}  // namespace

Status setup(const Config& cfg) {
  gS = State();
  gS.cfg = cfg;
  gS.n = static_cast<int>(cfg.localPeers.size());
  if (gS.n > kMaxLocal) return errorf(MPI_ERR_INTERN, "more than %d ranks on one node", kMaxLocal);
  gS.me = -1;
  for (int i = 0; i < gS.n; ++i)
    if (cfg.localPeers[i] == cfg.myJobRank) gS.me = i;
  if (gS.me < 0) return errorf(MPI_ERR_INTERN, "rank %d is not among its node's ranks", cfg.myJobRank);
  if (gS.n < 2) return Status::ok();  // alone on the node: nothing to share

  // Rings shrink when many ranks share a node, keeping the segment < ~1 GiB.
  size_t ring = cfg.ringBytes;
  if (ring < 4096 || (ring & (ring - 1)) != 0)
    return errorf(MPI_ERR_ARG, "LOOM_SHM_RING_BYTES=%zu must be a power of two >= 4096", ring);
  while (ring > 16384 && static_cast<size_t>(gS.n) * (gS.n - 1) * ring > (size_t{1} << 30))
    ring /= 2;
  // Named after the node too: simulated nodes (loomrun --nodes) share /dev/shm.
  gS.name = "/loom-" + cfg.nspace + "-n" + std::to_string(cfg.nodeId) + "-shm";
  gS.bytes = headerBytes() + static_cast<size_t>(gS.n) * gS.n * (sizeof(RingControl) + ring);

  if (gS.me == 0) {
    // A memfd (or, where peers could not take one, a named segment): its
    // handle goes to the others through the bootstrap's fence.
    Bootstrap* boot = gS.cfg.boot;
    segment::Handle handle;
    LOOM_TRY(segment::create(gS.name, gS.bytes, &gS.seg, &handle));
    Status st = boot->put(kSegmentKey, std::as_bytes(std::span(&handle, 1)));
    if (!st.isOk()) {
      segment::unlinkName(&gS.seg);
      segment::unmap(&gS.seg);
      return st;
    }
    gS.base = gS.seg.base;
    gS.header = new (gS.base) SegmentHeader();
    gS.header->localSize = static_cast<uint32_t>(gS.n);
    gS.header->ringBytes = ring;
    gS.header->attached.store(0);
    // Stream positions start at one ring length, not 0: the fresh (zero)
    // pages then hold no valid sequence number (positions R..2R-1 are never
    // 0 mod 2^32), so nothing needs clearing.
    for (int from = 0; from < gS.n; ++from)
      for (int to = 0; to < gS.n; ++to) ringControl(from, to)->head.store(ring);
    std::atomic_thread_fence(std::memory_order_release);
    gS.header->magic = kMagic;
  }
  return Status::ok();
}

void setLeaderWords(const uint64_t (&w)[kLeaderWords]) {
  if (gS.n >= 2 && gS.me == 0 && gS.header) {
    for (int i = 0; i < kLeaderWords; ++i) gS.header->leaderWords[i] = w[i];
    std::atomic_thread_fence(std::memory_order_release);
  }
}

bool leaderWords(uint64_t (&w)[kLeaderWords]) {
  if (gS.n < 2 || !gS.header) return false;
  std::atomic_thread_fence(std::memory_order_acquire);
  for (int i = 0; i < kLeaderWords; ++i) w[i] = gS.header->leaderWords[i];
  return true;
}

Status connect() {
  if (gS.n < 2) return Status::ok();
  if (gS.me != 0) {
    Bootstrap* boot = gS.cfg.boot;
    std::vector<std::byte> blob;
    LOOM_TRY(boot->get(gS.cfg.localPeers[0], kSegmentKey, &blob));
    segment::Handle handle;
    if (blob.size() != sizeof handle)
      return errorf(MPI_ERR_INTERN, "rank %d published a segment handle of %zu bytes",
                    gS.cfg.localPeers[0], blob.size());
    std::memcpy(&handle, blob.data(), sizeof handle);
    LOOM_TRY(segment::attach(gS.name, gS.bytes, handle, &gS.seg));
    gS.base = gS.seg.base;
    gS.header = static_cast<SegmentHeader*>(gS.base);
    if (gS.header->magic != kMagic || gS.header->localSize != static_cast<uint32_t>(gS.n))
      return errorf(MPI_ERR_INTERN, "shared segment %s is not this job's", gS.name.c_str());
  }
  gS.pid = getpid();
  gS.header->pid[gS.me] = gS.pid;
  gS.header->probeAddr[gS.me] = reinterpret_cast<uint64_t>(&kProbeWord);
  // A named segment: the last rank to map it removes its name, so from here
  // on it lives only as long as some rank maps it (a memfd never had one).
  if (gS.header->attached.fetch_add(1, std::memory_order_acq_rel) + 1 ==
      static_cast<uint32_t>(gS.n))
    segment::unlinkName(&gS.seg);
  while (gS.header->attached.load(std::memory_order_acquire) != static_cast<uint32_t>(gS.n))
    sched_yield();  // every local rank is past the fence, so this is short
  // Every peer holds its own mapping: the creator's memfd is no longer needed.
  segment::release(&gS.seg);

  gS.localOf.assign(gS.cfg.localPeers.back() + 1, -1);
  for (int i = 0; i < gS.n; ++i) gS.localOf[gS.cfg.localPeers[i]] = i;
  gS.ring = gS.header->ringBytes;
  gS.mask = gS.ring - 1;
  const uint64_t start = gS.ring;  // see setup()
  gS.tx.assign(gS.n, TxRing());
  gS.rx.clear();
  for (int i = 0; i < gS.n; ++i) {
    TxRing& t = gS.tx[i];
    t.data = ringData(gS.me, i);
    t.rc = ringControl(gS.me, i);
    t.tail = t.cachedHead = t.reservedAt = start;
    if (i == gS.me) continue;
    RxRing rr;
    rr.data = ringData(i, gS.me);
    rr.rc = ringControl(i, gS.me);
    rr.head = start;
    rr.srcJob = gS.cfg.localPeers[i];
    gS.rx.push_back(rr);
  }

  bool works = probeCma();
  if (gS.cfg.cmaMode == 1 && !works)
    return errorf(MPI_ERR_INTERN, "LOOM_SHM_CMA=1 but process_vm_readv does not work here");
  gS.cma = gS.cfg.cmaMode != 0 && works;
  log::debug("p2p", "shm: %d local ranks, rings of %llu bytes, segment %zu bytes, CMA %s", gS.n,
             static_cast<unsigned long long>(gS.header->ringBytes), gS.bytes,
             gS.cma ? "on" : "off");
  return Status::ok();
}

void finalize() {
  segment::unmap(&gS.seg);
  gS.base = nullptr;
  gS.header = nullptr;
  gS.n = 0;
}

bool active() { return gS.header != nullptr; }

bool reaches(int jobRank) {
  return gS.header && jobRank >= 0 && jobRank < static_cast<int>(gS.localOf.size()) &&
         gS.localOf[jobRank] >= 0 && jobRank != gS.cfg.myJobRank;
}

const Transport* transport() { return &kShm; }

int poll(DeliverFn deliver) {
  int events = 0;
  // The idle case is one load per peer: the next record's sequence number.
  for (RxRing& rr : gS.rx) {
    auto* p = reinterpret_cast<const RecordPrefix*>(rr.data + (rr.head & gS.mask));
    if (p->seq.load(std::memory_order_acquire) == static_cast<uint32_t>(rr.head)) [[unlikely]]
      events += drain(rr, deliver);
  }
  return events;
}

bool send(int peerJob, const MsgHeader& hdr, const void* data, size_t bytes) {
  TxRing& t = gS.tx[gS.localOf[peerJob]];
  RecordPrefix* p = reserveIn(t, recordBytes(bytes));
  if (!p) return false;
  copyBytes(p + 1, data, bytes);
  publish(t, p, t.reservedAt, hdr, bytes);
  return true;
}

bool cmaWorks() { return gS.cma; }

ProtocolLimits* limits() { return &gLimits; }

}  // namespace loom::p2p::shm
