// Datatype construction: the predefined table and the MPI type constructors,
// each of which flattens its result into runs (see datatype.h).
#include "core/datatype.h"

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>

namespace loom {

namespace {

int64_t minAffine(int64_t n, int64_t step) { return n > 0 ? std::min<int64_t>(0, (n - 1) * step) : 0; }
int64_t maxAffine(int64_t n, int64_t step) { return n > 0 ? std::max<int64_t>(0, (n - 1) * step) : 0; }

// One run in canonical form: a single block has stride 0; blocks that touch
// (stride == length) become one block.
void normalize(DatatypeRun& r) {
  if (r.count > 1 && r.stride == r.length) {
    r.length *= r.count;
    r.count = 1;
  }
  if (r.count == 1) r.stride = 0;
}

// Appends `r` to `v`, merging it into the last run when it continues it:
// a block that extends the last block, or blocks of the same length that
// continue the last run's stride.
void pushRun(std::vector<DatatypeRun>& v, DatatypeRun r) {
  if (r.length == 0 || r.count == 0) return;
  normalize(r);
  if (!v.empty()) {
    DatatypeRun& p = v.back();
    if (p.count == 1 && r.count == 1 && p.offset + p.length == r.offset) {
      p.length += r.length;
      return;
    }
    if (p.length == r.length) {
      int64_t s = p.count > 1 ? p.stride : (r.count > 1 ? r.stride : r.offset - p.offset);
      bool pOk = p.count == 1 || p.stride == s;
      bool rOk = r.count == 1 || r.stride == s;
      if (pOk && rOk && r.offset == p.offset + p.count * s) {
        p.count += r.count;
        p.stride = s;
        normalize(p);
        return;
      }
    }
  }
  v.push_back(r);
}

// Appends `reps` copies of `src`, the j-th shifted by shift + j * stride.
// A single run that the repetition continues stays a single run, so a vector
// of a vector of a basic type costs O(1) runs, not O(count).
void appendRepeated(std::vector<DatatypeRun>& out, const std::vector<DatatypeRun>& src,
                    int64_t shift, int64_t reps, int64_t stride) {
  if (reps <= 0 || src.empty()) return;
  if (src.size() == 1) {
    DatatypeRun r = src[0];
    r.offset += shift;
    if (reps == 1) return pushRun(out, r);
    if (r.count == 1) return pushRun(out, {r.offset, r.length, reps, stride});
    if (stride == r.count * r.stride) {
      return pushRun(out, {r.offset, r.length, r.count * reps, r.stride});
    }
  }
  for (int64_t j = 0; j < reps; ++j) {
    for (DatatypeRun r : src) {
      r.offset += shift + j * stride;
      pushRun(out, r);
    }
  }
}

std::vector<DatatypeRun> repeated(const std::vector<DatatypeRun>& src, int64_t shift,
                                  int64_t reps, int64_t stride) {
  std::vector<DatatypeRun> out;
  appendRepeated(out, src, shift, reps, stride);
  return out;
}

}  // namespace

// Builds derived types field by field; the only code that touches the
// private members besides the packer.
struct Datatype::Private {
  Datatype* t = new Datatype();
  bool haveBounds = false;
  bool haveKind = false;

  explicit Private(int combiner) { t->combiner_ = combiner; }

  void child(Datatype* c) {
    c->retain();
    t->children_.push_back(c);
    t->align_ = std::max(t->align_, c->align_);
    t->explicitBounds_ = t->explicitBounds_ || c->explicitBounds_;
  }
  // Records `reps` copies of `c` at disp + j * stride in the bounds and kind.
  void copies(const Datatype* c, int64_t disp, int64_t reps, int64_t stride) {
    if (reps <= 0) return;
    int64_t lo = disp + c->lb_ + minAffine(reps, stride);
    int64_t hi = disp + c->ub_ + maxAffine(reps, stride);
    t->lb_ = haveBounds ? std::min(t->lb_, lo) : lo;
    t->ub_ = haveBounds ? std::max(t->ub_, hi) : hi;
    haveBounds = true;
    if (!haveKind) t->kind_ = c->kind_;
    else if (t->kind_ != c->kind_) t->kind_ = BasicKind::kNone;
    haveKind = true;
  }
  // The next part of the packed stream: `copies` packed elements of `c`
  // (a child already retained).
  void part(const Datatype* c, int64_t copies) {
    if (copies <= 0 || c->size_ == 0) return;
    if (!t->parts_.empty() && t->parts_.back().type == c) t->parts_.back().copies += copies;
    else t->parts_.push_back({c, copies});
    t->elements_ += copies * c->elements_;  // <= size, which the caller checked for overflow
  }
  Datatype* finish() {
    if (!haveKind && !t->children_.empty()) t->kind_ = t->children_[0]->kind_;
    t->finishLayout();
    return t;
  }

