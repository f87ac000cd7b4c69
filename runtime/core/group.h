// Group: an ordered list of job ranks (MPI 5.0 §7.3).
//
// Group rank i is job rank `jobRank(i)`. Groups are immutable once built and
// reference counted: a communicator holds one reference to its group, and
// MPI_Comm_group hands the user another one instead of copying the list.
//
// The algebra (union, intersection, incl, ranges, ...) is a set of pure
// functions from groups to job-rank lists, so the unit tests exercise every
// rule without a running job. Errors follow MPICH's classes: a rank outside
// the group or listed twice is MPI_ERR_RANK, a malformed argument (negative
// count, zero stride, a range running away from its end) is MPI_ERR_ARG.
#pragma once

#include <cstdint>

#include "core/handle_pool.h"
#include <span>
#include <utility>
#include <vector>

#include "core/status.h"

namespace loom {

class Group : public HandlePool<Group> {
 public:
  static constexpr uint32_t kMagic = 0x47525550;  // "GRUP": catches stale handles

  // Built with one reference, owned by the caller.
  explicit Group(std::vector<int> jobRanks);
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  bool valid() const { return magic_ == kMagic; }
  int size() const { return static_cast<int>(ranks_.size()); }
  int jobRank(int r) const { return ranks_[r]; }
  const std::vector<int>& jobRanks() const { return ranks_; }

  // The group rank of job rank `jobRank`, or MPI_UNDEFINED if it is not a
  // member. O(log n): a sorted index built once at construction.
  int rankOf(int jobRank) const;

  // Reference counting. release() deletes the group (clearing its magic
  // first) when the last reference goes; the predefined empty group is
  // never deleted.
  void retain() { ++refs_; }
  static void release(Group* g);

  // The empty group behind MPI_GROUP_EMPTY.
  static Group* empty();

  // The session whose process set this group is (MPI_Group_from_session_pset;
  // opaque here, runtime/api's), or nullptr. Not passed on by the group
  // operations.
  void* session() const { return session_; }
  void setSession(void* s) { session_ = s; }

 private:
  ~Group() { magic_ = 0; }

  uint32_t magic_ = kMagic;
  int refs_ = 1;
  bool permanent_ = false;
  std::vector<int> ranks_;
  std::vector<std::pair<int, int>> index_;  // (job rank, group rank), sorted
  void* session_ = nullptr;
};

// One (first, last, stride) triple of MPI_Group_range_incl/excl.
struct RankRange {
  int first, last, stride;
};

// Group algebra; the result is the new group's job-rank list.
std::vector<int> groupUnion(const Group& a, const Group& b);         // a, then b \ a
std::vector<int> groupIntersection(const Group& a, const Group& b);  // a ∩ b in a's order
std::vector<int> groupDifference(const Group& a, const Group& b);    // a \ b in a's order
Status groupIncl(const Group& g, std::span<const int> ranks, std::vector<int>* out);
Status groupExcl(const Group& g, std::span<const int> ranks, std::vector<int>* out);
Status groupRangeIncl(const Group& g, std::span<const RankRange> ranges, std::vector<int>* out);
Status groupRangeExcl(const Group& g, std::span<const RankRange> ranges, std::vector<int>* out);

// Ranks of `a` translated to ranks of `b`: MPI_UNDEFINED when not in b,
// MPI_PROC_NULL stays MPI_PROC_NULL. `out` has ranks.size() entries.
Status groupTranslate(const Group& a, std::span<const int> ranks, const Group& b, int* out);

// MPI_IDENT (same members, same order), MPI_SIMILAR (same members) or
// MPI_UNEQUAL.
int groupCompare(const Group& a, const Group& b);

}  // namespace loom
