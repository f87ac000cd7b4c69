// Collectives on device buffers as they are, through the mock device and
// the single-process simulator: every device form gives the bits of its
// host form (all ranks on the device, or every other rank), with chunks in
// flight while earlier ones are reduced, device work run as late as the
// schedule contract allows, in place, odd counts and rank counts; the
// device and host forms send the same messages; the device rules pick only
// what the host rules pick; and calls the device forms cannot serve (user
// ops, long double, mixed buffers, pairs with holes) are declined.
#include <gtest/gtest.h>
#include <mpi-ext.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "coll/device_pipe.h"
#include "coll/op.h"
#include "coll/reduce_chunks.h"
#include "coll_sim.h"
#include "core/device.h"
#include "core/progress.h"

namespace {

namespace dev = loom::device;
using loom::Datatype;
using loom::coll::Algorithm;
using loom::coll::CollArgs;
using loom::coll::Collective;
using loom::coll::Op;
using loom::coll::Schedule;

Datatype* dt(MPI_Datatype h) {
  return loom::predefinedDatatype(reinterpret_cast<uintptr_t>(h));
}
Op* op(MPI_Op h) {
  return loom::coll::predefinedOp(reinterpret_cast<uintptr_t>(h));
}

const Algorithm& algorithm(Collective c, const char* name) {
  for (const Algorithm& a : loom::coll::algorithms())
    if (a.coll == c && std::string(a.name) == name) return a;
  ADD_FAILURE() << "no algorithm " << name;
  return loom::coll::algorithms()[0];
}

// The mock on, the kind cache on, the chunk and native switches as found.
class CollDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    prev_ = dev::setBackendForTest(dev::Backend::kMock);
    prevCache_ = dev::setKindCacheForTest(true);
    prevChunk_ = loom::coll::setReduceChunkBytesForTest(-1);
    prevNative_ = loom::coll::setDeviceNativeForTest(true);
  }
  void TearDown() override {
    loom::coll::setDeviceNativeForTest(prevNative_);
    loom::coll::setReduceChunkBytesForTest(prevChunk_);
    dev::setKindCacheForTest(prevCache_);
    dev::setBackendForTest(prev_);
  }
  dev::Backend prev_ = dev::Backend::kNone;
  bool prevCache_ = true;
  int64_t prevChunk_ = 0;
  bool prevNative_ = true;
};

// A buffer on the mock device or on the host.
class Buf {
 public:
  Buf(bool device, size_t bytes) : device_(device), bytes_(bytes ? bytes : 1) {
    if (device_) {
      p_ = dev::deviceAlloc(bytes_);
    } else {
      host_.assign(bytes_, 0);
      p_ = host_.data();
    }
  }
  ~Buf() {
    if (device_) dev::deviceFree(p_);
  }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  void* p() const { return p_; }
  void put(const std::vector<char>& v) {
    ASSERT_LE(v.size(), bytes_);
    ASSERT_TRUE(dev::copy(p_, v.data(), v.size()).isOk());
  }
  std::vector<char> get(size_t n) const {
    std::vector<char> v(n);
    EXPECT_TRUE(dev::copy(v.data(), p_, n).isOk());
    return v;
  }

 private:
  bool device_;
  size_t bytes_;
  void* p_ = nullptr;
  std::vector<char> host_;
};

