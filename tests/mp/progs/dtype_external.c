/* MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size with
 * "external32": the byte layout checked byte by byte (int, double, long,
 * long double, complex, a pair type, wchar_t, a struct with padding, a
 * vector with gaps), round trips, positions, a packed buffer broadcast and
 * unpacked on every rank, and wrong arguments. */
#include <stddef.h>
#include <string.h>
#include <wchar.h>

#include "comm_checks.h"

static const char* X = "external32";

/* Packs `count` of `t` at `in`, checks the bytes against `want` and the
 * size against MPI_Pack_external_size, unpacks into `back`. */
static void expectBytes(const void* in, int count, MPI_Datatype t, const unsigned char* want,
                        int n, void* back) {
  unsigned char buf[256];
  memset(buf, 0xee, sizeof buf);
  MPI_Aint size = -1, pos = 0;
  OK(MPI_Pack_external_size(X, count, t, &size));
  CHECK(size == n);
  OK(MPI_Pack_external(X, in, count, t, buf, sizeof buf, &pos));
  CHECK(pos == n);
  for (int i = 0; i < n; ++i) {
    if (buf[i] != want[i])
      fprintf(stderr, "byte %d: got %02x, want %02x\n", i, buf[i], want[i]);
    CHECK(buf[i] == want[i]);
  }
  CHECK(buf[n] == 0xee); /* nothing written past the end */
  pos = 0;
  OK(MPI_Unpack_external(X, buf, n, &pos, back, count, t));
  CHECK(pos == n);
}

