// One cached attribute (MPI 5.0 §7.7): a keyval, whose callbacks
// runtime/api keeps (api/attr_store.h), and the value the user stored.
// Communicators and datatypes each hold a list of them, in the order they
// were first set.
#pragma once

namespace loom {

struct Attribute {
  int keyval;
  void* value;
};

}  // namespace loom
