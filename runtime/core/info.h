// Info: an ordered list of (key, value) strings (MPI 5.0 §10).
//
// Keys are unique and keep the order in which they were first set, which
// is the order MPI_Info_get_nthkey numbers them in; setting a key again
// replaces its value in place. Lookups are linear: info objects hold a
// handful of hints, and a vector keeps the order for free.
//
// The API layer checks lengths (MPI_MAX_INFO_KEY / MPI_MAX_INFO_VAL) before
// calling in, so the object itself accepts any string. Info objects the
// user holds are pooled (handle_pool.h) so a freed handle reads a cleared
// magic instead of freed memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/handle_pool.h"

namespace loom {

using InfoEntries = std::vector<std::pair<std::string, std::string>>;

// Index of `key` in `e`, or -1.
inline int infoFind(const InfoEntries& e, std::string_view key) {
  for (size_t i = 0; i < e.size(); ++i)
    if (e[i].first == key) return static_cast<int>(i);
  return -1;
}

// Sets `key` to `value`: in place when present, appended otherwise.
inline void infoSet(InfoEntries& e, std::string_view key, std::string_view value) {
  int i = infoFind(e, key);
  if (i >= 0)
    e[i].second.assign(value);
  else
    e.emplace_back(std::string(key), std::string(value));
}

class Info : public HandlePool<Info> {
 public:
  static constexpr uint32_t kMagic = 0x494e464f;  // "INFO": catches stale handles

  Info() = default;
  explicit Info(InfoEntries e) : entries_(std::move(e)) {}
  ~Info() { magic_ = 0; }
  Info(const Info&) = delete;
  Info& operator=(const Info&) = delete;

  bool valid() const { return magic_ == kMagic; }

  // The value of `key`, or nullptr when it is not set.
  const std::string* get(std::string_view key) const {
    int i = infoFind(entries_, key);
    return i < 0 ? nullptr : &entries_[i].second;
  }
  void set(std::string_view key, std::string_view value) { infoSet(entries_, key, value); }
  // False when `key` was not set.
  bool erase(std::string_view key) {
    int i = infoFind(entries_, key);
    if (i < 0) return false;
    entries_.erase(entries_.begin() + i);
    return true;
  }
  int size() const { return static_cast<int>(entries_.size()); }
  const InfoEntries& entries() const { return entries_; }

 private:
  uint32_t magic_ = kMagic;
  InfoEntries entries_;
};

}  // namespace loom
