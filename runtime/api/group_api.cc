// Groups (MPI 5.0 §7.3): local operations on ordered sets of processes.
//
// A group handle is a pointer to a loom::Group holding one reference;
// MPI_GROUP_EMPTY is the permanent empty group, and every operation whose
// result is empty returns MPI_GROUP_EMPTY. Errors here concern no
// communicator, so they go to MPI_COMM_WORLD's error handler.
#include <vector>

#include "api/comm_internal.h"
#include "api/runtime.h"

using loom::errorf;
using loom::Group;
using loom::Status;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toGroup;

namespace {

int fail(const Status& st, const char* fn) {
  return raise(nullptr, st, fn);
}

int badGroup(const char* fn, const char* which) {
  return fail(errorf(MPI_ERR_GROUP, "%s is MPI_GROUP_NULL or not a valid group", which), fn);
}

// Hands a new group to the user (MPI_GROUP_EMPTY when it has no member).
int result(std::vector<int> ranks, MPI_Group* out) {
  *out = ranks.empty() ? MPI_GROUP_EMPTY : loom::api::toHandle(new Group(std::move(ranks)));
  return MPI_SUCCESS;
}

// Two-group operations (union, intersection, difference).
template <class Op>
int binary(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup, const char* fn, Op op) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Group* a = toGroup(group1);
  Group* b = toGroup(group2);
  if (!a) return badGroup(fn, "group1");
  if (!b) return badGroup(fn, "group2");
  if (!newgroup) return fail(errorf(MPI_ERR_ARG, "newgroup is NULL"), fn);
  return result(op(*a, *b), newgroup);
}

// Rank-list operations (incl, excl, range_incl, range_excl).
template <class T, class Op>
int listOp(MPI_Group group, int n, const T* list, MPI_Group* newgroup, const char* fn, Op op) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Group* g = toGroup(group);
  if (!g) return badGroup(fn, "group");
  if (n < 0) return fail(errorf(MPI_ERR_ARG, "n = %d is negative", n), fn);
  if (n > 0 && !list) return fail(errorf(MPI_ERR_ARG, "the rank list is NULL"), fn);
  if (!newgroup) return fail(errorf(MPI_ERR_ARG, "newgroup is NULL"), fn);
  std::vector<int> ranks;
  Status st = op(*g, std::span<const T>(list, n), &ranks);
  if (!st.isOk()) return fail(st, fn);
  return result(std::move(ranks), newgroup);
}

}  // namespace

extern "C" int PMPI_Group_size(MPI_Group group, int* size) {
  static const char* fn = "MPI_Group_size";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Group* g = toGroup(group);
  if (!g) return badGroup(fn, "group");
  if (!size) return fail(errorf(MPI_ERR_ARG, "size is NULL"), fn);
  *size = g->size();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Group_size)

extern "C" int PMPI_Group_rank(MPI_Group group, int* rank) {
  static const char* fn = "MPI_Group_rank";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Group* g = toGroup(group);
  if (!g) return badGroup(fn, "group");
  if (!rank) return fail(errorf(MPI_ERR_ARG, "rank is NULL"), fn);
  *rank = g->rankOf(loom::api::rt().proc.rank);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Group_rank)

extern "C" int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return binary(group1, group2, newgroup, "MPI_Group_union", loom::groupUnion);
}
LOOM_WEAK_ALIAS(MPI_Group_union)

extern "C" int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return binary(group1, group2, newgroup, "MPI_Group_intersection", loom::groupIntersection);
}
LOOM_WEAK_ALIAS(MPI_Group_intersection)

extern "C" int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return binary(group1, group2, newgroup, "MPI_Group_difference", loom::groupDifference);
}
LOOM_WEAK_ALIAS(MPI_Group_difference)

extern "C" int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  return listOp(group, n, ranks, newgroup, "MPI_Group_incl", loom::groupIncl);
}
LOOM_WEAK_ALIAS(MPI_Group_incl)

extern "C" int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  return listOp(group, n, ranks, newgroup, "MPI_Group_excl", loom::groupExcl);
}
LOOM_WEAK_ALIAS(MPI_Group_excl)

static_assert(sizeof(loom::RankRange) == 3 * sizeof(int), "RankRange mirrors int[3]");

extern "C" int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  return listOp(group, n, reinterpret_cast<const loom::RankRange*>(ranges), newgroup,
                "MPI_Group_range_incl", loom::groupRangeIncl);
}
LOOM_WEAK_ALIAS(MPI_Group_range_incl)

extern "C" int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  return listOp(group, n, reinterpret_cast<const loom::RankRange*>(ranges), newgroup,
                "MPI_Group_range_excl", loom::groupRangeExcl);
}
LOOM_WEAK_ALIAS(MPI_Group_range_excl)

extern "C" int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
                                          MPI_Group group2, int ranks2[]) {
  static const char* fn = "MPI_Group_translate_ranks";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Group* a = toGroup(group1);
  Group* b = toGroup(group2);
  if (!a) return badGroup(fn, "group1");
  if (!b) return badGroup(fn, "group2");
  if (n < 0) return fail(errorf(MPI_ERR_ARG, "n = %d is negative", n), fn);
  if (n > 0 && (!ranks1 || !ranks2))
    return fail(errorf(MPI_ERR_ARG, "ranks1 or ranks2 is NULL"), fn);
  Status st = loom::groupTranslate(*a, std::span<const int>(ranks1, n), *b, ranks2);
  if (!st.isOk()) return fail(st, fn);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Group_translate_ranks)

extern "C" int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  static const char* fn = "MPI_Group_compare";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Group* a = toGroup(group1);
  Group* b = toGroup(group2);
  if (!a) return badGroup(fn, "group1");
  if (!b) return badGroup(fn, "group2");
  if (!result) return fail(errorf(MPI_ERR_ARG, "result is NULL"), fn);
  *result = loom::groupCompare(*a, *b);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Group_compare)

extern "C" int PMPI_Group_free(MPI_Group* group) {
  static const char* fn = "MPI_Group_free";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!group) return fail(errorf(MPI_ERR_ARG, "group is NULL"), fn);
  Group* g = toGroup(*group);
  if (!g) return badGroup(fn, "*group");
  // MPI_GROUP_EMPTY is accepted (operations hand it out as results) and is
  // permanent: release() leaves it alone.
  Group::release(g);
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Group_free)
