// One-sided access between nodes for the rma layer (p2p.h, "One-sided
// access"): the transport's expose/read/write behind job ranks, so that rma
// never names a transport.
#include <cstddef>

#include "p2p/p2p.h"
#include "p2p/routes.h"

namespace loom::p2p {

namespace {

// The transport that can do one-sided writes to `jobRank`, or nullptr.
const Transport* writer(int jobRank) {
  const Transport* t = detail::routeTo(jobRank);
  return t && t->write ? t : nullptr;
}

bool started(OneSidedResult res, size_t bytes, RmaDoneFn done, void* ctx) {
  if (res == OneSidedResult::kUnavailable) return false;
  if (res == OneSidedResult::kDone) done(ctx, bytes, MPI_SUCCESS);
  return true;
}

}  // namespace

bool rmaReaches(int jobRank) {
  return writer(jobRank) != nullptr;
}

bool rmaExpose(void* addr, size_t bytes, RemoteKey* key, void** handle) {
  const Transport* t = detail::network();
  if (!t || !t->write || bytes == 0) return false;
  // One registration for every peer: the key does not depend on who uses it.
  return t->expose(-1, addr, bytes, kExposeRead | kExposeWrite, key, handle);
}

void rmaUnexpose(void* handle) {
  if (const Transport* t = detail::network()) t->unexpose(handle);
}

bool rmaWrite(int jobRank, const RemoteKey& key, uint64_t offset, const void* local, size_t bytes,
              RmaDoneFn done, void* ctx) {
  const Transport* t = writer(jobRank);
  return t && started(t->write(jobRank, key, offset, local, bytes, done, ctx), bytes, done, ctx);
}

bool rmaRead(int jobRank, const RemoteKey& key, uint64_t offset, void* local, size_t bytes,
             RmaDoneFn done, void* ctx) {
  const Transport* t = writer(jobRank);
  return t && started(t->read(jobRank, key, offset, local, bytes, done, ctx), bytes, done, ctx);
}

}  // namespace loom::p2p
