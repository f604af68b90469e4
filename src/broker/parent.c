/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* parent.c - a sub-instance posts its URI to the job that runs it.
 *
 * The parent's local socket is on this host (the job shell that started
 * us runs beside its broker), so the connection is one connect(2); the
 * memo RPC waits at most PARENT_TIMEOUT so that a wedged parent cannot
 * stop this instance from starting.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "attr.h"
#include "broker.h"
#include "libjob/job.h"
#include "log.h"
#include "parent.h"

#define PARENT_TIMEOUT 10.0

void parent_post_uri (struct broker *b)
{
    const char *jobid = attr_get (b->attrs, "jobid", NULL);
    const char *puri = attr_get (b->attrs, "parent-uri", NULL);
    const char *rundir = attr_get (b->attrs, "rundir", NULL);
    char host[256], uri[4400];
    flux_jobid_t id;
    flux_future_t *f = NULL;
    flux_t *h;

    if (b->rank != 0 || !jobid || !puri || !rundir)
        return;
    if (flux_job_id_parse (jobid, &id) < 0) {
        brokerlog_msg (b->log, LOG_ERR, "jobid %s: not a job id", jobid);
        return;
    }
    if (gethostname (host, sizeof (host)) < 0)
        snprintf (host, sizeof (host), "localhost");
    host[sizeof (host) - 1] = '\0';
    snprintf (uri, sizeof (uri), "ssh://%s%s/local-0", host, rundir);
    if (!(h = flux_open (puri, 0))
        || !(f = flux_rpc_pack (h, "job-manager.memo", 0, 0, "{s:I s:{s:s}}",
                                "id", (json_int_t)id, "memo", "uri", uri))
        || flux_future_wait_for (f, PARENT_TIMEOUT) < 0
        || flux_rpc_get (f, NULL) < 0)
        brokerlog_msg (b->log, LOG_ERR, "posting uri to job %s at %s: %s",
                       jobid, puri,
                       f ? future_strerror (f, errno) : strerror (errno));
    flux_future_destroy (f);
    flux_close (h);
}
