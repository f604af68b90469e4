/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* hello-host - an MPI program for the netns cluster (t0103): every rank
 * adds 1 in an allreduce and prints its rank, the size, its host name and
 * the sum, so ranks spread over several hosts show where each ran and
 * that they all wired up together.
 */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main (int argc, char **argv)
{
    int rank, size, sum = 0, one = 1;
    char host[256] = "?";

    MPI_Init (&argc, &argv);
    MPI_Comm_rank (MPI_COMM_WORLD, &rank);
    MPI_Comm_size (MPI_COMM_WORLD, &size);
    MPI_Allreduce (&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    (void)gethostname (host, sizeof (host) - 1);
    printf ("%d of %d on %s: sum %d\n", rank, size, host, sum);
    MPI_Finalize ();
    return 0;
}
