// How Loom fills an MPI_Status, and the small helpers every point-to-point
// and request entry point shares (handle translation, argument checks).
//
// MPI_Status is the ABI's eight ints. The first three are the user's; Loom
// keeps in MPI_internal:
//   [0], [1]  bytes received, as an int64 (low 32 bits, high 32 bits)
//   [2]       1 when the operation was cancelled
//   [3], [4]  unused (zero)
// MPI_Get_count / MPI_Get_elements / MPI_Test_cancelled read them back.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "core/datatype.h"
#include "core/request.h"
#include "core/status.h"

namespace loom {

// Largest tag a user may pass (the value of the MPI_TAG_UB attribute). 2^30-1
// leaves the engine a couple of bits should it ever need to fold flags into
// the tag; the standard only requires 32767.
constexpr int kTagUb = (1 << 30) - 1;

namespace api {

inline void setStatusBytes(MPI_Status* s, int64_t bytes) {
  uint64_t b = static_cast<uint64_t>(bytes);
  s->MPI_internal[0] = static_cast<int>(static_cast<uint32_t>(b & 0xffffffffu));
  s->MPI_internal[1] = static_cast<int>(static_cast<uint32_t>(b >> 32));
}

inline int64_t statusBytes(const MPI_Status* s) {
  uint64_t lo = static_cast<uint32_t>(s->MPI_internal[0]);
  uint64_t hi = static_cast<uint32_t>(s->MPI_internal[1]);
  return static_cast<int64_t>(lo | (hi << 32));
}

inline bool statusCancelled(const MPI_Status* s) {
  return s->MPI_internal[2] != 0;
}

// Source, tag, count and cancelled flag; MPI_ERROR is left alone (the
// standard: only the multiple-completion calls set it, and only when they
// return MPI_ERR_IN_STATUS).
inline void fillStatus(MPI_Status* s, int source, int tag, int64_t bytes, bool cancelled) {
  if (!s) return;  // MPI_STATUS_IGNORE
  s->MPI_SOURCE = source;
  s->MPI_TAG = tag;
  setStatusBytes(s, bytes);
  s->MPI_internal[2] = cancelled ? 1 : 0;
  s->MPI_internal[3] = 0;
  s->MPI_internal[4] = 0;
}

// The standard's "empty" status: what a null or inactive request returns.
inline void setEmptyStatus(MPI_Status* s) {
  if (!s) return;
  fillStatus(s, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, false);
  s->MPI_ERROR = MPI_SUCCESS;
}

// What a receive from MPI_PROC_NULL returns.
inline void setProcNullStatus(MPI_Status* s) {
  fillStatus(s, MPI_PROC_NULL, MPI_ANY_TAG, 0, false);
}

inline void fillStatus(MPI_Status* s, const Request& r) {
  fillStatus(s, r.statusSource, r.statusTag, r.bytes, r.cancelled);
}

// Request handles are pointers to loom::Request; nullptr for
// MPI_REQUEST_NULL, predefined-range values, misaligned or freed ones.
inline Request* toRequest(MPI_Request h) {
  auto v = reinterpret_cast<uintptr_t>(h);
  if (v < 4096 || v % alignof(Request) != 0) return nullptr;
  auto* r = reinterpret_cast<Request*>(h);
  return r->valid() ? r : nullptr;
}

inline MPI_Request toHandle(Request* r) {
  return reinterpret_cast<MPI_Request>(r);
}

// A request that is already complete (MPI_PROC_NULL peers, buffered sends
// once copied): what the nonblocking calls hand back when there is nothing
// to wait for.
inline Request* completedRequest(ReqKind kind, Comm* comm, int source) {
  Request* r = Request::alloc(kind);
  r->comm = comm;
  r->statusSource = source;
  r->statusTag = MPI_ANY_TAG;
  r->bytes = 0;
  r->complete = true;
  return r;
}

// Argument checks shared by sends, receives and probes. Each returns true
// when the value is acceptable.
inline bool validSendRank(int rank, int size) {
  return rank == MPI_PROC_NULL || (rank >= 0 && rank < size);
}
inline bool validRecvRank(int rank, int size) {
  return rank == MPI_ANY_SOURCE || validSendRank(rank, size);
}
inline bool validSendTag(int tag) {
  return tag >= 0 && tag <= kTagUb;
}
inline bool validRecvTag(int tag) {
  return tag == MPI_ANY_TAG || validSendTag(tag);
}

// MPI_DATATYPE_NULL with a count of 0 describes an empty buffer, as a
// zero-count buffer of any type does (MPICH accepts it too; the standard
// constrains the type only through the data it describes): the checks see
// MPI_BYTE instead. Any other use of MPI_DATATYPE_NULL stays an error.
inline Datatype* typeOrEmpty(Datatype* t, MPI_Datatype handle, int64_t count) {
  if (t || handle != MPI_DATATYPE_NULL || count != 0) return t;
  return predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_BYTE));
}