// Values of `n` elements of predefined type `h` for rank r: finite floats
// of every magnitude (their sums show the order of additions in the last
// bits), any integers, value/index pairs with ties.
std::vector<char> values(MPI_Datatype h, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Datatype* t = dt(h);
  std::vector<char> out(static_cast<size_t>(n) * t->extent());
  std::uniform_real_distribution<double> u(-1e6, 1e6);
  auto real = [&] { return u(rng) * std::pow(10.0, double(rng() % 12) - 6); };
  for (int64_t i = 0; i < n; ++i) {
    char* e = out.data() + i * t->extent();
    if (h == MPI_DOUBLE) {
      double v = real();
      std::memcpy(e, &v, 8);
    } else if (h == MPI_FLOAT) {
      float v = float(real());
      std::memcpy(e, &v, 4);
    } else if (h == MPIX_C_FLOAT16 || h == MPIX_BFLOAT16) {
      const uint16_t expMask = h == MPIX_C_FLOAT16 ? 0x7c00 : 0x7f80;
      uint16_t v;
      do v = static_cast<uint16_t>(rng());
      while ((v & expMask) == expMask);
      std::memcpy(e, &v, 2);
    } else if (h == MPI_FLOAT_INT) {
      float v = float(rng() % 7);  // ties: the smaller index wins
      int idx = static_cast<int>(rng() % 1000);
      std::memcpy(e, &v, 4);
      std::memcpy(e + 4, &idx, 4);
    } else {
      for (int k = 0; k < t->size(); ++k) e[k] = static_cast<char>(rng());
    }
  }
  return out;
}

// One call simulated on p ranks; `onDevice(r)` says where rank r's buffers
// are. The results: each rank's receive buffer (the part the call defines).
struct Call {
  Collective coll;
  const char* alg;
  MPI_Datatype type;
  MPI_Op op = MPI_OP_NULL;
  int p;
  int64_t count;  // per rank block (reduce-scatter: see blocks below)
  bool inPlace = false;
};

