#include "coll/selector.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <new>
#include <string>
#include <vector>

#include "coll/coll_stage.h"
#include "coll/comm_info.h"
#include "p2p/p2p.h"
#include "coll/device_pipe.h"
#include "core/progress.h"
#include "coll/op.h"
#include "coll/shm/shm_coll.h"
#include "core/log.h"
#include "core/params.h"

namespace loom::coll {
namespace {

constexpr size_t kAny = SIZE_MAX;
constexpr int kAnyRanks = 1 << 30;

// A rule for oversubscribed nodes only (Rule::oversubscribedOnly), on one
// node.
constexpr Rule oversubscribed(Collective c, size_t maxBytes, const char* algorithm,
                              int minRanks = 2, int maxRanks = 64) {
  Rule r{c, maxBytes, minRanks, maxRanks, false, algorithm, 1, 1};
  r.oversubscribedOnly = true;
  return r;
}

// A device rule (Rule::mem): which device calls run natively.
constexpr Rule onDevice(Collective c, size_t maxBytes, int minRanks, int maxRanks, bool pow2Only,
                        const char* algorithm) {
  Rule r{c, maxBytes, minRanks, maxRanks, pow2Only, algorithm};
  r.mem = device::MemKind::kDevice;
  return r;
}
// A device rule for jobs of at least `minNodes` nodes.
constexpr Rule onDeviceNodes(Collective c, size_t maxBytes, const char* algorithm, int minNodes) {
  Rule r{c, maxBytes, 1, kAnyRanks, false, algorithm, minNodes};
  r.mem = device::MemKind::kDevice;
  return r;
}
// A device rule for oversubscribed nodes, where a host rule of the same key
// picks a shared-memory algorithm (staged: device ranks run it too).
constexpr Rule onDeviceOversubscribed(Collective c, size_t maxBytes, const char* algorithm) {
  Rule r = oversubscribed(c, maxBytes, algorithm);
  r.mem = device::MemKind::kDevice;
  return r;
}

// A rule for one node where the measured CMA window decides (Rule::cma).
constexpr Rule byCma(Collective c, size_t maxBytes, int minRanks, int maxRanks,
                     const char* algorithm, Rule::Cma cma) {
  Rule r{c, maxBytes, minRanks, maxRanks, false, algorithm, 1, 1};
  r.cma = cma;
  return r;
}

// The rules, first match wins. `bytes` is, per collective: bcast, reduce,
// allreduce, scan, exscan: the whole buffer (count * type size); gather,
// scatter, allgather, alltoall: one rank's block; the v/w variants: the
// largest block; reduce_scatter: the whole input; barrier: 0.
// Every threshold here was measured; see docs/benchmarks.md.
constexpr Rule kRules[] = {
    // ---- begin barrier ----
    // Several nodes (hierarchical rules: minNodes 2; their supports()
    // decline one rank per node, where the flat rules apply). Not measured:
    // from each algorithm's alpha-beta model with alpha_l ~0.5 us and beta_l
    // ~0.1 ns/B inside a node, alpha_n ~5 us and beta_n ~0.1 ns/B between
    // nodes (see each file's first comment). Barrier: 2 log2 m local + log2 N
    // network latencies against ~log2 p network ones: any size.
    {Collective::kBarrier, kAny, 1, kAnyRanks, false, "hierarchical", 2},
    // One node: every rank reads every flag, one cache line per peer.
    {Collective::kBarrier, kAny, 2, 64, false, "shm", 1, 1},
    {Collective::kBarrier, kAny, 1, kAnyRanks, false, "dissemination"},
    // ---- end barrier ----
    // ---- begin data movement ----
    // Not yet measured on Loom: these start from MPICH's published defaults
    // and the algorithms' cost formulas (each file's first comment).
    // Several nodes: one message per node and level across the network
    // beats scatter_allgather's p - 1 network latencies up to ~440 KB at 2
    // nodes of 8 (more with more nodes); 256 KiB to stay clear of it.
    {Collective::kBcast, 262144, 1, kAnyRanks, false, "hierarchical", 2},
    // bcast: p <= 2: the tree is one message, skip its bookkeeping. Up to
    // 12 KiB (MPICH's short-message limit) or below 8 ranks the binomial
    // tree's log2(p) latencies win; above, scatter + ring allgather moves
    // ~2n bytes instead of log2(p) * n.
    // One node: the root stages, the others copy out in parallel. Up to
    // 64 KiB staging beats a rendezvous message, which copies twice too
    // (the copy pipeline) and adds a handshake: 2 ranks, medians of 5
    // interleaved runs, 32 KiB 3.0 us against 6.0 (Open MPI 6.7), 64 KiB
    // 5.9 against 10.2; even at 128 KiB, 11.9 against 12.7 (2026-11-23,
    // docs/benchmarks.md). Not when oversubscribed (the root would wait
    // for its readers every call; shmRootedSupports).
    // 2 ranks where the node's measured window reads by CMA (docs/tuning.md):
    // one message, one copy, beats staging's two. Intel Xeon VM (CMA from
    // 16 KiB), 2 ranks: 16 KiB 1.32 us against 1.61, 32 KiB 1.94 against
    // 3.27, 64 KiB 2.94 against 6.31 (Open MPI 1.46, 2.21, 3.30). At 4
    // ranks staging still wins (32 KiB 3.1 us against 12.2 for the tree).
    byCma(Collective::kBcast, kAny, 2, 2, "linear", Rule::Cma::kInCma),
    {Collective::kBcast, 65536, 2, 64, false, "shm", 1, 1},
    // Oversubscribed, one node: the root stages the whole message ahead
    // (LOOM_COLL_SHM_DEPTH slots) and the readers copy it out when they
    // run; scatter_allgather's rounds each cost a context switch. 8 ranks
    // on 2 cores, 1 MiB: 0.56-0.72 ms against 2.1-3.1 (Open MPI 0.70-0.97);
    // 16 ranks 0.83-1.3 ms against 5.7-11.6 (Open MPI 5.0-8.9).
    oversubscribed(Collective::kBcast, kAny, "shm"),
    {Collective::kBcast, kAny, 1, 2, false, "linear"},
    {Collective::kBcast, 12288, 1, kAnyRanks, false, "binomial"},
    {Collective::kBcast, kAny, 1, 7, false, "binomial"},
    {Collective::kBcast, kAny, 1, kAnyRanks, false, "scatter_allgather"},
    // Device buffers: above 64 KiB on one node (256 KiB on several) the
    // host rules give linear, binomial or scatter_allgather, which send and
    // receive pieces of the buffer as they are (CUDA IPC on a node, chunked
    // staging between nodes): native. Below, and when oversubscribed, the
    // host picks shm or hierarchical: staged. H100, 4 ranks on one GPU
    // under MPS, staged: 1 MiB 354-381 us, 16 MiB 4.6-5.8 ms, 64 MiB
    // 74-84 ms.
    onDeviceOversubscribed(Collective::kBcast, kAny, kStaged),
    onDevice(Collective::kBcast, 65536, 1, kAnyRanks, false, kStaged),
    onDeviceNodes(Collective::kBcast, 262144, kStaged, 2),
    onDevice(Collective::kBcast, kAny, 1, 2, false, "linear"),
    onDevice(Collective::kBcast, kAny, 1, 7, false, "binomial"),
    onDevice(Collective::kBcast, kAny, 1, kAnyRanks, false, "scatter_allgather"),
    // gather, scatter (bytes: one block): the tree's extra copies through
    // scratch pay off only while latency dominates (small blocks) and when
    // it has inner ranks at all (p >= 4). gatherv/scatterv: linear only.
    // One node, small blocks: shared memory (measured 2-3x faster than the
    // messages up to 4 KiB blocks for gather, 2 KiB for scatter, 1 KiB for
    // alltoall, at 2 and 4 ranks; scatter not when oversubscribed).
    // Oversubscribed (128 slots per rank): staging beats the trees' rounds
    // further, up to 16 KiB blocks. 8 ranks on 2 cores, 100 calls, two runs:
    // gather of 4 KiB blocks 6.6-6.8 us against 31-38 (binomial), of 16 KiB
    // 56-58 against 79-86; scatter of 4 KiB blocks 2.6-7.9 against 26-28,
    // of 16 KiB 8.9-22 against 37-47. Scatter at 4-8 ranks up to 64 KiB
    // blocks, since its root may run half the slots ahead within a call
    // (shm_steps.h, rootWindow): 100 calls, shm / linear / Open MPI, 4
    // ranks 64 KiB 11-18 / 20-21 / 23-30 us; 5 ranks 11-26 / 29-31; 8 ranks
    // 32 KiB 15-25 / 32-44 / 35-47, 64 KiB 33-41 / 44-60 / 42-108 (2-6
    // interleaved runs); on a page with a slow spell (one repeat of three
    // 2.6x slower), medians of 32 and 64 KiB blocks 20 and 35 us against
    // Open MPI's 36 and 51 (the messages, next page: 30 and 46). Not at 16
    // ranks, whose root stages 16 times a reader's work on a core it shares
    // with 7 readers: twice as fast as the messages in quiet interleaved
    // runs (32 KiB blocks 34-57 against 92-111 us), but 1.5-3x slower in
    // two of three repeats of that page (docs/benchmarks.md, "the root's
    // window"). From 32 KiB blocks at 2-3 ranks: no clear winner.
    oversubscribed(Collective::kGather, 16384, "shm"),
    oversubscribed(Collective::kScatter, 65536, "shm", 4, 8),
    oversubscribed(Collective::kScatter, 16384, "shm"),
    // 2 ranks on a node whose measured window reads by CMA: staged up to
    // where the window starts (the messages below it copy twice too, and
    // add a handshake or a ring's worth of records), messages from there.
    // Intel Xeon VM, CMA from 16 KiB, blocks of 4 and 8 KiB: gather 0.60
    // and 0.59 us against 1.45 and 1.84, scatter 0.40 and 0.60 against 1.14
    // and 2.07; 16 KiB blocks: messages 1.54 and 1.26 against 2.03 and 2.21.
    byCma(Collective::kGather, 65536, 2, 2, "shm", Rule::Cma::kBelowCma),
    byCma(Collective::kScatter, 65536, 2, 2, "shm", Rule::Cma::kBelowCma),
    {Collective::kGather, 4096, 2, 64, false, "shm", 1, 1},
    {Collective::kScatter, 2048, 2, 64, false, "shm", 1, 1},
    {Collective::kGather, 16384, 4, kAnyRanks, false, "binomial"},
    {Collective::kGather, kAny, 1, kAnyRanks, false, "linear"},
    {Collective::kScatter, 16384, 4, kAnyRanks, false, "binomial"},
    {Collective::kScatter, kAny, 1, kAnyRanks, false, "linear"},
    {Collective::kGatherv, kAny, 1, kAnyRanks, false, "linear"},
    {Collective::kScatterv, kAny, 1, kAnyRanks, false, "linear"},
    // Device buffers: where the host rules give linear (blocks above 16 KiB,
    // not oversubscribed; gatherv and scatterv always) the root receives or
    // sends the blocks as they are (CUDA IPC on a node, the pinned pipeline
    // between nodes) and copies its own on the device: native. Shared
    // memory and the trees (through packed host scratch): staged, also the
    // sizes where an oversubscribed node may pick shared memory.
    onDeviceOversubscribed(Collective::kGather, 16384, kStaged),
    onDeviceOversubscribed(Collective::kScatter, 65536, kStaged),
    onDevice(Collective::kGather, 16384, 1, kAnyRanks, false, kStaged),
    onDevice(Collective::kScatter, 16384, 1, kAnyRanks, false, kStaged),
    onDevice(Collective::kGather, kAny, 1, kAnyRanks, false, "linear"),
    onDevice(Collective::kScatter, kAny, 1, kAnyRanks, false, "linear"),
    onDevice(Collective::kGatherv, kAny, 1, kAnyRanks, false, "linear"),
    onDevice(Collective::kScatterv, kAny, 1, kAnyRanks, false, "linear"),
    // Several nodes: leaders exchange whole nodes in log2 N steps; its node
    // broadcast copies the whole result log2 m times, so the ring catches
    // up near 10 KB blocks (2 nodes of 8): up to 8 KiB blocks.
    {Collective::kAllgather, 8192, 1, kAnyRanks, false, "hierarchical", 2},
    // allgather (bytes: one block): recursive doubling has the fewest
    // latencies and no copies on powers of two up to 32 KiB blocks (beyond,
    // the ring's neighbour-only traffic is kinder to memory and networks);
    // Bruck's log2 latencies beat the ring for blocks up to 2 KiB despite
    // its pack/unpack of the whole result; the ring for the rest.
    // One node: all stage, all copy every block; up to 4 KiB blocks (p
    // blocks are copied out per rank, two copies per byte).
    {Collective::kAllgather, 4096, 2, 64, false, "shm", 1, 1},
    // Oversubscribed: all stage their block ahead (LOOM_COLL_SHM_DEPTH
    // slots) and copy the others when they run, one synchronisation where
    // the ring and recursive doubling need a context switch per step. On 2
    // cores, 100-200 calls, two runs: 8 ranks, 4 KiB blocks 15 us against
    // 31-43 (recursive doubling), 16 KiB 74 against 96-101, 128 KiB 262-326
    // against 463-465 (Open MPI 414-441); 16 ranks, 4 KiB blocks 53-60
    // against 107-116, 64 KiB 0.68-0.72 ms against 2.5 (Open MPI
    // 1.06-1.34). Up to 2 KiB blocks they measured alike.
    oversubscribed(Collective::kAllgather, kAny, "shm"),
    {Collective::kAllgather, 32768, 1, kAnyRanks, true, "recursive_doubling"},
    {Collective::kAllgather, 2048, 1, kAnyRanks, false, "bruck"},
    {Collective::kAllgather, kAny, 1, kAnyRanks, false, "ring"},
    // Device buffers (device rules: see "Device rules" below the table).
    // Above 32 KiB blocks every host rule above gives the ring, which moves
    // device blocks as they are: native. Below, the host picks algorithms
    // that pack through host scratch (Bruck, shm) or are latency-bound, and
    // staging costs two copies of at most 32 KiB per block: staged.
    onDeviceOversubscribed(Collective::kAllgather, kAny, kStaged),
    onDevice(Collective::kAllgather, 32768, 1, kAnyRanks, false, kStaged),
    onDevice(Collective::kAllgather, kAny, 1, kAnyRanks, false, "ring"),
    // allgatherv (bytes: the largest block, known alike on every rank):
    // posting all at once costs one latency; fine for small blocks on up
    // to 8 ranks, the ring otherwise.
    {Collective::kAllgatherv, 1024, 1, 8, false, "linear"},
    {Collective::kAllgatherv, kAny, 1, kAnyRanks, false, "ring"},
    // Device: as allgather (bytes: the largest block, alike on every rank).
    onDevice(Collective::kAllgatherv, 32768, 1, kAnyRanks, false, kStaged),
    onDevice(Collective::kAllgatherv, kAny, 1, kAnyRanks, false, "ring"),
    // alltoall (bytes: one block): MPICH's limits: Bruck for blocks up to
    // 256 B on 8 ranks or more (log2 p latencies for log2(p)/2 times the
    // data), everything posted at once up to 32 KiB, pairwise beyond (one
    // peer at a time, no congestion).
    {Collective::kAlltoall, 1024, 2, 64, false, "shm", 1, 1},
    // Oversubscribed: everything posted at once, so whichever ranks run
    // move whatever is ready (pairwise waits for one partner per step), the
    // larger blocks read by the receiver alone (LOOM_SHM_CMA_MIN's
    // oversubscribed default). 8 ranks on 2 cores, 60 calls, three runs:
    // 64 KiB blocks 242-250 us against 384-386 (pairwise, pipelined), 128
    // KiB 444-496 against 776-778 (Open MPI 291-309 and 472-565); 16 ranks,
    // 64 KiB blocks 1.72-1.85 ms against 2.18-2.41 (Open MPI 1.74-1.77).
    // Staged up to 2 KiB blocks: 8 ranks, 2 KiB blocks, 100 calls, three
    // runs: 19-27 us against 29-34 (linear; Open MPI 34-36); 16 ranks
    // 105-112 against 145-246; at 4 KiB blocks 8 ranks are mixed.
    oversubscribed(Collective::kAlltoall, 2048, "shm"),
    oversubscribed(Collective::kAlltoall, kAny, "linear"),
    {Collective::kAlltoall, 256, 8, kAnyRanks, false, "bruck"},
    {Collective::kAlltoall, 32768, 1, kAnyRanks, false, "linear"},
    {Collective::kAlltoall, kAny, 1, kAnyRanks, false, "pairwise"},
    // Device: above 32 KiB blocks the host rules give pairwise, which moves
    // device blocks as they are; below, staged (as allgather).
    onDevice(Collective::kAlltoall, 32768, 1, kAnyRanks, false, kStaged),
    onDevice(Collective::kAlltoall, kAny, 1, kAnyRanks, false, "pairwise"),
    // alltoallv/w (bytes: this rank's largest send or receive block, so
    // ranks may choose differently; linear and pairwise exchange the same
    // messages, so they still match).
    {Collective::kAlltoallv, 32768, 1, kAnyRanks, false, "linear"},
    {Collective::kAlltoallv, kAny, 1, kAnyRanks, false, "pairwise"},
    // Device: as alltoall; a host peer with smaller blocks may run linear,
    // which exchanges the same messages.
    onDevice(Collective::kAlltoallv, 32768, 1, kAnyRanks, false, kStaged),
    onDevice(Collective::kAlltoallv, kAny, 1, kAnyRanks, false, "pairwise"),
    {Collective::kAlltoallw, 32768, 1, kAnyRanks, false, "linear"},
    {Collective::kAlltoallw, kAny, 1, kAnyRanks, false, "pairwise"},
    // ---- end data movement ----
    // ---- begin reductions ----
    // Thresholds from the alpha-beta-gamma models in each algorithm's
    // header, with this VM's shm numbers (alpha ~0.5 us per message,
    // beta ~0.1 ns/B, gamma ~0.1 ns/B for a double SUM); not yet tuned by
    // a benchmark sweep. Non-commutative ops skip every algorithm whose
    // supports() declines them and land on an order-keeping one.
    // Several nodes, commutative ops: one vector per node and tree level
    // crosses the network; no worse than the flat binomial tree at any size.
    {Collective::kReduce, kAny, 1, kAnyRanks, false, "hierarchical", 2},
    // reduce: the binomial tree is latency-optimal and, without a
    // reduce-scatter + gather variant, also the best we have for large
    // vectors; the chain keeps rank order for non-commutative ops.
    // One node: all stage, the root folds; up to 16 KiB (beyond, the
    // two copies per byte lose to messages' single copy).
    // Oversubscribed: up to 32 KiB (8 ranks on 2 cores: 48 us against 54-82
    // for the binomial tree at 32 KiB, 53-58 against 82-114 at 16 KiB).
    // From 8 ranks up to 64 KiB (100 calls, three runs, shm against the
    // binomial tree at 64 KiB: 8 ranks 51-75 us against 82-88, 16 ranks
    // 126-154 against 214-219; Open MPI 246-300 at 16; at 128 KiB and at
    // 4 ranks mixed).
    oversubscribed(Collective::kReduce, 65536, "shm", 8, 64),
    oversubscribed(Collective::kReduce, 32768, "shm"),
    {Collective::kReduce, 16384, 2, 64, false, "shm", 1, 1},
    // 2 ranks: shm up to 64 KiB, with the ring of 64 slots that auto gives
    // them (shm_coll.cc, depthFor). Intel Xeon VM, back-to-back calls, two
    // runs, shm with 64 slots / shm with 4 / cma: 16 KiB 0.96-1.07 /
    // 1.64-1.67 / 2.49-2.85 us, 32 KiB 1.97-2.12 / 3.38-3.43 / 3.73-3.92,
    // 64 KiB 4.35-4.55 / 6.27-6.57 / 5.98-6.32 (Open MPI 2.9 at 32 KiB).
    {Collective::kReduce, 65536, 2, 2, false, "shm", 1, 1},
    // 2 ranks on a node whose measured window reads by CMA (docs/tuning.md),
    // above shm's range: each rank folds a chunk reading the other's input
    // directly, the peer writes its chunk into the root's result (the
    // root's work halves; no staging copy, no handshake). Intel Xeon VM
    // (CMA from 16 KiB), 2 ranks, one run each, cma / shm / binomial / Open
    // MPI: 32 KiB 3.5 / 3.2 / 4.9 / 2.8 us, 64 KiB 4.9 / 6.5 / 8.1 / 4.6,
    // 128 KiB 7.8 / 12.9 / 11.5 / 8.0, 512 KiB 28 / 52 / 33 / 30. Only up
    // to 64 KiB, where a rank with device buffers stages them and takes
    // these rules too: above, the device rules run the binomial tree
    // natively, and a host rank of the same call must exchange its
    // messages (gpumock.coll_mixed). Not measured at more ranks on cores
    // of their own (this VM has two).
    byCma(Collective::kReduce, 65536, 2, 2, "cma", Rule::Cma::kFromCma),
    {Collective::kReduce, kAny, 1, kAnyRanks, false, "binomial"},
    {Collective::kReduce, kAny, 1, kAnyRanks, false, "linear"},
    // Device buffers: above 64 KiB on one node the host rules give the
    // binomial tree, whose device form receives children's partials into
    // device scratch and folds them with the kernels: native. Below, when
    // oversubscribed (shared memory) and on several nodes (hierarchical):
    // staged. Non-commutative ops: linear, staged.
    onDeviceOversubscribed(Collective::kReduce, 65536, kStaged),
    onDevice(Collective::kReduce, 65536, 1, kAnyRanks, false, kStaged),
    onDeviceNodes(Collective::kReduce, kAny, kStaged, 2),
    onDevice(Collective::kReduce, kAny, 1, kAnyRanks, false, "binomial"),
    // Several nodes: local tree reduce, leaders' recursive doubling, local
    // bcast; it saves the m concurrent flows per node and network step of
    // the flat algorithms, but its trees move the whole vector 2 log2 m
    // times in the node, so flat Rabenseifner catches up near 50 KB at 2
    // nodes of 8 (later with more nodes; never at 4 nodes of 8, where its
    // first halving steps push 8 flows through each NIC): up to 64 KiB.
    {Collective::kAllreduce, 65536, 1, kAnyRanks, false, "hierarchical", 2},
    // allreduce: recursive doubling costs log p*(alpha + n*beta + n*gamma),
    // the ring and Rabenseifner ~2*n*beta + n*gamma plus 2(p-1) resp.
    // 2 log p alphas. At p = 8 the curves cross near n = 11*alpha /
    // (1.25*beta + 2*gamma) ~ 16-30 KB: below 16 KiB recursive doubling.
    // Above it Rabenseifner when p is a power of two (log p latency);
    // otherwise its fold-in/out adds 2*n*beta, so the ring up to 8 ranks
    // (where 2(p-1) alphas are still cheap) and Rabenseifner beyond.
    // One node: all stage, every rank folds every slot (p - 1 reads of n
    // bytes each); up to 16 KiB, where it measured 2-3x faster than
    // recursive doubling at 2 and 4 ranks and slower beyond.
    {Collective::kAllreduce, 16384, 2, 64, false, "shm", 1, 1},
    {Collective::kAllreduce, 16384, 1, kAnyRanks, false, "recursive_doubling"},
    {Collective::kAllreduce, kAny, 1, kAnyRanks, true, "rabenseifner"},
    {Collective::kAllreduce, kAny, 1, 8, false, "ring"},
    {Collective::kAllreduce, kAny, 9, kAnyRanks, false, "rabenseifner"},
    // Non-commutative at any size: recursive doubling keeps rank order at
    // log p cost (reduce_bcast would cost p-1 chain steps), so it is the
    // catch-all; reduce_bcast is reachable through the override only.
    {Collective::kAllreduce, kAny, 1, kAnyRanks, false, "recursive_doubling"},
    // Device buffers. Up to 64 KiB staged: there the host rules pick shm,
    // recursive doubling or hierarchical (none takes device buffers), and
    // a native ring or Rabenseifner pays a kernel launch and a fence per
    // step (5-10 us on current GPUs) where staging pays two copies of a
    // small buffer (~10 us each) and a host reduction at cache speed. Above
    // it the host rules give Rabenseifner or the ring by the same keys as
    // these (the host's 64 KiB hierarchical rule ends where these begin):
    // native, reduced on the device chunk by chunk. Not yet measured (no
    // GPU here): the 64 KiB line is from those per-step costs.
    onDevice(Collective::kAllreduce, 65536, 1, kAnyRanks, false, kStaged),
    onDevice(Collective::kAllreduce, kAny, 1, kAnyRanks, true, "rabenseifner"),
    onDevice(Collective::kAllreduce, kAny, 1, 8, false, "ring"),
    onDevice(Collective::kAllreduce, kAny, 9, kAnyRanks, false, "rabenseifner"),
    // reduce_scatter(_block): the ring is bandwidth-optimal and its p-1
    // alphas match the p-1 messages any scatter of the blocks needs; the
    // reduce + scatterv fallback serves non-commutative ops.
    {Collective::kReduceScatter, kAny, 1, kAnyRanks, false, "ring"},
    {Collective::kReduceScatter, kAny, 1, kAnyRanks, false, "reduce_scatterv"},
    // One node, small inputs (bytes: the whole input): shared memory, one
    // synchronisation per slot's worth instead of p - 1 messages.
    // Oversubscribed: up to 128 KiB from 16 ranks, 32 KiB from 8, where
    // each of the ring's p - 1 rounds costs a hand-over of the core (100
    // calls, three runs, shm against the ring: 16 ranks 32 KiB 109-125 us
    // against 230-266, 64 KiB 203-213 against 294-395, 128 KiB 365-410
    // against 449-510; 8 ranks 32 KiB 44-65 against 60-90, mixed from 64 KiB;
    // 4 ranks the ring's from 32 KiB). Device ranks stage up to the same
    // size (below), so mixed jobs agree.
    oversubscribed(Collective::kReduceScatterBlock, 131072, "shm", 16, 64),
    oversubscribed(Collective::kReduceScatterBlock, 32768, "shm", 8, 64),
    // 2 ranks: the ring's one exchange folds the block as it lands in the
    // result, and overtakes staging from 16 KiB (Intel Xeon VM, two runs,
    // shm against the ring: 8 KiB 1.19-1.31 us against 1.14-1.15, 16 KiB
    // 2.11-2.14 against 1.69-1.82).
    {Collective::kReduceScatterBlock, 8192, 2, 2, false, "shm", 1, 1},
    {Collective::kReduceScatterBlock, 16384, 3, 64, false, "shm", 1, 1},
    {Collective::kReduceScatterBlock, kAny, 1, kAnyRanks, false, "ring"},
    {Collective::kReduceScatterBlock, kAny, 1, kAnyRanks, false, "reduce_scatterv"},
    // Device buffers (bytes: the whole input): the ring, natively, above
    // 64 KiB (as allreduce: p-1 steps of a launch and a fence each against
    // two small copies); staged below.
    onDevice(Collective::kReduceScatter, 65536, 1, kAnyRanks, false, kStaged),
    onDevice(Collective::kReduceScatter, kAny, 1, kAnyRanks, false, "ring"),
    onDeviceOversubscribed(Collective::kReduceScatterBlock, 131072, kStaged),
    onDevice(Collective::kReduceScatterBlock, 65536, 1, kAnyRanks, false, kStaged),
    onDevice(Collective::kReduceScatterBlock, kAny, 1, kAnyRanks, false, "ring"),
    // scan/exscan: recursive doubling needs log p steps where the chain
    // needs p-1 of the same size; at p <= 2 they coincide and the chain
    // needs no scratch.
    {Collective::kScan, kAny, 1, 2, false, "linear"},
    {Collective::kScan, kAny, 1, kAnyRanks, false, "recursive_doubling"},
    {Collective::kExscan, kAny, 1, 2, false, "linear"},
    {Collective::kExscan, kAny, 1, kAnyRanks, false, "recursive_doubling"},
    // ---- end reductions ----
};
// Device rules. A call with device buffers on this rank (CollArgs::mem) is
// offered first to the device rules of its collective; the first whose key
// matches decides (no fall-through among them: the next device rule might
// name an algorithm the host peers do not run). Its algorithm runs the
// device buffers as they are when it accepts the call (deviceBuffers and
// its supports(): op, type, every buffer of this rank on the device);
// otherwise, and for "staged" rules and collectives without device rules,
// the call is staged through host memory and the host rules pick. Ranks of
// one call may differ in memory kind, so a device rule names only what the
// host rules pick for the same key (coll_device_test checks this over rank
// counts and sizes). LOOM_COLL_<NAME> overrides them as it does the host
// rules; LOOM_COLL_DEVICE_NATIVE=0 stages every device call.

const char* kNames[] = {"barrier",   "bcast",          "reduce",
                        "allreduce", "gather",         "gatherv",
                        "scatter",   "scatterv",       "allgather",
                        "allgatherv", "reduce_scatter", "reduce_scatter_block",
                        "alltoall",  "alltoallv",      "alltoallw",
                        "scan",      "exscan"};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<size_t>(Collective::kCount));
static_assert(CommInfo::kCollectives == static_cast<size_t>(Collective::kCount));

bool isPow2(int p) { return p > 0 && (p & (p - 1)) == 0; }

const Algorithm* findAlgorithm(Collective c, const std::string& name) {
  for (const Algorithm& a : algorithms())
    if (a.coll == c && name == a.name) return &a;
  return nullptr;
}

std::string choices(Collective c) {
  std::string s;
  for (const Algorithm& a : algorithms())
    if (a.coll == c) s += std::string(s.empty() ? "" : ", ") + a.name;
  return s;
}

std::string overrideParam(Collective c) {
  std::string p = "LOOM_COLL_";
  for (const char* n = collectiveName(c); *n; ++n)
    p += static_cast<char>(*n >= 'a' && *n <= 'z' ? *n - 'a' + 'A' : *n);
  return p;
}

}  // namespace

