// The datatype engine against a naive model (datatype_model.h): predefined
// types, every constructor, and packing of random nested types, comparing
// geometry and packed bytes of the two.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <complex>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <vector>

#include "datatype_model.h"

using namespace loom::dtmodel;


// --- Predefined types -------------------------------------------------------

TEST(DatatypePredefined, SizesMatchC) {
  struct Case {
    MPI_Datatype h;
    size_t size;
    size_t extent;
    const char* name;
  };
  struct FI { float a; int b; };
  struct DI { double a; int b; };
  struct LI { long a; int b; };
  struct SI { short a; int b; };
  struct LDI { long double a; int b; };
  const Case cases[] = {
      {MPI_CHAR, sizeof(char), sizeof(char), "MPI_CHAR"},
      {MPI_SIGNED_CHAR, 1, 1, "MPI_SIGNED_CHAR"},
      {MPI_UNSIGNED_CHAR, 1, 1, "MPI_UNSIGNED_CHAR"},
      {MPI_BYTE, 1, 1, "MPI_BYTE"},
      {MPI_PACKED, 1, 1, "MPI_PACKED"},
      {MPI_SHORT, sizeof(short), sizeof(short), "MPI_SHORT"},
      {MPI_UNSIGNED_SHORT, sizeof(short), sizeof(short), "MPI_UNSIGNED_SHORT"},
      {MPI_INT, sizeof(int), sizeof(int), "MPI_INT"},
      {MPI_UNSIGNED, sizeof(unsigned), sizeof(unsigned), "MPI_UNSIGNED"},
      {MPI_LONG, sizeof(long), sizeof(long), "MPI_LONG"},
      {MPI_UNSIGNED_LONG, sizeof(long), sizeof(long), "MPI_UNSIGNED_LONG"},
      {MPI_LONG_LONG_INT, sizeof(long long), sizeof(long long), "MPI_LONG_LONG"},
      {MPI_UNSIGNED_LONG_LONG, sizeof(long long), sizeof(long long), "MPI_UNSIGNED_LONG_LONG"},
      {MPI_FLOAT, sizeof(float), sizeof(float), "MPI_FLOAT"},
      {MPI_DOUBLE, sizeof(double), sizeof(double), "MPI_DOUBLE"},
      {MPI_LONG_DOUBLE, sizeof(long double), sizeof(long double), "MPI_LONG_DOUBLE"},
      {MPI_WCHAR, sizeof(wchar_t), sizeof(wchar_t), "MPI_WCHAR"},
      {MPI_C_BOOL, sizeof(bool), sizeof(bool), "MPI_C_BOOL"},
      {MPI_CXX_BOOL, sizeof(bool), sizeof(bool), "MPI_CXX_BOOL"},
      {MPI_INT8_T, 1, 1, "MPI_INT8_T"},
      {MPI_UINT8_T, 1, 1, "MPI_UINT8_T"},
      {MPI_INT16_T, 2, 2, "MPI_INT16_T"},
      {MPI_UINT16_T, 2, 2, "MPI_UINT16_T"},
      {MPI_INT32_T, 4, 4, "MPI_INT32_T"},
      {MPI_UINT32_T, 4, 4, "MPI_UINT32_T"},
      {MPI_INT64_T, 8, 8, "MPI_INT64_T"},
      {MPI_UINT64_T, 8, 8, "MPI_UINT64_T"},
      {MPI_C_COMPLEX, sizeof(std::complex<float>), sizeof(std::complex<float>),
       "MPI_C_FLOAT_COMPLEX"},
      {MPI_C_DOUBLE_COMPLEX, sizeof(std::complex<double>), sizeof(std::complex<double>),
       "MPI_C_DOUBLE_COMPLEX"},
      {MPI_C_LONG_DOUBLE_COMPLEX, sizeof(std::complex<long double>),
       sizeof(std::complex<long double>), "MPI_C_LONG_DOUBLE_COMPLEX"},
      {MPI_CXX_FLOAT_COMPLEX, 8, 8, "MPI_CXX_FLOAT_COMPLEX"},
      {MPI_CXX_DOUBLE_COMPLEX, 16, 16, "MPI_CXX_DOUBLE_COMPLEX"},
      {MPI_CXX_LONG_DOUBLE_COMPLEX, sizeof(std::complex<long double>),
       sizeof(std::complex<long double>), "MPI_CXX_LONG_DOUBLE_COMPLEX"},
      {MPI_AINT, sizeof(MPI_Aint), sizeof(MPI_Aint), "MPI_AINT"},
      {MPI_OFFSET, sizeof(MPI_Offset), sizeof(MPI_Offset), "MPI_OFFSET"},
      {MPI_COUNT, sizeof(MPI_Count), sizeof(MPI_Count), "MPI_COUNT"},
      {MPI_FLOAT_INT, sizeof(float) + sizeof(int), sizeof(FI), "MPI_FLOAT_INT"},
      {MPI_DOUBLE_INT, sizeof(double) + sizeof(int), sizeof(DI), "MPI_DOUBLE_INT"},
      {MPI_LONG_INT, sizeof(long) + sizeof(int), sizeof(LI), "MPI_LONG_INT"},
      {MPI_2INT, 2 * sizeof(int), 2 * sizeof(int), "MPI_2INT"},
      {MPI_SHORT_INT, sizeof(short) + sizeof(int), sizeof(SI), "MPI_SHORT_INT"},
      {MPI_LONG_DOUBLE_INT, sizeof(long double) + sizeof(int), sizeof(LDI),
       "MPI_LONG_DOUBLE_INT"},
      {MPI_INTEGER, 4, 4, "MPI_INTEGER"},
      {MPI_DOUBLE_PRECISION, 8, 8, "MPI_DOUBLE_PRECISION"},
      {MPI_2DOUBLE_PRECISION, 16, 16, "MPI_2DOUBLE_PRECISION"},
      {MPI_COMPLEX16, 16, 16, "MPI_COMPLEX16"},
      {MPI_COMPLEX32, 32, 32, "MPI_COMPLEX32"},
  };
  for (const Case& c : cases) {
    Datatype* t = pre(c.h);
    ASSERT_NE(t, nullptr) << c.name;
    EXPECT_EQ(t->size(), (int64_t)c.size) << c.name;
    EXPECT_EQ(t->extent(), (int64_t)c.extent) << c.name;
    EXPECT_EQ(t->lb(), 0) << c.name;
    EXPECT_EQ(t->name(), c.name);
    EXPECT_TRUE(t->isPredefined());
    EXPECT_TRUE(t->isCommitted());
    EXPECT_EQ(t->combiner(), MPI_COMBINER_NAMED);
    EXPECT_EQ(loom::api::toHandle(t), c.h) << c.name;
    EXPECT_EQ(t->isContiguous(), c.size == c.extent) << c.name;
  }
  // The ABI encodes the size of fixed-size types in the handle value.
  for (MPI_Datatype h : {MPI_INT8_T, MPI_UINT16_T, MPI_INT32_T, MPI_UINT64_T, MPI_REAL8,
                         MPI_COMPLEX8, MPI_INTEGER16, MPI_COMPLEX32}) {
    auto v = reinterpret_cast<uintptr_t>(h);
    EXPECT_EQ(pre(h)->size(), int64_t{1} << ((v >> 3) & 7)) << pre(h)->name();
  }
}

