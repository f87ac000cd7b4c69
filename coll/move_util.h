// Helpers shared by the data-movement algorithms (bcast, gather, scatter,
// allgather, alltoall and their v/w variants).
//
// Two kinds of buffers appear in these algorithms:
//   * the user's buffers, always sent and received as (ptr, count, type), so
//     non-contiguous types cost nothing extra: the p2p engine packs them;
//   * scratch buffers, which hold packed bytes (the type's signature, no
//     holes) and travel as MPI_BYTE. Data enters and leaves scratch through
//     pack/unpack in Schedule::local steps.
// A message's byte count is always count * type size on both sides, so a
// typed send matches a packed receive of the same data and vice versa.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "coll/schedule.h"
#include "coll/selector.h"
#include "core/datatype.h"
#include "core/device.h"

namespace loom::coll::move {

inline Datatype* byteType() {
  return predefinedDatatype(reinterpret_cast<uintptr_t>(MPI_BYTE));
}

// One block of a user buffer: `count` elements of `type` at `ptr`.
struct Block {
  char* ptr = nullptr;
  int64_t count = 0;
  Datatype* type = nullptr;

  size_t bytes() const { return type ? type->packedSize(count) : 0; }
};

// Block i of a buffer of equal blocks of `count` elements (gather,
// scatter, allgather, alltoall): it starts i * count extents in.
inline Block equalBlock(const void* buf, int64_t count, Datatype* type, int i) {
  return Block{static_cast<char*>(const_cast<void*>(buf)) + i * count * type->extent(), count,
               type};
}

// Packs a block into `out` (which holds block.bytes()).
inline void packBlock(const Block& b, void* out) {
  size_t n = b.bytes();
  if (n) b.type->pack(b.ptr, b.count, 0, out, n);
}

inline void unpackBlock(const Block& b, const void* in) {
  size_t n = b.bytes();
  if (n) b.type->unpack(b.ptr, b.count, 0, in, n);
}

// The same bytes: nothing to copy (MPI_IN_PLACE, a root's own block). The
// pointer alone does not say so: with MPI_BOTTOM both blocks start at 0 and
// their types' absolute displacements place the data.
inline bool sameBlock(const Block& a, const Block& b) {
  return a.ptr == b.ptr && a.type == b.type && a.count == b.count;
}

// Copies src into dst (same signature, possibly different layouts): a
// memcpy when both are contiguous, else pack into a temporary and unpack.
inline void copyBlock(const Block& src, const Block& dst) {
  size_t n = src.bytes();
  if (!n || sameBlock(src, dst)) return;
  if (src.type->isContiguous() && dst.type->isContiguous()) {
    std::memmove(dst.ptr + dst.type->trueLb(), src.ptr + src.type->trueLb(), n);
    return;
  }
  std::vector<std::byte> tmp(n);
  src.type->pack(src.ptr, src.count, 0, tmp.data(), n);
  dst.type->unpack(dst.ptr, dst.count, 0, tmp.data(), n);
}

// A local step copying src to dst when the round starts.
inline void scheduleCopy(Schedule& s, const Block& src, const Block& dst) {
  if (src.bytes() == 0 || sameBlock(src, dst)) return;
  s.local([src, dst] { copyBlock(src, dst); });
}
// The same once the round's messages are posted (Schedule::localAfterPosting):
// for a rank's own block in a one-round algorithm, whose messages neither
// read `dst` nor write `src`. A root that copied first kept every peer
// waiting for the copy (16 ranks on 2 cores, scatter of 64 KiB blocks).
inline void scheduleCopyAfterPosting(Schedule& s, const Block& src, const Block& dst) {
  if (src.bytes() == 0 || sameBlock(src, dst)) return;
  s.localAfterPosting([src, dst] { copyBlock(src, dst); });
}

// The same copy of contiguous blocks in device memory (a call on device
// buffers): a device step of the round, beside its messages.
inline void scheduleDeviceCopy(Schedule& s, const Block& src, const Block& dst) {
  if (src.bytes() == 0 || sameBlock(src, dst)) return;
  s.device([src, dst](device::Stream st) {
    return device::copyAsync(dst.ptr + dst.type->trueLb(), src.ptr + src.type->trueLb(), src.bytes(), st);
  });
}

inline void sendBlock(Schedule& s, const Block& b, int peer) { s.send(b.ptr, b.count, b.type, peer); }
inline void recvBlock(Schedule& s, const Block& b, int peer) { s.recv(b.ptr, b.count, b.type, peer); }

// Bytes of a packed region, sent or received as MPI_BYTE.
inline void sendBytes(Schedule& s, const void* p, size_t n, int peer) {
  s.send(p, static_cast<int64_t>(n), byteType(), peer);
}
inline void recvBytes(Schedule& s, void* p, size_t n, int peer) {
  s.recv(p, static_cast<int64_t>(n), byteType(), peer);
}

// The blocks of an alltoall-family call, one per peer, for the send and the
// receive side. With MPI_IN_PLACE the send blocks are packed copies of the
// receive blocks, made in a local step of the first round (before anything
// is received), in one scratch buffer: the cost of in-place is one extra
// copy of the data.
struct ExchangeBlocks {
  std::vector<Block> send, recv;
};

inline ExchangeBlocks exchangeBlocks(Schedule& s, const CollArgs& a) {
  const int p = s.comm()->size();
  ExchangeBlocks x;
  x.send.resize(p);
  x.recv.resize(p);
  char* rb = static_cast<char*>(a.recvbuf);
  char* sb = static_cast<char*>(const_cast<void*>(a.sendbuf));
  for (int i = 0; i < p; ++i) {
    switch (a.coll) {
      case Collective::kAlltoallv:
        x.recv[i] = Block{rb + a.recvDispls[i] * a.recvType->extent(), a.recvCounts[i], a.recvType};
        if (!a.inPlace)
          x.send[i] = Block{sb + a.sendDispls[i] * a.type->extent(), a.sendCounts[i], a.type};
        break;
      case Collective::kAlltoallw:
        x.recv[i] = Block{rb + a.recvDispls[i], a.recvCounts[i], a.recvTypes[i]};
        if (!a.inPlace) x.send[i] = Block{sb + a.sendDispls[i], a.sendCounts[i], a.sendTypes[i]};
        break;
      default:  // kAlltoall
        x.recv[i] = equalBlock(rb, a.recvCount, a.recvType, i);
        if (!a.inPlace) x.send[i] = equalBlock(sb, a.count, a.type, i);
        break;
    }
  }
  if (a.inPlace) {
    size_t total = 0;
    std::vector<size_t> off(p);
    for (int i = 0; i < p; ++i) {
      off[i] = total;
      total += x.recv[i].bytes();
    }
    char* tmp = static_cast<char*>(s.scratch(total));
    std::vector<Block> src = x.recv;
    for (int i = 0; i < p; ++i) x.send[i] = Block{tmp + off[i], int64_t(src[i].bytes()), byteType()};
    s.local([src, tmp, off] {
      for (size_t i = 0; i < src.size(); ++i) packBlock(src[i], tmp + off[i]);
    });
  }
  return x;
}

// Relative rank and its inverse, for trees rooted anywhere.
inline int relRank(int r, int root, int p) { return (r - root + p) % p; }
inline int absRank(int vr, int root, int p) { return (vr + root) % p; }

}  // namespace loom::coll::move
