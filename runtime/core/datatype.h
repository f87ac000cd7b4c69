// Datatype: the layout of one element of an MPI datatype, and the packer
// that moves `count` such elements to and from a contiguous byte stream.
//
// Every type, predefined or derived, is flattened when it is built into a
// short list of runs. A run is `count` blocks of `length` bytes, the k-th at
// `offset + k * stride` from the element's origin; runs appear in type-map
// order (the order MPI defines for the packed stream), and neighbours that
// continue each other are merged, so a vector is one run and a contiguous
// type is one block. Element i of a buffer starts at buf + i * extent.
//
// Cost model: building a type costs O(runs of the result), plus compiling
// the runs into a copy program (strided steps for long runs, lists of blocks
// for short ones; see Step). Packing enters the stream at an arbitrary
// offset with one division and one binary search, then runs the program
// element after element, each step in a loop specialised for its block
// length (1..16, 24, 32 bytes: a few moves, no call): a block of 3 bytes
// costs under a nanosecond, and a pipeline packs a large message chunk by
// chunk for the same price as all at once. Types whose runs do not repeat
// regularly (e.g. a contiguous of a struct with holes) flatten to
// O(count * runs of the child).
//
// Basic elements (MPI_Get_elements) are counted from a second, unflattened
// description: each type lists the parts of its packed stream in order, as
// (child type, copies), down to the predefined types, whose basic elements
// are one (two for the MPI_FLOAT_INT-style pairs).
//
// Thread safety: a committed type is immutable except for its reference
// count (atomic) and its name.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "core/handle_pool.h"
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/attribute.h"
#include "core/basic_kind.h"
#include "core/status.h"

namespace loom {

const char* basicKindName(BasicKind k);

// `count` blocks of `length` bytes at offset + k * stride, k < count.
struct DatatypeRun {
  int64_t offset;
  int64_t length;
  int64_t count;
  int64_t stride;
};

class Datatype;

// How a derived type was built, for MPI_Type_get_envelope/get_contents:
// the constructor's arguments in call order, each tagged with a kind that
// decides which output array it belongs to.
//   kInt:   always an integer (ndims, order, distribs, dargs, psizes, p, r).
//   kCount: a count, block length, displacement in extents or array size:
//           an integer, or a large count if a large-count (_c) constructor
//           built the type.
//   kBytes: a displacement, stride, lb or extent in bytes: an address, or a
//           large count likewise.
// So both the int and the _c views come from one record: the int view is
// (kInt+kCount, kBytes, none), the _c view of a _c-built type is
// (kInt, none, kCount+kBytes), each in call order.
struct DatatypeArgs {
  enum Kind : uint8_t { kInt, kCount, kBytes };
  std::vector<int64_t> values;
  std::vector<Kind> kinds;
  // Not retained by the record: each is a child of the type holding it, or
  // (darray) reachable through its children, so it lives as long as the type.
  std::vector<Datatype*> types;
  bool largeCounts = false;      // built by a _c constructor

  DatatypeArgs& add(Kind k, int64_t v) {
    values.push_back(v);
    kinds.push_back(k);
    return *this;
  }
  DatatypeArgs& add(Kind k, std::span<const int64_t> v) {
    for (int64_t x : v) add(k, x);
    return *this;
  }
  DatatypeArgs& type(Datatype* t) {
    types.push_back(t);
    return *this;
  }
  int64_t countOf(Kind k) const {
    int64_t n = 0;
    for (Kind x : kinds) n += x == k;
    return n;
  }
};

class Datatype : public HandlePool<Datatype> {
 public:
  static constexpr uint32_t kMagic = 0x50595444;  // "DTYP": catches stale handles

  Datatype(const Datatype&) = delete;
  Datatype& operator=(const Datatype&) = delete;

  bool valid() const { return magic_ == kMagic; }
  bool isPredefined() const { return abiValue_ != 0; }
  // The ABI handle value of a predefined type (0x209 for MPI_INT), else 0.
  uint32_t abiValue() const { return abiValue_; }
  int combiner() const { return combiner_; }  // MPI_COMBINER_*
  // Predefined, or a type MPI_Type_create_f90_* returned: lives until the
  // process exits, cannot be freed, and MPI_Type_get_contents hands it out
  // as itself rather than as a new handle.
  bool isPermanent() const { return abiValue_ != 0 || permanent_; }
  // The constructor call that built this type; nullptr for a named type.
  const DatatypeArgs* args() const { return args_.get(); }
  // Records (replacing any earlier record) how the type was built. Called
  // by the constructors once the layout is done; args.types must be kept
  // alive by children() (see DatatypeArgs::types).
  void setConstruction(int combiner, DatatypeArgs args);
  BasicKind kind() const { return kind_; }

  // Geometry, in bytes, per the MPI standard.
  int64_t size() const { return size_; }
  int64_t lb() const { return lb_; }
  int64_t ub() const { return ub_; }
  int64_t extent() const { return ub_ - lb_; }
  int64_t trueLb() const { return trueLb_; }
  int64_t trueUb() const { return trueUb_; }
  int64_t trueExtent() const { return trueUb_ - trueLb_; }
  int64_t alignment() const { return align_; }
  // Set by MPI_Type_create_resized and inherited: turns off struct padding.
  bool explicitBounds() const { return explicitBounds_; }

