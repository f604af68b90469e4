/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* agent-fake - a stand-in for exec-agent's two shell-facing methods, for
 * running flux-shell by hand in tests (t2510-shell.t).  Load it as
 *
 *   flux module load --name=exec-agent .../agent-fake.so
 *
 * exec-agent.shell-info {id:I} reads job.<id>.jobspec and job.<id>.R
 * from the primary namespace and answers {id, userid (the sender's),
 * rank, size, ranks, R, jobspec, opts:{}}; size is the number of ranks
 * of R.  All shells of a job run on this one broker, so the shell rank is
 * the order of arrival: the k-th shell-info request of a job gets rank
 * k mod size.
 *
 * exec-agent.barrier {id:I, seq:i, data?:o} answers every entry of
 * (id, seq) with {data:o}, the union of their data objects, once size
 * entries are in.  The last 64 jobs are remembered.  exec-agent.fake-eio {id:I}
 * fails the pending entries of that job (and later ones) with EIO, as a real
 * agent does when a shell of the job exits.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "libflux/flux.h"
#include "libidset/idset.h"
#include "libjob/job.h"
#include "libkvs/kvs.h"

#define MAX_JOBS 64
#define MAX_SHELLS 64

struct job {
    flux_jobid_t id;
    int size;
    int next_rank;
    bool eio;
    int seq; /* barrier being gathered, 0 if none */
    json_t *data;
    const flux_msg_t *waiting[MAX_SHELLS];
    int nwaiting;
};

struct ctx {
    flux_t *h;
    struct job jobs[MAX_JOBS];
    int njobs;
    int victim; /* next slot to reuse once the table is full */
};

static struct job *find_job (struct ctx *c, flux_jobid_t id)
{
    for (int i = 0; i < c->njobs; i++) {
        if (c->jobs[i].id == id)
            return &c->jobs[i];
    }
    return NULL;
}

static json_t *lookup (flux_t *h, flux_jobid_t id, const char *name)
{
    char key[128];
    flux_future_t *f;
    const char *s;
    json_t *o = NULL;

    if (flux_job_kvs_key (key, sizeof (key), id, name) < 0)
        return NULL;
    if ((f = flux_kvs_lookup (h, KVS_PRIMARY_NAMESPACE, 0, key))
        && flux_kvs_lookup_get (f, &s) == 0)
        o = json_loads (s, 0, NULL);
    flux_future_destroy (f);
    return o;
}

static char *R_ranks (json_t *R)
{
    json_t *lite, *entry;
    struct idset *ids = idset_create (0, IDSET_FLAG_AUTOGROW);
    char *s = NULL;
    size_t i;

    if (!ids || json_unpack (R, "{s:{s:o}}", "execution", "R_lite", &lite) < 0)
        goto out;
    json_array_foreach (lite, i, entry)
    {
        const char *r;
        struct idset *one;
        if (json_unpack (entry, "{s:s}", "rank", &r) < 0
            || !(one = idset_decode (r)))
            goto out;
        idset_add (ids, one);
        idset_destroy (one);
    }
    s = idset_encode (ids, IDSET_FLAG_RANGE);
out:
    idset_destroy (ids);
    return s;
}

static void info_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct ctx *c = arg;
    json_int_t id;
    json_t *R = NULL, *jobspec = NULL;
    char *ranks = NULL;
    uint32_t userid;
    struct job *job;

    (void)mh;
    if (flux_request_unpack (msg, NULL, "{s:I}", "id", &id) < 0
        || flux_msg_get_userid (msg, &userid) < 0) {
        flux_respond_error (h, msg, EPROTO, "malformed shell-info request");
        return;
    }
    if (!(R = lookup (h, id, "R")) || !(jobspec = lookup (h, id, "jobspec"))
        || !(ranks = R_ranks (R))) {
        flux_respond_error (h, msg, ENOENT, "job R or jobspec not found");
        goto out;
    }
    if (!(job = find_job (c, id))) {
        struct idset *ids = idset_decode (ranks);
        if (!ids) {
            flux_respond_error (h, msg, ENOMEM, NULL);
            goto out;
        }
        if (c->njobs < MAX_JOBS)
            job = &c->jobs[c->njobs++];
        else { /* reuse the oldest slot without a pending barrier */
            int i;
            for (i = 0; i < MAX_JOBS; i++) {
                job = &c->jobs[(c->victim + i) % MAX_JOBS];
                if (job->nwaiting == 0)
                    break;
            }
            if (i == MAX_JOBS) {
                idset_destroy (ids);
                flux_respond_error (h, msg, ENOSPC, "too many jobs");
                goto out;
            }
            c->victim = (c->victim + i + 1) % MAX_JOBS;
            json_decref (job->data);
        }
        memset (job, 0, sizeof (*job));
        job->id = id;
        job->size = idset_count (ids);
        idset_destroy (ids);
        if (job->size > MAX_SHELLS) {
            c->njobs--;
            flux_respond_error (h, msg, ENOSPC, "too many shells");
            goto out;
        }
    }
    if (flux_respond_pack (h, msg, "{s:I s:i s:i s:i s:s s:O s:O s:{}}", "id",
                           id, "userid", (int)userid, "rank",
                           job->next_rank++ % job->size, "size", job->size,
                           "ranks", ranks, "R", R, "jobspec", jobspec, "opts")
        < 0)
        flux_log_error (h, "shell-info respond");
out:
    free (ranks);
    json_decref (R);
    json_decref (jobspec);
}

