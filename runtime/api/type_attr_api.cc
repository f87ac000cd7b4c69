// Attribute caching on datatypes (MPI 5.0 §7.7.4): MPI_Type_create_keyval,
// MPI_Type_free_keyval, MPI_Type_set_attr/get_attr/delete_attr, and the
// hooks MPI_Type_dup (copy callbacks) and MPI_Type_free (delete callbacks)
// call. The keyval table and the callback rules are the communicators'
// (api/attr_store.h); there are no predefined datatype keyvals.
//
// Predefined datatypes may carry attributes too; they are never deleted
// (a predefined type is never freed).
#include "api/attr_store.h"
#include "api/handles_datatype.h"
#include "api/runtime.h"

using loom::Datatype;
using loom::errorf;
using loom::Status;
using loom::api::AttrKind;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toDatatype;

namespace {

using Store = loom::api::AttrStore<MPI_Datatype>;

// The datatype and keyval of a set/get/delete; nullptr after raising
// (code in *rc).
// `orInUse`: a keyval the user freed whose attributes remain will do (get,
// delete).
Datatype* attrTarget(const char* fn, MPI_Datatype datatype, int keyval, int* rc,
                     bool orInUse = false) {
  Datatype* t = toDatatype(datatype);
  if (!t) {
    *rc = raise(nullptr, errorf(MPI_ERR_TYPE, "datatype is not a valid datatype"), fn);
    return nullptr;
  }
  if (!loom::api::isKeyval(AttrKind::kType, keyval, orInUse)) {
    *rc = raise(nullptr, errorf(MPI_ERR_KEYVAL, "invalid datatype keyval %d", keyval), fn);
    return nullptr;
  }
  return t;
}

}  // namespace

namespace loom::api {

Status copyTypeAttributes(Datatype* from, MPI_Datatype fromHandle, Datatype* to) {
  return Store::copyAll(from->attributes(), fromHandle, to->attributes());
}

Status deleteTypeAttributes(Datatype* t, MPI_Datatype handle) {
  return Store::eraseAll(t->attributes(), handle);
}

}  // namespace loom::api

extern "C" int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                                       MPI_Type_delete_attr_function* type_delete_attr_fn,
                                       int* type_keyval, void* extra_state) {
  const char* fn = "MPI_Type_create_keyval";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!type_keyval) return raise(nullptr, errorf(MPI_ERR_ARG, "type_keyval is NULL"), fn);
  *type_keyval = loom::api::createKeyval(
      AttrKind::kType, reinterpret_cast<loom::api::AnyFn>(type_copy_attr_fn),
      reinterpret_cast<loom::api::AnyFn>(type_delete_attr_fn), extra_state);
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Type_create_keyval)

extern "C" int PMPI_Type_free_keyval(int* type_keyval) {
  const char* fn = "MPI_Type_free_keyval";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  if (!type_keyval) return raise(nullptr, errorf(MPI_ERR_ARG, "type_keyval is NULL"), fn);
  Status st = loom::api::freeKeyval(AttrKind::kType, *type_keyval);
  if (!st) return raise(nullptr, st, fn);
  *type_keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Type_free_keyval)

extern "C" int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
  const char* fn = "MPI_Type_set_attr";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  Datatype* t = attrTarget(fn, datatype, type_keyval, &rc);
  if (!t) return rc;
  Status st = Store::set(t->attributes(), datatype, type_keyval, attribute_val);
  return st ? MPI_SUCCESS : raise(nullptr, st, fn);
}
LOOM_WEAK_ALIAS(MPI_Type_set_attr)

extern "C" int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val,
                                  int* flag) {
  const char* fn = "MPI_Type_get_attr";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  Datatype* t = attrTarget(fn, datatype, type_keyval, &rc, true);
  if (!t) return rc;
  if (!attribute_val || !flag)
    return raise(nullptr, errorf(MPI_ERR_ARG, "attribute_val or flag is NULL"), fn);
  bool found = false;
  void* v = Store::get(t->attributes(), type_keyval, &found);
  *flag = found;
  if (found) *static_cast<void**>(attribute_val) = v;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Type_get_attr)

extern "C" int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
  const char* fn = "MPI_Type_delete_attr";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  int rc = MPI_SUCCESS;
  Datatype* t = attrTarget(fn, datatype, type_keyval, &rc, true);
  if (!t) return rc;
  Status st = Store::erase(t->attributes(), datatype, type_keyval);
  return st ? MPI_SUCCESS : raise(nullptr, st, fn);
}
LOOM_WEAK_ALIAS(MPI_Type_delete_attr)