std::string simulateCall(const Call& c, const std::function<bool(int)>& onDevice,
                         loom::sim::SimOptions opt, std::vector<std::vector<char>>* results) {
  const Algorithm& alg = algorithm(c.coll, c.alg);
  const int p = c.p;
  Datatype* t = dt(c.type);
  const int64_t ext = t->extent();
  loom::sim::SimComms comms(p);
  // Per-rank block counts: n + (i % 3) for reduce_scatter and allgatherv
  // (odd, uneven), n for the others; alltoallv: n + (r + i) % 3 between
  // ranks r and i (the same both ways).
  std::vector<int> cnt(p), displ(p);
  int64_t total = 0;
  const bool uneven = c.coll == Collective::kReduceScatter || c.coll == Collective::kAllgatherv;
  for (int i = 0; i < p; ++i) {
    cnt[i] = static_cast<int>(c.count + (uneven ? i % 3 : 0));
    displ[i] = static_cast<int>(total);
    total += cnt[i];
  }
  std::vector<std::vector<int>> acnt(p, std::vector<int>(p)), adispl(p, std::vector<int>(p));
  std::vector<int64_t> atotal(p, 0);
  for (int r = 0; r < p; ++r)
    for (int i = 0; i < p; ++i) {
      acnt[r][i] = static_cast<int>(c.count + (c.coll == Collective::kAlltoallv ? (r + i) % 3 : 0));
      adispl[r][i] = static_cast<int>(atotal[r]);
      atotal[r] += acnt[r][i];
    }
  std::vector<std::unique_ptr<Buf>> sb(p), rb(p);
  std::vector<size_t> defined(p);
  std::vector<std::unique_ptr<Schedule>> s;
  for (int r = 0; r < p; ++r) {
    const bool d = onDevice(r);
    CollArgs a;
    a.coll = c.coll;
    a.comm = comms[r];
    a.inPlace = c.inPlace;
    a.op = c.op == MPI_OP_NULL ? nullptr : op(c.op);
    a.mem = d ? dev::MemKind::kDevice : dev::MemKind::kHost;
    int64_t sendElems = 0, recvElems = 0;
    switch (c.coll) {
      case Collective::kAllreduce:
        sendElems = recvElems = c.count;
        a.count = c.count;
        a.type = t;
        defined[r] = c.count * ext;
        break;
      case Collective::kReduceScatter:
      case Collective::kReduceScatterBlock:
        sendElems = total;
        recvElems = c.inPlace ? total : cnt[r];
        a.count = total;
        a.type = t;
        a.recvCount = cnt[r];
        a.recvCounts = cnt.data();
        defined[r] = cnt[r] * ext;
        break;
      case Collective::kAllgather:
      case Collective::kAllgatherv:
        sendElems = cnt[r];
        recvElems = total;
        a.recvType = t;
        a.recvCount = c.count;
        a.recvCounts = cnt.data();
        a.recvDispls = displ.data();
        defined[r] = total * ext;
        break;
      case Collective::kBcast:  // one buffer; the root is rank 1 (0 when alone)
        sendElems = recvElems = c.count;
        a.count = c.count;
        a.type = t;
        a.root = p > 1 ? 1 : 0;
        defined[r] = c.count * ext;
        break;
      default:  // alltoall(v)
        sendElems = recvElems = atotal[r];
        a.recvType = t;
        a.recvCount = c.count;
        a.recvCounts = acnt[r].data();
        a.recvDispls = adispl[r].data();
        defined[r] = atotal[r] * ext;
        break;
    }
    rb[r] = std::make_unique<Buf>(d, recvElems * ext);
    rb[r]->put(values(c.type, recvElems, 1000 + r));
    if (c.inPlace) {
      a.recvbuf = rb[r]->p();
      if (c.coll == Collective::kAllreduce || c.coll == Collective::kReduceScatter ||
          c.coll == Collective::kReduceScatterBlock || c.coll == Collective::kBcast)
        a.sendbuf = rb[r]->p();
    } else {
      sb[r] = std::make_unique<Buf>(d, sendElems * ext);
      sb[r]->put(values(c.type, sendElems, 7 + r));
      a.sendbuf = sb[r]->p();
      a.recvbuf = rb[r]->p();
      if (c.coll == Collective::kBcast) a.sendbuf = a.recvbuf;
      if (c.coll == Collective::kAllgather || c.coll == Collective::kAllgatherv) {
        a.type = t;
        a.count = cnt[r];
      } else if (c.coll == Collective::kAlltoall || c.coll == Collective::kAlltoallv) {
        a.type = t;
        a.count = c.count;
        a.sendCounts = acnt[r].data();
        a.sendDispls = adispl[r].data();
      }
    }
    a.bytes = static_cast<size_t>(c.count) * t->size();
    if (alg.supports && !alg.supports(a)) return "declined on rank " + std::to_string(r);
    s.push_back(std::make_unique<Schedule>(comms[r], 0));
    loom::Status st = alg.build(*s.back(), a);
    if (!st.isOk()) return "build failed: " + st.message();
  }
  std::string err = loom::sim::simulate(s, opt);
  if (!err.empty()) return err;
  results->resize(p);
  for (int r = 0; r < p; ++r) (*results)[r] = rb[r]->get(defined[r]);
  return "";
}

// The device form against the host form of the same call, bit for bit.
void expectHostBits(const Call& c, const std::function<bool(int)>& onDevice,
                    loom::sim::SimOptions opt, const std::string& what) {
  std::vector<std::vector<char>> want, got;
  ASSERT_EQ(simulateCall(
                c, [](int) { return false; }, {}, &want),
            "")
      << what;
  ASSERT_EQ(simulateCall(c, onDevice, opt, &got), "") << what;
  for (int r = 0; r < c.p; ++r)
    ASSERT_TRUE(want[r] == got[r]) << what << ": rank " << r << " differs from the host form";
}

const std::vector<std::pair<Collective, const char*>>& reductionForms() {
  static const std::vector<std::pair<Collective, const char*>> v = {
      {Collective::kAllreduce, "ring"},
      {Collective::kAllreduce, "rabenseifner"},
      {Collective::kReduceScatter, "ring"},
      {Collective::kReduceScatterBlock, "ring"}};
  return v;
}

}  // namespace

