// MPI_Xxx_toint / MPI_Xxx_fromint (MPI 5.0 ABI): every handle as a C int, for
// languages and tools that store handles in integers (Fortran, mpi4py).
//
// Predefined handles are small integers in the ABI (all below 4096) and stay
// as they are. A handle Loom allocated is a pointer: the first toint of it
// gives it the next number from 4096 up, remembered for the life of the
// process, so toint of one handle always gives the same int and fromint of
// that int gives the handle back. A freed handle keeps its number (as Fortran
// handles of other MPIs do); fromint of a number never handed out gives an
// invalid handle that every call rejects.
#include <mpi.h>

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "api/runtime.h"

namespace loom::api {
namespace {

constexpr uintptr_t kPredefinedLimit = 4096;

class HandleNumbers {
 public:
  int toInt(const void* handle) {
    auto v = reinterpret_cast<uintptr_t>(handle);
    if (v < kPredefinedLimit) return static_cast<int>(v);
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, added] = numbers_.try_emplace(v, 0);
    if (added) {
      it->second = static_cast<int>(kPredefinedLimit + handles_.size());
      handles_.push_back(v);
    }
    return it->second;
  }
  void* fromInt(int number) {
    if (number >= 0 && static_cast<uintptr_t>(number) < kPredefinedLimit)
      return reinterpret_cast<void*>(static_cast<uintptr_t>(number));
    std::lock_guard<std::mutex> lock(mu_);
    size_t i = static_cast<size_t>(number) - kPredefinedLimit;
    // Never handed out: a value no handle check accepts (predefined range,
    // not any defined constant).
    if (number < 0 || i >= handles_.size()) return reinterpret_cast<void*>(kPredefinedLimit - 1);
    return reinterpret_cast<void*>(handles_[i]);
  }

 private:
  std::mutex mu_;
  std::unordered_map<uintptr_t, int> numbers_;
  std::vector<uintptr_t> handles_;
};

// One numbering for all kinds: a pointer names one object whatever its kind.
HandleNumbers& numbers() {
  static HandleNumbers n;
  return n;
}

}  // namespace
}  // namespace loom::api

#define LOOM_HANDLE_INT(Kind, Type)                                                  \
  extern "C" int PMPI_##Kind##_toint(Type handle) {                                  \
    return loom::api::numbers().toInt(handle);                                       \
  }                                                                                  \
  LOOM_WEAK_ALIAS(MPI_##Kind##_toint)                                                \
  extern "C" Type PMPI_##Kind##_fromint(int number) {                                \
    return static_cast<Type>(loom::api::numbers().fromInt(number));                  \
  }                                                                                  \
  LOOM_WEAK_ALIAS(MPI_##Kind##_fromint)

LOOM_HANDLE_INT(Comm, MPI_Comm)
LOOM_HANDLE_INT(Errhandler, MPI_Errhandler)
LOOM_HANDLE_INT(File, MPI_File)
LOOM_HANDLE_INT(Group, MPI_Group)
LOOM_HANDLE_INT(Info, MPI_Info)
LOOM_HANDLE_INT(Message, MPI_Message)
LOOM_HANDLE_INT(Op, MPI_Op)
LOOM_HANDLE_INT(Request, MPI_Request)
LOOM_HANDLE_INT(Session, MPI_Session)
LOOM_HANDLE_INT(Type, MPI_Datatype)
LOOM_HANDLE_INT(Win, MPI_Win)