  static Datatype* predefined(uint32_t abi, const char* name, int64_t size, int64_t extent,
                              int64_t align, BasicKind kind,
                              std::initializer_list<DatatypeRun> blocks) {
    auto* t = new Datatype();
    t->abiValue_ = abi;
    t->combiner_ = MPI_COMBINER_NAMED;
    t->kind_ = kind;
    t->name_ = name;
    t->align_ = align;
    t->committed_ = true;
    for (const DatatypeRun& b : blocks) {
      pushRun(t->runs_, b);
      t->leafSize_[t->elements_++] = b.length;  // each block is one basic element
    }
    t->ub_ = extent;
    t->finishLayout();
    (void)size;  // equals the sum of the blocks; kept in the table for the reader
    return t;
  }

  static Datatype* dup(const Datatype* old) {
    Private b(MPI_COMBINER_DUP);
    Datatype* t = b.t;
    b.child(const_cast<Datatype*>(old));
    b.part(old, 1);
    t->kind_ = old->kind_;
    t->lb_ = old->lb_;
    t->ub_ = old->ub_;
    t->align_ = old->align_;
    t->explicitBounds_ = old->explicitBounds_;
    t->runs_ = old->runs_;
    t->committed_ = old->committed_;
    t->finishLayout();
    return t;
  }

  static Datatype* resized(Datatype* old, int64_t lb, int64_t extent) {
    Private b(MPI_COMBINER_RESIZED);
    b.child(old);
    b.part(old, 1);
    b.t->kind_ = old->kind_;
    b.t->runs_ = old->runs_;
    b.t->lb_ = lb;
    b.t->ub_ = lb + extent;
    b.t->explicitBounds_ = true;
    b.t->finishLayout();
    return b.t;
  }

  // A second object with everything of `o` but its references, user-freed
  // mark and attributes. Lists every member: keep in step with datatype.h.
  static Datatype* clone(const Datatype* o) {
    auto* t = new Datatype();
    t->abiValue_ = 0;
    t->combiner_ = o->combiner_;
    t->kind_ = o->kind_;
    t->committed_ = o->committed_;
    t->explicitBounds_ = o->explicitBounds_;
    t->contiguous_ = o->contiguous_;
    t->permanent_ = false;
    t->size_ = o->size_;
    t->lb_ = o->lb_;
    t->ub_ = o->ub_;
    t->trueLb_ = o->trueLb_;
    t->trueUb_ = o->trueUb_;
    t->align_ = o->align_;
    t->runs_ = o->runs_;
    t->runStart_ = o->runStart_;
    t->steps_ = o->steps_;
    t->stepStart_ = o->stepStart_;
    t->blocks_ = o->blocks_;
    t->parts_ = o->parts_;
    t->leafSize_[0] = o->leafSize_[0];
    t->leafSize_[1] = o->leafSize_[1];
    t->elements_ = o->elements_;
    t->children_ = o->children_;
    for (Datatype* c : t->children_) c->retain();
    t->name_ = o->name_;
    if (o->args_) t->setConstruction(o->combiner_, *o->args_);
    return t;
  }
  static void setPermanent(Datatype* t) { t->permanent_ = true; }

  std::vector<DatatypeRun>& runs() { return t->runs_; }
  static const std::vector<DatatypeRun>& runsOf(const Datatype* c) { return c->runs_; }
  static void setBounds(Datatype* t, int64_t lb, int64_t ub, bool explicitBounds) {
    t->lb_ = lb;
    t->ub_ = ub;
    t->explicitBounds_ = t->explicitBounds_ || explicitBounds;
    t->finishLayout();
  }
  static void padToAlignment(Datatype* t) {
    int64_t ext = t->extent();
    if (t->explicitBounds_ || t->align_ <= 1 || ext <= 0) return;
    if (int64_t rem = ext % t->align_) setBounds(t, t->lb_, t->ub_ + t->align_ - rem, false);
  }
};

void Datatype::finishLayout() {
  runStart_.assign(1, 0);
  size_ = 0;
  bool any = false;
  for (const DatatypeRun& r : runs_) {
    size_ += r.length * r.count;
    runStart_.push_back(static_cast<size_t>(size_));
    int64_t lo = r.offset + minAffine(r.count, r.stride);
    int64_t hi = r.offset + maxAffine(r.count, r.stride) + r.length;
    trueLb_ = any ? std::min(trueLb_, lo) : lo;
    trueUb_ = any ? std::max(trueUb_, hi) : hi;
    any = true;
  }
  if (!any) trueLb_ = trueUb_ = 0;
  contiguous_ = size_ == 0 || (runs_.size() == 1 && runs_[0].count == 1 && extent() == size_);
  compileProgram();
}

Datatype::~Datatype() {
  for (Datatype* c : children_) c->release();
}

void Datatype::setConstruction(int combiner, DatatypeArgs args) {
  combiner_ = combiner;
  args_ = std::make_unique<DatatypeArgs>(std::move(args));
}

void Datatype::retain() {
  if (!isPredefined()) refs_.fetch_add(1, std::memory_order_relaxed);
}

void Datatype::release() {
  if (isPredefined()) return;
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    magic_ = 0;  // a stale handle now fails valid() (while the memory is not reused)
    delete this;
  }
}