// Every reduction form, rank counts odd, even and powers of two, counts
// below p, odd and not divisible by p or the chunk, chunks off, tiny (many
// chunks per block: the pipeline) and large, in place, every rank on the
// device or every other one, device work at round start or end.
TEST_F(CollDevice, ReductionsGiveTheHostBits) {
  for (const auto& [coll, name] : reductionForms())
    for (int p : {1, 2, 3, 4, 5, 7, 8, 13})
      for (int64_t count : {1, 7, 1001})
        for (int64_t chunk : {0, 48, 1 << 20}) {
          loom::coll::setReduceChunkBytesForTest(chunk);
          for (bool inPlace : {false, true})
            for (bool late : {false, true})
              for (int mixed = 0; mixed < 2; ++mixed) {
                Call c{coll, name, MPI_DOUBLE, MPI_SUM, p, count, inPlace};
                expectHostBits(
                    c, [mixed](int r) { return !mixed || r % 2 == 0; }, {late},
                    std::string(loom::coll::collectiveName(coll)) + "/" + name +
                        " p=" + std::to_string(p) + " count=" + std::to_string(count) +
                        " chunk=" + std::to_string(chunk) + " inPlace=" + std::to_string(inPlace) +
                        " late=" + std::to_string(late) + " mixed=" + std::to_string(mixed));
              }
        }
}

// The types with device kernels, MINLOC/MAXLOC pairs among them.
TEST_F(CollDevice, ReductionTypes) {
  loom::coll::setReduceChunkBytesForTest(64);
  const std::pair<MPI_Datatype, MPI_Op> types[] = {
      {MPI_FLOAT, MPI_SUM},        {MPI_INT, MPI_SUM},        {MPI_INT, MPI_BXOR},
      {MPI_INT64_T, MPI_MAX},      {MPIX_C_FLOAT16, MPI_SUM}, {MPIX_BFLOAT16, MPI_SUM},
      {MPI_FLOAT_INT, MPI_MINLOC}, {MPI_2INT, MPI_MAXLOC},    {MPI_C_DOUBLE_COMPLEX, MPI_PROD}};
  for (const auto& [coll, name] : reductionForms())
    for (const auto& [type, o] : types)
      for (int p : {3, 4, 5})
        for (bool late : {false, true}) {
          Call c{coll, name, type, o, p, 333, false};
          expectHostBits(
              c, [](int) { return true; }, {late},
              std::string(name) + " " + dt(type)->name() + " p=" + std::to_string(p));
        }
}

// Ring allgather(v) and pairwise alltoall(v) moving device blocks.
TEST_F(CollDevice, MovesGiveTheHostBits) {
  const std::pair<Collective, const char*> forms[] = {{Collective::kAllgather, "ring"},
                                                      {Collective::kAllgatherv, "ring"},
                                                      {Collective::kAlltoall, "pairwise"},
                                                      {Collective::kAlltoallv, "pairwise"},
                                                      {Collective::kBcast, "binomial"},
                                                      {Collective::kBcast, "scatter_allgather"},
                                                      {Collective::kBcast, "linear"}};
  for (const auto& [coll, name] : forms)
    for (int p : {1, 2, 3, 4, 5, 8})
      for (int64_t count : {1, 5, 1000})
        for (bool inPlace : {false, true})
          for (bool late : {false, true})
            for (int mixed = 0; mixed < 2; ++mixed) {
              Call c{coll, name, MPI_INT, MPI_OP_NULL, p, count, inPlace};
              expectHostBits(
                  c, [mixed](int r) { return !mixed || r % 2 == 0; }, {late},
                  std::string(name) + " " + loom::coll::collectiveName(coll) +
                      " p=" + std::to_string(p) + " count=" + std::to_string(count) +
                      " inPlace=" + std::to_string(inPlace));
            }
}

