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
 * No extensions are declared yet.  The MPIX_ extensions -- for example
 * MPIX_Query_cuda_support() and the MPIX_C_FLOAT16 and MPIX_BFLOAT16
 * datatypes -- are added here together with their implementation.
 */

#endif /* LOOM_MPI_EXT_H_INCLUDED */
