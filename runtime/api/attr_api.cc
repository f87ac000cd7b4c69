// Attribute caching on communicators (MPI 5.0 §7.7): keyvals with copy and
// delete callbacks, and the predefined attributes of MPI_COMM_WORLD.
//
// A keyval is an int. The predefined ones (MPI_TAG_UB ... MPI_UNIVERSE_SIZE,
// 501..507 in the ABI) are answered from the runtime and cannot be set,
// deleted or freed; user keyvals count up from kFirstUserKeyval and are
// never reused within a run, so a stale keyval is always detected.
//
// A keyval is reference counted: the user's handle plus one per attribute
// stored with it. MPI_Comm_free_keyval drops the user's reference; the
// callbacks stay reachable until the last attribute using them is deleted,
// as the standard requires.
#include <map>

#include "api/comm_internal.h"
#include "api/error_codes.h"
#include "api/runtime.h"
#include "api/status_util.h"

using loom::Attribute;
using loom::Comm;
using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toComm;

namespace {

constexpr int kFirstUserKeyval = 1024;

struct Keyval {
  MPI_Comm_copy_attr_function* copy;
  MPI_Comm_delete_attr_function* del;
  void* extra;
  int refs = 1;
  bool userFreed = false;
};

std::map<int, Keyval>& keyvals() {
  static std::map<int, Keyval> table;
  return table;
}
int gNextKeyval = kFirstUserKeyval;

bool isPredefined(int keyval) {
  return keyval == MPI_TAG_UB || keyval == MPI_IO || keyval == MPI_HOST ||
         keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_APPNUM || keyval == MPI_LASTUSEDCODE ||
         keyval == MPI_UNIVERSE_SIZE;
}

// A user keyval the caller may still use, or nullptr.
Keyval* findKeyval(int keyval) {
  auto it = keyvals().find(keyval);
  if (it == keyvals().end() || it->second.userFreed) return nullptr;
  return &it->second;
}

void dropKeyvalRef(int keyval) {
  auto it = keyvals().find(keyval);
  if (it != keyvals().end() && --it->second.refs == 0) keyvals().erase(it);
}

// The value of a predefined attribute: the standard hands out a pointer to
// an int, which must stay valid, hence the statics.
int* predefinedValue(int keyval) {
  static int tagUb, host, io, wtimeGlobal, appnum, lastCode, universe;
  auto& r = loom::api::rt();
  switch (keyval) {
    case MPI_TAG_UB:
      tagUb = loom::kTagUb;
      return &tagUb;  // 2^30 - 1
    case MPI_HOST:
      host = MPI_PROC_NULL;
      return &host;
    case MPI_IO:
      io = MPI_ANY_SOURCE;
      return &io;  // every process can do I/O
    case MPI_WTIME_IS_GLOBAL:
      wtimeGlobal = 0;
      return &wtimeGlobal;
    case MPI_APPNUM:
      appnum = r.proc.appNum;
      return &appnum;
    case MPI_LASTUSEDCODE:
      lastCode = loom::api::lastUsedErrorCode();  // grows with MPI_Add_error_class/code
      return &lastCode;
    case MPI_UNIVERSE_SIZE:
      universe = r.proc.universeSize;
      return &universe;
    default:
      return nullptr;
  }
}

// Runs the delete callback of attribute `a` (nothing for
// MPI_COMM_NULL_DELETE_FN); returns the callback's code.
int callDelete(MPI_Comm handle, const Attribute& a) {
  auto it = keyvals().find(a.keyval);
  if (it == keyvals().end() || it->second.del == MPI_COMM_NULL_DELETE_FN) return MPI_SUCCESS;
  return it->second.del(handle, a.keyval, a.value, it->second.extra);
}

Attribute* findAttr(Comm* c, int keyval) {
  for (auto& a : c->attributes())
    if (a.keyval == keyval) return &a;
  return nullptr;
}

void eraseAttr(Comm* c, int keyval) {
  auto& v = c->attributes();
  for (auto it = v.begin(); it != v.end(); ++it)
    if (it->keyval == keyval) {
      v.erase(it);
      dropKeyvalRef(keyval);
      return;
    }
}

int callbackFailed(Comm* c, int rc, const char* function, const char* which, int keyval) {
  return raise(c, errorf(rc, "the %s callback of keyval %d returned %d", which, keyval, rc),
               function);
}

}  // namespace

