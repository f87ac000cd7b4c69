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
      : code_(errorClass), message_(std::move(message)) {}

  static Status ok() { return Status(); }

  bool isOk() const { return code_ == MPI_SUCCESS; }
  explicit operator bool() const { return isOk(); }
  int code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  int code_ = MPI_SUCCESS;
  std::string message_;
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