const char* collectiveName(Collective c) { return kNames[static_cast<int>(c)]; }

namespace {
// Bit 15 always set (0 means "no signature"), then 5 bits each:
// collective, root mod 32, op (0: none, else Op::Kind + 1).
constexpr uint16_t kSigMark = 0x8000;
int sigColl(uint16_t s) { return (s >> 10) & 31; }
int sigRoot(uint16_t s) { return (s >> 5) & 31; }
}  // namespace

uint16_t callSignature(Collective c, int root, const Op* op) {
  const int opPart = op ? static_cast<int>(op->kind()) + 1 : 0;
  return static_cast<uint16_t>(kSigMark | (static_cast<int>(c) & 31) << 10 | (root & 31) << 5 |
                               (opPart & 31));
}

// A poison signature: collective bits 31 (no collective has them), then the
// error class in the low 10 bits.
constexpr int kPoisonColl = 31;
uint16_t poisonSignature(int cls) {
  return static_cast<uint16_t>(kSigMark | kPoisonColl << 10 | (cls & 0x3ff));
}

Status mismatchStatus(uint16_t mine, uint16_t theirs, const std::string& who) {
  if (sigColl(theirs) == kPoisonColl) {
    const int cls = theirs & 0x3ff;
    return errorf(cls ? cls : MPI_ERR_OTHER, "%s gave up on this %s call (%s there); this rank "
                  "fails it too instead of waiting for it", who.c_str(),
                  sigColl(mine) < static_cast<int>(Collective::kCount)
                      ? collectiveName(static_cast<Collective>(sigColl(mine)))
                      : "collective",
                  errorClassName(cls) ? errorClassName(cls) : "an error");
  }
  auto coll = [](uint16_t s) {
    int c = sigColl(s);
    return c < static_cast<int>(Collective::kCount) ? collectiveName(static_cast<Collective>(c))
                                                    : "?";
  };
  if (sigColl(mine) != sigColl(theirs))
    return errorf(MPI_ERR_OTHER, "mismatched collective calls: this rank called %s where %s "
                  "called %s", coll(mine), who.c_str(), coll(theirs));
  if (sigRoot(mine) != sigRoot(theirs))
    return errorf(MPI_ERR_ROOT, "mismatched %s calls: %s passed another root (its root is %d "
                  "modulo 32, this rank's %d)", coll(mine), who.c_str(), sigRoot(theirs),
                  sigRoot(mine));
  return errorf(MPI_ERR_OP, "mismatched %s calls: %s passed another op", coll(mine),
                who.c_str());
}