  // True when `count` elements occupy exactly the bytes
  // [buf + trueLb(), buf + trueLb() + count * size()), so a transport may
  // send them without packing. Types of size 0 are contiguous too.
  bool isContiguous() const { return contiguous_; }
  const std::vector<DatatypeRun>& runs() const { return runs_; }
  // Types this one was built from (retained): the parts of its layout, and
  // (directly or through them) the types its construction record names.
  const std::vector<Datatype*>& children() const { return children_; }

  bool isCommitted() const { return committed_; }
  void commit() { committed_ = true; }

  const std::string& name() const { return name_; }
  void setName(std::string n) { name_ = std::move(n); }

  // Cached attributes (MPI_Type_set_attr); runtime/api runs the callbacks.
  std::vector<Attribute>& attributes() { return attrs_; }

  // Reference counting. The user's handle holds one reference; a pending
  // operation or a type built from this one holds another. Predefined types
  // ignore both calls. The object is deleted when the count reaches zero.
  void retain();
  void release();
  int refCount() const { return refs_.load(std::memory_order_relaxed); }
  // MPI_Type_free was called: the handle is dead even if the object lives.
  bool userFreed() const { return userFreed_; }
  void markUserFreed() { userFreed_ = true; }

  // --- Packing. The packed stream of `count` elements is their data bytes
  // in type-map order: packedSize(count) = count * size().

  size_t packedSize(int64_t count) const { return static_cast<size_t>(count) * size_; }

  // Copies bytes [streamOffset, streamOffset + outBytes) of the packed stream
  // of `count` elements at `buf` into `out`. Returns the bytes written (less
  // than outBytes only at the end of the stream).
  size_t pack(const void* buf, int64_t count, size_t streamOffset, void* out,
              size_t outBytes) const;
  // The mirror of pack: scatters `inBytes` bytes of stream, starting at
  // `streamOffset`, into `buf`. Returns the bytes consumed.
  size_t unpack(void* buf, int64_t count, size_t streamOffset, const void* in,
                size_t inBytes) const;
  // Appends to `iov` the memory pieces holding stream bytes
  // [streamOffset, streamOffset + maxBytes), merging pieces adjacent in
  // memory, and stops early once `iov` holds `maxSegments` entries (e.g.
  // IOV_MAX for process_vm_readv). Returns the stream bytes covered.
  size_t segments(const void* buf, int64_t count, size_t streamOffset, size_t maxBytes,
                  std::vector<iovec>* iov,
                  size_t maxSegments = std::numeric_limits<size_t>::max()) const;

  // --- Basic elements (MPI_Get_elements).

  // Basic elements (leaves of the type map: predefined types, a pair type
  // such as MPI_DOUBLE_INT counting two) in one element of this type.
  int64_t basicElements() const { return elements_; }
  // Basic elements in the first `bytes` bytes of the packed stream of any
  // number of elements, including those of a last, partial element; -1 when
  // `bytes` ends inside a basic element. O(nesting depth * parts per level).
  int64_t basicElementsIn(int64_t bytes) const;

  // One part of the packed stream of an element: `copies` whole packed
  // elements of `type` (a child, kept alive by children_). A derived type's
  // stream is its parts in order, down to predefined types (no parts); the
  // external32 converter walks them.
  struct Part {
    const Datatype* type;
    int64_t copies;
  };
  const std::vector<Part>& parts() const { return parts_; }

  // --- Internal: used by the constructors in datatype.cc.
  struct Private;

  // The copy program of one element (built from runs_ by compileProgram):
  // a long run stays a strided step; blocks of short runs are listed one by
  // one, up to kListMax per step, so a type of many small irregular blocks
  // (indexed, struct) pays the dispatch on block length once per step, not
  // once per block.
  struct Block {
    int64_t offset;
    int64_t length;
  };
  struct Step {
    int64_t offset;  // strided: of block 0; list: index of its first Block in blocks_
    int64_t stride;  // strided only
    int64_t length;  // bytes per block; 0 in a list of blocks of different lengths
    int64_t count;   // blocks
    bool list;
  };
  static constexpr int64_t kListMax = 64;
  static constexpr int64_t kListRunMax = 4;  // runs of at most this many blocks are listed

 private:
  friend struct Private;
  Datatype() = default;
  ~Datatype();

  template <class Fn>
  size_t walk(uintptr_t base, int64_t count, size_t streamOffset, size_t maxBytes,
              Fn&& fn) const;
  // pack (kPack true) or unpack: the stream side is `stream`.
  template <bool kPack>
  size_t transfer(uintptr_t base, int64_t count, size_t streamOffset, char* stream,
                  size_t maxBytes) const;
  template <bool kPack>
  char* wholeElements(uintptr_t elem, size_t n, char* stream) const;
  template <bool kPack>
  char* partialElement(uintptr_t elem, size_t from, size_t to, char* stream) const;
  int64_t partialElements(int64_t bytes) const;
  void finishLayout();
  void compileProgram();