// Basic elements in `bytes` (0 < bytes < size()) of one packed element, or
// -1 when they end inside a basic element: whole parts are counted from
// their children's totals, the part the bytes end in recursively.
int64_t Datatype::partialElements(int64_t bytes) const {
  int64_t n = 0;
  if (isPredefined()) {
    for (int64_t i = 0; i < elements_ && bytes > 0; ++i) {
      if (bytes < leafSize_[i]) return -1;
      bytes -= leafSize_[i];
      ++n;
    }
    return n;
  }
  for (const Part& p : parts_) {
    const int64_t size = p.type->size_;
    const int64_t whole = std::min(p.copies, bytes / size);
    n += whole * p.type->elements_;
    bytes -= whole * size;
    if (bytes == 0) return n;
    if (whole < p.copies) {
      int64_t rest = p.type->partialElements(bytes);
      return rest < 0 ? -1 : n + rest;
    }
  }
  return n;  // not reached: bytes < size()
}

int64_t Datatype::basicElementsIn(int64_t bytes) const {
  if (size_ == 0 || bytes <= 0) return 0;
  const int64_t rest = bytes % size_;
  const int64_t n = bytes / size_ * elements_;
  if (rest == 0) return n;
  const int64_t part = partialElements(rest);
  return part < 0 ? -1 : n + part;
}

// --- Predefined types -----------------------------------------------------

namespace {

template <class T>
constexpr BasicKind intKind() {
  constexpr bool s = std::is_signed_v<T>;
  switch (sizeof(T)) {
    case 1: return s ? BasicKind::kInt8 : BasicKind::kUint8;
    case 2: return s ? BasicKind::kInt16 : BasicKind::kUint16;
    case 4: return s ? BasicKind::kInt32 : BasicKind::kUint32;
    default: return s ? BasicKind::kInt64 : BasicKind::kUint64;
  }
}

template <class A, class B>
struct PairOf {
  A a;
  B b;
};

constexpr size_t kTableSize = 0x100;  // ABI datatype handles are 0x200..0x2ff

struct Table {
  std::array<Datatype*, kTableSize> slot{};

  template <class T>
  void scalar(uint32_t abi, const char* name, BasicKind kind) {
    slot[abi - 0x200] = Datatype::Private::predefined(
        abi, name, sizeof(T), sizeof(T), alignof(T), kind, {{0, sizeof(T), 1, 0}});
  }
  // A Fortran type of a given size with no C counterpart.
  void sized(uint32_t abi, const char* name, int64_t size, int64_t align, BasicKind kind) {
    slot[abi - 0x200] =
        Datatype::Private::predefined(abi, name, size, size, align, kind, {{0, size, 1, 0}});
  }
  template <class A, class B>
  void pair(uint32_t abi, const char* name, BasicKind kind) {
    using P = PairOf<A, B>;
    slot[abi - 0x200] = Datatype::Private::predefined(
        abi, name, sizeof(A) + sizeof(B), sizeof(P), alignof(P), kind,
        {{offsetof(P, a), sizeof(A), 1, 0}, {offsetof(P, b), sizeof(B), 1, 0}});
  }

