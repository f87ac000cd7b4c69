#include "core/group.h"

#include <algorithm>

namespace loom {

Group::Group(std::vector<int> jobRanks) : ranks_(std::move(jobRanks)) {
  index_.reserve(ranks_.size());
  for (int i = 0; i < size(); ++i) index_.emplace_back(ranks_[i], i);
  std::sort(index_.begin(), index_.end());
}

int Group::rankOf(int jobRank) const {
  auto it = std::lower_bound(index_.begin(), index_.end(), std::make_pair(jobRank, -1));
  if (it == index_.end() || it->first != jobRank) return MPI_UNDEFINED;
  return it->second;
}

void Group::release(Group* g) {
  if (!g || g->permanent_) return;
  if (--g->refs_ == 0) delete g;
}

Group* Group::empty() {
  static Group* e = [] {
    auto* g = new Group(std::vector<int>{});
    g->permanent_ = true;
    return g;
  }();
  return e;
}

std::vector<int> groupUnion(const Group& a, const Group& b) {
  std::vector<int> out = a.jobRanks();
  for (int j : b.jobRanks())
    if (a.rankOf(j) == MPI_UNDEFINED) out.push_back(j);
  return out;
}

std::vector<int> groupIntersection(const Group& a, const Group& b) {
  std::vector<int> out;
  for (int j : a.jobRanks())
    if (b.rankOf(j) != MPI_UNDEFINED) out.push_back(j);
  return out;
}

std::vector<int> groupDifference(const Group& a, const Group& b) {
  std::vector<int> out;
  for (int j : a.jobRanks())
    if (b.rankOf(j) == MPI_UNDEFINED) out.push_back(j);
  return out;
}

namespace {

// Checks that `ranks` are distinct ranks of a group of `size` members and
// marks them in `seen` (one flag per group rank).
Status markRanks(int size, std::span<const int> ranks, std::vector<char>* seen) {
  seen->assign(size, 0);
  for (size_t i = 0; i < ranks.size(); ++i) {
    int r = ranks[i];
    if (r < 0 || r >= size)
      return errorf(MPI_ERR_RANK, "ranks[%zu] = %d is not a rank of a group of size %d", i, r,
                    size);
    if ((*seen)[r]) return errorf(MPI_ERR_RANK, "rank %d is listed twice", r);
    (*seen)[r] = 1;
  }
  return Status::ok();
}

// The group ranks a list of ranges names, in order: first, first+stride,
// ..., up to last. Every computed rank must be valid and distinct.
Status expandRanges(int size, std::span<const RankRange> ranges, std::vector<int>* out) {
  out->clear();
  std::vector<char> seen(size, 0);
  for (size_t i = 0; i < ranges.size(); ++i) {
    const RankRange& rg = ranges[i];
    if (rg.stride == 0) return errorf(MPI_ERR_ARG, "ranges[%zu] has stride 0", i);
    if ((rg.last > rg.first && rg.stride < 0) || (rg.last < rg.first && rg.stride > 0))
      return errorf(MPI_ERR_ARG, "ranges[%zu] = (%d, %d, %d) runs away from its end", i, rg.first,
                    rg.last, rg.stride);
    // 64-bit: first + k*stride must not overflow before it is checked.
    int64_t steps = (static_cast<int64_t>(rg.last) - rg.first) / rg.stride;
    int64_t lastComputed = rg.first + steps * rg.stride;
    for (int64_t end : {static_cast<int64_t>(rg.first), lastComputed})
      if (end < 0 || end >= size)
        return errorf(MPI_ERR_RANK,
                      "ranges[%zu] = (%d, %d, %d) names rank %lld of a group of "
                      "size %d",
                      i, rg.first, rg.last, rg.stride, static_cast<long long>(end), size);
    for (int64_t k = 0; k <= steps; ++k) {
      int r = static_cast<int>(rg.first + k * rg.stride);
      if (seen[r]) return errorf(MPI_ERR_RANK, "ranges name rank %d twice", r);
      seen[r] = 1;
      out->push_back(r);
    }
  }
  return Status::ok();
}

std::vector<int> keepMarked(const Group& g, const std::vector<char>& drop) {
  std::vector<int> out;
  for (int r = 0; r < g.size(); ++r)
    if (!drop[r]) out.push_back(g.jobRank(r));
  return out;
}

}  // namespace

Status groupIncl(const Group& g, std::span<const int> ranks, std::vector<int>* out) {
  std::vector<char> seen;
  LOOM_TRY(markRanks(g.size(), ranks, &seen));
  out->clear();
  for (int r : ranks) out->push_back(g.jobRank(r));
  return Status::ok();
}

Status groupExcl(const Group& g, std::span<const int> ranks, std::vector<int>* out) {
  std::vector<char> seen;
  LOOM_TRY(markRanks(g.size(), ranks, &seen));
  *out = keepMarked(g, seen);
  return Status::ok();
}

Status groupRangeIncl(const Group& g, std::span<const RankRange> ranges, std::vector<int>* out) {
  std::vector<int> ranks;
  LOOM_TRY(expandRanges(g.size(), ranges, &ranks));
  out->clear();
  for (int r : ranks) out->push_back(g.jobRank(r));
  return Status::ok();
}

Status groupRangeExcl(const Group& g, std::span<const RankRange> ranges, std::vector<int>* out) {
  std::vector<int> ranks;
  LOOM_TRY(expandRanges(g.size(), ranges, &ranks));
  std::vector<char> drop(g.size(), 0);
  for (int r : ranks) drop[r] = 1;
  *out = keepMarked(g, drop);
  return Status::ok();
}

Status groupTranslate(const Group& a, std::span<const int> ranks, const Group& b, int* out) {
  for (size_t i = 0; i < ranks.size(); ++i) {
    int r = ranks[i];
    if (r == MPI_PROC_NULL) {
      out[i] = MPI_PROC_NULL;
    } else if (r < 0 || r >= a.size()) {
      return errorf(MPI_ERR_RANK, "ranks1[%zu] = %d is not a rank of group1 (size %d)", i, r,
                    a.size());
    } else {
      out[i] = b.rankOf(a.jobRank(r));
    }
  }
  return Status::ok();
}

int groupCompare(const Group& a, const Group& b) {
  if (a.size() != b.size()) return MPI_UNEQUAL;
  if (a.jobRanks() == b.jobRanks()) return MPI_IDENT;
  for (int j : a.jobRanks())
    if (b.rankOf(j) == MPI_UNDEFINED) return MPI_UNEQUAL;
  return MPI_SIMILAR;  // same size, every member of a is in b, ranks distinct
}

}  // namespace loom
