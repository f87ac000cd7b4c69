// bootstrap_exchange: the PMIx key-value exchange transports will use. Each
// rank publishes blobs of a rank-dependent size under two keys and its node
// id under a third, meets the others in one fence, checks every peer's blobs
// byte for byte, and checks that its own node map (nodeOfRank) puts every
// peer where that peer says it is, with the local peers those of its node.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <span>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/bootstrap.h"

namespace {
std::vector<std::byte> blobOf(int rank, int which) {
  std::vector<std::byte> b(static_cast<size_t>(1 + rank * 37 + which * 1000));
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = static_cast<std::byte>((rank * 31 + which * 7 + i) & 0xff);
  return b;
}
int fail(const loom::Status& st, const char* what) {
  std::fprintf(stderr, "bootstrap_exchange: %s: %s\n", what, st.message().c_str());
  return 1;
}
}  // namespace

int main() {
  loom::ProcInfo info;
  loom::Bootstrap boot;
  if (auto st = boot.init(&info); !st) return fail(st, "init");
  for (int which = 0; which < 2; ++which)
    if (auto st = boot.put("test.blob" + std::to_string(which), blobOf(info.rank, which)); !st)
      return fail(st, "put");
  if (auto st = boot.put("test.node", std::as_bytes(std::span(&info.nodeId, 1))); !st)
    return fail(st, "put");
  if (auto st = boot.fence(); !st) return fail(st, "fence");
  for (int peer = 0; peer < info.size; ++peer) {
    for (int which = 0; which < 2; ++which) {
      std::vector<std::byte> got;
      if (auto st = boot.get(peer, "test.blob" + std::to_string(which), &got); !st)
        return fail(st, "get");
      if (got != blobOf(peer, which)) {
        std::fprintf(stderr, "bootstrap_exchange: rank %d: wrong blob %d from %d\n", info.rank,
                     which, peer);
        return 1;
      }
    }
    std::vector<std::byte> got;
    if (auto st = boot.get(peer, "test.node", &got); !st) return fail(st, "get");
    int node = -1;
    if (got.size() == sizeof node) std::memcpy(&node, got.data(), sizeof node);
    if (node != info.nodeOfRank[peer]) {
      std::fprintf(stderr, "bootstrap_exchange: rank %d says it is on node %d, the map says %d\n",
                   peer, node, info.nodeOfRank[peer]);
      return 1;
    }
    const bool local = std::find(info.localPeers.begin(), info.localPeers.end(), peer) !=
                       info.localPeers.end();
    if (local != (node == info.nodeId)) {
      std::fprintf(stderr, "bootstrap_exchange: rank %d (node %d) %s a local peer of node %d\n",
                   peer, node, local ? "is" : "is not", info.nodeId);
      return 1;
    }
  }
  if (static_cast<int>(info.localPeers.size()) != info.localSize) {
    std::fprintf(stderr, "bootstrap_exchange: %zu local peers, local size %d\n",
                 info.localPeers.size(), info.localSize);
    return 1;
  }
  if (auto st = boot.barrier(); !st) return fail(st, "barrier");
  if (auto st = boot.finalize(); !st) return fail(st, "finalize");
  std::printf("bootstrap_exchange: rank %d of %d (local %d of %d, node %d of %d): ok\n",
              info.rank, info.size, info.localRank, info.localSize, info.nodeId, info.numNodes);
  return 0;
}
