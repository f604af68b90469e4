/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* fake-jm - a stand-in job manager for the job-ingest tests, loaded as
 * `flux module load --name=job-manager fake-jm.so`:
 *   NAME.submit {jobs:[...]}  -> success (or the set error); each job is
 *                                checked for the keys ingest must send
 *                                and the last FAKE_KEEP are kept
 *   NAME.getinfo              -> {max_jobid:I} (the largest id received,
 *                                or the "max-jobid=N" argument)
 *   NAME.fake-jobs            -> {count:i, submits:i, jobs:[last jobs]}
 *   NAME.fake-reject {errnum:i, text?:s}  refuse later submits (0: accept)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "libflux/flux.h"

#define FAKE_KEEP 1024

struct fake {
    json_t *kept; /* the last FAKE_KEEP jobs */
    int count;    /* jobs received */
    int submits;  /* job-manager.submit requests */
    json_int_t max_jobid;
    int reject_errnum;
    char reject_text[128];
};

static void submit_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct fake *fk = arg;
    json_t *jobs, *job, *jobspec;
    json_int_t id;
    int userid, urgency, flags;
    double t_submit;
    size_t i;

    if (flux_request_unpack (msg, NULL, "{s:o !}", "jobs", &jobs) < 0
        || !json_is_array (jobs) || json_array_size (jobs) == 0) {
        flux_respond_error (h, msg, EPROTO, "fake-jm: expected {jobs:[...]}");
        return;
    }
    json_array_foreach (jobs, i, job)
    {
        if (json_unpack (job, "{s:I s:i s:i s:F s:i s:o !}", "id", &id,
                         "userid", &userid, "urgency", &urgency, "t_submit",
                         &t_submit, "flags", &flags, "jobspec", &jobspec)
                < 0
            || !json_is_object (jobspec)) {
            flux_respond_error (h, msg, EPROTO, "fake-jm: malformed job");
            return;
        }
    }
    fk->submits++;
    if (fk->reject_errnum) {
        flux_respond_error (h, msg, fk->reject_errnum,
                            fk->reject_text[0] ? fk->reject_text : NULL);
        return;
    }
    json_array_foreach (jobs, i, job)
    {
        (void)json_unpack (job, "{s:I}", "id", &id);
        if (id > fk->max_jobid)
            fk->max_jobid = id;
        fk->count++;
        if (json_array_size (fk->kept) == FAKE_KEEP)
            json_array_remove (fk->kept, 0);
        json_array_append (fk->kept, job);
    }
    flux_respond (h, msg, NULL);
}

static void getinfo_cb (flux_t *h, flux_msg_handler_t *mh,
                        const flux_msg_t *msg, void *arg)
{
    struct fake *fk = arg;
    flux_respond_pack (h, msg, "{s:I}", "max_jobid", fk->max_jobid);
}

static void jobs_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                     void *arg)
{
    struct fake *fk = arg;
    flux_respond_pack (h, msg, "{s:i s:i s:O}", "count", fk->count, "submits",
                       fk->submits, "jobs", fk->kept);
}

static void reject_cb (flux_t *h, flux_msg_handler_t *mh, const flux_msg_t *msg,
                       void *arg)
{
    struct fake *fk = arg;
    const char *text = "";

    if (flux_request_unpack (msg, NULL, "{s:i s?s}", "errnum",
                             &fk->reject_errnum, "text", &text)
        < 0) {
        flux_respond_error (h, msg, EPROTO, NULL);
        return;
    }
    snprintf (fk->reject_text, sizeof (fk->reject_text), "%s", text);
    flux_respond (h, msg, NULL);
}

int mod_main (flux_t *h, int argc, char **argv)
{
    struct fake fk = {.kept = json_array ()};
    const char *name = flux_aux_get (h, "flux::name");
    char topics[4][128];
    struct flux_msg_handler_spec htab[] = {
        {FLUX_MSGTYPE_REQUEST, topics[0], submit_cb, 0},
        {FLUX_MSGTYPE_REQUEST, topics[1], getinfo_cb, FLUX_ROLE_USER},
        {FLUX_MSGTYPE_REQUEST, topics[2], jobs_cb, FLUX_ROLE_USER},
        {FLUX_MSGTYPE_REQUEST, topics[3], reject_cb, 0},
        FLUX_MSGHANDLER_TABLE_END,
    };
    flux_msg_handler_t **handlers;

    for (int i = 0; i < argc; i++) {
        if (!strncmp (argv[i], "max-jobid=", 10))
            fk.max_jobid = strtoll (argv[i] + 10, NULL, 0);
    }
    snprintf (topics[0], sizeof (topics[0]), "%s.submit", name);
    snprintf (topics[1], sizeof (topics[1]), "%s.getinfo", name);
    snprintf (topics[2], sizeof (topics[2]), "%s.fake-jobs", name);
    snprintf (topics[3], sizeof (topics[3]), "%s.fake-reject", name);
    if (!fk.kept || flux_msg_handler_addvec (h, htab, &fk, &handlers) < 0)
        return -1;
    flux_reactor_run (flux_get_reactor (h), 0);
    flux_msg_handler_delvec (handlers);
    json_decref (fk.kept);
    return 0;
}
