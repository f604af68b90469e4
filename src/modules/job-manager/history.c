/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* history.c - each user's jobs in submission order (see history.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "libutil/slice.h"
#include "history.h"

struct user {
    uint32_t userid;
    flux_jobid_t *ids; /* ascending once sorted */
    size_t n, cap;
    size_t stale; /* entries whose job left the table */
    bool unsorted;
};

struct history {
    struct jobmgr *jm;
    struct user *users; /* sorted by userid */
    size_t nusers, capusers;
};

struct history *history_create (struct jobmgr *jm)
{
    struct history *hist = calloc (1, sizeof (*hist));

    if (hist)
        hist->jm = jm;
    return hist;
}

void history_destroy (struct history *hist)
{
    if (hist) {
        for (size_t i = 0; i < hist->nusers; i++)
            free (hist->users[i].ids);
        free (hist->users);
        free (hist);
    }
}

/* The user's entry, or where it would go (*pos). */
static struct user *user_find (struct history *hist, uint32_t userid,
                               size_t *pos)
{
    size_t lo = 0, hi = hist->nusers;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (hist->users[mid].userid == userid)
            return &hist->users[mid];
        if (hist->users[mid].userid < userid)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (pos)
        *pos = lo;
    return NULL;
}

static struct user *user_get (struct history *hist, uint32_t userid)
{
    struct user *u;
    size_t pos;

    if ((u = user_find (hist, userid, &pos)))
        return u;
    if (hist->nusers == hist->capusers) {
        size_t ncap = hist->capusers ? hist->capusers * 2 : 8;
        struct user *nu = realloc (hist->users, ncap * sizeof (*nu));
        if (!nu)
            return NULL;
        hist->users = nu;
        hist->capusers = ncap;
    }
    memmove (&hist->users[pos + 1], &hist->users[pos],
             (hist->nusers - pos) * sizeof (hist->users[0]));
    hist->nusers++;
    u = &hist->users[pos];
    memset (u, 0, sizeof (*u));
    u->userid = userid;
    return u;
}

void history_add (struct history *hist, const struct job *job)
{
    struct user *u = user_get (hist, job->userid);

    if (u && u->n == u->cap) {
        size_t ncap = u->cap ? u->cap * 2 : 16;
        flux_jobid_t *nids = realloc (u->ids, ncap * sizeof (*nids));
        if (!nids)
            u = NULL;
        else {
            u->ids = nids;
            u->cap = ncap;
        }
    }
    if (!u) {
        jm_log (hist->jm, LOG_ERR, "history: job %ju: out of memory",
                (uintmax_t)job->id);
        return;
    }
    if (u->n > 0 && job->id < u->ids[u->n - 1])
        u->unsorted = true;
    u->ids[u->n++] = job->id;
}

/* Drop the entries whose job is no longer in the table. */
static void compact (struct history *hist, struct user *u)
{
    size_t j = 0;

    for (size_t i = 0; i < u->n; i++) {
        if (jobtab_lookup (hist->jm->jobs, u->ids[i]))
            u->ids[j++] = u->ids[i];
    }
    u->n = j;
    u->stale = 0;
    /* give back most of the room once most of it is empty */
    if (u->cap > 64 && u->n < u->cap / 4) {
        size_t ncap = u->n * 2 > 16 ? u->n * 2 : 16;
        flux_jobid_t *nids = realloc (u->ids, ncap * sizeof (*nids));
        if (nids) {
            u->ids = nids;
            u->cap = ncap;
        }
    }
}

void history_remove (struct history *hist, const struct job *job)
{
    struct user *u = user_find (hist, job->userid, NULL);

    if (u && ++u->stale > u->n / 2)
        compact (hist, u);
}

static int idcmp (const void *a, const void *b)
{
    flux_jobid_t x = *(const flux_jobid_t *)a;
    flux_jobid_t y = *(const flux_jobid_t *)b;
    return x < y ? -1 : x > y;
}

void history_get_request (struct history *hist, const flux_msg_t *msg)
{
    struct jobmgr *jm = hist->jm;
    const char *s;
    struct slice sl;
    struct user *u;
    uint32_t userid;
    json_t *jobs = NULL;
    long first, step;
    size_t count;

    if (flux_request_unpack (msg, NULL, "{s:s}", "slice", &s) < 0
        || flux_msg_get_userid (msg, &userid) < 0) {
        jm_respond_error (jm, msg, EPROTO, "malformed history.get request");
        return;
    }
    if (slice_parse (&sl, s) < 0) {
        jm_respond_error (jm, msg, EINVAL, "invalid slice: %s", s);
        return;
    }
    if ((u = user_find (hist, userid, NULL)) && u->stale > 0)
        compact (hist, u);
    if (!u || u->n == 0) {
        jm_respond_error (jm, msg, ENOENT, "job history is empty");
        return;
    }
    if (u->unsorted) {
        qsort (u->ids, u->n, sizeof (u->ids[0]), idcmp);
        u->unsorted = false;
    }
    /* index i of the slice is the i-th newest: ids[n - 1 - i] */
    count = slice_apply (&sl, u->n, &first, &step);
    if (!(jobs = json_array ()))
        goto nomem;
    for (size_t i = 0; i < count; i++) {
        long idx = first + (long)i * step;
        json_t *o = json_integer ((json_int_t)u->ids[u->n - 1 - idx]);
        if (!o || json_array_append_new (jobs, o) < 0) {
            json_decref (o);
            goto nomem;
        }
    }
    if (flux_respond_pack (jm->h, msg, "{s:o}", "jobs", jobs) < 0)
        jm_log (jm, LOG_ERR, "history.get: respond: %s", strerror (errno));
    return;
nomem:
    json_decref (jobs);
    jm_respond_error (jm, msg, ENOMEM, NULL);
}
