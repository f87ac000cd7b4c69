/*
 * hello.c - the smallest MPI job: Init, rank/size, Finalize.
 *
 * bench/run times the whole launcher command running this program to
 * measure job startup + teardown.  Only rank 0 prints, so the output
 * cost does not grow with the rank count.
 */
#include "common.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_init(argc, argv, 0, 0);
    if (bench_o.rank == 0 && !bench_o.csv)
        printf("hello from rank 0 of %d (%s)\n", bench_o.nranks, bench_o.impl);
    MPI_Finalize();
    return 0;
}
