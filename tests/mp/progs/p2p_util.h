/* Helpers shared by the point-to-point test programs (p2p_*.c). Standard
 * MPI only, so the programs also build against another MPI. */
#ifndef P2P_UTIL_H
#define P2P_UTIL_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* g_prog = "p2p";
static int g_rank = -1;
static int g_size = 0;

#define CHECK(cond)                                                                   \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "%s: rank %d: %s:%d: CHECK(%s) failed\n", g_prog, g_rank,       \
              __FILE__, __LINE__, #cond);                                             \
      fflush(stderr);                                                                 \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                   \
    }                                                                                 \
  } while (0)

/* Like CHECK, with a printf-style explanation. */
#define CHECKF(cond, ...)                                                             \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "%s: rank %d: %s:%d: CHECK(%s) failed: ", g_prog, g_rank,       \
              __FILE__, __LINE__, #cond);                                             \
      fprintf(stderr, __VA_ARGS__);                                                   \
      fprintf(stderr, "\n");                                                          \
      fflush(stderr);                                                                 \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                   \
    }                                                                                 \
  } while (0)

#define MPI_OK(call) CHECKF((call) == MPI_SUCCESS, "%s", #call)

static inline void p2p_init(int* argc, char*** argv, const char* prog) {
  g_prog = prog;
  MPI_OK(MPI_Init(argc, argv));
  MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
}

static inline void p2p_done(void) {
  printf("%s: rank %d ok\n", g_prog, g_rank);
  fflush(stdout);
  MPI_OK(MPI_Finalize());
}

/* The content of a message identified by `seed`: 8-byte words of a hash of
 * (seed, word index), so filling and checking 16 MB costs milliseconds. */
static inline uint64_t patternWord(uint32_t seed, size_t w) {
  uint64_t x = ((uint64_t)seed << 32 | (uint32_t)w) ^ ((uint64_t)w >> 32) * 0x9E3779B97F4A7C15ull;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return x;
}

/* The byte at offset i of message `seed`. */
static inline unsigned char pattern(uint32_t seed, size_t i) {
  return (unsigned char)(patternWord(seed, i / 8) >> (8 * (i % 8)));
}

static inline void fill(void* buf, size_t n, uint32_t seed) {
  unsigned char* p = (unsigned char*)buf;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = patternWord(seed, i / 8);
    memcpy(p + i, &w, 8); /* little-endian: byte k of w is pattern(seed, i + k) */
  }
  for (; i < n; ++i) p[i] = pattern(seed, i);
}

/* Offset of the first byte that differs from the pattern, or -1. */
static inline long long verify(const void* buf, size_t n, uint32_t seed) {
  const unsigned char* p = (const unsigned char*)buf;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w = patternWord(seed, i / 8), v;
    memcpy(&v, p + i, 8);
    if (v != w) break;
  }
  for (; i < n; ++i)
    if (p[i] != pattern(seed, i)) return (long long)i;
  return -1;
}

/* A barrier made of point-to-point messages (dissemination), so the tests
 * do not depend on the collectives. Uses tag 32000 on `comm`. */
static inline void p2p_barrier(MPI_Comm comm) {
  int r, n;
  MPI_OK(MPI_Comm_rank(comm, &r));
  MPI_OK(MPI_Comm_size(comm, &n));
  for (int d = 1; d < n; d <<= 1) {
    char s = 0, x;
    MPI_OK(MPI_Sendrecv(&s, 1, MPI_CHAR, (r + d) % n, 32000, &x, 1, MPI_CHAR,
                        (r - d + n) % n, 32000, comm, MPI_STATUS_IGNORE));
  }
}

/* Small deterministic generator (xorshift64*), identical on every rank. */
static inline uint64_t rng_next(uint64_t* s) {
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static inline uint64_t rng_below(uint64_t* s, uint64_t n) { return n ? rng_next(s) % n : 0; }

#endif