  Table() {
    using K = BasicKind;
    auto v = [](MPI_Datatype h) { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(h)); };
    scalar<MPI_Aint>(v(MPI_AINT), "MPI_AINT", intKind<MPI_Aint>());
    scalar<MPI_Count>(v(MPI_COUNT), "MPI_COUNT", intKind<MPI_Count>());
    scalar<MPI_Offset>(v(MPI_OFFSET), "MPI_OFFSET", intKind<MPI_Offset>());
    scalar<char>(v(MPI_PACKED), "MPI_PACKED", K::kByte);
    scalar<short>(v(MPI_SHORT), "MPI_SHORT", intKind<short>());
    scalar<int>(v(MPI_INT), "MPI_INT", intKind<int>());
    scalar<long>(v(MPI_LONG), "MPI_LONG", intKind<long>());
    scalar<long long>(v(MPI_LONG_LONG), "MPI_LONG_LONG", intKind<long long>());
    scalar<unsigned short>(v(MPI_UNSIGNED_SHORT), "MPI_UNSIGNED_SHORT",
                           intKind<unsigned short>());
    scalar<unsigned>(v(MPI_UNSIGNED), "MPI_UNSIGNED", intKind<unsigned>());
    scalar<unsigned long>(v(MPI_UNSIGNED_LONG), "MPI_UNSIGNED_LONG", intKind<unsigned long>());
    scalar<unsigned long long>(v(MPI_UNSIGNED_LONG_LONG), "MPI_UNSIGNED_LONG_LONG",
                               intKind<unsigned long long>());
    scalar<float>(v(MPI_FLOAT), "MPI_FLOAT", K::kFloat);
    scalar<double>(v(MPI_DOUBLE), "MPI_DOUBLE", K::kDouble);
    scalar<long double>(v(MPI_LONG_DOUBLE), "MPI_LONG_DOUBLE", K::kLongDouble);
    // std::complex<T> has the layout of C's T _Complex.
    scalar<std::complex<float>>(v(MPI_C_FLOAT_COMPLEX), "MPI_C_FLOAT_COMPLEX",
                                K::kFloatComplex);
    scalar<std::complex<double>>(v(MPI_C_DOUBLE_COMPLEX), "MPI_C_DOUBLE_COMPLEX",
                                 K::kDoubleComplex);
    scalar<std::complex<long double>>(v(MPI_C_LONG_DOUBLE_COMPLEX),
                                      "MPI_C_LONG_DOUBLE_COMPLEX", K::kLongDoubleComplex);
    scalar<std::complex<float>>(v(MPI_CXX_FLOAT_COMPLEX), "MPI_CXX_FLOAT_COMPLEX",
                                K::kFloatComplex);
    scalar<std::complex<double>>(v(MPI_CXX_DOUBLE_COMPLEX), "MPI_CXX_DOUBLE_COMPLEX",
                                 K::kDoubleComplex);
    scalar<std::complex<long double>>(v(MPI_CXX_LONG_DOUBLE_COMPLEX),
                                      "MPI_CXX_LONG_DOUBLE_COMPLEX", K::kLongDoubleComplex);
    // Default-kind Fortran types, as gfortran lays them out on LP64.
    sized(v(MPI_LOGICAL), "MPI_LOGICAL", 4, 4, K::kLogical);
    sized(v(MPI_INTEGER), "MPI_INTEGER", 4, 4, K::kInt32);
    sized(v(MPI_REAL), "MPI_REAL", 4, 4, K::kFloat);
    sized(v(MPI_COMPLEX), "MPI_COMPLEX", 8, 4, K::kFloatComplex);
    sized(v(MPI_DOUBLE_PRECISION), "MPI_DOUBLE_PRECISION", 8, 8, K::kDouble);
    sized(v(MPI_DOUBLE_COMPLEX), "MPI_DOUBLE_COMPLEX", 16, 8, K::kDoubleComplex);
    sized(v(MPI_CHARACTER), "MPI_CHARACTER", 1, 1, K::kChar);
    pair<float, int>(v(MPI_FLOAT_INT), "MPI_FLOAT_INT", K::kFloatInt);
    pair<double, int>(v(MPI_DOUBLE_INT), "MPI_DOUBLE_INT", K::kDoubleInt);
    pair<long, int>(v(MPI_LONG_INT), "MPI_LONG_INT", K::kLongInt);
    pair<int, int>(v(MPI_2INT), "MPI_2INT", K::k2Int);
    pair<short, int>(v(MPI_SHORT_INT), "MPI_SHORT_INT", K::kShortInt);
    pair<long double, int>(v(MPI_LONG_DOUBLE_INT), "MPI_LONG_DOUBLE_INT", K::kLongDoubleInt);
    pair<float, float>(v(MPI_2REAL), "MPI_2REAL", K::k2Float);
    pair<double, double>(v(MPI_2DOUBLE_PRECISION), "MPI_2DOUBLE_PRECISION", K::k2Double);
    pair<int, int>(v(MPI_2INTEGER), "MPI_2INTEGER", K::k2Int);
    scalar<bool>(v(MPI_C_BOOL), "MPI_C_BOOL", K::kBool);  // _Bool and bool agree on x86-64/arm64
    scalar<bool>(v(MPI_CXX_BOOL), "MPI_CXX_BOOL", K::kBool);
    scalar<wchar_t>(v(MPI_WCHAR), "MPI_WCHAR", K::kWchar);
    scalar<int8_t>(v(MPI_INT8_T), "MPI_INT8_T", K::kInt8);
    scalar<uint8_t>(v(MPI_UINT8_T), "MPI_UINT8_T", K::kUint8);
    scalar<char>(v(MPI_CHAR), "MPI_CHAR", K::kChar);
    scalar<signed char>(v(MPI_SIGNED_CHAR), "MPI_SIGNED_CHAR", K::kInt8);
    scalar<unsigned char>(v(MPI_UNSIGNED_CHAR), "MPI_UNSIGNED_CHAR", K::kUint8);
    scalar<unsigned char>(v(MPI_BYTE), "MPI_BYTE", K::kByte);
    scalar<int16_t>(v(MPI_INT16_T), "MPI_INT16_T", K::kInt16);
    scalar<uint16_t>(v(MPI_UINT16_T), "MPI_UINT16_T", K::kUint16);
    scalar<int32_t>(v(MPI_INT32_T), "MPI_INT32_T", K::kInt32);
    scalar<uint32_t>(v(MPI_UINT32_T), "MPI_UINT32_T", K::kUint32);
    scalar<int64_t>(v(MPI_INT64_T), "MPI_INT64_T", K::kInt64);
    scalar<uint64_t>(v(MPI_UINT64_T), "MPI_UINT64_T", K::kUint64);
    // Sized Fortran types. REAL*2, REAL*16 (quad) and their complexes have
    // no C arithmetic here: kind kNone (move only).
    sized(v(MPI_LOGICAL1), "MPI_LOGICAL1", 1, 1, K::kLogical);
    sized(v(MPI_INTEGER1), "MPI_INTEGER1", 1, 1, K::kInt8);
    sized(v(MPI_LOGICAL2), "MPI_LOGICAL2", 2, 2, K::kLogical);
    sized(v(MPI_INTEGER2), "MPI_INTEGER2", 2, 2, K::kInt16);
    sized(v(MPI_REAL2), "MPI_REAL2", 2, 2, K::kNone);
    sized(v(MPI_LOGICAL4), "MPI_LOGICAL4", 4, 4, K::kLogical);
    sized(v(MPI_INTEGER4), "MPI_INTEGER4", 4, 4, K::kInt32);
    sized(v(MPI_REAL4), "MPI_REAL4", 4, 4, K::kFloat);
    sized(v(MPI_COMPLEX4), "MPI_COMPLEX4", 4, 2, K::kNone);
    sized(v(MPI_LOGICAL8), "MPI_LOGICAL8", 8, 8, K::kLogical);
    sized(v(MPI_INTEGER8), "MPI_INTEGER8", 8, 8, K::kInt64);
    sized(v(MPI_REAL8), "MPI_REAL8", 8, 8, K::kDouble);
    sized(v(MPI_COMPLEX8), "MPI_COMPLEX8", 8, 4, K::kFloatComplex);
    sized(v(MPI_LOGICAL16), "MPI_LOGICAL16", 16, 16, K::kNone);
    sized(v(MPI_INTEGER16), "MPI_INTEGER16", 16, 16, K::kNone);
    sized(v(MPI_REAL16), "MPI_REAL16", 16, 16, K::kNone);
    sized(v(MPI_COMPLEX16), "MPI_COMPLEX16", 16, 8, K::kDoubleComplex);
    sized(v(MPI_COMPLEX32), "MPI_COMPLEX32", 32, 16, K::kNone);
    // Loom's 16-bit float extensions (mpi-ext.h); arithmetic in coll/op.cc.
    sized(0x2fe, "MPIX_C_FLOAT16", 2, 2, K::kFloat16);
    sized(0x2ff, "MPIX_BFLOAT16", 2, 2, K::kBfloat16);
  }
};

}  // namespace