int main(int argc, char** argv) {
  prog = "dtype_external";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  { /* int: two's complement, big-endian */
    int v[3] = {0x01020304, -2, 0}, b[3];
    const unsigned char w[] = {1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0};
    expectBytes(v, 3, MPI_INT, w, sizeof w, b);
    CHECK(memcmp(v, b, sizeof v) == 0);
  }
  { /* double: IEEE binary64, big-endian */
    double v[2] = {1.0, -2.5}, b[2];
    const unsigned char w[] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0x04, 0, 0, 0, 0, 0, 0};
    expectBytes(v, 2, MPI_DOUBLE, w, sizeof w, b);
    CHECK(b[0] == 1.0 && b[1] == -2.5);
  }
  { /* long: 4 bytes in external32, sign-extended back */
    long v[2] = {0x11223344L, -5L}, b[2];
    const unsigned char w[] = {0x11, 0x22, 0x33, 0x44, 0xff, 0xff, 0xff, 0xfb};
    expectBytes(v, 2, MPI_LONG, w, sizeof w, b);
    CHECK(b[0] == 0x11223344L && b[1] == -5L);
    unsigned long u = 0xfffffff0UL, ub;
    const unsigned char wu[] = {0xff, 0xff, 0xff, 0xf0};
    expectBytes(&u, 1, MPI_UNSIGNED_LONG, wu, sizeof wu, &ub);
    CHECK(ub == 0xfffffff0UL);
  }
  { /* long double: IEEE binary128 */
    long double v[2] = {1.0L, -3.0L}, b[2];
    unsigned char w[32] = {0x3f, 0xff};
    w[16] = 0xc0, w[17] = 0x00, w[18] = 0x80;
    expectBytes(v, 2, MPI_LONG_DOUBLE, w, sizeof w, b);
    CHECK(b[0] == 1.0L && b[1] == -3.0L);
    long double third = 1.0L / 3, tb;
    unsigned char raw[16];
    MPI_Aint pos = 0;
    OK(MPI_Pack_external(X, &third, 1, MPI_LONG_DOUBLE, raw, 16, &pos));
    CHECK(raw[0] == 0x3f && raw[1] == 0xfd && raw[2] == 0x55 && raw[3] == 0x55);
    pos = 0;
    OK(MPI_Unpack_external(X, raw, 16, &pos, &tb, 1, MPI_LONG_DOUBLE));
    CHECK(tb == third);
  }
  { /* complex: (re, im), each big-endian */
    float v[2] = {1.0f, -2.0f}, b[2];
    const unsigned char w[] = {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0};
    expectBytes(v, 1, MPI_C_FLOAT_COMPLEX, w, sizeof w, b);
    CHECK(b[0] == 1.0f && b[1] == -2.0f);
  }
  { /* MPI_FLOAT_INT: float then int, no padding */
    struct { float f; int i; } v = {1.5f, 7}, b;
    const unsigned char w[] = {0x3f, 0xc0, 0, 0, 0, 0, 0, 7};
    expectBytes(&v, 1, MPI_FLOAT_INT, w, sizeof w, &b);
    CHECK(b.f == 1.5f && b.i == 7);
  }
  { /* wchar_t: 2 bytes */
    wchar_t v[2] = {L'A', 0x263a}, b[2];
    const unsigned char w[] = {0, 0x41, 0x26, 0x3a};
    expectBytes(v, 2, MPI_WCHAR, w, sizeof w, b);
    CHECK(b[0] == L'A' && b[1] == 0x263a);
  }
  { /* A struct with padding: the padding disappears. */
    struct S { char c; int i; double d; short s; };
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint dp[4] = {offsetof(struct S, c), offsetof(struct S, i), offsetof(struct S, d),
                      offsetof(struct S, s)};
    MPI_Datatype ty[4] = {MPI_CHAR, MPI_INT, MPI_DOUBLE, MPI_SHORT}, st;
    OK(MPI_Type_create_struct(4, bl, dp, ty, &st));
    OK(MPI_Type_commit(&st));
    struct S v[2] = {{'x', 0x0a0b0c0d, 2.0, -1}, {'y', 1, -0.5, 0x1234}}, b[2];
    memset(b, 0, sizeof b);
    const unsigned char w[] = {'x', 0x0a, 0x0b, 0x0c, 0x0d, 0x40, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
                               'y', 0, 0, 0, 1, 0xbf, 0xe0, 0, 0, 0, 0, 0, 0, 0x12, 0x34};
    expectBytes(v, 2, st, w, sizeof w, b);
    CHECK(b[0].c == 'x' && b[0].i == 0x0a0b0c0d && b[0].d == 2.0 && b[0].s == -1);
    CHECK(b[1].c == 'y' && b[1].i == 1 && b[1].d == -0.5 && b[1].s == 0x1234);
    OK(MPI_Type_free(&st));
  }
  { /* A vector with gaps: only the selected ints, and the gaps untouched on unpack. */
    MPI_Datatype vec;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    int v[3] = {1, 99, 2}, b[3] = {-1, -1, -1};
    const unsigned char w[] = {0, 0, 0, 1, 0, 0, 0, 2};
    expectBytes(v, 1, vec, w, sizeof w, b);
    CHECK(b[0] == 1 && b[1] == -1 && b[2] == 2);
    OK(MPI_Type_free(&vec));
  }
  { /* Positions: two packs one after the other, then broadcast and unpack. */
    unsigned char buf[64];
    MPI_Aint pos = 0;
    int i = 0;
    short s = 0;
    if (wrank == 0) {
      i = 0x7f000001;
      s = -300;
      OK(MPI_Pack_external(X, &i, 1, MPI_INT, buf, sizeof buf, &pos));
      OK(MPI_Pack_external(X, &s, 1, MPI_SHORT, buf, sizeof buf, &pos));
      CHECK(pos == 6);
    }
    OK(MPI_Bcast(buf, 6, MPI_BYTE, 0, MPI_COMM_WORLD));
    CHECK(buf[0] == 0x7f && buf[3] == 1 && buf[4] == 0xfe && buf[5] == 0xd4);
    pos = 0;
    OK(MPI_Unpack_external(X, buf, 6, &pos, &i, 1, MPI_INT));
    OK(MPI_Unpack_external(X, buf, 6, &pos, &s, 1, MPI_SHORT));
    CHECK(pos == 6 && i == 0x7f000001 && s == -300);
  }
  { /* Wrong arguments. */
    int v[4] = {0};
    unsigned char buf[16];
    MPI_Aint pos = 0, size;
    CHECK(MPI_Pack_external("native", v, 1, MPI_INT, buf, 16, &pos) == MPI_ERR_ARG);
    CHECK(MPI_Pack_external(NULL, v, 1, MPI_INT, buf, 16, &pos) == MPI_ERR_ARG);
    CHECK(MPI_Pack_external_size("internal", 1, MPI_INT, &size) == MPI_ERR_ARG);
    CHECK(MPI_Unpack_external("native", buf, 16, &pos, v, 1, MPI_INT) == MPI_ERR_ARG);
    CHECK(MPI_Pack_external(X, v, 4, MPI_INT, buf, 15, &pos) == MPI_ERR_TRUNCATE);
    pos = 14;
    CHECK(MPI_Pack_external(X, v, 1, MPI_INT, buf, 16, &pos) == MPI_ERR_TRUNCATE);
    CHECK(pos == 14);
    pos = 0;
    CHECK(MPI_Unpack_external(X, buf, 3, &pos, v, 1, MPI_INT) == MPI_ERR_TRUNCATE);
    CHECK(MPI_Pack_external(X, v, -1, MPI_INT, buf, 16, &pos) == MPI_ERR_COUNT);
    CHECK(MPI_Pack_external(X, v, 1, MPI_DATATYPE_NULL, buf, 16, &pos) == MPI_ERR_TYPE);
    CHECK(MPI_Pack_external(X, v, 1, MPI_INT, buf, 16, NULL) == MPI_ERR_ARG);
    pos = 17;
    CHECK(MPI_Pack_external(X, v, 1, MPI_INT, buf, 16, &pos) == MPI_ERR_ARG);
    MPI_Datatype unc;
    OK(MPI_Type_contiguous(2, MPI_INT, &unc));
    pos = 0;
    CHECK(MPI_Pack_external(X, v, 1, unc, buf, 16, &pos) == MPI_ERR_TYPE);
    CHECK(MPI_Pack_external_size(X, 1, unc, &size) == MPI_ERR_TYPE);
    OK(MPI_Type_free(&unc));
    CHECK(MPI_Pack_external_size(X, -1, MPI_INT, &size) == MPI_ERR_COUNT);
    CHECK(MPI_Pack_external_size(X, 1, MPI_INT, NULL) == MPI_ERR_ARG);
    OK(MPI_Pack_external_size(X, 3, MPI_LONG, &size));
    CHECK(size == 12);
    OK(MPI_Pack_external(X, v, 0, MPI_INT, NULL, 0, &pos)); /* nothing to pack */
    CHECK(pos == 0);
  }

  passed();
  MPI_Finalize();
  return 0;
}
