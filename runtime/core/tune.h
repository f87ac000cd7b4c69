// Machine-dependent protocol thresholds, measured on the machine.
//
// Which of shared memory's two large-message protocols is faster, the
// receiver's single CMA copy (process_vm_readv) or the two-copy pipeline
// through the ring, depends on the CPU: on AMD Zen 4 the pipeline wins at
// every size; on an Intel Xeon with 4 MiB of L2 per core CMA wins from 16 KiB
// to 1 MiB by up to 2.5x (even against the eager copy at 16 KiB) and loses
// from 2-4 MiB on. So the window of sizes CMA takes is measured, not fixed:
//
//   - The first job on a host with two ranks on a node and cores for both
//     (no valid cache yet) measures it in MPI_Init: local ranks 0 and 1
//     exchange a few messages of each size by each protocol (a few hundred
//     microseconds; p2p/tune_run.cc). `loom-info --tune` does it again, at
//     more sizes and repeats, and rewrites the cache.
//   - The result is cached per host in a text file a user can read and
//     delete (LOOM_TUNE_CACHE, default $XDG_CACHE_HOME/loom or
//     ~/.cache/loom, file tune-<host>.conf), keyed by the CPU model, the
//     number of CPUs, the kernel release and Loom's version; a file whose key
//     differs is stale and measured again; one that does not parse is
//     corrupt and measured again; where the file cannot be written, nothing
//     is measured and the built-in defaults hold.
//   - Environment variables (LOOM_SHM_CMA_MIN, LOOM_SHM_CMA_MAX) override
//     everything; LOOM_TUNE=0 turns cache and calibration off.
//
// Everything here but hostKey(), the file functions and resolve() is pure,
// so the decision is tested with fake measurements (tests/unit/tune_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace loom::tune {

inline constexpr size_t kNoMax = SIZE_MAX;

// Where a value in use came from.
enum class Source : uint8_t { kDefault, kCached, kMeasured, kEnv };
const char* sourceName(Source s);

// One measured size: the one-way time of a message of `bytes` read with CMA
// (`getUs`) and moved by the protocol it would otherwise take (`otherUs`:
// the eager copy at or below the eager limit, the copy pipeline above).
struct Sample {
  size_t bytes = 0;
  double getUs = 0;
  double otherUs = 0;
};

struct Values {
  size_t cmaMin = size_t{64} << 20;  // smallest message moved by a CMA read
  size_t cmaMax = kNoMax;            // largest one
  double rttUs = 0;                  // 8-byte round trip between the two ranks; 0: not measured
};

// The built-in defaults (the copy pipeline up to 64 MiB, as measured on
// AMD Zen 4); oversubscribed: CMA from 32 KiB (a read needs only the
// receiver to run; p2p/engine_setup.cc).
Values defaults(bool oversubscribed);

// CMA must beat the other protocol by this factor to take a size; by
// kClearWin at the largest sample to take sizes up to 4x above it.
inline constexpr double kMargin = 0.9;
inline constexpr double kClearWin = 0.5;

// The CMA window from samples in ascending size: from the smallest size at
// which CMA wins through the sizes that follow while it keeps winning. The
// window ends at the last winning sample; when that is the largest one, at
// 4x its size if CMA won there by kClearWin, and without a maximum if it was
// at least `openAbove` bytes. No winning sample: the window of the defaults.
Values decide(std::span<const Sample> samples, size_t openAbove = size_t{16} << 20);

// What keys a cache file: a different key is a different machine, kernel or
// Loom.
struct Key {
  std::string cpu;      // model name
  int cpus = 0;         // online CPUs
  std::string kernel;   // uname -r
  std::string version;  // Loom's
  bool operator==(const Key&) const = default;
};
Key hostKey();

struct Record {
  Key key;
  Values values;
  std::vector<Sample> samples;
  double costUs = 0;   // what the calibration took
  std::string when;    // UTC, ISO 8601
};

std::string format(const Record& r);
// False, with the reason, when `text` is not a complete record.
bool parse(std::string_view text, Record* out, std::string* why);

enum class Load : uint8_t { kOk, kMissing, kStale, kCorrupt };
const char* loadName(Load l);
Load load(const std::string& path, const Key& key, Record* out, std::string* why);
// Writes `r` to `path` atomically (temporary file, then rename), creating
// its directory; false with the reason when the place is read-only or full.
bool store(const std::string& path, const Record& r, std::string* why);
// Whether a file can be created in `path`'s directory (creating it).
bool writable(const std::string& path, std::string* why);

// The cache file of this host ("" when LOOM_TUNE=0 or no place is known).
std::string cachePath();

enum class Mode : uint8_t { kOff, kAuto, kRefresh };
Mode mode();  // LOOM_TUNE: 0, auto, refresh

// The values in use and where each came from: the environment, else the
// cache, else the defaults.
struct Resolved {
  Values values;
  Source cmaMin = Source::kDefault;
  Source cmaMax = Source::kDefault;
  Source rtt = Source::kDefault;
  std::string path;                 // the cache file ("" none)
  Load state = Load::kMissing;      // of that file
  std::string why;                  // why it was not used
  bool oversubscribed = false;
};
// `env`: LOOM_SHM_CMA_MIN/MAX as set ("auto" or a size); split out so that
// tests drive every branch without the process's environment.
Resolved resolve(bool oversubscribed, Mode mode, const std::string& path,
                 std::string_view envMin, std::string_view envMax);
Resolved resolve(bool oversubscribed);

// Whether this job should calibrate: auto with no valid cache (missing,
// stale or corrupt) in a writable place, or refresh.
bool shouldCalibrate(const Resolved& r, Mode mode, bool writablePlace);

// Applies a measurement: the values become measured unless the environment
// set them.
void adopt(Resolved* r, const Values& measured);

std::string sizeText(size_t bytes);  // 16K, 1M, "none" for kNoMax
// One line per value with its source (loom-info, LOOM_DEBUG=tune).
std::string describe(const Resolved& r);

}  // namespace loom::tune
