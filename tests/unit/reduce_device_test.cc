// The device reductions' arithmetic, bit for bit against the host loop.
//
// The CUDA kernels (coll/reduce_cuda.cu) are grid-stride loops over the
// bodies of coll/reduce_device.h, dispatched by the same visitReduction as
// the host loop. Here those bodies run on the host under a launcher that
// walks the items as a small grid would, for every (op, basic kind) pair,
// lengths around the 16-byte vector steps, aligned (vectorised) and
// unaligned operands, and edge values; then the mock device's reductions
// and MPI_Reduce_local's device path (kernels where they apply, staging
// through host memory for the rest). On a machine with a CUDA device,
// CudaKernelsGiveHostBits runs the kernels themselves against the host loop
// (and tests/gpu runs MPI_Reduce_local's kernels through loomrun).
#include "coll/reduce_device.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "coll/op.h"
#include "coll/reduce_cuda.h"
#include "core/datatype.h"
#include "core/device.h"
#include "reduce_operands.h"

namespace loom::coll {
void applyPackedBaseline(OpKind, BasicKind, int64_t, const void*, void*, int64_t);
}  // namespace loom::coll

namespace {

using namespace loom::testing_reduce;
namespace dev = loom::device;

// Runs body(j) for every item, thread by thread of a grid of `threads`.
struct HostLaunch {
  int64_t threads;
  int launches = 0;
  template <class Body>
  void operator()(const Body& body) {
    ++launches;
    const int64_t items = body.items();
    for (int64_t t = 0; t < threads; ++t)
      for (int64_t j = t; j < items; j += threads) body(j);
  }
};

bool hasLongDouble(BasicKind k) {
  return k == BasicKind::kLongDouble || k == BasicKind::kLongDoubleComplex ||
         k == BasicKind::kLongDoubleInt;
}

TEST(ReduceDevice, BodiesGiveHostBits) {
  std::mt19937_64 rng(20261128);
  const size_t lengths[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 255, 1000};
  int compared = 0;
  for (const KindCase& k : kKinds)
    for (OpKind op : kOps)
      for (size_t n : lengths)
        for (size_t shift : {size_t{0}, size_t{16}, misalignment(k), 16 + misalignment(k)}) {
          std::vector<unsigned char> in = operand(k, n + 32, rng), io = operand(k, n + 32, rng);
          for (size_t i = 0; i < n; i += 5)
            std::memcpy(io.data() + i * k.bytes, in.data() + i * k.bytes, k.bytes);
          std::vector<unsigned char> want = io, got = io;
          loom::coll::applyPackedBaseline(op, k.kind, k.bytes, in.data() + shift,
                                          want.data() + shift, static_cast<int64_t>(n));
          HostLaunch launch{7};
          loom::coll::kernels::DeviceReduce<HostLaunch> v{in.data() + shift, got.data() + shift,
                                                          static_cast<int64_t>(n), &launch};
          loom::coll::kernels::visitReduction(op, k.kind, k.bytes, v);
          if (hasLongDouble(k.kind)) {
            if (v.visited) {
              EXPECT_TRUE(v.unsupported) << k.name;
            }
            continue;
          }
          EXPECT_FALSE(v.unsupported) << k.name;
          EXPECT_EQ(launch.launches, v.visited ? 1 : 0);
          ASSERT_TRUE(sameResult(k, want, got, n, shift))
              << "op " << static_cast<int>(op) << " on " << k.name << ", n " << n << ", shift "
              << shift;
          ++compared;
        }
  EXPECT_GT(compared, 5000);
}

// The vector step really runs: aligned operands take 16 bytes per item.
TEST(ReduceDevice, AlignedOperandsUseVectorSteps) {
  alignas(16) float in[37], io[37];
  for (int i = 0; i < 37; ++i) in[i] = static_cast<float>(i), io[i] = 1.0f;
  loom::coll::kernels::ElementwiseBody<float, loom::coll::kernels::Sum<float>> b{in, io, 37, 9, {}};
  EXPECT_EQ(b.items(), 9 + 1);
  for (int64_t j = 0; j < b.items(); ++j) b(j);
  for (int i = 0; i < 37; ++i) EXPECT_EQ(io[i], static_cast<float>(i) + 1.0f);
}

class ReduceDeviceMock : public ::testing::Test {
 protected:
  void SetUp() override { prev_ = dev::setBackendForTest(dev::Backend::kMock); }
  void TearDown() override { dev::setBackendForTest(prev_); }
  dev::Backend prev_ = dev::Backend::kNone;
};

// The mock's kernels: the host loop on its read-write view.
TEST_F(ReduceDeviceMock, MockReductionsGiveHostBits) {
  std::mt19937_64 rng(7);
  for (const KindCase& k : kKinds)
    for (OpKind op : kOps) {
      const size_t n = 77;
      std::vector<unsigned char> in = operand(k, n, rng), io = operand(k, n, rng);
      std::vector<unsigned char> want = io, got(io.size());
      loom::coll::applyPackedBaseline(op, k.kind, k.bytes, in.data(), want.data(), n);
      void* din = dev::deviceAlloc(in.size());
      void* dio = dev::deviceAlloc(io.size());
      ASSERT_TRUE(dev::copy(din, in.data(), in.size()).isOk());
      ASSERT_TRUE(dev::copy(dio, io.data(), io.size()).isOk());
      loom::Status err;
      auto r = loom::coll::reduceDevice(op, k.kind, k.bytes, din, dio, n, dev::Stream{}, &err);
      ASSERT_TRUE(dev::copy(got.data(), dio, got.size()).isOk());
      if (hasLongDouble(k.kind)) {
        EXPECT_EQ(r, loom::coll::DeviceReduceResult::kUnsupported);
      } else {
        EXPECT_EQ(r, loom::coll::DeviceReduceResult::kDone);
        EXPECT_TRUE(sameResult(k, want, got, n, 0)) << k.name << " op " << static_cast<int>(op);
      }
      dev::deviceFree(din);
      dev::deviceFree(dio);
    }
}

// On a machine with a CUDA device: the kernels themselves, every (op, type)
// pair, against the host loop (skipped elsewhere, as here at the time of
// writing: nothing of this has run on a GPU yet).
TEST(ReduceDevice, CudaKernelsGiveHostBits) {
  if (!dev::cudaBuilt() || dev::cudaDevices() == 0) GTEST_SKIP() << "no CUDA device";
  const dev::Backend prev = dev::setBackendForTest(dev::Backend::kCuda);
  std::mt19937_64 rng(11);
  for (const KindCase& k : kKinds)
    for (OpKind op : kOps)
      for (size_t n : {size_t{1}, size_t{17}, size_t{1000}, size_t{100003}}) {
        std::vector<unsigned char> in = operand(k, n, rng), io = operand(k, n, rng);
        std::vector<unsigned char> want = io, got(io.size());
        loom::coll::applyPackedBaseline(op, k.kind, k.bytes, in.data(), want.data(), n);
        void* din = dev::deviceAlloc(in.size());
        void* dio = dev::deviceAlloc(io.size());
        ASSERT_TRUE(din && dio);
        ASSERT_TRUE(dev::copy(din, in.data(), in.size()).isOk());
        ASSERT_TRUE(dev::copy(dio, io.data(), io.size()).isOk());
        loom::Status err;
        auto r = loom::coll::reduceDevice(op, k.kind, k.bytes, din, dio, n, dev::Stream{}, &err);
        ASSERT_NE(r, loom::coll::DeviceReduceResult::kFailed) << err.message();
        dev::Fence f;
        ASSERT_TRUE(dev::fenceRecord(dev::Stream{}, &f).isOk());
        ASSERT_TRUE(dev::fenceWait(f).isOk());
        dev::fenceDestroy(f);
        ASSERT_TRUE(dev::copy(got.data(), dio, got.size()).isOk());
        if (r == loom::coll::DeviceReduceResult::kDone)
          EXPECT_TRUE(sameResult(k, want, got, n, 0))
              << k.name << " op " << static_cast<int>(op) << " n " << n;
        else
          EXPECT_TRUE(hasLongDouble(k.kind) || got == io) << k.name;
        dev::deviceFree(din);
        dev::deviceFree(dio);
      }
  dev::setBackendForTest(prev);
}

loom::Datatype* pre(MPI_Datatype h) {
  return loom::predefinedDatatype(reinterpret_cast<uintptr_t>(h));
}
loom::coll::Op* preOp(MPI_Op h) {
  return loom::coll::toOp(h);
}

void userMax(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<double*>(in);
  auto* b = static_cast<double*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] > b[i] ? a[i] : b[i];
}

