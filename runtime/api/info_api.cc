// Info objects (MPI 5.0 §10): create, set, get, delete, dup, free, the
// key enumeration, and MPI_INFO_ENV / MPI_Info_create_env.
//
// These calls may be made at any time, before MPI_Init and after
// MPI_Finalize as well (MPI 5.0 §11.2.1), so none of them requires the
// runtime. Keys are at most MPI_MAX_INFO_KEY-1 characters and values at most
// MPI_MAX_INFO_VAL-1, so every key fits a char[MPI_MAX_INFO_KEY] and every
// value a char[MPI_MAX_INFO_VAL].
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "api/info_internal.h"
#include "api/runtime.h"
#include "core/log.h"

using loom::errorf;
using loom::Info;
using loom::InfoEntries;
using loom::Status;
using loom::api::raiseNoObject;
using loom::api::rt;
using loom::api::toInfo;

namespace loom::api {
namespace {

// The command line as the kernel has it: argv[0], argv[1], ... (MPI_INFO_ENV
// is read by code that never saw main's arguments).
std::vector<std::string> procCmdline() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  size_t start = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i] == '\0') {
      args.push_back(all.substr(start, i - start));
      start = i + 1;
    }
  return args;
}

std::string joinArgs(const std::vector<std::string>& args, size_t from) {
  std::string s;
  for (size_t i = from; i < args.size(); ++i) {
    if (i > from) s += ' ';
    s += args[i];
  }
  // A value has at most MPI_MAX_INFO_VAL-1 characters.
  if (s.size() > MPI_MAX_INFO_VAL - 1) s.resize(MPI_MAX_INFO_VAL - 1);
  return s;
}

// The keys of MPI 5.0 §11.2.3 Loom can fill: how this process was started.
// "soft" and "file" never apply (loomrun has no such options); "maxprocs"
// and "thread_level" are known once the runtime is up.
InfoEntries environment(const std::vector<std::string>& args) {
  InfoEntries e;
  if (!args.empty()) {
    loom::infoSet(e, "command", args[0].substr(0, MPI_MAX_INFO_VAL - 1));
    loom::infoSet(e, "argv", joinArgs(args, 1));
  }
  auto& r = rt();
  bool up = r.phase == Phase::kRunning;
  // maxprocs: the processes the launch started, the same before MPI_Init,
  // while running and after MPI_Finalize: the job's size once known, else
  // what the launcher said (loomrun's LOOM_NP, Slurm's SLURM_NTASKS), else 1
  // for a process started without a PMIx launcher (a singleton).
  std::string maxprocs;
  if (up) {
    maxprocs = std::to_string(r.proc.size);
  } else if (const char* np = std::getenv("LOOM_NP"); np && *np) {
    maxprocs = np;
  } else if (const char* nt = std::getenv("SLURM_NTASKS"); nt && *nt && std::getenv("PMIX_RANK")) {
    maxprocs = nt;
  } else if (!std::getenv("PMIX_NAMESPACE")) {
    maxprocs = "1";
  }
  if (!maxprocs.empty()) loom::infoSet(e, "maxprocs", maxprocs);
  std::string host = up ? r.proc.hostname : std::string();
  if (host.empty()) {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) == 0) host = buf;
  }
  if (!host.empty()) loom::infoSet(e, "host", host);
  utsname u{};
  if (uname(&u) == 0) loom::infoSet(e, "arch", u.machine);
  char cwd[MPI_MAX_INFO_VAL];
  if (getcwd(cwd, sizeof cwd)) loom::infoSet(e, "wdir", cwd);
  // thread_level is the level requested at launch (MPI 5.0 §11.2.3); Loom's
  // launchers take no such request, so it is not set (the level MPI_Init
  // provided is MPI_Query_thread's answer).
  return e;
}

Info& envInfo() {
  static Info* env = new Info();  // never freed: MPI_INFO_ENV lives for ever
  return *env;
}

// Copies `s` into `out` (room for `cap` characters plus the NUL).
void copyTruncated(const std::string& s, char* out, size_t cap) {
  size_t n = std::min(s.size(), cap);
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
}

}  // namespace

Info* toInfo(MPI_Info handle) {
  if (handle == MPI_INFO_ENV) {
    Info& env = envInfo();
    // Rebuilt each time: maxprocs and thread_level appear once the runtime
    // is up. Calls are serialized (MPI_THREAD_SERIALIZED at most).
    InfoEntries fresh = environment(procCmdline());
    while (env.size() > 0) env.erase(env.entries().front().first);
    for (auto& [k, v] : fresh) env.set(k, v);
    return &env;
  }
  auto v = reinterpret_cast<uintptr_t>(handle);
  // Predefined handles (MPI_INFO_NULL among them) are small integers.
  if (v < 4096 || v % alignof(Info) != 0) return nullptr;
  auto* info = reinterpret_cast<Info*>(handle);
  return info->valid() ? info : nullptr;
}

