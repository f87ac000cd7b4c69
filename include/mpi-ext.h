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

/*
 * Streams and stream-ordered operations, with MPICH's names, signatures and
 * semantics (MPICH 4.1+ "MPIX stream" extension). See MPIX_Stream_create(3)
 * and MPIX_Send_enqueue(3).
 *
 * A stream is a serial execution context: a host stream (MPIX_Stream_create
 * with MPI_INFO_NULL), or a CUDA stream given in an info object:
 *     MPI_Info info;
 *     MPI_Info_create(&info);
 *     MPI_Info_set(info, "type", "cudaStream_t");
 *     MPIX_Info_set_hex(info, "value", &cuda_stream, sizeof(cuda_stream));
 *     MPIX_Stream_create(info, &stream);
 * MPIX_Stream_comm_create duplicates a communicator with the stream attached.
 * MPIX_*_enqueue on such a communicator queue the operation on its stream:
 * it starts after the work already queued there, later work waits for it,
 * and the calling thread does not block. On a host stream they run at once.
 */
typedef struct MPIX_ABI_Stream *MPIX_Stream;
#define MPIX_STREAM_NULL ((MPIX_Stream)0)

#if defined(__cplusplus)
extern "C" {
#endif

int MPIX_Info_set_hex(MPI_Info info, const char *key, const void *value, int value_size);
int PMPIX_Info_set_hex(MPI_Info info, const char *key, const void *value, int value_size);
int MPIX_Stream_create(MPI_Info info, MPIX_Stream *stream);
int PMPIX_Stream_create(MPI_Info info, MPIX_Stream *stream);
int MPIX_Stream_free(MPIX_Stream *stream);
int PMPIX_Stream_free(MPIX_Stream *stream);
int MPIX_Stream_comm_create(MPI_Comm comm, MPIX_Stream stream, MPI_Comm *newcomm);
int PMPIX_Stream_comm_create(MPI_Comm comm, MPIX_Stream stream, MPI_Comm *newcomm);
int MPIX_Comm_get_stream(MPI_Comm comm, int idx, MPIX_Stream *stream);
int PMPIX_Comm_get_stream(MPI_Comm comm, int idx, MPIX_Stream *stream);
int MPIX_Stream_progress(MPIX_Stream stream);
int PMPIX_Stream_progress(MPIX_Stream stream);

/* Point-to-point, on the communicator's stream. */
int MPIX_Send_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm);
int PMPIX_Send_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm);
int MPIX_Recv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                      MPI_Comm comm, MPI_Status *status);
int PMPIX_Recv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                       MPI_Comm comm, MPI_Status *status);
int MPIX_Isend_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                       MPI_Comm comm, MPI_Request *request);
int PMPIX_Isend_enqueue(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                        MPI_Comm comm, MPI_Request *request);
int MPIX_Irecv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                       MPI_Comm comm, MPI_Request *request);
int PMPIX_Irecv_enqueue(void *buf, int count, MPI_Datatype datatype, int source, int tag,
                        MPI_Comm comm, MPI_Request *request);
int MPIX_Wait_enqueue(MPI_Request *request, MPI_Status *status);
int PMPIX_Wait_enqueue(MPI_Request *request, MPI_Status *status);
int MPIX_Waitall_enqueue(int count, MPI_Request array_of_requests[],
                         MPI_Status array_of_statuses[]);
int PMPIX_Waitall_enqueue(int count, MPI_Request array_of_requests[],
                          MPI_Status array_of_statuses[]);

/* Collectives, on the communicator's stream (MPICH has the first; Loom adds
 * the others training needs, with the blocking collectives' arguments). */
int MPIX_Allreduce_enqueue(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm);
int PMPIX_Allreduce_enqueue(const void *sendbuf, void *recvbuf, int count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPIX_Reduce_enqueue(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, int root, MPI_Comm comm);
int PMPIX_Reduce_enqueue(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, int root, MPI_Comm comm);
int MPIX_Reduce_scatter_enqueue(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int PMPIX_Reduce_scatter_enqueue(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPIX_Reduce_scatter_block_enqueue(const void *sendbuf, void *recvbuf, int recvcount,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int PMPIX_Reduce_scatter_block_enqueue(const void *sendbuf, void *recvbuf, int recvcount,
                                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPIX_Allgather_enqueue(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int PMPIX_Allgather_enqueue(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPIX_Allgatherv_enqueue(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm comm);
int PMPIX_Allgatherv_enqueue(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm);
int MPIX_Alltoall_enqueue(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int PMPIX_Alltoall_enqueue(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
int MPIX_Alltoallv_enqueue(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int PMPIX_Alltoallv_enqueue(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int MPIX_Bcast_enqueue(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int PMPIX_Bcast_enqueue(void *buffer, int count, MPI_Datatype datatype, int root,
                        MPI_Comm comm);
int MPIX_Barrier_enqueue(MPI_Comm comm);
int PMPIX_Barrier_enqueue(MPI_Comm comm);

/* The large-count forms (MPI_Count counts, MPI_Aint displacements). */
int MPIX_Send_enqueue_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                        int tag, MPI_Comm comm);
int PMPIX_Send_enqueue_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                         int tag, MPI_Comm comm);
int MPIX_Recv_enqueue_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                        MPI_Comm comm, MPI_Status *status);
int PMPIX_Recv_enqueue_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                         MPI_Comm comm, MPI_Status *status);
int MPIX_Isend_enqueue_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                         int tag, MPI_Comm comm, MPI_Request *request);
int PMPIX_Isend_enqueue_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                          int tag, MPI_Comm comm, MPI_Request *request);
int MPIX_Irecv_enqueue_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source,
                         int tag, MPI_Comm comm, MPI_Request *request);
int PMPIX_Irecv_enqueue_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source,
                          int tag, MPI_Comm comm, MPI_Request *request);
int MPIX_Allreduce_enqueue_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int PMPIX_Allreduce_enqueue_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPIX_Reduce_enqueue_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);
int PMPIX_Reduce_enqueue_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                           MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm);
int MPIX_Reduce_scatter_enqueue_c(const void *sendbuf, void *recvbuf,
                                  const MPI_Count recvcounts[], MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm);
int PMPIX_Reduce_scatter_enqueue_c(const void *sendbuf, void *recvbuf,
                                   const MPI_Count recvcounts[], MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm);
int MPIX_Reduce_scatter_block_enqueue_c(const void *sendbuf, void *recvbuf,
                                        MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                                        MPI_Comm comm);
int PMPIX_Reduce_scatter_block_enqueue_c(const void *sendbuf, void *recvbuf,
                                         MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
                                         MPI_Comm comm);
int MPIX_Allgather_enqueue_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm);
int PMPIX_Allgather_enqueue_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm);
int MPIX_Allgatherv_enqueue_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm);
int PMPIX_Allgatherv_enqueue_c(const void *sendbuf, MPI_Count sendcount,
                               MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[],
                               MPI_Datatype recvtype, MPI_Comm comm);
int MPIX_Alltoall_enqueue_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                            MPI_Comm comm);
int PMPIX_Alltoall_enqueue_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                             void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm);
int MPIX_Alltoallv_enqueue_c(const void *sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                             const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             MPI_Datatype recvtype, MPI_Comm comm);
int PMPIX_Alltoallv_enqueue_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm);
int MPIX_Bcast_enqueue_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                         MPI_Comm comm);
int PMPIX_Bcast_enqueue_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                          MPI_Comm comm);

#if defined(__cplusplus)
}
#endif

#endif /* LOOM_MPI_EXT_H_INCLUDED */