static void release (flux_t *h, struct job *job, int errnum)
{
    for (int i = 0; i < job->nwaiting; i++) {
        if (errnum)
            flux_respond_error (h, job->waiting[i], errnum, NULL);
        else
            flux_respond_pack (h, job->waiting[i], "{s:O}", "data", job->data);
        flux_msg_decref (job->waiting[i]);
    }
    job->nwaiting = 0;
    job->seq = 0;
    json_decref (job->data);
    job->data = NULL;
}

static void barrier_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    struct ctx *c = arg;
    json_int_t id;
    int seq;
    json_t *data = NULL;
    struct job *job;

    (void)mh;
    if (flux_request_unpack (msg, NULL, "{s:I s:i s?o}", "id", &id, "seq", &seq,
                             "data", &data)
            < 0
        || seq < 1 || (data && !json_is_object (data))) {
        flux_respond_error (h, msg, EPROTO, "malformed barrier request");
        return;
    }
    if (!(job = find_job (c, id))) {
        flux_respond_error (h, msg, ENOENT, "unknown job");
        return;
    }
    if (job->eio) {
        flux_respond_error (h, msg, EIO, NULL);
        return;
    }
    if (job->seq != 0 && job->seq != seq) {
        flux_respond_error (h, msg, EINVAL, "another barrier is in progress");
        return;
    }
    if (job->nwaiting == job->size) {
        flux_respond_error (h, msg, EINVAL, "barrier is full");
        return;
    }
    if (!job->data && !(job->data = json_object ())) {
        flux_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    job->seq = seq;
    if (data)
        json_object_update (job->data, data);
    job->waiting[job->nwaiting++] = flux_msg_incref (msg);
    if (job->nwaiting == job->size)
        release (h, job, 0);
}

static void eio_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                    void *arg)
{
    struct ctx *c = arg;
    json_int_t id;
    struct job *job;

    (void)mh;
    if (flux_request_unpack (msg, NULL, "{s:I}", "id", &id) < 0
        || !(job = find_job (c, id))) {
        flux_respond_error (h, msg, ENOENT, NULL);
        return;
    }
    job->eio = true;
    release (h, job, EIO);
    flux_respond (h, msg, NULL);
}

static const struct flux_msg_handler_spec htab[] = {
    {FLUX_MSGTYPE_REQUEST, "exec-agent.shell-info", info_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "exec-agent.barrier", barrier_cb, FLUX_ROLE_USER},
    {FLUX_MSGTYPE_REQUEST, "exec-agent.fake-eio", eio_cb, 0},
    FLUX_MSGHANDLER_TABLE_END,
};

int mod_main (flux_t *h, int argc, char **argv)
{
    struct ctx c = {.h = h};
    flux_msg_handler_t **handlers = NULL;
    int rc = -1;

    (void)argv;
    if (argc > 0) {
        errno = EINVAL;
        return -1;
    }
    if (flux_msg_handler_addvec (h, htab, &c, &handlers) < 0)
        return -1;
    if (flux_reactor_run (flux_get_reactor (h), 0) == 0)
        rc = 0;
    for (int i = 0; i < c.njobs; i++)
        release (h, &c.jobs[i], ENOSYS);
    flux_msg_handler_delvec (handlers);
    return rc;
}
