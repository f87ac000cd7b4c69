// Reductions: the kernels (every op on every valid type, 16-bit float
// rounding, MINLOC/MAXLOC ties, invalid pairs rejected, derived types) and
// every reduction algorithm through the single-process simulator.
#include <gtest/gtest.h>
#include <mpi-ext.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "coll/algorithms.h"
#include "coll/op.h"
#include "coll/reduce_kernels.h"
#include "p2p/p2p.h"
#include "coll_sim.h"

using loom::BasicKind;
using loom::Datatype;
using loom::coll::Collective;
using loom::coll::CollArgs;
using loom::coll::Op;
using loom::coll::Schedule;

namespace {

Datatype* dt(MPI_Datatype h) { return loom::predefinedDatatype(reinterpret_cast<uintptr_t>(h)); }
Op* op(MPI_Op h) { return loom::coll::predefinedOp(reinterpret_cast<uintptr_t>(h)); }

template <class T>
std::vector<T> reduced(MPI_Op o, MPI_Datatype t, std::vector<T> in, std::vector<T> io) {
  EXPECT_TRUE(loom::coll::reduceLocal(in.data(), io.data(), static_cast<int64_t>(in.size()),
                                      dt(t), op(o))
                  .isOk());
  return io;
}

// Every integer op on one integer type against a scalar reference.
template <class T>
void checkIntegerType(MPI_Datatype t) {
  const std::vector<T> a = {T(3), T(0), T(5), T(12), T(100), T(1)};
  const std::vector<T> b = {T(6), T(7), T(0), T(10), T(27), T(1)};
  const size_t n = a.size();
  using W = std::make_unsigned_t<T>;
  struct Case {
    MPI_Op op;
    std::function<T(T, T)> f;
  } cases[] = {
      {MPI_SUM, [](T x, T y) { return T(W(x) + W(y)); }},
      {MPI_PROD, [](T x, T y) { return T(W(x) * W(y)); }},
      {MPI_MIN, [](T x, T y) { return x < y ? x : y; }},
      {MPI_MAX, [](T x, T y) { return x > y ? x : y; }},
      {MPI_LAND, [](T x, T y) { return T(x && y); }},
      {MPI_LOR, [](T x, T y) { return T(x || y); }},
      {MPI_LXOR, [](T x, T y) { return T(!x != !y); }},
      {MPI_BAND, [](T x, T y) { return T(x & y); }},
      {MPI_BOR, [](T x, T y) { return T(x | y); }},
      {MPI_BXOR, [](T x, T y) { return T(x ^ y); }},
  };
  for (const Case& c : cases) {
    EXPECT_TRUE(loom::coll::opValidFor(op(c.op), dt(t)));
    std::vector<T> r = reduced<T>(c.op, t, a, b);
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(r[i], c.f(a[i], b[i])) << op(c.op)->name() << " on " << dt(t)->name() << " #" << i;
  }
}

template <class T>
void checkFloatType(MPI_Datatype t) {
  const std::vector<T> a = {T(1.5), T(-2), T(0.25), T(1e10)};
  const std::vector<T> b = {T(2.25), T(3), T(-0.5), T(-1e-3)};
  for (MPI_Op o : {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX}) {
    std::vector<T> r = reduced<T>(o, t, a, b);
    for (size_t i = 0; i < a.size(); ++i) {
      T e = o == MPI_SUM ? a[i] + b[i]
          : o == MPI_PROD ? a[i] * b[i]
          : o == MPI_MIN ? std::min(a[i], b[i])
                          : std::max(a[i], b[i]);
      EXPECT_EQ(r[i], e) << op(o)->name() << " on " << dt(t)->name();
    }
  }
  for (MPI_Op o : {MPI_LAND, MPI_BAND, MPI_BXOR, MPI_MINLOC})
    EXPECT_FALSE(loom::coll::opValidFor(op(o), dt(t))) << op(o)->name();
}

}  // namespace

