// Error classes, codes and strings: MPI_Error_class, MPI_Error_string, and
// the ones a program adds and removes (MPI_Add_error_class/_code/_string,
// MPI_Remove_error_class/_code/_string).
//
// Numbering. Every predefined code is its own class (core/status.cc). Added
// classes and codes share one space above MPI_ERR_LASTCODE: a new one takes
// the largest value in use plus one, so removing the newest one frees its
// value again and MPI_LASTUSEDCODE (the attribute of MPI_COMM_WORLD) is
// always the largest value in use. The numbers are per process: the
// standard does not make these calls collective, and the values may differ
// between processes.
//
// Errors are reported through MPI_COMM_WORLD's handler (no communicator is
// involved), with MPI_ERR_ARG for anything the standard calls erroneous:
// a class or code that was not added, a code of an unknown class, a string
// on a predefined code, removing a class that still has codes or a string,
// or a code that still has a string.
#include "api/error_codes.h"

#include <cstring>
#include <map>
#include <mutex>

#include "api/runtime.h"

using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;

namespace {

struct Added {
  int cls;           // itself for a class
  bool hasString = false;
  std::string text;  // MPI_Add_error_string's
};

struct Registry {
  std::mutex mu;
  std::map<int, Added> added;  // by value, ordered: the last is the largest
};

Registry& registry() {
  static Registry r;
  return r;
}

bool isPredefined(int code) { return loom::errorClassText(code) != nullptr; }

int lastUsedLocked(Registry& r) {
  return r.added.empty() ? MPI_ERR_LASTCODE : r.added.rbegin()->first;
}

void copyOut(const std::string& s, char* out, int* len) {
  size_t n = std::min(s.size(), static_cast<size_t>(MPI_MAX_ERROR_STRING - 1));
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
  *len = static_cast<int>(n);
}

// Adds a class (cls < 0) or a code of class `cls`; returns its value.
int addLocked(Registry& r, int cls) {
  const int v = lastUsedLocked(r) + 1;
  r.added[v] = Added{cls < 0 ? v : cls, false, {}};
  return v;
}

}  // namespace

namespace loom::api {

int errorClassOf(int code) {
  if (isPredefined(code)) return code;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.added.find(code);
  return it == r.added.end() ? -1 : it->second.cls;
}

bool errorString(int code, std::string* out) {
  if (isPredefined(code)) {
    *out = std::string(errorClassName(code)) + ": " + errorClassText(code);
    return true;
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.added.find(code);
  if (it == r.added.end()) return false;
  *out = it->second.text;
  return true;
}

std::string errorName(int code) {
  if (const char* n = errorClassName(code)) return n;
  const int cls = errorClassOf(code);
  if (cls < 0) return "MPI_ERR_UNKNOWN";
  if (cls == code) return "user error class " + std::to_string(code);
  return "user error code " + std::to_string(code) + " (class " +
         (isPredefined(cls) ? std::string(errorClassName(cls)) : std::to_string(cls)) + ")";
}

int lastUsedErrorCode() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return lastUsedLocked(r);
}

}  // namespace loom::api

// ---- lookups (callable before MPI_Init and after MPI_Finalize)

extern "C" int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  if (!string || !resultlen) return MPI_ERR_ARG;
  std::string s;
  if (!loom::api::errorString(errorcode, &s)) {
    copyOut("unknown error code " + std::to_string(errorcode), string, resultlen);
    return MPI_ERR_ARG;
  }
  copyOut(s, string, resultlen);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Error_string)

extern "C" int PMPI_Error_class(int errorcode, int* errorclass) {
  if (!errorclass) return MPI_ERR_ARG;
  const int cls = loom::api::errorClassOf(errorcode);
  if (cls < 0) return MPI_ERR_ARG;
  *errorclass = cls;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Error_class)

// ---- adding

extern "C" int PMPI_Add_error_class(int* errorclass) {
  if (!requireRunning("MPI_Add_error_class")) return MPI_ERR_OTHER;
  if (!errorclass)
    return raise(nullptr, errorf(MPI_ERR_ARG, "errorclass is NULL"), "MPI_Add_error_class");
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  *errorclass = addLocked(r, -1);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Add_error_class)

