/*
 * Loom -- an MPI implementation.
 *
 * mpi-ext.h: Loom's extensions to the MPI interface (MPIX_ names).
 */
#ifndef LOOM_MPI_EXT_H_INCLUDED
#define LOOM_MPI_EXT_H_INCLUDED

#include <mpi.h>

#define LOOM_MPI_EXT 1

/*
 * 16-bit floating-point datatypes, usable in communication and with
 * MPI_SUM, MPI_PROD, MPI_MIN and MPI_MAX (computed in float, rounded back
 * to nearest-even).
 *   MPIX_C_FLOAT16  IEEE 754 binary16 (C23 _Float16, CUDA __half)
 *   MPIX_BFLOAT16   bfloat16: the upper half of a binary32 (__nv_bfloat16)
 * The MPI 5.0 ABI gives datatypes the handle block 0x200..0x2ff and assigns
 * none of 0x2ec..0x2ff; Loom takes the top two values, furthest from the
 * standard's own assignments, so a future standard type is unlikely to
 * collide.  Both are predefined: never freed, valid before MPI_Init.
 */
#define MPIX_C_FLOAT16 ((MPI_Datatype)0x2fe)
#define MPIX_BFLOAT16  ((MPI_Datatype)0x2ff)

/*
 * GPU buffers. MPIX_Query_cuda_support() returns 1 when this Loom was
 * built with CUDA and the process sees a CUDA device: any MPI call then
 * accepts device pointers (see MPIX_Query_cuda_support(3)); 0 otherwise.
 * The same name and meaning as Open MPI's extension.
 */
#if defined(__cplusplus)
extern "C" {
#endif
int MPIX_Query_cuda_support(void);
int PMPIX_Query_cuda_support(void);
#if defined(__cplusplus)
}
#endif

#endif /* LOOM_MPI_EXT_H_INCLUDED */