std::span<const Rule> rules() { return kRules; }

// The override of each collective, read from the environment once (it is
// consulted on every call: a getenv per call would cost more than a small
// collective).
static const std::string& overrideOf(Collective c) {
  static const auto table = [] {
    std::array<std::string, static_cast<size_t>(Collective::kCount)> t;
    for (size_t i = 0; i < t.size(); ++i) {
      std::string param = overrideParam(static_cast<Collective>(i));
      if (params::find(param)) t[i] = params::getString(param);
      if (t[i] == "auto") t[i].clear();
    }
    return t;
  }();
  return table[static_cast<size_t>(c)];
}

// Each collective's rules with their algorithms looked up once (select()
// runs on every call: string lookups there would cost more than a small
// collective).
namespace {
struct Resolved {
  const Rule* rule;
  const Algorithm* alg;  // null: a rule naming no algorithm (a table bug)
};
// Host rules by collective, then device rules by collective.
const std::vector<Resolved>& rulesOf(Collective c, device::MemKind mem = device::MemKind::kHost) {
  constexpr size_t kN = static_cast<size_t>(Collective::kCount);
  static const auto table = [] {
    std::array<std::vector<Resolved>, 2 * kN> t;
    for (const Rule& r : kRules)
      t[static_cast<size_t>(r.coll) + (r.mem == device::MemKind::kDevice ? kN : 0)].push_back(
          {&r, findAlgorithm(r.coll, r.algorithm)});
    return t;
  }();
  return table[static_cast<size_t>(c) + (mem == device::MemKind::kDevice ? kN : 0)];
}
bool cmaMatches(Rule::Cma c, size_t bytes) {
  if (c == Rule::Cma::kAny) return true;
  size_t lo = 0, hi = 0;
  p2p::nodeCmaWindow(&lo, &hi);
  if (c == Rule::Cma::kInCma) return lo <= bytes && bytes <= hi;
  if (c == Rule::Cma::kFromCma) return lo <= (size_t{1} << 20) && lo <= bytes;
  return lo <= (size_t{1} << 20) && bytes < lo;
}
bool ruleMatches(const Rule& r, const CollArgs& args, int p, const CommInfo& info) {
  return !(args.bytes > r.maxBytes || p < r.minRanks || p > r.maxRanks ||
           (r.pow2Only && !isPow2(p)) || info.nodes < r.minNodes || info.nodes > r.maxNodes ||
           info.minPerNode < r.minPerNode ||
           (r.oversubscribedOnly && !progress::oversubscribed()) || !cmaMatches(r.cma, args.bytes));
}
const Algorithm* forcedAlgorithm(Collective c) {
  static const auto table = [] {
    std::array<const Algorithm*, static_cast<size_t>(Collective::kCount)> t{};
    for (size_t i = 0; i < t.size(); ++i) {
      const std::string& name = overrideOf(static_cast<Collective>(i));
      if (!name.empty()) t[i] = findAlgorithm(static_cast<Collective>(i), name);
    }
    return t;
  }();
  return table[static_cast<size_t>(c)];
}
// Whether `a` can run this call: a persistent activation needs a schedule
// (not a shared-memory op), device buffers an algorithm that takes them,
// and the algorithm's own supports().
bool accepts(const Algorithm* a, const CollArgs& args) {
  return a && !(args.persistent && a->start) &&
         (args.mem == device::MemKind::kHost || a->deviceBuffers) &&
         (!a->supports || a->supports(args));
}
}  // namespace