MPI_Info toHandle(Info* info) {
  if (!info) return MPI_INFO_NULL;
  if (info == &envInfo()) return MPI_INFO_ENV;
  return reinterpret_cast<MPI_Info>(info);
}

MPI_Info newInfo(InfoEntries entries) { return toHandle(new Info(std::move(entries))); }

Status checkInfoKey(const char* key) {
  if (!key) return errorf(MPI_ERR_INFO_KEY, "key is NULL");
  size_t n = strnlen(key, MPI_MAX_INFO_KEY);
  if (n == 0) return errorf(MPI_ERR_INFO_KEY, "key is empty");
  if (n >= MPI_MAX_INFO_KEY)
    return errorf(MPI_ERR_INFO_KEY, "key is longer than %d characters (MPI_MAX_INFO_KEY - 1)",
                  MPI_MAX_INFO_KEY - 1);
  return Status::ok();
}

Status checkInfoValue(const char* value) {
  if (!value) return errorf(MPI_ERR_INFO_VALUE, "value is NULL");
  if (strnlen(value, MPI_MAX_INFO_VAL) >= MPI_MAX_INFO_VAL)
    return errorf(MPI_ERR_INFO_VALUE,
                  "value is longer than %d characters (MPI_MAX_INFO_VAL - 1)",
                  MPI_MAX_INFO_VAL - 1);
  return Status::ok();
}

int raiseNoObject(const Status& status, const char* function) {
  if (rt().worldActive && rt().phase == Phase::kRunning) return raise(nullptr, status, function);
  log::debug("err", "%s: %s (returned: no error handler applies before MPI_Init)", function,
             status.message().c_str());
  return status.code();
}

const char* threadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
  }
  return "unknown";
}

int threadLevelFromName(const char* name) {
  for (int level : {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                    MPI_THREAD_MULTIPLE})
    if (std::strcmp(name, threadLevelName(level)) == 0) return level;
  return -1;
}

}  // namespace loom::api

using loom::api::copyTruncated;

namespace {

int badInfo(const char* fn) {
  return raiseNoObject(errorf(MPI_ERR_INFO, "invalid info object"), fn);
}

// A user's info object that may be modified (not MPI_INFO_ENV).
Info* toMutableInfo(MPI_Info handle) {
  if (handle == MPI_INFO_ENV) return nullptr;
  return toInfo(handle);
}

}  // namespace

extern "C" int PMPI_Info_create(MPI_Info* info) {
  if (!info) return raiseNoObject(errorf(MPI_ERR_ARG, "info is NULL"), "MPI_Info_create");
  *info = loom::api::newInfo({});
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Info_create)

extern "C" int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  static const char* fn = "MPI_Info_set";
  Info* i = toMutableInfo(info);
  if (!i)
    return raiseNoObject(errorf(MPI_ERR_INFO, info == MPI_INFO_ENV ? "MPI_INFO_ENV cannot be "
                                "modified" : "invalid info object"), fn);
  Status st = loom::api::checkInfoKey(key);
  if (st.isOk()) st = loom::api::checkInfoValue(value);
  if (!st.isOk()) return raiseNoObject(st, fn);
  i->set(key, value);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Info_set)

extern "C" int PMPI_Info_delete(MPI_Info info, const char* key) {
  static const char* fn = "MPI_Info_delete";
  Info* i = toMutableInfo(info);
  if (!i)
    return raiseNoObject(errorf(MPI_ERR_INFO, info == MPI_INFO_ENV ? "MPI_INFO_ENV cannot be "
                                "modified" : "invalid info object"), fn);
  Status st = loom::api::checkInfoKey(key);
  if (!st.isOk()) return raiseNoObject(st, fn);
  if (!i->erase(key))
    return raiseNoObject(errorf(MPI_ERR_INFO_NOKEY, "key \"%s\" is not set", key), fn);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Info_delete)

// Deprecated since MPI 4.0 (MPI_Info_get_string replaces it), still
// provided. `valuelen` excludes the NUL: `value` has valuelen+1 bytes.
extern "C" int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value,
                             int* flag) {
  static const char* fn = "MPI_Info_get";
  Info* i = toInfo(info);
  if (!i) return badInfo(fn);
  Status st = loom::api::checkInfoKey(key);
  if (!st.isOk()) return raiseNoObject(st, fn);
  if (valuelen < 0)
    return raiseNoObject(errorf(MPI_ERR_ARG, "valuelen = %d is negative", valuelen), fn);
  if (!value || !flag) return raiseNoObject(errorf(MPI_ERR_ARG, "value or flag is NULL"), fn);
  const std::string* v = i->get(key);
  *flag = v != nullptr;
  if (v) copyTruncated(*v, value, static_cast<size_t>(valuelen));
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Info_get)

