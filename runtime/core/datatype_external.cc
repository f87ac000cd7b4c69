// external32 conversion (see datatype_external.h): a table of the
// predefined types' basic values, and a walk over a type's parts.
#include "core/datatype_external.h"

#include <array>
#include <cfloat>
#include <cstring>

namespace loom {

namespace {

// How one basic value changes between native and external32.
enum class Conv : uint8_t {
  kSwap,            // same size, byte order reversed (1 byte: copied)
  kNarrowSigned,    // native integer wider than external (C long): low bytes, sign-extend back
  kNarrowUnsigned,  // same, zero-extend back (unsigned long, wchar_t)
  kLongDouble,      // native long double <-> IEEE binary128
};

struct Leaf {
  Conv conv;
  uint8_t nat;  // bytes in the native packed stream
  uint8_t ext;  // bytes in external32
};

// A predefined type: one or two basic values (complex and pair types two).
struct Spec {
  Leaf leaf[2];
  int n = 0;
  int64_t ext() const { return n == 0 ? 0 : leaf[0].ext + (n > 1 ? leaf[1].ext : 0); }
};

static_assert(LDBL_MANT_DIG == 64 || LDBL_MANT_DIG == 113,
              "external32 long double: only x87 extended and binary128 are handled");

uint64_t loadBE(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}
void storeBE(unsigned char* p, int n, uint64_t v) {
  for (int i = n; i-- > 0; v >>= 8) p[i] = static_cast<unsigned char>(v);
}
uint64_t loadLE(const unsigned char* p, int n) {
  uint64_t v = 0;
  for (int i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}
void storeLE(unsigned char* p, int n, uint64_t v) {
  for (int i = 0; i < n; ++i, v >>= 8) p[i] = static_cast<unsigned char>(v);
}

void reverse(const unsigned char* in, unsigned char* out, int n) {
  for (int i = 0; i < n; ++i) out[i] = in[n - 1 - i];
}

// x87 extended (64-bit significand with an explicit integer bit, then
// sign and 15-bit exponent) <-> binary128 (sign, the same 15-bit exponent
// and bias, 112-bit fraction). Denormals line up, as both have exponent
// field 0 meaning 2^-16382 with no integer bit.
void longDoubleOut(const unsigned char* in, unsigned char* out) {
  if constexpr (LDBL_MANT_DIG == 113) {
    reverse(in, out, 16);
  } else {
    uint64_t mant = loadLE(in, 8);
    uint64_t signExp = loadLE(in + 8, 2);
    uint64_t frac = mant & 0x7fffffffffffffffULL;  // 63 bits below the integer bit
    storeBE(out, 8, signExp << 48 | frac >> 15);
    storeBE(out + 8, 8, (frac & 0x7fff) << 49);
  }
}
void longDoubleIn(const unsigned char* in, unsigned char* out, int nat) {
  if constexpr (LDBL_MANT_DIG == 113) {
    reverse(in, out, 16);
    (void)nat;
  } else {
    uint64_t hi = loadBE(in, 8), lo = loadBE(in + 8, 8);
    uint64_t signExp = hi >> 48;
    uint64_t frac = (hi & 0xffffffffffffULL) << 15 | lo >> 49;  // top 63 of 112 bits
    uint64_t integerBit = (signExp & 0x7fff) != 0 ? 1ULL << 63 : 0;
    std::memset(out, 0, nat);
    storeLE(out, 8, integerBit | frac);
    storeLE(out + 8, 2, signExp);
  }
}

void leafOut(const Leaf& l, const unsigned char* in, unsigned char* out) {
  switch (l.conv) {
    case Conv::kSwap: return reverse(in, out, l.nat);
    case Conv::kNarrowSigned:
    case Conv::kNarrowUnsigned: return storeBE(out, l.ext, loadLE(in, l.nat));
    case Conv::kLongDouble: return longDoubleOut(in, out);
  }
}
void leafIn(const Leaf& l, const unsigned char* in, unsigned char* out) {
  switch (l.conv) {
    case Conv::kSwap: return reverse(in, out, l.nat);
    case Conv::kNarrowSigned:
    case Conv::kNarrowUnsigned: {
      uint64_t v = loadBE(in, l.ext);
      const int bits = 8 * l.ext;
      if (l.conv == Conv::kNarrowSigned && bits < 64 && (v >> (bits - 1)) & 1) v |= ~0ULL << bits;
      return storeLE(out, l.nat, v);
    }
    case Conv::kLongDouble: return longDoubleIn(in, out, l.nat);
  }
}

struct Table {
  std::array<Spec, 0x100> spec{};  // by ABI handle value - 0x200

  static size_t at(MPI_Datatype h) { return reinterpret_cast<uintptr_t>(h) - 0x200; }
  static Leaf same(int n) { return {Conv::kSwap, uint8_t(n), uint8_t(n)}; }
  void one(MPI_Datatype h, Leaf a) { spec[at(h)] = {{a, a}, 1}; }
  void two(MPI_Datatype h, Leaf a, Leaf b) { spec[at(h)] = {{a, b}, 2}; }
  void swap(MPI_Datatype h, int n) { one(h, same(n)); }
  void cplx(MPI_Datatype h, int half) { two(h, same(half), same(half)); }

  Table() {
    const Leaf ld{Conv::kLongDouble, sizeof(long double), 16};
    const Leaf lng{Conv::kNarrowSigned, sizeof(long), 4};
    const Leaf ulng{Conv::kNarrowUnsigned, sizeof(unsigned long), 4};
    const Leaf wch{Conv::kNarrowUnsigned, sizeof(wchar_t), 2};
    for (MPI_Datatype h : {MPI_PACKED, MPI_BYTE, MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR,
                           MPI_C_BOOL, MPI_CXX_BOOL, MPI_INT8_T, MPI_UINT8_T, MPI_CHARACTER,
                           MPI_LOGICAL1, MPI_INTEGER1})
      swap(h, 1);
    for (MPI_Datatype h : {MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT16_T, MPI_UINT16_T,
                           MPI_LOGICAL2, MPI_INTEGER2, MPI_REAL2})
      swap(h, 2);
    for (MPI_Datatype h : {MPI_INT, MPI_UNSIGNED, MPI_FLOAT, MPI_INT32_T, MPI_UINT32_T,
                           MPI_LOGICAL, MPI_INTEGER, MPI_REAL, MPI_LOGICAL4, MPI_INTEGER4,
                           MPI_REAL4})
      swap(h, 4);
    for (MPI_Datatype h : {MPI_AINT, MPI_COUNT, MPI_OFFSET, MPI_LONG_LONG,
                           MPI_UNSIGNED_LONG_LONG, MPI_DOUBLE, MPI_INT64_T, MPI_UINT64_T,
                           MPI_DOUBLE_PRECISION, MPI_LOGICAL8, MPI_INTEGER8, MPI_REAL8})
      swap(h, 8);
    for (MPI_Datatype h : {MPI_LOGICAL16, MPI_INTEGER16, MPI_REAL16}) swap(h, 16);
    one(MPI_LONG, lng);
    one(MPI_UNSIGNED_LONG, ulng);
    one(MPI_WCHAR, wch);
    one(MPI_LONG_DOUBLE, ld);
    for (MPI_Datatype h : {MPI_C_FLOAT_COMPLEX, MPI_CXX_FLOAT_COMPLEX, MPI_COMPLEX,
                           MPI_COMPLEX8})
      cplx(h, 4);
    for (MPI_Datatype h : {MPI_C_DOUBLE_COMPLEX, MPI_CXX_DOUBLE_COMPLEX, MPI_DOUBLE_COMPLEX,
                           MPI_COMPLEX16})
      cplx(h, 8);
    cplx(MPI_COMPLEX4, 2);
    cplx(MPI_COMPLEX32, 16);
    two(MPI_C_LONG_DOUBLE_COMPLEX, ld, ld);
    two(MPI_CXX_LONG_DOUBLE_COMPLEX, ld, ld);
    two(MPI_FLOAT_INT, same(4), same(4));
    two(MPI_DOUBLE_INT, same(8), same(4));
    two(MPI_LONG_INT, lng, same(4));
    two(MPI_2INT, same(4), same(4));
    two(MPI_SHORT_INT, same(2), same(4));
    two(MPI_LONG_DOUBLE_INT, ld, same(4));
    two(MPI_2REAL, same(4), same(4));
    two(MPI_2DOUBLE_PRECISION, same(8), same(8));
    two(MPI_2INTEGER, same(4), same(4));
    spec[0xfe] = {{same(2), same(2)}, 1};  // MPIX_C_FLOAT16
    spec[0xff] = {{same(2), same(2)}, 1};  // MPIX_BFLOAT16
  }
};

const Spec& specOf(const Datatype* t) {
  static const Table table;
  return table.spec[t->abiValue() - 0x200];
}

// Converts `copies` packed elements of `t`, advancing both cursors.
template <bool kOut>
void walk(const Datatype* t, int64_t copies, const unsigned char*& in, unsigned char*& out) {
  if (t->isPredefined()) {
    const Spec& s = specOf(t);
    if (s.n == 0) {  // not in the table: moved as it is
      const size_t n = static_cast<size_t>(copies * t->size());
      std::memcpy(out, in, n);
      in += n;
      out += n;
      return;
    }
    for (int64_t c = 0; c < copies; ++c)
      for (int i = 0; i < s.n; ++i) {
        const Leaf& l = s.leaf[i];
        if constexpr (kOut) leafOut(l, in, out);
        else leafIn(l, in, out);
        in += kOut ? l.nat : l.ext;
        out += kOut ? l.ext : l.nat;
      }
    return;
  }
  const auto& parts = t->parts();
  if (parts.size() == 1) return walk<kOut>(parts[0].type, copies * parts[0].copies, in, out);
  for (int64_t c = 0; c < copies; ++c)
    for (const Datatype::Part& p : parts) walk<kOut>(p.type, p.copies, in, out);
}

}  // namespace

int64_t external32Size(const Datatype* t) {
  if (t->isPredefined()) {
    const Spec& s = specOf(t);
    return s.n == 0 ? t->size() : s.ext();
  }
  int64_t n = 0;
  for (const Datatype::Part& p : t->parts()) n += p.copies * external32Size(p.type);
  return n;
}

void toExternal32(const Datatype* t, int64_t count, const char* native, char* ext) {
  auto* in = reinterpret_cast<const unsigned char*>(native);
  auto* out = reinterpret_cast<unsigned char*>(ext);
  walk<true>(t, count, in, out);
}

void fromExternal32(const Datatype* t, int64_t count, const char* ext, char* native) {
  auto* in = reinterpret_cast<const unsigned char*>(ext);
  auto* out = reinterpret_cast<unsigned char*>(native);
  walk<false>(t, count, in, out);
}

}  // namespace loom
