/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* hello - an MPI program for t3000-mpich.t: every rank adds 1 in an
 * allreduce and prints what it got, so a wire-up failure or a wrong
 * size shows in the output.
 */
#include <mpi.h>
#include <stdio.h>

int main (int argc, char **argv)
{
    int rank, size, sum = 0, one = 1;

    MPI_Init (&argc, &argv);
    MPI_Comm_rank (MPI_COMM_WORLD, &rank);
    MPI_Comm_size (MPI_COMM_WORLD, &size);
    MPI_Allreduce (&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf ("%d of %d: sum %d\n", rank, size, sum);
    MPI_Finalize ();
    return 0;
}