TEST(DatatypePredefined, KindsAndPairs) {
  using K = loom::BasicKind;
  EXPECT_EQ(pre(MPI_INT)->kind(), K::kInt32);
  EXPECT_EQ(pre(MPI_UNSIGNED_LONG)->kind(), K::kUint64);
  EXPECT_EQ(pre(MPI_LONG_LONG)->kind(), K::kInt64);
  EXPECT_EQ(pre(MPI_AINT)->kind(), K::kInt64);
  EXPECT_EQ(pre(MPI_SIGNED_CHAR)->kind(), K::kInt8);
  EXPECT_EQ(pre(MPI_CHAR)->kind(), K::kChar);
  EXPECT_EQ(pre(MPI_BYTE)->kind(), K::kByte);
  EXPECT_EQ(pre(MPI_FLOAT)->kind(), K::kFloat);
  EXPECT_EQ(pre(MPI_LONG_DOUBLE)->kind(), K::kLongDouble);
  EXPECT_EQ(pre(MPI_C_DOUBLE_COMPLEX)->kind(), K::kDoubleComplex);
  EXPECT_EQ(pre(MPI_C_BOOL)->kind(), K::kBool);
  EXPECT_EQ(pre(MPI_DOUBLE_INT)->kind(), K::kDoubleInt);
  EXPECT_EQ(pre(MPI_2INT)->kind(), K::k2Int);
  // MPI_SHORT_INT has a hole: {short at 0, int at 4}.
  Datatype* si = pre(MPI_SHORT_INT);
  EXPECT_FALSE(si->isContiguous());
  EXPECT_EQ(si->trueExtent(), 8);
  ASSERT_EQ(si->runs().size(), 2u);
  EXPECT_EQ(si->runs()[1].offset, 4);
  // Derived types keep the kind of homogeneous leaves only.
  T v = vector(3, 1, 2, tDouble());
  EXPECT_EQ(v.t->kind(), K::kDouble);
  T s = structOf({1, 1}, {0, 8}, {tDouble(), tInt()});
  EXPECT_EQ(s.t->kind(), K::kNone);
  EXPECT_STREQ(loom::basicKindName(K::kFloatInt), "float_int");
  releaseAll({v, s});
}