namespace {

// The messages a schedule sends and receives, per peer in order: (bytes).
struct Traffic {
  std::map<int, std::vector<int64_t>> sent, received;
  bool operator==(const Traffic&) const = default;
};
Traffic trafficOf(const Schedule& s) {
  Traffic t;
  for (const auto& round : s.rounds())
    for (const auto& st : round.steps) {
      if (st.kind == Schedule::Step::Kind::kSend)
        t.sent[st.peer].push_back(st.count * st.type->size());
      else if (st.kind == Schedule::Step::Kind::kRecv)
        t.received[st.peer].push_back(st.count * st.type->size());
    }
  return t;
}

// The schedule of rank r of a p-rank allreduce/reduce-scatter of `count`
// doubles (per block for reduce-scatter), on the device or not.
std::unique_ptr<Schedule> buildReduction(const Algorithm& alg, loom::sim::SimComms& comms, int r,
                                         int64_t count, bool device, Buf& send, Buf& recv,
                                         std::vector<int>& cnt) {
  CollArgs a;
  a.coll = alg.coll;
  a.comm = comms[r];
  a.type = dt(MPI_DOUBLE);
  a.op = op(MPI_SUM);
  a.sendbuf = send.p();
  a.recvbuf = recv.p();
  a.mem = device ? dev::MemKind::kDevice : dev::MemKind::kHost;
  const int p = comms.size();
  cnt.assign(p, static_cast<int>(count));
  if (alg.coll == Collective::kAllreduce) {
    a.count = count;
  } else {
    a.count = count * p;
    a.recvCount = count;
    a.recvCounts = cnt.data();
  }
  auto s = std::make_unique<Schedule>(comms[r], 0);
  EXPECT_TRUE(alg.build(*s, a).isOk());
  return s;
}

}  // namespace

// Host and device ranks of one call must exchange the same messages: the
// device forms cut exactly as the host forms do.
TEST_F(CollDevice, DeviceFormsSendTheHostMessages) {
  for (const auto& [coll, name] : reductionForms())
    for (int p : {2, 3, 4, 5, 6, 8, 11})
      for (int64_t count : {1, 10, 999})
        for (int64_t chunk : {0, 8, 100, 1 << 20}) {
          loom::coll::setReduceChunkBytesForTest(chunk);
          loom::sim::SimComms comms(p);
          const Algorithm& alg = algorithm(coll, name);
          for (int r = 0; r < p; ++r) {
            Buf hs(false, count * p * 8), hr(false, count * p * 8);
            Buf ds(true, count * p * 8), dr(true, count * p * 8);
            std::vector<int> c1, c2;
            auto h = buildReduction(alg, comms, r, count, false, hs, hr, c1);
            auto d = buildReduction(alg, comms, r, count, true, ds, dr, c2);
            EXPECT_TRUE(trafficOf(*h) == trafficOf(*d))
                << name << " p=" << p << " count=" << count << " chunk=" << chunk << " rank " << r;
          }
        }
}

// The pipeline: with blocks of 4 chunks, every round of the ring's
// reduce-scatter but the first reduces one chunk on the device while the
// next is sent and received; one round more runs the last reduction, then
// the allgather. With one chunk per block a block waits for its reduction
// before it is sent on (a round of its own per step).
TEST_F(CollDevice, RingPipelinesChunks) {
  const int p = 3;
  const int64_t n = 3 * 400;  // blocks of 400 doubles
  loom::sim::SimComms comms(p);
  const Algorithm& ring = algorithm(Collective::kAllreduce, "ring");
  for (int64_t chunk : {800, 0}) {  // 4 chunks of 100 doubles; whole blocks
    loom::coll::setReduceChunkBytesForTest(chunk);
    Buf s(true, n * 8), r(true, n * 8);
    std::vector<int> cnt;
    auto sched = buildReduction(ring, comms, 0, n, true, s, r, cnt);
    using Kind = Schedule::Step::Kind;
    auto has = [](const Schedule::Round& rd, Kind k) {
      for (const auto& st : rd.steps)
        if (st.kind == k) return true;
      return false;
    };
    const auto& rounds = sched->rounds();
    if (chunk) {
      const size_t rs = (p - 1) * 4;
      ASSERT_EQ(sched->roundCount(), rs + 1 + (p - 1));
      EXPECT_TRUE(has(rounds[0], Kind::kDevice));  // the copy of sendbuf, beside round 0
      for (size_t i = 1; i < rs; ++i)
        EXPECT_TRUE(has(rounds[i], Kind::kDevice) && has(rounds[i], Kind::kSend) &&
                    has(rounds[i], Kind::kRecv))
            << "round " << i << " does not overlap a reduction with the next chunk";
      EXPECT_TRUE(has(rounds[rs], Kind::kDevice) && !has(rounds[rs], Kind::kSend));
    } else {
      // Step 0, then per later step: its reduction alone, its messages;
      // then the last reduction, then the allgather.
      EXPECT_EQ(sched->roundCount(), size_t(1 + 2 * (p - 2) + 1 + (p - 1)));
    }
  }
}

