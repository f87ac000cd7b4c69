// Reduction operations: the predefined table, user ops, the (op, type)
// validity table and the dispatch from (op, basic kind) to a kernel of
// reduce_kernels.h.
#include "coll/op.h"

#include <array>
#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>

#include "coll/reduce_kernels.h"
#include "core/params.h"

namespace loom::coll {

using K = BasicKind;

// ---- objects and handles --------------------------------------------------

struct OpTable {
  std::array<Op*, 0x20> slot{};  // ABI op handles are 0x020..0x03f
  void add(MPI_Op h, Op::Kind kind, const char* name) {
    auto v = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(h));
    Op* op = new Op();
    op->abiValue_ = v;
    op->kind_ = kind;
    op->name_ = name;
    op->commutative_ = true;  // every predefined op is (MPI treats + on floats so)
    slot[v - 0x20] = op;
  }
  OpTable() {
    using O = Op::Kind;
    add(MPI_SUM, O::kSum, "MPI_SUM");
    add(MPI_MIN, O::kMin, "MPI_MIN");
    add(MPI_MAX, O::kMax, "MPI_MAX");
    add(MPI_PROD, O::kProd, "MPI_PROD");
    add(MPI_BAND, O::kBand, "MPI_BAND");
    add(MPI_BOR, O::kBor, "MPI_BOR");
    add(MPI_BXOR, O::kBxor, "MPI_BXOR");
    add(MPI_LAND, O::kLand, "MPI_LAND");
    add(MPI_LOR, O::kLor, "MPI_LOR");
    add(MPI_LXOR, O::kLxor, "MPI_LXOR");
    add(MPI_MINLOC, O::kMinloc, "MPI_MINLOC");
    add(MPI_MAXLOC, O::kMaxloc, "MPI_MAXLOC");
    add(MPI_REPLACE, O::kReplace, "MPI_REPLACE");
    add(MPI_NO_OP, O::kNoOp, "MPI_NO_OP");
  }
};

Op* predefinedOp(uintptr_t abi) {
  static const OpTable table;  // never freed: handles stay valid to exit
  if (abi < 0x20 || abi >= 0x40) return nullptr;
  return table.slot[abi - 0x20];
}

Op* Op::create(MPI_User_function* fn, MPI_User_function_c* fnC, bool commutative) {
  Op* op = new Op();
  op->fn_ = fn;
  op->fnC_ = fnC;
  op->commutative_ = commutative;
  return op;
}

void Op::retain() {
  if (!isPredefined()) refs_.fetch_add(1, std::memory_order_relaxed);
}

void Op::release() {
  if (isPredefined()) return;
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    magic_ = 0;
    delete this;
  }
}

Op* toOp(MPI_Op handle) {
  auto v = reinterpret_cast<uintptr_t>(handle);
  if (v < 4096) return predefinedOp(v);
  if (v % alignof(Op) != 0) return nullptr;
  auto* op = reinterpret_cast<Op*>(handle);
  return op->valid() && !op->userFreed() ? op : nullptr;
}

MPI_Op toHandle(Op* op) {
  if (!op) return MPI_OP_NULL;
  if (op->isPredefined()) return reinterpret_cast<MPI_Op>(uintptr_t{op->abiValue()});
  return reinterpret_cast<MPI_Op>(op);
}

// ---- validity -------------------------------------------------------------