const Algorithm* selectDevice(const CollArgs& args) {
  if (!deviceNativeEnabled()) return nullptr;
  if (!overrideOf(args.coll).empty()) {
    const Algorithm* a = forcedAlgorithm(args.coll);
    // An override that cannot take these buffers: staged, where it (or,
    // if it declines the host call too, the host rules) runs on the twins.
    return accepts(a, args) ? a : nullptr;
  }
  const CommInfo& info = commInfo(args.comm);
  for (const Resolved& rr : rulesOf(args.coll, device::MemKind::kDevice))
    if (ruleMatches(*rr.rule, args, args.comm->size(), info))
      return accepts(rr.alg, args) ? rr.alg : nullptr;  // first match decides
  return nullptr;
}

Status select(const CollArgs& args, const Algorithm** out) {
  if (args.mem == device::MemKind::kDevice) [[unlikely]] {
    *out = selectDevice(args);
    if (*out) return Status::ok();
    return errorf(MPI_ERR_INTERN, "no %s algorithm takes these device buffers (the call is "
                  "staged)", collectiveName(args.coll));
  }
  CommInfo& info = commInfo(args.comm);
  // The same bytes as this collective's last call, and the algorithm the
  // first matching rule named then takes this call too: it is the rules'
  // answer again (a call it declines walks them). Never filled where an
  // override is set.
  CommInfo::Pick& pick = info.picks[static_cast<size_t>(args.coll)];
  size_t cmaLo = 0, cmaHi = 0;
  p2p::nodeCmaWindow(&cmaLo, &cmaHi);
  if (pick.bytes == args.bytes && pick.cmaLo == cmaLo && pick.cmaHi == cmaHi &&
      accepts(pick.alg, args)) [[likely]] {
    *out = pick.alg;
    return Status::ok();
  }
  const std::string& forced = overrideOf(args.coll);
  if (!forced.empty()) {
    const Algorithm* a = forcedAlgorithm(args.coll);
    if (!a)
      return errorf(MPI_ERR_ARG, "%s=%s names no %s algorithm (choices: %s)",
                    overrideParam(args.coll).c_str(), forced.c_str(), collectiveName(args.coll),
                    choices(args.coll).c_str());
    if (accepts(a, args)) {
      *out = a;
      return Status::ok();
    }
    log::debug("coll", "%s=%s cannot run this call; using the rules",
               overrideParam(args.coll).c_str(), forced.c_str());
  }
  const int p = args.comm->size();
  bool first = true;  // the first rule that matches
  for (const Resolved& rr : rulesOf(args.coll)) {
    if (!ruleMatches(*rr.rule, args, p, info)) continue;
    const Algorithm* a = rr.alg;
    if (accepts(a, args)) {
      if (first && forced.empty()) pick = CommInfo::Pick{args.bytes, cmaLo, cmaHi, a};
      *out = a;
      return Status::ok();
    }
    first = false;
  }
  // Reachable only through a bug in the tables: say which.
  return errorf(MPI_ERR_INTERN, "no %s algorithm supports %zu bytes on %d ranks",
                collectiveName(args.coll), args.bytes, p);
}

