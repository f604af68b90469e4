/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* imp_exec_helper.c - `flux imp_exec_helper ID`: print what flux-imp exec
 * reads (PROTOCOLS-exec.md 5.2, doc/guide/imp.md): one JSON object
 * {"J": J} on one line, J being the job's signed request from job-info.
 *
 * The exec agent names this command in FLUX_IMP_EXEC_HELPER when it runs
 * a guest's shell through the IMP; the IMP runs it as the instance owner
 * (its unprivileged half) with the shell's environment, so FLUX_URI is
 * the local broker.  flux-core also adds systemd device options when
 * INVOCATION_ID is set; we have no device policy, so "options" is left
 * out (the IMP takes it as optional).
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"
#include "libjob/job.h"

static const char usage[]
    = "Usage: flux imp_exec_helper ID\n"
      "Print {\"J\": J} of job ID for flux-imp exec (used by the exec agent\n"
      "through FLUX_IMP_EXEC_HELPER; not for interactive use).\n"
      "  -h, --help     Display this message\n";

const struct builtin builtin_imp_helper = {
    .name = "imp_exec_helper",
    .summary = "Print a job's signed request for flux-imp exec (internal)",
    .usage = usage,
    .main = cmd_imp_exec_helper,
    .internal = true,
};

int cmd_imp_exec_helper (int argc, char **argv)
{
    flux_jobid_t id;
    flux_future_t *f;
    const char *J;
    json_t *o;
    char *s;
    flux_t *h;

    cmd_getopt_none (argc, argv);
    if (optind != argc - 1)
        cmd_usage_error ("expected one job ID");
    if (flux_job_id_parse (argv[optind], &id) < 0)
        cmd_usage_error ("invalid job ID '%s'", argv[optind]);
    h = cmd_open ();
    if (!(f = flux_rpc_pack (h, "job-info.lookup", FLUX_NODEID_ANY, 0,
                             "{s:I s:[s] s:i}", "id", (json_int_t)id, "keys",
                             "J", "flags", 0))
        || flux_rpc_get_unpack (f, "{s:s}", "J", &J) < 0)
        cmd_die ("%s: J: %s", argv[optind], future_strerror (f, errno));
    if (!(o = json_pack ("{s:s}", "J", J))
        || !(s = json_dumps (o, JSON_COMPACT)))
        cmd_die ("out of memory");
    if (printf ("%s\n", s) < 0 || fflush (stdout) != 0)
        cmd_die ("writing: %s", strerror (errno));
    free (s);
    json_decref (o);
    flux_future_destroy (f);
    flux_close (h);
    return 0;
}
