// Communicators and error handlers, as the layers below the API see them.
//
// A Comm is a group of job ranks plus a context id that keeps its traffic
// apart from every other communicator's. MPI_COMM_WORLD and MPI_COMM_SELF
// are built at MPI_Init; derived communicators arrive with point-to-point.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace loom {

// What an error handler does with an error raised on its communicator.
struct Errhandler {
  enum class Kind { kFatal, kAbort, kReturn };
  Kind kind;
  const char* name;  // "MPI_ERRORS_ARE_FATAL"
};

extern Errhandler gErrorsAreFatal;
extern Errhandler gErrorsAbort;
extern Errhandler gErrorsReturn;

class Comm {
 public:
  static constexpr uint32_t kMagic = 0x4c4f4f4d;  // "LOOM": catches stale handles

  // `worldRanks[i]` is the job rank of this communicator's rank i; `myRank`
  // is the caller's rank in it.
  Comm(uint32_t contextId, std::vector<int> worldRanks, int myRank, std::string name)
      : contextId_(contextId), worldRanks_(std::move(worldRanks)), rank_(myRank),
        name_(std::move(name)) {}

  bool valid() const { return magic_ == kMagic; }
  int rank() const { return rank_; }
  int size() const { return static_cast<int>(worldRanks_.size()); }
  int worldRank(int r) const { return worldRanks_[r]; }
  uint32_t contextId() const { return contextId_; }

  const std::string& name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }

  Errhandler* errhandler() const { return errhandler_; }
  void setErrhandler(Errhandler* eh) { errhandler_ = eh; }

 private:
  uint32_t magic_ = kMagic;
  uint32_t contextId_;
  std::vector<int> worldRanks_;
  int rank_;
  std::string name_;
  Errhandler* errhandler_ = &gErrorsAreFatal;
};

}  // namespace loom
