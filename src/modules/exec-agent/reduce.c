/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* reduce.c - combining the reports of an agent's share (see reduce.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reduce.h"

struct report {
    struct idset *ranks;
    int status;  /* largest */
    char *error; /* first (failed only) */
};

struct reduce {
    struct idset *share;
    struct report held[REDUCE_NTYPES];
    struct report all[REDUCE_NTYPES];
    struct idset *finished; /* exited, failed or lost */
    unsigned long count_in, count_out;
};

static const char *names[REDUCE_NTYPES]
    = {"started", "failed", "exited", "lost"};

const char *reduce_typestr (enum reduce_type type)
{
    return type < REDUCE_NTYPES ? names[type] : "unknown";
}

int reduce_type_parse (const char *s, enum reduce_type *type)
{
    for (int i = 0; i < REDUCE_NTYPES; i++) {
        if (!strcmp (s, names[i])) {
            *type = i;
            return 0;
        }
    }
    errno = EINVAL;
    return -1;
}

static void report_clear (struct report *rp)
{
    idset_range_clear (rp->ranks, 0, IDSET_INVALID_ID - 1);
    rp->status = 0;
    free (rp->error);
    rp->error = NULL;
}

void reduce_destroy (struct reduce *r)
{
    if (r) {
        int saved_errno = errno;
        for (int i = 0; i < REDUCE_NTYPES; i++) {
            idset_destroy (r->held[i].ranks);
            free (r->held[i].error);
            idset_destroy (r->all[i].ranks);
            free (r->all[i].error);
        }
        idset_destroy (r->finished);
        idset_destroy (r->share);
        free (r);
        errno = saved_errno;
    }
}

struct reduce *reduce_create (const struct idset *share)
{
    struct reduce *r;

    if (!share || idset_empty (share)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(r = calloc (1, sizeof (*r))))
        return NULL;
    if (!(r->share = idset_copy (share))
        || !(r->finished = idset_create (0, IDSET_FLAG_AUTOGROW)))
        goto error;
    for (int i = 0; i < REDUCE_NTYPES; i++) {
        if (!(r->held[i].ranks = idset_create (0, IDSET_FLAG_AUTOGROW))
            || !(r->all[i].ranks = idset_create (0, IDSET_FLAG_AUTOGROW)))
            goto error;
    }
    return r;
error:
    reduce_destroy (r);
    errno = ENOMEM;
    return NULL;
}

static int merge (struct report *rp, const struct idset *ranks, int status,
                  const char *error)
{
    if (idset_add (rp->ranks, ranks) < 0)
        return -1;
    if (status > rp->status)
        rp->status = status;
    if (error && !rp->error && !(rp->error = strdup (error)))
        return -1;
    return 0;
}

int reduce_add (struct reduce *r, enum reduce_type type,
                const struct idset *ranks, int status, const char *error)
{
    struct idset *fresh = NULL, *extra = NULL;
    int rc = -1;

    if (!r || type >= REDUCE_NTYPES || !ranks || idset_empty (ranks)) {
        errno = EINVAL;
        return -1;
    }
    if (!(extra = idset_difference (ranks, r->share)))
        return -1;
    if (!idset_empty (extra)) {
        errno = EINVAL;
        goto done;
    }
    /* what is news: ranks not finished, and for started, not started */
    if (!(fresh = idset_difference (ranks, r->finished))
        || (type == REDUCE_STARTED
            && idset_subtract (fresh, r->all[REDUCE_STARTED].ranks) < 0))
        goto done;
    if (idset_empty (fresh)) {
        rc = 0;
        goto done;
    }
    if (type == REDUCE_FAILED && !error)
        error = "shell could not start";
    if (merge (&r->held[type], fresh, status, error) < 0
        || merge (&r->all[type], fresh, status, error) < 0
        || (type != REDUCE_STARTED && idset_add (r->finished, fresh) < 0))
        goto done;
    if (type == REDUCE_LOST) {
        /* lost after it started: only lost (for a replay too) */
        (void)idset_subtract (r->held[REDUCE_STARTED].ranks, fresh);
    }
    r->count_in++;
    rc = 0;
done:
    idset_destroy (fresh);
    idset_destroy (extra);
    return rc;
}

bool reduce_held (const struct reduce *r)
{
    for (int i = 0; i < REDUCE_NTYPES; i++) {
        if (!idset_empty (r->held[i].ranks))
            return true;
    }
    return false;
}

static bool covers (const struct idset *a, const struct idset *b)
{
    return idset_count (a) >= idset_count (b); /* a is a subset of b */
}

bool reduce_finished (const struct reduce *r)
{
    return covers (r->finished, r->share);
}

bool reduce_held_finished_only (const struct reduce *r)
{
    return reduce_held (r) && idset_empty (r->held[REDUCE_STARTED].ranks);
}

bool reduce_urgent (const struct reduce *r)
{
    struct idset *startedish;
    bool urgent = false;

    if (!reduce_held (r))
        return false;
    if (reduce_finished (r))
        return true;
    if (idset_empty (r->held[REDUCE_STARTED].ranks))
        return false;
    /* every rank started or finished: the receiver's start is complete */
    if ((startedish
         = idset_union (r->all[REDUCE_STARTED].ranks, r->finished))) {
        urgent = covers (startedish, r->share);
        idset_destroy (startedish);
    }
    return urgent;
}

int reduce_flush (struct reduce *r, reduce_emit_f fn, void *arg)
{
    int n = 0;

    for (int i = 0; i < REDUCE_NTYPES; i++) {
        struct report *rp = &r->held[i];
        if (idset_empty (rp->ranks))
            continue;
        fn (i, rp->ranks, rp->status, rp->error, arg);
        report_clear (rp);
        r->count_out++;
        n++;
    }
    return n;
}

int reduce_replay (struct reduce *r, reduce_emit_f fn, void *arg)
{
    struct idset *started;
    int n = 0;

    for (int i = 0; i < REDUCE_NTYPES; i++)
        report_clear (&r->held[i]);
    for (int i = 0; i < REDUCE_NTYPES; i++) {
        struct report *rp = &r->all[i];
        if (i == REDUCE_STARTED) {
            if (!(started
                  = idset_difference (rp->ranks, r->all[REDUCE_LOST].ranks)))
                continue;
            if (!idset_empty (started)) {
                fn (i, started, 0, NULL, arg);
                n++;
            }
            idset_destroy (started);
            continue;
        }
        if (idset_empty (rp->ranks))
            continue;
        fn (i, rp->ranks, rp->status, rp->error, arg);
        n++;
    }
    return n;
}

struct idset *reduce_unfinished (const struct reduce *r,
                                 const struct idset *subset)
{
    return idset_difference (subset, r->finished);
}

const struct idset *reduce_share (const struct reduce *r)
{
    return r->share;
}

unsigned long reduce_count_in (const struct reduce *r)
{
    return r->count_in;
}

unsigned long reduce_count_out (const struct reduce *r)
{
    return r->count_out;
}