TEST(CollReduceKernels, IntegerTypesEveryOp) {
  checkIntegerType<int>(MPI_INT);
  checkIntegerType<short>(MPI_SHORT);
  checkIntegerType<long>(MPI_LONG);
  checkIntegerType<long long>(MPI_LONG_LONG);
  checkIntegerType<unsigned>(MPI_UNSIGNED);
  checkIntegerType<unsigned short>(MPI_UNSIGNED_SHORT);
  checkIntegerType<unsigned long>(MPI_UNSIGNED_LONG);
  checkIntegerType<unsigned long long>(MPI_UNSIGNED_LONG_LONG);
  checkIntegerType<signed char>(MPI_SIGNED_CHAR);
  checkIntegerType<unsigned char>(MPI_UNSIGNED_CHAR);
  checkIntegerType<int8_t>(MPI_INT8_T);
  checkIntegerType<int16_t>(MPI_INT16_T);
  checkIntegerType<int32_t>(MPI_INT32_T);
  checkIntegerType<int64_t>(MPI_INT64_T);
  checkIntegerType<uint8_t>(MPI_UINT8_T);
  checkIntegerType<uint16_t>(MPI_UINT16_T);
  checkIntegerType<uint32_t>(MPI_UINT32_T);
  checkIntegerType<uint64_t>(MPI_UINT64_T);
  checkIntegerType<MPI_Aint>(MPI_AINT);
  checkIntegerType<MPI_Count>(MPI_COUNT);
  checkIntegerType<int>(MPI_INTEGER);
}

TEST(CollReduceKernels, SignedOverflowWraps) {
  std::vector<int> r = reduced<int>(MPI_SUM, MPI_INT, {std::numeric_limits<int>::max()}, {1});
  EXPECT_EQ(r[0], std::numeric_limits<int>::min());
}

TEST(CollReduceKernels, FloatTypes) {
  checkFloatType<float>(MPI_FLOAT);
  checkFloatType<double>(MPI_DOUBLE);
  checkFloatType<long double>(MPI_LONG_DOUBLE);
  checkFloatType<float>(MPI_REAL);
  checkFloatType<double>(MPI_DOUBLE_PRECISION);
}

TEST(CollReduceKernels, Complex) {
  using C = std::complex<double>;
  std::vector<C> a = {{1, 2}, {-3, 0.5}}, b = {{4, -1}, {2, 2}};
  std::vector<C> s = reduced<C>(MPI_SUM, MPI_C_DOUBLE_COMPLEX, a, b);
  std::vector<C> p = reduced<C>(MPI_PROD, MPI_C_DOUBLE_COMPLEX, a, b);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(s[i], a[i] + b[i]);
    EXPECT_EQ(p[i], a[i] * b[i]);
  }
  using F = std::complex<float>;
  std::vector<F> pf = reduced<F>(MPI_PROD, MPI_C_FLOAT_COMPLEX, {{0, 1}}, {{0, 1}});
  EXPECT_EQ(pf[0], F(-1, 0));
  using L = std::complex<long double>;
  std::vector<L> pl = reduced<L>(MPI_SUM, MPI_C_LONG_DOUBLE_COMPLEX, {{1, 1}}, {{2, 3}});
  EXPECT_EQ(pl[0], L(3, 4));
  EXPECT_FALSE(loom::coll::opValidFor(op(MPI_MAX), dt(MPI_C_DOUBLE_COMPLEX)));
  EXPECT_FALSE(loom::coll::opValidFor(op(MPI_LAND), dt(MPI_C_FLOAT_COMPLEX)));
}

