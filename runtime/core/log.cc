#include "core/log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace loom::log {
namespace {

char gPrefix[64] = "loom: ";

void emit(const char* kind, const char* fmt, va_list ap) {
  char line[2048];
  int n = std::snprintf(line, sizeof line, "%s%s", gPrefix, kind);
  if (n < 0) return;
  int m = std::vsnprintf(line + n, sizeof line - n, fmt, ap);
  size_t len = m < 0 ? n : std::min(sizeof line - 2, static_cast<size_t>(n + m));
  line[len++] = '\n';
  ssize_t rc = ::write(STDERR_FILENO, line, len);
  (void)rc;
}

bool topicListed(const std::string& list, const char* topic) {
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    std::string item = list.substr(start, end - start);
    if (item == topic || item == "all") return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

void setRank(int rank) { std::snprintf(gPrefix, sizeof gPrefix, "loom: rank %d: ", rank); }
void setProgram(const char* name) { std::snprintf(gPrefix, sizeof gPrefix, "%s: ", name); }

bool gDebugOff = false;  // zero-initialised: known before any constructor asks

bool topicEnabled(const char* topic) {
  // Read LOOM_DEBUG directly (not through params) so params may log.
  static const std::string list = [] {
    const char* v = std::getenv("LOOM_DEBUG");
    return std::string(v ? v : "");
  }();
  if (list.empty()) gDebugOff = true;
  return !list.empty() && topicListed(list, topic);
}

void error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit("", fmt, ap);
  va_end(ap);
}

void warn(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit("warning: ", fmt, ap);
  va_end(ap);
}

void debug(const char* topic, const char* fmt, ...) {
  if (!enabled(topic)) return;
  char kind[32];
  std::snprintf(kind, sizeof kind, "[%s] ", topic);
  va_list ap;
  va_start(ap, fmt);
  emit(kind, fmt, ap);
  va_end(ap);
}

}  // namespace loom::log
