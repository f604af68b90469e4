/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* parent.c - a sub-instance posts its URI and its critical ranks to the
 * job that runs it, and ends its jobs before it goes.
 *
 * The parent's local socket is on this host (the job shell that started
 * us runs beside its broker), so the connection is one connect(2); the
 * memo RPC waits at most PARENT_TIMEOUT so that a wedged parent cannot
 * stop this instance from starting.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attr.h"
#include "broker.h"
#include "libidset/idset.h"
#include "libjob/job.h"
#include "log.h"
#include "overlay/topology.h"
#include "parent.h"

#define PARENT_TIMEOUT 10.0
#define PARENT_CLEANUP_TIMEOUT 60.0

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
    f = NULL;
    /* our broker ranks are the job's shell ranks (one broker a node) */
    if (h
        && (!(f = flux_rpc_pack (
                  h, "job-exec.critical-ranks", 0, 0, "{s:I s:s}", "id",
                  (json_int_t)id, "ranks",
                  attr_get (b->attrs, "broker.critical-ranks", NULL)))
            || flux_future_wait_for (f, PARENT_TIMEOUT) < 0
            || flux_rpc_get (f, NULL) < 0))
        brokerlog_msg (b->log, LOG_ERR,
                       "telling job %s at %s its critical ranks: %s", jobid,
                       puri, f ? future_strerror (f, errno) : strerror (errno));
    flux_future_destroy (f);
    flux_close (h);
}

int parent_critical_ranks_attr (struct broker *b)
{
    const char *name = "broker.critical-ranks";
    const char *s = attr_get (b->attrs, name, NULL);
    struct idset *ids;
    char *enc;
    int rc;

    if (s) {
        ids = idset_decode (s);
        if (!ids || idset_empty (ids) || idset_last (ids) >= b->size) {
            fprintf (stderr,
                     "flux-broker: invalid value for %s='%s' (an idset of "
                     "ranks 0-%u)\n",
                     name, s, b->size - 1);
            idset_destroy (ids);
            errno = EINVAL;
            return -1;
        }
        idset_destroy (ids);
        return 0;
    }
    /* rank 0 and every rank that routes for others */
    if (!(ids = idset_create (b->size, 0)) || idset_set (ids, 0) < 0) {
        idset_destroy (ids);
        return -1;
    }
    for (uint32_t r = 1; r < b->size; r++) {
        if (topology_child_count (b->topo, r) > 0 && idset_set (ids, r) < 0) {
            idset_destroy (ids);
            return -1;
        }
    }
    enc = idset_encode (ids, IDSET_FLAG_RANGE);
    idset_destroy (ids);
    if (!enc)
        return -1;
    rc = attr_add (b->attrs, name, enc, ATTR_IMMUTABLE);
    free (enc);
    return rc;
}

struct cleanup {
    struct broker *b;
    int states; /* the jobs to cancel */
    void (*done) (struct broker *b);
};

static void cleanup_finish (flux_future_t *f, struct cleanup *c)
{
    struct broker *b = c->b;
    void (*done) (struct broker * b) = c->done;

    flux_future_destroy (f);
    free (c);
    done (b);
}

static void idle_cb (flux_future_t *f, void *arg)
{
    struct cleanup *c = arg;

    if (flux_rpc_get (f, NULL) < 0 && errno != ENOSYS)
        brokerlog_msg (c->b->log, LOG_ERR,
                       "cleanup: waiting for the jobs to end: %s",
                       future_strerror (f, errno));
    cleanup_finish (f, c);
}

static void raiseall_cb (flux_future_t *f, void *arg)
{
    struct cleanup *c = arg;
    flux_future_t *f2;
    int count = 0;

    if (flux_rpc_get_unpack (f, "{s:i}", "count", &count) < 0) {
        if (errno != ENOSYS) /* no job-manager: no jobs */
            brokerlog_msg (c->b->log, LOG_ERR, "cleanup: canceling jobs: %s",
                           future_strerror (f, errno));
        cleanup_finish (f, c);
        return;
    }
    flux_future_destroy (f);
    if (count > 0)
        brokerlog_msg (c->b->log, LOG_INFO, "cleanup: canceled %d jobs", count);
    if (!(f2 = flux_rpc (c->b->h, "job-manager.idle", NULL, 0, 0))
        || flux_future_then (f2, PARENT_CLEANUP_TIMEOUT, idle_cb, c) < 0)
        cleanup_finish (f2, c);
}

static void cancel_jobs (struct cleanup *c)
{
    flux_future_t *f;

    if (!(f
          = flux_rpc_pack (c->b->h, "job-manager.raiseall", 0, 0,
                           "{s:b s:i s:i s:i s:s s:s}", "dry_run", 0, "userid",
                           -1, "states", c->states, "severity", 0, "type",
                           "cancel", "note", "the instance is shutting down"))
        || flux_future_then (f, PARENT_TIMEOUT, raiseall_cb, c) < 0)
        cleanup_finish (f, c);
}

static void queue_stop_cb (flux_future_t *f, void *arg)
{
    struct cleanup *c = arg;

    if (flux_rpc_get (f, NULL) < 0) {
        if (errno == ENOSYS) { /* no job-manager: no jobs */
            cleanup_finish (f, c);
            return;
        }
        brokerlog_msg (c->b->log, LOG_ERR, "cleanup: stopping the queue: %s",
                       future_strerror (f, errno));
    }
    flux_future_destroy (f);
    cancel_jobs (c);
}

void parent_cancel_jobs (struct broker *b, void (*done) (struct broker *b))
{
    struct cleanup *c;
    flux_future_t *f;
    const char *s;

    if (b->rank != 0 || !(c = calloc (1, sizeof (*c)))) {
        done (b);
        return;
    }
    c->b = b;
    c->done = done;
    if (attr_get (b->attrs, "jobid", NULL)) {
        /* a sub-instance goes away with its jobs */
        c->states = FLUX_JOB_STATE_ACTIVE;
        cancel_jobs (c);
        return;
    }
    /* as flux-core's rc3: no new job starts (the stop is not saved, so a
     * restart finds the queue as it was), the running ones are canceled,
     * the pending ones kept for a restart; unless the instance was
     * started with -Sbroker.cleanup-cancel=0 (flux-core sites edit rc3
     * for that), e.g. to restart with jobs whose execution outlives it */
    if ((s = attr_get (b->attrs, "broker.cleanup-cancel", NULL))
        && strcmp (s, "1") != 0) {
        if (strcmp (s, "0") != 0)
            brokerlog_msg (b->log, LOG_ERR,
                           "broker.cleanup-cancel=%s: not 0 or 1, "
                           "canceling the running jobs",
                           s);
        else {
            free (c);
            done (b);
            return;
        }
    }
    c->states = FLUX_JOB_STATE_RUNNING;
    if (!(f = flux_rpc_pack (b->h, "job-manager.queue-start", 0, 0,
                             "{s:b s:b s:b s:s}", "start", 0, "all", 1,
                             "nocheckpoint", 1, "reason",
                             "the instance is shutting down"))
        || flux_future_then (f, PARENT_TIMEOUT, queue_stop_cb, c) < 0)
        cleanup_finish (f, c);
}