TEST(DatatypePredefined, HandleTranslation) {
  EXPECT_EQ(loom::api::toDatatype(MPI_DATATYPE_NULL), nullptr);
  EXPECT_EQ(loom::api::toDatatype(reinterpret_cast<MPI_Datatype>(uintptr_t{0x211})), nullptr);
  EXPECT_EQ(loom::api::toDatatype(reinterpret_cast<MPI_Datatype>(uintptr_t{0x123})), nullptr);
  EXPECT_EQ(pre(MPI_LONG_LONG_INT), pre(MPI_LONG_LONG));
  T c = contiguous(2, tInt());
  MPI_Datatype h = loom::api::toHandle(c.t);
  EXPECT_EQ(loom::api::toDatatype(h), c.t);
  c.t->retain();  // a pending operation
  c.t->markUserFreed();
  c.t->release();  // MPI_Type_free
  EXPECT_EQ(loom::api::toDatatype(h), nullptr);
  EXPECT_EQ(c.t->refCount(), 1);
  c.t->release();  // the operation completes
}

// --- Constructors, hand-computed geometry ------------------------------------

TEST(DatatypeConstructors, Contiguous) {
  T c = contiguous(3, tInt());
  EXPECT_EQ(c.t->size(), 12);
  EXPECT_EQ(c.t->extent(), 12);
  EXPECT_TRUE(c.t->isContiguous());
  EXPECT_EQ(c.t->runs().size(), 1u);
  EXPECT_EQ(c.t->combiner(), MPI_COMBINER_CONTIGUOUS);
  EXPECT_FALSE(c.t->isCommitted());
  c.t->commit();
  EXPECT_TRUE(c.t->isCommitted());
  T z = contiguous(0, tInt());
  EXPECT_EQ(z.t->size(), 0);
  EXPECT_EQ(z.t->extent(), 0);
  EXPECT_EQ(z.t->pack(nullptr, 5, 0, nullptr, 0), 0u);
  std::mt19937 rng(1);
  checkType(c, 4, rng);
  releaseAll({c, z});
}

TEST(DatatypeConstructors, Vector) {
  T v = vector(3, 2, 4, tInt());  // xx..xx..xx
  EXPECT_EQ(v.t->size(), 24);
  EXPECT_EQ(v.t->extent(), 40);
  EXPECT_EQ(v.t->trueExtent(), 40);
  EXPECT_FALSE(v.t->isContiguous());
  ASSERT_EQ(v.t->runs().size(), 1u);  // one strided run
  EXPECT_EQ(v.t->runs()[0].count, 3);
  EXPECT_EQ(v.t->combiner(), MPI_COMBINER_VECTOR);
  // Negative stride: blocks at 0, -8, -16 bytes.
  T n = vector(3, 1, -2, tInt());
  EXPECT_EQ(n.t->lb(), -16);
  EXPECT_EQ(n.t->ub(), 4);
  EXPECT_EQ(n.t->trueLb(), -16);
  EXPECT_EQ(n.t->trueExtent(), 20);
  // stride == blocklength: contiguous.
  T c = vector(4, 2, 2, tDouble());
  EXPECT_TRUE(c.t->isContiguous());
  T h = hvector(2, 1, 3, tInt());  // overlapping blocks: size counts both
  EXPECT_EQ(h.t->size(), 8);
  EXPECT_EQ(h.t->extent(), 7);
  std::mt19937 rng(2);
  for (auto* x : {&v, &n, &c, &h}) checkType(*x, 3, rng);
  releaseAll({v, n, c, h});
}