TEST(CollReduceKernels, BoolAndLogical) {
  std::vector<uint8_t> a = {0, 1, 0, 1}, b = {0, 0, 1, 1};
  EXPECT_EQ(reduced<uint8_t>(MPI_LAND, MPI_C_BOOL, a, b), (std::vector<uint8_t>{0, 0, 0, 1}));
  EXPECT_EQ(reduced<uint8_t>(MPI_LOR, MPI_C_BOOL, a, b), (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(reduced<uint8_t>(MPI_LXOR, MPI_CXX_BOOL, a, b), (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_FALSE(loom::coll::opValidFor(op(MPI_SUM), dt(MPI_C_BOOL)));
  EXPECT_FALSE(loom::coll::opValidFor(op(MPI_BAND), dt(MPI_C_BOOL)));
  std::vector<int32_t> la = {0, 1, 0, 1}, lb = {0, 0, 1, 1};
  EXPECT_EQ(reduced<int32_t>(MPI_LXOR, MPI_LOGICAL, la, lb), (std::vector<int32_t>{0, 1, 1, 0}));
  std::vector<int64_t> l8 = reduced<int64_t>(MPI_LAND, MPI_LOGICAL8, {1, 1}, {0, 1});
  EXPECT_EQ(l8, (std::vector<int64_t>{0, 1}));
}

TEST(CollReduceKernels, Bytes) {
  std::vector<uint8_t> a = {0xf0, 0x0f}, b = {0xff, 0x33};
  EXPECT_EQ(reduced<uint8_t>(MPI_BAND, MPI_BYTE, a, b), (std::vector<uint8_t>{0xf0, 0x03}));
  EXPECT_EQ(reduced<uint8_t>(MPI_BOR, MPI_BYTE, a, b), (std::vector<uint8_t>{0xff, 0x3f}));
  EXPECT_EQ(reduced<uint8_t>(MPI_BXOR, MPI_BYTE, a, b), (std::vector<uint8_t>{0x0f, 0x3c}));
  for (MPI_Op o : {MPI_SUM, MPI_MAX, MPI_LAND})
    EXPECT_FALSE(loom::coll::opValidFor(op(o), dt(MPI_BYTE)));
}

TEST(CollReduceKernels, Float16Conversions) {
  namespace k = loom::coll::kernels;
  // Every finite half and infinity survives the round trip; NaNs stay NaN.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = k::halfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(k::halfToFloat(k::floatToHalf(f)))) << h;
      continue;
    }
    EXPECT_EQ(k::floatToHalf(f), h) << std::hex << h;
  }
  EXPECT_EQ(k::halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(k::halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(k::halfToFloat(0x0001), std::ldexp(1.0f, -24));
  // Round to nearest, ties to even.
  EXPECT_EQ(k::floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);                // tie -> even
  EXPECT_EQ(k::floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);            // tie -> even
  EXPECT_EQ(k::floatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  EXPECT_EQ(k::floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(k::floatToHalf(65520.0f), 0x7c00);  // overflows to infinity
  EXPECT_EQ(k::floatToHalf(std::ldexp(1.0f, -25)), 0x0000);            // tie -> even (0)
  EXPECT_EQ(k::floatToHalf(3 * std::ldexp(1.0f, -25)), 0x0002);        // tie -> even (2)
  EXPECT_EQ(k::floatToHalf(-2.0f), 0xc000);
  // bfloat16
  EXPECT_EQ(k::floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(k::floatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie -> even
  EXPECT_EQ(k::floatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie -> even
  EXPECT_EQ(k::bf16ToFloat(0x4049), 3.140625f);
  EXPECT_TRUE(std::isnan(k::bf16ToFloat(k::floatToBf16(std::nanf("")))));
}

TEST(CollReduceKernels, Float16Arithmetic) {
  // 1 + 2^-11: exactly halfway between 1 and the next half; rounds to 1.
  std::vector<uint16_t> r = reduced<uint16_t>(MPI_SUM, MPIX_C_FLOAT16, {0x3c00, 0x3c01, 0x7bff, 0x0001},
                                              {0x1000, 0x1000, 0x6000, 0x0001});
  EXPECT_EQ(r, (std::vector<uint16_t>{0x3c00, 0x3c02, 0x7c00, 0x0002}));
  r = reduced<uint16_t>(MPI_PROD, MPIX_C_FLOAT16, {0x4000, 0xbc00}, {0x4200, 0x3c00});
  EXPECT_EQ(r, (std::vector<uint16_t>{0x4600, 0xbc00}));  // 2*3 = 6, -1*1 = -1
  r = reduced<uint16_t>(MPI_MIN, MPIX_C_FLOAT16, {0x4000, 0xc000}, {0x3c00, 0x3c00});
  EXPECT_EQ(r, (std::vector<uint16_t>{0x3c00, 0xc000}));
  r = reduced<uint16_t>(MPI_MAX, MPIX_BFLOAT16, {0x4000, 0xc000}, {0x3f80, 0x3f80});
  EXPECT_EQ(r, (std::vector<uint16_t>{0x4000, 0x3f80}));
  r = reduced<uint16_t>(MPI_SUM, MPIX_BFLOAT16, {0x3f80, 0x3f81}, {0x3b80, 0x3b80});
  EXPECT_EQ(r, (std::vector<uint16_t>{0x3f80, 0x3f82}));  // ties to even
  // A long float16 sum accumulates with one rounding per step: 2048 + 1 = 2048.
  r = reduced<uint16_t>(MPI_SUM, MPIX_C_FLOAT16, {0x6800}, {0x3c00});
  EXPECT_EQ(r[0], 0x6800);
  EXPECT_FALSE(loom::coll::opValidFor(op(MPI_BAND), dt(MPIX_C_FLOAT16)));
  EXPECT_FALSE(loom::coll::opValidFor(op(MPI_LAND), dt(MPIX_BFLOAT16)));
  EXPECT_EQ(dt(MPIX_C_FLOAT16)->size(), 2);
  EXPECT_EQ(dt(MPIX_BFLOAT16)->kind(), BasicKind::kBfloat16);
}

TEST(CollReduceKernels, MinlocMaxlocTiesTakeSmallerIndex) {
  struct P {
    int v, i;
  };
  std::vector<P> a = {{5, 3}, {5, 1}, {2, 9}, {7, 0}}, b = {{5, 1}, {5, 3}, {4, 0}, {1, 4}};
  std::vector<P> mn = reduced<P>(MPI_MINLOC, MPI_2INT, a, b);
  std::vector<P> mx = reduced<P>(MPI_MAXLOC, MPI_2INT, a, b);
  int emin[][2] = {{5, 1}, {5, 1}, {2, 9}, {1, 4}}, emax[][2] = {{5, 1}, {5, 1}, {4, 0}, {7, 0}};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(mn[k].v, emin[k][0]);
    EXPECT_EQ(mn[k].i, emin[k][1]);
    EXPECT_EQ(mx[k].v, emax[k][0]);
    EXPECT_EQ(mx[k].i, emax[k][1]);
  }
  // MPI_DOUBLE_INT has padding (size 12, extent 16): the packed path.
  struct DI {
    double v;
    int i;
  };
  std::vector<DI> da = {{1.5, 2}, {-1, 7}}, db = {{1.5, 1}, {3, 0}};
  std::vector<DI> dm = reduced<DI>(MPI_MAXLOC, MPI_DOUBLE_INT, da, db);
  EXPECT_EQ(dm[0].v, 1.5);
  EXPECT_EQ(dm[0].i, 1);
  EXPECT_EQ(dm[1].v, 3);
  EXPECT_EQ(dm[1].i, 0);
  struct SI {
    short v;
    int i;
  };
  std::vector<SI> sm = reduced<SI>(MPI_MINLOC, MPI_SHORT_INT, {{3, 4}, {-2, 1}}, {{3, 2}, {0, 0}});
  EXPECT_EQ(sm[0].i, 2);
  EXPECT_EQ(sm[1].v, -2);
  struct FF {
    float v, i;
  };
  std::vector<FF> ff = reduced<FF>(MPI_MINLOC, MPI_2REAL, {{1, 5}}, {{1, 2}});
  EXPECT_EQ(ff[0].i, 2.0f);
  for (MPI_Datatype t : {MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT,
                         MPI_LONG_DOUBLE_INT, MPI_2REAL, MPI_2DOUBLE_PRECISION, MPI_2INTEGER}) {
    EXPECT_TRUE(loom::coll::opValidFor(op(MPI_MINLOC), dt(t))) << dt(t)->name();
    EXPECT_FALSE(loom::coll::opValidFor(op(MPI_SUM), dt(t))) << dt(t)->name();
  }
}

TEST(CollReduceKernels, InvalidPairsRejected) {
  struct {
    MPI_Op o;
    MPI_Datatype t;
  } bad[] = {{MPI_BAND, MPI_FLOAT},   {MPI_BOR, MPI_DOUBLE},  {MPI_MAXLOC, MPI_CHAR},
             {MPI_MINLOC, MPI_INT},   {MPI_MAXLOC, MPI_DOUBLE}, {MPI_LAND, MPI_DOUBLE},
             {MPI_SUM, MPI_2INT},     {MPI_REPLACE, MPI_INT}, {MPI_NO_OP, MPI_INT},
             {MPI_SUM, MPI_BYTE},     {MPI_SUM, MPI_WCHAR},   {MPI_SUM, MPI_REAL16},
             {MPI_LXOR, MPI_LOGICAL16}, {MPI_SUM, MPI_CHARACTER}, {MPI_LOR, MPI_CHARACTER}};
  for (auto& b : bad) {
    EXPECT_FALSE(loom::coll::opValidFor(op(b.o), dt(b.t))) << op(b.o)->name() << " " << dt(b.t)->name();
    float x = 1, y = 2;
    EXPECT_EQ(loom::coll::reduceLocal(&x, &y, 1, dt(b.t), op(b.o)).code(), MPI_ERR_OP);
  }
  EXPECT_EQ(loom::coll::toOp(MPI_OP_NULL), nullptr);
  EXPECT_EQ(loom::coll::toOp(reinterpret_cast<MPI_Op>(uintptr_t{0x27})), nullptr);
  EXPECT_EQ(loom::coll::toHandle(op(MPI_MAX)), MPI_MAX);
}

// MPI_CHAR under the arithmetic ops: a signed 8-bit integer (an extension
// shared with Open MPI and MPICH).
TEST(CollReduceKernels, CharIsSignedInt8) {
  for (MPI_Op o : {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX})
    for (MPI_Datatype t : {MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR})
      EXPECT_TRUE(loom::coll::opValidFor(op(o), dt(t))) << op(o)->name() << " " << dt(t)->name();
  char a[3] = {-3, 100, 7}, b[3] = {2, 100, -7};
  ASSERT_TRUE(loom::coll::reduceLocal(a, b, 3, dt(MPI_CHAR), op(MPI_MIN)).isOk());
  EXPECT_EQ(b[0], -3);
  ASSERT_TRUE(loom::coll::reduceLocal(a, b, 3, dt(MPI_CHAR), op(MPI_SUM)).isOk());
  EXPECT_EQ(static_cast<signed char>(b[1]), -56);
  EXPECT_EQ(b[2], 0);  // min(7, -7) + 7
}

TEST(CollReduceKernels, DerivedTypes) {
  // A vector of ints (every other int): only the data ints change.
  Datatype* vec = nullptr;
  ASSERT_TRUE(loom::typeVector(3, 1, 2, dt(MPI_INT), &vec).isOk());
  vec->commit();
  EXPECT_EQ(vec->kind(), BasicKind::kInt32);
  std::vector<int> a = {1, -1, 2, -1, 3, -1, 4, -1, 5, -1, 6}, b = {10, 7, 20, 7, 30, 7, 40, 7, 50, 7, 60};
  // count 2 of a 5-int-extent type: elements at 0 and 5.
  ASSERT_TRUE(loom::coll::reduceLocal(a.data(), b.data(), 2, vec, op(MPI_SUM)).isOk());
  // Element 1 starts at int 5 (extent 5 ints): ints 5, 7, 9 get a's -1.
  EXPECT_EQ(b, (std::vector<int>{11, 7, 22, 7, 33, 6, 40, 6, 50, 6, 60}));
  vec->release();
  // A contiguous of doubles: the contiguous path.
  Datatype* con = nullptr;
  ASSERT_TRUE(loom::typeContiguous(2, dt(MPI_DOUBLE), &con).isOk());
  con->commit();
  std::vector<double> x = {1, 2, 3, 4}, y = {0.5, 0.5, 0.5, 0.5};
  ASSERT_TRUE(loom::coll::reduceLocal(x.data(), y.data(), 2, con, op(MPI_MAX)).isOk());
  EXPECT_EQ(y, (std::vector<double>{1, 2, 3, 4}));
  con->release();
  // Mixed leaves: no arithmetic.
  Datatype* st = nullptr;
  int64_t bl[] = {1, 1}, disp[] = {0, 8};
  Datatype* tys[] = {dt(MPI_INT), dt(MPI_DOUBLE)};
  ASSERT_TRUE(loom::typeStruct(bl, disp, tys, &st).isOk());
  st->commit();
  EXPECT_FALSE(loom::coll::opValidFor(op(MPI_SUM), st));
  st->release();
}

// ---- algorithms through the simulator -------------------------------------

namespace {

// A non-commutative op: 2x2 matrix product mod 2^32 on elements of 4 ints
// (row-major), inout = in * inout.
void matmul(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<uint32_t*>(in);
  auto* b = static_cast<uint32_t*>(inout);
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    uint32_t c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                     a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    std::memcpy(b, c, sizeof c);
  }
}

std::vector<int> rankCounts() {
  std::vector<int> v;
  for (int p = 1; p <= 17; ++p) v.push_back(p);
  v.push_back(32);
  v.push_back(64);
  return v;
}

const loom::coll::Algorithm* const* reductionAlgorithms(size_t* n) {
  static std::vector<const loom::coll::Algorithm*> list = [] {
    std::vector<const loom::coll::Algorithm*> l;
    for (const auto& a : loom::coll::algorithms())
      if (a.coll == Collective::kReduce || a.coll == Collective::kAllreduce ||
          a.coll == Collective::kReduceScatter || a.coll == Collective::kReduceScatterBlock ||
          a.coll == Collective::kScan || a.coll == Collective::kExscan)
        if (a.build) l.push_back(&a);  // the simulator runs schedule-based ones
    return l;
  }();
  *n = list.size();
  return list.data();
}

// One element's value on rank r: int64 SUM (exact, commutative) or a 2x2
// matrix (non-commutative). Elements are `w` int64 / uint32 words wide.
struct Data {
  bool matrix;
  Datatype* type;
  Op* op;
  int w() const { return matrix ? 4 : 1; }
  size_t elemBytes() const { return matrix ? 16 : 8; }
  void value(int r, int64_t i, char* out) const {
    if (matrix) {
      uint32_t m[4] = {uint32_t(r + 2), uint32_t(i % 5 + 1), uint32_t(r % 3), 1};
      std::memcpy(out, m, 16);
    } else {
      int64_t v = int64_t(r) * 1000003 + i * 7 + 1;
      std::memcpy(out, &v, 8);
    }
  }
  void fill(std::vector<char>& buf, int r, int64_t count) const {
    buf.assign(count * elemBytes(), 0);
    for (int64_t i = 0; i < count; ++i) value(r, i, buf.data() + i * elemBytes());
  }
  // x(lo) op ... op x(hi-1), element i.
  std::vector<char> expect(int lo, int hi, int64_t i) const {
    std::vector<char> acc(elemBytes()), one(elemBytes());
    for (int r = hi - 1; r >= lo; --r) {
      value(r, i, one.data());
      if (r == hi - 1) {
        acc = one;
      } else if (matrix) {
        int len = 1;
        matmul(one.data(), acc.data(), &len, nullptr);
      } else {
        int64_t a, b;
        std::memcpy(&a, acc.data(), 8);
        std::memcpy(&b, one.data(), 8);
        a += b;
        std::memcpy(acc.data(), &a, 8);
      }
    }
    return acc;
  }
};

std::string runCase(const loom::coll::Algorithm& alg, const Data& d, int p, int64_t count,
                    int root, bool inPlace) {
  loom::sim::SimComms comms(p);
  std::vector<std::vector<char>> send(p), recv(p);
  std::vector<int> rc(p);
  int64_t total = count;
  const bool rs = alg.coll == Collective::kReduceScatter || alg.coll == Collective::kReduceScatterBlock;
  if (rs) {
    total = 0;
    for (int i = 0; i < p; ++i) {
      rc[i] = alg.coll == Collective::kReduceScatterBlock ? int(count) : int((i * 3 + count) % 11);
      total += rc[i];
    }
  }
  std::vector<std::unique_ptr<Schedule>> s;
  for (int r = 0; r < p; ++r) {
    d.fill(send[r], r, total);
    const int64_t myRecv = rs ? rc[r] : count;
    bool ip = inPlace && (alg.coll != Collective::kReduce || r == root);
    if (ip) {
      recv[r] = send[r];  // in place: the input lives in recvbuf
    } else {
      recv[r].assign(std::max<int64_t>(myRecv, 1) * d.elemBytes(), char(0x5a));
    }
    CollArgs a;
    a.coll = alg.coll;
    a.comm = comms[r];
    a.inPlace = ip;
    a.recvbuf = recv[r].data();
    a.sendbuf = ip ? recv[r].data() : send[r].data();
    a.count = total;
    a.type = d.type;
    a.op = d.op;
    a.root = root;
    a.recvCount = rs ? rc[r] : 0;
    a.recvCounts = rc.data();
    if (alg.supports && !alg.supports(a)) return "";
    s.push_back(std::make_unique<Schedule>(comms[r], 0));
    loom::Status st = alg.build(*s.back(), a);
    if (!st.isOk()) return "build failed: " + st.message();
  }
  std::string err = loom::sim::simulate(s);
  if (!err.empty()) return err;
  int64_t displ = 0;
  for (int r = 0; r < p; ++r) {
    int lo = 0, hi = p;
    int64_t first = 0, n = count;
    switch (alg.coll) {
      case Collective::kReduce:
        if (r != root) continue;
        break;
      case Collective::kScan: hi = r + 1; break;
      case Collective::kExscan:
        if (r == 0) continue;
        hi = r;
        break;
      case Collective::kReduceScatter:
      case Collective::kReduceScatterBlock:
        first = displ;
        n = rc[r];
        displ += rc[r];
        break;
      default: break;
    }
    for (int64_t i = 0; i < n; ++i) {
      std::vector<char> e = d.expect(lo, hi, first + i);
      if (std::memcmp(e.data(), recv[r].data() + i * d.elemBytes(), d.elemBytes()) != 0)
        return "rank " + std::to_string(r) + " element " + std::to_string(i) + " wrong";
    }
  }
  return "";
}

}  // namespace

TEST(CollReduceAlgorithms, EveryAlgorithmEveryRankCount) {
  size_t nalg = 0;
  const loom::coll::Algorithm* const* algs = reductionAlgorithms(&nalg);
  ASSERT_GE(nalg, 14u);
  Data sum{false, dt(MPI_INT64_T), op(MPI_SUM)};
  for (size_t k = 0; k < nalg; ++k) {
    const auto& alg = *algs[k];
    for (int p : rankCounts()) {
      const bool rs = alg.coll == Collective::kReduceScatter ||
                      alg.coll == Collective::kReduceScatterBlock;
      for (int64_t count : {0, 1, 7, rs ? 40 : 1000}) {
        std::vector<int> roots = {0};
        if (alg.coll == Collective::kReduce) roots = {0, p - 1, p / 2};
        for (int root : roots)
          for (bool inPlace : {false, true}) {
            std::string e = runCase(alg, sum, p, count, root, inPlace);
            ASSERT_EQ(e, "") << loom::coll::collectiveName(alg.coll) << "/" << alg.name
                             << " p=" << p << " count=" << count << " root=" << root
                             << " inPlace=" << inPlace;
          }
      }
    }
  }
}

TEST(CollReduceAlgorithms, NonCommutativeOpsKeepRankOrder) {
  Datatype* mat = nullptr;
  ASSERT_TRUE(loom::typeContiguous(4, dt(MPI_UINT32_T), &mat).isOk());
  mat->commit();
  Op* user = Op::create(matmul, nullptr, false);
  Data d{true, mat, user};
  size_t nalg = 0;
  const loom::coll::Algorithm* const* algs = reductionAlgorithms(&nalg);
  int ran = 0;
  for (size_t k = 0; k < nalg; ++k) {
    const auto& alg = *algs[k];
    for (int p : {1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 17}) {
      for (int64_t count : {0, 1, 7}) {
        std::vector<int> roots = {0};
        if (alg.coll == Collective::kReduce) roots = {0, p - 1, p / 2};
        for (int root : roots)
          for (bool inPlace : {false, true}) {
            std::string e = runCase(alg, d, p, count, root, inPlace);
            ASSERT_EQ(e, "") << loom::coll::collectiveName(alg.coll) << "/" << alg.name
                             << " p=" << p << " count=" << count << " root=" << root;
            ++ran;
          }
      }
    }
  }
  EXPECT_GT(ran, 0);
  user->release();
  mat->release();
}

// Commutative-only algorithms decline non-commutative ops, and for every
// collective some algorithm accepts them.
TEST(CollReduceAlgorithms, SupportsDeclinesNonCommutative) {
  Op* user = Op::create(matmul, nullptr, false);
  loom::sim::SimComms comms(4);
  CollArgs a;
  a.comm = comms[0];
  a.op = user;
  for (const char* name : {"ring", "rabenseifner"}) {
    bool found = false;
    for (const auto& alg : loom::coll::algorithms())
      if (alg.coll == Collective::kAllreduce && std::string(alg.name) == name) {
        found = true;
        a.coll = alg.coll;
        EXPECT_FALSE(alg.supports(a)) << name;
      }
    EXPECT_TRUE(found) << name;
  }
  for (Collective c : {Collective::kReduce, Collective::kAllreduce, Collective::kReduceScatter,
                       Collective::kReduceScatterBlock, Collective::kScan, Collective::kExscan}) {
    a.coll = c;
    const loom::coll::Algorithm* chosen = nullptr;
    for (size_t bytes : {size_t(8), size_t(1) << 20}) {
      a.bytes = bytes;
      ASSERT_TRUE(loom::coll::select(a, &chosen).isOk()) << loom::coll::collectiveName(c);
      EXPECT_TRUE(!chosen->supports || chosen->supports(a)) << chosen->name;
    }
  }
  user->release();
}

// Every rank ends with bitwise-identical double results (random values,
// where the order of additions shows in the last bits).
TEST(CollReduceAlgorithms, AllreduceBitwiseIdenticalAcrossRanks) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1e6, 1e6);
  for (const auto& alg : loom::coll::algorithms()) {
    if (alg.coll != Collective::kAllreduce || !alg.build) continue;
    for (int p : {3, 5, 6, 7, 8, 12, 13}) {
      const int64_t n = 257;
      loom::sim::SimComms comms(p);
      std::vector<std::vector<double>> in(p, std::vector<double>(n)), out(p, std::vector<double>(n));
      std::vector<std::unique_ptr<Schedule>> s;
      for (int r = 0; r < p; ++r) {
        for (auto& x : in[r]) x = u(rng) * std::pow(10.0, double(rng() % 12) - 6);
        CollArgs a;
        a.coll = Collective::kAllreduce;
        a.comm = comms[r];
        a.sendbuf = in[r].data();
        a.recvbuf = out[r].data();
        a.count = n;
        a.type = dt(MPI_DOUBLE);
        a.op = op(MPI_SUM);
        s.push_back(std::make_unique<Schedule>(comms[r], 0));
        ASSERT_TRUE(alg.build(*s.back(), a).isOk());
      }
      ASSERT_EQ(loom::sim::simulate(s), "");
      for (int r = 1; r < p; ++r)
        EXPECT_EQ(std::memcmp(out[0].data(), out[r].data(), n * sizeof(double)), 0)
            << alg.name << " p=" << p << " rank " << r;
    }
  }
}

TEST(CollReduceSelector, RulesPickAsDocumented) {
  loom::sim::SimComms c8(8), c6(6), c12(12);
  CollArgs a;
  a.coll = Collective::kAllreduce;
  a.op = op(MPI_SUM);
  const loom::coll::Algorithm* alg = nullptr;
  struct {
    loom::Comm* comm;
    size_t bytes;
    const char* expect;
  } cases[] = {{c8[0], 8, "recursive_doubling"},  {c8[0], 16384, "recursive_doubling"},
               {c8[0], 16385, "rabenseifner"},     {c6[0], 1 << 20, "ring"},
               {c12[0], 1 << 20, "rabenseifner"}};
  for (auto& c : cases) {
    a.comm = c.comm;
    a.bytes = c.bytes;
    ASSERT_TRUE(loom::coll::select(a, &alg).isOk());
    EXPECT_STREQ(alg->name, c.expect) << c.bytes << " bytes on " << c.comm->size();
  }
}

// select() remembers, per communicator and collective, the algorithm the
// first matching rule named for the last call's bytes (CommInfo::picks).
// A call of the same bytes that algorithm declines (a non-commutative op
// for the ring) still gets the rules' answer, and one it takes after such
// a call gets it again: every answer equals a fresh communicator's.
TEST(CollReduceSelector, RememberedPickYieldsToTheRules) {
  Op* user = Op::create(matmul, nullptr, false);
  loom::sim::SimComms used(6);
  CollArgs a;
  a.coll = Collective::kAllreduce;
  a.bytes = 1 << 20;
  auto fresh = [&](Op* o) {
    loom::sim::SimComms c(6);
    CollArgs b = a;
    b.comm = c[0];
    b.op = o;
    const loom::coll::Algorithm* alg = nullptr;
    EXPECT_TRUE(loom::coll::select(b, &alg).isOk());
    return alg;
  };
  const loom::coll::Algorithm* forSum = fresh(op(MPI_SUM));
  const loom::coll::Algorithm* forUser = fresh(user);
  ASSERT_STREQ(forSum->name, "ring");
  ASSERT_NE(forUser, forSum);
  a.comm = used[0];
  for (Op* o : {user, op(MPI_SUM), op(MPI_SUM), user, op(MPI_SUM), user}) {
    a.op = o;
    const loom::coll::Algorithm* alg = nullptr;
    ASSERT_TRUE(loom::coll::select(a, &alg).isOk());
    EXPECT_EQ(alg, o == user ? forUser : forSum) << alg->name;
  }
  user->release();
}

// Which receives reduce as they arrive (p2p::irecvFold) and which fall back
// to a scratch copy and a reduction round; both give the same results (the
// simulations above run the folding path with int64 and the fallback with
// the 16-byte matrices; the multi-process reduce suites run both).
TEST(CollReduceAlgorithms, FoldOnlyWholeAlignedElements) {
  EXPECT_TRUE(loom::p2p::canFold(dt(MPI_FLOAT)));
  EXPECT_TRUE(loom::p2p::canFold(dt(MPI_DOUBLE)));
  EXPECT_TRUE(loom::p2p::canFold(dt(MPI_INT8_T)));
  EXPECT_TRUE(loom::p2p::canFold(dt(MPIX_BFLOAT16)));
  EXPECT_FALSE(loom::p2p::canFold(dt(MPI_C_DOUBLE_COMPLEX)));  // 16 bytes
  EXPECT_FALSE(loom::p2p::canFold(dt(MPI_DOUBLE_INT)));        // not contiguous
  Datatype* vec = nullptr;
  ASSERT_TRUE(loom::typeVector(3, 1, 2, dt(MPI_INT), &vec).isOk());
  vec->commit();
  EXPECT_FALSE(loom::p2p::canFold(vec));
  vec->release();
  // A fallback recvReduce ends its round: the reduction runs in the next.
  loom::sim::SimComms comms(2);
  Schedule s(comms[0], 0);
  std::vector<char> buf(32);
  s.recvReduce(buf.data(), 2, dt(MPI_C_DOUBLE_COMPLEX), op(MPI_SUM), 1);
  s.endRound();
  EXPECT_EQ(s.roundCount(), 2u);
  Schedule f(comms[0], 0);
  f.recvReduce(buf.data(), 4, dt(MPI_DOUBLE), op(MPI_SUM), 1);
  f.endRound();
  EXPECT_EQ(f.roundCount(), 1u);
}