namespace detail {
Datatype* const* gPredefinedTable = nullptr;
}  // namespace detail

Datatype* predefinedDatatypeSlow(uintptr_t abiValue) {
  static const Table table;  // built once, never freed (handles stay valid to exit)
  static_assert(kTableSize == 0x100, "predefinedDatatype (datatype.h) assumes 0x100 handles");
  // (Published after the table is built: a thread that sees the pointer
  // sees the slots; the static's guard orders concurrent first calls.)
  __atomic_store_n(&detail::gPredefinedTable, table.slot.data(), __ATOMIC_RELEASE);
  if (abiValue < 0x200 || abiValue >= 0x200 + kTableSize) return nullptr;
  return table.slot[abiValue - 0x200];
}

const char* basicKindName(BasicKind k) {
  static const char* const names[] = {
      "none",   "byte",   "char",   "wchar",  "int8",        "int16",          "int32",
      "int64",  "uint8",  "uint16", "uint32", "uint64",      "float",          "double",
      "long double", "float complex", "double complex", "long double complex", "bool",
      "logical", "float_int", "double_int", "long_int", "2int", "short_int",
      "long_double_int", "2float", "2double", "float16", "bfloat16"};
  auto i = static_cast<size_t>(k);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "?";
}

// --- Constructors ---------------------------------------------------------

namespace {

Status checkOld(const Datatype* old) {
  if (!old || !old->valid()) return errorf(MPI_ERR_TYPE, "invalid datatype");
  return Status::ok();
}

Status checkCount(int64_t count, const char* what) {
  if (count < 0) return errorf(MPI_ERR_COUNT, "%s is negative (%lld)", what, (long long)count);
  return Status::ok();
}

// Refuses types whose size does not fit an int64 (the packed stream is
// addressed with size_t, and MPI_Count is int64).
Status checkSize(int64_t a, int64_t b, int64_t c) {
  int64_t ab, abc;
  if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc))
    return errorf(MPI_ERR_ARG, "datatype size overflows 64 bits");
  return Status::ok();
}