  uint32_t magic_ = kMagic;
  uint32_t abiValue_ = 0;
  int combiner_ = 0;
  BasicKind kind_ = BasicKind::kNone;
  bool committed_ = false;
  bool userFreed_ = false;
  bool explicitBounds_ = false;
  bool contiguous_ = false;
  bool permanent_ = false;
  std::atomic<int> refs_{1};
  int64_t size_ = 0;
  int64_t lb_ = 0, ub_ = 0;
  int64_t trueLb_ = 0, trueUb_ = 0;
  int64_t align_ = 1;
  std::vector<DatatypeRun> runs_;
  std::vector<size_t> runStart_;  // stream offset of each run in an element; +1 sentinel
  std::vector<Step> steps_;
  std::vector<size_t> stepStart_;  // stream offset of each step in an element; +1 sentinel
  std::vector<Block> blocks_;
  // Basic elements: a derived type's parts in stream order; a predefined
  // type's leaf sizes (one, or two for a pair type).
  std::vector<Part> parts_;
  int64_t leafSize_[2] = {0, 0};
  int64_t elements_ = 0;
  std::vector<Datatype*> children_;
  std::string name_;
  std::unique_ptr<DatatypeArgs> args_;
  std::vector<Attribute> attrs_;
};

// The predefined type with ABI handle value `abiValue` (0x209 for MPI_INT),
// or nullptr when the value names none (MPI_DATATYPE_NULL included).
Datatype* predefinedDatatypeSlow(uintptr_t abiValue);
namespace detail {
// The table of predefined types once built (nullptr before): handles
// 0x200..0x2ff. Every call that takes a datatype looks one up.
extern Datatype* const* gPredefinedTable;
}  // namespace detail
inline Datatype* predefinedDatatype(uintptr_t abiValue) {
  if (Datatype* const* t = __atomic_load_n(&detail::gPredefinedTable, __ATOMIC_ACQUIRE))
      [[likely]]
    return abiValue - 0x200 < 0x100 ? t[abiValue - 0x200] : nullptr;
  return predefinedDatatypeSlow(abiValue);
}

// --- Constructors. Each checks its arguments (MPI_ERR_COUNT for a negative
// count, MPI_ERR_ARG for other bad values), and on success stores in *out a
// new uncommitted type holding one reference (the caller's). Displacements
// and strides named "Bytes" are in bytes, the others in extents of `old`.

Status typeContiguous(int64_t count, Datatype* old, Datatype** out);
Status typeVector(int64_t count, int64_t blocklen, int64_t stride, Datatype* old,
                  Datatype** out);
Status typeHvector(int64_t count, int64_t blocklen, int64_t strideBytes, Datatype* old,
                   Datatype** out);
Status typeIndexed(std::span<const int64_t> blocklens, std::span<const int64_t> disps,
                   Datatype* old, Datatype** out);
Status typeHindexed(std::span<const int64_t> blocklens, std::span<const int64_t> dispBytes,
                    Datatype* old, Datatype** out);
Status typeIndexedBlock(int64_t blocklen, std::span<const int64_t> disps, Datatype* old,
                        Datatype** out);
Status typeHindexedBlock(int64_t blocklen, std::span<const int64_t> dispBytes, Datatype* old,
                         Datatype** out);
Status typeStruct(std::span<const int64_t> blocklens, std::span<const int64_t> dispBytes,
                  std::span<Datatype* const> types, Datatype** out);
Status typeResized(Datatype* old, int64_t lb, int64_t extent, Datatype** out);
// `order` is MPI_ORDER_C or MPI_ORDER_FORTRAN.
Status typeSubarray(std::span<const int64_t> sizes, std::span<const int64_t> subsizes,
                    std::span<const int64_t> starts, int order, Datatype* old,
                    Datatype** out);
// Same layout and committed state as `old`, no name.
Status typeDup(Datatype* old, Datatype** out);
// MPI_Type_create_darray (HPF distributions; datatype_darray.cc). `distribs`
// are MPI_DISTRIBUTE_*, `dargs` a positive block size or
// MPI_DISTRIBUTE_DFLT_DARG; the process grid is row-major whatever `order`.
Status typeDarray(int size, int rank, std::span<const int64_t> gsizes,
                  std::span<const int> distribs, std::span<const int> dargs,
                  std::span<const int> psizes, int order, Datatype* old, Datatype** out);
// A second handle on `t`: same layout, construction record, name and
// committed state, no attributes, one reference (the caller's). For the
// datatypes MPI_Type_get_contents returns, which the user frees.
Datatype* typeClone(const Datatype* t);
// The permanent type MPI_Type_create_f90_{real,complex,integer} returns for
// (combiner, p, r): the layout of the predefined `base`, combiner
// MPI_COMBINER_F90_*; the same object for the same arguments.
Datatype* typeF90(int combiner, int p, int r, Datatype* base);

}  // namespace loom