namespace loom::api {

int copyAttributes(Comm* from, MPI_Comm fromHandle, Comm* to) {
  // A snapshot: a copy callback may set attributes on the parent.
  std::vector<Attribute> attrs = from->attributes();
  for (const Attribute& a : attrs) {
    auto it = keyvals().find(a.keyval);
    if (it == keyvals().end()) continue;
    Keyval& kv = it->second;
    void* out = nullptr;
    int flag = 0;
    if (kv.copy == MPI_COMM_NULL_COPY_FN) continue;
    if (kv.copy == MPI_COMM_DUP_FN) {
      out = a.value;
      flag = 1;
    } else {
      int rc = kv.copy(fromHandle, a.keyval, kv.extra, a.value, &out, &flag);
      if (rc != MPI_SUCCESS) return rc;
    }
    if (flag) {
      to->attributes().push_back({a.keyval, out});
      ++kv.refs;
    }
  }
  return MPI_SUCCESS;
}

int deleteAttributes(Comm* c, MPI_Comm handle) {
  auto& v = c->attributes();
  while (!v.empty()) {
    Attribute a = v.back();
    int rc = callDelete(handle, a);
    if (rc != MPI_SUCCESS) return rc;
    eraseAttr(c, a.keyval);  // by key: the callback may have changed the list
  }
  return MPI_SUCCESS;
}

}  // namespace loom::api

extern "C" int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                                       MPI_Comm_delete_attr_function* comm_delete_attr_fn,
                                       int* comm_keyval, void* extra_state) {
  static const char* fn = "MPI_Comm_create_keyval";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!comm_keyval) return raise(nullptr, errorf(MPI_ERR_ARG, "comm_keyval is NULL"), fn);
  int k = gNextKeyval++;
  keyvals().emplace(k, Keyval{comm_copy_attr_fn, comm_delete_attr_fn, extra_state});
  *comm_keyval = k;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_create_keyval)

extern "C" int PMPI_Comm_free_keyval(int* comm_keyval) {
  static const char* fn = "MPI_Comm_free_keyval";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!comm_keyval) return raise(nullptr, errorf(MPI_ERR_ARG, "comm_keyval is NULL"), fn);
  int k = *comm_keyval;
  if (isPredefined(k))
    return raise(nullptr, errorf(MPI_ERR_KEYVAL, "keyval %d is predefined", k), fn);
  Keyval* kv = findKeyval(k);
  if (!kv) return raise(nullptr, errorf(MPI_ERR_KEYVAL, "invalid keyval %d", k), fn);
  kv->userFreed = true;
  dropKeyvalRef(k);
  *comm_keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_free_keyval)

extern "C" int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  static const char* fn = "MPI_Comm_set_attr";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (isPredefined(comm_keyval))
    return raise(c, errorf(MPI_ERR_KEYVAL, "keyval %d is predefined and read-only", comm_keyval),
                 fn);
  Keyval* kv = findKeyval(comm_keyval);
  if (!kv) return raise(c, errorf(MPI_ERR_KEYVAL, "invalid keyval %d", comm_keyval), fn);
  if (Attribute* a = findAttr(c, comm_keyval)) {
    // Replacing a value deletes the old one first, with its callback.
    int rc = callDelete(comm, *a);
    if (rc != MPI_SUCCESS) return callbackFailed(c, rc, fn, "delete", comm_keyval);
    if ((a = findAttr(c, comm_keyval))) {
      a->value = attribute_val;
      return MPI_SUCCESS;
    }
  }
  c->attributes().push_back({comm_keyval, attribute_val});
  ++kv->refs;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_set_attr)

extern "C" int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  static const char* fn = "MPI_Comm_get_attr";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (!attribute_val || !flag)
    return raise(c, errorf(MPI_ERR_ARG, "attribute_val or flag is NULL"), fn);
  if (int* v = predefinedValue(comm_keyval)) {
    *static_cast<void**>(attribute_val) = v;
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (!findKeyval(comm_keyval))
    return raise(c, errorf(MPI_ERR_KEYVAL, "invalid keyval %d", comm_keyval), fn);
  Attribute* a = findAttr(c, comm_keyval);
  *flag = a != nullptr;
  if (a) *static_cast<void**>(attribute_val) = a->value;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_get_attr)

extern "C" int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  static const char* fn = "MPI_Comm_delete_attr";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (isPredefined(comm_keyval))
    return raise(c, errorf(MPI_ERR_KEYVAL, "keyval %d is predefined and read-only", comm_keyval),
                 fn);
  if (!findKeyval(comm_keyval))
    return raise(c, errorf(MPI_ERR_KEYVAL, "invalid keyval %d", comm_keyval), fn);
  Attribute* a = findAttr(c, comm_keyval);
  if (!a) return MPI_SUCCESS;  // nothing cached: nothing to do
  int rc = callDelete(comm, *a);
  if (rc != MPI_SUCCESS) return callbackFailed(c, rc, fn, "delete", comm_keyval);
  eraseAttr(c, comm_keyval);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Comm_delete_attr)