TEST(DatatypeConstructors, Indexed) {
  T i = indexed({2, 1, 3}, {4, -2, 10}, tInt());
  EXPECT_EQ(i.t->size(), 24);
  EXPECT_EQ(i.t->lb(), -8);
  EXPECT_EQ(i.t->ub(), 52);
  T h = hindexed({1, 0, 2}, {-5, 100, 3}, tChar());  // zero-length block ignored in bounds
  EXPECT_EQ(h.t->lb(), -5);
  EXPECT_EQ(h.t->ub(), 5);
  EXPECT_EQ(h.t->size(), 3);
  T b = indexedBlock(2, {0, 3, 6}, tDouble());  // regular: one run
  EXPECT_EQ(b.t->runs().size(), 1u);
  EXPECT_EQ(b.t->extent(), 64);
  T hb = hindexedBlock(1, {16, 0, 8}, tDouble());
  EXPECT_EQ(hb.t->extent(), 24);
  EXPECT_EQ(hb.t->combiner(), MPI_COMBINER_HINDEXED_BLOCK);
  std::mt19937 rng(3);
  for (auto* x : {&i, &h, &b, &hb}) checkType(*x, 3, rng);
  releaseAll({i, h, b, hb});
}

TEST(DatatypeConstructors, StructPaddingAndResized) {
  T s = structOf({1, 1}, {0, 8}, {tDouble(), tChar()});
  EXPECT_EQ(s.t->size(), 9);
  EXPECT_EQ(s.t->trueExtent(), 9);
  EXPECT_EQ(s.t->extent(), 16);  // padded like struct { double; char; }
  T r = resized(tInt(), -4, 12);
  EXPECT_EQ(r.t->lb(), -4);
  EXPECT_EQ(r.t->extent(), 12);
  EXPECT_EQ(r.t->trueLb(), 0);
  EXPECT_EQ(r.t->trueExtent(), 4);
  // A member with explicit bounds turns the padding off.
  T rc = resized(tChar(), 0, 3);
  T s2 = structOf({1, 1}, {0, 8}, {tDouble(), rc});
  EXPECT_EQ(s2.t->extent(), 11);
  T e = structOf({0, 0}, {4, 8}, {tInt(), tDouble()});
  EXPECT_EQ(e.t->size(), 0);
  EXPECT_EQ(e.t->extent(), 0);
  std::mt19937 rng(4);
  for (auto* x : {&s, &r, &rc, &s2, &e}) checkType(*x, 3, rng);
  releaseAll({s, r, rc, s2, e});
}

TEST(DatatypeConstructors, Subarray) {
  T c = subarray({4, 5}, {2, 3}, {1, 2}, MPI_ORDER_C, tInt());
  EXPECT_EQ(c.t->size(), 24);
  EXPECT_EQ(c.t->lb(), 0);
  EXPECT_EQ(c.t->extent(), 80);
  EXPECT_EQ(c.t->trueLb(), (1 * 5 + 2) * 4);
  EXPECT_EQ(c.t->trueUb(), (2 * 5 + 4 + 1) * 4);
  T f = subarray({4, 5}, {2, 3}, {1, 2}, MPI_ORDER_FORTRAN, tInt());
  EXPECT_EQ(f.t->extent(), 80);
  EXPECT_EQ(f.t->trueLb(), (1 + 2 * 4) * 4);
  EXPECT_EQ(f.t->trueUb(), (2 + 4 * 4 + 1) * 4);
  T c3 = subarray({3, 4, 5}, {2, 2, 3}, {1, 0, 1}, MPI_ORDER_C, tShortInt());
  T f3 = subarray({3, 4, 5}, {2, 4, 1}, {0, 0, 4}, MPI_ORDER_FORTRAN, tDouble());
  T z = subarray({3}, {0}, {1}, MPI_ORDER_C, tInt());
  EXPECT_EQ(z.t->size(), 0);
  EXPECT_EQ(z.t->extent(), 12);
  Datatype* bad = nullptr;
  std::vector<int64_t> s{4}, ss{3}, st{2}, zero{0};
  EXPECT_EQ(loom::typeSubarray(s, ss, st, MPI_ORDER_C, tInt().t, &bad).code(), MPI_ERR_ARG);
  EXPECT_EQ(loom::typeSubarray(s, ss, zero, 7, tInt().t, &bad).code(), MPI_ERR_ARG);
  std::mt19937 rng(5);
  for (auto* x : {&c, &f, &c3, &f3, &z}) checkType(*x, 2, rng);
  releaseAll({c, f, c3, f3, z});
}

