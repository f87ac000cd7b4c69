// Op: a reduction operation (MPI_Op), predefined or created by the user,
// and reduceLocal, the one function that combines two buffers with it.
//
// A predefined op (MPI_SUM ...) is a small ABI constant indexing a table of
// immortal objects; a user op (MPI_Op_create) is a heap object whose handle
// is its address, checked through a magic field like Datatype. User ops are
// reference counted: the handle holds one reference, a pending nonblocking
// collective another, so MPI_Op_free while it runs is safe.
//
// Which (op, type) pairs are valid follows the standard's table: SUM/PROD on
// integers, floats, complex and 16-bit floats; MIN/MAX on integers and
// (16-bit) floats; LAND/LOR/LXOR on integers and booleans; BAND/BOR/BXOR on
// integers and MPI_BYTE; MINLOC/MAXLOC on the value/index pairs. A derived
// type qualifies when all its leaves share one basic kind (Datatype::kind).
// MPI_REPLACE and MPI_NO_OP belong to one-sided accumulates only.
//
// Also here, for the reduction algorithms: buffers laid out like the
// user's (count elements of a type) and a copy between two of them.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "coll/op_kind.h"
#include "coll/schedule.h"
#include "coll/selector.h"
#include "core/datatype.h"
#include "core/device.h"
#include "core/handle_pool.h"
#include "core/status.h"

namespace loom::coll {

// Pooled (core/handle_pool.h): a freed op's memory is recycled, never
// returned, so a stale handle reads a cleared magic.
class Op : public HandlePool<Op> {
 public:
  static constexpr uint32_t kMagic = 0x4f50504f;  // "OPPO": catches stale handles

  using Kind = OpKind;

  Op(const Op&) = delete;
  Op& operator=(const Op&) = delete;

  // A user op. `fnC` (MPI_Op_create_c) is used when `fn` is null.
  static Op* create(MPI_User_function* fn, MPI_User_function_c* fnC, bool commutative);

  bool valid() const { return magic_ == kMagic; }
  bool isPredefined() const { return abiValue_ != 0; }
  uint32_t abiValue() const { return abiValue_; }  // 0x021 for MPI_SUM; 0 for user ops
  Kind kind() const { return kind_; }
  bool commutative() const { return commutative_; }
  const char* name() const { return name_; }
  MPI_User_function* userFn() const { return fn_; }
  MPI_User_function_c* userFnC() const { return fnC_; }
  // A Fortran user function (MPI_Op_create from Fortran): userFn() is called
  // as SUBROUTINE(INVEC, INOUTVEC, LEN, DATATYPE) with the Fortran handle.
  bool fortran() const { return fortran_; }
  void setFortran() { fortran_ = true; }

  // Predefined ops ignore both. The object is deleted at zero.
  void retain();
  void release();
  bool userFreed() const { return userFreed_; }
  void markUserFreed() { userFreed_ = true; }

 private:
  friend Op* predefinedOp(uintptr_t);
  friend struct OpTable;
  Op() = default;

