// MPI_Type_get_envelope / MPI_Type_get_contents and their large-count
// forms: how a datatype was built, from the record every constructor leaves
// (DatatypeArgs in core/datatype.h).
//
// Both forms read the one record. Each recorded value has a kind that
// decides its output array: kInt values always go to array_of_integers;
// kCount values to array_of_integers and kBytes values to
// array_of_addresses, unless a large-count (_c) constructor built the type
// and the _c query asks, in which case both go, in call order, to
// array_of_large_counts. The int query refuses (MPI_ERR_TYPE) a type built
// by a _c constructor, whose values it could not all represent. (The _c
// constructors share the int ones' code, so "built by a _c constructor" is
// read as "holds a count beyond INT_MAX".)
//
// The datatypes returned by get_contents are new handles the caller frees
// (clones of the constituent types, so freeing one leaves the type it
// describes intact), except predefined types and MPI_Type_create_f90_*
// results, which are returned as themselves.
#include <mpi.h>

#include "api/handles_datatype.h"
#include "api/runtime.h"

using loom::Datatype;
using loom::DatatypeArgs;
using loom::errorf;
using loom::Status;
using loom::api::raise;
using loom::api::requireRunning;
using loom::api::toDatatype;
using loom::api::toHandle;

namespace {

enum Slot { kInts, kAddrs, kCounts };

// The array a recorded value goes to in the int view (large false) or the
// large-count view (large true).
Slot slotOf(DatatypeArgs::Kind k, bool large) {
  if (k == DatatypeArgs::kInt) return kInts;
  if (large) return kCounts;
  return k == DatatypeArgs::kCount ? kInts : kAddrs;
}

// Whether the record is in large-count form: built by a _c constructor, or
// holding a count no int constructor could have passed (the _c entry points
// share the int ones' constructors, so a count beyond INT_MAX is the mark).
bool isLarge(const DatatypeArgs& a) {
  if (a.largeCounts) return true;
  for (size_t i = 0; i < a.values.size(); ++i)
    if (a.kinds[i] == DatatypeArgs::kCount && (a.values[i] > INT32_MAX || a.values[i] < INT32_MIN))
      return true;
  return false;
}

struct Envelope {
  int64_t n[3] = {0, 0, 0};  // by Slot
  int64_t types = 0;
  int combiner = MPI_COMBINER_NAMED;
};

// The envelope of `h` as the int (largeQuery false) or _c query sees it;
// nullptr type after raising (code in *rc).
Datatype* envelopeOf(const char* fn, MPI_Datatype h, bool largeQuery, Envelope* e, int* rc) {
  Datatype* t = toDatatype(h);
  if (!t) {
    *rc = raise(nullptr, errorf(MPI_ERR_TYPE, h == MPI_DATATYPE_NULL
                                                  ? "datatype is MPI_DATATYPE_NULL"
                                                  : "datatype is not a valid datatype"),
                fn);
    return nullptr;
  }
  e->combiner = t->combiner();
  const DatatypeArgs* a = t->args();
  if (!a) return t;
  const bool large = isLarge(*a);
  if (large && !largeQuery) {
    *rc = raise(nullptr,
                errorf(MPI_ERR_TYPE, "the datatype was built by a large-count constructor; "
                                     "query it with %s_c", fn),
                fn);
    return nullptr;
  }
  for (DatatypeArgs::Kind k : a->kinds) ++e->n[slotOf(k, large)];
  e->types = static_cast<int64_t>(a->types.size());
  return t;
}

// Shared body of both get_contents forms. The output arrays are typed by
// the caller's form; `counts` is nullptr (and maxCounts 0) in the int form.
int contents(const char* fn, MPI_Datatype h, bool largeQuery, int64_t maxInts, int64_t maxAddrs,
             int64_t maxCounts, int64_t maxTypes, int* ints, MPI_Aint* addrs, MPI_Count* counts,
             MPI_Datatype* types) {
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Envelope e;
  int rc = MPI_SUCCESS;
  Datatype* t = envelopeOf(fn, h, largeQuery, &e, &rc);
  if (!t) return rc;
  if (e.combiner == MPI_COMBINER_NAMED)
    return raise(nullptr, errorf(MPI_ERR_TYPE, "%s is a named predefined datatype: it has no "
                                               "contents", t->name().c_str()), fn);
  const int64_t max[3] = {maxInts, maxAddrs, maxCounts};
  const void* arrays[3] = {ints, addrs, counts};
  static const char* const names[3] = {"max_integers", "max_addresses", "max_large_counts"};
  for (int s = 0; s < 3; ++s) {
    if (max[s] < e.n[s])
      return raise(nullptr, errorf(MPI_ERR_ARG, "%s is %lld, the datatype needs %lld", names[s],
                                   (long long)max[s], (long long)e.n[s]), fn);
    if (e.n[s] > 0 && !arrays[s])
      return raise(nullptr, errorf(MPI_ERR_ARG, "the array for %s is NULL", names[s] + 4), fn);
  }
  if (maxTypes < e.types)
    return raise(nullptr, errorf(MPI_ERR_ARG, "max_datatypes is %lld, the datatype needs %lld",
                                 (long long)maxTypes, (long long)e.types), fn);
  if (e.types > 0 && !types)
    return raise(nullptr, errorf(MPI_ERR_ARG, "array_of_datatypes is NULL"), fn);

  const DatatypeArgs& a = *t->args();
  const bool large = isLarge(a);
  int64_t next[3] = {0, 0, 0};
  for (size_t i = 0; i < a.values.size(); ++i) {
    const int64_t v = a.values[i];
    switch (slotOf(a.kinds[i], large)) {
      case kInts: ints[next[kInts]++] = static_cast<int>(v); break;
      case kAddrs: addrs[next[kAddrs]++] = static_cast<MPI_Aint>(v); break;
      case kCounts: counts[next[kCounts]++] = static_cast<MPI_Count>(v); break;
    }
  }
  for (size_t i = 0; i < a.types.size(); ++i) {
    Datatype* c = a.types[i];
    types[i] = toHandle(c->isPermanent() ? c : loom::typeClone(c));
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers,
                                      int* num_addresses, int* num_datatypes, int* combiner) {
  const char* fn = "MPI_Type_get_envelope";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Envelope e;
  int rc = MPI_SUCCESS;
  if (!envelopeOf(fn, datatype, false, &e, &rc)) return rc;
  if (!num_integers || !num_addresses || !num_datatypes || !combiner)
    return raise(nullptr, errorf(MPI_ERR_ARG, "an output argument is NULL"), fn);
  *num_integers = static_cast<int>(e.n[kInts]);
  *num_addresses = static_cast<int>(e.n[kAddrs]);
  *num_datatypes = static_cast<int>(e.types);
  *combiner = e.combiner;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Type_get_envelope)

extern "C" int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count* num_integers,
                                        MPI_Count* num_addresses, MPI_Count* num_large_counts,
                                        MPI_Count* num_datatypes, int* combiner) {
  const char* fn = "MPI_Type_get_envelope_c";
  if (!requireRunning(fn)) return MPI_ERR_OTHER;
  Envelope e;
  int rc = MPI_SUCCESS;
  if (!envelopeOf(fn, datatype, true, &e, &rc)) return rc;
  if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes || !combiner)
    return raise(nullptr, errorf(MPI_ERR_ARG, "an output argument is NULL"), fn);
  *num_integers = e.n[kInts];
  *num_addresses = e.n[kAddrs];
  *num_large_counts = e.n[kCounts];
  *num_datatypes = e.types;
  *combiner = e.combiner;
  return MPI_SUCCESS;
}
LOOM_WEAK_ALIAS(MPI_Type_get_envelope_c)

extern "C" int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                                      int max_datatypes, int array_of_integers[],
                                      MPI_Aint array_of_addresses[],
                                      MPI_Datatype array_of_datatypes[]) {
  return contents("MPI_Type_get_contents", datatype, false, max_integers, max_addresses, 0,
                  max_datatypes, array_of_integers, array_of_addresses, nullptr,
                  array_of_datatypes);
}
LOOM_WEAK_ALIAS(MPI_Type_get_contents)

extern "C" int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers,
                                        MPI_Count max_addresses, MPI_Count max_large_counts,
                                        MPI_Count max_datatypes, int array_of_integers[],
                                        MPI_Aint array_of_addresses[],
                                        MPI_Count array_of_large_counts[],
                                        MPI_Datatype array_of_datatypes[]) {
  return contents("MPI_Type_get_contents_c", datatype, true, max_integers, max_addresses,
                  max_large_counts, max_datatypes, array_of_integers, array_of_addresses,
                  array_of_large_counts, array_of_datatypes);
}
LOOM_WEAK_ALIAS(MPI_Type_get_contents_c)
