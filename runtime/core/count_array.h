// A read-only view of a per-rank count or displacement array as the user
// passed it: int[] (MPI_Gatherv, MPI_Alltoallw, ...) or MPI_Count[] /
// MPI_Aint[] (their MPI 4.0 large-count _c forms). Collectives read both
// through this one type, element by element as int64_t, so each has one
// implementation for both forms and nothing is copied or widened up front.
// The view does not own the array: it is valid while the user's call is
// (algorithms read the arrays while building a schedule, never later).
#pragma once

#include <cstddef>
#include <cstdint>

namespace loom {

class CountArray {
 public:
  constexpr CountArray() = default;
  constexpr CountArray(std::nullptr_t) {}
  constexpr CountArray(const int* a) : narrow_(a) {}
  constexpr CountArray(const int64_t* a) : wide_(a) {}

  int64_t operator[](size_t i) const { return narrow_ ? narrow_[i] : wide_[i]; }
  explicit operator bool() const { return narrow_ || wide_; }
  bool isWide() const { return wide_ != nullptr; }

 private:
  const int* narrow_ = nullptr;
  const int64_t* wide_ = nullptr;
};

}  // namespace loom