  uint32_t magic_ = kMagic;
  uint32_t abiValue_ = 0;
  Kind kind_ = Kind::kUser;
  bool commutative_ = true;
  bool userFreed_ = false;
  bool fortran_ = false;
  const char* name_ = "user op";
  MPI_User_function* fn_ = nullptr;
  MPI_User_function_c* fnC_ = nullptr;
  std::atomic<int> refs_{1};
};

// The Fortran handle of a datatype (MPI_Type_toint), for Fortran user ops;
// set by the API layer when it creates the first one.
inline int (*gTypeToFortran)(MPI_Datatype) = nullptr;

// The predefined op with ABI value `abi` (0x021 for MPI_SUM), or nullptr.
Op* predefinedOp(uintptr_t abi);

// Handle translation: nullptr for MPI_OP_NULL, unknown constants, garbage
// and ops the user has freed.
Op* toOp(MPI_Op handle);
MPI_Op toHandle(Op* op);

// True when `op` may reduce elements of `type` (user ops: always).
bool opValidFor(const Op* op, const Datatype* type);

// inout = in op inout, elementwise over `count` elements of `type` laid out
// as the type says (any derived type whose leaves share one kind; packed
// through scratch when it is not contiguous). MPI_ERR_OP for an invalid
// pair. `in` and `inout` must not overlap.
Status reduceLocal(const void* in, void* inout, int64_t count, Datatype* type, Op* op);

// Reductions of packed streams (the data bytes of a type, in type-map order,
// as the shared-memory algorithms stage them): inout = in op inout over
// `bytes` bytes, a multiple of reduceUnit(). A predefined op works on the
// basic elements of any type; a user op needs a contiguous type (its
// function sees typed elements), which the callers check.
size_t reduceUnit(const Datatype* type, const Op* op);
void reducePacked(const void* in, void* inout, size_t bytes, Datatype* type, Op* op);
// out = in op base over `bytes` packed bytes, the same bits as copying base
// to out and reducePacked(in, out); one pass for a predefined op. `out`
// overlaps neither operand unless it is `base`.
void reducePackedFrom(const void* in, const void* base, void* out, size_t bytes, Datatype* type,
                      Op* op);

// --- Device buffers (reduce_device.cc).

// io = in op io over `n` packed elements of `kind`, both operands in device
// memory, queued on `stream` (the CUDA kernels of reduce_cuda.cu; the mock
// device runs the host loop on its read-write view at once). The caller
// fences the stream before reading the result. kUnsupported (long double,
// no backend, an invalid pair): stage to the host instead; kFailed: *err.
enum class DeviceReduceResult : uint8_t;
DeviceReduceResult reduceDevice(OpKind op, BasicKind kind, int64_t elemBytes, const void* in,
                                void* io, int64_t n, device::Stream stream, Status* err);
// reduceLocal when either buffer is device memory: the device kernels for a
// predefined op on two device buffers of a contiguous type, otherwise both
// staged through host memory (user ops, mixed buffers, long double,
// non-contiguous types).
Status reduceLocalDevice(const void* in, void* inout, int64_t count, Datatype* type, Op* op);
// The packed element size of `type`'s basic kind (Fortran LOGICAL: its
// size); 0 when it has none.
int64_t elementBytesOf(const Datatype* type);
// The host loop (the processor's best build) over packed elements.
void applyPackedHost(OpKind op, BasicKind kind, int64_t elemBytes, const void* in, void* io,
                     int64_t n);

// Which build of the host reduction loop runs: "avx512", "avx2" or
// "baseline" (the processor's best, lowered by LOOM_REDUCE_ISA).
const char* reduceIsa();

// For the selector: the call's op is commutative.
bool reductionCommutative(const CollArgs& a);

// --- Buffers for the algorithms.

// Bytes spanned by `count` elements of `t` (from the first data byte).
inline size_t spanBytes(int64_t count, const Datatype* t) {
  if (count <= 0) return 0;
  return static_cast<size_t>((count - 1) * t->extent() + t->trueExtent());
}
// A schedule-owned buffer laid out like a user buffer of `count` elements:
// element i starts at result + i * extent.
inline char* scratchLike(Schedule& s, int64_t count, const Datatype* t) {
  return static_cast<char*>(s.scratch(spanBytes(count, t))) - t->trueLb();
}
// Element `i` of a buffer of type `t`.
inline char* elemAt(const void* buf, int64_t i, const Datatype* t) {
  return const_cast<char*>(static_cast<const char*>(buf)) + i * t->extent();
}
// Copies `count` elements between two buffers laid out alike.
void copyLike(const void* src, void* dst, int64_t count, const Datatype* t);

// Splits `count` elements into `parts` blocks whose sizes differ by at most
// one (the first `count % parts` are one larger); offset of block b.
inline int64_t blockSize(int64_t count, int parts, int b) {
  return count / parts + (b < count % parts ? 1 : 0);
}
inline int64_t blockOffset(int64_t count, int parts, int b) {
  const int64_t q = count / parts, r = count % parts;
  return b * q + (b < r ? b : r);
}

// Reduce-scatter: the element count of each rank's block (recvCount for
// the block variant, recvCounts[] for the other).
inline std::vector<int64_t> reduceScatterCounts(const CollArgs& a, int p) {
  std::vector<int64_t> c(p);
  for (int i = 0; i < p; ++i)
    c[i] = a.coll == Collective::kReduceScatterBlock ? a.recvCount : a.recvCounts[i];
  return c;
}

}  // namespace loom::coll
