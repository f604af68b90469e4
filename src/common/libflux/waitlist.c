/* SPDX-License-Identifier: LGPL-3.0-only
 * Copyright the flux-c authors */
/* waitlist.c - see waitlist.h */
#include "waitlist.h"

void waitlist_init (struct waitlist *wl, waitlist_resend_f resend, void *arg)
{
    list_init (&wl->head);
    wl->epoch = 0;
    wl->count = 0;
    wl->resend = resend;
    wl->arg = arg;
}

void waitlist_item_init (struct waitlist_item *it)
{
    list_init (&it->node);
    it->epoch = 0;
}

void waitlist_sent (struct waitlist *wl, struct waitlist_item *it)
{
    it->epoch = wl->epoch;
}

bool waitlist_refused (struct waitlist *wl, struct waitlist_item *it)
{
    waitlist_cancel (wl, it);
    if (it->epoch != wl->epoch) {
        wl->resend (wl, it, wl->arg);
        return true;
    }
    list_add_tail (&wl->head, &it->node);
    wl->count++;
    return false;
}

void waitlist_online (struct waitlist *wl)
{
    struct list_node batch;

    wl->epoch++;
    /* Take the waiting items off first: a resend may be refused again at
     * once (and wait anew), which must not extend this walk. */
    list_move_all (&batch, &wl->head);
    while (!list_empty (&batch)) {
        struct waitlist_item *it
            = list_entry (batch.next, struct waitlist_item, node);
        list_del (&it->node);
        wl->count--;
        wl->resend (wl, it, wl->arg);
    }
}

void waitlist_cancel (struct waitlist *wl, struct waitlist_item *it)
{
    if (list_attached (&it->node)) {
        list_del (&it->node);
        wl->count--;
    }
}

bool waitlist_waiting (const struct waitlist_item *it)
{
    return list_attached (&it->node);
}

size_t waitlist_count (const struct waitlist *wl)
{
    return wl->count;
}

struct waitlist_item *waitlist_first (struct waitlist *wl)
{
    return list_first_entry_or_null (&wl->head, struct waitlist_item, node);
}
