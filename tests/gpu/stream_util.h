/* Streams for gpu_stream.c: a CUDA stream (built with CUDA, a device
 * present), a mock device stream (LOOM_DEVICE_MOCK=1; loom_mock_stream.h),
 * or none (host streams: the host thread is the stream, "stream work" runs
 * at once). Used after gpu_util.h. */
#ifndef STREAM_UTIL_H
#define STREAM_UTIL_H

#include <time.h>
#include <unistd.h>

#include "gpu_util.h"
#include "loom_mock_stream.h"

#ifdef LOOM_TEST_CUDA
/* stream_kernels.cu */
int loom_test_fill_int(void* stream, int* p, size_t n, int base, unsigned delay_us);
#endif

static int g_host_stream = 0; /* MPIX streams are host streams */
static int g_no_device = 0;   /* and there is no device at all */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The program's stream (NULL for a host stream). */
static void* ts_create(void) {
  if (g_host_stream) return NULL;
  if (g_mock) {
    void* s = loom_mock_stream_create();
    CHECK(s != NULL);
    return s;
  }
#ifdef LOOM_TEST_CUDA
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  return (void*)s;
#else
  CHECK(0 && "no stream kind");
  return NULL;
#endif
}

static void ts_destroy(void* s) {
  if (!s) return;
  if (g_mock) {
    loom_mock_stream_destroy(s);
    return;
  }
#ifdef LOOM_TEST_CUDA
  CHECK(cudaStreamDestroy((cudaStream_t)s) == cudaSuccess);
#endif
}

static void ts_sync(void* s) {
  if (!s) return;
  if (g_mock) {
    CHECK(loom_mock_stream_synchronize(s) == 0);
    return;
  }
#ifdef LOOM_TEST_CUDA
  CHECK(cudaStreamSynchronize((cudaStream_t)s) == cudaSuccess);
#endif
}

/* A copy queued on the stream (any direction); at once on a host stream. */
static void ts_copy(void* dst, const void* src, size_t n, void* s) {
  if (!s) {
    if (!g_no_device)
      dev_copy(dst, src, n);
    else
      memmove(dst, src, n);
    return;
  }
  if (g_mock) {
    CHECK(loom_mock_stream_memcpy_async(dst, src, n, s) == 0);
    return;
  }
#ifdef LOOM_TEST_CUDA
  CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, (cudaStream_t)s) == cudaSuccess);
#endif
}

typedef struct {
  int* p;
  size_t n;
  int base;
  unsigned delay_us;
  int dev;
} Fill;

static void fill_now(void* arg) {
  Fill* f = (Fill*)arg;
  if (f->delay_us) usleep(f->delay_us);
  int* h = (int*)malloc(f->n * sizeof(int) + 1);
  for (size_t i = 0; i < f->n; ++i) h[i] = f->base + (int)i;
  if (f->dev)
    dev_copy(f->p, h, f->n * sizeof(int));
  else
    memcpy(f->p, h, f->n * sizeof(int));
  free(h);
  free(f);
}

/* A "kernel" on the stream: after `delay_us`, p[i] = base + i. */
static void ts_fill(void* s, int* p, size_t n, int base, unsigned delay_us, int dev) {
  Fill* f = (Fill*)malloc(sizeof *f);
  f->p = p;
  f->n = n;
  f->base = base;
  f->delay_us = delay_us;
  f->dev = dev;
  if (!s) {
    f->delay_us = 0;
    fill_now(f);
    return;
  }
  if (g_mock) {
    CHECK(loom_mock_stream_launch(s, fill_now, f) == 0);
    return;
  }
#ifdef LOOM_TEST_CUDA
  if (dev) {
    free(f);
    CHECK(loom_test_fill_int(s, p, n, base, delay_us) == 0);
  } else {
    /* Host memory on a CUDA stream: a host function writes it. */
    CHECK(cudaLaunchHostFunc((cudaStream_t)s, fill_now, f) == cudaSuccess);
  }
#endif
}

/* The MPIX stream of `s`: MPICH's info keys. */
static MPIX_Stream ts_mpix(void* s) {
  MPIX_Stream m = MPIX_STREAM_NULL;
  if (!s) {
    MPI_OK(MPIX_Stream_create(MPI_INFO_NULL, &m));
    return m;
  }
  MPI_Info info;
  MPI_OK(MPI_Info_create(&info));
  MPI_OK(MPI_Info_set(info, "type", "cudaStream_t"));
  MPI_OK(MPIX_Info_set_hex(info, "value", &s, sizeof s));
  MPI_OK(MPIX_Stream_create(info, &m));
  MPI_OK(MPI_Info_free(&info));
  return m;
}

#endif /* STREAM_UTIL_H */
