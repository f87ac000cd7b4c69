/* Loom's mock device, for tests only (not part of mpi-ext.h): with
 * LOOM_DEVICE_MOCK=1 in the environment, libloom.so treats the memory these
 * hooks hand out as device memory. The program sees it mapped PROT_NONE:
 * reading or writing it directly faults (as it would for a cudaMalloc'ed
 * pointer), so tests move data in and out with loom_mock_device_memcpy.
 * Without LOOM_DEVICE_MOCK=1 the hooks return NULL and do nothing.
 * They work before MPI_Init and after MPI_Finalize. */
#ifndef LOOM_MOCK_H
#define LOOM_MOCK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void* loom_mock_device_malloc(size_t bytes);
void loom_mock_device_free(void* p);
/* Either side may be mock device memory or host memory. */
void loom_mock_device_memcpy(void* dst, const void* src, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_MOCK_H */