TEST(DatatypeConstructors, NestedVectorOfStructOfIndexed) {
  T idx = indexed({1, 2}, {0, 3}, tShortInt());  // elements 0, 3, 4 of 8-byte pairs
  EXPECT_EQ(idx.t->size(), 18);
  EXPECT_EQ(idx.t->extent(), 40);
  T st = structOf({1, 2}, {-8, 40}, {tDouble(), idx});
  EXPECT_EQ(st.t->size(), 8 + 36);
  EXPECT_EQ(st.t->lb(), -8);
  EXPECT_EQ(st.t->ub(), 120);  // 40 + 2 * 40; extent 128 is already 8-aligned
  T vec = vector(3, 2, -3, st);
  EXPECT_EQ(vec.t->size(), 6 * 44);
  T d = dup(vec);
  EXPECT_EQ(d.t->combiner(), MPI_COMBINER_DUP);
  std::mt19937 rng(6);
  for (auto* x : {&idx, &st, &vec, &d}) checkType(*x, 3, rng);
  releaseAll({idx, st, vec, d});
}

TEST(DatatypeConstructors, Errors) {
  Datatype* t = nullptr;
  EXPECT_EQ(loom::typeContiguous(-1, tInt().t, &t).code(), MPI_ERR_COUNT);
  EXPECT_EQ(loom::typeVector(2, -1, 1, tInt().t, &t).code(), MPI_ERR_ARG);
  EXPECT_EQ(loom::typeContiguous(1, nullptr, &t).code(), MPI_ERR_TYPE);
  std::vector<int64_t> bl{1, -2}, disp{0, 4};
  EXPECT_EQ(loom::typeHindexed(bl, disp, tInt().t, &t).code(), MPI_ERR_ARG);
  std::vector<Datatype*> types{tInt().t, nullptr};
  std::vector<int64_t> ones{1, 1};
  EXPECT_EQ(loom::typeStruct(ones, disp, types, &t).code(), MPI_ERR_TYPE);
  EXPECT_EQ(loom::typeHvector(int64_t{1} << 40, int64_t{1} << 30, 8, tDouble().t, &t).code(),
            MPI_ERR_ARG);
}

TEST(DatatypeConstructors, ReferenceCounting) {
  T inner = contiguous(2, tDouble());
  T outer = vector(2, 1, 3, inner);
  EXPECT_EQ(inner.t->refCount(), 2);  // the caller + outer
  inner.t->markUserFreed();
  inner.t->release();  // MPI_Type_free(inner): outer still works
  std::mt19937 rng(7);
  checkType(outer, 2, rng);
  EXPECT_EQ(outer.t->children().size(), 1u);
  outer.t->release();  // frees both
  // Predefined types ignore reference counting.
  pre(MPI_INT)->release();
  EXPECT_TRUE(pre(MPI_INT)->valid());
}

// --- Packing ------------------------------------------------------------------

