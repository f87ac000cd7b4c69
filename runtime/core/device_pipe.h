// A chunked staging pipeline: one contiguous device range moved through a
// few pinned host slots, so the device copy of one chunk overlaps the host's
// work on another (the transport sending it, or receiving the next).
//
//   download (device -> host, a send): copies of the first chunks start at
//     once, one per slot; the consumer peeks at the chunk under its offset
//     (ready once its fence passed), hands the bytes on, and marks them
//     consumed, which refills the slot with the next chunk not yet copied.
//   upload (host -> device, a receive): bytes are put in order; a slot whose
//     chunk is full is copied to the device asynchronously while the next
//     slot fills; finish() waits for the last copies.
//
// Against staging whole (one copy of the entire message before, or after,
// the transport): the transport starts after one chunk instead of the whole
// copy, and only the last chunk's copy is exposed at the end. It costs a
// fence (a CUDA event) per chunk and kSlots chunks of pinned host memory
// per message in flight instead of the whole message. The mock's copies
// are synchronous and its fences always passed, so there the pipeline is
// only correct, never faster.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/device.h"
#include "core/status.h"

namespace loom::device {

class ChunkPipe {
 public:
  static constexpr int kSlots = 4;

  ChunkPipe() = default;
  ChunkPipe(const ChunkPipe&) = delete;
  ChunkPipe& operator=(const ChunkPipe&) = delete;
  // Waits for copies still running (their memory is about to be freed) and
  // returns the slots to the staging pool.
  ~ChunkPipe();

  // `dev`: the device range of `bytes`; `chunk`: bytes per slot (the last
  // chunk may be shorter); `download`: device to host; `s`: the stream the
  // copies run on. A download starts its first copies here.
  Status init(void* dev, size_t bytes, size_t chunk, bool download, Stream s);

  // Download. The host copy of the bytes from `off` (the first not yet
  // consumed) to the end of their chunk (*avail bytes), once its copy is
  // done; nullptr while it runs, or when it failed (*st set).
  const char* peek(size_t off, size_t* avail, Status* st);
  // Download. Everything before `off` has been handed on: slots whose chunk
  // lies wholly before it take the next chunks.
  Status consumed(size_t off);

  // Upload. The next `n` bytes of the range, at `off` (in order, no gaps).
  Status put(size_t off, const void* src, size_t n);
  // Upload. Every byte put is on the device (waits for the copies).
  Status finish();

  size_t bytes() const { return bytes_; }

 private:
  struct Slot {
    char* host = nullptr;
    size_t cap = 0;
    int64_t chunk = -1;  // the chunk it holds or receives (-1: none)
    size_t filled = 0;   // upload: bytes put so far
    Fence fence;         // after the chunk's copy
    bool copying = false;
  };
  size_t chunkLen(size_t k) const;
  Status startCopy(Slot& s, size_t k);
  Status waitSlot(Slot& s);

  char* dev_ = nullptr;
  size_t bytes_ = 0;
  size_t chunk_ = 1;
  size_t chunks_ = 0;
  size_t nextCopy_ = 0;  // download: the next chunk no slot has taken yet
  bool download_ = false;
  Stream stream_;
  std::vector<Slot> slots_;
};

}  // namespace loom::device
