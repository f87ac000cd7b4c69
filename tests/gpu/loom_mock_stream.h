/* The mock device's streams, for tests only (not part of mpi-ext.h): with
 * LOOM_DEVICE_MOCK=1, libloom.so's mock device has streams that stand for a
 * cudaStream_t in the stream-ordered API (MPIX_Stream_create with "type" =
 * "cudaStream_t" and the handle as "value"). A mock stream is a thread
 * that runs what is queued on it in order: copies, Loom's marks and gate
 * waits, and the test's "kernels" (host functions, which may sleep and may
 * write mock device memory with loom_mock_device_memcpy).
 * Without LOOM_DEVICE_MOCK=1 these return NULL or -1 and do nothing. */
#ifndef LOOM_MOCK_STREAM_H
#define LOOM_MOCK_STREAM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void* loom_mock_stream_create(void);
/* Waits for what is queued, then ends the stream. */
void loom_mock_stream_destroy(void* stream);
/* Waits for what is queued; 0, or -1 when a queued copy failed. */
int loom_mock_stream_synchronize(void* stream);
/* Queues a copy (either side mock device or host memory); 0 or -1. */
int loom_mock_stream_memcpy_async(void* dst, const void* src, size_t bytes, void* stream);
/* Queues fn(arg) (a "kernel"); 0 or -1. */
int loom_mock_stream_launch(void* stream, void (*fn)(void*), void* arg);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_MOCK_STREAM_H */
