// Error codes and classes beyond the standard's: the ones a program adds
// with MPI_Add_error_class / MPI_Add_error_code (error_codes.cc), and the
// lookups every error path uses, which know both kinds.
#pragma once

#include <string>

namespace loom::api {

// The class of `code`: itself for a predefined class (every predefined code
// is its own class) or a user class, the class it was added to for a user
// code; -1 when `code` is neither predefined nor added.
int errorClassOf(int code);

// "MPI_ERR_COMM: invalid communicator" for a predefined class; the string
// the user attached (MPI_Add_error_string, "" when none) for an added code;
// false when `code` is unknown.
bool errorString(int code, std::string* out);

// For log lines: "MPI_ERR_COMM", or "user error code 16385 (class 16384)".
std::string errorName(int code);

// The largest error code or class in use (the MPI_LASTUSEDCODE attribute of
// MPI_COMM_WORLD): MPI_ERR_LASTCODE until the program adds one.
int lastUsedErrorCode();

}  // namespace loom::api
