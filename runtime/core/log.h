// Log: one-line messages to stderr, prefixed with who wrote them.
//
// error/warn always print; debug(topic) prints when LOOM_DEBUG names the
// topic (or "all"). Lines are written with a single write(2) so lines from
// different ranks never interleave mid-line.
#pragma once

namespace loom::log {

// Sets the prefix: "loom: rank 3: " once the rank is known, "loomrun: " for
// the launcher, "loom: " by default.
void setRank(int rank);
void setProgram(const char* name);

// True when LOOM_DEBUG enables `topic` (read once, on first use). Without
// LOOM_DEBUG, after the first call: one load (collectives ask on every call).
bool topicEnabled(const char* topic);
extern bool gDebugOff;  // LOOM_DEBUG is unset or empty (set by topicEnabled)
inline bool enabled(const char* topic) { return !gDebugOff && topicEnabled(topic); }

void error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void debug(const char* topic, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace loom::log