namespace {

enum class Cls { kNone, kInt, kFloat, kComplex, kHalf, kBool, kLogical, kByte, kPair, kCChar };

// The first predefined leaf of `type` (the type itself when predefined).
const Datatype* firstLeaf(const Datatype* type) {
  const Datatype* t = type;
  while (t && !t->isPredefined()) t = t->children().empty() ? nullptr : t->children()[0];
  return t;
}

Cls classOf(BasicKind kind) {
  switch (kind) {
    case K::kInt8: case K::kInt16: case K::kInt32: case K::kInt64:
    case K::kUint8: case K::kUint16: case K::kUint32: case K::kUint64:
      return Cls::kInt;
    case K::kFloat: case K::kDouble: case K::kLongDouble:
      return Cls::kFloat;
    case K::kFloatComplex: case K::kDoubleComplex: case K::kLongDoubleComplex:
      return Cls::kComplex;
    case K::kFloat16: case K::kBfloat16:
      return Cls::kHalf;
    case K::kBool:
      return Cls::kBool;
    case K::kLogical:
      return Cls::kLogical;
    case K::kByte:
      return Cls::kByte;
    case K::kFloatInt: case K::kDoubleInt: case K::kLongInt: case K::k2Int:
    case K::kShortInt: case K::kLongDoubleInt: case K::k2Float: case K::k2Double:
      return Cls::kPair;
    default:
      return Cls::kNone;  // kNone, MPI_CHARACTER (text), MPI_WCHAR
  }
}

// MPI_CHAR is text to the standard, but Open MPI and MPICH reduce it as a
// signed 8-bit integer under the arithmetic ops, and programs (OSU's default
// type) rely on it. Fortran's MPI_CHARACTER, the same kind, stays text.
Cls classOf(const Datatype* type) {
  if (type->kind() != K::kChar) return classOf(type->kind());
  const Datatype* leaf = firstLeaf(type);
  if (leaf && leaf->abiValue() == reinterpret_cast<uintptr_t>(MPI_CHAR)) return Cls::kCChar;
  return Cls::kNone;
}

// Size of one element of `kind` in the packed stream; 0 when unknown.
int64_t elementBytes(BasicKind kind, const Datatype* type) {
  switch (kind) {
    case K::kInt8: case K::kUint8: case K::kBool: case K::kByte: return 1;
    case K::kInt16: case K::kUint16: case K::kFloat16: case K::kBfloat16: return 2;
    case K::kInt32: case K::kUint32: case K::kFloat: return 4;
    case K::kInt64: case K::kUint64: case K::kDouble: return 8;
    case K::kLongDouble: return sizeof(long double);
    case K::kFloatComplex: return 2 * sizeof(float);
    case K::kDoubleComplex: return 2 * sizeof(double);
    case K::kLongDoubleComplex: return 2 * sizeof(long double);
    case K::kFloatInt: return sizeof(float) + sizeof(int);
    case K::kDoubleInt: return sizeof(double) + sizeof(int);
    case K::kLongInt: return sizeof(long) + sizeof(int);
    case K::k2Int: return 2 * sizeof(int);
    case K::kShortInt: return sizeof(short) + sizeof(int);
    case K::kLongDoubleInt: return sizeof(long double) + sizeof(int);
    case K::k2Float: return 2 * sizeof(float);
    case K::k2Double: return 2 * sizeof(double);
    case K::kChar: return 1;  // MPI_CHAR as int8 (see classOf)
    case K::kLogical: {
      // Fortran LOGICAL comes in several sizes: the leaf's size says which.
      const Datatype* t = firstLeaf(type);
      return t ? t->size() : 0;
    }
    default: return 0;
  }
}

}  // namespace

bool opValidFor(const Op* op, const Datatype* type) {
  using O = Op::Kind;
  if (!op || !type) return false;
  if (op->kind() == O::kUser) return true;
  const Cls c = classOf(type);
  switch (op->kind()) {
    case O::kSum: case O::kProd:
      return c == Cls::kInt || c == Cls::kFloat || c == Cls::kComplex || c == Cls::kHalf ||
             c == Cls::kCChar;
    case O::kMin: case O::kMax:
      return c == Cls::kInt || c == Cls::kFloat || c == Cls::kHalf || c == Cls::kCChar;
    case O::kLand: case O::kLor: case O::kLxor:
      if (c == Cls::kLogical) {
        int64_t e = elementBytes(K::kLogical, type);
        return e == 1 || e == 2 || e == 4 || e == 8;
      }
      return c == Cls::kInt || c == Cls::kBool || c == Cls::kCChar;
    case O::kBand: case O::kBor: case O::kBxor:
      return c == Cls::kInt || c == Cls::kByte || c == Cls::kCChar;
    case O::kMinloc: case O::kMaxloc:
      return c == Cls::kPair;
    default:
      return false;  // MPI_REPLACE, MPI_NO_OP: accumulate only
  }
}

