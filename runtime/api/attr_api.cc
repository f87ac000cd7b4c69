// Attribute caching on communicators (MPI 5.0 §7.7): keyvals with copy and
// delete callbacks, and the predefined attributes of MPI_COMM_WORLD.
//
// The keyval table and the callback rules are shared with datatypes
// (api/attr_store.h). The predefined keyvals (MPI_TAG_UB ...
// MPI_UNIVERSE_SIZE, 501..507 in the ABI) are answered from the runtime and
// cannot be set, deleted or freed. The deprecated MPI-1 names
// (MPI_Keyval_create/free, MPI_Attr_put/get/delete) are the same functions.
#include "api/attr_store.h"
#include "api/comm_internal.h"
#include "api/error_codes.h"
#include "api/runtime.h"
#include "api/status_util.h"

using loom::Comm;
using loom::errorf;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toComm;

namespace {

using Store = loom::api::AttrStore<MPI_Comm>;
using loom::api::AttrKind;

bool isPredefined(int keyval) {
  return keyval == MPI_TAG_UB || keyval == MPI_IO || keyval == MPI_HOST ||
         keyval == MPI_WTIME_IS_GLOBAL || keyval == MPI_APPNUM || keyval == MPI_LASTUSEDCODE ||
         keyval == MPI_UNIVERSE_SIZE;
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

}  // namespace

namespace loom::api {

int copyAttributes(Comm* from, MPI_Comm fromHandle, Comm* to) {
  return Store::copyAll(from->attributes(), fromHandle, to->attributes()).code();
}

int copyAttributesInto(Comm* from, MPI_Comm fromHandle, std::vector<Attribute>* to) {
  return Store::copyAll(from->attributes(), fromHandle, *to).code();
}

int deleteAttributeList(std::vector<Attribute>* attrs, MPI_Comm handle) {
  return Store::eraseAll(*attrs, handle).code();
}

int deleteAttributes(Comm* c, MPI_Comm handle) {
  return Store::eraseAll(c->attributes(), handle).code();
}

}  // namespace loom::api

// The bodies shared by the MPI-2 names and the deprecated MPI-1 ones
// (MPI_Keyval_create, MPI_Attr_put, ...), which differ only in name.
namespace {

int createKeyval(const char* fn, loom::api::AnyFn copy, loom::api::AnyFn del, int* keyval,
                 void* extra) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!keyval) return raise(nullptr, errorf(MPI_ERR_ARG, "keyval is NULL"), fn);
  *keyval = loom::api::createKeyval(AttrKind::kComm, copy, del, extra);
  return MPI_SUCCESS;
}

int freeKeyval(const char* fn, int* keyval) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!keyval) return raise(nullptr, errorf(MPI_ERR_ARG, "keyval is NULL"), fn);
  if (isPredefined(*keyval))
    return raise(nullptr, errorf(MPI_ERR_KEYVAL, "keyval %d is predefined", *keyval), fn);
  loom::Status st = loom::api::freeKeyval(AttrKind::kComm, *keyval);
  if (!st) return raise(nullptr, st, fn);
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

// The communicator of a set/delete, checked with its keyval; nullptr after
// raising (code in *rc).
Comm* writableAttr(const char* fn, MPI_Comm comm, int keyval, int* rc, bool orInUse = false) {
  Comm* c = toComm(comm);
  if (!c) {
    *rc = raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
    return nullptr;
  }
  if (isPredefined(keyval)) {
    *rc = raise(c, errorf(MPI_ERR_KEYVAL, "keyval %d is predefined and read-only", keyval), fn);
    return nullptr;
  }
  if (!loom::api::isKeyval(AttrKind::kComm, keyval, orInUse)) {
    *rc = raise(c, errorf(MPI_ERR_KEYVAL, "invalid communicator keyval %d", keyval), fn);
    return nullptr;
  }
  return c;
}

