// Staging: how an MPI operation on device buffers runs on host paths.
//
// A device buffer's bytes are copied into a host buffer (pinned when the
// backend has it, from a pool: device_stage.cc) before the operation, the
// operation runs on that host twin, and what it wrote is copied back at
// completion. The twin has the user buffer's layout: the span of the
// datatype's true extent, so derived, non-contiguous types work unchanged.
//
// Copying back writes only the bytes the operation's datatype covers
// (whole runs of the type map, as 2D copies), never the holes between
// them: a receive into every other column of a device matrix must not
// overwrite the columns another pending receive fills.
//
// Users: the p2p engine stages each send and receive (stageRequest, undone
// by Request::finish), the collectives stage every significant buffer of a
// call once (coll/coll_stage.cc), MPI_Reduce_local, one-sided origin
// buffers and the API's host-side packs (bsend, sendrecv_replace, MPI_Pack).
// Costs: a device-to-host copy of every input span before, a host-to-device
// copy per written run after, pool bookkeeping; nothing for host buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/device.h"
#include "core/device_pipe.h"
#include "core/status.h"

namespace loom {
class Datatype;
struct Request;
}  // namespace loom

namespace loom::device {

// A pooled host buffer of at least `n` bytes (LOOM_DEVICE_STAGE_CACHE
// bytes of them are kept for reuse); nullptr when memory is exhausted.
void* stageAlloc(size_t n);
void stageFree(void* p, size_t n);
// Frees what the pool keeps (MPI_Finalize).
void stageDrain();

// The bytes `count` elements of `t` touch, relative to the buffer's
// address: [*lo, *hi). Empty for count <= 0 or a type of size 0.
void typeSpan(int64_t count, const Datatype* t, int64_t* lo, int64_t* hi);

// Copies the data bytes of `count` elements of `t` (the typed bytes only,
// at most `maxBytes` of the packed stream) from the buffer at `src` to the
// one at `dst`, both laid out by `t`, either side host or device.
Status copyTyped(void* dst, const void* src, int64_t count, const Datatype* t,
                 size_t maxBytes = SIZE_MAX);

// The buffers of one operation, staged.
class Stage {
 public:
  Stage() = default;
  Stage(const Stage&) = delete;
  Stage& operator=(const Stage&) = delete;
  ~Stage();  // frees the host twins without copying anything back

  // Stages a buffer at `p`, of which the operation touches [p + lo, p + hi).
  // `load`: the operation reads it (copied to the host now). The return is
  // the host twin of `p` (nullptr on failure, with *st set).
  void* add(const void* p, int64_t lo, int64_t hi, bool load, Status* st);
  // A block of the buffer staged last that the operation writes: `count`
  // elements of `t` at byte offset `off` from its `p`. Copied back at
  // finish(), typed bytes only (at most `maxBytes` of them; the p2p
  // engine lowers it to the bytes a receive got).
  void writes(int64_t off, int64_t count, const Datatype* t);
  void limitLastWrite(size_t maxBytes);
  // The host twin of a pointer inside a staged span; other pointers as is.
  const void* translate(const void* q) const;
  void* translate(void* q) const {
    return const_cast<void*>(translate(static_cast<const void*>(q)));
  }
  bool empty() const { return spans_.empty(); }
  // What the staged operation is ("allreduce", "a receive"), for messages.
  void setWhat(const char* what) { what_ = what; }

  // Copies back every written block; the first failure is returned.
  Status finish();

  // A p2p request staged by stageRequest: its own buffer, restored at the
  // end (persistent requests are started again with it).
  void* userBuf = nullptr;
  // A p2p request whose device buffer moves in chunks (p2p/device_path.cc):
  // the request keeps its device buffer, and the bytes pass through this
  // pipeline's pinned slots. finishStaged waits for its last copies.
  std::unique_ptr<ChunkPipe> pipe;

 private:
  struct Span {
    char* dev;   // the device address of the span's first byte
    char* host;  // its host copy
    size_t bytes;
    size_t cap;  // host bytes allocated
    int64_t lo;  // the span's offset from the buffer pointer the caller gave
  };
  struct Write {
    size_t span;
    int64_t off;  // from the buffer pointer of the span
    int64_t count;
    const Datatype* type;
    size_t maxBytes;
  };
  std::vector<Span> spans_;
  std::vector<Write> writes_;
  const char* what_ = "the operation";
};

// Datatype::pack and unpack (the whole stream of `count` elements, `bytes`
// of it) where the typed buffer, the packed one or both may be device
// memory: the API's host-side packs (MPI_Pack, MPI_Unpack, buffered sends,
// the replace forms of sendrecv). Host buffers go straight through.
Status packAny(const Datatype* t, const void* buf, int64_t count, void* out, size_t bytes);
Status unpackAny(const Datatype* t, void* buf, int64_t count, const void* in, size_t bytes);

// The p2p engine's entry: if the request's buffer is device memory, stage
// it (sends: copied now; receives: copied back when the request finishes)
// and point r->buf at the host twin. Called only when device::active().
Status stageRequest(Request* r, bool isSend);
// Request::finish's hook: copies a staged receive back, restores r->buf,
// records a copy failure in the request's status.
void finishStaged(Request* r);

}  // namespace loom::device
