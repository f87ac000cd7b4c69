// Status: the one way an error travels inside Loom.
//
// An internal function that can fail returns a [[nodiscard]] Status: an MPI
// error class (MPI_SUCCESS when fine) plus a message for the log. No exception
// crosses a layer or the C boundary; runtime/api turns a Status into an error
// code through the communicator's error handler.
#pragma once

#include <mpi.h>

#include <string>
#include <utility>

namespace loom {

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  Status(int errorClass, std::string message)
      : code_(errorClass),
        message_(errorClass == MPI_SUCCESS ? nullptr : new std::string(std::move(message))) {}
  // Success is one int and a null pointer: making, copying and dropping it
  // costs a few instructions on the hot paths that return it.
  Status(const Status& o)
      : code_(o.code_), message_(o.message_ ? new std::string(*o.message_) : nullptr) {}
  Status(Status&& o) noexcept : code_(o.code_), message_(o.message_) {
    o.code_ = MPI_SUCCESS;
    o.message_ = nullptr;
  }
  Status& operator=(const Status& o) {
    if (this != &o) *this = Status(o);
    return *this;
  }
  Status& operator=(Status&& o) noexcept {
    std::swap(code_, o.code_);
    std::swap(message_, o.message_);
    return *this;
  }
  ~Status() { delete message_; }

  static Status ok() { return Status(); }

  bool isOk() const { return code_ == MPI_SUCCESS; }
  explicit operator bool() const { return isOk(); }
  int code() const { return code_; }
  const std::string& message() const {
    static const std::string kNone;
    return message_ ? *message_ : kNone;
  }

 private:
  int code_ = MPI_SUCCESS;
  std::string* message_ = nullptr;  // owned; null for success
};

// Builds a failed Status with a printf-style message.
Status errorf(int errorClass, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// Fixed text of an error class ("invalid communicator"), or nullptr when the
// value is not a known class.
const char* errorClassText(int errorClass);

// Name of an error class ("MPI_ERR_COMM"), or nullptr when unknown.
const char* errorClassName(int errorClass);

}  // namespace loom

// Propagates a failed Status to the caller.
#define LOOM_TRY(expr)                  \
  do {                                  \
    ::loom::Status loom_st_ = (expr);   \
    if (!loom_st_.isOk()) return loom_st_; \
  } while (0)
