/* p2p_large: messages of 0 bytes and of more than 2 GiB. Rank 0 sends rank
 * 1 (and, at more ranks, the last rank sends rank 0) an empty message, then
 * 2 GiB + 64 KiB as 32769 elements of a 64 KiB contiguous type, which no
 * int byte count can describe; the receiver checks every byte, the status
 * (MPI_Get_count in elements, MPI_Get_elements_x in bytes) and that the
 * bytes after the message in its buffer are untouched.
 * Prints "p2p_large: rank R ok". */
#include "p2p_util.h"

enum { kBlock = 65536, kBlocks = 32769 }; /* 2^31 + 2^16 bytes */

int main(int argc, char** argv) {
  p2p_init(&argc, &argv, "p2p_large");
  CHECK(g_size >= 2);
  MPI_Datatype block;
  MPI_OK(MPI_Type_contiguous(kBlock, MPI_BYTE, &block));
  MPI_OK(MPI_Type_commit(&block));
  const size_t bytes = (size_t)kBlock * kBlocks;
  const int from = g_size == 2 ? 0 : g_size - 1; /* the pair crosses nodes at --nodes 2 */
  const int to = g_size == 2 ? 1 : 0;
  if (g_rank == from) {
    MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, to, 1, MPI_COMM_WORLD));
    unsigned char* buf = malloc(bytes);
    CHECK(buf);
    fill(buf, bytes, 77);
    MPI_OK(MPI_Send(buf, kBlocks, block, to, 2, MPI_COMM_WORLD));
    free(buf);
  } else if (g_rank == to) {
    MPI_Status st;
    int count = -1;
    MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, from, 1, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECKF(count == 0 && st.MPI_SOURCE == from, "empty message: count %d from %d", count,
           st.MPI_SOURCE);
    unsigned char* buf = malloc(bytes + 4096);
    CHECK(buf);
    memset(buf + bytes, 0xa5, 4096);
    MPI_OK(MPI_Recv(buf, kBlocks, block, from, 2, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Get_count(&st, block, &count));
    CHECKF(count == kBlocks, "MPI_Get_count: %d elements, expected %d", count, kBlocks);
    MPI_Count elements = 0;
    MPI_OK(MPI_Get_elements_x(&st, MPI_BYTE, &elements));
    CHECKF(elements == (MPI_Count)bytes, "MPI_Get_elements_x: %lld bytes, expected %zu",
           (long long)elements, bytes);
    long long bad = verify(buf, bytes, 77);
    CHECKF(bad < 0, "byte %lld of %zu differs", bad, bytes);
    for (int i = 0; i < 4096; ++i) CHECKF(buf[bytes + i] == 0xa5, "byte %zu past the end written", bytes + i);
    free(buf);
  }
  MPI_OK(MPI_Type_free(&block));
  p2p_done();
  return 0;
}