// Refuses types whose bounds do not fit an int64 (MPI_Aint, MPI_Count):
// `count` blocks `stride` bytes apart from byte `disp`, each of `blocklen`
// copies of `old` one extent apart. Counts and displacements of the _c
// constructors reach far enough to wrap 64 bits otherwise.
Status checkBounds(__int128 disp, int64_t count, __int128 stride, int64_t blocklen,
                   const Datatype* old) {
  if (count <= 0 || blocklen <= 0) return Status::ok();
  const __int128 a = (count - 1) * stride, b = __int128{blocklen - 1} * old->extent();
  const __int128 lo = disp + std::min<__int128>(a, 0) + std::min<__int128>(b, 0) +
                      std::min(old->lb(), old->trueLb());
  const __int128 hi = disp + std::max<__int128>(a, 0) + std::max<__int128>(b, 0) +
                      std::max(old->ub(), old->trueUb());
  if (lo < INT64_MIN || hi > INT64_MAX)
    return errorf(MPI_ERR_ARG, "datatype bounds overflow 64 bits");
  return Status::ok();
}

// disp * extent, or an error when it does not fit an int64.
Status scaled(int64_t disp, int64_t extent, int64_t* out) {
  if (__builtin_mul_overflow(disp, extent, out))
    return errorf(MPI_ERR_ARG, "displacement %lld * extent %lld overflows 64 bits",
                  (long long)disp, (long long)extent);
  return Status::ok();
}

}  // namespace

Status typeHvector(int64_t count, int64_t blocklen, int64_t strideBytes, Datatype* old,
                   Datatype** out) {
  LOOM_TRY(checkOld(old));
  LOOM_TRY(checkCount(count, "count"));
  if (blocklen < 0)
    return errorf(MPI_ERR_ARG, "blocklength is negative (%lld)", (long long)blocklen);
  LOOM_TRY(checkSize(count, blocklen, old->size()));
  LOOM_TRY(checkBounds(0, count, strideBytes, blocklen, old));
  Datatype::Private b(MPI_COMBINER_HVECTOR);
  b.child(old);
  if (count > 0 && blocklen > 0) {
    // Bounds of count * blocklen copies at i * stride + j * extent.
    b.copies(old, minAffine(count, strideBytes), blocklen, old->extent());
    b.copies(old, maxAffine(count, strideBytes), blocklen, old->extent());
    auto block = repeated(Datatype::Private::runsOf(old), 0, blocklen, old->extent());
    appendRepeated(b.runs(), block, 0, count, strideBytes);
    b.part(old, count * blocklen);
  }
  *out = b.finish();
  using A = DatatypeArgs;
  (*out)->setConstruction(MPI_COMBINER_HVECTOR, A()
                                                    .add(A::kCount, count)
                                                    .add(A::kCount, blocklen)
                                                    .add(A::kBytes, strideBytes)
                                                    .type(old));
  return Status::ok();
}

Status typeVector(int64_t count, int64_t blocklen, int64_t stride, Datatype* old,
                  Datatype** out) {
  LOOM_TRY(checkOld(old));
  int64_t strideBytes;
  LOOM_TRY(scaled(stride, old->extent(), &strideBytes));
  LOOM_TRY(typeHvector(count, blocklen, strideBytes, old, out));
  using A = DatatypeArgs;
  (*out)->setConstruction(
      MPI_COMBINER_VECTOR,
      A().add(A::kCount, count).add(A::kCount, blocklen).add(A::kCount, stride).type(old));
  return Status::ok();
}

Status typeContiguous(int64_t count, Datatype* old, Datatype** out) {
  LOOM_TRY(checkOld(old));
  LOOM_TRY(checkCount(count, "count"));
  LOOM_TRY(typeHvector(1, count, 0, old, out));
  (*out)->setConstruction(MPI_COMBINER_CONTIGUOUS,
                          DatatypeArgs().add(DatatypeArgs::kCount, count).type(old));
  return Status::ok();
}

Status typeHindexed(std::span<const int64_t> blocklens, std::span<const int64_t> dispBytes,
                    Datatype* old, Datatype** out) {
  LOOM_TRY(checkOld(old));
  if (blocklens.size() != dispBytes.size())
    return errorf(MPI_ERR_ARG, "blocklength and displacement arrays differ in length");
  int64_t total = 0;
  for (int64_t bl : blocklens) {
    if (bl < 0) return errorf(MPI_ERR_ARG, "blocklength is negative (%lld)", (long long)bl);
    if (__builtin_add_overflow(total, bl, &total))
      return errorf(MPI_ERR_ARG, "datatype size overflows 64 bits");
  }
  LOOM_TRY(checkSize(total, old->size(), 1));
  for (size_t i = 0; i < blocklens.size(); ++i)
    LOOM_TRY(checkBounds(dispBytes[i], 1, 0, blocklens[i], old));
  Datatype::Private b(MPI_COMBINER_HINDEXED);
  b.child(old);
  for (size_t i = 0; i < blocklens.size(); ++i) {
    b.copies(old, dispBytes[i], blocklens[i], old->extent());
    appendRepeated(b.runs(), Datatype::Private::runsOf(old), dispBytes[i], blocklens[i],
                   old->extent());
    b.part(old, blocklens[i]);
  }
  *out = b.finish();
  using A = DatatypeArgs;
  (*out)->setConstruction(MPI_COMBINER_HINDEXED,
                          A()
                              .add(A::kCount, static_cast<int64_t>(blocklens.size()))
                              .add(A::kCount, blocklens)
                              .add(A::kBytes, dispBytes)
                              .type(old));
  return Status::ok();
}

