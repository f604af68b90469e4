/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* barrier.c - one job's barrier entries at one agent (see barrier.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "barrier.h"

struct barrier {
    int nentries;
    int count;
    int seq;  /* current round, -1 before the first */
    int last; /* last released round, -1: none */
    bool failed;
    json_t *data; /* merge of the round */
    void **entries;
};

struct barrier *barrier_create (int nentries)
{
    struct barrier *b;

    if (nentries < 1) {
        errno = EINVAL;
        return NULL;
    }
    if (!(b = calloc (1, sizeof (*b)))
        || !(b->entries = calloc (nentries, sizeof (*b->entries)))) {
        free (b);
        errno = ENOMEM;
        return NULL;
    }
    b->nentries = nentries;
    b->seq = b->last = -1;
    return b;
}

void barrier_destroy (struct barrier *b)
{
    if (b) {
        int saved_errno = errno;
        json_decref (b->data);
        free (b->entries);
        free (b);
        errno = saved_errno;
    }
}

int barrier_enter (struct barrier *b, int seq, json_t *data, void *entry)
{
    if (b->failed) {
        errno = EIO;
        return -1;
    }
    if (seq <= b->last || (data && !json_is_object (data))) {
        errno = EINVAL;
        return -1;
    }
    if (b->count == b->nentries || (b->count > 0 && seq != b->seq)) {
        errno = EBUSY;
        return -1;
    }
    if (!b->data && !(b->data = json_object ())) {
        errno = ENOMEM;
        return -1;
    }
    if (data && json_object_update (b->data, data) < 0) {
        errno = ENOMEM;
        return -1;
    }
    b->seq = seq;
    b->entries[b->count++] = entry;
    return b->count == b->nentries ? 1 : 0;
}

json_t *barrier_data (struct barrier *b)
{
    return b->data;
}

int barrier_seq (const struct barrier *b)
{
    return b->seq;
}

int barrier_last (const struct barrier *b)
{
    return b->last;
}

int barrier_count (const struct barrier *b)
{
    return b->count;
}

static void drain (struct barrier *b, barrier_entry_f fn, void *arg)
{
    int n = b->count;

    b->count = 0;
    for (int i = 0; i < n; i++) {
        if (fn)
            fn (b->entries[i], arg);
        b->entries[i] = NULL;
    }
    json_decref (b->data);
    b->data = NULL;
}

int barrier_release (struct barrier *b, barrier_entry_f fn, void *arg)
{
    if (b->count != b->nentries) {
        errno = EINVAL;
        return -1;
    }
    b->last = b->seq;
    drain (b, fn, arg);
    return 0;
}

void barrier_fail (struct barrier *b, barrier_entry_f fn, void *arg)
{
    b->failed = true;
    drain (b, fn, arg);
}
