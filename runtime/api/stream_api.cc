// Stream objects (mpi-ext.h): MPIX_Stream_create, MPIX_Stream_free,
// MPIX_Stream_comm_create, MPIX_Comm_get_stream, MPIX_Stream_progress and
// MPIX_Info_set_hex, with MPICH's names, signatures and info keys; and the
// mock device's stream hooks for tests (loom_mock_stream_*).
//
// A stream is a StreamObj (stream_internal.h); its MPIX_Stream handle is
// its address, checked against the set of live streams before any use, so
// a stale or garbage handle is MPI_ERR_ARG, never a dereference.
//
// A stream communicator is a duplicate of its parent carrying the stream
// in an internal attribute (copy: none, so MPI_Comm_dup of it is an
// ordinary communicator; delete: the stream's count of communicators
// drops). MPIX_Stream_free refuses a stream still attached to one.
//
// Info keys (MPICH's): "type" = "cudaStream_t" and "value" = the stream's
// bytes in hex (MPIX_Info_set_hex writes them). An info with neither key,
// or MPI_INFO_NULL, makes a host stream.
#include <mpi-ext.h>
#include <mpi.h>

#include <cctype>
#include <cstring>
#include <set>
#include <string>

#include "api/comm_internal.h"
#include "api/info_internal.h"
#include "api/runtime.h"
#include "api/stream_internal.h"
#include "core/device_stream_impl.h"
#include "core/log.h"
#include "core/progress.h"
#include "core/progress_async.h"

using loom::Comm;
using loom::errorf;
using loom::Status;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::stream::StreamObj;

namespace loom::api::stream {

namespace {

std::set<StreamObj*>& liveStreams() {
  static auto* s = new std::set<StreamObj*>();
  return *s;
}

int deleteStreamAttr(MPI_Comm, int, void* value, void*) {
  auto* s = static_cast<StreamObj*>(value);
  if (liveStreams().count(s)) --s->comms;
  return MPI_SUCCESS;
}

int streamKeyval() {
  static int k = [] {
    int kv = MPI_KEYVAL_INVALID;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deleteStreamAttr, &kv, nullptr);
    return kv;
  }();
  return k;
}

}  // namespace

StreamObj* toStream(MPIX_Stream h) {
  auto* s = reinterpret_cast<StreamObj*>(h);
  if (!s || !liveStreams().count(s)) return nullptr;
  return s->magic == StreamObj::kMagic ? s : nullptr;
}

StreamObj* streamOf(Comm* c) {
  const int kv = streamKeyval();
  for (const loom::Attribute& a : c->attributes())
    if (a.keyval == kv) return toStream(static_cast<MPIX_Stream>(a.value));
  return nullptr;
}

}  // namespace loom::api::stream

namespace {

namespace st = loom::api::stream;

int raiseWorld(const Status& s, const char* fn) {
  return raise(nullptr, s, fn);
}

// MPICH's hex encoding: two digits per byte, in memory order. Decoding
// also takes MPICH's newer "[N]" for a run of N zero bytes.
std::string hexEncode(const unsigned char* p, int n) {
  static const char kDigits[] = "0123456789ABCDEF";
  std::string s;
  s.reserve(static_cast<size_t>(n) * 2);
  for (int i = 0; i < n; ++i) {
    s.push_back(kDigits[p[i] >> 4]);
    s.push_back(kDigits[p[i] & 15]);
  }
  return s;
}

bool hexDecode(const std::string& s, unsigned char* out, size_t n) {
  size_t got = 0;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '[') {
      size_t close = s.find(']', i);
      if (close == std::string::npos || close == i + 1) return false;
      size_t zeros = 0;
      for (size_t k = i + 1; k < close; ++k) {
        if (!std::isdigit(static_cast<unsigned char>(s[k]))) return false;
        zeros = zeros * 10 + static_cast<size_t>(s[k] - '0');
        if (zeros > n) return false;
      }
      if (got + zeros > n) return false;
      std::memset(out + got, 0, zeros);
      got += zeros;
      i = close + 1;
      continue;
    }
    if (i + 1 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i])) ||
        !std::isxdigit(static_cast<unsigned char>(s[i + 1])) || got >= n)
      return false;
    auto digit = [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10;
    };
    out[got++] = static_cast<unsigned char>(digit(s[i]) * 16 + digit(s[i + 1]));
    i += 2;
  }
  return got == n;
}