// The device rules name only what the host rules pick for the same key, so
// host and device ranks of one call run algorithms with the same messages.
TEST_F(CollDevice, DeviceRulesAgreeWithHostRules) {
  Buf d(true, 64);
  const Collective colls[] = {Collective::kAllreduce,          Collective::kReduceScatter,
                              Collective::kReduceScatterBlock, Collective::kAllgather,
                              Collective::kAllgatherv,         Collective::kAlltoall,
                              Collective::kAlltoallv,          Collective::kBcast};
  int native = 0;
  std::vector<int> ones(64, 1);
  for (int p : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 32, 64}) {
    loom::sim::SimComms comms(p);
    for (Collective c : colls)
      for (size_t bytes : {size_t(8), size_t(12288), size_t(12289), size_t(16384), size_t(32768),
                           size_t(32769), size_t(65536), size_t(65537), size_t(262144),
                           size_t(262145), size_t(1) << 20, size_t(16) << 20}) {
        CollArgs a;
        a.coll = c;
        a.comm = comms[0];
        a.sendbuf = d.p();
        a.recvbuf = d.p();
        a.type = a.recvType = dt(MPI_DOUBLE);
        a.op = op(MPI_SUM);
        a.count = a.recvCount = 1;
        a.recvCounts = a.sendCounts = ones.data();
        a.recvDispls = a.sendDispls = ones.data();
        a.bytes = bytes;
        const Algorithm* host = nullptr;
        ASSERT_TRUE(loom::coll::select(a, &host).isOk());
        a.mem = dev::MemKind::kDevice;
        const Algorithm* onDev = loom::coll::selectDevice(a);
        if (!onDev) continue;
        ++native;
        EXPECT_EQ(onDev, host) << loom::coll::collectiveName(c) << " p=" << p << " " << bytes
                               << " bytes: device " << onDev->name << ", host " << host->name;
      }
  }
  EXPECT_GT(native, 100);
}

