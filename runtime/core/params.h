// Params: every LOOM_* knob in one table {name, default, doc}.
//
// Values come from the environment (LOOM_FOO=value); anything unset takes the
// table's default. `loom-info` prints the table and man7/loom.7 documents it.
// Asking for a name that is not in the table is a programming error (it
// aborts in debug builds, so a typo cannot silently read a default).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace loom::params {

struct Param {
  const char* name;          // "LOOM_DEBUG"
  const char* defaultValue;  // as text, "" for none
  const char* doc;           // one line
};

// The whole table, in the order it is documented.
std::span<const Param> all();

// The table entry for `name`, or nullptr.
const Param* find(std::string_view name);

// The value in effect: the environment's if set, else the default.
std::string getString(std::string_view name);

// Numeric and boolean views. A malformed value logs a warning once and
// yields the default. Sizes accept k/m/g suffixes (powers of 1024).
int64_t getInt(std::string_view name);
bool getBool(std::string_view name);

// Parses "123", "4k", "2M" into bytes or a plain integer; false if malformed.
bool parseInt(std::string_view text, int64_t* out);
// Parses 1/0, yes/no, true/false, on/off; false if malformed.
bool parseBool(std::string_view text, bool* out);

}  // namespace loom::params