bool reductionCommutative(const CollArgs& a) { return !a.op || a.op->commutative(); }

// ---- dispatch ----------------------------------------------------------------

}  // namespace loom::coll

// The baseline loop (SSE2 on x86-64), always present.
#define LOOM_REDUCE_HOST_FN applyPackedBaseline
#define LOOM_REDUCE_HOST_FROM_FN applyPackedFromBaseline
#include "coll/reduce_host.h"

namespace loom::coll {

#if LOOM_X86_KERNELS
void applyPacked_x86_v3(OpKind, BasicKind, int64_t, const void*, void*, int64_t);
void applyPacked_x86_v4(OpKind, BasicKind, int64_t, const void*, void*, int64_t);
void applyPackedFrom_x86_v3(OpKind, BasicKind, int64_t, const void*, const void*, void*, int64_t);
void applyPackedFrom_x86_v4(OpKind, BasicKind, int64_t, const void*, const void*, void*, int64_t);
#endif

namespace {

using ApplyFn = void (*)(OpKind, BasicKind, int64_t, const void*, void*, int64_t);
using ApplyFromFn = void (*)(OpKind, BasicKind, int64_t, const void*, const void*, void*, int64_t);

struct HostIsa {
  ApplyFn fn = applyPackedBaseline;
  ApplyFromFn from = applyPackedFromBaseline;
  const char* name = "baseline";
  HostIsa() {
#if LOOM_X86_KERNELS
    // LOOM_REDUCE_ISA can only lower the choice, never ask for what the
    // processor lacks.
    const std::string want = params::getString("LOOM_REDUCE_ISA");
    __builtin_cpu_init();
    const bool v4 = __builtin_cpu_supports("x86-64-v4"), v3 = __builtin_cpu_supports("x86-64-v3");
    if (v4 && (want == "auto" || want == "avx512")) {
      fn = applyPacked_x86_v4;
      from = applyPackedFrom_x86_v4;
      name = "avx512";
    } else if (v3 && (want == "auto" || want == "avx512" || want == "avx2")) {
      fn = applyPacked_x86_v3;
      from = applyPackedFrom_x86_v3;
      name = "avx2";
    }
#endif
  }
};

const HostIsa& hostIsa() {
  static const HostIsa isa;
  return isa;
}

void applyPacked(OpKind op, BasicKind kind, int64_t elemBytes, const void* in, void* io,
                 int64_t n) {
  static const ApplyFn fn = hostIsa().fn;
  fn(op, kind, elemBytes, in, io, n);
}

void applyPackedFrom(OpKind op, BasicKind kind, int64_t elemBytes, const void* in,
                     const void* base, void* out, int64_t n) {
  static const ApplyFromFn fn = hostIsa().from;
  fn(op, kind, elemBytes, in, base, out, n);
}

}  // namespace

void applyPackedHost(OpKind op, BasicKind kind, int64_t elemBytes, const void* in, void* io,
                     int64_t n) {
  applyPacked(op, kind, elemBytes, in, io, n);
}

int64_t elementBytesOf(const Datatype* type) {
  return elementBytes(type->kind(), type);
}

namespace {

MPI_Datatype typeHandle(Datatype* t) {
  if (t->isPredefined()) return reinterpret_cast<MPI_Datatype>(uintptr_t{t->abiValue()});
  return reinterpret_cast<MPI_Datatype>(t);
}

}  // namespace

Status reduceLocal(const void* in, void* inout, int64_t count, Datatype* type, Op* op) {
  if (!opValidFor(op, type))
    return errorf(MPI_ERR_OP, "%s is not defined on %s", op ? op->name() : "a null op",
                  type && !type->name().empty() ? type->name().c_str() : "this datatype");
  if (count <= 0 || type->size() == 0) return Status::ok();
  if (device::active()) [[unlikely]] {
    if (device::isDevice(in) || device::isDevice(inout))
      return reduceLocalDevice(in, inout, count, type, op);
  }
  if (op->kind() == Op::Kind::kUser) {
    // The user's function sees the buffers as they are, in chunks whose
    // length fits its int argument.
    MPI_Datatype h = typeHandle(type);
    auto* a = const_cast<char*>(static_cast<const char*>(in));
    auto* b = static_cast<char*>(inout);
    if (!op->userFn()) {
      MPI_Count len = count;
      op->userFnC()(a, b, &len, &h);
      return Status::ok();
    }
    // A Fortran function takes the datatype as its Fortran (toint) handle.
    MPI_Fint hf = op->fortran() ? gTypeToFortran(h) : 0;
    using FortranFn = void (*)(void*, void*, MPI_Fint*, MPI_Fint*);
    for (int64_t done = 0; done < count;) {
      int len = static_cast<int>(std::min<int64_t>(count - done, INT_MAX));
      if (op->fortran())
        reinterpret_cast<FortranFn>(op->userFn())(a + done * type->extent(),
                                                  b + done * type->extent(), &len, &hf);
      else
        op->userFn()(a + done * type->extent(), b + done * type->extent(), &len, &h);
      done += len;
    }
    return Status::ok();
  }
  const int64_t e = elementBytes(type->kind(), type);
  const size_t bytes = type->packedSize(count);
  const int64_t n = static_cast<int64_t>(bytes) / e;
  if (type->isContiguous()) {
    applyPacked(op->kind(), type->kind(), e, static_cast<const char*>(in) + type->trueLb(),
                static_cast<char*>(inout) + type->trueLb(), n);
    return Status::ok();
  }
  // Not contiguous: both operands through packed scratch.
  std::unique_ptr<unsigned char[]> a(new unsigned char[bytes]), b(new unsigned char[bytes]);
  (void)type->pack(in, count, 0, a.get(), bytes);
  (void)type->pack(inout, count, 0, b.get(), bytes);
  applyPacked(op->kind(), type->kind(), e, a.get(), b.get(), n);
  (void)type->unpack(inout, count, 0, b.get(), bytes);
  return Status::ok();
}

size_t reduceUnit(const Datatype* type, const Op* op) {
  if (op->kind() == Op::Kind::kUser) return static_cast<size_t>(type->size());
  return static_cast<size_t>(elementBytes(type->kind(), type));
}

void reducePacked(const void* in, void* inout, size_t bytes, Datatype* type, Op* op) {
  if (bytes == 0) return;
  if (op->kind() == Op::Kind::kUser) {
    // Contiguous: the packed stream is the typed buffer shifted by trueLb.
    (void)reduceLocal(static_cast<const char*>(in) - type->trueLb(),
                      static_cast<char*>(inout) - type->trueLb(),
                      static_cast<int64_t>(bytes / type->size()), type, op);
    return;
  }
  const int64_t e = elementBytes(type->kind(), type);
  applyPacked(op->kind(), type->kind(), e, in, inout, static_cast<int64_t>(bytes) / e);
}

void reducePackedFrom(const void* in, const void* base, void* out, size_t bytes, Datatype* type,
                      Op* op) {
  if (bytes == 0) return;
  if (op->kind() == Op::Kind::kUser || base == out) {
    if (base != out) std::memcpy(out, base, bytes);
    reducePacked(in, out, bytes, type, op);
    return;
  }
  const int64_t e = elementBytes(type->kind(), type);
  applyPackedFrom(op->kind(), type->kind(), e, in, base, out, static_cast<int64_t>(bytes) / e);
}

void copyLike(const void* src, void* dst, int64_t count, const Datatype* t) {
  if (count <= 0 || t->size() == 0 || src == dst) return;
  auto* s = static_cast<const char*>(src);
  auto* d = static_cast<char*>(dst);
  if (t->isContiguous()) {
    std::memmove(d + t->trueLb(), s + t->trueLb(), t->packedSize(count));
    return;
  }
  for (int64_t i = 0; i < count; ++i)
    for (const DatatypeRun& r : t->runs())
      for (int64_t b = 0; b < r.count; ++b) {
        const int64_t off = i * t->extent() + r.offset + b * r.stride;
        std::memcpy(d + off, s + off, r.length);
      }
}

const char* reduceIsa() { return hostIsa().name; }

}  // namespace loom::coll