TEST_F(CollDevice, DeviceRulesPickAsDocumented) {
  Buf d(true, 64);
  std::vector<char> h(64);
  loom::sim::SimComms c8(8), c6(6), c12(12);
  struct Case {
    Collective coll;
    loom::Comm* comm;
    size_t bytes;
    const char* expect;  // nullptr: staged
  } cases[] = {{Collective::kAllreduce, c8[0], 65536, nullptr},
               {Collective::kAllreduce, c8[0], 65537, "rabenseifner"},
               {Collective::kAllreduce, c6[0], 1 << 20, "ring"},
               {Collective::kAllreduce, c12[0], 1 << 20, "rabenseifner"},
               {Collective::kReduceScatterBlock, c6[0], 1 << 20, "ring"},
               {Collective::kReduceScatter, c6[0], 4096, nullptr},
               {Collective::kAllgather, c8[0], 32768, nullptr},
               {Collective::kAllgather, c8[0], 65536, "ring"},
               {Collective::kAlltoall, c6[0], 1 << 20, "pairwise"},
               {Collective::kBcast, c6[0], 65536, nullptr},
               {Collective::kBcast, c6[0], 65537, "binomial"},
               {Collective::kBcast, c8[0], 1 << 20, "scatter_allgather"},
               {Collective::kScatter, c6[0], 16384, nullptr},
               {Collective::kScatter, c6[0], 16385, "linear"},
               {Collective::kScatter, c6[0], 1 << 20, "linear"},
               {Collective::kGather, c8[0], 16384, nullptr},
               {Collective::kGather, c8[0], 1 << 20, "linear"},
               {Collective::kGatherv, c6[0], 64, "linear"},
               {Collective::kScatterv, c6[0], 64, "linear"},
               {Collective::kReduce, c6[0], 65536, nullptr},
               {Collective::kReduce, c6[0], 1 << 20, "binomial"}};
  std::vector<int> ones(64, 1), zeros(64, 0);
  for (const Case& k : cases) {
    CollArgs a;
    a.coll = k.coll;
    a.comm = k.comm;
    a.sendbuf = a.recvbuf = d.p();
    a.type = a.recvType = dt(MPI_DOUBLE);
    a.op = op(MPI_SUM);
    a.count = a.recvCount = 1;
    a.recvCounts = ones.data();
    a.sendCounts = ones.data();
    a.recvDispls = zeros.data();
    a.sendDispls = zeros.data();
    a.bytes = k.bytes;
    a.mem = dev::MemKind::kDevice;
    const Algorithm* alg = loom::coll::selectDevice(a);
    if (!k.expect)
      EXPECT_EQ(alg, nullptr) << loom::coll::collectiveName(k.coll) << " " << k.bytes;
    else
      EXPECT_TRUE(alg && std::string(alg->name) == k.expect)
          << loom::coll::collectiveName(k.coll) << " " << k.bytes << ": "
          << (alg ? alg->name : "staged");
  }
}

// Where ranks outnumber cores the host ranks of a reduce-scatter-block run
// the shared-memory algorithm up to 128 KiB (16 ranks or more): device
// ranks stage up to there too, so a job mixing both kinds runs one
// algorithm; beyond, both run the ring.
TEST_F(CollDevice, OversubscribedDeviceRulesFollowTheHostOnes) {
  Buf d(true, 64);
  loom::sim::SimComms c16(16);
  CollArgs a;
  a.coll = Collective::kReduceScatterBlock;
  a.comm = c16[0];
  a.sendbuf = a.recvbuf = d.p();
  a.type = a.recvType = dt(MPI_DOUBLE);
  a.op = op(MPI_SUM);
  a.count = a.recvCount = 1;
  a.mem = dev::MemKind::kDevice;
  loom::progress::setOversubscribed(true);
  a.bytes = 131072;
  const Algorithm* staged = loom::coll::selectDevice(a);
  a.bytes = 131073;
  const Algorithm* beyond = loom::coll::selectDevice(a);
  loom::progress::setOversubscribed(false);
  a.bytes = 131072;
  const Algorithm* notOversubscribed = loom::coll::selectDevice(a);
  EXPECT_EQ(staged, nullptr);
  ASSERT_NE(beyond, nullptr);
  EXPECT_STREQ(beyond->name, "ring");
  ASSERT_NE(notOversubscribed, nullptr);
  EXPECT_STREQ(notOversubscribed->name, "ring");
}