int setAttr(const char* fn, MPI_Comm comm, int keyval, void* value) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  Comm* c = writableAttr(fn, comm, keyval, &rc);
  if (!c) return rc;
  loom::Status st = Store::set(c->attributes(), comm, keyval, value);
  return st ? MPI_SUCCESS : raise(c, st, fn);
}

int getAttr(const char* fn, MPI_Comm comm, int keyval, void* value, int* flag) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Comm* c = toComm(comm);
  if (!c) return raise(nullptr, errorf(MPI_ERR_COMM, "invalid communicator"), fn);
  if (!value || !flag) return raise(c, errorf(MPI_ERR_ARG, "attribute_val or flag is NULL"), fn);
  if (int* v = predefinedValue(keyval)) {
    *static_cast<void**>(value) = v;
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (!loom::api::isKeyval(AttrKind::kComm, keyval, true))
    return raise(c, errorf(MPI_ERR_KEYVAL, "invalid communicator keyval %d", keyval), fn);
  bool found = false;
  void* v = Store::get(c->attributes(), keyval, &found);
  *flag = found;
  if (found) *static_cast<void**>(value) = v;
  return MPI_SUCCESS;
}

int deleteAttr(const char* fn, MPI_Comm comm, int keyval) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  Comm* c = writableAttr(fn, comm, keyval, &rc, true);
  if (!c) return rc;
  loom::Status st = Store::erase(c->attributes(), comm, keyval);
  return st ? MPI_SUCCESS : raise(c, st, fn);
}

}  // namespace

extern "C" int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                                       MPI_Comm_delete_attr_function* comm_delete_attr_fn,
                                       int* comm_keyval, void* extra_state) {
  return createKeyval("MPI_Comm_create_keyval",
                      reinterpret_cast<loom::api::AnyFn>(comm_copy_attr_fn),
                      reinterpret_cast<loom::api::AnyFn>(comm_delete_attr_fn), comm_keyval,
                      extra_state);
}
LOOM_WEAK_ALIAS(MPI_Comm_create_keyval)

extern "C" int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn,
                                  int* keyval, void* extra_state) {
  return createKeyval("MPI_Keyval_create", reinterpret_cast<loom::api::AnyFn>(copy_fn),
                      reinterpret_cast<loom::api::AnyFn>(delete_fn), keyval, extra_state);
}
LOOM_WEAK_ALIAS(MPI_Keyval_create)

extern "C" int PMPI_Comm_free_keyval(int* comm_keyval) {
  return freeKeyval("MPI_Comm_free_keyval", comm_keyval);
}
LOOM_WEAK_ALIAS(MPI_Comm_free_keyval)

extern "C" int PMPI_Keyval_free(int* keyval) { return freeKeyval("MPI_Keyval_free", keyval); }
LOOM_WEAK_ALIAS(MPI_Keyval_free)

extern "C" int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  return setAttr("MPI_Comm_set_attr", comm, comm_keyval, attribute_val);
}
LOOM_WEAK_ALIAS(MPI_Comm_set_attr)

extern "C" int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return setAttr("MPI_Attr_put", comm, keyval, attribute_val);
}
LOOM_WEAK_ALIAS(MPI_Attr_put)

extern "C" int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  return getAttr("MPI_Comm_get_attr", comm, comm_keyval, attribute_val, flag);
}
LOOM_WEAK_ALIAS(MPI_Comm_get_attr)

extern "C" int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return getAttr("MPI_Attr_get", comm, keyval, attribute_val, flag);
}
LOOM_WEAK_ALIAS(MPI_Attr_get)

extern "C" int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  return deleteAttr("MPI_Comm_delete_attr", comm, comm_keyval);
}
LOOM_WEAK_ALIAS(MPI_Comm_delete_attr)

extern "C" int PMPI_Attr_delete(MPI_Comm comm, int keyval) {
  return deleteAttr("MPI_Attr_delete", comm, keyval);
}
LOOM_WEAK_ALIAS(MPI_Attr_delete)