namespace {
// The description of a message-based call on a one-node communicator that
// its schedule checks while it waits (Schedule::setCheck).
struct CallCheck {
  ShmColl* ctx;
  Collective coll;
  int root;
  uint64_t bytes;
  uint64_t call;
};
Status checkCall(void* p, const Schedule&) {
  auto* c = static_cast<CallCheck*>(p);
  return c->ctx->checkCall(c->call, c->coll, c->root, c->bytes);
}
void callFailed(void* p, const Status& st) {
  auto* c = static_cast<CallCheck*>(p);
  c->ctx->fail(st, c->call);
}
}  // namespace

namespace {
// A call with device buffers: as it is where an algorithm takes device
// buffers (mem = kDevice: run() does not look again), otherwise on host
// twins of them, copied back when it completes (at once when it completed
// inside run(), else by the request's finish(), before its onComplete hook).
// The staged half of runDevice: the call on host twins, copied back when
// it completes. Also where a device schedule that found no device scratch
// falls back to (run(), with the tag and number it drew: `args.tagged`).
Status runStaged(const CollArgs& args, Request** out) {
  CollArgs h;
  std::unique_ptr<device::Stage> stage;
  LOOM_TRY(stageCall(args, &h, &stage));
  h.tagged = args.tagged;
  h.tag = args.tag;
  h.call = args.call;
  LOOM_TRY(run(h, out));
  Request* r = *out;
  if (r && !r->complete) {
    r->staged = stage.release();
    return Status::ok();
  }
  Status st = stage->finish();
  if (!st.isOk() && r) {
    r->statusError = st.code();
    r->error = st;
    return Status::ok();
  }
  return st;
}

Status runDevice(const CollArgs& args, Request** out) {
  CollArgs d = args;
  d.mem = device::MemKind::kDevice;
  if (selectDevice(d)) return run(d, out);
  if (args.comm->rank() == 0 && log::enabled("coll"))
    log::debug("coll", "%s: %s, %zu bytes, %d ranks: device buffers staged through host memory",
               args.comm->name().empty() ? "communicator" : args.comm->name().c_str(),
               collectiveName(args.coll), args.bytes, args.comm->size());
  return runStaged(args, out);
}
}  // namespace