// What an info says about the stream to make: host (no keys), or a
// cudaStream_t's bytes.
Status streamFromInfo(MPI_Info info, bool* gpu, uint64_t* value) {
  *gpu = false;
  *value = 0;
  if (info == MPI_INFO_NULL) return Status::ok();
  loom::Info* i = loom::api::toInfo(info);
  if (!i) return errorf(MPI_ERR_INFO, "invalid info object");
  const std::string* type = i->get("type");
  const std::string* val = i->get("value");
  if (!type && !val) return Status::ok();
  if (!type)
    return errorf(MPI_ERR_INFO_NOKEY,
                  "the info has a \"value\" but no \"type\" (\"cudaStream_t\")");
  if (*type != "cudaStream_t")
    return errorf(MPI_ERR_INFO_VALUE,
                  "type \"%s\" is not a stream type Loom knows (\"cudaStream_t\"; no type at all "
                  "makes a host stream)",
                  type->c_str());
  if (!val)
    return errorf(MPI_ERR_INFO_NOKEY,
                  "type \"cudaStream_t\" without a \"value\" (the stream, set with "
                  "MPIX_Info_set_hex)");
  unsigned char bytes[sizeof(uint64_t)];
  if (!hexDecode(*val, bytes, sizeof bytes))
    return errorf(MPI_ERR_INFO_VALUE,
                  "value \"%s\" is not a cudaStream_t in hex (%zu bytes, as MPIX_Info_set_hex "
                  "writes it)",
                  val->c_str(), sizeof bytes);
  std::memcpy(value, bytes, sizeof bytes);
  *gpu = true;
  return Status::ok();
}

int streamCreate(MPI_Info info, MPIX_Stream* stream) {
  static const char* fn = "MPIX_Stream_create";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!stream) return raiseWorld(errorf(MPI_ERR_ARG, "stream is NULL"), fn);
  bool gpu = false;
  uint64_t value = 0;
  Status s = streamFromInfo(info, &gpu, &value);
  if (!s.isOk()) return raiseWorld(s, fn);
  auto* obj = new StreamObj;
  obj->gpu = gpu;
  obj->value = value;
  if (gpu) {
    s = loom::device::userStream(value, &obj->dev);
    if (s.isOk()) {
      // Enqueued operations must move while the program is outside MPI
      // (in cudaStreamSynchronize, say): Loom's progress thread does that.
      loom::progress::asyncRetain();
      if (!loom::progress::asyncOn()) {
        loom::progress::asyncRelease();
        s = errorf(MPI_ERR_UNSUPPORTED_OPERATION,
                   "a GPU stream needs Loom's progress thread, and LOOM_ASYNC_PROGRESS=0 "
                   "turned it off");
      }
    }
    if (s.isOk()) {
      s = loom::device::gateCreate(&obj->gate);
      if (!s.isOk()) loom::progress::asyncRelease();
    }
    if (!s.isOk()) {
      delete obj;
      return raiseWorld(s, fn);
    }
  }
  st::liveStreams().insert(obj);
  if (gpu) st::streamAdded(obj);
  loom::log::debug("stream", "%s stream %p made (0x%llx)", gpu ? "gpu" : "host",
                   static_cast<void*>(obj), static_cast<unsigned long long>(value));
  *stream = st::toHandle(obj);
  return MPI_SUCCESS;
}