// MPI_Reduce_local's device path: kernels for a predefined op on two device
// buffers, staging for mixed buffers, user ops, long double and holes.
TEST_F(ReduceDeviceMock, ReduceLocalOnDeviceBuffers) {
  const int n = 100;
  std::vector<double> a(n), b(n), want(n), got(n);
  for (int i = 0; i < n; ++i) a[i] = i * 0.5, b[i] = 10.0 - i;
  auto* da = static_cast<double*>(dev::deviceAlloc(n * 8));
  auto* db = static_cast<double*>(dev::deviceAlloc(n * 8));
  auto reset = [&] {
    ASSERT_TRUE(dev::copy(da, a.data(), n * 8).isOk());
    ASSERT_TRUE(dev::copy(db, b.data(), n * 8).isOk());
  };
  // Both on the device, MPI_SUM.
  reset();
  ASSERT_TRUE(loom::coll::reduceLocal(da, db, n, pre(MPI_DOUBLE), preOp(MPI_SUM)).isOk());
  ASSERT_TRUE(dev::copy(got.data(), db, n * 8).isOk());
  for (int i = 0; i < n; ++i) EXPECT_EQ(got[i], a[i] + b[i]);
  // Mixed: host input, device inout.
  reset();
  ASSERT_TRUE(loom::coll::reduceLocal(a.data(), db, n, pre(MPI_DOUBLE), preOp(MPI_MAX)).isOk());
  ASSERT_TRUE(dev::copy(got.data(), db, n * 8).isOk());
  for (int i = 0; i < n; ++i) EXPECT_EQ(got[i], a[i] > b[i] ? a[i] : b[i]);
  // Device input, host inout.
  std::vector<double> h = b;
  reset();
  ASSERT_TRUE(loom::coll::reduceLocal(da, h.data(), n, pre(MPI_DOUBLE), preOp(MPI_MIN)).isOk());
  for (int i = 0; i < n; ++i) EXPECT_EQ(h[i], a[i] < b[i] ? a[i] : b[i]);
  // A user op sees host memory (it would fault on the mock's otherwise).
  loom::coll::Op* user = loom::coll::Op::create(userMax, nullptr, true);
  reset();
  ASSERT_TRUE(loom::coll::reduceLocal(da, db, n, pre(MPI_DOUBLE), user).isOk());
  ASSERT_TRUE(dev::copy(got.data(), db, n * 8).isOk());
  for (int i = 0; i < n; ++i) EXPECT_EQ(got[i], a[i] > b[i] ? a[i] : b[i]);
  user->release();
  // Every other double (a vector type): the holes keep their values.
  loom::Datatype* vec = nullptr;
  ASSERT_TRUE(loom::typeVector(n / 2, 1, 2, pre(MPI_DOUBLE), &vec).isOk());
  vec->commit();
  reset();
  ASSERT_TRUE(loom::coll::reduceLocal(da, db, 1, vec, preOp(MPI_SUM)).isOk());
  ASSERT_TRUE(dev::copy(got.data(), db, n * 8).isOk());
  for (int i = 0; i < n; ++i) EXPECT_EQ(got[i], i % 2 ? b[i] : a[i] + b[i]) << i;
  vec->release();
  // long double: no device arithmetic, staged.
  std::vector<long double> la(8, 1.5L), lb(8, 2.25L), lgot(8);
  auto* dla = dev::deviceAlloc(sizeof(long double) * 8);
  auto* dlb = dev::deviceAlloc(sizeof(long double) * 8);
  ASSERT_TRUE(dev::copy(dla, la.data(), sizeof(long double) * 8).isOk());
  ASSERT_TRUE(dev::copy(dlb, lb.data(), sizeof(long double) * 8).isOk());
  ASSERT_TRUE(loom::coll::reduceLocal(dla, dlb, 8, pre(MPI_LONG_DOUBLE), preOp(MPI_SUM)).isOk());
  ASSERT_TRUE(dev::copy(lgot.data(), dlb, sizeof(long double) * 8).isOk());
  for (long double x : lgot) EXPECT_EQ(x, 3.75L);
  dev::deviceFree(dla);
  dev::deviceFree(dlb);
  dev::deviceFree(da);
  dev::deviceFree(db);
}

}  // namespace
