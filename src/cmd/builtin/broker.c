/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* broker.c - `flux broker [BROKER-OPTIONS] [INITIAL-PROGRAM...]`: exec
 * flux-broker, found as flux start finds it, so that a job whose command
 * is `flux broker ...` (flux batch, flux alloc) starts a Flux instance
 * wherever flux is installed or built. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "broker_path.h"
#include "cmdutil.h"

static const char usage[]
    = "Usage: flux broker [OPTIONS] [INITIAL-PROGRAM [ARGS...]]\n"
      "Run flux-broker(1) with these arguments (see flux-broker --help).\n";

const struct builtin builtin_broker = {
    .name = "broker",
    .summary = "Run a Flux broker (flux-broker)",
    .usage = usage,
    .main = cmd_broker,
};

int cmd_broker (int argc, char **argv)
{
    const char *path = start_broker_path ();

    (void)argc;
    if (argc == 2 && !strcmp (argv[1], "--help"))
        cmd_help ();
    argv[0] = (char *)path;
    execv (path, argv);
    cmd_die ("%s: %s", path, strerror (errno));
}
