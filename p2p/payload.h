// Buffers for the data of unexpected eager messages, kept for reuse.
//
// An eager message that arrives before its receive is posted is copied out
// of the transport into a buffer of its own (Unexpected::payload) until the
// receive comes. Taking that buffer from the heap each time costs more than
// the call: when a burst of them is freed at once (an alltoall whose
// senders run a call ahead of their receivers, as oversubscribed ranks
// do), glibc gives the top of its heap back to the kernel, and the next
// burst faults every page in again. 16 ranks on 2 cores, alltoall of 16 KiB
// blocks: ~6 page faults per rank and call, 780 us a call against 580
// when the same blocks went by rendezvous.
//
// The pool keeps freed buffers by power-of-two size class, 256 B to 64 KiB,
// up to 2 MiB per class; larger ones come from the heap. Like the match
// table it serves, it is used by one thread at a time (the engine's).
#pragma once

#include <cstddef>
#include <memory>

namespace loom::p2p {

struct PayloadFree {
  void operator()(std::byte* p) const noexcept;
};
using Payload = std::unique_ptr<std::byte[], PayloadFree>;

// A buffer of at least n bytes (16-byte aligned), from the pool when it
// has one of n's class.
Payload allocPayload(size_t n);

// Buffers the pool holds now, and bytes (for tests).
size_t payloadsPooled();
size_t payloadBytesPooled();

}  // namespace loom::p2p