TEST(DatatypePack, ContiguousIsOneCopy) {
  std::vector<double> a(1000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = i * 0.5;
  Datatype* d = pre(MPI_DOUBLE);
  std::vector<iovec> iov;
  EXPECT_EQ(d->segments(a.data(), 1000, 16, 800, &iov), 800u);
  ASSERT_EQ(iov.size(), 1u);
  EXPECT_EQ(iov[0].iov_base, reinterpret_cast<char*>(a.data()) + 16);
  std::vector<double> out(1000);
  EXPECT_EQ(d->pack(a.data(), 1000, 0, out.data(), 1 << 20), 8000u);
  EXPECT_EQ(out, a);
  EXPECT_EQ(d->pack(a.data(), 1000, 8000, out.data(), 10), 0u);  // past the end
}

TEST(DatatypePack, VectorColumnOfMatrix) {
  // Column 2 of a 50x40 row-major matrix of doubles.
  std::vector<double> m(50 * 40);
  for (size_t i = 0; i < m.size(); ++i) m[i] = static_cast<double>(i);
  T col = vector(50, 1, 40, tDouble());
  std::vector<double> out(50);
  EXPECT_EQ(col.t->pack(m.data() + 2, 1, 0, out.data(), 50 * 8), 400u);
  for (int r = 0; r < 50; ++r) EXPECT_EQ(out[r], r * 40 + 2);
  std::vector<iovec> iov;
  EXPECT_EQ(col.t->segments(m.data() + 2, 1, 8, 100, &iov), 100u);
  EXPECT_EQ(iov.size(), 13u);  // 12 whole doubles, then 4 bytes of the 13th
  releaseAll({col});
}

TEST(DatatypePack, RandomNestedTypes) {
  std::mt19937 rng(12345);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<T> made;
  std::function<T(int)> gen = [&](int depth) -> T {
    if (depth == 0 || pick(0, 9) < 2) {
      switch (pick(0, 4)) {
        case 0: return tInt();
        case 1: return tDouble();
        case 2: return tChar();
        case 3: return tShortInt();
        default: return tDoubleInt();
      }
    }
    T o = gen(depth - 1);
    T r;
    switch (pick(0, 10)) {
      case 0: r = contiguous(pick(0, 4), o); break;
      case 1: r = vector(pick(0, 4), pick(0, 3), pick(-4, 4), o); break;
      case 2: r = hvector(pick(0, 4), pick(0, 3), pick(-40, 40), o); break;
      case 3: {
        int n = pick(0, 4);
        std::vector<int64_t> bl, d;
        for (int i = 0; i < n; ++i) bl.push_back(pick(0, 3)), d.push_back(pick(-6, 6));
        r = indexed(bl, d, o);
        break;
      }
      case 4: {
        int n = pick(0, 4);
        std::vector<int64_t> bl, d;
        for (int i = 0; i < n; ++i) bl.push_back(pick(0, 3)), d.push_back(pick(-50, 50));
        r = hindexed(bl, d, o);
        break;
      }
      case 5: {
        std::vector<int64_t> d;
        for (int i = pick(0, 4); i > 0; --i) d.push_back(pick(-5, 5));
        r = indexedBlock(pick(0, 3), d, o);
        break;
      }
      case 6: {
        std::vector<int64_t> d;
        for (int i = pick(0, 4); i > 0; --i) d.push_back(pick(-30, 30));
        r = hindexedBlock(pick(0, 3), d, o);
        break;
      }
      case 7: {
        T o2 = gen(depth - 1);
        made.push_back(o2);
        r = structOf({pick(0, 2), pick(0, 3)}, {pick(-20, 20), pick(-20, 40)}, {o, o2});
        break;
      }
      case 8: r = resized(o, pick(-16, 16), pick(1, 64)); break;
      case 9: {
        int nd = pick(1, 3);
        std::vector<int64_t> sz, sub, st;
        for (int i = 0; i < nd; ++i) {
          sz.push_back(pick(1, 4));
          sub.push_back(pick(0, sz.back()));
          st.push_back(pick(0, sz.back() - sub.back()));
        }
        r = subarray(sz, sub, st, pick(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN, o);
        break;
      }
      default: r = dup(o); break;
    }
    made.push_back(o);
    return r;
  };
  for (int iter = 0; iter < 300; ++iter) {
    T x = gen(3);
    SCOPED_TRACE("iteration " + std::to_string(iter));
    checkType(x, pick(0, 3), rng);
    made.push_back(x);
    if (HasFailure()) break;
  }
  for (auto& x : made) x.t->release();  // predefined ones ignore it
}

TEST(DatatypePack, LargeStridedIsFast) {
  // 4M doubles, every other one: one run, one 8-byte copy per block.
  const int64_t n = 1 << 22;
  std::vector<double> src(2 * n, 1.0), out(n);
  T v = vector(n, 1, 2, tDouble());
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(v.t->pack(src.data(), 1, 0, out.data(), n * 8), size_t(n * 8));
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(ms, 500.0);  // generous: shared 2-core CI machine
  RecordProperty("pack_ms", std::to_string(ms));
  EXPECT_EQ(v.t->runs().size(), 1u);
  releaseAll({v});
}
