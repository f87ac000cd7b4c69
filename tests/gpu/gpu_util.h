/* Device memory for the GPU tests: cudaMalloc/cudaMemcpy when the program is
 * built with CUDA (LOOM_TEST_CUDA) and a device is present, Loom's mock
 * device (loom_mock.h) when LOOM_DEVICE_MOCK=1. dev_init() picks one;
 * without either the test is skipped (exit 77; under loomrun the wrapper
 * run_gpu.sh asks gpu_probe first, so ranks never get there).
 *
 * Buffers come from buf_alloc(on_device, bytes): a rank may use host
 * buffers where its peers use device ones (the "mixed" runs). buf_put and
 * buf_get move bytes in and out of either kind. */
#ifndef GPU_UTIL_H
#define GPU_UTIL_H

#include <mpi-ext.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom_mock.h"
#ifdef LOOM_TEST_CUDA
#include <cuda_runtime_api.h>
#endif

static const char* g_prog = "gpu";
static int g_rank = -1;
static int g_size = 0;
static int g_mock = 0;

#define CHECK(cond)                                                                       \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      fprintf(stderr, "%s: rank %d: %s:%d: CHECK(%s) failed\n", g_prog, g_rank, __FILE__, \
              __LINE__, #cond);                                                           \
      fflush(stderr);                                                                     \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                       \
    }                                                                                     \
  } while (0)

#define CHECKF(cond, ...)                                                                 \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      fprintf(stderr, "%s: rank %d: %s:%d: CHECK(%s) failed: ", g_prog, g_rank, __FILE__, \
              __LINE__, #cond);                                                           \
      fprintf(stderr, __VA_ARGS__);                                                       \
      fprintf(stderr, "\n");                                                              \
      fflush(stderr);                                                                     \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                       \
    }                                                                                     \
  } while (0)

#define MPI_OK(call) CHECKF((call) == MPI_SUCCESS, "%s", #call)

/* 0: a device is there (or the mock is on); 77: skip. Before MPI_Init. */
static int dev_available(void) {
  const char* m = getenv("LOOM_DEVICE_MOCK");
  if (m && strcmp(m, "1") == 0) return 0;
#ifdef LOOM_TEST_CUDA
  int n = 0;
  if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) return 0;
#endif
  return 77;
}

static void gpu_init(int* argc, char*** argv, const char* prog) {
  g_prog = prog;
  if (dev_available() != 0) {
    printf("%s: no device and LOOM_DEVICE_MOCK is not 1: skipped\n", prog);
    exit(77);
  }
  const char* m = getenv("LOOM_DEVICE_MOCK");
  g_mock = m && strcmp(m, "1") == 0;
  MPI_OK(MPI_Init(argc, argv));
  MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
#ifdef LOOM_TEST_CUDA
  if (!g_mock) {
    /* One device per local rank, round robin. */
    MPI_Comm node;
    int local = 0, n = 1;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    MPI_OK(MPI_Comm_rank(node, &local));
    MPI_OK(MPI_Comm_free(&node));
    CHECK(cudaGetDeviceCount(&n) == cudaSuccess && n > 0);
    CHECK(cudaSetDevice(local % n) == cudaSuccess);
    CHECKF(MPIX_Query_cuda_support() == 1, "a CUDA device is present but Loom says no");
  }
#endif
  if (g_mock) CHECK(MPIX_Query_cuda_support() == 0); /* the mock is not CUDA */
}

static void gpu_done(void) {
  printf("%s: rank %d ok\n", g_prog, g_rank);
  fflush(stdout);
  MPI_OK(MPI_Finalize());
}

static void* dev_malloc(size_t bytes) {
  void* p = NULL;
  if (g_mock) {
    p = loom_mock_device_malloc(bytes ? bytes : 1);
  } else {
#ifdef LOOM_TEST_CUDA
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) p = NULL;
#endif
  }
  CHECKF(p != NULL, "cannot allocate %zu bytes of device memory", bytes);
  return p;
}

static void dev_free(void* p) {
  if (!p) return;
  if (g_mock) loom_mock_device_free(p);
#ifdef LOOM_TEST_CUDA
  else
    cudaFree(p);
#endif
}

/* Any direction, either side host or device. */
static void dev_copy(void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  if (g_mock) {
    loom_mock_device_memcpy(dst, src, bytes);
    return;
  }
#ifdef LOOM_TEST_CUDA
  CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault) == cudaSuccess);
#endif
}

/* A buffer on the device or on the host. */
typedef struct {
  void* p;
  size_t bytes;
  int dev;
} Buf;

static Buf buf_alloc(int on_device, size_t bytes) {
  Buf b;
  b.bytes = bytes;
  b.dev = on_device;
  b.p = on_device ? dev_malloc(bytes) : malloc(bytes ? bytes : 1);
  CHECK(b.p != NULL);
  return b;
}
static void buf_free(Buf* b) {
  if (b->dev)
    dev_free(b->p);
  else
    free(b->p);
  b->p = NULL;
}
static void buf_put(Buf* b, const void* host, size_t bytes) {
  CHECK(bytes <= b->bytes);
  if (b->dev)
    dev_copy(b->p, host, bytes);
  else
    memcpy(b->p, host, bytes);
}
static void buf_get(void* host, const Buf* b, size_t bytes) {
  CHECK(bytes <= b->bytes);
  if (b->dev)
    dev_copy(host, b->p, bytes);
  else
    memcpy(host, b->p, bytes);
}
/* Fills with a byte pattern that names (seed, offset). */
static void pattern(unsigned char* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 8));
}

/* Which ranks use device buffers: all ("device"), or the even ones
 * ("mixed": odd ranks pass host memory to the same calls). */
/* Floating-point element kinds for same_value(). */
enum { FK_NONE = 0, FK_HALF = 'h', FK_BF16 = 'b', FK_FLOAT = 'f', FK_DOUBLE = 'd' };

/* Is the element at `e` (kind fk, little endian) a NaN? */
static int is_nan_elem(const unsigned char* e, int fk) {
  unsigned long long u = 0;
  switch (fk) {
    case FK_HALF:
      memcpy(&u, e, 2);
      return (u & 0x7c00u) == 0x7c00u && (u & 0x03ffu);
    case FK_BF16:
      memcpy(&u, e, 2);
      return (u & 0x7f80u) == 0x7f80u && (u & 0x007fu);
    case FK_FLOAT:
      memcpy(&u, e, 4);
      return (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu);
    case FK_DOUBLE:
      memcpy(&u, e, 8);
      return (u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (u & 0x000fffffffffffffull);
    default:
      return 0;
  }
}

/* Byte i of two results agrees: the same byte, or (floating kinds) both
 * elements holding it are NaNs. A sum that makes a NaN (NaN + x, inf - inf)
 * gives the x86 host the NaN of an operand and a GPU its canonical NaN
 * (0x7fffffff, 0x7fff): MPI defines no NaN payload, so any NaN is right. */
static int same_byte(const unsigned char* got, const unsigned char* want, size_t i, size_t esize,
                     int fk) {
  if (got[i] == want[i]) return 1;
  if (fk == FK_NONE) return 0;
  const size_t e0 = i - i % esize;
  return is_nan_elem(got + e0, fk) && is_nan_elem(want + e0, fk);
}

static int g_mixed = 0;
static int on_device(int rank) {
  return g_mixed ? rank % 2 == 0 : 1;
}

#endif /* GPU_UTIL_H */
