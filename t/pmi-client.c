/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* pmi-client - a PMI-1 task for the shell tests: every rank puts
 * key.<rank> = val.<rank>, fences (the number of times given with -n,
 * default 1, with a new key per round), and gets every other rank's key
 * and the served keys.  Prints "<rank>: ok <size> <mapping>" or fails
 * with a message.  -a CODE: abort through PMI instead.  -k N: put N more
 * keys of 900 bytes each before the first fence (a big exchange).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libpmi/simple_client.h"

static void die (struct pmi_simple_client *pmi, const char *what)
{
    fprintf (stderr, "pmi-client: %s: %s (%s)\n", what, strerror (errno),
             pmi ? pmi_simple_client_last_error (pmi) : "");
    exit (1);
}

int main (int argc, char **argv)
{
    struct pmi_simple_client *pmi;
    char kvsname[64], key[64], val[1024], want[64], map[1024], level[64];
    int rank, size, rounds = 1, abort_code = -1, nbig = 0, opt;

    while ((opt = getopt (argc, argv, "n:a:k:")) != -1) {
        if (opt == 'n')
            rounds = atoi (optarg);
        else if (opt == 'a')
            abort_code = atoi (optarg);
        else if (opt == 'k')
            nbig = atoi (optarg);
        else {
            fprintf (stderr,
                     "Usage: pmi-client [-n ROUNDS] [-a CODE] [-k NKEYS]\n");
            return 1;
        }
    }
    if (!(pmi = pmi_simple_client_create_fd (
              getenv ("PMI_FD"), getenv ("PMI_RANK"), getenv ("PMI_SIZE"),
              getenv ("PMI_SPAWNED"))))
        die (NULL, "create");
    if (pmi_simple_client_init (pmi) < 0)
        die (pmi, "init");
    rank = pmi_simple_client_rank (pmi);
    size = pmi_simple_client_size (pmi);
    if (abort_code >= 0) {
        pmi_simple_client_abort (pmi, abort_code, "test abort");
        return 0;
    }
    if (pmi_simple_client_kvs_get_my_name (pmi, kvsname, sizeof (kvsname)) < 0)
        die (pmi, "get_my_name");
    memset (val, 'x', 900);
    val[900] = '\0';
    for (int i = 0; i < nbig; i++) {
        snprintf (key, sizeof (key), "big.%d.%d", rank, i);
        if (pmi_simple_client_kvs_put (pmi, kvsname, key, val) < 0)
            die (pmi, "put");
    }
    for (int r = 0; r < rounds; r++) {
        snprintf (key, sizeof (key), "key.%d.%d", r, rank);
        snprintf (val, sizeof (val), "val.%d.%d", r, rank);
        if (pmi_simple_client_kvs_put (pmi, kvsname, key, val) < 0)
            die (pmi, "put");
        if (pmi_simple_client_kvs_commit (pmi, kvsname) < 0)
            die (pmi, "commit");
        if (pmi_simple_client_barrier (pmi) < 0)
            die (pmi, "barrier");
        for (int i = 0; i < size; i++) {
            snprintf (key, sizeof (key), "key.%d.%d", r, i);
            snprintf (want, sizeof (want), "val.%d.%d", r, i);
            if (pmi_simple_client_kvs_get (pmi, kvsname, key, val, sizeof (val))
                < 0)
                die (pmi, key);
            if (strcmp (val, want) != 0) {
                fprintf (stderr, "pmi-client: %s = %s, expected %s\n", key, val,
                         want);
                return 1;
            }
        }
    }
    if (pmi_simple_client_kvs_get (pmi, kvsname, "PMI_process_mapping", map,
                                   sizeof (map))
            < 0
        || pmi_simple_client_kvs_get (pmi, kvsname, "flux.instance-level",
                                      level, sizeof (level))
               < 0)
        die (pmi, "served keys");
    if (pmi_simple_client_finalize (pmi) < 0)
        die (pmi, "finalize");
    printf ("%d: ok %d %s %s\n", rank, size, map, level);
    pmi_simple_client_destroy (pmi);
    return 0;
}