Status typeIndexed(std::span<const int64_t> blocklens, std::span<const int64_t> disps,
                   Datatype* old, Datatype** out) {
  LOOM_TRY(checkOld(old));
  std::vector<int64_t> bytes(disps.begin(), disps.end());
  for (int64_t& d : bytes) LOOM_TRY(scaled(d, old->extent(), &d));
  LOOM_TRY(typeHindexed(blocklens, bytes, old, out));
  using A = DatatypeArgs;
  (*out)->setConstruction(MPI_COMBINER_INDEXED,
                          A()
                              .add(A::kCount, static_cast<int64_t>(blocklens.size()))
                              .add(A::kCount, blocklens)
                              .add(A::kCount, disps)
                              .type(old));
  return Status::ok();
}

Status typeHindexedBlock(int64_t blocklen, std::span<const int64_t> dispBytes, Datatype* old,
                         Datatype** out) {
  LOOM_TRY(checkOld(old));
  if (blocklen < 0)
    return errorf(MPI_ERR_ARG, "blocklength is negative (%lld)", (long long)blocklen);
  std::vector<int64_t> lens(dispBytes.size(), blocklen);
  LOOM_TRY(typeHindexed(lens, dispBytes, old, out));
  using A = DatatypeArgs;
  (*out)->setConstruction(MPI_COMBINER_HINDEXED_BLOCK,
                          A()
                              .add(A::kCount, static_cast<int64_t>(dispBytes.size()))
                              .add(A::kCount, blocklen)
                              .add(A::kBytes, dispBytes)
                              .type(old));
  return Status::ok();
}

Status typeIndexedBlock(int64_t blocklen, std::span<const int64_t> disps, Datatype* old,
                        Datatype** out) {
  LOOM_TRY(checkOld(old));
  std::vector<int64_t> bytes(disps.begin(), disps.end());
  for (int64_t& d : bytes) LOOM_TRY(scaled(d, old->extent(), &d));
  LOOM_TRY(typeHindexedBlock(blocklen, bytes, old, out));
  using A = DatatypeArgs;
  (*out)->setConstruction(MPI_COMBINER_INDEXED_BLOCK,
                          A()
                              .add(A::kCount, static_cast<int64_t>(disps.size()))
                              .add(A::kCount, blocklen)
                              .add(A::kCount, disps)
                              .type(old));
  return Status::ok();
}

Status typeStruct(std::span<const int64_t> blocklens, std::span<const int64_t> dispBytes,
                  std::span<Datatype* const> types, Datatype** out) {
  if (blocklens.size() != dispBytes.size() || blocklens.size() != types.size())
    return errorf(MPI_ERR_ARG, "struct argument arrays differ in length");
  int64_t total = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    if (!types[i] || !types[i]->valid())
      return errorf(MPI_ERR_TYPE, "array_of_types[%zu] is not a valid datatype", i);
    if (blocklens[i] < 0)
      return errorf(MPI_ERR_ARG, "array_of_blocklengths[%zu] is negative", i);
    int64_t part;
    if (__builtin_mul_overflow(blocklens[i], types[i]->size(), &part) ||
        __builtin_add_overflow(total, part, &total))
      return errorf(MPI_ERR_ARG, "datatype size overflows 64 bits");
    LOOM_TRY(checkBounds(dispBytes[i], 1, 0, blocklens[i], types[i]));
  }
  Datatype::Private b(MPI_COMBINER_STRUCT);
  for (size_t i = 0; i < types.size(); ++i) {
    Datatype* c = types[i];
    b.child(c);
    b.copies(c, dispBytes[i], blocklens[i], c->extent());
    appendRepeated(b.runs(), Datatype::Private::runsOf(c), dispBytes[i], blocklens[i],
                   c->extent());
    b.part(c, blocklens[i]);
  }
  Datatype* t = b.finish();
  // The standard's epsilon: pad the extent to the strictest alignment of the
  // members, as a C compiler pads a struct, unless a member has explicit
  // bounds (from MPI_Type_create_resized), which the user then controls.
  Datatype::Private::padToAlignment(t);
  using A = DatatypeArgs;
  A args;
  args.add(A::kCount, static_cast<int64_t>(types.size()))
      .add(A::kCount, blocklens)
      .add(A::kBytes, dispBytes);
  for (Datatype* c : types) args.type(c);
  t->setConstruction(MPI_COMBINER_STRUCT, std::move(args));
  *out = t;
  return Status::ok();
}

