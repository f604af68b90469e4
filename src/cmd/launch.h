/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
#ifndef FLUX_CMD_LAUNCH_H
#define FLUX_CMD_LAUNCH_H

/* Run a test instance of `flux start -s N`: start N brokers at once on
 * this machine, serve them PMI-1 (RFC 13, simple wire protocol) over a
 * socketpair each (PMI_FD=3, PMI_RANK, PMI_SIZE, PMI_SPAWNED=0 in their
 * environment, any inherited PMI_* / PMIX_* variables removed), forward
 * SIGINT and SIGTERM to them, and wait for all of them.
 *
 * Exit policy: the instance is brought down (the brokers get SIGTERM,
 * then SIGKILL after the grace period) when rank 0 dies on a signal, when
 * any broker fails (signal or non-zero status) before finishing its PMI
 * exchange, since the others would wait for it for ever, or when one
 * aborts through PMI.  A broker of rank > 0 that fails after bootstrap
 * brings it down too in LAUNCH_EXIT_ANY mode (the default, as in
 * flux-core's --test-exit-mode=any); in LAUNCH_EXIT_LEADER mode it is only
 * reported and the instance carries on without it, as on a cluster (for
 * tests of node failure).  After rank 0 exits, brokers still running
 * after the grace period get SIGKILL.
 */

enum launch_exit_mode {
    LAUNCH_EXIT_ANY = 0,    /* any broker that fails ends the instance */
    LAUNCH_EXIT_LEADER = 1, /* only rank 0 (and bootstrap failures) */
};

struct launch_params {
    int size;          /* number of brokers, >= 1 */
    char **argv;       /* broker command, NULL-terminated */
    char **argv_rank0; /* rank 0's command (with the initial program) */
    double grace;      /* seconds between SIGTERM and SIGKILL */
    int verbose;       /* print each command; trace PMI if >= 2 */
    enum launch_exit_mode exit_mode;
};

/* Run the instance.  Returns the exit status for flux start: the exit
 * code of a PMI abort if there was one, else rank 0's exit code, or 128 +
 * signal if rank 0 died of a signal, at least 1 if a failure brought the
 * instance down; -1 with errno if the instance could not be set up
 * (nothing is left running then).
 */
int launch_run (const struct launch_params *params);

#endif /* !FLUX_CMD_LAUNCH_H */
