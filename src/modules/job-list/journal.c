/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* journal.c - see journal.h */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <syslog.h>
#include "journal.h"

#define RETRY_MIN 0.05
#define RETRY_MAX 1.0

struct journal {
    flux_t *h;
    uint32_t rank;
    jobstore_t *js;
    journal_synced_f synced_cb;
    void *arg;
    flux_future_t *f;     /* the stream */
    flux_future_t *retry; /* a future never fulfilled: its timeout */
    double delay;
    bool synced;
    bool connected; /* sentinel seen on the current stream */
    unsigned long streams, responses, errors;
};

static int journal_start (journal_t *j);

static void synced (journal_t *j)
{
    bool first = !j->synced;
    j->synced = true;
    if (j->synced_cb && first)
        j->synced_cb (j->arg);
}

static void retry_cb (flux_future_t *f, void *arg)
{
    journal_t *j = arg;

    flux_future_destroy (j->retry);
    j->retry = NULL;
    if (journal_start (j) < 0) {
        flux_log (j->h, LOG_ERR, "journal: %s", strerror (errno));
    }
}

/* Ask again later: a future that is never fulfilled times out. */
static void schedule_retry (journal_t *j)
{
    flux_future_t *f;

    if (!(f = flux_future_create (NULL, NULL)))
        goto fail;
    flux_future_set_flux (f, j->h);
    if (flux_future_then (f, j->delay, retry_cb, j) < 0) {
        flux_future_destroy (f);
        goto fail;
    }
    j->retry = f;
    j->delay = j->delay * 2 > RETRY_MAX ? RETRY_MAX : j->delay * 2;
    return;
fail:
    flux_log (j->h, LOG_ERR, "journal: cannot schedule a retry: %s",
              strerror (errno));
}

static void stream_ended (journal_t *j, int errnum, const char *text)
{
    if (j->connected || errnum != ENOSYS)
        flux_log (j->h, LOG_INFO, "journal ended: %s; retrying",
                  text ? text : strerror (errnum));
    flux_future_destroy (j->f);
    j->f = NULL;
    j->connected = false;
    synced (j); /* answer held requests with what we have */
    schedule_retry (j);
}

static void journal_cb (flux_future_t *f, void *arg)
{
    journal_t *j = arg;
    json_t *resp;
    json_int_t id;
    flux_error_t error;

    if (flux_rpc_get_unpack (f, "o", &resp) < 0) {
        stream_ended (j, errno, flux_future_error_string (f));
        return;
    }
    j->responses++;
    if (json_unpack (resp, "{s:I}", "id", &id) == 0 && id == -1) {
        jobstore_resync_end (j->js);
        j->connected = true;
        j->delay = RETRY_MIN;
        synced (j);
    }
    else if (jobstore_apply (j->js, resp, &error) < 0) {
        j->errors++;
        flux_log (j->h, LOG_ERR, "journal: %s", error.text);
    }
    flux_future_reset (f);
}

static int journal_start (journal_t *j)
{
    flux_future_t *f;

    if (!(f
          = flux_rpc_pack (j->h, "job-manager.events-journal", FLUX_NODEID_ANY,
                           FLUX_RPC_STREAMING, "{s:b}", "full", 1)))
        return -1;
    if (flux_future_then (f, -1., journal_cb, j) < 0) {
        flux_future_destroy (f);
        return -1;
    }
    j->f = f;
    j->streams++;
    jobstore_resync_begin (j->js);
    return 0;
}

journal_t *journal_create (flux_t *h, uint32_t rank, jobstore_t *js,
                           journal_synced_f synced_cb, void *arg)
{
    journal_t *j;

    if (!(j = calloc (1, sizeof (*j))))
        return NULL;
    j->h = h;
    j->rank = rank;
    j->js = js;
    j->synced_cb = synced_cb;
    j->arg = arg;
    j->delay = RETRY_MIN;
    if (journal_start (j) < 0) {
        journal_destroy (j);
        return NULL;
    }
    return j;
}

void journal_destroy (journal_t *j)
{
    if (j) {
        int saved_errno = errno;
        if (j->f) {
            /* end the stream at job-manager too */
            flux_future_t *f
                = flux_rpc_pack (j->h, "job-manager.events-journal-cancel",
                                 FLUX_NODEID_ANY, FLUX_RPC_NORESPONSE, "{s:i}",
                                 "matchtag", (int)flux_rpc_get_matchtag (j->f));
            flux_future_destroy (f);
        }
        flux_future_destroy (j->f);
        flux_future_destroy (j->retry);
        free (j);
        errno = saved_errno;
    }
}

bool journal_synced (journal_t *j)
{
    return j->synced;
}

json_t *journal_stats (journal_t *j)
{
    return json_pack ("{s:b s:i s:i s:i}", "connected", j->connected, "streams",
                      (int)j->streams, "responses", (int)j->responses, "errors",
                      (int)j->errors);
}
