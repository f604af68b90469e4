/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* reslog.c - ordered, batched commits of resource events to the KVS. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libeventlog/eventlog.h"
#include "libkvs/kvs.h"
#include "reqlist.h"
#include "reslog.h"
#include "rlog.h"

struct batch {
    flux_kvs_txn_t *txn;
    struct reqlist *waiters;
};

struct reslog {
    flux_t *h;
    struct batch next;     /* being filled */
    struct batch inflight; /* being committed */
    flux_future_t *f;
    int commits, errors;
};

static void batch_clear (struct batch *b)
{
    flux_kvs_txn_destroy (b->txn);
    b->txn = NULL;
    reqlist_destroy (b->waiters);
    b->waiters = NULL;
}

struct reslog *reslog_create (flux_t *h)
{
    struct reslog *rl = calloc (1, sizeof (*rl));

    if (!rl)
        return NULL;
    rl->h = h;
    return rl;
}

void reslog_destroy (struct reslog *rl)
{
    if (rl) {
        int saved_errno = errno;
        if (rl->inflight.waiters)
            reqlist_fail_all (rl->inflight.waiters, rl->h, ECANCELED,
                              "resource module unloading");
        if (rl->next.waiters)
            reqlist_fail_all (rl->next.waiters, rl->h, ECANCELED,
                              "resource module unloading");
        batch_clear (&rl->inflight);
        batch_clear (&rl->next);
        flux_future_destroy (rl->f);
        free (rl);
        errno = saved_errno;
    }
}

struct answer {
    flux_t *h;
    int errnum;
    const char *errstr;
};

static bool answer_cb (const flux_msg_t *msg, void *arg)
{
    struct answer *a = arg;
    if (a->errnum)
        (void)flux_respond_error (a->h, msg, a->errnum, a->errstr);
    else
        (void)flux_respond (a->h, msg, NULL);
    return true;
}

static void start_commit (struct reslog *rl);

static void commit_cb (flux_future_t *f, void *arg)
{
    struct reslog *rl = arg;
    struct answer a = {.h = rl->h};

    if (flux_future_get (f, NULL) < 0) {
        a.errnum = errno;
        a.errstr = "committing resource.eventlog failed";
        rl->errors++;
        rlog (rl->h, LOG_ERR, "committing resource.eventlog: %s",
              strerror (errno));
    }
    else
        rl->commits++;
    if (rl->inflight.waiters)
        reqlist_foreach (rl->inflight.waiters, answer_cb, &a);
    batch_clear (&rl->inflight);
    flux_future_destroy (f);
    rl->f = NULL;
    if (rl->next.txn)
        start_commit (rl);
}

static void start_commit (struct reslog *rl)
{
    struct answer a = {.h = rl->h};

    rl->inflight = rl->next;
    rl->next.txn = NULL;
    rl->next.waiters = NULL;
    if (!(rl->f = flux_kvs_commit (rl->h, NULL, 0, rl->inflight.txn))
        || flux_future_then (rl->f, -1., commit_cb, rl) < 0) {
        a.errnum = errno;
        a.errstr = "cannot commit resource.eventlog";
        rlog (rl->h, LOG_ERR, "committing resource.eventlog: %s",
              strerror (errno));
        rl->errors++;
        if (rl->inflight.waiters)
            reqlist_foreach (rl->inflight.waiters, answer_cb, &a);
        batch_clear (&rl->inflight);
        flux_future_destroy (rl->f);
        rl->f = NULL;
    }
}

int reslog_post (struct reslog *rl, json_t *entry, json_t *R,
                 const flux_msg_t *msg)
{
    char *line = NULL;
    int rc = -1;

    if (!rl || !entry || !(line = eventlog_entry_encode (entry)))
        return -1;
    if (!rl->next.txn) {
        if (!(rl->next.txn = flux_kvs_txn_create ())
            || !(rl->next.waiters = reqlist_create (0))) {
            batch_clear (&rl->next);
            goto done;
        }
    }
    if (R && flux_kvs_txn_pack (rl->next.txn, 0, "resource.R", "O", R) < 0)
        goto done;
    if (flux_kvs_txn_put (rl->next.txn, FLUX_KVS_APPEND, "resource.eventlog",
                          line)
        < 0)
        goto done;
    if (msg && reqlist_add (rl->next.waiters, msg) < 0)
        goto done;
    if (!rl->f)
        start_commit (rl);
    rc = 0;
done:
    free (line);
    return rc;
}

void reslog_counts (const struct reslog *rl, int *commits, int *errors)
{
    *commits = rl->commits;
    *errors = rl->errors;
}