Status run(const CollArgs& args, Request** out) {
  // Device buffers (only looked for where a backend is active): runDevice.
  if (device::active() && args.mem == device::MemKind::kHost) [[unlikely]] {
    if (touchesDevice(args)) return runDevice(args, out);
  }
  // Every call takes the communicator's next tag and number, whichever
  // algorithm runs it (a shared-memory op sends nothing, but is described
  // by the number): ranks whose arguments differ pick different algorithms,
  // and their tags must still agree for the next calls.
  // A persistent activation brings the tag its init call drew, and has no
  // number in the sequence (CollArgs::persistent).
  CollArgs call = args;
  if (!args.persistent && !args.tagged) {
    call.tag = args.comm->nextCollectiveTag();
    call.call = args.comm->collectiveCalls();
  }
  // The context (made now if this is the communicator's first call) checks
  // the call's description against the peers', and refuses every call once
  // one failed somewhere (ShmColl, "Calls that fail").
  ShmColl* ctx = args.comm->size() > 1 && !args.persistent ? ShmColl::forChecks(args.comm)
                                                            : nullptr;
  if (ctx) LOOM_TRY(ctx->failure(call.call));
  const Algorithm* a = nullptr;
  LOOM_TRY(select(call, &a));
  if (a->start) {
    if (args.comm->rank() == 0 && log::enabled("coll"))
      log::debug("coll", "%s: %s, %zu bytes, %d ranks: %s",
                 args.comm->name().empty() ? "communicator" : args.comm->name().c_str(),
                 collectiveName(args.coll), args.bytes, args.comm->size(), a->name);
    return a->start(call, out);
  }
  auto s = Schedule::make(args.comm, call.tag);
  s->setSignature(callSignature(args.coll, args.root, args.op));
  Status built = a->build(*s, call);
  if (!built.isOk() && built.code() == MPI_ERR_NO_MEM && call.mem == device::MemKind::kDevice) {
    // No device scratch (LOOM_COLL_DEVICE_SCRATCH_MAX, or the device is
    // full): the same algorithm on host twins, with this call's tag, so the
    // messages still match the other ranks'.
    log::debug("coll", "%s: %s: %s; staged through host memory instead",
               args.comm->name().empty() ? "communicator" : args.comm->name().c_str(),
               collectiveName(args.coll), built.message().c_str());
    s.reset();
    CollArgs again = args;
    again.mem = device::MemKind::kHost;
    again.tagged = true;
    again.tag = call.tag;
    again.call = call.call;
    return runStaged(again, out);
  }
  LOOM_TRY(built);
  if (ctx) {
    ctx->signCall(call.call, args.coll, args.root, args.bytes);
    auto* c = new (s->scratch(sizeof(CallCheck)))
        CallCheck{ctx, args.coll, args.root, static_cast<uint64_t>(args.bytes), call.call};
    s->setCheck(checkCall, c, callFailed);
  } else if (args.comm->size() > 1 && !args.persistent) {
    s->enableProbes();
  }
  if (args.comm->rank() == 0 && log::enabled("coll"))
    log::debug("coll", "%s: %s, %zu bytes, %d ranks: %s (%zu rounds%s)",
               args.comm->name().empty() ? "communicator" : args.comm->name().c_str(),
               collectiveName(args.coll), args.bytes, args.comm->size(), a->name, s->roundCount(),
               call.mem == device::MemKind::kDevice ? ", on the device buffers" : "");
  return Schedule::start(std::move(s), out);
}