int streamFree(MPIX_Stream* stream) {
  static const char* fn = "MPIX_Stream_free";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!stream) return raiseWorld(errorf(MPI_ERR_ARG, "stream is NULL"), fn);
  StreamObj* s = st::toStream(*stream);
  if (!s)
    return raiseWorld(
        errorf(MPI_ERR_ARG, *stream == MPIX_STREAM_NULL ? "the stream is MPIX_STREAM_NULL"
                                                        : "not a stream (freed already?)"),
        fn);
  if (s->comms > 0)
    return raiseWorld(errorf(MPI_ERR_OTHER,
                             "the stream is still attached to %d communicator%s: free %s "
                             "first (MPI_Comm_free)",
                             s->comms, s->comms == 1 ? "" : "s", s->comms == 1 ? "it" : "them"),
                      fn);
  if (s->gpu && st::unwaited(s) > 0)
    return raiseWorld(errorf(MPI_ERR_OTHER,
                             "%d request%s of MPIX_Isend_enqueue/MPIX_Irecv_enqueue on the stream "
                             "%s not been waited for (MPIX_Wait_enqueue) or freed",
                             st::unwaited(s), st::unwaited(s) == 1 ? "" : "s",
                             st::unwaited(s) == 1 ? "has" : "have"),
                      fn);
  if (s->gpu) {
    // Operations still queued go to the end first: the stream reaches them
    // by itself (the GPU works on), the progress thread runs them.
    st::drain(s);
    st::streamRemoved(s);
    loom::progress::asyncRelease();
  }
  st::liveStreams().erase(s);
  s->magic = 0;
  delete s;
  *stream = MPIX_STREAM_NULL;
  return MPI_SUCCESS;
}

