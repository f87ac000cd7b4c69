/* hello: every rank reports its rank, the job size and its node.
 *   build/bin/loomcc examples/hello.c -o hello && build/bin/loomrun -n 4 ./hello */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int rank, size, len;
  char node[MPI_MAX_PROCESSOR_NAME];
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Get_processor_name(node, &len);
  if (rank == 0) {
    MPI_Get_library_version(lib, &len);
    printf("%s\n", lib);
  }
  printf("rank %d of %d on %s\n", rank, size, node);
  MPI_Finalize();
  return 0;
}