extern "C" int PMPI_Add_error_code(int errorclass, int* errorcode) {
  if (!requireRunning("MPI_Add_error_code")) return MPI_ERR_OTHER;
  const char* fn = "MPI_Add_error_code";
  if (!errorcode) return raise(nullptr, errorf(MPI_ERR_ARG, "errorcode is NULL"), fn);
  Registry& r = registry();
  std::unique_lock<std::mutex> lock(r.mu);
  auto it = r.added.find(errorclass);
  const bool isClass = errorclass != MPI_SUCCESS &&
                       (isPredefined(errorclass) ||
                        (it != r.added.end() && it->second.cls == errorclass));
  if (!isClass) {
    lock.unlock();
    return raise(nullptr, errorf(MPI_ERR_ARG, "%d is not an error class", errorclass), fn);
  }
  *errorcode = addLocked(r, errorclass);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Add_error_code)

extern "C" int PMPI_Add_error_string(int errorcode, const char* string) {
  if (!requireRunning("MPI_Add_error_string")) return MPI_ERR_OTHER;
  const char* fn = "MPI_Add_error_string";
  if (!string) return raise(nullptr, errorf(MPI_ERR_ARG, "string is NULL"), fn);
  if (std::strlen(string) >= MPI_MAX_ERROR_STRING)
    return raise(nullptr,
                 errorf(MPI_ERR_ARG, "the string is longer than MPI_MAX_ERROR_STRING - 1 (%d)",
                        MPI_MAX_ERROR_STRING - 1),
                 fn);
  if (errorcode <= MPI_ERR_LASTCODE)
    return raise(nullptr,
                 errorf(MPI_ERR_ARG, "%d is a predefined code: its string cannot change",
                        errorcode),
                 fn);
  Registry& r = registry();
  std::unique_lock<std::mutex> lock(r.mu);
  auto it = r.added.find(errorcode);
  if (it == r.added.end()) {
    lock.unlock();
    return raise(nullptr, errorf(MPI_ERR_ARG, "%d is not an added error code", errorcode), fn);
  }
  it->second.text = string;  // a second call replaces the first's
  it->second.hasString = true;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Add_error_string)

// ---- removing (MPI 4.1)

extern "C" int PMPI_Remove_error_class(int errorclass) {
  if (!requireRunning("MPI_Remove_error_class")) return MPI_ERR_OTHER;
  const char* fn = "MPI_Remove_error_class";
  Registry& r = registry();
  std::unique_lock<std::mutex> lock(r.mu);
  auto it = r.added.find(errorclass);
  if (it == r.added.end() || it->second.cls != errorclass) {
    lock.unlock();
    return raise(nullptr,
                 errorf(MPI_ERR_ARG, "%d is not an error class added by MPI_Add_error_class",
                        errorclass),
                 fn);
  }
  for (const auto& [v, a] : r.added)
    if (a.cls == errorclass && v != errorclass) {
      lock.unlock();
      return raise(nullptr,
                   errorf(MPI_ERR_ARG, "error class %d still has code %d (remove it first)",
                          errorclass, v),
                   fn);
    }
  if (it->second.hasString) {
    lock.unlock();
    return raise(nullptr,
                 errorf(MPI_ERR_ARG, "error class %d still has a string (remove it with "
                        "MPI_Remove_error_string first)", errorclass),
                 fn);
  }
  r.added.erase(it);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Remove_error_class)

extern "C" int PMPI_Remove_error_code(int errorcode) {
  if (!requireRunning("MPI_Remove_error_code")) return MPI_ERR_OTHER;
  const char* fn = "MPI_Remove_error_code";
  Registry& r = registry();
  std::unique_lock<std::mutex> lock(r.mu);
  auto it = r.added.find(errorcode);
  if (it == r.added.end() || it->second.cls == errorcode) {
    lock.unlock();
    return raise(nullptr,
                 errorf(MPI_ERR_ARG, "%d is not an error code added by MPI_Add_error_code",
                        errorcode),
                 fn);
  }
  if (it->second.hasString) {
    lock.unlock();
    return raise(nullptr,
                 errorf(MPI_ERR_ARG,
                        "error code %d still has a string (MPI_Remove_error_string first)",
                        errorcode),
                 fn);
  }
  r.added.erase(it);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Remove_error_code)

extern "C" int PMPI_Remove_error_string(int errorcode) {
  if (!requireRunning("MPI_Remove_error_string")) return MPI_ERR_OTHER;
  const char* fn = "MPI_Remove_error_string";
  Registry& r = registry();
  std::unique_lock<std::mutex> lock(r.mu);
  auto it = r.added.find(errorcode);
  if (it == r.added.end() || !it->second.hasString) {
    lock.unlock();
    return raise(nullptr,
                 errorf(MPI_ERR_ARG, "%d has no string added by MPI_Add_error_string",
                        errorcode),
                 fn);
  }
  it->second.hasString = false;
  it->second.text.clear();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Remove_error_string)
