#include "coll/comm_info.h"

#include "coll/call_probe.h"

#include <algorithm>
#include <unordered_map>

#include "coll/shm/shm_coll.h"
#include "core/locality.h"
#include "core/params.h"

namespace loom::coll {

CommInfo::~CommInfo() { freeCallLog(calls); }

namespace {

void deleteInfo(void* p) { delete static_cast<CommInfo*>(p); }

int64_t virtualNodeSize() {
  static const int64_t k = params::getInt("LOOM_COLL_VIRTUAL_NODE_SIZE");
  return k;
}

int realNode(int jobRank) {
  const auto& loc = jobLocality();
  return jobRank < static_cast<int>(loc.size()) ? loc[jobRank].nodeId : 0;
}

int nodeKey(int jobRank) {
  const int64_t k = virtualNodeSize();
  if (k > 0) return static_cast<int>(jobRank / k);
  return realNode(jobRank);
}

CommInfo* build(Comm* c) {
  auto* info = new CommInfo;
  const int p = c->size();
  info->nodeOf.resize(p);
  std::unordered_map<int, int> index;  // node key -> node index
  std::vector<int> counts;
  for (int r = 0; r < p; ++r) {
    auto [it, fresh] = index.emplace(nodeKey(c->worldRank(r)), static_cast<int>(counts.size()));
    if (fresh) {
      counts.push_back(0);
      info->leaders.push_back(r);
    }
    info->nodeOf[r] = it->second;
    ++counts[it->second];
  }
  info->nodes = static_cast<int>(counts.size());
  for (int r = 1; r < p && info->oneRealNode; ++r)
    info->oneRealNode = realNode(c->worldRank(r)) == realNode(c->worldRank(0));

  info->minPerNode = *std::min_element(counts.begin(), counts.end());
  info->maxPerNode = *std::max_element(counts.begin(), counts.end());
  info->myNode = info->nodeOf[c->rank()];
  for (int r = 0; r < p; ++r)
    if (info->nodeOf[r] == info->myNode) {
      if (r == c->rank()) info->localRank = static_cast<int>(info->local.size());
      info->local.push_back(r);
    }
  return info;
}

}  // namespace

CommInfo& commInfo(Comm* c) {
  if (auto* info = static_cast<CommInfo*>(c->collState())) return *info;
  Comm::collStateDeleter = deleteInfo;
  CommInfo* info = build(c);
  c->setCollState(info);
  return *info;
}

}  // namespace loom::coll