// `*buflen` in: the bytes at `value`; out: the value's length plus one. A
// value longer than the buffer is truncated (still NUL-terminated); with
// *buflen == 0 only the length is returned.
extern "C" int PMPI_Info_get_string(MPI_Info info, const char* key, int* buflen, char* value,
                                    int* flag) {
  static const char* fn = "MPI_Info_get_string";
  Info* i = toInfo(info);
  if (!i) return badInfo(fn);
  Status st = loom::api::checkInfoKey(key);
  if (!st.isOk()) return raiseNoObject(st, fn);
  if (!buflen || !flag) return raiseNoObject(errorf(MPI_ERR_ARG, "buflen or flag is NULL"), fn);
  if (*buflen < 0)
    return raiseNoObject(errorf(MPI_ERR_ARG, "*buflen = %d is negative", *buflen), fn);
  if (*buflen > 0 && !value)
    return raiseNoObject(errorf(MPI_ERR_ARG, "value is NULL and *buflen = %d", *buflen), fn);
  const std::string* v = i->get(key);
  *flag = v != nullptr;
  if (!v) return MPI_SUCCESS;
  if (*buflen > 0) copyTruncated(*v, value, static_cast<size_t>(*buflen - 1));
  *buflen = static_cast<int>(v->size()) + 1;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Info_get_string)

extern "C" int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  static const char* fn = "MPI_Info_get_valuelen";
  Info* i = toInfo(info);
  if (!i) return badInfo(fn);
  Status st = loom::api::checkInfoKey(key);
  if (!st.isOk()) return raiseNoObject(st, fn);
  if (!valuelen || !flag)
    return raiseNoObject(errorf(MPI_ERR_ARG, "valuelen or flag is NULL"), fn);
  const std::string* v = i->get(key);
  *flag = v != nullptr;
  if (v) *valuelen = static_cast<int>(v->size());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Info_get_valuelen)

extern "C" int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  static const char* fn = "MPI_Info_get_nkeys";
  Info* i = toInfo(info);
  if (!i) return badInfo(fn);
  if (!nkeys) return raiseNoObject(errorf(MPI_ERR_ARG, "nkeys is NULL"), fn);
  *nkeys = i->size();
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Info_get_nkeys)

extern "C" int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  static const char* fn = "MPI_Info_get_nthkey";
  Info* i = toInfo(info);
  if (!i) return badInfo(fn);
  if (!key) return raiseNoObject(errorf(MPI_ERR_ARG, "key is NULL"), fn);
  if (n < 0 || n >= i->size())
    return raiseNoObject(errorf(MPI_ERR_ARG, "n = %d is not in 0..%d (the number of keys - 1)", n,
                                i->size() - 1),
                         fn);
  copyTruncated(i->entries()[n].first, key, MPI_MAX_INFO_KEY - 1);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Info_get_nthkey)

extern "C" int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  static const char* fn = "MPI_Info_dup";
  Info* i = toInfo(info);
  if (!i) return badInfo(fn);
  if (!newinfo) return raiseNoObject(errorf(MPI_ERR_ARG, "newinfo is NULL"), fn);
  *newinfo = loom::api::newInfo(i->entries());
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Info_dup)

extern "C" int PMPI_Info_free(MPI_Info* info) {
  static const char* fn = "MPI_Info_free";
  if (!info) return raiseNoObject(errorf(MPI_ERR_ARG, "info is NULL"), fn);
  if (*info == MPI_INFO_ENV)
    return raiseNoObject(errorf(MPI_ERR_INFO, "MPI_INFO_ENV cannot be freed"), fn);
  Info* i = toInfo(*info);
  if (!i) return badInfo(fn);
  delete i;
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Info_free)

// The same keys as MPI_INFO_ENV, with the command line taken from argc/argv
// (as main received them) instead of the kernel's copy; argc == 0 or argv ==
// NULL falls back to the latter.
extern "C" int PMPI_Info_create_env(int argc, char* argv[], MPI_Info* info) {
  static const char* fn = "MPI_Info_create_env";
  if (!info) return raiseNoObject(errorf(MPI_ERR_ARG, "info is NULL"), fn);
  if (argc < 0) return raiseNoObject(errorf(MPI_ERR_ARG, "argc = %d is negative", argc), fn);
  std::vector<std::string> args;
  if (argc > 0 && argv) {
    for (int i = 0; i < argc; ++i) {
      if (!argv[i]) break;
      args.emplace_back(argv[i]);
    }
  } else {
    args = loom::api::procCmdline();
  }
  *info = loom::api::newInfo(loom::api::environment(args));
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Info_create_env)