int streamCommCreate(MPI_Comm comm, MPIX_Stream stream, MPI_Comm* newcomm) {
  static const char* fn = "MPIX_Stream_comm_create";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = loom::api::toComm(comm);
  if (!c) return raiseWorld(errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (!newcomm) return raise(c, errorf(MPI_ERR_ARG, "newcomm is NULL"), fn);
  StreamObj* s = nullptr;
  if (stream != MPIX_STREAM_NULL) {
    s = st::toStream(stream);
    if (!s) return raise(c, errorf(MPI_ERR_ARG, "not a stream (freed already?)"), fn);
  }
  if (c->isInter())
    return raise(c,
                 errorf(MPI_ERR_COMM,
                        "an intercommunicator: stream communicators are "
                        "intracommunicators"),
                 fn);
  int rc = PMPI_Comm_dup(comm, newcomm);
  if (rc != MPI_SUCCESS) return rc;
  if (s) {
    rc = PMPI_Comm_set_attr(*newcomm, st::streamKeyval(), s);
    if (rc != MPI_SUCCESS) return rc;
    ++s->comms;
  }
  return MPI_SUCCESS;
}

int commGetStream(MPI_Comm comm, int idx, MPIX_Stream* stream) {
  static const char* fn = "MPIX_Comm_get_stream";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = loom::api::toComm(comm);
  if (!c) return raiseWorld(errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (!stream) return raise(c, errorf(MPI_ERR_ARG, "stream is NULL"), fn);
  if (idx != 0)
    return raise(c,
                 errorf(MPI_ERR_ARG,
                        "idx=%d: a stream communicator has one local stream, "
                        "index 0",
                        idx),
                 fn);
  StreamObj* s = st::streamOf(c);
  *stream = s ? st::toHandle(s) : MPIX_STREAM_NULL;
  return MPI_SUCCESS;
}

int streamProgress(MPIX_Stream stream) {
  static const char* fn = "MPIX_Stream_progress";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (stream != MPIX_STREAM_NULL && !st::toStream(stream))
    return raiseWorld(errorf(MPI_ERR_ARG, "not a stream (freed already?)"), fn);
  loom::progress::testPoll();
  return MPI_SUCCESS;
}

int infoSetHex(MPI_Info info, const char* key, const void* value, int valueSize) {
  static const char* fn = "MPIX_Info_set_hex";
  using loom::api::raiseNoObject;
  if (info == MPI_INFO_NULL || info == MPI_INFO_ENV || !loom::api::toInfo(info))
    return raiseNoObject(
        errorf(MPI_ERR_INFO,
               info == MPI_INFO_ENV ? "MPI_INFO_ENV cannot be modified" : "invalid info object"),
        fn);
  Status s = loom::api::checkInfoKey(key);
  if (!s.isOk()) return raiseNoObject(s, fn);
  if (valueSize < 0) return raiseNoObject(errorf(MPI_ERR_ARG, "value_size=%d < 0", valueSize), fn);
  if (!value && valueSize > 0) return raiseNoObject(errorf(MPI_ERR_ARG, "value is NULL"), fn);
  if (valueSize >= MPI_MAX_INFO_VAL / 2)
    return raiseNoObject(errorf(MPI_ERR_INFO_VALUE,
                                "%d bytes take %d hex digits, more than an info value holds "
                                "(MPI_MAX_INFO_VAL %d)",
                                valueSize, 2 * valueSize, MPI_MAX_INFO_VAL),
                         fn);
  const std::string hex = hexEncode(static_cast<const unsigned char*>(value), valueSize);
  loom::api::toInfo(info)->set(key, hex);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPIX_Stream_create(MPI_Info info, MPIX_Stream* stream) {
  return st::locked([&] { return streamCreate(info, stream); });
}
LOOM_WEAK_ALIAS(MPIX_Stream_create)

extern "C" int PMPIX_Stream_free(MPIX_Stream* stream) {
  return st::locked([&] { return streamFree(stream); });
}
LOOM_WEAK_ALIAS(MPIX_Stream_free)

extern "C" int PMPIX_Stream_comm_create(MPI_Comm comm, MPIX_Stream stream, MPI_Comm* newcomm) {
  return st::locked([&] { return streamCommCreate(comm, stream, newcomm); });
}
LOOM_WEAK_ALIAS(MPIX_Stream_comm_create)

extern "C" int PMPIX_Comm_get_stream(MPI_Comm comm, int idx, MPIX_Stream* stream) {
  return st::locked([&] { return commGetStream(comm, idx, stream); });
}
LOOM_WEAK_ALIAS(MPIX_Comm_get_stream)

extern "C" int PMPIX_Stream_progress(MPIX_Stream stream) {
  return st::locked([&] { return streamProgress(stream); });
}
LOOM_WEAK_ALIAS(MPIX_Stream_progress)

extern "C" int PMPIX_Info_set_hex(MPI_Info info, const char* key, const void* value,
                                  int value_size) {
  return st::locked([&] { return infoSetHex(info, key, value, value_size); });
}
LOOM_WEAK_ALIAS(MPIX_Info_set_hex)

// ---- The mock device's streams, for tests (tests/gpu/loom_mock_stream.h) ----
// Like loom_mock_device_*: NULL / no-ops unless LOOM_DEVICE_MOCK=1. A mock
// stream stands for a cudaStream_t: its handle goes into the info's
// "value" with MPIX_Info_set_hex.

namespace {
bool mockOn() {
  loom::device::init();
  return loom::device::backend() == loom::device::Backend::kMock;
}
}  // namespace

extern "C" __attribute__((visibility("default"))) void* loom_mock_stream_create(void) {
  return mockOn() ? loom::device::mockstream::create() : nullptr;
}

extern "C" __attribute__((visibility("default"))) void loom_mock_stream_destroy(void* s) {
  if (mockOn() && loom::device::mockstream::isStream(s)) loom::device::mockstream::destroy(s);
}

extern "C" __attribute__((visibility("default"))) int loom_mock_stream_synchronize(void* s) {
  if (!mockOn() || !loom::device::mockstream::isStream(s)) return -1;
  Status st = loom::device::mockstream::synchronize(s);
  if (st.isOk()) return 0;
  loom::log::error("loom_mock_stream_synchronize: %s", st.message().c_str());
  return -1;
}

extern "C" __attribute__((visibility("default"))) int loom_mock_stream_memcpy_async(void* dst,
                                                                                    const void* src,
                                                                                    size_t bytes,
                                                                                    void* s) {
  if (!mockOn() || !loom::device::mockstream::isStream(s)) return -1;
  return loom::device::mockstream::copyAsync(s, dst, src, bytes).isOk() ? 0 : -1;
}

extern "C" __attribute__((visibility("default"))) int loom_mock_stream_launch(void* s,
                                                                              void (*fn)(void*),
                                                                              void* arg) {
  if (!mockOn() || !loom::device::mockstream::isStream(s) || !fn) return -1;
  loom::device::mockstream::launch(s, fn, arg);
  return 0;
}