std::string describeAll() {
  std::string out = "Collective algorithms:\n";
  char line[256];
  for (const Algorithm& a : algorithms()) {
    std::snprintf(line, sizeof line, "  %-22s %-18s %s\n", collectiveName(a.coll), a.name, a.desc);
    out += line;
  }
  out += "Selection rules (first match wins; override with LOOM_COLL_<COLLECTIVE>=<name>; "
         "\"device\": for calls with device buffers, the first match decides, \"staged\" runs "
         "the host rules on host twins):\n";
  for (const Rule& r : kRules) {
    char bytes[32], ranks[32];
    if (r.maxBytes == kAny)
      std::snprintf(bytes, sizeof bytes, "any size");
    else
      std::snprintf(bytes, sizeof bytes, "<= %zu B", r.maxBytes);
    if (r.maxRanks == kAnyRanks)
      std::snprintf(ranks, sizeof ranks, ">= %d ranks", r.minRanks);
    else
      std::snprintf(ranks, sizeof ranks, "%d..%d ranks", r.minRanks, r.maxRanks);
    std::string nodes;
    if (r.minNodes > 1 || r.maxNodes != kAnyRanks) {
      nodes = r.maxNodes == kAnyRanks ? ">= " + std::to_string(r.minNodes) + " nodes"
              : r.minNodes == r.maxNodes ? std::to_string(r.minNodes) + " node"
                                         : std::to_string(r.minNodes) + ".." +
                                               std::to_string(r.maxNodes) + " nodes";
      if (r.minPerNode > 1) nodes += ", >= " + std::to_string(r.minPerNode) + "/node";
    }
    if (r.oversubscribedOnly) nodes += nodes.empty() ? "oversubscribed" : ", oversubscribed";
    if (r.cma != Rule::Cma::kAny)
      nodes += r.cma == Rule::Cma::kInCma     ? ", in CMA window"
               : r.cma == Rule::Cma::kFromCma ? ", from CMA window"
                                              : ", below CMA window";
    std::snprintf(line, sizeof line, "  %-22s %-12s %-16s %-6s %-22s %-6s -> %s\n",
                  collectiveName(r.coll), bytes, ranks, r.pow2Only ? "pow2" : "", nodes.c_str(),
                  r.mem == device::MemKind::kDevice ? "device" : "", r.algorithm);
    out += line;
  }
  return out;
}

}  // namespace loom::coll
