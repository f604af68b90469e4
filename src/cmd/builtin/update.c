/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* update.c - `flux update JOBID KEY=VALUE...`: change a job's jobspec
 * with job-manager.update (PROTOCOLS.md 5.2).  Short keys: duration (an
 * FSD, "unlimited" or 0 for none), name; other keys are jobspec paths
 * (attributes.user.*, attributes.system.job.name, ...).  A VALUE that
 * parses as JSON is sent as such, else as a string.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdutil.h"
#include "libjob/job.h"
#include "libutil/fsd.h"

static const char usage[]
    = "Usage: flux update [OPTIONS] JOBID KEY=VALUE...\n"
      "Update a pending job's jobspec, or the duration of a running job\n"
      "(instance owner only).  A guest may only shorten its job.\n"
      "Keys: duration=FSD (e.g. 30m; 0 or unlimited: no limit), name=NAME,\n"
      "or a jobspec path such as attributes.user.KEY=VALUE (VALUE is JSON\n"
      "if it parses as JSON, else a string).\n"
      "  -n, --dry-run       Print the update instead of sending it\n"
      "  -h, --help          Display this message\n";

const struct builtin builtin_update = {
    .name = "update",
    .summary = "Update a job's jobspec",
    .usage = usage,
    .main = cmd_update,
};

static const struct option opts[] = {
    {"dry-run", no_argument, NULL, 'n'},
    CMD_OPT_HELP,
    {NULL, 0, NULL, 0},
};

/* The value of one KEY=VALUE (val points past the '='). */
static json_t *update_value (const char *key, const char *val)
{
    json_t *o;

    if (!strcmp (key, "attributes.system.duration")) {
        double d;
        if (!strcmp (val, "unlimited") || !strcmp (val, "inf"))
            d = 0;
        else if (fsd_parse_duration (val, &d) < 0)
            cmd_die ("invalid duration '%s' (an FSD such as 90s, 30m, 2h)",
                     val);
        return json_real (d);
    }
    if (!strcmp (key, "attributes.system.job.name"))
        return json_string (val);
    if ((o = json_loads (val, JSON_DECODE_ANY, NULL)))
        return o;
    return json_string (val);
}

int cmd_update (int argc, char **argv)
{
    flux_jobid_t id;
    json_t *updates;
    int c, dry_run = 0;

    while ((c = cmd_getopt (argc, argv, "n", opts)) != -1) {
        if (c == 'n')
            dry_run = 1;
    }
    if (argc - optind < 2)
        cmd_usage_error ("a JOBID and at least one KEY=VALUE are required");
    if (flux_job_id_parse (argv[optind], &id) < 0)
        cmd_die ("error parsing jobid: %s", argv[optind]);
    if (!(updates = json_object ()))
        cmd_die ("out of memory");
    for (int i = optind + 1; i < argc; i++) {
        char *eq = strchr (argv[i], '=');
        char key[256];
        const char *k;
        json_t *v;

        if (!eq || eq == argv[i])
            cmd_usage_error ("expected KEY=VALUE, got '%s'", argv[i]);
        snprintf (key, sizeof (key), "%.*s", (int)(eq - argv[i]), argv[i]);
        k = !strcmp (key, "duration") ? "attributes.system.duration"
            : !strcmp (key, "name")   ? "attributes.system.job.name"
                                      : key;
        if (!(v = update_value (k, eq + 1))
            || json_object_set_new (updates, k, v) < 0)
            cmd_die ("out of memory");
    }
    if (dry_run) {
        char *s = json_dumps (updates, JSON_COMPACT | JSON_SORT_KEYS);
        printf ("%s\n", s ? s : "");
        free (s);
    }
    else {
        flux_t *h = cmd_open ();
        flux_future_t *f;

        if (!(f = flux_rpc_pack (h, "job-manager.update", FLUX_NODEID_ANY, 0,
                                 "{s:I s:O}", "id", (json_int_t)id, "updates",
                                 updates))
            || flux_rpc_get (f, NULL) < 0)
            cmd_die ("%s: %s", argv[optind], future_strerror (f, errno));
        flux_future_destroy (f);
        flux_close (h);
    }
    json_decref (updates);
    return 0;
}