// The (buf, count, datatype) triple of a send or receive; `type` is the
// translated handle (nullptr when invalid).
inline Status checkData(const void* buf, int64_t count, const Datatype* type) {
  if (count < 0) return errorf(MPI_ERR_COUNT, "count=%lld < 0", static_cast<long long>(count));
  if (!type) return errorf(MPI_ERR_TYPE, "invalid datatype");
  if (!type->isCommitted()) return errorf(MPI_ERR_TYPE, "datatype is not committed");
  // With MPI_Count counts (the _c forms) count * size can pass 2^63 bytes:
  // refused rather than wrapped to a small size.
  int64_t bytes;
  if (__builtin_mul_overflow(count, type->size(), &bytes)) [[unlikely]]
    return errorf(MPI_ERR_COUNT, "count=%lld of a %lld-byte type is more than 2^63 bytes",
                  static_cast<long long>(count), static_cast<long long>(type->size()));
  // A NULL buffer is MPI_BOTTOM too: fine when the type's displacements are
  // absolute addresses (its data starts far from 0), wrong otherwise.
  if (!buf && count > 0 && type->size() > 0 && type->trueLb() < 4096)
    return errorf(MPI_ERR_BUFFER, "buffer is NULL with count=%lld of a %lld-byte type",
                  static_cast<long long>(count), static_cast<long long>(type->size()));
  return Status::ok();
}

// Bytes a buffer certainly touches: for `count` elements of a contiguous
// `type` starting `displ` elements after `buf`, all of them, [lo, hi); for
// any other type only its first byte (buf + displ + trueLb, touched by
// definition): a type with holes may interleave with another buffer
// legally (two struct types of absolute addresses at MPI_BOTTOM), so only
// what is sure to be touched counts. Empty (lo == hi) when no byte moves.
struct Span {
  __int128 lo = 0, hi = 0;
  bool empty() const { return lo >= hi; }
};
inline Span spanOf(const void* buf, int64_t displ, int64_t count, const Datatype* type) {
  if (count <= 0 || !type || type->size() == 0) return {};
  const __int128 base = static_cast<__int128>(reinterpret_cast<intptr_t>(buf)) +
                        static_cast<__int128>(displ) * type->extent() + type->trueLb();
  if (!type->isContiguous()) return {base, base + 1};
  return {base, base + static_cast<__int128>(count) * type->size()};
}
inline bool overlap(const Span& a, const Span& b) {
  return !a.empty() && !b.empty() && a.lo < b.hi && b.lo < a.hi;
}
// A collective's send and receive buffers must be disjoint (MPI_IN_PLACE
// is how one buffer serves both): MPI_ERR_BUFFER when they are not.
inline Status overlapError() {
  return errorf(MPI_ERR_BUFFER,
                "the send and receive buffers overlap (use MPI_IN_PLACE for one buffer)");
}
inline Status disjoint(const Span& send, const Span& recv) {
  return overlap(send, recv) ? overlapError() : Status::ok();
}

// Datatype references: a pending nonblocking operation started by the API
// holds one on its type until it finishes (released by this onComplete
// hook); a persistent request holds one until MPI_Request_free. So the user
// may free the type while the operation is pending.
// Runs when a nonblocking operation holding a reference on its datatype
// finishes (Request::onComplete): the user may have freed the type already.
inline void releaseTypeOnComplete(Request* r) {
  if (r->type) r->type->release();
}

}  // namespace api
}  // namespace loom
