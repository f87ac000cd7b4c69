// The chunked staging pipeline (device_pipe.h).
#include "core/device_pipe.h"

#include <algorithm>
#include <cstring>

#include "core/device_stage.h"

namespace loom::device {

ChunkPipe::~ChunkPipe() {
  for (Slot& s : slots_) {
    (void)waitSlot(s);  // a copy still running must not land in freed memory
    stageFree(s.host, s.cap);
  }
}

size_t ChunkPipe::chunkLen(size_t k) const {
  return std::min(chunk_, bytes_ - k * chunk_);
}

Status ChunkPipe::startCopy(Slot& s, size_t k) {
  char* devAt = dev_ + k * chunk_;
  const size_t n = chunkLen(k);
  s.chunk = static_cast<int64_t>(k);
  LOOM_TRY(download_ ? copyAsync(s.host, devAt, n, stream_) : copyAsync(devAt, s.host, n, stream_));
  LOOM_TRY(fenceRecord(stream_, &s.fence));
  s.copying = true;
  return Status::ok();
}

Status ChunkPipe::waitSlot(Slot& s) {
  if (!s.copying) return Status::ok();
  s.copying = false;
  Status st = fenceWait(s.fence);
  fenceDestroy(s.fence);
  s.fence = Fence{};
  return st;
}

Status ChunkPipe::init(void* dev, size_t bytes, size_t chunk, bool download, Stream s) {
  dev_ = static_cast<char*>(dev);
  bytes_ = bytes;
  chunk_ = std::max<size_t>(chunk, 1);
  chunks_ = (bytes + chunk_ - 1) / chunk_;
  download_ = download;
  stream_ = s;
  const size_t n = std::min<size_t>(kSlots, chunks_);
  const size_t cap = std::min(chunk_, bytes_);
  slots_.resize(n);
  for (Slot& slot : slots_) {
    slot.host = static_cast<char*>(stageAlloc(cap));
    if (!slot.host)
      return errorf(MPI_ERR_NO_MEM,
                    "cannot allocate %zu bytes of host memory to stage a device "
                    "buffer in chunks",
                    cap);
    slot.cap = cap;
  }
  if (download_) {
    for (size_t k = 0; k < n; ++k) LOOM_TRY(startCopy(slots_[k], k));
    nextCopy_ = n;
  }
  return Status::ok();
}

const char* ChunkPipe::peek(size_t off, size_t* avail, Status* st) {
  const size_t k = off / chunk_;
  Slot& s = slots_[k % slots_.size()];
  if (s.chunk != static_cast<int64_t>(k)) {
    *st = errorf(MPI_ERR_INTERN, "chunk %zu of a staged device buffer was never copied", k);
    return nullptr;
  }
  if (s.copying) {
    if (!fenceDone(s.fence)) return nullptr;
    if (Status w = waitSlot(s); !w.isOk()) {
      *st = std::move(w);
      return nullptr;
    }
  }
  *avail = k * chunk_ + chunkLen(k) - off;
  return s.host + (off - k * chunk_);
}

Status ChunkPipe::consumed(size_t off) {
  for (Slot& s : slots_) {
    if (s.chunk < 0 || s.copying) continue;
    const size_t k = static_cast<size_t>(s.chunk);
    if (k * chunk_ + chunkLen(k) > off) continue;  // still being handed on
    if (nextCopy_ < chunks_)
      LOOM_TRY(startCopy(s, nextCopy_++));
    else
      s.chunk = -1;
  }
  return Status::ok();
}

Status ChunkPipe::put(size_t off, const void* src, size_t n) {
  const char* from = static_cast<const char*>(src);
  while (n > 0) {
    const size_t k = off / chunk_;
    Slot& s = slots_[k % slots_.size()];
    if (s.chunk != static_cast<int64_t>(k)) {
      // The slot's previous chunk (kSlots back) must be on the device
      // before its bytes are overwritten; normally long done.
      LOOM_TRY(waitSlot(s));
      s.chunk = static_cast<int64_t>(k);
      s.filled = 0;
    }
    const size_t at = off - k * chunk_;
    const size_t m = std::min(n, chunkLen(k) - at);
    std::memcpy(s.host + at, from, m);
    s.filled += m;
    if (s.filled == chunkLen(k)) LOOM_TRY(startCopy(s, k));
    off += m;
    from += m;
    n -= m;
  }
  return Status::ok();
}

Status ChunkPipe::finish() {
  Status first;
  for (Slot& s : slots_) {
    // A chunk that never filled (the message was shorter than the range):
    // what arrived of it still lands.
    if (!s.copying && s.chunk >= 0 && s.filled > 0 && s.filled < chunkLen(s.chunk)) {
      Status c = copy(dev_ + s.chunk * chunk_, s.host, s.filled);
      if (!c.isOk() && first.isOk()) first = std::move(c);
      s.filled = 0;
    }
    Status w = waitSlot(s);
    if (!w.isOk() && first.isOk()) first = std::move(w);
  }
  return first;
}

}  // namespace loom::device