// What the device forms cannot serve is staged: user ops, long double,
// pairs with holes, non-contiguous types, a rank with some host buffers;
// and everything with LOOM_COLL_DEVICE_NATIVE=0.
TEST_F(CollDevice, DeclinedCallsAreStaged) {
  Buf d(true, 4096), d2(true, 4096);
  std::vector<char> h(4096);
  loom::sim::SimComms c4(4);
  auto args = [&](MPI_Datatype t, MPI_Op o, const void* s, void* r) {
    CollArgs a;
    a.coll = Collective::kAllreduce;
    a.comm = c4[0];
    a.sendbuf = s;
    a.recvbuf = r;
    a.type = dt(t);
    a.op = op(o);
    a.count = 16;
    a.bytes = size_t(1) << 20;  // what the rules key on: a native size
    a.mem = dev::MemKind::kDevice;
    return a;
  };
  EXPECT_NE(loom::coll::selectDevice(args(MPI_DOUBLE, MPI_SUM, d.p(), d2.p())), nullptr);
  EXPECT_NE(loom::coll::selectDevice(args(MPI_FLOAT_INT, MPI_MINLOC, d.p(), d2.p())), nullptr);
  EXPECT_EQ(loom::coll::selectDevice(args(MPI_DOUBLE_INT, MPI_MINLOC, d.p(), d2.p())), nullptr)
      << "MPI_DOUBLE_INT has a hole: no packed device kernel";
  EXPECT_EQ(loom::coll::selectDevice(args(MPI_LONG_DOUBLE, MPI_SUM, d.p(), d2.p())), nullptr);
  EXPECT_EQ(loom::coll::selectDevice(args(MPI_DOUBLE, MPI_SUM, h.data(), d2.p())), nullptr);
  EXPECT_EQ(loom::coll::selectDevice(args(MPI_DOUBLE, MPI_SUM, d.p(), h.data())), nullptr);
  Op* user = Op::create([](void*, void*, int*, MPI_Datatype*) {}, nullptr, true);
  CollArgs a = args(MPI_DOUBLE, MPI_SUM, d.p(), d2.p());
  a.op = user;
  EXPECT_EQ(loom::coll::selectDevice(a), nullptr);
  user->release();
  Datatype* vec = nullptr;
  ASSERT_TRUE(loom::typeVector(3, 1, 2, dt(MPI_DOUBLE), &vec).isOk());
  vec->commit();
  a = args(MPI_DOUBLE, MPI_SUM, d.p(), d2.p());
  a.type = vec;
  a.count = 2;
  EXPECT_EQ(loom::coll::selectDevice(a), nullptr);
  vec->release();
  loom::coll::setDeviceNativeForTest(false);
  EXPECT_EQ(loom::coll::selectDevice(args(MPI_DOUBLE, MPI_SUM, d.p(), d2.p())), nullptr);
}

// The engine's device steps: a round completes after its device work; an
// error there ends the schedule with it; scratch goes back to the pool.
TEST_F(CollDevice, DeviceStepsInTheEngine) {
  loom::sim::SimComms c1(1);
  Buf a(true, 64), b(true, 64);
  std::vector<char> in(64, 3);
  a.put(in);
  {
    auto s = std::make_unique<Schedule>(c1[0], 0);
    void* sa = a.p();
    void* sb = b.p();
    s->device([=](dev::Stream st) { return dev::copyAsync(sb, sa, 64, st); });
    s->endRound();
    s->local([] {});
    loom::Request* r = nullptr;
    ASSERT_TRUE(Schedule::start(std::move(s), &r).isOk());
    ASSERT_NE(r, nullptr);
    EXPECT_TRUE(r->complete);
    loom::Request::release(r);
    EXPECT_EQ(b.get(64), in);
  }
  {
    auto s = std::make_unique<Schedule>(c1[0], 0);
    s->device([](dev::Stream) { return loom::errorf(MPI_ERR_OTHER, "the kernel failed"); });
    loom::Request* r = nullptr;
    loom::Status st = Schedule::start(std::move(s), &r);
    EXPECT_EQ(st.code(), MPI_ERR_OTHER);
    if (r) loom::Request::release(r);
  }
  void* p = nullptr;
  {
    Schedule s(c1[0], 0);
    p = s.deviceScratch(100000);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(dev::isDevice(p));
  }
  Schedule again(c1[0], 0);
  EXPECT_EQ(again.deviceScratch(70000), p) << "the pool keeps freed scratch by size class";
}
