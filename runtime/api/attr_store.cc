// The keyval table and the attribute-list operations (see attr_store.h).
#include "api/attr_store.h"

#include <map>

namespace loom::api {

namespace {

struct Keyval {
  AttrKind kind;
  AnyFn copy;
  AnyFn del;
  void* extra;
  int refs = 1;  // the user's handle, plus one per stored attribute
  bool userFreed = false;
};

std::map<int, Keyval>& table() {
  static std::map<int, Keyval> t;
  return t;
}
int gNextKeyval = kFirstUserKeyval;

// A keyval entry, freed by the user or not (its attributes still need it).
Keyval* entry(int keyval) {
  auto it = table().find(keyval);
  return it == table().end() ? nullptr : &it->second;
}

void dropRef(int keyval) {
  auto it = table().find(keyval);
  if (it != table().end() && --it->second.refs == 0) table().erase(it);
}

Attribute* find(std::vector<Attribute>& attrs, int keyval) {
  for (Attribute& a : attrs)
    if (a.keyval == keyval) return &a;
  return nullptr;
}

// Removes the attribute of `keyval` (by key: a callback may have changed
// the list) and its reference on the keyval.
void remove(std::vector<Attribute>& attrs, int keyval) {
  for (auto it = attrs.begin(); it != attrs.end(); ++it)
    if (it->keyval == keyval) {
      attrs.erase(it);
      dropRef(keyval);
      return;
    }
}

Status failed(int rc, const char* which, int keyval) {
  return errorf(rc, "the %s callback of keyval %d returned %d", which, keyval, rc);
}

constexpr AnyFn kNullFn = nullptr;
const AnyFn kDupFn = reinterpret_cast<AnyFn>(uintptr_t{1});

template <class H>
Status callDelete(H handle, const Attribute& a) {
  Keyval* kv = entry(a.keyval);
  if (!kv || kv->del == kNullFn) return Status::ok();
  using Fn = int(H, int, void*, void*);
  int rc = reinterpret_cast<Fn*>(kv->del)(handle, a.keyval, a.value, kv->extra);
  return rc == MPI_SUCCESS ? Status::ok() : failed(rc, "delete", a.keyval);
}

}  // namespace

int createKeyval(AttrKind kind, AnyFn copy, AnyFn del, void* extra) {
  int k = gNextKeyval++;
  table().emplace(k, Keyval{kind, copy, del, extra});
  return k;
}

bool isKeyval(AttrKind kind, int keyval, bool orInUse) {
  Keyval* kv = entry(keyval);
  return kv && (!kv->userFreed || orInUse) && kv->kind == kind;
}

Status freeKeyval(AttrKind kind, int keyval) {
  if (!isKeyval(kind, keyval, true)) return errorf(MPI_ERR_KEYVAL, "invalid keyval %d", keyval);
  if (entry(keyval)->userFreed) return Status::ok();  // freed already, attributes remain
  entry(keyval)->userFreed = true;
  dropRef(keyval);
  return Status::ok();
}

template <class H>
Status AttrStore<H>::set(std::vector<Attribute>& attrs, H handle, int keyval, void* value) {
  if (Attribute* a = find(attrs, keyval)) {
    // Replacing a value deletes the old one first, with its callback.
    LOOM_TRY(callDelete(handle, *a));
    if ((a = find(attrs, keyval))) {
      a->value = value;
      return Status::ok();
    }
  }
  attrs.push_back({keyval, value});
  ++entry(keyval)->refs;
  return Status::ok();
}

template <class H>
void* AttrStore<H>::get(std::vector<Attribute>& attrs, int keyval, bool* found) {
  Attribute* a = find(attrs, keyval);
  *found = a != nullptr;
  return a ? a->value : nullptr;
}

template <class H>
Status AttrStore<H>::erase(std::vector<Attribute>& attrs, H handle, int keyval) {
  Attribute* a = find(attrs, keyval);
  if (!a) return Status::ok();  // nothing cached: nothing to do
  LOOM_TRY(callDelete(handle, *a));
  remove(attrs, keyval);
  return Status::ok();
}

template <class H>
Status AttrStore<H>::copyAll(const std::vector<Attribute>& from, H fromHandle,
                             std::vector<Attribute>& to) {
  // A snapshot: a copy callback may set attributes on the parent.
  const std::vector<Attribute> attrs = from;
  for (const Attribute& a : attrs) {
    Keyval* kv = entry(a.keyval);
    if (!kv || kv->copy == kNullFn) continue;
    void* out = nullptr;
    int flag = 0;
    if (kv->copy == kDupFn) {
      out = a.value;
      flag = 1;
    } else {
      using Fn = int(H, int, void*, void*, void*, int*);
      int rc = reinterpret_cast<Fn*>(kv->copy)(fromHandle, a.keyval, kv->extra, a.value, &out,
                                              &flag);
      if (rc != MPI_SUCCESS) return failed(rc, "copy", a.keyval);
    }
    if (flag) {
      to.push_back({a.keyval, out});
      ++kv->refs;
    }
  }
  return Status::ok();
}

template <class H>
Status AttrStore<H>::eraseAll(std::vector<Attribute>& attrs, H handle) {
  while (!attrs.empty()) {
    Attribute a = attrs.back();
    LOOM_TRY(callDelete(handle, a));
    remove(attrs, a.keyval);
  }
  return Status::ok();
}

template struct AttrStore<MPI_Comm>;
template struct AttrStore<MPI_Datatype>;
template struct AttrStore<MPI_Win>;

}  // namespace loom::api