Status typeResized(Datatype* old, int64_t lb, int64_t extent, Datatype** out) {
  LOOM_TRY(checkOld(old));
  int64_t ub;
  if (__builtin_add_overflow(lb, extent, &ub))
    return errorf(MPI_ERR_ARG, "lb + extent overflows 64 bits");
  *out = Datatype::Private::resized(old, lb, extent);
  using A = DatatypeArgs;
  (*out)->setConstruction(MPI_COMBINER_RESIZED,
                          A().add(A::kBytes, lb).add(A::kBytes, extent).type(old));
  return Status::ok();
}

Status typeSubarray(std::span<const int64_t> sizes, std::span<const int64_t> subsizes,
                    std::span<const int64_t> starts, int order, Datatype* old,
                    Datatype** out) {
  LOOM_TRY(checkOld(old));
  size_t n = sizes.size();
  if (n == 0) return errorf(MPI_ERR_ARG, "ndims must be positive");
  if (subsizes.size() != n || starts.size() != n)
    return errorf(MPI_ERR_ARG, "subarray argument arrays differ in length");
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    return errorf(MPI_ERR_ARG, "order must be MPI_ORDER_C or MPI_ORDER_FORTRAN (got %d)", order);
  int64_t elems = 1;
  for (size_t d = 0; d < n; ++d) {
    if (sizes[d] <= 0) return errorf(MPI_ERR_ARG, "array_of_sizes[%zu] must be positive", d);
    if (subsizes[d] < 0 || subsizes[d] > sizes[d])
      return errorf(MPI_ERR_ARG, "array_of_subsizes[%zu] out of range [0, %lld]", d,
                    (long long)sizes[d]);
    if (starts[d] < 0 || starts[d] > sizes[d] - subsizes[d])
      return errorf(MPI_ERR_ARG, "array_of_starts[%zu] out of range [0, %lld]", d,
                    (long long)(sizes[d] - subsizes[d]));
    if (__builtin_mul_overflow(elems, sizes[d], &elems))
      return errorf(MPI_ERR_ARG, "subarray size overflows 64 bits");
  }
  LOOM_TRY(checkSize(elems, old->extent() < 0 ? -old->extent() : old->extent(), 1));
  LOOM_TRY(checkSize(elems, old->size(), 1));

  Datatype::Private b(MPI_COMBINER_SUBARRAY);
  b.child(old);
  // Walk the dimensions from the fastest-varying one outwards: the last in
  // C order, the first in Fortran order.
  std::vector<DatatypeRun> runs = Datatype::Private::runsOf(old);
  int64_t stride = old->extent();  // bytes between neighbours along the dimension
  int64_t origin = 0;              // offset of the first element of the subarray
  bool empty = false;
  for (size_t i = 0; i < n; ++i) {
    size_t d = order == MPI_ORDER_C ? n - 1 - i : i;
    if (subsizes[d] == 0) empty = true;
    runs = repeated(runs, 0, subsizes[d], stride);
    origin += starts[d] * stride;
    stride *= sizes[d];
  }
  if (!empty) {
    appendRepeated(b.runs(), runs, origin, 1, 0);
    int64_t copies = 1;
    for (int64_t sub : subsizes) copies *= sub;  // <= elems, checked above
    b.part(old, copies);
  }
  // The type spans the whole array: lb 0, extent product(sizes) * extent(old).
  Datatype* t = b.finish();
  Datatype::Private::setBounds(t, 0, stride, /*explicitBounds=*/true);
  using A = DatatypeArgs;
  t->setConstruction(MPI_COMBINER_SUBARRAY, A()
                                                .add(A::kInt, static_cast<int64_t>(n))
                                                .add(A::kCount, sizes)
                                                .add(A::kCount, subsizes)
                                                .add(A::kCount, starts)
                                                .add(A::kInt, order)
                                                .type(old));
  *out = t;
  return Status::ok();
}

Status typeDup(Datatype* old, Datatype** out) {
  LOOM_TRY(checkOld(old));
  *out = Datatype::Private::dup(old);
  (*out)->setConstruction(MPI_COMBINER_DUP, DatatypeArgs().type(old));
  return Status::ok();
}

Datatype* typeClone(const Datatype* t) { return Datatype::Private::clone(t); }

Datatype* typeF90(int combiner, int p, int r, Datatype* base) {
  static std::mutex mu;
  // Never freed, nor destroyed at exit: the types live as long as the process.
  static auto* made = new std::map<std::tuple<int, int, int>, Datatype*>;
  std::lock_guard<std::mutex> lock(mu);
  Datatype*& t = (*made)[{combiner, p, r}];
  if (!t) {
    t = Datatype::Private::dup(base);
    DatatypeArgs args;
    if (combiner != MPI_COMBINER_F90_INTEGER) args.add(DatatypeArgs::kInt, p);
    args.add(DatatypeArgs::kInt, r);
    t->setConstruction(combiner, std::move(args));
    Datatype::Private::setPermanent(t);
  }
  return t;
}

}  // namespace loom
