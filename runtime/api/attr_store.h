// Attribute caching shared by every object kind that has attributes
// (communicators, datatypes; windows later): the keyval table and the
// operations on one object's attribute list, with the copy and delete
// callbacks run where the standard says (MPI 5.0 §7.7).
//
// Keyvals are ints from one counter, starting at kFirstUserKeyval and never
// reused within a run, so a stale keyval is always detected. Each belongs
// to one object kind: a communicator keyval used on a datatype is
// MPI_ERR_KEYVAL. A keyval is reference counted (the user's handle plus one
// per attribute stored with it): freeing it drops the user's reference,
// and its callbacks stay reachable until its last attribute is deleted.
//
// The copy/delete callbacks of every kind have the same shape with a
// different handle type; they are stored type-erased and called through
// AttrStore<Handle>. The values 0 (null copy / null delete) and 1 (dup:
// copy the value as it is) are the ABI's predefined callbacks.
//
// Not thread-safe: attribute calls come from the threads the application
// serialises (as every MPI implementation requires for one object).
#pragma once

#include <mpi.h>

#include <vector>

#include "core/attribute.h"
#include "core/status.h"

namespace loom::api {

enum class AttrKind : uint8_t { kComm, kType, kWin };

inline constexpr int kFirstUserKeyval = 1024;

using AnyFn = void (*)();

// A new keyval of `kind`; returns its number.
int createKeyval(AttrKind kind, AnyFn copy, AnyFn del, void* extra);
// MPI_*_free_keyval: MPI_ERR_KEYVAL if `keyval` is not a keyval of `kind`.
// Freeing one the user freed already while attributes still use it does
// nothing more (as Open MPI and MPICH accept: a delete callback that frees
// its keyval, then the program freeing it too).
Status freeKeyval(AttrKind kind, int keyval);
// True when `keyval` is a live (not freed) keyval of `kind`; with
// `orInUse`, also one the user freed whose attributes still exist (getting
// and deleting those attributes works, MPI 5.0 §7.7.2: the actual free
// waits for the last of them).
bool isKeyval(AttrKind kind, int keyval, bool orInUse = false);

// The attribute operations on one object's list, for handles of type H.
// Each returns MPI_SUCCESS or the code a user callback returned (as the
// error class of a Status, whose message names the callback).
template <class H>
struct AttrStore {
  // Stores `value` under `keyval` (a live keyval of the right kind, which
  // the caller checked), first deleting an older value with its callback.
  static Status set(std::vector<Attribute>& attrs, H handle, int keyval, void* value);
  // The value under `keyval`, or nullptr with *found false.
  static void* get(std::vector<Attribute>& attrs, int keyval, bool* found);
  // Deletes the value under `keyval` (callback first); nothing if none.
  static Status erase(std::vector<Attribute>& attrs, H handle, int keyval);
  // Runs the copy callbacks of `from` for a duplicate, appending to `to`.
  static Status copyAll(const std::vector<Attribute>& from, H fromHandle,
                        std::vector<Attribute>& to);
  // Deletes every attribute, newest first; stops at the first callback that
  // fails (the attributes not yet deleted stay).
  static Status eraseAll(std::vector<Attribute>& attrs, H handle);
};

}  // namespace loom::api
